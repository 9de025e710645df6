"""Hardening, round 3 (issue #31): bounded resources and runs that end (items 7, 8, 12-17 and
part of 22). Each test fails without its fix; every refusal is one line without a traceback."""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from helpers import require
from rngcheck.backends.exec_backend import isolated
from rngcheck.cli import main
from test_hardening import call, one_line_error, rngcheck, wait_until

TESTS = Path(__file__).parent
FAULTS = str(TESTS / "faults_resources.py")


# -- 12: the restart rule ------------------------------------------------------------------------

def test_a_backend_that_answers_once_then_hangs_in_every_worker_is_given_up():
    from rngcheck.errors import BackendStopped, BackendTimeout

    backend = isolated(f"{FAULTS}:AnswersOnceThenHangs", timeout=2, max_restarts=2)
    outcomes = []
    try:
        for _ in range(8):
            try:
                call(backend)
                outcomes.append("answered")
            except BackendTimeout:
                outcomes.append("timeout")
            except BackendStopped as stopped:
                assert "calls hung" in str(stopped)
                outcomes.append("stopped")
    finally:
        backend.close()
    assert outcomes[:4] == ["answered", "timeout", "answered", "timeout"], outcomes
    assert set(outcomes[4:]) == {"stopped"}, outcomes  # two time limits in all, then nothing more


def test_a_non_validating_backend_that_crashes_on_invalid_descriptions_is_run_on_every_other_case(tmp_path):
    out = tmp_path / "r.json"
    result = rngcheck("run", "--backend", f"{FAULTS}:CrashesOnInvalid", "--case", "validation", "--case", "mapping",
                      "--case", "scale", "--timeout", "30", "--json", str(out), "--quiet")
    document = json.loads(out.read_text())
    statuses = {r["case"]: r["status"] for r in document["results"]}
    assert "not-run" not in statuses.values(), statuses
    assert [s for c, s in statuses.items() if c.startswith("validation/")].count("crashed") >= 3, statuses
    assert all(s == "passed" for c, s in statuses.items() if not c.startswith("validation/")), statuses
    assert result.returncode == 0, result.stderr[-2000:]


# -- 13: nist reads what the sequences need ----------------------------------------------------

def test_nist_reads_only_what_its_sequences_need_from_an_endless_pipe():
    with open("/dev/urandom", "rb") as endless:
        result = subprocess.run([sys.executable, "-m", "rngcheck", "nist", "-", "--sequences", "10", "--length",
                                 "1000", "--quiet", "--workers", "1"], stdin=endless, capture_output=True,
                                text=True, timeout=120)
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "pass" in result.stdout


def test_nist_refuses_a_device_without_sequences_and_reads_one_with_them(tmp_path):
    one_line_error(rngcheck("nist", "/dev/zero", timeout=60), 2, "a device never ends", "--sequences")
    out = tmp_path / "z.json"
    result = rngcheck("nist", "/dev/zero", "--sequences", "2", "--length", "1000", "--quiet", "--json", str(out),
                      timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert json.loads(out.read_text())["source"]["bits"] == 2000


def test_nist_ends_on_sigterm_while_it_reads():
    feeder = subprocess.Popen(["sleep", "120"], stdout=subprocess.PIPE)  # a pipe that never ends nor writes
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "nist", "-", "--quiet"], stdin=feeder.stdout,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    feeder.stdout.close()
    try:
        time.sleep(3)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode in (2, 130) and "Traceback" not in stderr, stderr[-2000:]
        assert len(stderr.strip().splitlines()) == 1, stderr
    finally:
        process.kill()
        feeder.kill()
        feeder.wait()


def test_nist_workers_zero_is_refused():
    one_line_error(rngcheck("nist", "--backend", "numpy", "--workers", "0"), 2, "--workers 0")


# -- 14: one bounded reader ------------------------------------------------------------------------

def _checkpoint(tmp_path):
    from rngcheck.stats.checkpoint import Checkpoint
    directory = tmp_path / "ck"
    with Checkpoint(directory, {"run": 1}) as checkpoint:
        checkpoint.save(0, [{"n": 1}])
    return directory


