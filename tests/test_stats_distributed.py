"""The battery on Dask (rngcheck.stats.distributed), on a real LocalCluster and a real
`dask scheduler` + `dask worker` pair: the same document as one process, lost workers
survived and counted, a range that keeps killing its worker ends the run in one line, the
refusals (stdin, other versions, bad addresses), and the local pool no longer hangs when a
worker dies. Dask is required in CI (helpers.require), skipped without it locally."""

import argparse
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import require
from rngcheck import cli
from rngcheck.errors import RngcheckError
from rngcheck.stats import battery, command
from rngcheck.stats.streams import (
    BackendSource,
    FunctionSource,
    RawSource,
    philox_source,
)

MiB = 1 << 20
REPO = Path(__file__).resolve().parent.parent
VOLATILE = ("execution", "elapsed_seconds", "throughput_mb_s")


def parse(*argv):
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(list(argv))


def same(doc):
    """The document without where and how fast it ran, as canonical JSON."""
    return json.dumps({k: v for k, v in doc.items() if k not in VOLATILE}, sort_keys=True,
                      default=command._json_default)


def numpy_source(seed):
    from rngcheck.backends import load
    return BackendSource(load("numpy"), key=seed)


def killing_source(seed, marker, at_word, times):
    """philox_source(seed), except that a Dask worker process asked for ``at_word`` SIGKILLs
    itself, the first ``times`` times (counted in the file ``marker``). Never in this process."""
    base, here = philox_source(seed), os.getpid()

    def function(first, count):
        if os.getpid() != here and first <= at_word < first + count:
            died = len(marker.read_text()) if marker.exists() else 0
            if died < times:
                with open(marker, "a") as handle:
                    handle.write("x")
                os.kill(os.getpid(), signal.SIGKILL)
        return base.function(first, count)

    return FunctionSource(function, base.description, 0, base.neighbours)


def slow_source(seed, at_word, seconds):
    """philox_source(seed), except that a Dask worker asked for ``at_word`` first sleeps."""
    base, here = philox_source(seed), os.getpid()

    def function(first, count):
        if os.getpid() != here and first <= at_word < first + count:
            time.sleep(seconds)
        return base.function(first, count)

    return FunctionSource(function, base.description, 0, base.neighbours)


@pytest.fixture(scope="module")
def executor():
    """One LocalCluster of two worker processes for the identity and refusal tests."""
    if __import__("importlib").util.find_spec("distributed"):  # else need() skips, or fails in CI
        from rngcheck.stats import distributed
        with distributed.DaskExecutor("local:2", shard_bytes=2 * MiB) as ex:
            yield ex
    else:
        yield None


def need(executor):
    require("distributed")
    assert executor is not None


# -- identity -------------------------------------------------------------------------------

def test_smoke_backend_document_equals_one_process_with_retests(executor, monkeypatch):
    """The numpy backend's smoke tier, several ranges per stream, SUSPECTs forced so that the
    retests (main and inter-stream, at an offset) run on Dask too."""
    need(executor)
    monkeypatch.setattr(battery, "suspect_level", lambda m: 0.3)
    one = battery.run(numpy_source(5), tier="smoke", seed=5, workers=1)
    many = battery.run(numpy_source(5), tier="smoke", seed=5, executor=executor)
    assert same(many) == same(one)
    assert any(e["retest"] and e["stream"] == "main" for e in many["results"])
    assert any(e["retest"] and e["stream"].startswith("xor") for e in many["results"])
    execution = many["execution"]
    assert execution["executor"] == "dask" and execution["workers"] == 2
    assert execution["ranges"] >= 3 + 3 + 2  # main in several ranges, each xor pair, retests
    assert execution["workers_lost"] == 0 and execution["shards_rerun"] == 0
    assert "dask" not in many["reproduce"]
    # the workers' malloc settings: no MALLOC_TRIM_THRESHOLD_ from the nanny, mallopt done once
    settings = executor.client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"),
                                            __import__("rngcheck.stats.distributed").stats.distributed.tune_malloc()))
    assert set(settings.values()) == {(None, True)}


