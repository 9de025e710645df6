"""The ``tinygrad`` backend: tinygrad's ``Tensor.rand``/``uniform``/``randn``/``randint``, numbers only.

Written against tinygrad 0.14.0 (pure Python; its generator is Threefry-2x32 keyed by
``[sha256 of the device's index, seed]``, with a per-device counter that each draw moves by its size).
Its convention, ``tinygrad``, is the library's own, judged in a run by the property axis
(rngcheck.conformance.properties), never by the numbers cases; rngcheck.numbers.tinygrad models its key,
counter, words and float32 uniform, and tests/test_tinygrad_backend.py checks ``realise=made`` against it.

1. Device: ``device=python`` (tinygrad's PYTHON device: an interpreter, no compiler) or ``cpu`` (its
   CPU device: needs clang). Default: ``cpu`` where clang is on PATH, else ``python``. The environment's
   ``DEV`` is set before tinygrad is imported (the backend runs in its own worker process).
2. Seed and position (the property axis's rule 1): the seed is the state's key words (word 4, and word 5
   which must be 0: ``Tensor.manual_seed`` keys a uint32); position c (counter word 0) is reached by
   ``manual_seed(seed)`` and c draws of the same request, each realised before the next is made.
3. A request of n numbers is made as a program makes tensors: two lazy tensors of n // 2 and n - n // 2
   numbers made one after the other, then realised, and joined first half first. ``realise=reversed``
   (the default) realises the second before the first; ``realise=made`` in the order made. A library
   whose lazy tensors keep the counter they were made with gives the same numbers either way; tinygrad
   0.14.0 gives the first tensor the second's numbers under ``reversed`` (tinygrad#16520: the counter a
   lazy tensor reads depends on realisation order), which the property axis names property-stream-repeats.
4. Kinds: uniform (float32, float16; [0, 1) through ``Tensor.rand``, a range through ``Tensor.uniform``),
   normal (``Tensor.randn``, float32 and float16), integers (``Tensor.randint``, int32 and int64).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from typing import Any

import numpy as np

from .. import numbers
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable
from . import Backend, placement

INSTALL_HINT = "tinygrad is not installed: pip install rngcheck[tinygrad]"
WRITTEN_AGAINST = "0.14.0"
CONVENTION = "tinygrad"
KINDS = {numbers.UNIFORM: ("float32", "float16"), numbers.NORMAL: ("float32", "float16"),
         numbers.INTEGERS: ("int32", "int64")}
REALISE = ("reversed", "made")
DEVICES = {"python": "PYTHON", "cpu": "CPU"}
MAX_NUMBERS = 1 << 20
MAX_POSITION = 64


class TinygradBackend(Backend):
    """tinygrad's random tensors (module doc rules 1-4)."""

    name = "tinygrad"
    validates = False
    conventions = (CONVENTION,)

    def __init__(self, device: str = "", realise: str = "reversed") -> None:
        if realise not in REALISE:
            raise BackendSpecError(f"tinygrad: realise={realise!r} is not one of {', '.join(REALISE)}")
        device = device or ("cpu" if shutil.which("clang") else "python")
        if device not in DEVICES:
            raise BackendSpecError(f"tinygrad: device={device!r} is not one of {', '.join(DEVICES)}")
        if importlib.util.find_spec("tinygrad") is None:
            raise BackendUnavailable(INSTALL_HINT)
        os.environ.setdefault("DEV", DEVICES[device])
        if os.environ["DEV"] != DEVICES[device]:
            raise BackendUnavailable(f"tinygrad: DEV={os.environ['DEV']} is set; device={device} needs "
                                     f"DEV={DEVICES[device]}")
        import tinygrad

        self.tinygrad, self.device, self.realise = tinygrad, device, realise

    def describe(self) -> dict[str, str]:
        version = getattr(self.tinygrad, "__version__", None) or _version()
        return {"implementation": "Tensor.rand / uniform / randn / randint (Threefry-2x32)",
                "generator": "threefry2x32 (JAX's original layout), key [sha256(device index), seed]",
                "device": DEVICES[self.device], "realise": self.realise, "written_against": WRITTEN_AGAINST,
                "version": f"tinygrad {version}", "tinygrad": version}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        raise NotApplicable("tinygrad draws numbers (Threefry-2x32), not DirectML's Philox words")

    def random_numbers(self, request: dict, state):
        """Rules 2-4 of the module doc."""
        parsed = self.numbers_request(request, kinds=KINDS, max_numbers=MAX_NUMBERS)
        seed, position = placement.seed_and_position(state, "tinygrad", MAX_POSITION)
        tensor = self.tinygrad.Tensor
        tensor.manual_seed(seed)
        for _ in range(position):
            self._realised(self._made(parsed))
        return self._realised(self._made(parsed))

    def _made(self, request: numbers.Request) -> list[Any]:
        half = request.count // 2
        return [self._tensor(request, size) for size in (half, request.count - half) if size]

    def _realised(self, tensors: list[Any]) -> np.ndarray:
        order = range(len(tensors)) if self.realise == "made" else reversed(range(len(tensors)))
        arrays = {i: np.asarray(tensors[i].numpy()).reshape(-1) for i in order}
        return np.concatenate([arrays[i] for i in range(len(tensors))])

    def _tensor(self, request: numbers.Request, size: int) -> Any:
        tensor, dtypes = self.tinygrad.Tensor, self.tinygrad.dtypes
        dtype = getattr(dtypes, request.dtype)
        if request.kind == numbers.UNIFORM:
            if request.low is None:
                return tensor.rand(size, dtype=dtype)
            low, high = request.uniform_range
            return tensor.uniform(size, low=low, high=high, dtype=dtype)
        if request.kind == numbers.NORMAL:
            return tensor.randn(size, dtype=dtype)
        low, high = request.integer_range
        return tensor.randint(size, low=low, high=high, dtype=dtype)


def _version() -> str:
    from importlib.metadata import version

    return version("tinygrad")
