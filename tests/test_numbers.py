"""The numbers layer: the guide's printed numbers reproduced, the tolerance model, bad requests,
and a panel of broken conversions, each caught and named (issue #25)."""

import json
import math

import numpy as np
import pytest

from rngcheck import counter, numbers, reference
from rngcheck.backends.reference import NumpyBackend
from rngcheck.conformance import axes
from rngcheck.conformance.conventions import cases as NC
from rngcheck.conformance.conventions.diagnosis import IDS
from rngcheck.conformance.directml import check
from rngcheck.errors import VectorFileError
from rngcheck.numbers import Request, floats, tolerance
from rngcheck.numbers import tensorflow as tf
from rngcheck.vectors import guide_vectors, parse_numbers


def printed(draw):
    return np.array([np.nan if v is None else v for v in draw.expected], dtype=np.float32)


# ---------------------------------------------------------------------------------- the guide
def guide_draws():
    for vector in guide_vectors():
        draws, _ = tf.run_program(vector.steps)
        for draw in draws:
            if draw.expected is not None:
                yield pytest.param(draw, id=f"{vector.id}-{draw.step}-{draw.label}")


def test_every_number_the_guide_prints_is_a_vector():
    digest_numbers = {"0.43842277", "-0.53439844", "-0.07710262", "1.5658046", "-0.1012345", "-0.2744976",
                      "1.6272374", "2.536413", "0.33186463", "-0.07144657", "-0.79253083", "0.43842274",
                      "-0.87930447", "0.020661574", "-1.5822568", "0.77539235", "1.6307176", "0.6851049",
                      "-0.58519536", "0.5441101", "0.20738031", "0.07356433", "0.04643455", "-1.30159",
                      "-0.95385665"}
    in_vectors = set()
    for vector in guide_vectors():
        for step in vector.steps:
            values = step.expect if step.op != "replicated" else \
                [v for replica in (step.expect or ()) if replica for v in replica]
            if step.op != "state":
                in_vectors |= {repr(float(np.float32(v))) for v in (values or ()) if v is not None}
    assert {repr(float(np.float32(v))) for v in digest_numbers} <= in_vectors


@pytest.mark.parametrize("draw", list(guide_draws()))
def test_the_reference_reproduces_the_guide_within_the_bound(draw):
    expected = printed(draw)
    keep = ~np.isnan(expected)
    distance = tolerance.distances("float32", expected[keep], draw.model[keep])
    assert distance.max() <= numbers.bound(draw.request).ulps, (draw.label, distance)


def test_the_guide_s_states_are_the_model_s():
    checked = 0
    for vector in guide_vectors():
        for _, expected, model in tf.run_program(vector.steps)[1]:
            assert model == expected, vector.id
            checked += 1
    assert checked == 5  # the SavedModel's three, the docstring's two


def test_some_printed_numbers_are_not_the_exact_model_s_and_the_bound_admits_them():
    """The guide prints 0.43842277 and 0.43842274 for the same draw (two devices): the bound must
    admit both, and the exact model is one of them."""
    g = tf.Generator.from_seed(1)
    value = g.normal(())
    assert {tolerance.distances("float32", np.float32([p]), value)[0] for p in (0.43842277, 0.43842274)} == {0, 1}


WRONG = {
    "two-pi-in-float32": lambda r, s: _variant("normal-two-pi-float32", r, s),
    "sin-cos-swapped": lambda r, s: _variant("normal-sin-cos-swapped", r, s),
    "pair-swapped": lambda r, s: _variant("normal-pair-swapped", r, s),
}


def _variant(variant_id, request, state):
    from rngcheck.conformance.conventions.diagnosis import VARIANTS

    (variant,) = [v for v in VARIANTS if v.id == variant_id]
    return variant.predict(request, state)


@pytest.mark.parametrize("wrong", sorted(WRONG))
def test_the_bound_still_fails_a_wrong_conversion_on_the_guide(wrong):
    failed = 0
    for vector in guide_vectors():
        for draw in tf.run_program(vector.steps)[0]:
            if draw.expected is None:
                continue
            expected = printed(draw)
            keep = ~np.isnan(expected)
            predicted = WRONG[wrong](draw.request, draw.state)
            failed += tolerance.distances("float32", expected[keep], predicted[keep]).max() > 4
    assert failed >= 3


