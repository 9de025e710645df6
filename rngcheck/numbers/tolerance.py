"""The tolerance model, said once: how far an implementation's numbers may be from the reference's.

The TensorFlow guide promises "the same integers, almost the same floating-point numbers".
rngcheck makes "almost" a number per conversion:
  1. Words, integers and every conversion that only moves bits (a mantissa filled from a word,
     minus one; a product with a power of two) are exact: a bound of 0 ULP.
  2. A step that rounds more than once where a valid implementation may round once (a scaled
     uniform ``u * (high - low) + low``, which a fused multiply-add computes with one rounding)
     gets 1 ULP.
  3. A transcendental step (log, sqrt, sin, cos, erfinv) is compared in ULPs of the output
     format, with a bound derived per conversion in the convention's module from the error of
     each step (libm's float functions are within 1 ULP; the reference evaluates each step in
     binary64 and rounds once, so its own error is at most 0.5 ULP a step). The derivation is the
     ``why`` of the bound and is shown with every failure.
  4. A NaN matches only a NaN; an infinity only the same infinity (rngcheck.numbers.floats rule 4).
A bound must admit the 1-2 ULP differences of real implementations (the guide's own printed
numbers differ from the exact model by that much) and still fail a wrong conversion, which is
off by many ULPs in most elements (tests/test_numbers.py holds both).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import floats

HISTOGRAM_EDGES = (0, 1, 2, 4, 16, 256, 1 << 16)   # bins: 0, 1, 2-3, 4-15, 16-255, 256-65535, more


@dataclass(frozen=True)
class Bound:
    ulps: int
    why: str

    @property
    def exact(self) -> bool:
        return self.ulps == 0


EXACT = Bound(0, "bits only: the conversion moves bits and never rounds, so it is exact")
ONE_ROUNDING = Bound(1, "u * (high - low) + low rounds twice; a fused multiply-add rounds once: 1 ULP")


@dataclass
class Comparison:
    """Expected against actual, element by element, in ULPs of the format (or exactly for integers)."""

    count: int
    over: int                      # elements past the bound
    worst: int                     # largest distance (ULPs; for integers 0 or 1: equal or not)
    worst_index: int
    histogram: dict[str, int] = field(default_factory=dict)
    first_over: list[int] = field(default_factory=list)

    @property
    def within(self) -> bool:
        return self.over == 0


def histogram_labels() -> list[str]:
    labels = []
    for low, high in zip(HISTOGRAM_EDGES, HISTOGRAM_EDGES[1:] + (None,)):
        if high is None:
            labels.append(f">={low}")
        elif high - low == 1:
            labels.append(str(low))
        else:
            labels.append(f"{low}-{high - 1}")
    return labels


def histogram(distances: np.ndarray) -> dict[str, int]:
    """Counts of ULP distances in the bins of HISTOGRAM_EDGES (only the non-empty bins)."""
    counts = np.histogram(np.minimum(distances, HISTOGRAM_EDGES[-1]),
                          bins=list(HISTOGRAM_EDGES) + [HISTOGRAM_EDGES[-1] + 1])[0]
    return {label: int(n) for label, n in zip(histogram_labels(), counts) if n}


def distances(dtype: str, expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Per element: ULPs for a float format, 0/1 (equal or not) for integers."""
    fmt = floats.FORMATS.get(dtype)
    if fmt is None:
        return (np.asarray(expected) != np.asarray(actual)).astype(np.int64)
    return floats.ulp_distance(fmt, expected, actual)


def compare(dtype: str, expected: np.ndarray, actual: np.ndarray, bound: Bound, shown: int = 8) -> Comparison:
    d = distances(dtype, expected, actual)
    over = np.flatnonzero(d > bound.ulps)
    worst_index = int(np.argmax(d)) if d.size else 0
    return Comparison(count=int(d.size), over=int(over.size), worst=int(d[worst_index]) if d.size else 0,
                      worst_index=worst_index, histogram=histogram(d), first_over=[int(i) for i in over[:shown]])
