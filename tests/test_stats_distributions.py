"""Goodness of fit of the numbers layer (rngcheck.stats.distributions, ``rngcheck stats --distribution``):
merging split streams is one pass, the reference passes, broken conversions are caught by the test
that should catch them, and the command line's exit codes and one-line errors."""

import itertools
import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from rngcheck import cli, reference
from rngcheck.numbers import tensorflow as tf
from rngcheck.results import schema
from rngcheck.stats import distributions as dist


def stream(kind, dtype="float32", low=None, high=None, **options):
    return dist.NumberStream(dist.request_of(kind, "tensorflow", dtype, low, high), **options)


def verdicts(doc):
    return {e["test"]: e["verdict"] for e in doc["results"]}


def words(state, count):
    return reference.words(np.asarray(state, dtype=np.uint32), 0, count)


# ---------------------------------------------------------------------------------- broken conversions
class Broken:
    """A backend whose random_numbers is a deliberately wrong TensorFlow conversion."""

    name = "broken"
    conventions = ("tensorflow",)

    def describe(self):
        return {"implementation": type(self).__name__}

    def random_generator(self, *args, **kwargs):
        raise NotImplementedError

    def random_numbers(self, request, state):
        return self.convert(words(state, request["count"]))


class SixteenBitUniform(Broken):
    """[0, 1) from the high 16 bits of each word: multiples of 2^-16, on TensorFlow's lattice but coarser."""

    def convert(self, w):
        return ((w >> 16).astype(np.float32) * np.float32(2.0 ** -16)).astype(np.float32)


class EightBitUniform(Broken):
    def convert(self, w):
        return ((w >> 24).astype(np.float32) * np.float32(2.0 ** -8)).astype(np.float32)


class HalfOpenAtOne(Broken):
    """(0, 1]: (low 23 bits + 1) 2^-23; each chunk's word 5 has its low 23 bits set, so 1.0 is drawn."""

    def convert(self, w):
        w = w.copy()
        w[5] |= np.uint32(0x7FFFFF)
        return (((w & np.uint32(0x7FFFFF)) + np.uint32(1)).astype(np.float64) * 2.0 ** -23).astype(np.float32)


def box_muller_unclamped(x0, x1):
    """TensorFlow's rule 5 without the epsilon clamp: log sees u1 = 0."""
    u1 = tf.uint32_to_float(x0)
    v1 = (2.0 * math.pi * tf.uint32_to_float(x1).astype(np.float64)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(-2.0 * np.log(u1.astype(np.float64))).astype(np.float32)
        return np.sin(v1) * r, np.cos(v1) * r


class UnclampedNormal(Broken):
    """Each chunk's word 6 (u1 of the pair 6, 7) is zero."""

    def convert(self, w):
        w = w.copy()
        w[6] = 0
        with np.errstate(invalid="ignore"):
            return tf.interleave(*box_muller_unclamped(w[0::2], w[1::2]))


class RepeatedNormal(Broken):
    """Both elements of a pair are r sin v (the cos is lost): the marginal is still normal."""

    def convert(self, w):
        sin, _ = tf.box_muller_float(w[0::2], w[1::2])
        return tf.interleave(sin, sin)


class CutAtThree(Broken):
    """Truncated normal that keeps |x| < 3 (from one Box-Muller stream, in order)."""

    def random_numbers(self, request, state):
        n = request["count"]
        normals = tf.normal_from_words("float32", words(state, 4 * n))
        kept = normals[np.abs(normals) < 3]
        assert kept.size >= n
        return kept[:n]


# ---------------------------------------------------------------------------------- exact sums, merging
def test_exact_sum_is_the_exact_sum():
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.normal(size=3000) * 10.0 ** rng.integers(-300, 300, 3000),
                             [5e-324, -5e-324, 1.7e308, -1.7e308, 0.0, 1.0, -1.0, 2.0 ** -1074 * 3]])
    assert dist.exact_sum(values) == sum((Fraction(float(v)) for v in values), Fraction(0))
    assert dist.exact_sum([]) == 0
    assert dist.exact_sum([0.1, 0.2]) == Fraction(0.1) + Fraction(0.2)  # not 0.30000000000000004


