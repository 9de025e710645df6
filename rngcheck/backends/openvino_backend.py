"""The ``openvino`` backend: OpenVINO's ``RandomUniform-8`` on its CPU plugin, numbers only.

OpenVINO (PyPI ``openvino``) has one random operator, RandomUniform-8 (``openvino.opset8.
random_uniform``); with ``alignment='tensorflow'`` (the default) it is TensorFlow's Philox
uniform. Measured with openvino 2026.4.1 (tests/test_openvino_backend.py holds each fact):

  * the stream is standard Philox4x32-10 with key = (lo32 global_seed, hi32 global_seed) and
    counter = (lo32 b, hi32 b, lo32 op_seed, hi32 op_seed) for block b of the call, from b = 0;
    a second ``infer()`` of the same compiled model starts at block 256 * n (TensorFlow's
    reservation, rngcheck.numbers.tensorflow rule 12);
  * float32 in [0, 1) is TensorFlow's rule 1 (the low 23 bits of each word), and [low, high) its
    rule 4; int32 ranges are TensorFlow's rule 8 (word mod span, plus low);
  * global_seed = op_seed = 0 means "non-deterministic"; the Python binding refuses a seed of 2^63
    or more (a C++ int64 attribute).
So the backend draws under the ``tensorflow`` convention, mapping the 6-word state
[c0, c1, c2, c3, k0, k1] onto global_seed = k0 | k1 << 32 and op_seed = c2 | c3 << 32; it can
express only states whose counter words 0 and 1 are zero (a call starts at block 0), whose two
seeds are below 2^63 and not both zero: any other state is not applicable, with the reason.
The rngcheck cases that such a state serves are the numbers cases ``...-block0``
(rngcheck.conformance.conventions.cases.BLOCK_ZERO_STATE).

What it does not draw: normals, truncated normals and full-range bits (no such operator: not
applicable), TensorFlow's stateless seed scrambling (a request with a ``seed``: not applicable),
and words: no output of RandomUniform carries a whole 32-bit word (float32 keeps 23 bits, an int32
range is reduced mod its span, and the full int32 range is broken), so ``random_generator`` is
not applicable for every words case.

Where OpenVINO differs from TensorFlow (found and named by rngcheck's diagnosis; docs/library-findings.md):
int32 over the whole range gives -2^31 everywhere (high - low overflows), int64 is computed as
int32 with the range saturated to int32, and float16, bfloat16 and float64 are the float32
uniform rounded or widened (the CPU plugin computes in float32).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from .. import counter, numbers
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendUnavailable, NotApplicable
from . import Backend, placement

INSTALL_HINT = "openvino is not installed: pip install rngcheck[openvino]"
MAX_NUMBERS = 1 << 22          # numbers per request: one compiled model, one array
SEED_LIMIT = 1 << 63           # the binding takes global_seed and op_seed as int64
OUTPUT_TYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
                "int32": "i32", "int64": "i64"}


def seeds_of(state: np.ndarray) -> tuple[int, int]:
    """(global_seed, op_seed) of a 6-word state, or NotApplicable naming why OpenVINO cannot take it."""
    words = counter.counter_words(state)
    if int(words[0]) or int(words[1]):
        raise NotApplicable(f"counter words 0-1 = {int(words[0]):#x}, {int(words[1]):#x}: OpenVINO's RandomUniform "
                            "starts every call at block 0 (its counter is (block, op_seed))")
    global_seed = counter.key_value(state)
    op_seed = int(words[2]) | int(words[3]) << 32
    if global_seed >= SEED_LIMIT or op_seed >= SEED_LIMIT:
        raise NotApplicable(f"global_seed {global_seed:#x} / op_seed {op_seed:#x}: OpenVINO takes seeds below 2^63")
    if global_seed == 0 and op_seed == 0:
        raise NotApplicable("global_seed = op_seed = 0 is OpenVINO's non-deterministic seed")
    return global_seed, op_seed


class OpenVinoBackend(Backend):
    """OpenVINO's RandomUniform-8 (alignment 'tensorflow'), CPU plugin: the tensorflow convention's
    uniforms and integer ranges."""

    name = "openvino"
    validates = False
    conventions = ("tensorflow",)

    def __init__(self, device: str = "CPU"):
        if importlib.util.find_spec("openvino") is None:
            raise BackendUnavailable(INSTALL_HINT)
        import openvino

        self.ov = openvino
        self.core = openvino.Core()
        if device not in self.core.available_devices:
            raise BackendUnavailable(f"openvino device {device!r} is unavailable "
                                     f"(available: {', '.join(self.core.available_devices) or 'none'})")
        self.device = device

    def describe(self) -> dict[str, str]:
        version = self.ov.get_version()
        full_name = self.core.get_property(self.device, "FULL_DEVICE_NAME")
        return {"implementation": "RandomUniform-8 (alignment='tensorflow')",
                "version": f"openvino {version.split('-')[0]}", "openvino": version,
                "device": f"{self.device} ({full_name})"}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        raise NotApplicable("OpenVINO has no operator that returns whole 32-bit Philox words (RandomUniform "
                            "keeps 23 bits of a float32, reduces an int32 range mod its span): numbers only")

    def compile(self, request: numbers.Request, global_seed: int, op_seed: int) -> Any:
        """One compiled model: RandomUniform of shape [count] with the request's range and seeds."""
        ov, opset8 = self.ov, self.ov.opset8
        element = getattr(ov.Type, OUTPUT_TYPES[request.dtype])
        low, high = request.range or (0.0, 1.0)
        shape = opset8.constant(np.array([request.count], dtype=np.int64))
        node = opset8.random_uniform(shape, opset8.constant(low, dtype=element), opset8.constant(high, dtype=element),
                                     output_type=OUTPUT_TYPES[request.dtype], global_seed=global_seed,
                                     op_seed=op_seed, alignment="tensorflow")
        return self.core.compile_model(ov.Model([node], []), self.device)

    def random_numbers(self, request: dict, state):
        """rngcheck.numbers under TensorFlow's convention; see the module doc."""
        parsed = self.numbers_request(request)
        if parsed.kind not in (numbers.UNIFORM, numbers.INTEGERS):
            raise NotApplicable(f"OpenVINO has no {parsed.kind} operator (RandomUniform only)")
        if parsed.dtype not in OUTPUT_TYPES:
            raise NotApplicable(f"RandomUniform has no {parsed.dtype} output")
        if parsed.seed is not None:
            raise NotApplicable("OpenVINO takes its seeds as key and counter directly: no stateless seed scrambling")
        if not 0 < parsed.count <= MAX_NUMBERS:
            raise NotApplicable(f"{parsed.count} numbers: the openvino backend draws 1 to {MAX_NUMBERS} per call")
        global_seed, op_seed = seeds_of(placement.read_state(state))
        out = np.asarray(self.compile(parsed, global_seed, op_seed)({})[0]).reshape(-1)
        if parsed.dtype == "bfloat16":
            return out.view(np.uint16)   # the binding hands bf16 out as float16-typed bits
        return out