def test_a_checkpoint_manifest_nested_deep_is_one_line(tmp_path):
    from rngcheck.errors import RngcheckError
    from rngcheck.stats.checkpoint import Checkpoint
    directory = _checkpoint(tmp_path)
    (directory / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RngcheckError, match="deeper than"):
        Checkpoint(directory, {"run": 1})


@pytest.mark.parametrize("name", ["manifest.json", "range-000000.npz", "finished.jsonl"])
def test_a_checkpoint_file_that_is_a_symlink_to_a_device_is_refused_unread(tmp_path, name):
    from rngcheck.errors import RngcheckError
    from rngcheck.stats.checkpoint import Checkpoint
    directory = _checkpoint(tmp_path)
    (directory / name).unlink(missing_ok=True)
    (directory / name).symlink_to("/dev/zero")
    with pytest.raises(RngcheckError, match="not a regular file"):
        Checkpoint(directory, {"run": 1}).done()


def test_a_checkpoint_range_that_claims_a_trillion_accumulators_is_refused(tmp_path):
    import hashlib

    from rngcheck.errors import RngcheckError
    from rngcheck.stats.checkpoint import Checkpoint
    directory = _checkpoint(tmp_path)
    checkpoint = Checkpoint(directory, {"run": 1})
    buffer = io.BytesIO()
    np.savez(buffer, **{"meta/format": "rngcheck-checkpoint", "meta/index": 0, "meta/count": 10 ** 12,
                        "meta/identity": checkpoint.digest, "0/n": 1})
    (directory / "range-000000.npz").write_bytes(buffer.getvalue())
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["sha256"]["0"] = hashlib.sha256(buffer.getvalue()).hexdigest()
    (directory / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RngcheckError, match="accumulators"):
        Checkpoint(directory, {"run": 1}).done()


def test_a_checkpoint_range_that_inflates_to_gigabytes_is_refused(tmp_path, monkeypatch):
    import hashlib

    from rngcheck.errors import RngcheckError
    from rngcheck.stats import checkpoint as C
    directory = _checkpoint(tmp_path)
    monkeypatch.setattr(C, "MAX_FILE_BYTES", 1 << 20)  # the rule, at a size a test can afford
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
        packed.writestr("0/n.npy", b"\0" * (2 << 20))
    (directory / "range-000000.npz").write_bytes(buffer.getvalue())
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["sha256"]["0"] = hashlib.sha256(buffer.getvalue()).hexdigest()
    (directory / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RngcheckError, match="unpacks to"):
        C.Checkpoint(directory, {"run": 1}).done()


def test_an_expected_failures_file_that_is_a_device_is_refused_unread(tmp_path):
    one_line_error(rngcheck("run", "--backend", "numpy", "--case", "kat", "--expected-failures", "/dev/zero",
                            "--quiet", timeout=60), 2, "a device")


# -- 16: a Dask address that cannot work --------------------------------------------------------

@pytest.mark.parametrize("address", ["scheduler-file:{garbage}", "nosuch://127.0.0.1:1"])
def test_a_bad_dask_address_is_one_line_at_once(tmp_path, address):
    require("distributed")
    garbage = tmp_path / "garbage"
    garbage.write_text("GARBAGE")
    start = time.monotonic()
    result = rngcheck("stats", "--backend", "numpy", "--dask", address.format(garbage=garbage), timeout=120)
    one_line_error(result, 2, "--dask")
    assert time.monotonic() - start < 50  # not the finaliser's 60 s wait (a hang test, not a speed target)


# -- 17: limits and linear matching -------------------------------------------------------------

