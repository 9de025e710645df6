"""Hardening, round 3 (issue 31), items 1-3, 5, 6, 9-11, 19-21 and parts of 22: no data file starts
code or picks a file to overwrite, no output replaces what it should not, the verdict cannot be
fooled, and small inputs are refused in one line.

Tests with processes poll with generous limits; none depends on a fixed sleep to pass."""

import json
import os
import re
import shlex
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import sigint_as_a_terminal_sends_it
from test_hardening import _journal_with, one_line_error, wait_until

TESTS = Path(__file__).parent


def rngcheck(*args, timeout=300, env=None, **kw):
    """The command, from any working directory (this checkout's package first on the path)."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS.parent)] + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-m", "rngcheck", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)


def backend_file(tmp_path, cls: str) -> str:
    """A fault backend of tests/faults.py as a file spec unique to this test."""
    path = tmp_path / f"fault_{cls.lower()}.py"
    path.write_text(f"import sys; sys.path.insert(0, {str(TESTS)!r})\nfrom faults import {cls} as Backend\n")
    return f"{path}:Backend"


@pytest.fixture(scope="module")
def kat_run(tmp_path_factory):
    """A real finished run of the reference on the known-answer cases: (document path, journal path)."""
    folder = tmp_path_factory.mktemp("kat")
    out = folder / "a.json"
    result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out), "--quiet", cwd=folder)
    assert result.returncode == 0, result.stderr
    return out, folder / "a.journal.jsonl"


def edited_copy(source: Path, target: Path, edit) -> Path:
    document = json.loads(source.read_text())
    document["created"] = "2001-01-01T00:00:00+00:00"   # another run, not the same one given twice
    edit(document)
    target.write_text(json.dumps(document))
    return target


# -- 1. a data file starts no program, module, file or library ----------------------------------

@pytest.mark.parametrize("spec", ["exec:sh -c 'touch pwned; exit 3'", "directml:d3d12=somedir",
                                  "directml:lib=libdirectml.so", "onedpl:include=somedir", "json:loads"])
def test_a_journal_cannot_start_a_spec_that_names_code(tmp_path, spec):
    path = _journal_with(tmp_path, backends=[spec])
    result = rngcheck("run", "--resume", str(path), cwd=tmp_path)
    one_line_error(result, 2, "--trust-journal")
    assert shlex.quote(spec) in result.stderr
    assert not (tmp_path / "pwned").exists()


def test_the_data_file_allow_list_takes_only_keys_that_load_nothing():
    from rngcheck.backends.registry import starts_no_code

    for spec in ("numpy", "opencl:platform=0,device=1", "directml:adapter=warp", "jax:state_words=3",
                 "tensorflow:device=/CPU:0"):
        assert starts_no_code(spec), spec
    for spec in ("exec:true", "directml:adapter=warp,lib=x", "directml:d3d12=d", "curand:library=x",
                 "onedpl:include=/usr", "numpy:x", "os:getcwd", "tests/faults.py:Correct", "nosuch"):
        assert not starts_no_code(spec), spec


def test_a_resumed_safe_spec_is_started_without_being_named(tmp_path):
    path = _journal_with(tmp_path, backends=["numpy"])
    result = rngcheck("run", "--resume", str(path), "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


# -- 2. a journal's outputs: shown, checked, in the journal's folder ----------------------------

def test_the_outputs_a_journal_names_are_said_before_the_run(tmp_path):
    path = _journal_with(tmp_path, outputs={"html": "victim.html"})
    result = rngcheck("run", "--resume", str(path), "--quiet", "--trust-journal", cwd=tmp_path)  # (round 4, 12)
    assert result.returncode == 0, result.stderr
    said = result.stderr.splitlines()
    assert any("--html" in line and str(tmp_path / "victim.html") in line for line in said), result.stderr
    assert said.index(next(line for line in said if "victim.html" in line)) < \
        said.index(next(line for line in said if "resuming" in line))


def test_a_journal_output_that_leads_out_of_its_folder_is_refused(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    victim = outside / "precious.txt"
    victim.write_text("keep me")
    home = tmp_path / "home"
    home.mkdir()
    (home / "report.html").symlink_to(victim)
    path = _journal_with(home, outputs={"html": "report.html"})
    one_line_error(rngcheck("run", "--resume", str(path), "--quiet", cwd=home), 2, "out of the journal's folder")
    assert victim.read_text() == "keep me"


# -- 3. CSV export: no formulas, no raw control or bidi characters ------------------------------

HOSTILE = ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "\uff1d1+1", "a\x1b[31mb", "n\x00ul",
           "rev\u202eersed", "zero\u200bwidth"]


def test_csv_export_neutralises_formulas_and_control_characters(tmp_path, kat_run):
    import pandas as pd

    from rngcheck.results.tables import COLUMNS, DTYPES, table

    def hostile(document):
        for result, name in zip(document["results"], HOSTILE * 3):
            result["message"] = name
        document["results"][0]["case"] = HOSTILE[0]
        document["cases"][0]["id"] = HOSTILE[0]

    doc = edited_copy(kat_run[0], tmp_path / "hostile.json", hostile)
    out = tmp_path / "t.csv"
    result = rngcheck("export", str(doc), "--csv", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    raw = out.read_text(encoding="utf-8")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u200b\u202e]", raw)
    read = pd.read_csv(out, dtype=str, keep_default_na=False)
    original = table([doc])
    texts = [c for c in COLUMNS if DTYPES[c] == "str"]
    for column in texts:
        for written, value in zip(read[column], original[column]):
            if value.startswith(("=", "+", "-", "@", "\uff1d")):
                assert written == "'" + value.replace("\x1b", "\\x1b"), (column, value, written)
            elif value.isprintable():
                assert written == value, (column, value, written)   # what is not hostile reads back equal
            else:
                assert written.isprintable() and "\\" in written, (column, value, written)


# -- 5. one output check for every command --------------------------------------------------------

def test_export_refuses_to_write_over_its_input(tmp_path, kat_run):
    doc = tmp_path / "a.json"
    doc.write_bytes(kat_run[0].read_bytes())
    before = doc.read_bytes()
    one_line_error(rngcheck("export", str(doc), "--csv", str(doc)), 2, "--csv", "input")
    one_line_error(rngcheck("export", str(doc), "--parquet", str(doc)), 2, "--parquet", "input")
    assert doc.read_bytes() == before
    journal = tmp_path / "j.journal.jsonl"
    journal.write_bytes(kat_run[1].read_bytes())
    one_line_error(rngcheck("export", str(journal), "--csv", str(journal)), 2, "input")
    assert journal.read_bytes() == kat_run[1].read_bytes()


def test_compare_refuses_to_write_its_page_over_an_input(tmp_path, kat_run):
    new = edited_copy(kat_run[0], tmp_path / "new.json", lambda d: None)
    expected = tmp_path / "known.txt"
    expected.write_text("kat/*  # a reason\n")
    before = new.read_bytes()
    one_line_error(rngcheck("compare", str(kat_run[0]), str(new), "--html", str(new)), 2, "--html", "input")
    one_line_error(rngcheck("compare", str(kat_run[0]), str(new), "--expected-failures", str(expected),
                            "--html", str(expected)), 2, "--html")
    assert new.read_bytes() == before and expected.read_text() == "kat/*  # a reason\n"


# -- 6. devices and pipes are written directly, symlinks followed ---------------------------------

def test_an_output_that_is_a_pipe_is_written_into_not_replaced(tmp_path, kat_run):
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    try:
        result = rngcheck("report", str(kat_run[0]), "--summary", str(fifo), timeout=120)
        assert result.returncode == 0, result.stderr
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
        received, _ = reader.communicate(timeout=60)
        assert "rngcheck" in received and "PASS" in received
    finally:
        reader.kill()


def test_an_output_that_is_a_symlink_writes_its_target(tmp_path, kat_run):
    target = tmp_path / "real.csv"
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert rngcheck("export", str(kat_run[0]), "--csv", str(link), "--quiet").returncode == 0
    assert link.is_symlink() and target.read_text().startswith("run,")
    summary_target = tmp_path / "real.md"
    (tmp_path / "summary.md").symlink_to(summary_target)
    assert rngcheck("report", str(kat_run[0]), "--summary", str(tmp_path / "summary.md")).returncode == 0
    assert (tmp_path / "summary.md").is_symlink() and "PASS" in summary_target.read_text()


# -- 9. outputs are locked, not only the journal --------------------------------------------------

def test_two_runs_writing_one_json_cannot_both_succeed(tmp_path):
    spec = backend_file(tmp_path, "HangsEveryCall")
    out = tmp_path / "out.json"
    first = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", spec, "--case", "kat",
                              "--json", str(out), "--journal", str(tmp_path / "one.journal.jsonl"), "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: (tmp_path / "one.journal.jsonl").exists()
                   and (tmp_path / "one.journal.jsonl").stat().st_size > 0, what="the first run's start")
        second = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out),
                          "--journal", str(tmp_path / "two.journal.jsonl"), "--quiet")
        one_line_error(second, 2, "--json", "locked")
        first.send_signal(signal.SIGTERM)
        _, stderr = first.communicate(timeout=120)
        assert first.returncode == 130, stderr
        assert json.loads(out.read_text())["interrupted"] is True   # the first run's document, whole
    finally:
        first.kill()


def test_output_locks_leave_nothing_behind(tmp_path):
    out = tmp_path / "out.json"
    result = rngcheck("run", "--backend", "nosuchbackend", "--case", "kat", "--json", str(out), "--quiet")
    assert result.returncode == 2 and list(tmp_path.iterdir()) == []   # refused: no output, no lock file
    result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.journal.jsonl", "out.json"]


# -- 10. a journal whose last line is whole but not JSON ----------------------------------------

def test_resume_after_a_last_line_that_is_not_json_leaves_a_readable_journal(tmp_path):
    from rngcheck.results import journal as J

    path = _journal_with(tmp_path)
    with open(path, "a") as file:
        file.write("this is not json\n")
    result = rngcheck("run", "--resume", str(path), "--quiet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    document, _ = J.read(path)
    assert document["complete"] and document["results"]
    assert "this is not json" not in path.read_text()
    assert rngcheck("report", str(path), "--summary", str(tmp_path / "s.md")).returncode == 0


# -- 11. a second Ctrl-C still writes the partial document --------------------------------------

def test_a_second_interrupt_still_writes_the_partial_document(tmp_path):
    spec = backend_file(tmp_path, "HangsEveryCall")
    out = tmp_path / "out.json"
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", spec, "--backend", "numpy",
                                "--case", "mapping", "--json", str(out), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=sigint_as_a_terminal_sends_it)
    journal = tmp_path / "out.journal.jsonl"
    try:
        # the hanging backend's first call is under way once the journal names it
        wait_until(lambda: journal.exists() and '"backend"' in journal.read_text(),
                   what="the hanging backend's first case")
        process.send_signal(signal.SIGINT)
        time.sleep(1.0)   # the user presses Ctrl-C again a second later (the run is closing its backend)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 130, stderr
        assert "Traceback" not in stderr
        document = json.loads(out.read_text())
        assert document["interrupted"] and document["summary"]["verdict"] == "incomplete"
    finally:
        process.kill()


# -- 19. passed -> not applicable is a regression -----------------------------------------------

NOT_APPLICABLE_BACKEND = """
from rngcheck.backends.contract import Backend
from rngcheck.errors import NotApplicable


