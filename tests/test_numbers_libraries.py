"""Real libraries' numbers, without the libraries: the onnxruntime-cpu convention's model, the
diagnosis of OpenVINO's defects on numbers made by their description, the block-0 cases, and the
numbers table's expected differences (scripts/conformance_table.py, docs/expected-differences-numbers.json).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from rngcheck import counter, numbers
from rngcheck.conformance import axes
from rngcheck.conformance.conventions import cases as NC
from rngcheck.conformance.conventions.diagnosis import IDS, diagnose
from rngcheck.numbers import onnxruntime_cpu as ort
from rngcheck.numbers import tensorflow as tf

ROOT = Path(__file__).resolve().parents[1]
STATE = np.array(NC.BLOCK_ZERO_STATE, dtype=np.uint32)


def table_script():
    spec = importlib.util.spec_from_file_location("conformance_table", ROOT / "scripts" / "conformance_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------- minstd_rand0
def test_minstd_rand0_by_blocks_is_the_recurrence():
    x, expected = 12345, []
    for _ in range(3000):
        x = x * 16807 % (2 ** 31 - 1)
        expected.append(x)
    assert ort.minstd_rand0(12345, 3000).tolist() == expected
    assert ort.minstd_rand0(2 ** 31 - 1, 1)[0] == 16807     # seed mod m = 0 becomes 1


def test_generate_canonical_float_is_24_bits_of_x_minus_1_over_2_pow_31():
    values = np.array([1, 2, 2 ** 31 - 2, 2 ** 24 + 1, 2 ** 25 + 3], dtype=np.int64)
    got = ort.canonical32(values)
    assert got.dtype == np.float32 and got[0] == 0.0 and got[1] == np.float32(2.0 ** -31)
    assert got[2] == np.float32(1.0) - np.float32(2.0 ** -24)     # 2^31 - 3 rounds to 2^31: clamped below 1
    assert got[3] == np.float32(2.0 ** -7) and got[4] == np.float32(2 ** 25 + 2) * np.float32(2.0 ** -31)


def test_the_convention_reads_only_state_word_4():
    request = numbers.Request("onnxruntime-cpu", "uniform", "float32", 64)
    other = STATE.copy()
    other[[0, 1, 2, 3, 5]] ^= 0xFFFF
    assert np.array_equal(numbers.draw(request, STATE), numbers.draw(request, other))
    other[4] ^= 1 << 12
    assert not np.array_equal(numbers.draw(request, STATE), numbers.draw(request, other))
    assert numbers.convention_of("onnxruntime-cpu").generator == "minstd_rand0"
    assert numbers.convention_of("tensorflow").generator == "philox4x32-10"


def test_the_polar_normal_is_standard_normal_shaped_and_pairs_share_a_radius():
    values = numbers.draw(numbers.Request("onnxruntime-cpu", "normal", "float64", 20001), STATE)
    assert abs(values.mean()) < 0.05 and abs(values.std() - 1) < 0.05
    float32 = numbers.draw(numbers.Request("onnxruntime-cpu", "normal", "float32", 7), STATE)
    assert float32.dtype == np.float32 and float32.size == 7


# ---------------------------------------------------------------------------------- OpenVINO's defects
def openvino_like(request):
    """Numbers made as docs/library-findings.md describes OpenVINO's CPU plugin."""
    words = tf.stream(STATE, 0, request.count)
    if request.kind == "integers":
        low, high = max(request.low, -(1 << 31)), min(request.high, (1 << 31) - 1)
        if high - low >= 1 << 31:
            return np.full(request.count, low, dtype=request.dtype)
        return tf.integers("int32", words, low, high).astype(request.dtype)
    return tf.uint32_to_float(words).astype(request.dtype)


@pytest.mark.parametrize("dtype, low, high, named", [
    ("int32", -(1 << 31), (1 << 31) - 1, "integers-range-overflow"),
    ("int64", -5, 10, "integers-range-32-bit"),
    ("int64", 0, 1 << 32, "integers-range-32-bit"),
    ("int64", -(1 << 62), 1 << 62, "integers-range-32-bit"),
])
def test_openvinos_integer_defects_are_named(dtype, low, high, named):
    request = numbers.Request("tensorflow", "integers", dtype, 257, low, high)
    actual = openvino_like(request)
    assert not np.array_equal(actual, numbers.draw(request, STATE))
    diagnosis = diagnose(request, STATE, actual)
    assert named == diagnosis["id"] or named in diagnosis["alternatives"], diagnosis


def test_a_float64_computed_in_float32_is_named():
    request = numbers.Request("tensorflow", "uniform", "float64", 257)
    assert diagnose(request, STATE, openvino_like(request))["id"] == "uniform-computed-in-float32"


STICKY = "uniform-bfloat16-sticky-bits-ignored"