def test_an_exec_command_of_megabytes_is_refused_in_one_line(capsys):
    assert main(["run", "--backend", "exec:" + "a " * 1_500_000, "--case", "kat", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "characters, more than" in err, err[:500]


def test_an_expected_failures_file_past_its_entry_limit_is_one_line(tmp_path):
    from rngcheck.results import baseline as B
    path = tmp_path / "x.txt"
    path.write_text("".join(f"kat/c{i}  # r\n" for i in range(B.MAX_EXPECTED + 1)))
    one_line_error(rngcheck("run", "--backend", "numpy", "--case", "kat", "--expected-failures", str(path),
                            "--quiet", timeout=120), 2, f"more than {B.MAX_EXPECTED} expected failures")


def test_the_matcher_finds_the_first_entry_in_file_order_as_fnmatch_does():
    import fnmatch

    from rngcheck.results import baseline as B
    rng = random.Random(5)
    pieces = ["kat/", "layout/", "rank", "a", "b", "*", "?", "[ab]", "1", "-"]
    lines = []
    for _ in range(400):
        pattern = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))
        backend = rng.choice(["", "numpy::", "num*::", "*::", "jax::"])
        lines.append(f"{backend}{pattern}  # r")
    entries = B.parse_expected("\n".join(lines))
    match = B.Matcher(entries)
    for _ in range(2000):
        case = "".join(rng.choice(["kat/", "layout/", "rank", "a", "b", "1", "-", "x"]) for _ in range(3))
        backend = rng.choice(["numpy", "jax", "numbers"])
        naive = next((e for e in entries if fnmatch.fnmatchcase(case, e.pattern)
                      and fnmatch.fnmatchcase(backend, e.backend)), None)
        assert match(backend, case) == naive, (backend, case)


def test_compare_refuses_more_results_than_its_limit_in_one_line(tmp_path, monkeypatch):
    from rngcheck.errors import RngcheckError
    from rngcheck.reports import compare
    document = tmp_path / "a.json"
    assert main(["run", "--backend", "numpy", "--case", "kat", "--json", str(document), "--quiet"]) == 0
    other = json.loads(document.read_text())
    other["seed"] = 99
    (tmp_path / "b.json").write_text(json.dumps(other))
    monkeypatch.setattr(compare, "MAX_COMPARED", 1)
    with pytest.raises(RngcheckError, match="results to compare, more than"):
        compare.load(str(document), [str(tmp_path / "b.json")])


# -- 7: outputs checked before the run -----------------------------------------------------------

@pytest.mark.parametrize("inside", [False, True])
def test_stats_json_over_the_checkpoint_is_refused_before_the_run(tmp_path, inside):
    require("distributed")
    checkpoint = tmp_path / "ck"
    target = checkpoint / "out.json" if inside else checkpoint
    result = rngcheck("stats", "--backend", "numpy", "--dask", "local:1", "--checkpoint", str(checkpoint),
                      "--json", str(target), "--quiet", timeout=120)
    one_line_error(result, 2, "--checkpoint")
    assert not checkpoint.exists()  # refused before the checkpoint (and the run) began


# -- 22 (part) ------------------------------------------------------------------------------------

def test_shard_bytes_errors_name_shard_bytes():
    require("distributed")
    one_line_error(rngcheck("stats", "--backend", "numpy", "--dask", "local:1", "--shard-bytes", "3X"), 2,
                   "--shard-bytes: cannot read")


def test_an_all_zero_stream_gives_no_runtime_warning(tmp_path):
    zeros = tmp_path / "z.bin"
    zeros.write_bytes(b"\0" * (1 << 20))
    result = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "rngcheck", "stats", "--input",
                             str(zeros), "--quiet", "--workers", "1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "Warning" not in result.stderr, result.stderr[-2000:]


def test_stats_into_a_pipe_closed_early_keeps_the_verdicts_exit_code():
    process = subprocess.Popen(f"{sys.executable} -m rngcheck stats --backend numpy --json - 2>/dev/null | head -c 1 "
                               f">/dev/null; exit ${{PIPESTATUS[0]}}", shell=True, executable="/bin/bash",
                               cwd=os.getcwd())
    assert process.wait(timeout=300) == 0