class Backend(Backend):
    name = "driver-update"
    validates = True

    def random_generator(self, state, sizes, strides, buffer, **kw):
        raise NotApplicable("this driver supports nothing any more")
"""


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


# -- 20. report and compare count the results; duplicates are an error --------------------------

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


# -- 21. the History view and compare --html escape what the older views escape -----------------

INVISIBLE = "imp\u202el\u200b\x1b\x00"


def test_history_and_compare_pages_escape_invisible_characters(tmp_path, kat_run):
    def rename(created):
        def edit(document):
            document["created"] = created
            for entry in document["backends"]:
                entry["name"] = INVISIBLE
                entry["describe"]["version"] = "v\u202e1"
            for result in document["results"]:
                result["backend"] = INVISIBLE
        return edit

    old = edited_copy(kat_run[0], tmp_path / "old.json", rename("2001-01-01T00:00:00+00:00"))
    new = edited_copy(kat_run[0], tmp_path / "new.json", rename("2002-01-01T00:00:00+00:00"))
    new_doc = json.loads(new.read_text())
    new_doc["results"][0]["status"] = "failed"
    new.write_text(json.dumps(new_doc))
    page = tmp_path / "r.html"
    assert rngcheck("report", str(old), str(new), "--html", str(page)).returncode in (0, 1)
    html = page.read_text(encoding="utf-8")
    assert 'id="trend"' in html
    compare_page = tmp_path / "c.html"
    assert rngcheck("compare", str(old), str(new), "--html", str(compare_page)).returncode == 1
    for text in (html, compare_page.read_text(encoding="utf-8")):
        assert not re.search("[\x00\x1b\u200b\u202e]", text)
        assert "\\u202e" in text


# -- 22 (part): small inputs, one line each -------------------------------------------------------

def test_an_unknown_backend_option_is_named_in_one_line():
    result = rngcheck("run", "--backend", "directml:bogus=1", "--case", "kat", "--quiet")
    one_line_error(result, 2, "bogus", "adapter")
    assert "TypeError" not in result.stderr and "__init__" not in result.stderr


def test_a_directml_library_given_by_bare_name_is_loaded_from_that_file(tmp_path, monkeypatch):
    from rngcheck.backends.directml import loader, vkd3d

    (tmp_path / "libc.so.6").write_bytes(b"not a library")   # a bare name the loader would find elsewhere
    monkeypatch.chdir(tmp_path)
    path, _ = vkd3d.directml_path("libc.so.6")
    assert path.is_absolute() and path == tmp_path / "libc.so.6"
    assert loader._directml_candidates("libdirectml.so", "libc.so.6") == [str(tmp_path / "libc.so.6")]


@pytest.mark.parametrize("state", ["0,0,0,0,1,1_000", "0,0,0,0,1,\uff11", "0,0,0,0,1,\u0661"])
def test_state_words_are_ascii_integers(state):
    one_line_error(rngcheck("repro", "--backend", "numpy", "--state", state, "--sizes", "4"), 2, "--state")


def test_a_huge_stride_is_said_without_a_made_up_buffer():
    result = rngcheck("repro", "--backend", "numpy", "--state", "0,0,0,0,1,2", "--sizes", "2,2",
                      "--strides", "9223372036854775807,1")
    one_line_error(result, 2)
    assert not re.search(r"\d{16}", result.stderr), result.stderr


def test_a_run_leaves_no_hypothesis_folder_in_the_working_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env["RNGCHECK_CACHE"] = str(tmp_path / "cache")
    work = tmp_path / "work"
    work.mkdir()
    result = rngcheck("run", "--backend", "numpy", "--case", "property", "--quiet", cwd=work, env=env)
    assert result.returncode == 0, result.stderr
    assert not (work / ".hypothesis").exists() and list(work.iterdir()) == []


def test_repro_has_a_timeout(tmp_path):
    spec = backend_file(tmp_path, "HangsEveryCall")
    started = time.monotonic()
    result = rngcheck("repro", "--backend", spec, "--state", "0,0,0,0,1,2", "--sizes", "8", "--timeout", "2",
                      timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "timeout" in result.stdout and time.monotonic() - started < 90