def bfloat16_of(values32, rounding):
    """float32 values to bfloat16 bits, written plainly: OpenVINO's (bits + ((bits & 0x10000) >> 1)) >> 16
    ("sticky-ignored"), round to nearest even, half up (bits + 0x8000) >> 16, or truncation."""
    bits = np.asarray(values32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    added = {"sticky-ignored": (bits & 0x10000) >> 1, "nearest-even": 0x7FFF + ((bits >> 16) & 1),
             "half-up": np.full_like(bits, 0x8000), "truncated": np.zeros_like(bits)}[rounding]
    return ((bits + added) >> 16).astype(np.uint16)


def test_openvinos_bfloat16_rounding_is_named_exactly():
    """OpenVINO's CPU plugin without BF16: the float32 uniform, rounded by its bfloat16 types' formula."""
    request = numbers.Request("tensorflow", "uniform", "bfloat16", 257)
    actual = bfloat16_of(tf.uint32_to_float(tf.stream(STATE, 0, 257)), "sticky-ignored")
    diagnosis = diagnose(request, STATE, actual)
    assert diagnosis["id"] == STICKY, diagnosis
    assert "0x10000" in IDS[STICKY]


@pytest.mark.parametrize("rounding, bits", [("nearest-even", "low"), ("half-up", "low"), ("truncated", "low"),
                                            ("sticky-ignored", "high")])
def test_other_bfloat16_roundings_are_not_given_that_name(rounding, bits):
    """Rounding the same float32 uniform another way, or the same rounding of the high-bit uniform:
    never named uniform-bfloat16-sticky-bits-ignored (not even as an alternative)."""
    request = numbers.Request("tensorflow", "uniform", "bfloat16", 257)
    words = tf.stream(STATE, 0, 257)
    unit = tf.uint32_to_float(words) if bits == "low" else \
        ((words >> np.uint32(9)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1)
    diagnosis = diagnose(request, STATE, bfloat16_of(unit, rounding))
    assert STICKY != diagnosis["id"] and STICKY not in diagnosis["alternatives"], diagnosis


# ---------------------------------------------------------------------------------- cases and table
def test_the_block_zero_state_is_one_openvino_and_onnx_can_be_given():
    words = counter.counter_words(STATE)
    assert int(words[0]) == int(words[1]) == 0
    assert float(np.float32(int(STATE[4]))) == int(STATE[4])
    ids = {c.id for c in axes.cases_for("quick")}
    assert {"integers/tensorflow/int32-full-block0", "uniform/onnxruntime-cpu/float32-block0"} <= ids


def test_every_expected_numbers_difference_is_a_registered_diagnosis_with_a_reason():
    expected = json.loads((ROOT / "docs" / "expected-differences-numbers.json").read_text())["backends"]
    assert "openvino" in expected
    for spec, entry in expected.items():
        for diagnosis, reason in entry["diagnoses"].items():
            assert diagnosis in IDS or diagnosis.startswith("convention-"), (spec, diagnosis)
            assert len(reason) > 20


def document(spec, case_id, category, diagnosis, generator=None):
    describe = {"version": "x 1", "device": "cpu"} | ({"generator": generator} if generator else {})
    return {"backends": [{"spec": spec, "describe": describe}],
            "cases": [{"id": case_id, "category": category}],
            "results": [{"case": case_id, "required": True, "status": "failed", "message": "m",
                         "diagnosis": {"id": diagnosis}}]}


def test_a_case_s_own_allowance_allows_that_case_only():
    """The numbers file's "cases": one case's diagnosis is allowed (a machine-dependent difference:
    OpenVINO's bfloat16 uniform on a CPU without BF16); the same diagnosis of another case is not."""
    script = table_script()
    expected = {"openvino": {"diagnoses": {}, "cases": {"uniform/tensorflow/bfloat16-block0":
                                                        {"diagnosis": STICKY, "where": "no BF16"}}}}
    allowed = document("openvino", "uniform/tensorflow/bfloat16-block0", "uniform", STICKY)
    other_case = document("openvino", "uniform/tensorflow/float32-block0", "uniform", STICKY)
    other_diagnosis = document("openvino", "uniform/tensorflow/bfloat16-block0", "uniform", "uniform-high-bits")
    assert script.unexpected(allowed, {}, expected) == []
    assert script.unexpected(other_case, {}, expected)
    assert script.unexpected(other_diagnosis, {}, expected)
    real = json.loads((ROOT / "docs" / "expected-differences-numbers.json").read_text())["backends"]
    for spec, entry in real.items():
        for case, allowance in entry.get("cases", {}).items():
            assert allowance["diagnosis"] in IDS and len(allowance["where"]) > 20, (spec, case)


def test_check_reads_numbers_failures_against_the_numbers_file_and_words_against_the_words_file():
    script = table_script()
    numbers_expected = {"openvino": {"diagnoses": {"integers-range-overflow": "why"}}}
    words_expected = {"openvino": {"diagnoses": ["increment-256n"]}}
    numbers_failure = document("openvino", "integers/tensorflow/int32-full-block0", "integers",
                               "integers-range-overflow")
    assert script.unexpected(numbers_failure, words_expected, numbers_expected) == []
    assert script.unexpected(numbers_failure, {"openvino": {"diagnoses": ["integers-range-overflow"]}}, {})
    words_failure = document("openvino", "kat/x", "kat", "integers-range-overflow")
    assert script.unexpected(words_failure, words_expected, numbers_expected)


def test_the_numbers_table_names_the_generator():
    script = table_script()
    assert script.generator_of(document("onnxruntime", "a", "uniform", "d", "not Philox: minstd_rand0")) \
        == "not Philox: minstd_rand0"
    assert script.generator_of(document("openvino", "a", "uniform", "d")) == "Philox4x32-10"
    assert "openvino" in script.DEFAULT and "onnxruntime" in script.DEFAULT


# ---------------------------------------------------------------------------------- statistics on numbers
def test_a_minstd_stream_cut_into_chunks_is_one_continuous_draw():
    from rngcheck.stats.distributions import NumberStream, request_of

    stream = NumberStream(request_of("uniform", "onnxruntime-cpu", "float32"), key=42, chunk=1024)
    pieces = np.concatenate(list(stream.read(0, 3000)))
    assert np.array_equal(pieces, ort.canonical32(ort.minstd_rand0(42, 3000)).astype(np.float64))
    assert "minstd_rand0" in stream.describe()["rule"]


def test_onnxruntimes_uniform_has_a_null_without_the_fixed_point_lattice_tests():
    from rngcheck.errors import RngcheckError
    from rngcheck.results.verdicts import STATS_PASS
    from rngcheck.stats.distributions import NumberStream, request_of, run

    document = run(NumberStream(request_of("uniform", "onnxruntime-cpu", "float32"), key=7), 1 << 18)
    tests = {e["test"] for e in document["results"]}
    assert not any("lattice" in t for t in tests) and any("chi2" in t for t in tests)
    assert document["verdict"] == STATS_PASS, document["counts"]      # 2^18 numbers of minstd_rand0: no test fails
    assert document["source"]["convention"] == "onnxruntime-cpu"
    with pytest.raises(RngcheckError, match="no normal goodness-of-fit"):
        request_of("normal", "onnxruntime-cpu", "float32")


def test_the_table_runs_backends_at_once_and_keeps_their_order(tmp_path, monkeypatch, capsys):
    """--jobs N: at most N backends' runs at once (more than one when N > 1), the documents and what
    is said about them in the table's order whatever order they finish in, a spec given twice run once;
    a required backend that cannot run still stops the table."""
    import argparse
    import threading
    import time

    script = table_script()
    lock, running, most, ran = threading.Lock(), [0], [0], []

    def fake_run(spec, results, categories=(), excludes=()):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            ran.append(spec)
        time.sleep(0.05 * (10 - int(spec[1:])))      # the first finishes last
        with lock:
            running[0] -= 1
        return (None, f"{spec}: not run: absent") if spec in ("b8", "b9") else ({"spec": spec}, None)

    monkeypatch.setattr(script, "run_backend", fake_run)
    specs = ["b1", "b2", "b3", "b4"]
    for jobs in (1, 2, 3):
        most[0] = 0
        args = argparse.Namespace(jobs=jobs, require_all=True, require=[])
        assert script.run_backends(args, specs, tmp_path) == [{"spec": s} for s in specs]
        assert most[0] == jobs
    ran.clear()
    args = argparse.Namespace(jobs=2, require_all=False, require=[])
    assert script.run_backends(args, ["b1", "b8", "b9", "b1"], tmp_path) == [{"spec": "b1"}]
    assert sorted(ran) == ["b1", "b8", "b9"]
    assert capsys.readouterr().err.splitlines() == ["b8: not run: absent", "b9: not run: absent"]
    args = argparse.Namespace(jobs=2, require_all=False, require=["b9"])
    assert script.run_backends(args, ["b1", "b9"], tmp_path) is None
    assert "b9 is required here but could not run" in capsys.readouterr().err


def test_a_backend_run_that_ends_without_its_document_is_named_not_a_traceback(tmp_path, monkeypatch):
    """rngcheck run killed or crashed before writing its document: the backend could not run, said in one
    line with its spec and exit status; an earlier run's document is not read in its place."""
    import subprocess

    script = table_script()
    (tmp_path / "numpy.json").write_text('{"from": "an earlier run"}')
    monkeypatch.setattr(script.subprocess, "run",
                        lambda command, **kw: subprocess.CompletedProcess(command, -9, "", "partial\nKilled"))
    document, why = script.run_backend("numpy", tmp_path)
    assert document is None and why == "numpy: rngcheck run exited -9 without a readable numpy.json: Killed"
    monkeypatch.setattr(script.subprocess, "run",
                        lambda command, **kw: subprocess.CompletedProcess(command, 2, "", "rngcheck: no backend x"))
    assert script.run_backend("x", tmp_path) == (None, "x: not run: rngcheck: no backend x")
