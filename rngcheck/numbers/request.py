"""What the numbers layer draws: the request, the convention's interface, and their vocabulary.

The convention modules (tensorflow, jax, pytorch, curand, mkl, onnxruntime, onnxruntime_cpu)
build on this module; the package (rngcheck.numbers) lists them in its registry and draws through
them. Kept apart from the package's face so that a convention module never imports the package
that imports it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import RngcheckError
from . import floats
from .tolerance import Bound, Interval

# What can be drawn. ``integers``: uniform in [low, high); ``bits``: the integer type's whole range.
UNIFORM, NORMAL, TRUNCATED_NORMAL, INTEGERS, BITS = "uniform", "normal", "truncated_normal", "integers", "bits"
KINDS = (UNIFORM, NORMAL, TRUNCATED_NORMAL, INTEGERS, BITS)
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("int32", "int64", "uint32", "uint64")
INT_RANGES = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1),
              "uint32": (0, (1 << 32) - 1), "uint64": (0, (1 << 64) - 1)}
MAX_COUNT = 1 << 28
TRUNCATE = 2.0   # a truncated normal's numbers lie in (-TRUNCATE, TRUNCATE)


class NumbersError(RngcheckError, ValueError):
    """A request that cannot be drawn: one line naming what is wrong (the CLI's usage error, exit 2)."""


@dataclass(frozen=True)
class Request:
    """One draw: ``count`` numbers of ``kind`` in ``dtype`` under ``convention``.

    ``low``/``high``: the range [low, high) of ``uniform`` (floats; default [0, 1)) and of
    ``integers`` (required). ``seed``: a stateless seed pair (TensorFlow's ``seed=[a, b]``): the
    implementation derives key and counter from it by the convention's seed rule, and the state
    passed with the request is ignored.
    """

    convention: str
    kind: str
    dtype: str
    count: int
    low: float | int | None = None
    high: float | int | None = None
    seed: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise NumbersError(f"unknown kind {self.kind!r} (known: {', '.join(KINDS)})")
        if not isinstance(self.count, int) or isinstance(self.count, bool) or not 0 <= self.count <= MAX_COUNT:
            raise NumbersError(f"count must be an integer in 0..{MAX_COUNT}, got {self.count!r}")
        floating = self.kind in (UNIFORM, NORMAL, TRUNCATED_NORMAL)
        allowed = FLOAT_DTYPES if floating else INT_DTYPES
        if self.dtype not in allowed:
            raise NumbersError(f"{self.kind} is drawn as {', '.join(allowed)}, not {self.dtype!r}")
        if self.kind == INTEGERS:
            self._check_integer_range()
        elif self.kind == UNIFORM and (self.low is not None or self.high is not None):
            self._check_float_range()
        elif self.low is not None or self.high is not None:
            raise NumbersError(f"{self.kind} takes no range")
        if self.seed is not None:
            if len(self.seed) != 2 or not all(isinstance(s, int) and -(1 << 63) <= s < (1 << 64) for s in self.seed):
                raise NumbersError(f"a stateless seed is two 64-bit integers, got {self.seed!r}")
            object.__setattr__(self, "seed", tuple(int(s) for s in self.seed))

    def _check_integer_range(self) -> None:
        low, high = self._integer_end("low", self.low), self._integer_end("high", self.high)
        if not low < high:
            raise NumbersError(f"the range needs low < high, got [{self.low}, {self.high})")

    def _integer_end(self, name: str, value: object) -> int:
        lowest, highest = INT_RANGES[self.dtype]
        if not isinstance(value, int) or isinstance(value, bool):
            raise NumbersError(f"integers need an integer {name}, got {value!r}")
        if not lowest <= value <= highest:
            raise NumbersError(f"{name} = {value} is outside {self.dtype} ({lowest}..{highest})")
        return value

    def _check_float_range(self) -> None:
        low, high = self._float_end("low", self.low), self._float_end("high", self.high)
        if not low < high:
            raise NumbersError(f"the range needs low < high, got [{self.low}, {self.high})")

    @staticmethod
    def _float_end(name: str, value: object) -> float | int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise NumbersError(f"uniform needs a finite number for {name}, got {value!r}")
        return value

    @property
    def floating(self) -> bool:
        return self.dtype in FLOAT_DTYPES

    @property
    def format(self) -> floats.Format | None:
        return floats.FORMATS.get(self.dtype)

    @property
    def range(self) -> tuple[float | int, float | int] | None:
        if self.kind == UNIFORM:
            return self.uniform_range
        if self.kind == INTEGERS:
            return self.integer_range
        return None

    @property
    def uniform_range(self) -> tuple[float | int, float | int]:
        """[low, high) of a ``uniform`` request: [0, 1) unless given."""
        return (0.0 if self.low is None else self.low, 1.0 if self.high is None else self.high)

    @property
    def integer_range(self) -> tuple[int, int]:
        """[low, high) of an ``integers`` request (both integers: __post_init__ checks them)."""
        if not isinstance(self.low, int) or not isinstance(self.high, int):
            raise NumbersError(f"{self.kind} has no integer range")
        return (self.low, self.high)

    def text(self) -> str:
        """The request as one short line: ``tensorflow normal float32 x6`` (range and seed when set)."""
        parts = [self.convention, self.kind, self.dtype, f"x{self.count}"]
        if self.low is not None:
            parts.append(f"[{self.low}, {self.high})")
        if self.seed is not None:
            parts.append(f"seed={list(self.seed)}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if v is not None}
        if self.seed is not None:
            data["seed"] = list(self.seed)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Request:
        if not isinstance(data, dict):
            raise NumbersError(f"a request is an object, got {type(data).__name__}")
        known = {"convention", "kind", "dtype", "count", "low", "high", "seed"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise NumbersError(f"unknown request field(s): {', '.join(map(str, unknown))}")
        missing = sorted({"convention", "kind", "dtype", "count"} - set(data))
        if missing:
            raise NumbersError(f"a request needs {', '.join(missing)}")
        seed = data.get("seed")
        if seed is not None:
            if not isinstance(seed, (list, tuple)):
                raise NumbersError(f"a stateless seed is two 64-bit integers, got {seed!r}")
            seed = tuple(seed)
        return cls(str(data["convention"]), str(data["kind"]), str(data["dtype"]), data["count"],
                   data.get("low"), data.get("high"), seed)


def options_of(request: dict[str, Any]) -> list[str]:
    """A request's fields (Request.to_dict()) as ``rngcheck repro`` options."""
    words = []
    for key in ("convention", "kind", "dtype", "count", "low", "high"):
        if request.get(key) is not None:
            words += [f"--{key}", str(request[key])]
    if request.get("seed") is not None:
        words += ["--seed-pair", ",".join(str(s) for s in request["seed"])]
    return words


class Convention:
    """One library's conversion rules (a spec module defines one; CONVENTIONS lists it).

    ``kinds``: kind -> the dtypes it is defined for. ``sources``: kind -> the file it is read from.
    ``seeded``: whether the convention has a stateless seed rule (Request.seed).
    ``generator``: the word generator the convention reads. Philox4x32-10 (the operator's stream)
    for all but one: a convention over another generator (ONNX Runtime's CPU kernels:
    minstd_rand0) names it here and says in its module which words of the 6-word state seed it.
    """

    name = ""
    title = ""
    kinds: dict[str, tuple[str, ...]] = {}
    sources: dict[str, str] = {}
    seeded = False
    generator = "philox4x32-10"
    ranged_uniform = True   # False: the library defines no uniform but its own unit interval
    reaches_high = False    # True: a ranged uniform's arithmetic can round onto high (interval [low, high])

    def supports(self, request: Request) -> bool:
        ranged = request.kind == UNIFORM and request.low is not None
        return (request.dtype in self.kinds.get(request.kind, ()) and (request.seed is None or self.seeded)
                and (self.ranged_uniform or not ranged))

    def draw(self, request: Request, state: npt.ArrayLike | None) -> np.ndarray:
        """The numbers, held per rngcheck.numbers.floats rule 1 (bfloat16 as uint16 bits)."""
        raise NotImplementedError

    def bound(self, request: Request) -> Bound:
        """How far an implementation may be from :meth:`draw` (rngcheck.numbers.tolerance)."""
        raise NotImplementedError

    def orders(self, request: Request, state: npt.ArrayLike | None) -> np.ndarray | None:
        """Tolerance rule 7: the results of every allowed evaluation order, one row each (held per
        floats rule 1; the reference's first), for a request whose bound names ``orders``; None
        where the bound is a distance."""
        return None

    def interval(self, request: Request) -> Interval | None:
        """Where the numbers lie (tolerance rule 6b): a uniform's [low, high) ([low, high] where
        ``reaches_high``), [0, 1) unless ranged; a truncated normal's (-2, 2); an integer's [low,
        high). None where any finite value may come out (normal) or every value of the type (bits).
        A convention whose numbers reach an end says so here."""
        if request.kind == UNIFORM:
            low, high = request.uniform_range
            return Interval(low, high, high_closed=self.reaches_high and request.low is not None)
        if request.kind == TRUNCATED_NORMAL:
            return Interval(-TRUNCATE, TRUNCATE, low_closed=False, high_closed=False)
        if request.kind == INTEGERS:
            return Interval(*request.integer_range)
        return None


def required_state(state: npt.ArrayLike | None) -> npt.ArrayLike:
    """The state a draw reads; only a request with a stateless seed (a seeded convention) needs none."""
    if state is None:
        raise TypeError("a request without a stateless seed needs a state")
    return state
