"""Hardening, round 4, items 8-12 and part of 17 ("Outputs"): every file a command writes is
written whole, checked and locked the same way by every command, a device or a pipe as an output
gets no file beside it, a planted lock file is not followed, a pipe without a reader is one line
(never a hang), a journal rewrites no output on its own, and a long output name is taken.

Tests with processes poll with generous limits; none depends on a fixed sleep to pass. Two need
root (they say so and are skipped otherwise): mounting a small tmpfs, and writing in /dev."""

from __future__ import annotations

import errno
import json
import os
import shlex
import signal
import stat
import subprocess
import sys
import time
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest

from helpers import require
from probes import FAULTS, _journal_with, backend_file, edited_copy, one_line_error, rngcheck, run_args, wait_until
from rngcheck.cli import main

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
STATE = "0xffffffff,0,0,0,1,2"


@pytest.fixture(scope="module")
def kat_document(tmp_path_factory) -> Path:
    """A finished run of the reference on the known-answer cases."""
    out = tmp_path_factory.mktemp("kat") / "a.json"
    result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def bit_file(tmp_path_factory) -> Path:
    """8,000 random bits: eight sequences of `nist --length 1000` (a few seconds)."""
    path = tmp_path_factory.mktemp("bits") / "bits.bin"
    path.write_bytes(np.random.default_rng(1).bytes(1000))
    return path


def nist_args(bits: Path, out) -> list[str]:
    return ["nist", str(bits), "--length", "1000", "--workers", "1", "--quiet", "--json", str(out)]


def leftovers(folder: Path) -> list[str]:
    """Lock and temporary files rngcheck may have left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".rngcheck-lock", ".tmp")))


# -- 8. nist --json: checked like every output, written whole ----------------------------------

def test_nist_refuses_a_json_over_its_bit_file(bit_file):
    before = bit_file.read_bytes()
    one_line_error(rngcheck(*nist_args(bit_file, bit_file)), 2, "--json", "is the input", "refusing to overwrite")
    assert bit_file.read_bytes() == before


def test_a_failed_nist_write_leaves_the_previous_document_whole(tmp_path, bit_file, monkeypatch, capsys):
    """A full disk, simulated in-process: the write's flush to disk fails with ENOSPC."""
    from rngcheck import jsonfile

    out = tmp_path / "nist.json"
    out.write_text('{"previous": "document"}\n')

    def full_disk(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(jsonfile.os, "fsync", full_disk)
    assert main(nist_args(bit_file, out)) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"rngcheck: error: cannot write {out}: "
                                                            f"{os.strerror(errno.ENOSPC)}"]
    assert out.read_text() == '{"previous": "document"}\n' and sorted(p.name for p in tmp_path.iterdir()) == [
        "nist.json"]


