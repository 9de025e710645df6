"""The cases of StableHLO's rng_bit_generator (rngcheck.stablehlo): data, as every case is.

Categories (a column each in the operator's table): rbg-vectors (rngcheck/vectors/stablehlo.json),
rbg-philox and rbg-threefry (each state size and element type), rbg-default, rbg-carry (counters that
carry across 2^32, 2^64 and 2^128), rbg-shape (ranks, odd, empty and large shapes: the ThreeFry split
and the chunks), rbg-validation (programs the description rules forbid). The procedure is
RNG_BIT_GENERATOR (rngcheck.conformance.rng_bit_generator.check); a case's state is the u64 words,
its shape the output's, its dtype the element type, its algorithm the rng_algorithm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ... import stablehlo as S
from ...vectors import stablehlo_vectors
from ..case import FULL_ONLY
from ..case import Case as CaseHeader

RNG_BIT_GENERATOR = "rng-bit-generator"   # the procedure
CATEGORIES = ("rbg-vectors", "rbg-philox", "rbg-threefry", "rbg-default", "rbg-carry", "rbg-shape",
              "rbg-validation")
KEY = 0x299F31D0_A4093822            # Random123's pi key words as one u64
COUNTER = (0x13198A2E_243F6A88, 0x03707344_85A308D3)   # the pi counter's low and high halves
TYPES = ("uint8", "uint16", "uint32", "uint64", "int32", "float32")
SHORT = {"uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "int8": "s8", "int16": "s16",
         "int32": "s32", "int64": "s64", "float16": "f16", "float32": "f32", "float64": "f64"}
RULE_PHILOX = "rngcheck.stablehlo rules 4-7 (PHILOX)"
RULE_THREEFRY = "rngcheck.stablehlo rules 4, 8-11 (THREE_FRY)"


@dataclass(frozen=True, kw_only=True)
class Case(CaseHeader):
    """One program: rng_algorithm, the u64 state, the output's shape and element type, and what is expected."""

    axis = "stablehlo"
    layer = "StableHLO"

    algorithm: str
    state: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: str
    procedure: str = RNG_BIT_GENERATOR
    expected_words: tuple[int, ...] | None = None     # explicit expectation (the vectors file)
    expected_state: tuple[int, ...] | None = None
    expected_rule: str | None = None                  # a program the rules forbid: the rule it breaks

    def part(self) -> str:
        return f"{self.algorithm} {self.dtype}"

    def size(self) -> int:
        return math.prod(self.shape)

    def memory_needed(self) -> int:
        # the backend's output whole, and the reference compared with it chunk by chunk (measured: 1.1 times
        # the output at 2^24 u64 elements, on the reference backend)
        return 2 * self.size() * S.Call(self.algorithm, (0,), (), self.dtype).bits // 8

    def inputs(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "state": [f"0x{int(w):016x}" for w in self.state],
                "shape": list(self.shape), "dtype": self.dtype}

    def reproduction(self) -> dict[str, Any] | None:
        return {"algorithm": self.algorithm, "state": ",".join(f"0x{int(w):016x}" for w in self.state),
                "shape": ",".join(map(str, self.shape)), "dtype": self.dtype}

    def repro_arguments(self) -> list[str] | None:
        record = self.reproduction()
        assert record is not None
        return ["--state", record["state"], "--sizes", record["shape"], "--algorithm", self.algorithm,
                "--dtype", self.dtype]


def state_of(words: int, low: int = COUNTER[0], high: int = COUNTER[1], key: int = KEY) -> tuple[int, ...]:
    return (key, low) if words == 2 else (key, low, high)


def case(case_id: str, category: str, description: str, algorithm: str, state, shape, dtype: str, *,
         rule: str = "", profiles=None, expected_rule: str | None = None, source: str = S.SOURCE,
         expected=None, expected_state=None) -> Case:
    rule = rule or (RULE_PHILOX if S.Call(algorithm, (0,), (), dtype).resolved == S.PHILOX else RULE_THREEFRY)
    extra = {"profiles": profiles} if profiles is not None else {}
    return Case(id=f"rng-bit-generator/{case_id}", category=category, description=description, rule=rule,
                source=source, state=tuple(int(w) for w in state), shape=tuple(shape), dtype=dtype,
                algorithm=algorithm, expected_rule=expected_rule, expected_words=expected,
                expected_state=expected_state, **extra)


def _name(state, shape, dtype) -> str:
    return f"u64x{len(state)}-{SHORT[dtype]}-" + ("x".join(map(str, shape)) or "scalar")