@pytest.mark.parametrize("kind, dtype, low, high, count", [
    ("uniform", "float32", None, None, 50_001),
    ("uniform", "float16", -1.5, 2.0, 30_001),
    ("normal", "float32", None, None, 50_001),
    ("normal", "float64", None, None, 20_001),
    ("truncated_normal", "float32", None, None, 2_001),
])
def test_split_streams_merge_to_one_pass_exactly(kind, dtype, low, high, count):
    source = stream(kind, dtype, low, high, key=7, chunk=4096)
    null = dist.null_of(source.request)
    values = np.concatenate(list(source.read(0, count)))
    whole = dist.accumulators(null)
    for acc in whole:
        acc.update(values)
    # odd and even positions, inside and across chunks
    cuts = sorted({0, 3, 4097 % count, count // 2, count // 2 + 1, count})
    pieces = []
    for a, b in itertools.pairwise(cuts):
        accs = dist.accumulators(null, start=a)
        for first in range(a, b, 999):                 # uneven updates within a piece
            for acc in accs:
                acc.update(values[first:min(b, first + 999)])
        pieces.append(accs)
    merged = pieces[0]
    for other in pieces[1:]:
        for acc, later in zip(merged, other):
            acc.merge(later)
    one, split = dist.results(whole)[0], dist.results(merged)[0]
    assert one and json.dumps(one) == json.dumps(split)       # every float bit for bit


def test_merge_refuses_a_gap_and_another_request():
    null = dist.null_of(dist.request_of("normal", "tensorflow", "float32"))
    first, gap = dist.Moments(null, 0), dist.Moments(null, 11)
    first.update(np.zeros(10))
    with pytest.raises(ValueError, match="not contiguous"):
        first.merge(gap)
    other = dist.Moments(dist.null_of(dist.request_of("normal", "tensorflow", "float64")), 10)
    with pytest.raises(ValueError, match="same test"):
        first.merge(other)


def test_the_stream_does_not_depend_on_the_chunk():
    for kind in ("uniform", "normal", "truncated_normal"):
        small = np.concatenate(list(stream(kind, key=3, chunk=8).read(0, 64)))
        large = np.concatenate(list(stream(kind, key=3, chunk=64).read(0, 64)))
        assert (small == large).all(), kind
    # and chunk k is the draw on counter + k * blocks: uniform float32 reads the word stream
    assert (np.concatenate(list(stream("uniform", key=3, chunk=8).read(0, 32)))
            == tf.uint32_to_float(reference.words(stream("uniform", key=3).state(0), 0, 32))).all()


# ---------------------------------------------------------------------------------- the reference passes
@pytest.mark.parametrize("kind, dtype, low, high, count, not_run", [
    ("uniform", "float32", None, None, 1 << 19, []),
    ("uniform", "float32", -2.0, 3.0, 1 << 19, []),
    ("uniform", "bfloat16", None, None, 1 << 18, ["uniform.lattice.collisions"]),  # all 128 points used
    ("normal", "float32", None, None, 1 << 19, []),
    ("normal", "float64", None, None, 1 << 18, []),
    ("normal", "float16", None, None, 1 << 18, []),
    ("truncated_normal", "float32", None, None, 1 << 13, []),
])
def test_the_reference_passes(kind, dtype, low, high, count, not_run):
    doc = dist.run(stream(kind, dtype, low, high, key=2), count)
    assert doc["verdict"] == "PASS", [e for e in doc["results"] if e["verdict"] != "PASS"]
    assert [x["test"] for x in doc["not_run"]] == not_run
    schema.validate(doc, "rngcheck-stats")
    expected = {"uniform": 9, "normal": 17, "truncated_normal": 10}[kind]
    assert len(doc["results"]) >= expected


def test_the_uniform_lattice_is_reported():
    doc = dist.run(stream("uniform", key=4), 1 << 16)
    off = next(e for e in doc["results"] if e["test"] == "uniform.lattice.off")
    assert off["lattice"] == "multiples of 2^-23" and off["count"] == 0
    assert 65_000 < off["distinct"] <= 1 << 16              # about n (1 - n / 2N): 65280
    support = next(e for e in doc["results"] if e["test"] == "uniform.support")
    assert support["ones"] == 0 and 0 <= support["minimum"] < support["maximum"] < 1


# ---------------------------------------------------------------------------------- broken conversions
def broken(kind, backend, count, key=1):
    return dist.run(stream(kind, key=key, backend=backend, chunk=4096), count)


@pytest.mark.parametrize("backend", [SixteenBitUniform(), EightBitUniform()])
def test_a_coarse_uniform_fails_the_low_bits(backend):
    doc = broken("uniform", backend, 4096)
    v = verdicts(doc)
    assert v["uniform.lattice.low_bits"] == "FAIL" and v["uniform.lattice.collisions"] == "FAIL"
    assert v["uniform.lattice.off"] == "PASS" and v["uniform.support"] == "PASS"   # on the lattice, in range
    assert doc["verdict"] == "FAIL"


def test_a_uniform_that_reaches_one_fails_the_support():
    doc = broken("uniform", HalfOpenAtOne(), 4096)
    support = next(e for e in doc["results"] if e["test"] == "uniform.support")
    assert support["verdict"] == "FAIL" and support["ones"] == 1 and support["maximum"] == 1.0
    assert verdicts(doc)["uniform.lattice.low_bits"] == "PASS"


def test_a_normal_without_the_clamp_fails_on_non_finite_values():
    doc = broken("normal", UnclampedNormal(), 4096)
    entry = next(e for e in doc["results"] if e["test"] == "normal.non_finite")
    assert entry["verdict"] == "FAIL" and entry["count"] == 2 and entry["posinf"] + entry["neginf"] >= 1
    assert verdicts(doc)["normal.bound"] == "PASS"


def test_a_normal_that_repeats_a_value_fails_the_pair_test_only_there():
    doc = broken("normal", RepeatedNormal(), 4096)
    v = verdicts(doc)
    assert v["normal.pair"] == "FAIL"
    assert v["normal.chi2.bins16"] == "PASS" and v["normal.moment.variance"] == "PASS"   # the marginal is right


def test_a_truncated_normal_cut_at_three_fails_the_support():
    doc = broken("truncated_normal", CutAtThree(), 4096)
    support = next(e for e in doc["results"] if e["test"] == "truncated_normal.support")
    assert support["verdict"] == "FAIL" and support["count"] > 100    # 4.3 % of the numbers
    assert 2 <= support["maximum"] < 3


def test_a_value_beyond_the_box_muller_bound_fails():
    class Beyond(Broken):
        def convert(self, w):
            x = tf.normal_from_words("float32", w)
            x[3] = np.float32(5.7)                      # |x| <= 5.678 with the clamp
            return x

    assert verdicts(broken("normal", Beyond(), 4096))["normal.bound"] == "FAIL"


# ---------------------------------------------------------------------------------- the command line
def run_cli(capsys, *argv):
    code = cli.main(["stats", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_reference_and_numpy_backend_agree(tmp_path, capsys):
    ref, numpy_json = tmp_path / "ref.json", tmp_path / "numpy.json"
    args = ["--distribution", "normal", "--dtype", "bfloat16", "--bytes", "128K", "--seed", "9", "--quiet"]
    assert run_cli(capsys, *args, "--json", str(ref))[0] == 0
    assert run_cli(capsys, *args, "--backend", "numpy", "--json", str(numpy_json))[0] == 0
    a, b = json.loads(ref.read_text()), json.loads(numpy_json.read_text())
    schema.validate(a, "rngcheck-stats")
    assert [(e["test"], e["statistic"]) for e in a["results"]] == [(e["test"], e["statistic"]) for e in b["results"]]
    assert a["distribution"]["numbers"] == 65536 and a["seed"] == 9 and a["source"]["counter"] == 0
    assert a["source"]["numbers"].startswith("reference") and b["source"]["backend"] == "numpy"
    assert a["reproduce"] == ("rngcheck stats --distribution normal --convention tensorflow --dtype bfloat16 "
                              "--seed 9 --tier smoke --bytes 128K")


def test_cli_a_broken_backend_exits_1(capsys):
    code, out, _ = run_cli(capsys, "--distribution", "uniform",
                           "--backend", "test_stats_distributions:SixteenBitUniform", "--in-process", "--bytes", "16K")
    assert code == 1
    assert "FAIL     uniform.lattice.low_bits" in out and out.splitlines()[-1].startswith("FAIL: ")


@pytest.mark.parametrize("argv, message", [
    (["--distribution", "poisson"], "unknown distribution 'poisson' (known: uniform, normal, truncated_normal)"),
    (["--distribution", "uniform", "--low", "2", "--high", "1"], "the range needs low < high"),
    (["--distribution", "uniform", "--low", "0", "--high", "one"], "--high 'one' is not a number"),
    (["--distribution", "uniform", "--low=-inf", "--high", "1"], "--low '-inf' is not a finite number"),
    (["--distribution", "uniform", "--low", "0"], "give both --low and --high"),
    (["--distribution", "normal", "--low", "0", "--high", "1"], "normal takes no range"),
    (["--distribution", "normal", "--dtype", "int8"], "not 'int8'"),
    (["--distribution", "normal", "--convention", "nope"], "unknown convention 'nope'"),
    (["--distribution", "normal", "--bytes", "6"], "--bytes must be a multiple of 4"),
    (["--distribution", "normal", "--no-interstream"], "--no-interstream does not apply with --distribution"),
    (["--dtype", "float64", "--backend", "numpy"], "--dtype applies with --distribution only"),
    (["--distribution", "normal", "--backend", "rngcheck.backends:Backend"], "draws no tensorflow numbers"),  # a worker
    (["--distribution", "normal", "--backend", "rngcheck.backends:Backend", "--in-process"],
     "draws no tensorflow numbers"),
])
def test_cli_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("rngcheck: error: ") and message in err, err


def test_the_distributions_are_one_registry():
    """``--distribution KIND`` looks the kind up in distributions.MODELS (rngcheck.registry): the
    Null method that models it, in order; one line for a kind it does not hold."""
    assert dist.MODELS.names() == ("uniform", "normal", "truncated_normal")
    assert dist.MODELS["normal"] is dist.Null._normal
    with pytest.raises(dist.RngcheckError, match=r"^unknown distribution 'poisson' \(known: uniform, normal, "):
        dist.request_of("poisson", "tensorflow", "float32")


def test_cli_in_its_own_process_no_traceback():
    done = subprocess.run([sys.executable, "-m", "rngcheck", "stats", "--distribution", "uniform", "--low", "1",
                           "--high", "nan"], capture_output=True, text=True, timeout=120, check=False,
                          cwd=Path(__file__).resolve().parents[1])   # this tree's rngcheck
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "rngcheck: error: --high 'nan' is not a finite number\n"
