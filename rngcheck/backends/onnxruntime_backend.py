"""The ``onnxruntime`` backend: ONNX Runtime's CPU ``RandomUniform`` and ``RandomNormal``, numbers only.

ONNX Runtime's CPU kernels are not Philox: they draw from libstdc++'s ``minstd_rand0`` seeded with
the operator's ``seed`` attribute (rngcheck.numbers.onnxruntime_cpu, the ``onnxruntime-cpu``
convention, says the rules and how the 6-word state carries the seed: word 4, the key's low word).
One request is one ONNX model of one node (opset 13, built with the ``onnx`` package), run once in
a fresh session on the CPU execution provider:
  * uniform: ``RandomUniform(shape=[n], dtype, low, high, seed)`` (float32, float64; [0, 1) unless
    the request has a range);
  * normal: ``RandomNormal(shape=[n], dtype, mean=0, scale=1, seed)``.
The ``seed`` attribute is a float32: a state whose word 4 is not a float32 integer cannot be given
and is not applicable, with the reason. The engine lives in the kernel: a second ``run()`` of the
same session continues the stream (tests/test_onnxruntime_backend.py checks it), which is why every
request gets its own session.

No Philox words (``random_generator`` is not applicable for every words case) and no other
convention: an ONNX Runtime build whose numbers are not minstd_rand0's fails the numbers cases, and
the diagnosis names what they look like.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from .. import numbers
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendUnavailable, NotApplicable
from ..numbers.onnxruntime_cpu import seed_of
from . import Backend, placement

INSTALL_HINT = "onnxruntime is not installed: pip install rngcheck[onnxruntime]"
MAX_NUMBERS = 1 << 22
OPSET = 13
ELEMENT_TYPES = {"float32": 1, "float64": 11}      # onnx.TensorProto.FLOAT, DOUBLE
OPERATORS = {numbers.UNIFORM: "RandomUniform", numbers.NORMAL: "RandomNormal"}


def model_bytes(operator: str, dtype: str, count: int, seed: float, attributes: dict[str, float]) -> bytes:
    """One node, no inputs, output ``y`` of shape [count]: the serialized ModelProto."""
    from onnx import helper

    element = ELEMENT_TYPES[dtype]
    node = helper.make_node(operator, [], ["y"], shape=[count], dtype=element, seed=seed)
    node.attribute.extend(helper.make_attribute(name, value) for name, value in attributes.items())
    graph = helper.make_graph([node], "rngcheck", [], [helper.make_tensor_value_info("y", element, [count])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    serialized: bytes = model.SerializeToString()
    return serialized


class OnnxRuntimeBackend(Backend):
    """ONNX Runtime's CPU RandomUniform/RandomNormal: the onnxruntime-cpu convention (minstd_rand0)."""

    name = "onnxruntime"
    validates = False
    conventions = ("onnxruntime-cpu",)

    def __init__(self) -> None:
        for module in ("onnxruntime", "onnx"):
            if importlib.util.find_spec(module) is None:
                raise BackendUnavailable(f"{module} is not installed: {INSTALL_HINT}")
        import onnx
        import onnxruntime

        self.ort, self.onnx = onnxruntime, onnx

    def describe(self) -> dict[str, str]:
        return {"implementation": "RandomUniform / RandomNormal, CPUExecutionProvider (minstd_rand0)",
                "generator": "not Philox: minstd_rand0",
                "version": f"onnxruntime {self.ort.__version__}", "onnxruntime": self.ort.__version__,
                "onnx": self.onnx.__version__, "device": "cpu (CPUExecutionProvider)"}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        raise NotApplicable("ONNX Runtime's CPU random operators are not Philox (minstd_rand0): numbers only")

    def session(self, model: bytes) -> Any:
        options = self.ort.SessionOptions()
        options.intra_op_num_threads = 1
        return self.ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    def random_numbers(self, request: dict, state):
        """rngcheck.numbers under the onnxruntime-cpu convention; see the module doc."""
        parsed = self.numbers_request(request, max_numbers=MAX_NUMBERS)
        seed = seed_of(placement.read_state(state))
        if float(np.float32(seed)) != seed:
            raise NotApplicable(f"state word 4 = {seed:#x} (the minstd_rand0 seed) is not a float32 integer: "
                                "ONNX's seed attribute is a float")
        attributes: dict[str, float] = {}
        if parsed.kind == numbers.UNIFORM and parsed.low is not None:
            low, high = parsed.uniform_range
            attributes = {"low": float(low), "high": float(high)}
            if float(np.float32(low)) != float(low) or float(np.float32(high)) != float(high):
                raise NotApplicable(f"[{low}, {high}): ONNX's low/high attributes are float32")
        model = model_bytes(OPERATORS[parsed.kind], parsed.dtype, parsed.count, float(seed), attributes)
        return np.asarray(self.session(model).run(None, {})[0]).reshape(-1)
