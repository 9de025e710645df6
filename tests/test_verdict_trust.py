"""Verdicts nothing can fool: the input state, implementation-defined answers, short streams,
regressions to n/a, documents that say more than their results (hardening rounds 2 and 3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from probes import FAULTS, NOT_APPLICABLE_BACKEND, call, edited_copy, one_line_error, rngcheck
from rngcheck.backends.exec_backend import isolated


@pytest.mark.parametrize("isolation", [[], ["--in-process"]])
def test_a_backend_writing_its_input_state_fails_input_state_modified(tmp_path, isolation):
    out = tmp_path / "r.json"
    result = rngcheck("run", "--backend", f"{FAULTS}:WritesInputState", "--case", "mapping", "--json", str(out),
                      *isolation)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    results = json.loads(out.read_text())["results"]
    modified = [r for r in results if (r.get("diagnosis") or {}).get("id") == "input-state-modified"]
    assert modified and all(r["status"] == "failed" for r in modified)


def test_the_worker_reports_the_input_state_after_the_call():
    backend = isolated(f"{FAULTS}:WritesInputState")
    try:
        state, returned = call(backend, (8,))
        assert state.tolist() == np.asarray(returned).tolist() != [0, 0, 0, 0, 1, 2]
    finally:
        backend.close()
    honest = isolated(f"{FAULTS}:Correct")
    try:
        state, _ = call(honest, (8,))
        assert state.tolist() == [0, 0, 0, 0, 1, 2]
    finally:
        honest.close()


@pytest.mark.parametrize("strides", ["0,0", "0,1", "1,1"])
def test_repro_of_an_aliasing_description_is_implementation_defined(strides):
    result = rngcheck("repro", "--backend", "numpy", "--state", "0,0,0,0,1,2", "--sizes", "2,3",
                      "--strides", strides)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "implementation-defined" in result.stdout and "key-words-swapped" not in result.stdout


def test_a_short_stream_s_verdict_is_incomplete(tmp_path):
    stream = tmp_path / "short.bin"
    stream.write_bytes(np.random.default_rng(1).integers(0, 1 << 32, 1 << 18, dtype=np.uint32).tobytes())
    out = tmp_path / "s.json"
    result = rngcheck("stats", "--input", str(stream), "--tier", "smoke", "--json", str(out))
    document = json.loads(out.read_text())
    assert document["complete"] is False and document["verdict"] == "INCOMPLETE"
    assert result.returncode == 2


def test_passed_to_not_applicable_is_a_regression(tmp_path, kat_run):
    skipped = edited_copy(kat_run[0], tmp_path / "new.json", lambda d: [r.update(status="skipped", message="n/a")
                                                                        for r in d["results"]])
    result = rngcheck("compare", str(kat_run[0]), str(skipped))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "0 regressions" not in result.stdout
    backend = tmp_path / "driver.py"
    backend.write_text(NOT_APPLICABLE_BACKEND)
    gated = rngcheck("run", "--backend", f"{backend}:Backend", "--case", "kat", "--baseline", str(kat_run[0]),
                     "--quiet", cwd=tmp_path)
    # another implementation that implements none of it: nothing compared, nothing ran (never a pass)
    assert gated.returncode == 5, gated.stdout + gated.stderr
    assert "nothing ran on driver-update" in gated.stderr


def test_a_document_marked_complete_with_results_missing_is_not_a_pass(tmp_path, kat_run):
    short = edited_copy(kat_run[0], tmp_path / "short.json", lambda d: d.update(results=d["results"][:1]))
    trimmed = edited_copy(kat_run[0], tmp_path / "trimmed.json",
                          lambda d: d.update(results=d["results"][:1], cases=d["cases"][:1]))
    for doc in (short, trimmed):
        summary = tmp_path / f"{doc.stem}.md"
        assert rngcheck("report", str(doc), "--summary", str(summary)).returncode == 1   # not a pass
        assert "INCOMPLETE" in summary.read_text() and "PASS" not in summary.read_text().splitlines()[0]
        one_line_error(rngcheck("compare", str(kat_run[0]), str(doc)), 2, "1 of the")


def test_duplicate_results_are_refused(tmp_path, kat_run):
    def duplicate(document):
        again = dict(document["results"][0], status="passed")
        document["results"][0]["status"] = "failed"
        document["results"].append(again)

    doubled = edited_copy(kat_run[0], tmp_path / "doubled.json", duplicate)
    one_line_error(rngcheck("compare", str(kat_run[0]), str(doubled)), 2, "two results")
    one_line_error(rngcheck("report", str(doubled), "--summary", str(tmp_path / "s.md")), 2, "two results")
