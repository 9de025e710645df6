"""n/a is its own status and nothing-ran its own verdict (issue 38; hardening round 4, item 2): a case
that does not apply is never "skipped" and never a pass; a backend on which nothing ran is never PASS,
said the same by run, report and the document, with exit code 5 (pytest's "no tests ran")."""

from __future__ import annotations

import json
from pathlib import Path

from probes import rngcheck as run_rngcheck
from rngcheck.results import document as D
from rngcheck.results.statuses import NOT_APPLICABLE, read_status
from rngcheck.results.verdicts import FAIL, NOTHING_RAN, PASS, run_verdict

TESTS = Path(__file__).resolve().parent
NOTHING = f"{TESTS / 'faults.py'}:NothingApplies"


def rngcheck(*args, timeout=600):
    return run_rngcheck(*args, timeout=timeout)


def test_the_verdict_rule():
    assert run_verdict(failed=0, ran=3) == PASS
    assert run_verdict(failed=0, ran=0) == NOTHING_RAN
    assert run_verdict(failed=1, ran=0) == FAIL
    assert run_verdict(failed=0, ran=5, backends=["pass", NOTHING_RAN]) == NOTHING_RAN
    assert run_verdict(failed=1, ran=5, backends=["fail", NOTHING_RAN]) == FAIL


def test_a_run_where_nothing_applies_says_so_with_exit_5_quiet_or_not(tmp_path):
    for quiet in ([], ["--quiet"]):
        done = rngcheck("run", "--backend", "opencl", "--profile", "quick", "--case", "normal*", *quiet,
                        "--json", str(tmp_path / "r.json"))
        assert done.returncode == 5, done.stdout + done.stderr
        assert "nothing ran on opencl" in done.stderr and "draws no" in done.stderr
        if quiet:
            assert done.stdout == ""
        else:
            assert "NOTHING RAN" in done.stdout and "PASS" not in done.stdout and "skipped" not in done.stdout
    document = json.loads((tmp_path / "r.json").read_text())
    assert {r["status"] for r in document["results"]} == {NOT_APPLICABLE}
    assert document["summary"]["verdict"] == NOTHING_RAN == document["backends"][0]["verdict"]


def test_a_backend_that_ran_nothing_beside_one_that_passed_is_not_pass_in_any_command(tmp_path):
    target = tmp_path / "r.json"
    done = rngcheck("run", "--backend", "numpy", "--backend", NOTHING, "--case", "kat", "--json", str(target))
    assert done.returncode == 5, done.stdout + done.stderr
    verdicts = [line for line in done.stdout.splitlines() if line.strip().startswith("=>")]
    assert verdicts == ["  => PASS", "  => NOTHING RAN"]
    assert "rngcheck: NOTHING RAN" in done.stdout
    report = rngcheck("report", str(target), "--summary", str(tmp_path / "s.md"))
    assert report.returncode == 5
    assert "NOTHING RAN" in (tmp_path / "s.md").read_text()


def test_the_terminal_says_what_a_backend_does_not_implement_in_one_line(tmp_path):
    done = rngcheck("run", "--backend", "opencl", "--profile", "quick", "--json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skipped" not in done.stdout
    (line,) = [line for line in done.stdout.splitlines() if line.strip().startswith("n/a ")]
    assert "numbers" in line and "generator blocks" in line and "StableHLO" in line
    assert len(done.stdout.splitlines()) <= 12


def test_a_version_1_document_reads_its_not_applicable_results_as_n_a(tmp_path):
    document = json.loads(json.dumps({
        "schema": "rngcheck-result", "schema_version": 1, "complete": True, "profile": "quick", "seed": 0,
        "backends": [{"name": "b", "spec": "b"}], "cases": [{"id": "x"}, {"id": "y"}],
        "results": [{"backend": "b", "case": "x", "status": "skipped", "message": "not applicable: no numbers",
                     "required": True},
                    {"backend": "b", "case": "y", "status": "passed", "message": "", "required": True}]}))
    path = tmp_path / "old.json"
    path.write_text(json.dumps(document))
    read = D.read(path)
    assert [r["status"] for r in read["results"]] == [NOT_APPLICABLE, "passed"]
    assert read["summary"]["verdict"] == PASS and read["summary"]["counts"][NOT_APPLICABLE] == 1
    assert read_status("skipped", "skipped: the buffer needs 9 GiB") == "skipped"