def test_the_zero_mantissa_state_really_has_one():
    state = counter.make_state(NC.ZERO_MANTISSA_COUNTER, (0xA4093822, 0x299F31D0))
    assert int(reference.words(state, 2, 1)[0]) & 0x7FFFFF == 0
    values = numbers.draw(Request("tensorflow", "normal", "float32", 4), state)
    # u1 = 1e-7: the pair lies on the circle of radius sqrt(-2 ln 1e-7) = 5.678
    assert np.all(np.isfinite(values)) and math.hypot(values[2], values[3]) > 5.67
    unclamped = _variant("normal-no-epsilon-clamp", Request("tensorflow", "normal", "float32", 4), state)
    assert not np.all(np.isfinite(unclamped))


def test_the_subnormal_state_really_has_a_float16_subnormal():
    state = counter.make_state(NC.SUBNORMAL_HALF_COUNTER, (0xA4093822, 0x299F31D0))
    values = numbers.draw(Request("tensorflow", "normal", "float16", 4), state).astype(np.float32)
    assert 0 < abs(values[2]) < 2 ** -14


def test_stateless_seed_scrambling_uses_all_64_bits_of_both_seeds():
    base = tf.stateless_key_counter((1, 2))
    assert tf.stateless_key_counter((1 + (1 << 32), 2)) != base
    assert tf.stateless_key_counter((1, 2 + (1 << 32))) != base
    key, ctr = base
    assert ctr[:2] == (0, 0)


def test_split_keys_are_the_parent_s_int64_draw_and_advance_it_by_256_per_key():
    g = tf.Generator.from_seed(7)
    keys = [child.key for child in g.split(3)]
    assert g.counter == 7 + 3 * 256
    words = reference.words(counter.make_state(7, 0), 0, 6)
    assert keys == [int(words[2 * i]) | int(words[2 * i + 1]) << 32 for i in range(3)]


# ---------------------------------------------------------------------------------- conversions
def test_tensorflow_uniform_conversions_on_edge_words():
    words = np.array([0, 0x7FFFFF, 0xFFFFFFFF, 0x800000, 1], dtype=np.uint32)
    assert tf.uint32_to_float(words).tolist() == [0.0, 1 - 2 ** -23, 1 - 2 ** -23, 0.0, 2 ** -23]
    assert tf.uint16_to_half(words).tolist() == [0.0, 1 - 2 ** -10, 1 - 2 ** -10, 0.0, 2 ** -10]
    assert floats.as_values(floats.BFLOAT16, tf.uint16_to_bfloat16(words)).tolist() == \
        [0.0, 1 - 2 ** -7, 1 - 2 ** -7, 0.0, 2 ** -7]
    assert tf.uint64_to_double(np.array([0xFFFFFFFF], np.uint32), np.array([0xFFFFFFFF], np.uint32))[0] == 1 - 2 ** -52


def test_integers_over_the_full_ranges_and_in_signed_ranges():
    state = counter.make_state(99, 5)
    words = reference.words(state, 0, 20)
    full32 = numbers.draw(Request("tensorflow", "integers", "int32", 10, -(1 << 31), (1 << 31) - 1), state)
    assert full32.tolist() == [-(1 << 31) + int(w) % 0xFFFFFFFF for w in words[:10]]
    assert len(set(full32.tolist())) > 1  # not OpenVINO's constant -2^31
    full64 = numbers.draw(Request("tensorflow", "integers", "int64", 10, -(1 << 63), (1 << 63) - 1), state)
    bits = [int(words[2 * i]) | int(words[2 * i + 1]) << 32 for i in range(10)]
    assert full64.tolist() == [-(1 << 63) + b % ((1 << 64) - 1) for b in bits]
    small = numbers.draw(Request("tensorflow", "integers", "int32", 10, -5, 10), state)
    assert small.tolist() == [-5 + int(w) % 15 for w in words[:10]]


def test_bfloat16_rounds_to_nearest_even():
    values = np.array([1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 1.0 + 2 ** -8 + 2 ** -20, -0.0, np.inf], dtype=np.float32)
    got = floats.as_values(floats.BFLOAT16, floats.bfloat16_from_float32(values)).tolist()
    assert got[:3] == [1.0, 1.0 + 2 ** -6, 1.0 + 2 ** -7] and got[4] == math.inf


