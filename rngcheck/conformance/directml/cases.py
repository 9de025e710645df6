"""DirectML's DML_RANDOM_GENERATOR: its cases, as data. Each has a stable id, a description and its rule.

Families: kat, vectors, mapping, counter, key, layout, state, validation, property, scale (see
docs, "What the suite checks"). A case's expectation is explicit (from a vector file) or, by
default, the reference model's answer, computed when the case is checked
(rngcheck.conformance.directml.check).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import counter, layout
from ...description import FEATURE_LEVEL_3_0, FEATURE_LEVEL_4_0, RULES
from ...vectors import kat_vectors, operator_vectors
from ..case import ALL, FULL_ONLY, HUGE, PROFILES  # noqa: F401  (the profiles, as the cases name them)
from ..case import Case as CaseHeader

DML_PAGE = "DirectML DML_RANDOM_GENERATOR_OPERATOR_DESC"
STRIDES_PAGE = "DirectML 'Using strides to express padding and memory layout'"
BUFFER_DESC = "DirectML DML_BUFFER_TENSOR_DESC / DMLCalcBufferTensorSize"
RULE_MAPPING = "element i is lane i mod 4 of Philox4x32-10(counter + floor(i/4) mod 2^128, key)"
RULE_COUNTER = "output counter = input counter + ceil(n/4) mod 2^128; key unchanged"
RULE_LAYOUT = "element i is written at offset sum(coordinate_d * stride_d); nothing else is written"
RULE_ALIASING = "what an output whose elements alias does is implementation-defined"
RULE_PURE = "the operator is a pure function of the input state: no side effects, no global state"

# Procedures: how a case is run and judged (rngcheck.conformance.directml.check).
EXECUTE = "execute"      # one execution; words, state, guards, input state
REPEAT = "repeat"        # the same execution twice, another in between: identical results
CHAIN = "chain"          # executions chained through the returned state == one execution
REJECT = "reject"        # an invalid description: must be refused when the backend validates
ALIAS = "alias"          # aliasing strides: what the backend did is reported (implementation-defined)
PROPERTY = "property"    # hypothesis: random descriptions against the reference, shrunk on failure
# The procedures whose case is one description ``rngcheck repro`` can rerun; a property case
# reproduces through the description its search found (rngcheck.conformance.directml.property).
DESCRIPTION_PROCEDURES = (EXECUTE, REPEAT, CHAIN, REJECT, ALIAS)


def hex_word(value) -> str:
    return f"0x{int(value) & 0xFFFFFFFF:08x}"


@dataclass(frozen=True, kw_only=True)
class Case(CaseHeader):
    """One call of the operator: a state, sizes, strides, a feature level, and what is expected."""

    axis = "directml"
    layer = "the DirectML operator"

    state: tuple[int, ...] = (0, 0, 0, 0, 0, 0)
    sizes: tuple[int, ...] = (4,)
    strides: tuple[int, ...] | None = None
    feature_level: tuple[int, int] = FEATURE_LEVEL_4_0
    output_state: bool | tuple[int, ...] = True
    procedure: str = EXECUTE
    expected_words: tuple[int, ...] | None = None     # explicit expectation (vector files)
    expected_sha256: str | None = None
    expected_state: tuple[int, ...] | None = None
    expected_rule: str | None = None                  # REJECT: the rule that is broken
    buffer_elements: int | None = None                # override of the buffer's tensor part
    state_shape: tuple[int, ...] | None = None        # override of the state array's shape
    state_dtype: str = "uint32"
    output_dtype: str = "uint32"
    chain: tuple[tuple[int, ...], ...] = ()           # CHAIN: sizes of each execution
    examples: int = 0                                 # PROPERTY: hypothesis examples
    only_if_validating: str = ""                      # REJECT: why it is not run on other backends

    @property
    def element_count(self) -> int:
        return layout.element_count(self.sizes)

    def shape_of_state(self) -> tuple[int, ...]:
        if self.state_shape is not None:
            return self.state_shape
        return (1, 1, 1, 6) if self.feature_level == FEATURE_LEVEL_3_0 else (6,)

    def size(self) -> int:
        """The elements of the call (a property case has no one call: 0, its found description says)."""
        return 0 if self.procedure == PROPERTY else self.element_count

    def inputs(self) -> dict[str, Any]:
        output_state = self.output_state if isinstance(self.output_state, bool) else list(self.output_state)
        words = counter.as_state_words(self.state)   # (None: a validation case's state of another shape)
        return {"state": [f"0x{int(w):08x}" for w in self.state], "sizes": list(self.sizes),
                "strides": None if self.strides is None else list(self.strides),
                "feature_level": ".".join(map(str, self.feature_level)), "output_state": output_state,
                "counter": None if words is None else counter.counter_text(counter.counter_of(words), "'")}

    def reproduction(self) -> dict[str, Any] | None:
        if self.procedure not in DESCRIPTION_PROCEDURES:
            return None
        return {"state": ",".join(hex_word(w) for w in self.state), "sizes": ",".join(map(str, self.sizes)),
                "strides": None if self.strides is None else ",".join(map(str, self.strides)),
                "feature_level": ".".join(map(str, self.feature_level))}

    def repro_arguments(self) -> list[str] | None:
        record = self.reproduction()
        if record is None:
            return None
        words = ["--state", record["state"], "--sizes", record["sizes"]]
        if record["strides"]:
            words += ["--strides", record["strides"]]
        return words + ["--feature-level", record["feature_level"]]

    def required_on(self, backend) -> bool:
        """A description the rules forbid must be refused only by a backend that validates; the
        guards, the input state and the returned state are checked on every case."""
        if self.procedure == REJECT:
            return bool(getattr(backend, "validates", False))
        return True

    def refused(self) -> tuple[str, str | None]:
        if len(self.sizes) != 4 and self.feature_level >= FEATURE_LEVEL_4_0:
            return "rank-4-only", None
        return "rejects-valid", None

    def describe_call(self) -> str:
        level = ".".join(map(str, self.feature_level))
        return (f"state {[hex_word(w) for w in self.state]}, sizes {list(self.sizes)}, "
                f"strides {None if self.strides is None else list(self.strides)}, feature level {level}")


def _level(sizes) -> tuple[int, int]:
    """Feature level 3.0 for 4-D tensors (the form every level accepts), else 4.0."""
    return FEATURE_LEVEL_3_0 if len(sizes) == 4 else FEATURE_LEVEL_4_0


PI_STATE = counter.make_state(0x03707344_13198A2E_85A308D3_243F6A88, (0xA4093822, 0x299F31D0))
BASE_STATE = tuple(int(w) for w in PI_STATE)


def _state(counter_value: int, key=(0xA4093822, 0x299F31D0)) -> tuple[int, ...]:
    return tuple(int(w) for w in counter.make_state(counter_value, key))


def kat_cases() -> list[Case]:
    cases = []
    for v in kat_vectors(generator="philox4x32"):
        if v.rounds != 10:
            continue  # the 7-round lines test the reference's Philox itself (tests/)
        cases.append(Case(
            id=f"kat/{v.id}",
            category="kat",
            description=f"Random123 known answer: {v.line.split(None, 2)[2].split('   ')[0]}",
            rule=RULE_MAPPING, source=v.source,
            state=v.counter + v.key, sizes=(4,), expected_words=v.expected,
        ))
    return cases


def vector_cases() -> list[Case]:
    cases = []
    for v in operator_vectors():
        cases.append(Case(
            id=f"vectors/{v.id}", category="vectors",
            description=v.description, rule=v.rule, source=v.source + " (rngcheck/vectors/operator.json)",
            state=v.state, sizes=v.sizes, strides=v.strides, feature_level=v.feature_level,
            expected_words=v.expected_words, expected_sha256=v.expected_sha256,
            expected_state=v.expected_state, note=v.note,
        ))
    return cases


def mapping_cases() -> list[Case]:
    cases = []
    counts = sorted(set(range(1, 10)) | {4 * k + d for k in (4, 16, 250) for d in (-1, 1)}
                    | {1 << p for p in range(4, 13, 2)})
    for n in counts:
        cases.append(Case(
            id=f"mapping/elements-{n}", category="mapping",
            description=f"{n} elements, packed 1-D: element, lane and block",
            rule=RULE_MAPPING, source=DML_PAGE, state=BASE_STATE, sizes=(n,)))
    for rank in range(1, 9):
        sizes = tuple([2, 3, 1, 2, 1, 3, 2, 2][:rank])
        if rank == 4:
            sizes = (2, 3, 1, 5)
        cases.append(Case(
            id=f"mapping/rank-{rank}", category="mapping",
            description=f"rank {rank}, sizes {list(sizes)}: row-major order over all dimensions",
            rule=RULE_MAPPING, source=DML_PAGE, state=BASE_STATE, sizes=sizes, feature_level=_level(sizes)))
    return cases


def counter_cases() -> list[Case]:
    cases = []
    for n in (1, 3, 4, 5, 7, 8, 9, 4097):
        cases.append(Case(
            id=f"counter/advance-{n}", category="counter",
            description=f"{n} elements advance the counter by ceil({n}/4) = {counter.blocks_for(n)}",
            rule=RULE_COUNTER, source=DML_PAGE + ", Remarks", state=BASE_STATE, sizes=(n,)))
    boundaries = {"word0": 32, "word1": 64, "word2": 96, "word3-wrap": 128}
    for name, bits in boundaries.items():
        edge = (1 << bits) - 1
        cases.append(Case(
            id=f"counter/carry-{name}-between", category="counter",
            description=f"counter 2^{bits}-1 plus 4 elements: the output state carries out of {name}",
            rule=RULE_COUNTER, source=DML_PAGE + ", Remarks", state=_state(edge), sizes=(4,)))
        cases.append(Case(
            id=f"counter/carry-{name}-inside", category="counter",
            description=f"counter 2^{bits}-3, 2x3x4 elements: blocks inside one execution straddle the carry",
            rule=RULE_MAPPING, source=DML_PAGE, state=_state(edge - 2), sizes=(2, 3, 4)))
    cases.append(Case(
        id="counter/dml-example-324855", category="counter",
        description="3x3x20x7219 from 'HelloFromSeattle' advances by 324,855 (page's printed result is wrong)",
        rule=RULE_COUNTER, source=DML_PAGE + ", Remarks (errata: see note)",
        state=_state(0x48656C6C_6F46726F_6D536561_74746C65), sizes=(3, 3, 20, 7219),
        feature_level=FEATURE_LEVEL_3_0,
        expected_state=_state(0x48656C6C_6F46726F_6D536561_74746C65 + 324_855),
        note=("The DirectML page prints 0x48656c6c'6f46726f'6d536561'746f776e, which is the counter minus "
              "324,855; the rule gives 0x48656c6c'6f46726f'6d536561'7479615c.")))
    return cases


def key_cases() -> list[Case]:
    keys = {"zero": (0, 0), "ones": (0xFFFFFFFF, 0xFFFFFFFF), "low-only": (0x9E3779B9, 0),
            "high-only": (0, 0x9E3779B9), "distinct": (0x01234567, 0x89ABCDEF)}
    return [Case(id=f"key/{name}", category="key",
                 description=f"key k0=0x{k0:08x} (word 4), k1=0x{k1:08x} (word 5): word order and extremes",
                 rule="words 4 and 5 are the 64-bit key, word 4 the low half (k0)", source=DML_PAGE,
                 state=_state(0x1F, (k0, k1)), sizes=(3, 4), feature_level=FEATURE_LEVEL_4_0)
            for name, (k0, k1) in keys.items()]


def layout_cases() -> list[Case]:
    specs = [
        ("packed-implicit", (2, 3, 4, 5), None, "4-D packed, strides absent"),
        ("packed-explicit", (2, 3, 4, 5), (60, 20, 5, 1), "4-D packed, explicit strides"),
        ("padded-rows", (1, 1, 2, 3), (6, 6, 5, 1), "2x3 with row stride 5 (padding)"),
        ("padded-all", (2, 3, 3, 5), (120, 36, 11, 2), "every dimension padded, element stride 2"),
        ("column-major", (1, 1, 3, 5), (15, 15, 1, 3), "column-major 3x5"),
        ("nhwc", (2, 3, 4, 5), (60, 1, 15, 3), "NCHW sizes stored as NHWC"),
        ("reversed-dims", (3, 4, 5), (1, 3, 12), "3-D with dimension order reversed"),
        ("permuted-padded", (4, 5, 6), (7, 41, 1), "3-D permuted with padding"),
        ("rank5", (2, 2, 3, 2, 3), None, "5-D packed (NCDHW)"),
        ("rank5-ndhwc", (2, 3, 2, 2, 3), (36, 1, 18, 9, 3), "5-D stored as NDHWC"),
        ("rank8", (2, 1, 2, 3, 1, 2, 1, 3), None, "8-D packed"),
        ("rank8-strided", (2, 2, 1, 2, 1, 2, 1, 2), (1, 2, 64, 4, 64, 8, 64, 16), "8-D reversed strides, sizes of 1"),
        ("ones", (1, 1, 1, 1), None, "a single element, 4-D"),
        ("ones-middle", (3, 1, 1, 5), (5, 999, 7, 1), "sizes of 1 with arbitrary strides"),
        ("big-row", (1, 1, 1, 4099), (4099, 4099, 4099, 1), "one long row"),
        ("seattle-shape", (3, 3, 20, 7219), None, "the 3x3x20x7219 shape from the DirectML page"),
        ("seattle-shape-padded", (3, 3, 20, 7219), (3 * 20 * 7232, 20 * 7232, 7232, 1),
         "3x3x20x7219 with rows padded to 7232"),
    ]
    cases = []
    for name, sizes, strides, description in specs:
        big = layout.element_count(sizes) > 100_000
        cases.append(Case(
            id=f"layout/{name}", category="layout", description=description, rule=RULE_LAYOUT,
            source=STRIDES_PAGE, state=BASE_STATE, sizes=sizes, strides=strides,
            feature_level=_level(sizes), profiles=FULL_ONLY if big else ALL))
    for name, sizes, strides, description in [
        ("alias-broadcast", (1, 1, 3, 4), (0, 0, 0, 1), "stride 0: three rows share one row of memory"),
        ("alias-overlap", (1, 1, 3, 4), (12, 12, 2, 1), "rows overlap (row stride 2 < row length 4)"),
        ("alias-all", (1, 1, 2, 3), (0, 0, 0, 0), "every element at offset 0"),
    ]:
        cases.append(Case(
            id=f"layout/{name}", category="layout", description=description + " (implementation-defined)",
            rule=RULE_ALIASING, source=STRIDES_PAGE,
            state=BASE_STATE, sizes=sizes, strides=strides, feature_level=FEATURE_LEVEL_3_0, procedure=ALIAS))
    return cases


def state_cases() -> list[Case]:
    return [
        Case(id="state/output-state-omitted", category="state",
             description="OutputStateTensor omitted: the words are the same and nothing is returned",
             rule="OutputStateTensor is optional (_Maybenull_)", source=DML_PAGE,
             state=BASE_STATE, sizes=(2, 5), output_state=False),
        Case(id="state/repeat-pure", category="state",
             description="the same input twice (another execution in between) gives the same output",
             rule=RULE_PURE, source=DML_PAGE, state=BASE_STATE, sizes=(3, 7), procedure=REPEAT),
        Case(id="state/chain-4x", category="state",
             description="four executions of 8, 12, 4, 16 elements chained equal one of 40",
             rule=RULE_COUNTER, source=DML_PAGE + ", Remarks", state=BASE_STATE, sizes=(40,),
             procedure=CHAIN, chain=((8,), (3, 4), (4,), (2, 2, 4))),
        Case(id="state/chain-carry", category="state",
             description="chained executions across the carry out of word 1 equal one execution",
             rule=RULE_COUNTER, source=DML_PAGE + ", Remarks", state=_state((1 << 64) - 3), sizes=(32,),
             procedure=CHAIN, chain=((8,), (8,), (16,))),
        Case(id="state/fl3-state-shape", category="state",
             description="feature level 3.0: state tensors {1,1,1,6}",
             rule="InputStateTensor sizes {1,1,1,6} at feature level 3.0", source=DML_PAGE,
             state=BASE_STATE, sizes=(1, 2, 3, 4), feature_level=FEATURE_LEVEL_3_0),
        Case(id="state/fl4-state-shape-1x6", category="state",
             description="feature level 4.0: state tensor {1,6}",
             rule="InputStateTensor sizes {[1],...,6} at feature level 4.0", source=DML_PAGE + " (4.0 table)",
             state=BASE_STATE, sizes=(5, 3), state_shape=(1, 6)),
    ]


def validation_cases() -> list[Case]:
    def reject(name, rule, description, **kw):
        kw.setdefault("sizes", (2, 4))
        return Case(id=f"validation/{name}", category="validation", description=description,
                    rule=f"{rule}: {RULES[rule]}", source=kw.pop("source", DML_PAGE), state=BASE_STATE,
                    procedure=REJECT, expected_rule=rule, **kw)

    return [
        reject("feature-level-2", "feature-level", "feature level 2.1 (before the operator existed)",
               feature_level=(2, 1), state_shape=(1, 1, 1, 6), sizes=(1, 1, 2, 4)),
        reject("state-int32", "data-type", "InputStateTensor of INT32", state_dtype="int32"),
        reject("output-float32", "data-type", "OutputTensor of FLOAT32", output_dtype="float32"),
        reject("fl3-output-2d", "rank", "feature level 3.0 with a 2-D OutputTensor",
               feature_level=FEATURE_LEVEL_3_0, state_shape=(1, 1, 1, 6)),
        reject("fl3-state-1d", "rank", "feature level 3.0 with a 1-D state",
               feature_level=FEATURE_LEVEL_3_0, state_shape=(6,), sizes=(1, 1, 2, 4)),
        reject("rank-9", "rank", "a 9-D OutputTensor", sizes=(1, 1, 1, 1, 1, 1, 1, 2, 4)),
        reject("rank-0", "rank", "a 0-D OutputTensor", sizes=()),
        reject("state-sizes-2x6", "state-sizes", "state sizes {2,6}", state_shape=(2, 6)),
        reject("state-sizes-6x1", "state-sizes", "state sizes {6,1}", state_shape=(6, 1)),
        reject("fl3-state-sizes", "state-sizes", "feature level 3.0 with state sizes {1,1,6,1}",
               feature_level=FEATURE_LEVEL_3_0, state_shape=(1, 1, 6, 1), sizes=(1, 1, 2, 4)),
        reject("state-mismatch", "state-match", "input state {6}, output state {1,6}", output_state=(1, 6)),
        reject("size-zero", "size-zero", "a dimension of size 0", sizes=(2, 0, 4)),
        reject("too-many-elements", "element-count", "2^32 elements", sizes=(1 << 16, 1 << 16),
               buffer_elements=16, source=BUFFER_DESC, only_if_validating="it would write 16 GiB"),
        reject("stride-count", "stride-count", "three strides for two dimensions", strides=(4, 1, 1),
               source=BUFFER_DESC),
        reject("buffer-too-small", "buffer-size", "a buffer one element short of DMLCalcBufferTensorSize",
               sizes=(2, 3), strides=(5, 1), buffer_elements=7, source=BUFFER_DESC),
        reject("buffer-empty", "buffer-size", "a buffer of 0 elements", sizes=(2, 3), buffer_elements=0,
               source=BUFFER_DESC),
    ]


def property_cases() -> list[Case]:
    return [
        Case(id="property/random-descriptions", category="property",
             description="random states, ranks 1-8, sizes, permuted and padded strides against the reference",
             rule=RULE_MAPPING + "; " + RULE_LAYOUT, source=DML_PAGE, procedure=PROPERTY,
             examples=60, profiles=frozenset({"quick"})),
        Case(id="property/random-descriptions-full", category="property",
             description="as property/random-descriptions, with more examples and larger tensors",
             rule=RULE_MAPPING + "; " + RULE_LAYOUT, source=DML_PAGE, procedure=PROPERTY,
             examples=400, profiles=FULL_ONLY),
    ]


def scale_cases() -> list[Case]:
    return [
        Case(id="scale/2pow26-packed", category="scale",
             description="2^26 elements packed (256 MiB), compared chunk by chunk",
             rule=RULE_MAPPING, source=DML_PAGE, state=_state((1 << 96) - 5), sizes=(1 << 13, 1 << 13),
             profiles=FULL_ONLY),
        Case(id="scale/2pow24-strided", category="scale",
             description="2^24 elements with padded rows and a permutation",
             rule=RULE_LAYOUT, source=STRIDES_PAGE, state=BASE_STATE, sizes=(64, 1024, 256),
             strides=(1, 64 * 260, 64), profiles=FULL_ONLY),
        Case(id="scale/2pow20-quick", category="scale",
             description="2^20 elements packed",
             rule=RULE_MAPPING, source=DML_PAGE, state=BASE_STATE, sizes=(1 << 20,)),
    ]


# ---------------------------------------------------------------------------------- huge (issue 29)
# Past the 2^31 boundary, where kernels that hold an element index or a byte offset in 32 bits break:
# the buffer is held once (in shared memory for a worker) and compared chunk by chunk. Each case's
# counter carries out of words 0, 1 and 2 inside the call in the packed ones (at block 2^27 + 3).
# Which wrap each one shows: int32 element index (wraps at element 2^31): huge-2pow31-plus,
# huge-2pow32-minus-1; uint32 byte offset (wraps at element 2^30, 4 GiB): all three packed ones; a
# 32-bit physical offset (int32 at 2^31): huge-strided-extent, whose offsets pass 2^31 with 32,768 elements.
HUGE_STATE = _state((1 << 96) - (1 << 27) - 3)
HUGE_SPECS = [
    ("huge-2pow31-plus", (3, 5, 143165579), None,
     "2^31 + 37 elements packed (8 GiB): past a signed 32-bit element index and a 32-bit byte offset"),
    ("huge-bytes-past-4gib", ((1 << 30) + (1 << 28) + 3,), None,
     "2^30 + 2^28 + 3 elements packed (5 GiB): past a 32-bit byte offset (4 GiB), below 2^31 elements"),
    ("huge-strided-extent", (2, 4, 4096), ((1 << 31) + (1 << 20) + 7, 1 << 18, 1),
     "2 x 4 x 4096 elements whose outer stride puts the second half past offset 2^31 (an 8 GiB extent)"),
    ("huge-2pow32-minus-1", (3, 5, 17, 257, 65537), None,
     "2^32 - 1 elements packed (16 GiB), the most a tensor may have"),
]


def huge_cases() -> list[Case]:
    return [Case(id=f"scale/{name}", category="scale", description=description,
                 rule=RULE_MAPPING if strides is None else RULE_LAYOUT, source=DML_PAGE if strides is None else
                 STRIDES_PAGE, state=HUGE_STATE, sizes=sizes, strides=strides, feature_level=FEATURE_LEVEL_4_0,
                 profiles=HUGE)
            for name, sizes, strides, description in HUGE_SPECS]


def directml_cases() -> list[Case]:
    """DirectML's DML_RANDOM_GENERATOR: every family's cases, in table order."""
    cases = (kat_cases() + vector_cases() + mapping_cases() + counter_cases() + key_cases() + layout_cases()
             + state_cases() + validation_cases() + property_cases() + scale_cases() + huge_cases())
    for case in cases:
        # Chained executions equal one execution only when every piece but the last fills whole blocks.
        assert all(layout.element_count(s) % 4 == 0 for s in case.chain[:-1]), case.id
        assert not case.chain or sum(layout.element_count(s) for s in case.chain) == case.element_count, case.id
    return cases
