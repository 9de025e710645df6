"""StableHLO's rng_bit_generator: the spec (rngcheck.stablehlo) against XLA's measured answers, its
vectors file, its cases on the reference, XLA and IREE (through the worker isolation), IREE's
divergences named, the exec protocol's OPER/BITS, and the operator axis without a per-operator branch."""

from pathlib import Path

import numpy as np
import pytest

from helpers import isolated_backend, require
from rngcheck import stablehlo as S
from rngcheck.backends import exec_protocol as P
from rngcheck.conformance import axes
from rngcheck.conformance.directml import check
from rngcheck.conformance.rng_bit_generator import cases as stablehlo_cases
from rngcheck.conformance.rng_bit_generator import diagnosis as stablehlo_diagnosis
from rngcheck.errors import Rejected
from rngcheck.vectors import STABLEHLO_FILE, data_path, generate, stablehlo_vectors

ROOT = Path(__file__).resolve().parents[1]
# Measured with jaxlib 0.10.2's CPU client (rngcheck.backends.xla_backend) on the state whose u32 words
# are 1, 2, 3, 4, 5, 6: independent of rngcheck's spec, which must reproduce them.
WORDS = np.arange(1, 7, dtype=np.uint32).view(np.uint64)
XLA_MEASURED = [
    ("PHILOX", 3, (7,), "uint32", [1, 2, 5, 4, 5, 6],
     [2287000220, 3243900748, 1970613706, 2103475449, 159323540, 3056764129, 2546119331]),
    ("PHILOX", 2, (7,), "uint32", [1, 2, 5, 4],
     [512747620, 1298009047, 1267190206, 761827841, 1383286907, 1639995030, 2756207988]),
    ("PHILOX", 2, (7,), "uint8", [1, 2, 5, 4], [100, 215, 190, 1, 123, 150, 116]),
    ("PHILOX", 2, (7,), "uint64", [1, 2, 7, 4],
     [5574906407289874532, 3272025663544478142, 7043725020835825787, 9254853183523022196,
      14929923424383677111, 1344020101939626768, 13656933315296870235]),
    ("THREE_FRY", 2, (7,), "uint32", [1, 2, 7, 4],
     [1576285164, 2249660814, 740599976, 2425682526, 2436392515, 1497962777, 1335360347]),
    ("THREE_FRY", 2, (7,), "uint64", [1, 2, 10, 4],
     [9662219624799024108, 10418227120389269672, 6433701140276733507, 9707638358252452699,
      16980371968582007637, 8689340136409362794, 7556899152436148176]),
    ("DEFAULT", 3, (7,), "uint32", [1, 2, 5, 4, 5, 6],
     [2287000220, 3243900748, 1970613706, 2103475449, 159323540, 3056764129, 2546119331]),
]


@pytest.mark.parametrize("algorithm, words, shape, dtype, state, output", XLA_MEASURED)
def test_the_spec_gives_xla_s_measured_answers(algorithm, words, shape, dtype, state, output):
    new, out = S.rng_bit_generator(algorithm, WORDS[:words], shape, dtype)
    assert new.view(np.uint32).tolist() == state
    assert out.tolist() == output and out.dtype == np.dtype(dtype)


def test_philox_with_three_words_is_directml_s_operator():
    from rngcheck import counter, reference

    call = S.validate("PHILOX", np.array([0x299F31D0_A4093822, (1 << 64) - 3, 7], dtype=np.uint64), (50,), "uint32")
    state6 = counter.make_state((7 << 64) | ((1 << 64) - 3), (0xA4093822, 0x299F31D0))
    assert np.array_equal(S.words(call, 0, 50), reference.words(state6, 0, 50))
    assert S.new_state(call).tolist() == [0x299F31D0_A4093822, 10, 8]   # 13 blocks, carried into state[2]


def test_threefry_splits_the_first_even_dimension_else_the_largest():
    assert S.split_dimension((3, 4)) == 1 and S.halved_shape((3, 4)) == (3, 2)
    assert S.split_dimension((3, 5, 5)) == 1 and S.split_dimension((7, 3)) == 0
    assert S.split_dimension(()) == -1 and S.halved_shape(()) == (1,)
    call = S.validate("THREE_FRY", WORDS[:2], (3, 4), "uint32")
    out = S.words(call, 0, 12).reshape(3, 4)
    # elements (r, 2h) and (r, 2h+1) are lanes 0 and 1 of one block: the block of (0, 0) and (0, 1) is counter + 0
    first = S._threefry(np.array([WORDS[1]], dtype=np.uint64), call)[0]
    assert out[0, :2].tolist() == first.tolist()
    assert int(S.new_state(call)[1]) == int(WORDS[1]) + 6