def test_raw_file_is_sent_by_path_and_reads_the_same(executor, tmp_path):
    need(executor)
    path = tmp_path / "s.bin"
    path.write_bytes(philox_source(3).read(3 * MiB // 4 + 123).astype("<u4").tobytes())  # 3 MiB + 123 words
    assert executor.recipe(RawSource(str(path))) == ("raw", str(path))
    one = battery.run(RawSource(str(path)), tier="smoke", workers=1)
    many = battery.run(RawSource(str(path)), tier="smoke", executor=executor)
    assert not one["complete"] and one["bytes_tested"] == 3 * MiB + 123 * 4
    assert same(many) == same(one)


def test_standard_tier_by_the_command_line_equals_one_process(tmp_path, capsys):
    """The issue's acceptance command, `--dask local:2`, at the full standard tier."""
    require("distributed")
    out = tmp_path / "dask.json"
    code = cli.main(["stats", "--backend", "numpy", "--tier", "standard", "--dask", "local:2",
                     "--json", str(out)])
    err = capsys.readouterr().err
    assert code == 0
    doc = json.loads(out.read_text())
    one = battery.run(numpy_source(1), tier="standard", seed=1, workers=1,
                      reproduce="rngcheck stats --backend numpy --seed 1 --tier standard")
    assert same(doc) == same(one)
    assert doc["execution"]["workers"] == 2 and doc["execution"]["shard_bytes"] == 32 * MiB
    assert doc["execution"]["ranges"] == 8 + 3  # 256 MiB in 32 MiB ranges, one range per xor pair
    assert doc["reproduce"] == "rngcheck stats --backend numpy --seed 1 --tier standard"
    assert "LocalCluster of 2 workers" in err
    import importlib.util
    assert ("dashboard http://" if importlib.util.find_spec("bokeh") else "no dashboard (pip install bokeh") in err
    assert "main: 8/8 ranges" in err and "MB/s, ETA" in err


# -- faults ------------------------------------------------------------------------------------

def test_a_range_slower_than_the_wait_interval_is_waited_for(executor):
    """No range finishing within distributed.WAIT_SECONDS is no error (it once ended the run
    as "cannot write": dask's wait() raises TimeoutError, an OSError)."""
    need(executor)
    from rngcheck.stats import distributed
    doc = battery.run(slow_source(13, at_word=1 << 19, seconds=2.5 * distributed.WAIT_SECONDS), tier="smoke",
                      executor=executor)
    assert same(doc) == same(battery.run(philox_source(13), tier="smoke", workers=1))


def test_a_local_cluster_leaves_this_process_s_thread_counts_as_they_were(monkeypatch):
    """dask's nanny sets OMP_, MKL_ and OPENBLAS_NUM_THREADS = 1 in the process that starts a LocalCluster
    where they are absent (for its workers); the executor's close() puts this process's own back (one set, two absent),
    so what the program starts afterwards keeps its thread counts."""
    require("distributed")
    from rngcheck.stats import distributed

    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    with distributed.DaskExecutor("local:1", shard_bytes=2 * MiB) as executor:
        during = os.environ.get("OMP_NUM_THREADS")
        assert executor.workers
    assert during == "1"   # what the nanny does where the variable is absent (dask 2026.8)
    assert os.environ.get("MKL_NUM_THREADS") == "3"
    assert "OMP_NUM_THREADS" not in os.environ and "OPENBLAS_NUM_THREADS" not in os.environ


def test_a_sigkilled_worker_is_survived_and_counted(tmp_path):
    require("distributed")
    from rngcheck.stats import distributed
    marker = tmp_path / "deaths"
    with distributed.DaskExecutor("local:2", shard_bytes=2 * MiB) as ex:
        doc = battery.run(killing_source(11, marker, at_word=3 << 19, times=1), tier="smoke", executor=ex)
    assert marker.read_text() == "x"  # a worker really died once
    assert same(doc) == same(battery.run(philox_source(11), tier="smoke", workers=1))
    assert doc["execution"]["workers_lost"] == 1
    assert doc["execution"]["shards_rerun"] >= 1


def test_a_range_that_keeps_killing_its_worker_ends_the_run_in_one_line(tmp_path):
    require("distributed")
    from rngcheck.stats import distributed
    marker = tmp_path / "deaths"
    began = time.perf_counter()
    with distributed.DaskExecutor("local:1", shard_bytes=2 * MiB, allowed_failures=1) as ex, \
            pytest.raises(RngcheckError) as caught:
        battery.run(killing_source(12, marker, at_word=3 << 19, times=99), tier="smoke", executor=ex)
    message = str(caught.value)
    assert "\n" not in message and "KilledWorker" in message
    found = re.search(r"range (\d+) of (\d+) of the main stream \(words (\d+)\.\.(\d+)\)", message)
    # the one holding word 1572864 (the plan: balanced_ranges)
    assert found and int(found[3]) <= 3 << 19 <= int(found[4])
    assert marker.read_text() == "xx"  # allowed-failures=1: it was tried twice, then given up
    assert time.perf_counter() - began < 120  # not a hang


def test_the_local_pool_fails_in_one_line_when_a_worker_dies(monkeypatch):
    """Without Dask: a forked worker SIGKILLed mid-run used to leave Pool.map waiting forever."""
    monkeypatch.setattr(battery, "PARALLEL_MIN_WORDS", 1 << 16)
    base, here = philox_source(13), os.getpid()

    def function(first, count):
        if os.getpid() != here and first > 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return base.function(first, count)

    source = FunctionSource(function, {}, 0)
    with pytest.raises(RngcheckError, match=r"a worker process died .* before words \d+\.\.\d+ were read") as caught:
        battery.run(source, tier="smoke", nbytes=4 * MiB, workers=2, interstream=False)
    assert "\n" not in str(caught.value)


# -- refusals ----------------------------------------------------------------------------------

def test_other_versions_are_refused_before_any_work(executor, monkeypatch):
    need(executor)
    from rngcheck.stats import distributed
    monkeypatch.setattr(distributed, "client_environment",
                        lambda: {**distributed.environment(), "numpy": "0.0.1"})
    with pytest.raises(RngcheckError, match=r"has different versions: numpy .* \(client 0\.0\.1\); refused"):
        distributed.DaskExecutor(executor.client)  # a ready Client: the Python API
    monkeypatch.undo()
    # a worker that joins later is refused by its task
    late = distributed.DaskExecutor(executor.client, shard_bytes=2 * MiB)
    late.expected = {**late.expected, "scipy": "0.0.2"}
    with pytest.raises(RngcheckError, match=r"range 1 of 1 of the main stream .* different versions: scipy"):
        late.feed(philox_source(1), [battery.nist.Monobit], 1 << 16)
    late.close()
    assert executor.client.status == "running"  # a ready Client is not closed by the executor


def test_the_local_dashboard_listens_on_this_machine_only_unless_asked(executor):
    """A LocalCluster's dashboard has no authentication: by default its HTTP server listens on
    127.0.0.1 only (Dask's own default, ':0', is every interface), and the printed link says so."""
    need(executor)
    from rngcheck.stats import distributed

    hosts = {sock.getsockname()[0] for sock in executor.cluster.scheduler.http_server._sockets.values()}
    assert hosts == {"127.0.0.1"}, hosts
    link = executor.dashboard()
    assert link is None or link.startswith("http://127.0.0.1:"), link
    with distributed.DaskExecutor("local:1", shard_bytes=2 * MiB, dashboard_address="0.0.0.0:0") as opened:
        hosts = {sock.getsockname()[0] for sock in opened.cluster.scheduler.http_server._sockets.values()}
    assert hosts == {"0.0.0.0"}, hosts


def test_stdin_is_refused_in_one_line(executor, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\x01\x02\x03\x04")))
    with pytest.raises(RngcheckError, match="cannot read stdin"):
        command.run(parse("--input", "-", "--dask", "local"))
    assert cli.main(["stats", "--input", "-", "--dask", "local:2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--input FILE" in err[0]
    need(executor)
    with pytest.raises(RngcheckError, match="cannot read stdin"):
        executor.recipe(RawSource("-"))


@pytest.mark.parametrize("argv,message", [
    (("--dask", "nowhere"), "cannot read 'nowhere'"),
    (("--dask", "local:0"), "at least 1"),
    (("--dask", "scheduler-file:/nonexistent/s.json"), "does not exist"),
    (("--dask", "local", "--shard-bytes", "3M"), "multiple of 2 MiB"),
    (("--shard-bytes", "4M"), "applies with --dask only"),
    (("--dask", "local", "--workers", "2"), "--dask local:N"),
    (("--dask-dashboard", "0.0.0.0:0"), "applies with --dask local only"),
    (("--dask", "tcp://127.0.0.1:1", "--dask-dashboard", "0.0.0.0:0"), "applies with --dask local only"),
])
def test_dask_usage_errors_are_one_line(argv, message, capsys):
    with pytest.raises(RngcheckError, match=message):
        command.run(parse("--backend", "numpy", *argv))
    assert cli.main(["stats", "--backend", "numpy", *argv]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_without_dask_the_flag_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(RngcheckError, match=r"pip install 'rngcheck\[distributed\]'"):
        command.run(parse("--backend", "numpy", "--dask", "local:1"))


def test_unreachable_scheduler_is_one_line():
    require("distributed")
    from rngcheck.stats import distributed
    with pytest.raises(RngcheckError, match="cannot start or reach the Dask scheduler"):
        distributed.DaskExecutor("tcp://127.0.0.1:9", connect_timeout=1)


# -- a real `dask scheduler` + `dask worker` pair ------------------------------------------------

def test_a_dask_scheduler_and_worker_pair_driven_by_address(tmp_path, capsys):
    require("distributed")
    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    dask = [sys.executable, "-m", "dask"]
    processes = [subprocess.Popen(dask + ["scheduler", "--scheduler-file", str(scheduler_file), "--host", "127.0.0.1",
                                          "--port", "0", "--no-dashboard"], env=env, cwd=tmp_path,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.time() + 60
        while not scheduler_file.exists() and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written whole, but give it a moment
        processes.append(subprocess.Popen(dask + ["worker", "--scheduler-file", str(scheduler_file),
                                                  "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                                          env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        one = battery.run(numpy_source(4), tier="smoke", nbytes=4 * MiB, seed=4, workers=1,
                          reproduce="rngcheck stats --backend numpy --seed 4 --tier smoke --bytes 4M")
        for given in (address, f"scheduler-file:{scheduler_file}"):
            out = tmp_path / "doc.json"
            code = cli.main(["stats", "--backend", "numpy", "--seed", "4", "--bytes", "4M", "--dask", given,
                             "--shard-bytes", "2M", "--json", str(out), "--quiet"])
            assert code == 0, capsys.readouterr().err
            doc = json.loads(out.read_text())
            assert same(doc) == same(one)
            assert doc["execution"]["address"] == given and doc["execution"]["workers"] == 1
            assert doc["execution"]["ranges"] == len(battery.balanced_ranges(
                [battery.budgeted(f, 4 * MiB) for f in battery.main_tests("smoke")], MiB, 2)) + 3
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def test_worker_helpers():
    from rngcheck.stats import distributed
    assert distributed.parse_address("local") == ("local", None)
    assert distributed.parse_address("local:3") == ("local", 3)
    assert distributed.parse_address("tcp://h:8786") == ("address", "tcp://h:8786")
    assert distributed.parse_shard_bytes("64M") == 64 * MiB
    versions = distributed.environment()
    assert set(versions) == {"rngcheck", "numpy", "scipy"} and versions["numpy"] == np.__version__
    if sys.platform.startswith("linux"):
        assert distributed.tune_malloc() is True
    # a range's task, run here: the same accumulators as battery.feed on source.at(start)
    recipe = ("function", philox_source(7))
    packed, read = distributed.feed_range(recipe, [battery.nist.Monobit], 0, 1 << 15, 1 << 16, versions)
    accs = distributed.unpack(packed, [battery.nist.Monobit(start=1 << 15)])
    direct, _ = battery.feed(philox_source(7).at(1 << 15), [battery.nist.Monobit], 1 << 16, start=1 << 15)
    assert read == 1 << 16 and accs[0].start == 1 << 15
    assert accs[0].result() == direct[0].result()


# -- checkpoints -----------------------------------------------------------------------------

def test_a_sigkilled_client_resumes_from_its_checkpoint(tmp_path):
    """The command is killed (SIGKILL) once ranges are in the checkpoint; the same command run
    again skips them and writes the single-process document."""
    require("distributed")
    checkpoint = tmp_path / "ckpt"
    argv = ["stats", "--backend", "numpy", "--seed", "6", "--bytes", "48M", "--dask", "local:1",
            "--shard-bytes", "2M", "--checkpoint", str(checkpoint), "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    client = subprocess.Popen([sys.executable, "-m", "rngcheck", *argv, "--json", str(tmp_path / "never.json")],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    main = checkpoint / "main"  # a directory per stream; a file per finished range (checkpoint.py)
    deadline = time.time() + 120
    try:
        while time.time() < deadline and client.poll() is None and len(list(main.glob("range-*.npz"))) < 3:
            time.sleep(0.02)
        client.send_signal(signal.SIGKILL)
    finally:
        client.wait(timeout=30)
    assert client.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (tmp_path / "never.json").exists()
    out = tmp_path / "resumed.json"
    assert cli.main([*argv, "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    one = battery.run(numpy_source(6), tier="smoke", nbytes=48 * MiB, seed=6, workers=1,
                      reproduce="rngcheck stats --backend numpy --seed 6 --tier smoke --bytes 48M")
    assert same(doc) == same(one)
    assert 2 <= doc["execution"]["ranges_resumed"] < doc["execution"]["ranges"]  # skipped, not all
    # a checkpoint of another run (another seed) is refused in one line
    with pytest.raises(RngcheckError, match=r"written by another run: .*differs") as caught:
        command.run(parse(*[a if a != "6" else "7" for a in argv[1:]]))
    assert "\n" not in str(caught.value)
