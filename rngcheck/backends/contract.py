"""The backend contract: what an implementation under test provides.

A backend only computes. It never sees an expected answer and never decides a verdict.

    class Backend:
        name: str
        validates: bool = False
        fork_safe: bool = False
        def describe(self) -> dict[str, str]     # "version" among its keys
        def random_generator(self, state, sizes, strides, buffer, *,
                             output_state=True, feature_level=(4, 0)) -> numpy.ndarray | None
        # optional, the numbers layer (rngcheck.numbers):
        conventions: tuple[str, ...] = ()
        def random_numbers(self, request: dict, state) -> numpy.ndarray
        # optional, the generators (rngcheck.generators; Random123's names: philox4x32, threefry2x32, ...):
        generators: tuple[str, ...] = ()
        def generator_blocks(self, generator: str, rounds: int, counters: numpy.ndarray,
                             key: tuple[int, ...]) -> numpy.ndarray

``state``: numpy uint32 array of 6 words whose shape is the InputStateTensor's sizes
((6,) at feature level 4.0 by default; (1, 1, 1, 6) at 3.0). ``sizes``: tuple of int.
``strides``: tuple of int, or None for packed row-major. ``buffer``: 1-D numpy array,
prefilled by the suite; write element i at its physical offset and touch nothing else.
``output_state``: True for an OutputStateTensor with the input state's sizes, a tuple of
sizes for one described differently, False for none. Return the new state (6 uint32) when
an output state was asked for, else None. Raise :class:`rngcheck.Rejected` for a
description the backend refuses. ``validates``: True if it refuses invalid descriptions
itself, as DirectML does (the suite then requires it to). ``fork_safe``: True if a forked
copy of the process may go on calling it (the statistical batteries then read a backend
stream in several forked processes, ``--workers``); leave it False for anything that holds
a device context, threads, or a child process (all of which a fork breaks or shares).
``describe()``: what each run records of the backend (device, driver, library versions); its
``version`` says what is tested and its version in one line ("torch 2.13.0+cpu"), the results
table's version column.

``conventions`` names the numbers conventions (rngcheck.numbers.CONVENTIONS) the backend can
draw under; ``random_numbers`` answers one ``request`` (rngcheck.numbers.Request.to_dict(): convention,
kind, dtype, count, and low/high/seed when set) for the 6-word uint32 ``state`` (ignored when the
request has a seed) with ``count`` numbers: numpy float16/float32/float64 or the integer dtype asked
for, bfloat16 as its bits in uint16 (or float32 values that are bfloat16 values). It raises
:class:`rngcheck.errors.NotApplicable` for a request it cannot express; a backend without the
method, or whose ``conventions`` lack the request's, is "not applicable" for every numbers case
(never a pass).

``generators`` names the counter-based generators the backend can compute one block of, as
Random123 writes them (``philox4x32``, ``threefry2x64``; NxW: N lanes of W bits); ``generator_blocks``
answers ``generator`` with ``rounds`` rounds on ``counters``, a numpy array of shape (blocks, N), uint32
for W = 32 and uint64 for W = 64 (row b is block b's counter, lane 0 = Random123's ``ctr.v[0]``), and
``key``, the key's W-bit words (``key.v[0]`` first): the same shape and dtype, row b the generator's
block for row b. It raises :class:`rngcheck.errors.NotApplicable` for a generator or a round count it
cannot compute; a backend without the method, or whose ``generators`` lacks the name, is "not
applicable" for that generator's cases (never a pass). The suite owns the known answers and the verdict
(rngcheck.conformance.known_answers).

Other operators (optional; rngcheck.conformance.axes): ``operators`` names the ones beside
DirectML's that the backend runs, and each has its method (OPERATOR_METHODS). StableHLO's:

        operators: tuple[str, ...] = ("stablehlo",)
        def rng_bit_generator(self, algorithm: str, state: numpy.ndarray, shape: tuple[int, ...],
                              dtype: str) -> tuple[numpy.ndarray, numpy.ndarray]

``algorithm``: "DEFAULT", "THREE_FRY" or "PHILOX"; ``state``: the initial state, numpy uint64 of 2 or
3 words; ``shape``: the output's (rank 0 and up, sizes may be 0); ``dtype``: a numpy name (uint8 ..
uint64, int8 .. int64, float16 .. float64; rngcheck.stablehlo.ELEMENT_TYPES). Return (output state
as uint64, output of that dtype and shape) and leave ``state`` as it was. Raise Rejected for a
program the implementation refuses, NotApplicable for one it cannot express; a backend whose
``operators`` lack "stablehlo" is not applicable for every rng_bit_generator case (never a pass).
The call crosses the worker/exec isolation as OPER/BITS (docs/exec-protocol.md).

How a backend is named and loaded: rngcheck.backends.registry.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import numbers
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, NotApplicable

# The contract method of each operator beside DirectML's (whose method is random_generator).
OPERATOR_METHODS: dict[str, str] = {"stablehlo": "rng_bit_generator"}


class Backend:
    """Base class of every backend (subclassing is optional: the methods are the contract)."""

    name: str = "unnamed"
    validates: bool = False
    fork_safe: bool = False

    def describe(self) -> dict[str, str]:
        """Device, driver and versions, ``version`` among them: recorded in every result document."""
        return {}

    def random_generator(self, state: np.ndarray, sizes: tuple[int, ...], strides: tuple[int, ...] | None,
                         buffer: np.ndarray, *, output_state: bool | tuple[int, ...] = True,
                         feature_level: tuple[int, ...] = FEATURE_LEVEL_4_0) -> np.ndarray | None:
        raise NotImplementedError

    if TYPE_CHECKING:
        # The runner only reads it: a backend may set it as a class attribute or compute it in a
        # property (the exec and numpy backends do), so for the type checker it is read-only.
        @property
        def conventions(self) -> tuple[str, ...]: ...
    else:
        conventions: tuple[str, ...] = ()

    def random_numbers(self, request: dict[str, Any], state: np.ndarray) -> np.ndarray:
        """The numbers layer (optional): ``request['count']`` numbers for ``state``; see the module doc."""
        raise NotApplicable(f"backend {self.name!r} draws no numbers")

    if TYPE_CHECKING:
        @property
        def generators(self) -> tuple[str, ...]: ...
    else:
        generators: tuple[str, ...] = ()

    def generator_blocks(self, generator: str, rounds: int, counters: np.ndarray,
                         key: tuple[int, ...]) -> np.ndarray:
        """The generators (optional): one block per row of ``counters``; see the module doc."""
        raise NotApplicable(f"backend {self.name!r} computes no generator blocks")

    def generator_request(self, generator: str, counters: np.ndarray) -> tuple[int, int]:
        """(lanes N, word bits W) of ``generator`` (Random123's ``<family>NxW``), once it is one of this
        backend's ``generators`` and ``counters`` is a (blocks, N) array of W-bit words; NotApplicable,
        naming the backend, otherwise. A backend's ``generator_blocks`` starts here."""
        if generator not in self.generators:
            raise NotApplicable(f"{self.name} computes {', '.join(self.generators) or 'no generator'}, "
                                f"not {generator!r}")
        lanes, bits = generator_shape(generator)
        counters = np.asarray(counters)
        if counters.ndim != 2 or counters.shape[1] != lanes or counters.dtype != np.dtype(f"uint{bits}"):
            raise NotApplicable(f"{generator} counters are (blocks, {lanes}) uint{bits}, "
                                f"not {counters.dtype}{list(counters.shape)}")
        return lanes, bits

    def numbers_request(self, request: dict[str, Any], *, kinds: Mapping[str, Collection[str]] | None = None,
                        max_numbers: int | None = None, ranged: bool = True) -> numbers.Request:
        """``request`` read and checked (rngcheck.numbers), under one of this backend's
        ``conventions``; NotApplicable, naming the backend, for anything else. A convention of the backend's
        that rngcheck.numbers does not model is the library's own (the property axis alone judges it): its
        request is read, not checked against a model. A backend's ``random_numbers`` starts here, then
        says what else of the request it cannot draw; the common limits are said here: ``kinds`` (kind:
        the dtypes drawn), ``max_numbers`` a call, and ``ranged=False`` for uniforms in [0, 1) only."""
        parsed = self._numbers_request(request)
        if kinds is not None and parsed.dtype not in kinds.get(parsed.kind, ()):
            raise NotApplicable(f"the {self.name} backend draws no {parsed.kind} {parsed.dtype}")
        if not ranged and parsed.kind == numbers.UNIFORM and parsed.low is not None:
            raise NotApplicable(f"the {self.name} backend draws uniforms in [0, 1) only: no uniform range")
        if max_numbers is not None and not 0 < parsed.count <= max_numbers:
            raise NotApplicable(f"{parsed.count} numbers: the {self.name} backend draws 1 to {max_numbers} a call")
        return parsed

    def _numbers_request(self, request: dict[str, Any]) -> numbers.Request:
        try:
            parsed = numbers.Request.from_dict(request)
            if parsed.convention not in self.conventions or parsed.convention in numbers.CONVENTIONS:
                numbers.check(parsed)
        except numbers.NumbersError as error:
            raise NotApplicable(f"not a numbers request {self.name} can draw: {error}") from None
        if parsed.convention not in self.conventions:
            raise NotApplicable(f"{self.name} draws under the {', '.join(self.conventions) or 'no'} convention, "
                                f"not {parsed.convention!r}")
        return parsed

    if TYPE_CHECKING:   # other operators it runs (OPERATOR_METHODS), besides DirectML's; read-only as conventions
        @property
        def operators(self) -> tuple[str, ...]: ...
    else:
        operators: tuple[str, ...] = ()

    def rng_bit_generator(self, algorithm: str, state: np.ndarray, shape: tuple[int, ...],
                          dtype: str) -> tuple[np.ndarray, np.ndarray]:
        """StableHLO's rng_bit_generator (optional): (new state, output); see the module doc."""
        raise NotApplicable(f"backend {self.name!r} runs no stablehlo.rng_bit_generator")

    def close(self) -> None:
        """Release devices and contexts (optional)."""

    @classmethod
    def from_options(cls, options: str) -> Backend:
        """Build from the text after ``name:`` on the command line; default: ``key=value,...``."""
        kwargs: dict[str, str] = {}
        for item in filter(None, options.split(",")):
            key, sep, value = item.partition("=")
            if not sep:
                raise BackendSpecError(f"backend option {item!r} is not key=value")
            kwargs[key.strip()] = value.strip()
        try:
            return cls(**kwargs)
        except TypeError as error:
            raise BackendSpecError(f"bad options for backend {cls.name!r}: {error}") from None


def generator_shape(generator: str) -> tuple[int, int]:
    """(N, W) of a generator named as Random123 names them, ``<family>NxW`` (``threefry4x64``: 4, 64);
    NotApplicable for a name that is not of that form."""
    family, _, widths = generator.rpartition("x")
    digits = len(family) - len(family.rstrip("0123456789"))
    if not digits or widths not in ("32", "64") or not family[:-digits]:
        raise NotApplicable(f"{generator!r} is not a generator name of the form <family>NxW (philox4x32)")
    return int(family[-digits:]), int(widths)