def test_chunks_give_the_whole_output_in_bounded_pieces():
    for algorithm, words in (("PHILOX", 3), ("THREE_FRY", 2)):
        call = S.validate(algorithm, WORDS[:words], (5, 7, 3), "uint16")
        whole = S.words(call, 0, call.element_count)
        pieces = np.concatenate([w for _, w in S.chunks(call, 17)])
        assert np.array_equal(whole, pieces)


@pytest.mark.parametrize("algorithm, state, shape, dtype, rule", [
    ("THREE_FRY", WORDS[:3], (4,), "uint32", "state-size"), ("PHILOX", WORDS[:1], (4,), "uint32", "state-size"),
    ("PHILOX", WORDS[:3].astype(np.uint32), (4,), "uint32", "state-type"),
    ("RANDOM", WORDS[:2], (4,), "uint32", "algorithm"),
    ("PHILOX", WORDS[:2], (4,), "bool", "element-type"), ("PHILOX", WORDS[:2], (-1,), "uint32", "shape")])
def test_the_description_rules_refuse_with_their_rule(algorithm, state, shape, dtype, rule):
    with pytest.raises(Rejected) as refused:
        S.rng_bit_generator(algorithm, state, shape, dtype)
    assert refused.value.rule == rule and rule in S.RULES


def test_the_vectors_file_is_the_generator_s_output():
    assert data_path(STABLEHLO_FILE).read_text(encoding="utf-8") == generate.documents()[STABLEHLO_FILE]
    vectors = stablehlo_vectors()
    assert {v.algorithm for v in vectors} == set(S.ALGORITHMS)
    assert {len(v.state) for v in vectors if v.algorithm == "PHILOX"} == {2, 3}


def _run_all(backend, profile="quick"):
    return {case.id: axes.run_case(backend, case) for case in axes.cases_for(profile)
            if case.procedure == stablehlo_cases.RNG_BIT_GENERATOR}


def test_every_case_passes_on_the_reference_through_the_worker():
    backend = isolated_backend("numpy")
    try:
        outcomes = _run_all(backend)
    finally:
        backend.close()
    assert len(outcomes) > 80
    assert {o.status for o in outcomes.values()} == {check.PASSED}, \
        [(i, o.message) for i, o in outcomes.items() if o.status != check.PASSED][:3]


def test_every_case_passes_on_xla():
    backend = isolated_backend("rngcheck.backends.xla_backend:XlaBackend", "jax")
    try:
        outcomes = _run_all(backend)
    finally:
        backend.close()
    bad = [(i, o.message) for i, o in outcomes.items() if o.status != check.PASSED]
    assert not bad, bad[:3]


def test_iree_s_divergences_are_named():
    require("iree.compiler", load=False)
    backend = isolated_backend("rngcheck.backends.iree_backend:IreeBackend", "iree.runtime")
    chosen = [c for c in axes.cases_for("quick") if c.procedure == stablehlo_cases.RNG_BIT_GENERATOR
              and (c.category in ("rbg-carry", "rbg-default") or c.id.endswith("u64x3-u32-7")
                   or c.id.endswith("u64x2-u32-7"))]
    try:
        outcomes = {case.id: axes.run_case(backend, case) for case in chosen}
    finally:
        backend.close()
    found = {i: (o.diagnosis or {}).get("id") if o.status != check.PASSED else "passed" for i, o in outcomes.items()}
    assert found["rng-bit-generator/philox/u64x3-u32-7"] == "key-in-counter-high+third-state-word-ignored"
    assert found["rng-bit-generator/philox/u64x2-u32-7"] == "passed"
    assert found["rng-bit-generator/threefry/u64x2-u32-7"] == "passed"
    assert found["rng-bit-generator/carry/philox-2pow64-u64x2-u32-5x5"] == "counter-64-no-carry"
    assert found["rng-bit-generator/carry/philox-2pow64-u64x3-u32-5x5"] == \
        "key-in-counter-high+counter-64-no-carry+third-state-word-ignored"
    assert found["rng-bit-generator/default/u64x2-u32-9"] == "passed"
    assert all(o.diagnosis.get("implementation_defined") for o in outcomes.values()
               if o.status != check.PASSED and o.diagnosis["id"] in found.values()
               and o.diagnosis["id"] not in ("unknown", "rejects-valid"))


class _Model:
    """An in-process backend running the divergence models (or the spec): the diagnosis must name them."""

    operators = ("stablehlo",)
    validates = True

    def __init__(self, flags):
        self.flags = frozenset(flags)

    def rng_bit_generator(self, algorithm, state, shape, dtype):
        call = S.validate(algorithm, state, shape, dtype)
        new, out = stablehlo_diagnosis._philox_variant(call, call.element_count, self.flags)
        return np.array(new, dtype=np.uint64), out.view(np.dtype(dtype)).reshape(shape)