def test_ulp_distance_counts_representable_values_across_zero():
    f = floats.FLOAT32
    tiny = np.float32(2 ** -149)
    assert floats.ulp_distance(f, np.float32([tiny]), np.float32([-tiny]))[0] == 2
    assert floats.ulp_distance(f, np.float32([0.0]), np.float32([-0.0]))[0] == 0
    assert floats.ulp_distance(f, np.float32([1.0]), np.nextafter(np.float32([1.0]), 2))[0] == 1
    assert floats.ulp_distance(f, np.float32([np.nan]), np.float32([1.0]))[0] == floats.INFINITE_ULPS
    d = floats.FLOAT64
    assert floats.ulp_distance(d, np.float64([-1.0]), np.nextafter(np.float64([-1.0]), 0))[0] == 1


# ---------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("fields, words", [
    (dict(kind="integers", dtype="int32", count=4, low=5, high=5), "low < high"),
    (dict(kind="uniform", dtype="float32", count=4, low="a", high=1.0), "finite number"),
    (dict(kind="uniform", dtype="float32", count=4, low=0.0, high=float("nan")), "finite number"),
    (dict(kind="normal", dtype="int32", count=4), "not 'int32'"),
    (dict(kind="gamma", dtype="float32", count=4), "unknown kind"),
    (dict(kind="integers", dtype="int32", count=4, low=0, high=1 << 31), "outside int32"),
    (dict(kind="uniform", dtype="float32", count=-1), "count"),
])
def test_a_bad_request_is_one_line_naming_the_problem(fields, words):
    with pytest.raises(numbers.NumbersError) as raised:
        Request("tensorflow", **fields)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_an_unknown_convention_is_one_line():
    with pytest.raises(numbers.NumbersError, match="unknown convention 'tensorflw'"):
        numbers.draw(Request("tensorflw", "normal", "float32", 2), counter.make_state(0, 0))


def test_a_malformed_numbers_vector_file_is_one_line():
    document = {"vectors": [{"id": "x", "source": "s", "steps": [{"op": "normal", "shape": [2], "expect": ["a"]}]}]}
    with pytest.raises(VectorFileError, match="expect must be a list of numbers"):
        parse_numbers(document)
    document["vectors"][0]["steps"] = [{"op": "fly"}]
    with pytest.raises(VectorFileError, match="op is one of"):
        parse_numbers(json.loads(json.dumps(document)))


