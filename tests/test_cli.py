"""The command line: exit codes, one-line errors, the documents it writes."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import in_process
from probes import rngcheck

PANEL = str(Path(__file__).parent / "panel.py")


def test_quick_run_on_numpy_passes_and_writes_consistent_json_and_junit(tmp_path):
    result = rngcheck("run", "--backend", "numpy", "--json", str(tmp_path / "r.json"),
                      "--junit", str(tmp_path / "r.xml"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rngcheck: PASS" in result.stdout
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["schema"] == "rngcheck-result" and document["schema_version"] == 2
    assert document["summary"]["verdict"] == "pass"
    assert document["backends"][0]["describe"]["implementation"].startswith("rngcheck reference")
    assert "--seed 0" in document["reproduce"] and "--profile quick" in document["reproduce"]
    root = ET.parse(tmp_path / "r.xml").getroot()
    assert int(root.get("tests")) == len(document["results"])
    assert int(root.get("failures")) == 0
    assert len(root.findall(".//testcase")) == len(document["results"])


def test_a_broken_backend_exits_1_and_junit_counts_match_json(tmp_path):
    result = rngcheck("run", "--backend", f"{PANEL}:Only4D", "--case", "mapping", "--json", str(tmp_path / "r.json"),
                      "--junit", str(tmp_path / "r.xml"))
    assert result.returncode == 1
    assert "rank-4-only" in result.stdout
    document = json.loads((tmp_path / "r.json").read_text())
    root = ET.parse(tmp_path / "r.xml").getroot()
    failed = sum(r["status"] == "failed" and r["required"] for r in document["results"])
    assert int(root.get("failures")) == failed > 0


@pytest.mark.parametrize("args, message", [
    (["run", "--backend", "nosuch"], "unknown backend 'nosuch'"),
    (["run", "--backend", "nosuch_module_xyz:Thing"], "cannot import module 'nosuch_module_xyz'"),
    (["run", "--backend", "/nonexistent/file.py:X"], "does not exist"),
    (["run", "--backend", f"{PANEL}:NoSuchAttr"], "has no attribute 'NoSuchAttr'"),
    (["run", "--backend", "json:dumps"], "creating backend 'json:dumps' failed"),
    (["run", "--backend", "json:JSONDecodeError"], "creating backend"),
    (["run", "--backend", "json:__doc__"], "is not a backend"),
    (["run", "--backend", "numpy:bogus"], "is not key=value"),
    (["repro", "--backend", "numpy", "--state", "1,2,3", "--sizes", "4"], "expected 6 values"),
    (["repro", "--backend", "numpy", "--state", "1,2,3,4,5,x", "--sizes", "4"], "not a comma-separated list"),
    (["repro", "--backend", "numpy", "--state", "0,0,0,0,0,0x1ffffffff", "--sizes", "4"], "every word must be"),
    (["vectors", "export", "--out", "/proc/rngcheck-nowhere"], "cannot export to"),
    (["run", "--backend", "numpy", "--json", "/proc/rngcheck-nowhere/r.json"], "cannot write"),
    (["repro", "--backend", "numpy", "--state", "0,0,0,0,0,0", "--sizes", "4", "--json",
      "/proc/rngcheck-nowhere/r.json"], "cannot write"),
    (["run", "--backend", "numpy", "--timeout", "nan"], "not a positive number of seconds"),
    (["run", "--backend", "numpy", "--timeout", "-1"], "not a positive number of seconds"),
    (["run", "--backend", "numpy", "--expected-failures", "/nonexistent/known.txt"],
     "cannot read the expected-failures"),
    (["run", "--backend", "numpy", "--baseline", "/nonexistent/base.json"], "cannot read document"),
    (["compare", "/nonexistent/a.json", "/nonexistent/b.json"], "cannot read document"),
    (["export", "/nonexistent/a.json"], "one of the arguments --csv --parquet is required"),
    (["export", "/nonexistent/a.json", "--csv", "t.csv"], "cannot read document"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, capsys):
    code, out, err = in_process(capsys, *args)
    assert code == 2, out + err
    assert message in err
    assert "Traceback" not in err
    assert len([ln for ln in err.strip().splitlines() if "error" in ln]) == 1


@pytest.mark.parametrize("args, message", [
    (["run", "--backend", "nosuch"], "unknown backend 'nosuch'"),
    (["run", "--backend", "numpy", "--timeout", "nan"], "not a positive number of seconds"),
])
def test_bad_input_in_a_real_process(args, message):
    result = rngcheck(*args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len([ln for ln in result.stderr.strip().splitlines() if "error" in ln]) == 1


def test_repro_passes_a_correct_backend_and_diagnoses_a_broken_one():
    correct = rngcheck("repro", "--backend", f"{PANEL}:KnobbedPhilox", "--state", "0xffffffff,0,0,0,1,2",
                       "--sizes", "8")
    assert correct.returncode == 0 and "rngcheck: PASS" in correct.stdout
    broken = rngcheck("repro", "--backend", f"{PANEL}:Crashes", "--state", "0,0,0,0,1,2", "--sizes", "8")
    assert broken.returncode == 1 and "RuntimeError: device lost" in broken.stdout


def test_backends_lists_numpy_as_available():
    result = rngcheck("backends")
    assert result.returncode == 0
    assert any(line.startswith("numpy") and "available" in line for line in result.stdout.splitlines())
    listed = json.loads(rngcheck("backends", "--json").stdout)
    numpy = next(k for k in listed if k["name"] == "numpy")
    assert {k: numpy[k] for k in ("target", "available", "reason")} == {
        "target": "rngcheck.backends.reference:NumpyBackend", "available": True, "reason": ""}
    assert numpy["describe"]["implementation"].startswith("rngcheck reference")


def test_backends_with_specs_shows_what_each_says_of_itself():
    result = rngcheck("backends", "numpy", "directml:lib=no-such-build")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("numpy") and "available" in lines[0]
    assert any(ln.strip().startswith("implementation:") and "rngcheck reference" in ln for ln in lines)
    unavailable = next(ln for ln in lines if ln.startswith("directml:lib=no-such-build"))
    assert "unavailable:" in unavailable


def test_vectors_list_shows_the_errata_and_export_writes_the_files(tmp_path):
    result = rngcheck("vectors", "list")
    assert "7479615c" in result.stdout and "philox4x32 10" in result.stdout
    result = rngcheck("vectors", "export", "--out", str(tmp_path))
    assert result.returncode == 0
    assert (tmp_path / "operator.json").is_file() and (tmp_path / "random123_kat.json").is_file()


def test_pytest_plugin_runs_the_suite_and_is_inert_without_a_backend(tmp_path):
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
                          "rngcheck.conformance", "--rngcheck-backend", "numpy", "-k", "kat or mapping"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:]
    assert " passed" in run.stdout
    broken = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
                             "rngcheck.conformance", "--rngcheck-backend", f"{PANEL}:Only4D", "-k", "mapping"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert broken.returncode == 1
    assert "rank-4-only" in broken.stdout
    none = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
                           "rngcheck.conformance"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert none.returncode != 0
    assert "needs a backend" in none.stdout


def test_numpy_passes_the_full_and_strict_profiles():
    from rngcheck.backends import load
    from rngcheck.conformance.runner import NamedBackend, RunOptions, run

    for profile in ("full", "strict"):
        document = run([NamedBackend("numpy", load("numpy"))], RunOptions(profile=profile))
        assert document["summary"]["verdict"] == "pass", profile
        assert document["summary"]["counts"]["passed"] > 100
        categories = {c["category"] for c in document["cases"]}
        assert {"kat", "vectors", "mapping", "counter", "key", "layout", "state", "validation", "property",
                "scale"} <= categories


def test_impossible_descriptions_in_repro_are_usage_errors(capsys):
    for args in (["--sizes", "2,0"], ["--sizes", "2,3", "--strides", "1"], ["--sizes", "2", "--feature-level", "x"],
                 ["--sizes", "65536,65535"]):
        code, out, err = in_process(capsys, "repro", "--backend", "numpy", "--state", "0,0,0,0,0,0", *args)
        assert code == 2 and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1


def test_failures_print_a_ready_to_paste_reproduction():
    result = rngcheck("run", "--backend", f"{PANEL}:Only4D", "--case", "mapping/rank-2")
    assert result.returncode == 1
    line = next(ln for ln in result.stdout.splitlines() if "reproduce: rngcheck repro" in ln)
    command = line.split("reproduce: ", 1)[1].split()
    again = rngcheck(*command[1:])
    assert again.returncode == 1 and "rank-4-only" in again.stdout


def test_without_an_opencl_platform_opencl_is_listed_unavailable_and_run_exits_2(tmp_path):
    import os

    env = dict(os.environ, OCL_ICD_VENDORS=str(tmp_path))  # an ICD directory with no vendor in it
    listing = subprocess.run([sys.executable, "-m", "rngcheck", "backends"], capture_output=True, text=True, env=env)
    line = next(ln for ln in listing.stdout.splitlines() if ln.startswith("opencl"))
    assert "unavailable: no OpenCL platform found" in line
    run = subprocess.run([sys.executable, "-m", "rngcheck", "run", "--backend", "opencl"], capture_output=True,
                         text=True, env=env)
    assert run.returncode == 2 and "no OpenCL platform" in run.stderr and "Traceback" not in run.stderr
    default = subprocess.run([sys.executable, "-m", "rngcheck", "run", "--quiet", "--case", "kat"],
                             capture_output=True, text=True, env=env)
    assert default.returncode == 0 and "opencl not used" in default.stderr


def test_exec_without_a_command_is_a_usage_error(capsys):
    code, _, err = in_process(capsys, "run", "--backend", "exec")
    assert code == 2 and "needs a command" in err


def test_run_with_stats_puts_the_battery_into_the_result_document_and_report(tmp_path):
    result = rngcheck("run", "--backend", "numpy", "--case", "kat", "--stats", "smoke",
                      "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"))
    assert result.returncode == 0, result.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    (stats,) = document["stats"]
    assert stats["schema"] == "rngcheck-stats" and stats["tier"] == "smoke" and stats["verdict"] == "PASS"
    assert len(stats["results"]) > 50
    report = rngcheck("report", str(tmp_path / "r.json"), "--summary", str(tmp_path / "s.md"))
    assert "1 stats documents" in report.stdout


def test_an_interrupt_replaced_by_a_clean_up_error_is_still_an_interrupt(monkeypatch, capsys):
    """SIGTERM's KeyboardInterrupt raised inside a library's ``finally`` can be replaced by what that
    clean-up raises (matplotlib's savefig: AttributeError); after a SIGTERM any exception is the interrupt."""
    import pytest

    from rngcheck import cli

    def interrupted_then_broken(argv):
        cli._TERMINATED.append(15)
        raise AttributeError("'Axes' object has no attribute 'apply_aspect'")

    monkeypatch.setattr(cli, "_TERMINATED", [])
    monkeypatch.setattr(cli, "_main", interrupted_then_broken)
    assert cli.main(["report"]) == cli.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "rngcheck: interrupted\n"

    def broken(argv):
        raise AttributeError("a bug, no signal")
    monkeypatch.setattr(cli, "_TERMINATED", [])
    monkeypatch.setattr(cli, "_main", broken)
    with pytest.raises(AttributeError):   # without a signal, a bug stays a bug
        cli.main(["report"])
