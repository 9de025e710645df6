"""``rngcheck repro``'s arguments, each axis's own (rngcheck.conformance.repro): one axis's call at a time,
its own defaults, and a one-line refusal naming the rule (hardening round 4, items 7 and 17)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def repro(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "rngcheck", "repro", "--backend", "numpy", *args],
                          capture_output=True, text=True, timeout=timeout)


def test_an_rng_bit_generator_call_without_dtype_is_uint32(tmp_path):
    """The numbers group's float32 default no longer leaks into --algorithm (item 7)."""
    done = repro("--state", "1,2,3", "--algorithm", "PHILOX", "--sizes", "4", "--json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    (case,) = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert case["inputs"]["dtype"] == "uint32" and case["inputs"]["algorithm"] == "PHILOX"
    assert "feature_level" not in case["inputs"]   # a StableHLO case records its own inputs only


@pytest.mark.parametrize("extra", [["--kind", "uniform"], ["--count", "5"], ["--strides", "1"],
                                   ["--feature-level", "3.0"], ["--convention", "jax"]])
def test_another_axis_s_option_beside_algorithm_is_refused_not_ignored(extra):
    done = repro("--state", "1,2,3", "--algorithm", "PHILOX", "--sizes", "4", *extra)
    assert done.returncode == 2 and extra[0] in done.stderr and "cannot be combined" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_words_option_beside_kind_is_refused():
    done = repro("--state", "0,0,0,0,1,2", "--kind", "uniform", "--strides", "1")
    assert done.returncode == 2 and "--strides" in done.stderr and "--kind" in done.stderr


def test_a_count_of_zero_numbers_is_refused_not_passed():
    done = repro("--state", "0,0,0,0,1,2", "--kind", "uniform", "--count", "0")
    assert done.returncode == 2 and "--count" in done.stderr and "PASS" not in done.stdout


def test_a_shape_past_the_element_limit_names_that_rule():
    done = repro("--state", "1,2,3", "--algorithm", "PHILOX", "--sizes", "4294967296,4294967296")
    assert done.returncode == 2 and "element-count" in done.stderr and ">= 0" not in done.stderr
    negative = repro("--state", "1,2,3", "--algorithm", "PHILOX", "--sizes", "-1")
    assert negative.returncode == 2 and "shape" in negative.stderr


def test_a_words_dtype_other_than_uint32_is_refused():
    done = repro("--state", "0,0,0,0,1,2", "--sizes", "4", "--dtype", "float32")
    assert done.returncode == 2 and "uint32" in done.stderr
