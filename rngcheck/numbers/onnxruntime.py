"""ONNX Runtime's DirectML execution provider: its numbers from the operator's words, rule by rule.

Sources (facts read there, written here):
  N  onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/
     DmlOperatorRandomNormalLike.cpp (the DirectML graph: DML_OPERATOR_RANDOM_GENERATOR, the
     mantissa mask and exponent fill, the split, clip, log, sqrt, sin, cos, multiply, join,
     scale/bias and cast nodes, and UpdateState)
  F  onnxruntime/core/framework/random_generator.h (PhiloxGenerator: a (seed, offset) pair;
     NextPhiloxSeeds(count) returns it and then adds count to the offset)
No DirectML kernel file for RandomUniform(Like) was found in the stored onnxruntime tree (only
DmlOperatorRandomNormalLike.cpp); the uniform rule below is the first stage of N's graph.

The word stream. N's graph runs DML_RANDOM_GENERATOR on a {1, 1, n'/2, 2} uint32 tensor
(n' = the element count rounded up to even), so row k holds words 2k and 2k+1 of the operator's
stream: the stream order is the convention's. The input state is
[offset low, offset high, 0, 0, seed low, seed high] (N, UpdateState) with (seed, offset) from
NextPhiloxSeeds(element count) (F; a ``seed`` attribute is a float, converted to uint64), and
the operator's output state is written back into the same state tensor. Without a ``seed``
attribute the state is uploaded before every execution from the process-wide generator, whose
offset advances by the element count n while an execution uses ceil(n'/4) blocks (executions
do not overlap; about 3/4 of the counters are skipped); with a ``seed`` attribute it is
uploaded once, and later executions continue from the operator's own output state
(counter + ceil(n'/4)). Mapping this onto the operator's states is a later issue.

Conversions:
  1. uniform float32 in [0, 1): 0x3f800000 | (word & 0x7fffff) as a float in [1, 2), then
     x * 1 + (-1) (an identity node with scale 1, bias -1) (N). Exact; the same as TensorFlow's
     rule 1.
  2. normal float32: the count is rounded up to even; words (2k, 2k+1) give elements 2k and 2k+1
     (N: a split on the last axis of the {n/2, 2} tensor and a join of the two results):
        u1 = clip(rule 1 of word 2k, 1e-7, FLT_MAX)          (the clip node)
        r  = sqrt(-2 * log(u1))                              (log node; sqrt node, scale -2)
        v  = rule 1 of word 2k+1, and sin/cos nodes with scale 2 * (float)M_PI, bias 0:
             sin(fl(6.2831855f * v)), cos(fl(6.2831855f * v))   (the angle rounded in float)
        element 2k = sin * r, element 2k+1 = cos * r         (join: sine first)
     then x * scale + mean (attributes, default 1 and 0) and a cast when the output is not float32
     (float16: rounded). This differs from TensorFlow's BoxMullerFloat only in the angle: TF forms
     2 pi v in double and rounds it once, DirectML multiplies by the float 2 pi.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import floats
from .box_muller import polar32
from .request import NORMAL, UNIFORM, Convention, Request, required_state
from .tensorflow import interleave, stream, uint32_to_float
from .tolerance import EXACT, Bound

SOURCE_N = "onnxruntime/core/providers/dml/DmlExecutionProvider/src/Operators/DmlOperatorRandomNormalLike.cpp"
SOURCE_F = "onnxruntime/core/framework/random_generator.h"
CLIP = np.float32(1.0e-7)
TWO_PI_FLOAT = np.float32(2.0) * np.float32(np.pi)      # 2.0f * (float)M_PI


def uniform(words: np.ndarray) -> np.ndarray:
    """Rule 1."""
    return uint32_to_float(words)


def box_muller(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rule 2 (mean 0, scale 1): each node's float result; transcendental nodes evaluated in
    binary64 and rounded once to binary32."""
    u1 = np.clip(uniform(x), CLIP, np.finfo(np.float32).max)
    return polar32(u1, TWO_PI_FLOAT * uniform(y))


class OnnxRuntimeDml(Convention):
    name = "onnxruntime-dml"
    title = "ONNX Runtime, DirectML execution provider (RandomNormalLike and its uniform stage)"
    kinds = {UNIFORM: ("float32",), NORMAL: ("float16", "float32")}
    ranged_uniform = False   # [0, 1) only (a ranged request is not this convention's)
    sources = {UNIFORM: f"{SOURCE_N} (mantissa mask, exponent fill, identity -1)",
               NORMAL: f"{SOURCE_N} (clip, log, sqrt, sin, cos, multiply, join, cast)"}

    def draw(self, request: Request, state: npt.ArrayLike | None = None) -> np.ndarray:
        n = request.count
        if request.kind == UNIFORM:
            return uniform(stream(required_state(state), 0, n))
        words = stream(required_state(state), 0, n + n % 2)
        values = interleave(*box_muller(words[0::2], words[1::2]))[:n]
        if request.dtype == "float32":
            return values
        return floats.round_to(floats.FLOAT16, values.astype(np.float64))

    def bound(self, request: Request) -> Bound:
        if request.kind == UNIFORM:
            return EXACT
        if request.dtype == "float16":
            return Bound(4, "the float32 Box-Muller (within 4 ULP) cast to float16: the rounding of a float32 "
                            "within 4 ULP of the exact model (tolerance rule 5)", wide="float32")
        return Bound(4, "Box-Muller as DirectML's nodes: u1, v and the float angle bit-exact; log within 1 ULP "
                        "(halved by sqrt: 0.5), sqrt 0.5, sin/cos within 1 ULP, the product 0.5, the "
                        "reference's own rounding of each step 0.5: 4 ULP (DirectML's own element-wise "
                        "tolerances may be wider on some hardware; not measured here: no DirectML device)")


ONNXRUNTIME_DML = OnnxRuntimeDml()