@pytest.mark.skipif(not ROOT, reason="mounting a tmpfs needs root (CI runs as root)")
def test_nist_json_on_a_full_tmpfs_leaves_the_previous_document_whole(tmp_path, bit_file):
    """A real full disk: a 64 KiB tmpfs, smaller than the new document (some 120 KB)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        out = disk / "nist.json"
        out.write_text('{"previous": "document"}\n')
        result = rngcheck(*nist_args(bit_file, out))
        one_line_error(result, 2, f"cannot write {out}", "No space left on device")
        assert out.read_text() == '{"previous": "document"}\n' and [p.name for p in disk.iterdir()] == ["nist.json"]
    finally:
        subprocess.run(["umount", str(disk)], check=True)


# -- 9. one lock, taken and respected by every command that writes ------------------------------

def test_every_command_respects_the_lock_of_a_run_writing_the_same_file(tmp_path, kat_document, bit_file):
    out, page = tmp_path / "S.json", tmp_path / "S.html"
    other = edited_copy(kat_document, tmp_path / "b.json", lambda document: None)
    first = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend",
                              backend_file(tmp_path, "HangsEveryCall"), "--case", "kat", "--timeout", "600",
                              "--json", str(out), "--html", str(page), "--quiet"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        journal = tmp_path / "S.journal.jsonl"   # its header is written once the outputs are locked
        wait_until(lambda: journal.exists() and journal.stat().st_size > 0, what="the run's start")
        writers = {
            "report --html": ["report", str(kat_document), "--html", str(page)],
            "report --summary": ["report", str(kat_document), "--summary", str(out)],
            "compare --html": ["compare", str(kat_document), str(other), "--html", str(page)],
            "export --csv": ["export", str(kat_document), "--csv", str(out)],
            "stats --json": ["stats", "--backend", "numpy", "--tier", "smoke", "--json", str(out)],
            "nist --json": nist_args(bit_file, out),
            "repro --json": ["repro", "--backend", "numpy", "--state", STATE, "--sizes", "8", "--json", str(out)],
        }
        for what, args in writers.items():
            result = rngcheck(*args)
            assert result.returncode == 2 and "locked" in result.stderr, (what, result.stderr)
            one_line_error(result, 2, "another rngcheck command is writing this file")
            assert not out.exists() and not page.exists(), what
        assert first.poll() is None   # the run was not disturbed
        first.send_signal(signal.SIGTERM)
        _, stderr = first.communicate(timeout=120)
        assert first.returncode == 130, stderr
        assert json.loads(out.read_text())["interrupted"] is True   # the run's own document
        assert leftovers(tmp_path) == []
    finally:
        first.kill()


def test_a_run_respects_the_lock_of_another_command(tmp_path):
    from rngcheck.outputs import claim_outputs

    page = tmp_path / "S.html"
    with claim_outputs({"--html": page}):   # as report, compare, export, stats, nist and repro hold it
        result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--html", str(page), "--quiet")
        one_line_error(result, 2, "--html", "locked")
    assert not page.exists() and leftovers(tmp_path) == []


# -- 10. a device or a pipe as an output gets no file beside it ---------------------------------

@pytest.mark.skipif(not ROOT, reason="as root, a journal beside /dev/null is made in /dev (the bug this checks)")
def test_json_to_dev_null_makes_nothing_in_dev():
    stray = Path("/dev/null.journal.jsonl")
    existed = stray.exists()
    try:
        result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", "/dev/null", "--quiet",
                          timeout=300)
        assert result.returncode == 0, result.stderr
        assert stray.exists() == existed and not Path("/dev/.null.rngcheck-lock").exists()
        assert result.stderr.strip().splitlines() == [
            "rngcheck: --json /dev/null is not a regular file: no journal is kept beside it "
            "(give --journal FILE to keep one)"]
    finally:
        if stray.exists() and not existed:
            stray.unlink()


def test_json_through_a_link_to_a_device_gets_no_file_beside_it(tmp_path):
    link = tmp_path / "out.json"
    link.symlink_to(os.devnull)
    result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(link), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "no journal is kept" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"] and link.is_symlink()


def test_json_into_a_pipe_gets_no_journal_or_lock_beside_it(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    try:
        result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(fifo), "--quiet")
        assert result.returncode == 0, result.stderr
        received, _ = reader.communicate(timeout=60)
        assert json.loads(received)["summary"]["verdict"] == "pass"
        assert [p.name for p in tmp_path.iterdir()] == ["out.json"] and stat.S_ISFIFO(fifo.lstat().st_mode)
    finally:
        reader.kill()


def test_a_journal_that_is_a_pipe_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "journal.fifo"
    os.mkfifo(fifo)
    result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--journal", str(fifo), "--quiet", timeout=120)
    one_line_error(result, 2, f"--journal {fifo}: not a regular file")


# -- 11. a lock file is never followed ----------------------------------------------------------

def test_a_planted_lock_symlink_is_refused_not_followed(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    planted = home / ".M.json.rngcheck-lock"
    planted.symlink_to("../anything")
    result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(home / "M.json"), "--quiet")
    one_line_error(result, 2, str(planted), "not a regular file")
    assert not (tmp_path / "anything").exists() and planted.is_symlink()
    assert not (home / "M.json").exists()


def test_a_planted_lock_pipe_is_refused(tmp_path, kat_document):
    planted = tmp_path / ".out.csv.rngcheck-lock"
    os.mkfifo(planted)
    result = rngcheck("export", str(kat_document), "--csv", str(tmp_path / "out.csv"), timeout=120)
    one_line_error(result, 2, str(planted), "not a regular file")
    assert stat.S_ISFIFO(planted.lstat().st_mode) and not (tmp_path / "out.csv").exists()


# -- 12. a pipe without a reader; outputs a journal names ----------------------------------------

def test_an_output_pipe_without_a_reader_is_one_line_and_the_rest_is_written(tmp_path):
    fifo = tmp_path / "page.html"
    os.mkfifo(fifo)
    out = tmp_path / "r.json"
    result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out), "--html", str(fifo),
                      "--quiet", timeout=120)   # a hang is a TimeoutExpired here
    one_line_error(result, 2, f"cannot write {fifo}", "no process is reading")
    assert json.loads(out.read_text())["summary"]["verdict"] == "pass"
    assert json.loads((tmp_path / "r.journal.jsonl").read_text().splitlines()[-1]).get("end")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html", "r.journal.jsonl", "r.json"]


def test_stats_into_a_pipe_without_a_reader_is_one_line(tmp_path):
    fifo = tmp_path / "stats.json"
    os.mkfifo(fifo)
    result = rngcheck("stats", "--backend", "numpy", "--tier", "smoke", "--bytes", "64K", "--quiet", "--json",
                      str(fifo), timeout=120)
    one_line_error(result, 2, "no process is reading")


def test_resume_writes_no_output_the_journal_names_unless_told(tmp_path):
    victim = tmp_path / "victim.html"
    victim.write_text("keep me")
    path = _journal_with(tmp_path, outputs={"html": "victim.html"})
    one_line_error(rngcheck("run", "--resume", str(path), "--quiet", cwd=tmp_path), 2,
                   f"--html {victim}", "--trust-journal")
    assert victim.read_text() == "keep me"
    again = rngcheck("run", "--resume", str(path), "--quiet", "--html", str(victim), cwd=tmp_path)
    assert again.returncode == 0, again.stderr   # the user gave it: written
    assert "<html" in victim.read_text().lower()


def test_resume_writes_the_journals_output_with_trust(tmp_path):
    path = _journal_with(tmp_path, outputs={"junit": "j.xml"})
    result = rngcheck("run", "--resume", str(path), "--quiet", "--trust-journal", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"the journal asks for --junit {tmp_path / 'j.xml'}" in result.stderr
    assert (tmp_path / "j.xml").read_text().startswith("<?xml")


def test_the_resume_hint_gives_the_outputs_again(tmp_path):
    from rngcheck.cli import _resume_command

    journal = tmp_path / "other.journal.jsonl"
    args = Namespace(json=str(tmp_path / "r.json"), junit=str(tmp_path / "j x.xml"), html=None)
    assert shlex.split(_resume_command(args, journal)) == [
        "rngcheck", "run", "--resume", str(journal), "--json", str(tmp_path / "r.json"),
        "--junit", str(tmp_path / "j x.xml")]
    args = Namespace(json=str(tmp_path / "other.json"), junit=None, html=None)
    assert shlex.split(_resume_command(args, journal)) == ["rngcheck", "run", "--resume", str(journal)]


# -- 17 (part). a long output name is taken, its derived names shortened -------------------------

def test_a_json_name_of_255_bytes_runs_with_a_journal_and_lock_that_fit(tmp_path):
    from rngcheck.outputs import lock_path
    from rngcheck.results import journal as J

    out = tmp_path / ("r" * 250 + ".json")
    journal = J.journal_path_for(out)
    assert len(journal.name) <= 255 and journal.name.endswith(".journal.jsonl") and journal.name.startswith("rrr")
    assert journal != J.journal_path_for(tmp_path / ("r" * 249 + "s.json"))   # the hash tells long names apart
    assert len(lock_path(out).name) <= 255 and lock_path(out).name.endswith(".rngcheck-lock")
    result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["summary"]["verdict"] == "pass"
    assert J.read(journal)[0]["complete"] and sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [out.name, journal.name])


def test_every_writer_takes_a_name_of_255_bytes(tmp_path, kat_document):
    summary, table = tmp_path / ("s" * 252 + ".md"), tmp_path / ("t" * 251 + ".csv")
    assert rngcheck("report", str(kat_document), "--summary", str(summary)).returncode == 0
    assert rngcheck("export", str(kat_document), "--csv", str(table), "--quiet").returncode == 0
    assert "PASS" in summary.read_text() and table.read_text().startswith("run,")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([summary.name, table.name])


@pytest.mark.parametrize("options", [
    ["--json", "{d}/a", "--junit", "{d}/a"], ["--json", "{d}/a", "--html", "{d}/./a"],
    ["--json", "{d}/a.json", "--journal", "{d}/a.json"], ["--junit", "{d}/x", "--html", "{d}/x"],
])
def test_one_path_for_two_outputs_is_refused_before_anything_runs(tmp_path, options):
    result = run_args(tmp_path, *[o.format(d=tmp_path) for o in options])
    one_line_error(result, 2, "same file")
    assert not list(tmp_path.iterdir())


def test_report_refuses_to_write_over_its_input(tmp_path):
    doc = tmp_path / "a.json"
    assert run_args(tmp_path, "--json", str(doc)).returncode == 0
    before = doc.read_bytes()
    one_line_error(rngcheck("report", str(doc), "--html", str(doc)), 2, "refusing to overwrite")
    assert doc.read_bytes() == before


def test_an_unwritable_output_is_refused_before_the_run(tmp_path):
    start = time.monotonic()
    result = run_args(tmp_path, "--junit", "/proc/rngcheck-junit.xml", backend=f"{FAULTS}:Slow", case="mapping")
    one_line_error(result, 2, "cannot write --junit /proc/rngcheck-junit.xml")
    assert time.monotonic() - start < 60


def test_a_write_failing_after_the_run_still_prints_the_verdict(tmp_path, monkeypatch, capsys):
    from rngcheck import cli
    from rngcheck.reports import junit

    def full_disk(document, path):
        raise cli.RngcheckError(f"cannot write {path}: No space left on device")
    monkeypatch.setattr(junit, "write", full_disk)
    code = cli.main(["run", "--backend", "numpy", "--case", "kat", "--junit", str(tmp_path / "j.xml"),
                     "--json", str(tmp_path / "r.json")])
    captured = capsys.readouterr()
    assert code == 2 and "rngcheck: PASS" in captured.out
    assert captured.err.strip().splitlines() == [f"rngcheck: error: cannot write {tmp_path / 'j.xml'}: "
                                                 f"No space left on device"]
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["verdict"] == "pass"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from rngcheck import jsonfile
    target = tmp_path / "junit.xml"
    target.write_text("<old/>")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(jsonfile.os, "fsync", broken_fsync)
    with pytest.raises(jsonfile.RngcheckError, match="No space left"):
        jsonfile.atomic_write(target, "<new/>" * 1000)
    assert target.read_text() == "<old/>" and [p.name for p in tmp_path.iterdir()] == ["junit.xml"]


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


@pytest.mark.parametrize("inside", [False, True])
def test_stats_json_over_the_checkpoint_is_refused_before_the_run(tmp_path, inside):
    require("distributed")
    checkpoint = tmp_path / "ck"
    target = checkpoint / "out.json" if inside else checkpoint
    result = rngcheck("stats", "--backend", "numpy", "--dask", "local:1", "--checkpoint", str(checkpoint),
                      "--json", str(target), "--quiet", timeout=120)
    one_line_error(result, 2, "--checkpoint")
    assert not checkpoint.exists()  # refused before the checkpoint (and the run) began


def test_stats_into_a_pipe_closed_early_keeps_the_verdicts_exit_code():
    process = subprocess.Popen(f"{sys.executable} -m rngcheck stats --backend numpy --json - 2>/dev/null | head -c 1 "
                               f">/dev/null; exit ${{PIPESTATUS[0]}}", shell=True, executable="/bin/bash",
                               cwd=os.getcwd())
    assert process.wait(timeout=300) == 0
