"""Box-Muller's polar step, the part of every convention's normal that is the same everywhere.

Each convention makes its own u (in (0, 1], clamped or clipped its own way) and its own angle
(2 pi u formed in float or in double, or v pi); from there (Box and Muller, 1958):
  1. radius r = sqrt(-2 log u);
  2. the pair is (r sin angle, r cos angle), sine first where a convention says so.
The exact model (rngcheck.numbers.tolerance rule 3): in float32 each transcendental step is
evaluated in binary64 and rounded once to binary32, and -2 log u and the products are float32
operations; in float64 the steps are numpy's binary64 (libm's, within 1 ULP).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def radius32(u: npt.ArrayLike) -> np.ndarray:
    """Rule 1 in float32: log rounded once, times -2 in float32, sqrt rounded once."""
    with np.errstate(divide="ignore"):   # u = 0 (a convention without a clamp): log is -inf, r is inf
        log_u = np.log(np.asarray(u, dtype=np.float32).astype(np.float64)).astype(np.float32)
    radius: np.ndarray = np.sqrt((np.float32(-2.0) * log_u).astype(np.float64))
    return radius.astype(np.float32)


def sincos32(angle: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of a float32 angle, each rounded once to float32."""
    wide = np.asarray(angle, dtype=np.float32).astype(np.float64)
    return np.sin(wide).astype(np.float32), np.cos(wide).astype(np.float32)


def polar32(u: npt.ArrayLike, angle: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Rule 2 in float32: (r sin angle, r cos angle)."""
    r = radius32(u)
    sin, cos = sincos32(angle)
    with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as in the library
        return sin * r, cos * r


def polar64(u: npt.ArrayLike, angle: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Rules 1-2 in float64."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(-2.0 * np.log(np.asarray(u, dtype=np.float64)))
        return np.sin(angle) * r, np.cos(angle) * r
