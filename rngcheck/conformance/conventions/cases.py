"""The numbers conventions' cases: uniform floats, normals and integers drawn from the operator's words.

Per convention, kind and dtype on states that cross blocks and carries; stateless seed rules; and
every number TensorFlow's guide prints (rngcheck/vectors/tensorflow_guide.json). A case names a
request (rngcheck.numbers.Request) and a state; rngcheck.conformance.conventions.check judges it.
Categories: uniform, normal, truncated-normal, integers, bits, seed, guide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import counter, numbers
from ...numbers import BITS, INTEGERS, NORMAL, TRUNCATED_NORMAL, UNIFORM, Request
from ...numbers import onnxruntime_cpu as numbers_ort
from ...numbers import tensorflow as numbers_tf
from ...vectors import guide_vectors
from ..case import ALL, FULL_ONLY
from ..case import Case as CaseHeader
from ..directml.cases import BASE_STATE

NUMBERS = "numbers"      # the procedure: a request against the reference or printed numbers
BYTES_PER_NUMBER = 80    # what the check holds at once, a number (Case.memory_needed)
CATEGORIES = ("uniform", "normal", "truncated-normal", "integers", "bits", "seed", "guide")


@dataclass(frozen=True, kw_only=True)
class Case(CaseHeader):
    """One draw: a request (convention, kind, dtype, count, range or stateless seed) from a state."""

    axis = "numbers"
    layer = "numbers"

    state: tuple[int, ...] = (0, 0, 0, 0, 0, 0)
    request: Request
    procedure: str = NUMBERS
    expected_values: tuple | None = None              # printed numbers (None where not printed)

    def size(self) -> int:
        return self.request.count

    def part(self) -> str:
        return f"{self.request.convention} {self.request.kind} {self.request.dtype}"

    def memory_needed(self) -> int:
        # measured: 54 to 72 bytes a number at its peak (2^24 float32 normals, float64 uniforms on the
        # reference backend: the answer, the reference, its wide form, the distances, the comparison)
        return self.request.count * BYTES_PER_NUMBER

    def inputs(self) -> dict[str, Any]:
        return {"state": [f"0x{int(w):08x}" for w in self.state], "request": self.request.to_dict()}

    def reproduction(self) -> dict[str, Any] | None:
        return {"state": ",".join(f"0x{int(w):08x}" for w in self.state), "request": self.request.to_dict()}

    def repro_arguments(self) -> list[str] | None:
        return ["--state", ",".join(f"0x{int(w):08x}" for w in self.state), *numbers.options_of(self.request.to_dict())]


NUMBER_CATEGORIES = {UNIFORM: "uniform", NORMAL: "normal", TRUNCATED_NORMAL: "truncated-normal",
              INTEGERS: "integers", BITS: "bits"}
GUIDE = "../shared/seeds/004_a9f6993c0c6e48da.digest.md (TensorFlow guide 'Random number generation')"
NUMBERS_RULE = "the convention's conversion of the operator's words (rngcheck.numbers), within its bound"
QUICK_COUNT = 1027       # odd: a partial block and a half Box-Muller pair at the end
FULL_COUNT = (1 << 16) + 3
# A state whose stream has a word with a zero 23-bit mantissa at element 2 (found by search, checked
# by tests/test_numbers.py): a float32 normal's u1 is 0 there, and only the epsilon clamp keeps log finite.
ZERO_MANTISSA_COUNTER = 4751841
# A state whose float16 normal element 2 is subnormal (|x| < 2^-14; found the same way, checked by the
# same tests): flush-to-zero shows there.
SUBNORMAL_HALF_COUNTER = 2741
# A state that the libraries with a narrow seed interface can be given: counter words 0-1 zero (a call
# that starts at block 0: OpenVINO's RandomUniform maps (global_seed, op_seed) onto key and counter
# words 2-3), word 2 below 2^16 and word 3 zero (cuRAND's host generator: subsequence 0x8a2e of 65536),
# and key word 0 a float32 integer, the pi key's with its low 11 bits cleared (ONNX Runtime's CPU
# kernels seed minstd_rand0 with it through a float attribute: rngcheck.numbers.onnxruntime_cpu).
# The "-block0" cases run on it, for the conventions and kinds of the libraries that need it.
BLOCK_ZERO_KINDS = {"tensorflow": (UNIFORM, INTEGERS),             # OpenVINO's RandomUniform
                    "curand": (UNIFORM, NORMAL, BITS),              # cuRAND's host generator
                    "onnxruntime-cpu": (UNIFORM, NORMAL)}           # ONNX Runtime's CPU kernels
BLOCK_ZERO_STATE = tuple(int(w) for w in counter.state_from_words((0, 0, 0x8A2E, 0), (0xA4093800, 0x299F31D0)))

INT_RANGES = {
    "int32": [("small", -5, 10), ("power-of-two", 0, 1 << 20), ("full", -(1 << 31), (1 << 31) - 1),
              ("2pow31", -(1 << 30), 1 << 30)],
    "int64": [("small", -5, 10), ("2pow32", 0, 1 << 32), ("int32-span", -(1 << 31), (1 << 31) - 1),
              ("2pow40", -(1 << 39), 1 << 39), ("full", -(1 << 63), (1 << 63) - 1)],
}
FLOAT_RANGE = (-3.5, 7.25)


def _numbers_case(case_id, category, description, request, state, *, source, expected=None, profiles=ALL, note=""):
    return Case(id=case_id, category=category, description=description, rule=NUMBERS_RULE, source=source,
                state=tuple(int(w) for w in state), request=request, expected_values=expected, profiles=profiles,
                note=note)


def convention_cases() -> list[Case]:
    cases = []
    carry_state = counter.make_state((1 << 64) - 2, (0xA4093822, 0x299F31D0))
    for name, convention in sorted(numbers.CONVENTIONS.items()):
        for kind, dtypes in convention.kinds.items():
            category = NUMBER_CATEGORIES[kind]
            for dtype in dtypes:
                stem = f"{category}/{name}/{dtype}"
                source = convention.sources.get(kind, convention.title)
                for label, low, high in _ranges(kind, dtype):
                    suffix = f"-{label}" if label else ""
                    if not convention.supports(numbers.Request(name, kind, dtype, 1, low, high)):
                        continue  # the convention defines no such range (cuRAND's uniform has none)
                    for profile_count, profiles in ((QUICK_COUNT, frozenset({"quick"})), (FULL_COUNT, FULL_ONLY)):
                        request = numbers.Request(name, kind, dtype, profile_count, low, high)
                        cases.append(_numbers_case(f"{stem}{suffix}" + ("" if profiles != FULL_ONLY else "-large"),
                                           category, f"{request.text()} from the pi state", request, BASE_STATE,
                                           source=source, profiles=profiles))
                    if kind not in BLOCK_ZERO_KINDS.get(name, ()):
                        continue
                    request = numbers.Request(name, kind, dtype, QUICK_COUNT, low, high)
                    cases.append(_numbers_case(f"{stem}{suffix}-block0", category,
                                               f"{request.text()} from block 0 (counter words 0-1 zero)", request,
                                               BLOCK_ZERO_STATE, source=source))
                request = numbers.Request(name, kind, dtype, 13, *(_ranges(kind, dtype)[0][1:]))
                cases.append(_numbers_case(f"{stem}-carry", category,
                                           f"{request.text()} across the carry out of word 1",
                                           request, carry_state, source=source))
    return cases


def _ranges(kind, dtype):
    if kind == INTEGERS:
        return INT_RANGES.get(dtype, [("small", -5, 10)])
    if kind == UNIFORM:
        return [("", None, None), ("range", *FLOAT_RANGE)]
    return [("", None, None)]


def special_cases() -> list[Case]:
    zero = counter.make_state(ZERO_MANTISSA_COUNTER, (0xA4093822, 0x299F31D0))
    cases = []
    for dtype in ("float32", "float16", "bfloat16"):
        request = numbers.Request("tensorflow", NORMAL, dtype, 4)
        cases.append(_numbers_case(f"normal/tensorflow/{dtype}-epsilon-clamp", "normal",
                           "element 2's u1 word has a zero mantissa: the 1e-7 clamp keeps the value finite",
                           request, zero, source=numbers_tf.SOURCE_R + " (BoxMullerFloat: u1 < epsilon)"))
    request = numbers.Request("tensorflow", NORMAL, "float16", 4)
    cases.append(_numbers_case("normal/tensorflow/float16-subnormal", "normal",
                               "element 2 is a float16 subnormal: flushing it to zero is wrong", request,
                               counter.make_state(SUBNORMAL_HALF_COUNTER, (0xA4093822, 0x299F31D0)),
                               source=numbers_tf.SOURCE_R + " (NormalDistribution<Eigen::half>: Eigen::half(f))"))
    request = numbers.Request("onnxruntime-cpu", UNIFORM, "float32", 3)
    cases.append(_numbers_case("uniform/onnxruntime-cpu/float32-clamp-below-one", "uniform",
                               "element 0's engine value rounds to 1.0: generate_canonical returns the float below 1",
                               request, counter.state_from_words((0, 0, 0, 0), (numbers_ort.CLAMP_SEED, 0)),
                               source=numbers_ort.SOURCE_L + " (generate_canonical: LWG 2524)"))
    for seed in ((1, 2), ((1 << 63) + 5, (1 << 64) - 1)):
        for kind, dtype in ((UNIFORM, "float32"), (BITS, "uint64")):
            request = numbers.Request("tensorflow", kind, dtype, 9, seed=seed)
            cases.append(_numbers_case(f"seed/tensorflow/{kind}-{dtype}-{seed[0]:x}-{seed[1]:x}", "seed",
                               f"stateless {kind} {dtype} with seed {list(seed)}: key and counter from the seed",
                               request, (0,) * 6, source=numbers_tf.SOURCE_S + " (GenerateKey)"))
    return cases


def guide_cases() -> list[Case]:
    cases = []
    for vector in guide_vectors():
        draws, _ = numbers_tf.run_program(vector.steps)
        for draw in draws:
            if draw.expected is None:
                continue
            replica = draw.label.split(":")[0].replace(" ", "") + "-" if draw.label.startswith("replica") else ""
            state = draw.state if draw.state is not None else (0,) * 6
            cases.append(_numbers_case(f"guide/{vector.id}/step{draw.step}{('-' + replica[:-1]) if replica else ''}",
                               "guide", f"{draw.label}: the printed {list(draw.expected)}", draw.request, state,
                               source=f"{vector.source}; {GUIDE}", expected=tuple(draw.expected),
                               note="the state is the Generator model's (rngcheck.numbers.tensorflow rules 11-14)"))
    return cases


def numbers_cases() -> list[Case]:
    return convention_cases() + special_cases() + guide_cases()