def algorithm_cases() -> list[Case]:
    cases = []
    for words in (2, 3):
        for dtype in TYPES:
            for shape in ((7,), (2, 3, 5)):
                state = state_of(words)
                cases.append(case(f"philox/{_name(state, shape, dtype)}", "rbg-philox",
                                  f"PHILOX, a u64[{words}] state, {dtype} {list(shape)}", S.PHILOX, state, shape,
                                  dtype))
    shapes: tuple[tuple[int, ...], ...] = ((7,), (3, 4))
    for dtype in TYPES:
        for sizes in shapes:
            state = state_of(2)
            cases.append(case(f"threefry/{_name(state, sizes, dtype)}", "rbg-threefry",
                              f"THREE_FRY, {dtype} {list(sizes)}", S.THREE_FRY, state, sizes, dtype))
    for words in (2, 3):
        state = state_of(words)
        cases.append(case(f"default/{_name(state, (9,), 'uint32')}", "rbg-default",
                          f"DEFAULT with a u64[{words}] state (implementation-defined; XLA: PHILOX)",
                          S.DEFAULT, state, (9,), "uint32"))
    return cases


def carry_cases() -> list[Case]:
    cases = []
    edges = {"2pow32": ((1 << 32) - 3, COUNTER[1]), "2pow64": ((1 << 64) - 3, COUNTER[1]),
             "2pow128": ((1 << 64) - 3, (1 << 64) - 1)}
    for name, (low, high) in edges.items():
        for words in (3, 2):
            if words == 2 and name == "2pow128":
                continue   # a u64[2] counter's high half is the key
            for dtype, shape in (("uint32", (5, 5)), ("uint64", (13,))):
                state = state_of(words, low, high)
                cases.append(case(f"carry/philox-{name}-{_name(state, shape, dtype)}", "rbg-carry",
                                  f"PHILOX counter 3 blocks below {name.replace('pow', '^')}: blocks and the new "
                                  f"state carry", S.PHILOX, state, shape, dtype))
    for name, low in (("2pow32", (1 << 32) - 3), ("2pow64", (1 << 64) - 3)):
        for dtype, shape in (("uint32", (4, 5)), ("uint64", (7,))):
            state = state_of(2, low)
            cases.append(case(f"carry/threefry-{name}-{_name(state, shape, dtype)}", "rbg-carry",
                              f"THREE_FRY counter 3 below {name.replace('pow', '^')}: the 64-bit counter "
                              f"carries its low word / wraps", S.THREE_FRY, state, shape, dtype))
    return cases


def shape_cases() -> list[Case]:
    cases = []
    shapes = [(), (1,), (3,), (5,), (0,), (2, 0, 3), (3, 5), (5, 3), (3, 1, 5), (2, 3, 4), (1, 1, 1, 1, 7),
              (4097,)]
    for algorithm, words in ((S.PHILOX, 3), (S.THREE_FRY, 2)):
        for shape in shapes:
            state = state_of(words)
            label = "philox" if algorithm == S.PHILOX else "threefry"
            cases.append(case(f"shape/{label}-{_name(state, shape, 'uint32')}", "rbg-shape",
                              f"{algorithm}, shape {list(shape)} (rank {len(shape)})", algorithm, state, shape,
                              "uint32"))
        state = state_of(words)
        label = "philox" if algorithm == S.PHILOX else "threefry"
        cases.append(case(f"shape/{label}-{_name(state, (3, 1 << 16), 'uint16')}-large", "rbg-shape",
                          f"{algorithm}, 3 x 2^16 uint16 elements, compared chunk by chunk", algorithm, state,
                          (3, 1 << 16), "uint16", profiles=FULL_ONLY))
    return cases


def validation_cases() -> list[Case]:
    def reject(name, algorithm, state, description):
        return case(f"validation/{name}", "rbg-validation", description, algorithm, state, (4,), "uint32",
                    rule=f"state-size: {S.RULES['state-size']}", expected_rule="state-size", source=S.SPEC)

    return [reject("threefry-u64x3", S.THREE_FRY, state_of(3), "THREE_FRY with a u64[3] state"),
            reject("philox-u64x4", S.PHILOX, (KEY, 1, 2, 3), "PHILOX with a u64[4] state"),
            reject("philox-u64x1", S.PHILOX, (KEY,), "PHILOX with a u64[1] state")]


def vector_cases() -> list[Case]:
    return [case(f"vectors/{v.id}", "rbg-vectors", v.description, v.algorithm, v.state, v.shape, v.dtype,
                 source=f"{v.source} (rngcheck/vectors/stablehlo.json)", expected=v.expected,
                 expected_state=v.new_state) for v in stablehlo_vectors()]


def stablehlo_cases() -> list[Case]:
    return vector_cases() + algorithm_cases() + carry_cases() + shape_cases() + validation_cases()
