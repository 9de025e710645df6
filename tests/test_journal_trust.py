"""A journal is data: what its header may start, which outputs it may write, what a damaged one reads
as (hardening rounds 2 and 3)."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from helpers import sigint_as_a_terminal_sends_it
from probes import FAULTS, _journal_with, one_line_error, rngcheck, wait_until


@pytest.mark.parametrize("field, value, words", [
    ("timeout", "soon", "timeout"), ("timeout", -1, "timeout"), ("backends", [1, 2], "backends"),
    ("stats", "galactic", "stats"), ("profile", "ultra", "profile"), ("seed", "x", "seed"),
    ("outputs", {"html": "/etc/passwd"}, "outputs"),
])
def test_resume_validates_every_header_field(tmp_path, field, value, words):
    path = _journal_with(tmp_path, **{field: value})
    one_line_error(rngcheck("run", "--resume", str(path)), 2, words)


def test_resume_refuses_an_exec_backend_the_user_did_not_name(tmp_path):
    marker = tmp_path / "ran"
    spec = f"exec:touch {marker}"
    path = _journal_with(tmp_path, backends=[spec])
    one_line_error(rngcheck("run", "--resume", str(path)), 2, "--trust-journal", spec)
    assert not marker.exists()
    # named again by the user, it is started (and fails its handshake: one line)
    again = rngcheck("run", "--resume", str(path), "--backend", spec)
    assert again.returncode == 2 and marker.exists() and "Traceback" not in again.stderr


def test_a_second_writer_of_the_same_journal_is_refused(tmp_path):
    out = tmp_path / "r.json"
    first = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", f"{FAULTS}:HangsEveryCall",
                              "--case", "mapping", "--timeout", "600", "--json", str(out), "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from rngcheck.results import journal as J
        journal = J.journal_path_for(out)
        wait_until(lambda: journal.exists() and '"backend"' in journal.read_text(), what="the first run's start")
        second = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out))
        one_line_error(second, 2, "another rngcheck")   # its --json (locked first) or journal is being written
        assert '"spec":"numpy"' not in journal.read_text() and not out.exists()
        assert first.poll() is None  # the first run was not disturbed
    finally:
        first.kill()
        first.wait(timeout=60)


def test_resume_rewrites_every_output_and_an_interrupted_junit_says_so(tmp_path):
    out, junit_path, html_path = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "r.html"
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", f"{FAULTS}:Slow",
                                "--case", "mapping", "--json", str(out), "--junit", str(junit_path),
                                "--html", str(html_path), "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               preexec_fn=sigint_as_a_terminal_sends_it)
    from rngcheck.results import journal as J
    journal = J.journal_path_for(out)
    wait_until(lambda: journal.exists() and journal.read_text().count('"result"') >= 3, what="three results")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=120) == 130
    interrupted = ET.parse(junit_path).getroot()
    assert interrupted.find(".//testcase[@name='run-complete']/error") is not None
    assert interrupted.find(".//property[@name='rngcheck.complete']").get("value") == "false"
    badge = '<span class="badge s-SUSPECT">incomplete</span>'
    assert badge in html_path.read_text()
    # the journal's --junit and --html are rewritten when trusted (tests/test_output_files.py: not otherwise)
    resumed = rngcheck("run", "--resume", str(journal), "--backend", f"{FAULTS}:Slow", "--trust-journal")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming {journal} with {FAULTS}:Slow" in resumed.stderr
    final = ET.parse(junit_path).getroot()
    assert final.find(".//testcase[@name='run-complete']") is None
    assert int(final.get("tests")) == len(json.loads(out.read_text())["cases"])
    assert badge not in html_path.read_text()


@pytest.mark.parametrize("record", [{"backend": {"name": 1}}, {"backend": {"name": "a"}},
                                    {"result": {"backend": "a", "case": 7}}, {"result": {"case": "x"}}])
def test_a_journal_record_of_the_wrong_shape_is_one_line_on_resume_and_report(tmp_path, record):
    path = _journal_with(tmp_path)
    with open(path, "a") as journal:
        journal.write(json.dumps(record) + "\n" + json.dumps({"result": {}}) + "\n")
    one_line_error(rngcheck("run", "--resume", str(path)), 2, "line 2")
    one_line_error(rngcheck("report", str(path)), 2, "line 2")


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