# ---------------------------------------------------------------------------------- the panel
class BrokenNumbers(NumpyBackend):
    """The reference, with one conversion broken (written here, independently of the diagnosis)."""

    conventions = ("tensorflow",)
    fault = ""

    def random_numbers(self, request, state):
        r = Request.from_dict(request)
        if r.seed is not None:
            state = tf.stateless_state(r.seed)
        return getattr(self, "_" + self.fault.replace("-", "_"))(r, state)

    def _right(self, r, state):
        return numbers.draw(r, state)

    def _uniform_high_bits(self, r, state):
        if r.kind != "uniform" or r.dtype != "float32":
            return self._right(r, state)
        words = reference.words(state, 0, r.count)
        unit = ((words >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
        return unit if r.low is None else tf.scaled("float32", unit, r.low, r.high)

    def _uniform_open_closed(self, r, state):
        if r.kind != "uniform" or r.dtype != "float32" or r.low is not None:
            return self._right(r, state)
        return (reference.words(state, 0, r.count).astype(np.float64) / 2 ** 32 + 2 ** -33).astype(np.float32)

    def _normal_sin_cos_swapped(self, r, state):
        values = self._right(r, state)
        if r.kind != "normal" or r.dtype != "float32":
            return values
        out = values.copy()
        pairs = values.size // 2 * 2
        out[0:pairs:2], out[1:pairs:2] = values[1:pairs:2], values[0:pairs:2]
        if values.size % 2:  # the last element is the pair's first (sin) value; swapped, the cos one
            last = numbers.draw(Request(r.convention, r.kind, r.dtype, r.count + 1, seed=r.seed), state)
            out[-1] = last[-1]
        return out

    def _integers_range_32_bit(self, r, state):
        if r.kind != "integers" or r.dtype != "int64":
            return self._right(r, state)
        low, high = max(r.low, -(1 << 31)), min(r.high, (1 << 31) - 1)
        words = reference.words(state, 0, r.count)
        return np.array([low + int(w) % (high - low) for w in words], dtype=np.int64)

    def _integers_range_overflow(self, r, state):
        if r.kind == "integers" and r.dtype == "int32" and r.high - r.low >= 1 << 31:
            return np.full(r.count, -(1 << 31), dtype=np.int32)
        return self._right(r, state)

    def _wide_words_swapped(self, r, state):
        if r.kind != "bits" or r.dtype != "uint64":
            return self._right(r, state)
        words = reference.words(state, 0, 2 * r.count).astype(np.uint64)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    def _stream_one_block_late(self, r, state):
        return numbers.draw(r, counter.add_to_counter(state, 1)) if r.seed is None else self._right(r, state)

    def _normal_no_epsilon_clamp(self, r, state):
        values = self._right(r, state)
        if r.kind == "normal" and r.dtype == "float32":
            words = reference.words(state, 0, -(-r.count // 2) * 2)
            zero = np.flatnonzero((words[0::2] & 0x7FFFFF) == 0)
            for pair in zero:
                for i in (2 * pair, 2 * pair + 1):
                    if i < r.count:
                        values[i] = np.float32(np.inf) * np.sign(values[i])
        return values

    def _uniform_64_words_swapped(self, r, state):
        if r.kind != "uniform" or r.dtype != "float64" or r.low is not None:
            return self._right(r, state)
        words = reference.words(state, 0, 2 * r.count)
        return tf.uint64_to_double(words[1::2], words[0::2])

    def _uniform_24_bits(self, r, state):
        if r.kind != "uniform" or r.dtype != "float32" or r.low is not None:
            return self._right(r, state)
        return ((reference.words(state, 0, r.count) >> np.uint32(8)).astype(np.float64) / 2 ** 24).astype(np.float32)

    def _normal_pair_swapped(self, r, state):
        if r.kind != "normal" or r.dtype != "float32":
            return self._right(r, state)
        words = reference.words(state, 0, -(-r.count // 2) * 2)
        swapped = np.empty_like(words)
        swapped[0::2], swapped[1::2] = words[1::2], words[0::2]
        sin, cos = tf.box_muller_float(swapped[0::2], swapped[1::2])
        return tf.interleave(sin, cos)[:r.count]

    def _flush_to_zero(self, r, state):
        values = self._right(r, state)
        if r.dtype != "float16":
            return values
        return np.where(np.abs(values) < np.float16(2 ** -14), np.float16(0), values).astype(np.float16)

    def _normal_narrow_truncated(self, r, state):
        if r.kind != "normal" or r.dtype != "bfloat16":
            return self._right(r, state)
        values = numbers.draw(Request(r.convention, r.kind, "float32", r.count, seed=r.seed), state)
        return (values.view(np.uint32) >> np.uint32(16)).astype(np.uint16)


PANEL = ["uniform-high-bits", "uniform-open-closed", "normal-sin-cos-swapped", "integers-range-32-bit",
         "integers-range-overflow", "wide-words-swapped", "stream-one-block-late", "normal-no-epsilon-clamp",
         "uniform-64-words-swapped", "normal-narrow-truncated", "uniform-24-bits", "normal-pair-swapped",
         "flush-to-zero"]


@pytest.mark.parametrize("fault", PANEL)
def test_each_broken_conversion_is_caught_and_named(fault):
    assert fault in IDS
    backend = type(f"Broken_{fault}", (BrokenNumbers,), {"fault": fault})()
    outcomes = [(case, axes.run_case(backend, case)) for case in axes.cases_for("quick")
                if case.procedure == "numbers"]
    failed = [(case, o) for case, o in outcomes if o.status == check.FAILED]
    assert failed, f"{fault} was not caught"
    named = [o for _, o in failed if o.diagnosis["id"] == fault or fault in o.diagnosis.get("alternatives", [])]
    assert named, [(c.id, o.diagnosis) for c, o in failed]
    assert all(o.numbers and o.numbers["over"] > 0 for _, o in failed)


def test_the_reference_passes_every_numbers_case_and_records_its_histogram():
    backend = NumpyBackend()
    for case in axes.cases_for("quick"):
        if case.procedure != "numbers":
            continue
        outcome = axes.run_case(backend, case)
        assert outcome.status == check.PASSED, (case.id, outcome.message)
        assert sum(outcome.numbers["histogram"].values()) == outcome.numbers["count"] > 0


def test_a_backend_without_numbers_is_not_applicable_never_a_pass():
    class WordsOnly(NumpyBackend):
        conventions = ()

    case = next(c for c in axes.cases_for("quick") if c.category == "normal")
    outcome = axes.run_case(WordsOnly(), case)
    assert outcome.status == check.NOT_APPLICABLE and "not applicable" in outcome.message


def test_numbers_of_the_wrong_dtype_break_the_contract():
    class Doubles(NumpyBackend):
        def random_numbers(self, request, state):
            return super().random_numbers(request, state).astype(np.float64)

    case = next(c for c in axes.cases_for("quick") if c.id == "normal/tensorflow/float32")
    outcome = axes.run_case(Doubles(), case)
    assert outcome.status == check.FAILED and outcome.diagnosis["id"] == "contract"


# ---------------------------------------------------------------------------------- repro
def test_repro_shows_each_number_with_its_bits_and_ulps(capsys):
    from rngcheck import cli

    code = cli.main(["repro", "--backend", "numpy", "--state", "0x1,0,0,0,0,0", "--kind", "normal", "--count", "6"])
    out = capsys.readouterr().out
    assert code == 0
    assert "0.43842274 (0x3ee078f2)" in out and "0 ULP" in out and "0 of 6 past the bound" in out


def test_a_numbers_failure_reproduces_with_a_command_that_fails_the_same_way(tmp_path, capsys):
    from rngcheck import cli

    backend_file = tmp_path / "broken.py"
    backend_file.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(__import__('pathlib').Path(__file__).parent)!r})\n"
        "from test_numbers import BrokenNumbers\n"
        "class Broken(BrokenNumbers):\n    name = 'broken'\n    fault = 'uniform-open-closed'\n")
    document = tmp_path / "run.json"
    code = cli.main(["run", "--backend", f"{backend_file}:Broken", "--case", "uniform/tensorflow/float32",
                     "--in-process", "--quiet", "--json", str(document)])
    assert code == 1
    (result,) = json.loads(document.read_text())["results"]
    command = result["reproduce_command"]
    assert "--kind uniform" in command and "--dtype float32" in command
    capsys.readouterr()
    argv = __import__("shlex").split(command)[1:]
    assert cli.main(argv) == 1
    out = capsys.readouterr().out
    assert "past the bound" in out and "*" in out and "uniform-open-closed" in out


@pytest.mark.parametrize("options, words", [
    (["--kind", "integers", "--dtype", "int32", "--low", "5", "--high", "5"], "low < high"),
    (["--kind", "uniform", "--low", "x", "--high", "2"], "--low 'x' is not a number"),
    (["--kind", "normal", "--convention", "nope"], "unknown convention 'nope'"),
    (["--kind", "normal", "--dtype", "int8"], "not 'int8'"),
])
def test_repro_refuses_a_bad_request_in_one_line(options, words, capsys):
    from rngcheck import cli

    code = cli.main(["repro", "--backend", "numpy", "--state", "0,0,0,0,0,0", *options])
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_truncated_normal_groups_finished_trial_by_trial_equal_the_vectorised_ones(monkeypatch):
    state = counter.make_state((1 << 128) - 300, (7, 9))     # the groups' stretches cross the 2^128 wrap
    for dtype in ("float32", "float64"):
        whole = numbers.draw(Request("tensorflow", "truncated_normal", dtype, 41), state)
        monkeypatch.setattr(tf, "TRIALS", 4)                  # many groups now need the slow path
        assert np.array_equal(numbers.draw(Request("tensorflow", "truncated_normal", dtype, 41), state), whole)
        monkeypatch.setattr(tf, "TRIALS", 16)
        assert np.all(np.abs(whole) < 2)


def test_the_results_table_carries_each_numbers_case_s_bound_and_worst_distance(tmp_path):
    from rngcheck import cli
    from rngcheck.results.tables import read_table, table

    document = tmp_path / "run.json"
    assert cli.main(["run", "--backend", "numpy", "--case", "guide", "--case", "kat", "--quiet",
                     "--json", str(document)]) == 0
    data = table([str(document)])
    guide = data[data["category"] == "guide"]
    assert len(guide) and (guide["bound_ulps"] == 4).all() and guide["worst_ulps"].between(0, 2).all()
    assert (guide["worst_ulps"] > 0).any()   # some printed numbers are 1-2 ULP off the exact model
    assert (data[data["category"] == "kat"]["bound_ulps"] == -1).all()
    old = tmp_path / "old.csv"
    data.drop(columns=["bound_ulps", "worst_ulps"]).to_csv(old, index=False)
    assert (read_table(old)["worst_ulps"] == -1).all()
