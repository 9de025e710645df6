"""compare means the same to everyone (issue 38): a regression is judged per backend identity. A
reference run against an implementation of part of it compares what both implement: what the
implementation does not implement is not comparable (counted once), never a regression; the same
backend across versions keeps "passed -> n/a" as a regression."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from probes import rngcheck as run_rngcheck
from rngcheck.results.baseline import compare, identity
from rngcheck.results.tables import table

TESTS = Path(__file__).resolve().parent
FLIP = f"{TESTS / 'faults.py'}:FlipsBitOfElement5"


def rngcheck(*args, timeout=900):
    return run_rngcheck(*args, timeout=timeout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    binary = folder / "philox_exec"
    source = TESTS.parent / "examples" / "exec-c" / "philox_exec.c"
    built = subprocess.run(["gcc", "-O2", "-std=c99", "-o", str(binary), str(source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    for name, spec in (("base", "numpy"), ("c", f"exec:{binary}"), ("flip", FLIP)):
        done = rngcheck("run", "--backend", spec, "--profile", "quick", "--json", str(folder / f"{name}.json"),
                        "--quiet")
        assert done.returncode in (0, 1), done.stderr
    return folder


def test_a_reference_baseline_and_the_c_example_compare_clean(runs):
    done = rngcheck("compare", str(runs / "base.json"), str(runs / "c.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: 0 regressions" in done.stdout
    document = json.loads((runs / "c.json").read_text())
    base_absent = {r["case"] for r in json.loads((runs / "base.json").read_text())["results"] if r["status"] == "n/a"}
    # n/a on the new one only: a case n/a on both (property rule 10 on the reference) is the same status
    absent = sum(r["status"] == "n/a" and r["case"] not in base_absent for r in document["results"])
    assert absent > 300 and f"{absent} not comparable" in done.stdout
    assert done.stdout.count("n/a on the new one") == 1   # said once, not case by case


def test_a_reference_baseline_and_a_one_bit_flip_report_exactly_its_failures(runs):
    done = rngcheck("compare", str(runs / "base.json"), str(runs / "flip.json"))
    assert done.returncode == 1
    failed = {r["case"] for r in json.loads((runs / "flip.json").read_text())["results"] if r["status"] == "failed"}
    regressions = {line.split(": ")[1].split(" ")[0] for line in done.stdout.splitlines()
                   if line.startswith("  ") and " -> failed" in line}
    assert f"REGRESSED: {len(failed)} regressions" in done.stdout
    assert regressions <= failed and len(regressions) == min(len(failed), 40)   # the terminal lists 40


def test_the_same_backend_across_versions_keeps_passed_to_n_a_a_regression(runs, tmp_path):
    before = json.loads((runs / "base.json").read_text())
    after = json.loads(json.dumps(before))
    after["created"] = "2030-01-01T00:00:00+00:00"
    gone = next(r for r in after["results"] if r["status"] == "passed")
    gone.update(status="n/a", message="not applicable: dropped in this version")
    (tmp_path / "after.json").write_text(json.dumps(after))
    change = compare(table([before]), table([after]))
    assert [(c.kind, c.case) for c in change.regressions] == [("regression", gone["case"])]


def test_identity_is_the_registered_name_or_the_whole_spec():
    assert identity("directml:lib=0.2.0") == identity("directml:lib=0.2.5") == "directml"
    assert identity("numpy") == "numpy"
    assert identity("exec:./philox_exec") == "exec:./philox_exec"
    assert identity("tests/faults.py:Correct") == "tests/faults.py:Correct"
    assert identity("mypackage.module:Backend") == "mypackage.module:Backend"
