"""The numbers layer: from the operator's 32-bit words to the numbers users draw.

A *convention* is one library's rule for turning Philox words into floats, normals and integers
(TensorFlow's, JAX's, PyTorch's, cuRAND's, MKL's, ONNX Runtime's DirectML execution provider's).
Each is a spec module here, written rule by rule with its source, and every one reads the same
word stream: element ``i`` of the stream is word ``i`` of the operator's output for the state
(rngcheck.reference.words: lane i mod 4 of Philox4x32-10(counter + floor(i/4), key)).

The modules:
  floats       the four float formats as bits; rounding to bfloat16; ULP distance
  tolerance    the tolerance model: exact, or a bound in ULPs with its derivation
  tensorflow   TensorFlow's conversions and its stream semantics (Generator, split, stateless seeds)
  jax, pytorch, curand, mkl, onnxruntime
               the other conventions
  onnxruntime_cpu
               ONNX Runtime's CPU kernels: not Philox (minstd_rand0, seeded from state word 4)
  jax_keys     JAX's threefry keys: a seed's key data, a key's words in both of JAX's layouts, split
  triton, mlx, tinygrad, keras, numba
               models of libraries' own numbers (not registered conventions: their placement is the
               property axis's), which their backends' tests check the libraries against bit for bit

Each module defines its convention; ``CONVENTIONS`` (an rngcheck.registry.Registry) imports the
modules and registers their conventions on its first read (``_load_conventions``: the list).

A *request* names what is drawn: convention, kind, dtype, count and the range. A backend that
implements a convention answers a request for a state with the numbers (the backend contract's
optional ``random_numbers``); the suite compares them with :func:`draw`, the reference.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from ..registry import Registry
from .request import (
    BITS,
    FLOAT_DTYPES,
    INT_DTYPES,
    INT_RANGES,
    INTEGERS,
    KINDS,
    MAX_COUNT,
    NORMAL,
    TRUNCATE,
    TRUNCATED_NORMAL,
    UNIFORM,
    Convention,
    NumbersError,
    Request,
    options_of,
    required_state,
)
from .tolerance import Bound

__all__ = ["BITS", "FLOAT_DTYPES", "INT_DTYPES", "INT_RANGES", "INTEGERS", "KINDS", "MAX_COUNT", "NORMAL", "TRUNCATE",
           "TRUNCATED_NORMAL", "UNIFORM", "Convention", "NumbersError", "Request", "options_of", "required_state",
           "CONVENTIONS", "convention_of", "check", "draw", "bound", "wide_reference", "excess"]


def _load_conventions() -> None:
    """The convention modules, imported here (registry rule 2), and their conventions, by name."""
    from . import curand, jax, mkl, onnxruntime, onnxruntime_cpu, pytorch, tensorflow

    for convention in (curand.CURAND, jax.JAX, mkl.MKL, onnxruntime_cpu.ONNXRUNTIME_CPU, onnxruntime.ONNXRUNTIME_DML,
                       pytorch.PYTORCH, tensorflow.TENSORFLOW):
        CONVENTIONS.add(convention.name, convention)


# Every convention by name, loaded on the first read; an unknown name is a NumbersError (one line).
CONVENTIONS: Registry[Convention] = Registry("convention", load=_load_conventions, error=NumbersError)


def convention_of(name: str) -> Convention:
    return CONVENTIONS.get(name)


def check(request: Request) -> Convention:
    """The request's convention, which must define it (NumbersError otherwise)."""
    convention = convention_of(request.convention)
    if request.seed is not None and not convention.seeded:
        raise NumbersError(f"convention {request.convention!r} has no stateless seed rule")
    if request.kind == UNIFORM and request.low is not None and not convention.ranged_uniform:
        raise NumbersError(f"convention {request.convention!r} defines no uniform range but its own unit interval")
    if request.dtype not in convention.kinds.get(request.kind, ()):
        defined = convention.kinds.get(request.kind)
        if not defined:
            raise NumbersError(f"convention {request.convention!r} defines no {request.kind}")
        raise NumbersError(f"convention {request.convention!r} draws {request.kind} as "
                           f"{', '.join(defined)}, not {request.dtype}")
    return convention


def draw(request: Request, state: npt.ArrayLike | None = None) -> np.ndarray:
    """The reference numbers of ``request`` for the 6-word ``state``."""
    return check(request).draw(request, state)


def bound(request: Request) -> Bound:
    """The convention's bound for ``request``, with the interval its numbers lie in (tolerance rule 6)."""
    convention = check(request)
    limit = convention.bound(request)
    return limit if limit.interval is not None else replace(limit, interval=convention.interval(request))


def wide_reference(request: Request, state: npt.ArrayLike | None) -> np.ndarray | None:
    """What the bound admits beyond the reference, when it is not a plain ULP distance from it: the
    reference drawn in the format a bound is counted in before the last rounding (tolerance rule 5),
    or the results of the allowed evaluation orders, one row each (rule 7); None otherwise."""
    limit = bound(request)
    if limit.orders:
        return check(request).orders(request, state)
    if limit.wide is None:
        return None
    return draw(replace(request, dtype=limit.wide), state)


def excess(request: Request, wide: np.ndarray | None, actual: np.ndarray) -> np.ndarray | None:
    """Per element, how far ``actual`` lies outside what the bound admits around ``wide`` (0:
    admitted; tolerance rule 5, or rule 7 where ``wide`` holds the evaluation orders' results; rule
    6's values, outside the request's interval included, INFINITE_ULPS); None without a wide
    reference, when the plain ULP distance decides."""
    if wide is None:
        return None
    from .tolerance import interval_excess, set_excess

    limit = bound(request)
    if limit.orders:
        return set_excess(request.dtype, wide, actual, limit.interval)
    return interval_excess(request.dtype, limit.wide or request.dtype, wide, limit.ulps, actual, limit.interval)