@pytest.mark.parametrize("flags", [("counter-64-no-carry",), ("key-in-counter-high",), ("third-state-word-ignored",),
                                   ("key-in-counter-high", "counter-64-no-carry", "third-state-word-ignored")])
def test_the_diagnosis_names_each_divergence_and_the_spec_passes(flags):
    case = next(c for c in axes.cases_for("quick")
                if c.id == "rng-bit-generator/carry/philox-2pow128-u64x3-u32-5x5")
    outcome = axes.run_case(_Model(flags), case)
    assert outcome.status == check.FAILED and outcome.diagnosis["divergences"] == list(flags)
    assert outcome.reproduce["algorithm"] == "PHILOX"
    assert axes.run_case(_Model(()), case).status == check.PASSED
    with pytest.raises(KeyError, match="not registered"):
        stablehlo_diagnosis.divergence(("wrong-id",))


def test_a_backend_without_the_operator_is_not_applicable_and_the_xla_backend_skips_directml():
    from rngcheck.backends.reference import NumpyBackend

    class WordsOnly(NumpyBackend):
        operators = ()

    case = next(c for c in axes.cases_for("quick") if c.procedure == stablehlo_cases.RNG_BIT_GENERATOR)
    assert axes.run_case(WordsOnly(), case).status == check.NOT_APPLICABLE


def test_oper_and_bits_round_trip():
    payload = P.encode_operate("stablehlo", {"algorithm": "PHILOX", "shape": [2, 3], "dtype": "uint16"}, WORDS[:3])
    operator, arguments, state = P.decode_operate(payload)
    assert operator == "stablehlo" and arguments["shape"] == [2, 3] and state.tolist() == WORDS[:3].tolist()
    new, out = P.decode_bits(P.encode_bits(WORDS[:2], np.arange(6, dtype=np.uint16)))
    assert new.dtype == np.uint64 and out.dtype == np.uint16 and out.tolist() == list(range(6))
    with pytest.raises(P.ProtocolError):
        P.decode_bits(P.encode_bits(WORDS[:2], np.arange(6, dtype=np.uint16))[:-1])


def test_every_case_belongs_to_its_axis_its_procedure_and_its_category_too():
    """The axes are data (rngcheck.conformance.axes): a case's class names its axis, and its procedure
    and category are that axis's (tests/test_layers.py: no shared module names an axis)."""
    assert list(axes.AXES) == ["directml", "numbers", "stablehlo", "known-answers", "properties"]
    for case in axes.all_cases():
        axis = axes.axis_of(case)
        assert case.procedure in axis.procedures, case.id
        assert case.category in axis.categories, case.id
        assert axes.of_category(case.category) is axis, case.id


def test_a_run_with_divergences_holds_to_the_result_and_journal_schemas(tmp_path):
    """u64 states, 8- to 64-bit elements and 64-bit ThreeFry counters fit the published schemas."""
    from rngcheck.conformance.runner import NamedBackend, RunOptions, run
    from rngcheck.results import schema

    chosen = [c for c in axes.cases_for("quick") if c.procedure == stablehlo_cases.RNG_BIT_GENERATOR
              and c.category in ("rbg-carry", "rbg-validation", "rbg-threefry")]
    document = run([NamedBackend("model", _Model(("key-in-counter-high", "counter-64-no-carry")))],
                   RunOptions(profile="quick", cases=chosen))
    assert {r["status"] for r in document["results"]} >= {"passed", "failed"}
    assert any(r["mismatches"] and len(r["mismatches"][0]["expected"]) == 18 for r in document["results"])
    schema.validate(document, "rngcheck-result")
    for result in document["results"]:
        schema.validate({"result": result}, "rngcheck-journal")


@pytest.mark.parametrize("extra, line", [
    (["--dtype", "bogus"], "--dtype: output element type 'bogus'"),
    (["--sizes", "-4"], "--sizes:"),
])
def test_repro_refuses_a_bad_element_type_or_shape_in_one_line(capsys, extra, line):
    from rngcheck import cli

    argv = ["repro", "--backend", "numpy", "--algorithm", "PHILOX", "--state", "0x1,0x2", "--sizes", "4", *extra]
    assert cli.main(argv) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert line in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_repro_of_a_state_of_the_wrong_size_reproduces_the_validation_case(capsys):
    """A u64[1] PHILOX state breaks rule state-size: the repro expects a refusal (as the validation case
    whose reproduce line it is), so the reference's refusal passes instead of reading as rejects-valid."""
    from rngcheck import cli

    argv = ["repro", "--backend", "numpy", "--algorithm", "PHILOX", "--state", "0x1", "--sizes", "4"]
    assert cli.main(argv) == cli.EXIT_PASS, capsys.readouterr().out