def test_warnings_module_is_quiet_for_chi2_of_empty_samples():
    from rngcheck.stats.accumulators import chi2_counts
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(chi2_counts(np.zeros((1, 4)), np.full(4, 0.25))[0])


# -- 15: nothing outlives a SIGKILLed rngcheck ---------------------------------------------------

def _living(pattern: str) -> list[int]:
    """Processes whose command line holds ``pattern``, zombies left out."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if pattern in command and state != "Z" and int(entry) != os.getpid():
            found.append(int(entry))
    return found


def test_an_implementation_started_by_a_forking_wrapper_dies_with_a_sigkilled_rngcheck(tmp_path):
    marker = f"wrapped-{tmp_path.name}"
    child = f"{sys.executable} {TESTS / 'exec_child.py'} grandchild {marker}"
    wrapper = f"exec:sh -c '{child}; echo done'"
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", wrapper,
                                "--case", "mapping", "--quiet", "--timeout", "600"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": str(TESTS.parent)})
    try:
        wait_until(lambda: _living("sleep 301"), 120, "the trigger case's hang")
        assert _living(marker)
        process.kill()
        process.wait(timeout=30)
        wait_until(lambda: not _living(marker), 30, "the wrapped implementation's end")
    finally:
        process.kill()
        for pid in _living(marker):
            os.kill(pid, signal.SIGKILL)
        for pid in _living("sleep 301"):
            os.kill(pid, signal.SIGKILL)


def test_nist_workers_die_with_a_sigkilled_rngcheck(tmp_path):
    bits = tmp_path / f"bits-{tmp_path.name}.bin"
    bits.write_bytes(np.random.default_rng(1).integers(0, 256, 40 * 125_000, dtype=np.uint8).tobytes())
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "nist", str(bits), "--workers", "2", "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: len(_living(str(bits))) >= 3, 120, "the pool's start")  # rngcheck and its two workers
        process.kill()
        process.wait(timeout=30)
        wait_until(lambda: not _living(str(bits)), 30, "the pool workers' end")
    finally:
        process.kill()
        for pid in _living(str(bits)):
            os.kill(pid, signal.SIGKILL)


# -- 8: a backend that crashes mid-stream, with and without --dask ---------------------------------

def test_a_crashing_backend_gives_the_same_incomplete_document_with_dask(tmp_path):
    require("distributed")
    spec = f"{TESTS / 'faults.py'}:ExitsAtOnce"
    documents = []
    for extra in ([], ["--dask", "local:1"]):
        out = tmp_path / f"s{len(documents)}.json"
        result = rngcheck("stats", "--backend", spec, *extra, "--json", str(out), "--quiet", timeout=300)
        assert result.returncode == 2 and "Traceback" not in result.stderr + result.stdout, result.stderr[-2000:]
        documents.append(json.loads(out.read_text()))
    facts = [(d["complete"], d.get("backend_failed"), d["verdict"], d["results"]) for d in documents]
    assert facts[0] == facts[1] == (False, True, "INCOMPLETE", []), facts
    assert all("exit code 9" in d["message"] for d in documents)


def test_run_stats_on_a_backend_that_raises_mid_stream_is_an_incomplete_document_not_a_traceback(tmp_path):
    """``run --stats`` on a backend that raises while the battery reads its stream (in its worker:
    a RemoteError) is the battery's backend-failed case, as a crash or a hang is: the run's document
    is written with an INCOMPLETE stats entry that names the backend's error, exit 1, no traceback."""
    tests = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)])}
    out = tmp_path / "r.json"
    result = rngcheck("run", "--backend", "panel:Crashes", "--profile", "quick", "--case", "kat/*",
                      "--stats", "smoke", "--quiet", "--json", str(out), cwd=tmp_path, env=env)
    assert result.returncode == 1, (result.stdout[-2000:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    stats = json.loads(out.read_text())["stats"]
    assert [entry["verdict"] for entry in stats] == ["INCOMPLETE"], stats
    assert stats[0]["backend_failed"] is True and "device lost" in stats[0]["message"], stats[0]["message"]
