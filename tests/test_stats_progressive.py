"""``rngcheck stats --progressive`` (rngcheck/stats/progressive.py): each doubling is the battery's
document of that length, a weak generator stops where the power table says it fails, a good stream
runs to --max-bytes, the end of a stream ends it, and Dask with a checkpoint gives the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rngcheck.results import schema
from rngcheck.stats import battery, progressive
from rngcheck.stats import weak_generators as wg
from rngcheck.stats.streams import philox_source

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _rows(results):
    return [(e["test"], e["level"], e["stream"], e["statistic"], e["p_value"], e["q_value"], e["verdict"],
             (e["retest"] or {}).get("p_value")) for e in results]


def _cli(*args, data=None):
    return subprocess.run([sys.executable, "-m", "rngcheck", "stats", *args], input=data, capture_output=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": REPO}, timeout=600)


def test_every_doubling_is_the_battery_of_that_length():
    """The carried and budgeted accumulators give, at each length, the p-values, verdicts and
    retests of a fresh run of that many bytes (the stream: Philox-5, whose lag-4 lanes fail at
    128 KiB after the first length's results)."""
    doc = progressive.run(wg.WEAK["philox-5"](), tier="standard", max_bytes=1 << 20, workers=1)
    lengths = doc["progressive"]["lengths"]
    assert [entry["bytes"] for entry in lengths] == [64 << 10, 128 << 10]
    for entry in lengths:
        fresh = battery.run(wg.WEAK["philox-5"](), tier="standard", nbytes=entry["bytes"], workers=1,
                            interstream=False)
        assert _rows(entry["results"]) == _rows(fresh["results"])
        assert entry["verdict"] == fresh["verdict"]
    assert doc["progressive"]["stopped"] == "failed" and doc["progressive"]["failed_at_bytes"] == 128 << 10


def test_budgets_and_carried_state_equal_fresh_runs_over_many_doublings():
    """A good stream from 64 KiB to 8 MiB: the slow tests' budgets (read again from the source
    behind the whole-stream tests) and the carried accumulators give each length's fresh results."""
    doc = progressive.run(philox_source(0x44), tier="standard", max_bytes=8 << 20, workers=1)
    lengths = doc["progressive"]["lengths"]
    assert [entry["bytes"] for entry in lengths] == [(64 << 10) << k for k in range(8)]
    assert doc["progressive"]["stopped"] == "max-bytes" and doc["progressive"]["failed_at_bytes"] is None
    for entry in lengths[-3:]:
        fresh = battery.run(philox_source(0x44), tier="standard", nbytes=entry["bytes"], workers=1,
                            interstream=False)
        assert _rows(entry["results"]) == _rows(fresh["results"])


def test_a_weak_generator_from_stdin_stops_at_the_power_tables_length(tmp_path):
    """lcg64high fails the standard tier at 4 MiB in docs/statistics.md's power table: from a pipe,
    --progressive stops there, exits 1 and says the length; --json keeps every doubling."""
    data = wg.lcg64_high().read(6 << 20).astype("<u4").tobytes()
    out = tmp_path / "progressive.json"
    done = _cli("--input", "-", "--progressive", "--json", str(out), data=data)
    assert done.returncode == 1, done.stderr.decode()[-2000:]
    lines = done.stdout.decode().strip().splitlines()
    assert len(lines) == 8  # 64 KiB .. 4 MiB, then the verdict
    assert lines[-2].startswith("length= 4 MiB (2^22 bytes)") and ": FAIL: " in lines[-2]
    assert lines[-1].startswith("FAIL at 4 MiB (2^22 bytes)") and "pr.power_lags" in lines[-1]
    doc = json.loads(out.read_text())
    schema.validate(doc, "rngcheck-stats")
    assert doc["verdict"] == "FAIL" and doc["tier"] == "standard" and doc["bytes_tested"] == 4 << 20
    assert [e["bytes"] for e in doc["progressive"]["lengths"]] == [(64 << 10) << k for k in range(7)]
    assert doc["progressive"]["failed_at_bytes"] == 4 << 20
    assert all(e["verdict"] == "PASS" for e in doc["progressive"]["lengths"][:-1])
    assert "--progressive" in doc["reproduce"]


def test_a_good_stream_runs_to_max_bytes_and_a_short_one_to_its_end(tmp_path):
    path = tmp_path / "good.bin"
    path.write_bytes(philox_source(3).read(768 << 8).astype("<u4").tobytes())  # 768 KiB
    done = _cli("--input", str(path), "--progressive", "--max-bytes", "512K", "--tier", "smoke")
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    lines = done.stdout.decode().strip().splitlines()
    assert [line.split(",")[0] for line in lines[:-1]] == [
        "length= 64 KiB (2^16 bytes)", "length= 128 KiB (2^17 bytes)", "length= 256 KiB (2^18 bytes)",
        "length= 512 KiB (2^19 bytes)"]
    assert lines[-1].startswith("no FAIL up to 512 KiB (2^19 bytes) (--max-bytes)")
    ended = _cli("--input", str(path), "--progressive", "--tier", "smoke", "--quiet")
    assert ended.returncode == 0, ended.stderr.decode()[-2000:]
    assert ended.stdout.decode().startswith("no FAIL up to 768 KiB: the stream ended")


def test_a_stream_shorter_than_the_first_length_is_too_short():
    """Not even 64 KiB: exit 2 (as a fixed tier's too-short stream), and the last line says why."""
    for data in (b"", bytes(1000)):
        done = _cli("--input", "-", "--progressive", "--quiet", data=data)
        assert done.returncode == 2, done.stderr.decode()[-2000:]
        assert done.stdout.decode().startswith(
            f"too short: the stream ended at {len(data)} bytes, before the first length, 64 KiB (2^16 bytes)")


@pytest.mark.parametrize("args, message", [
    (["--bytes", "1M"], "--bytes does not apply with --progressive"),
    (["--max-bytes", "1K"], "--max-bytes must be at least 64K"),
    (["--max-bytes", "lots"], "--max-bytes: cannot read 'lots'"),
])
def test_progressive_options_are_checked(args, message):
    done = _cli("--backend", "numpy", "--progressive", *args)
    assert done.returncode == 2 and message in done.stderr.decode()


def test_max_bytes_needs_progressive():
    done = _cli("--backend", "numpy", "--max-bytes", "1M")
    assert done.returncode == 2 and "--max-bytes applies with --progressive" in done.stderr.decode()


def test_grades_use_practrands_words_on_our_thresholds():
    suspect_at = battery.suspect_level(100)
    normal = {"verdict": "PASS", "first_verdict": "PASS", "p_value": 0.3, "q_value": None}
    unusual = {**normal, "p_value": 2e-4}
    suspicious = {**normal, "p_value": 1e-6, "first_verdict": "SUSPECT"}
    failed = {**normal, "p_value": 1e-12, "verdict": "FAIL", "first_verdict": "FAIL"}
    assert [progressive.grade(e, suspect_at) for e in (normal, unusual, suspicious, failed)] == [
        "normal", "unusual", "suspicious", "FAIL"]
    assert progressive.size_text(1 << 40) == "1 TiB (2^40 bytes)"
    assert progressive.size_text(3 << 19) == "1.5 MiB"


def test_dask_and_its_checkpoint_give_the_same_doublings(tmp_path):
    """On Dask (a local cluster of one worker) with a checkpoint, the doublings are those of one
    process; the same run again resumes every range from the checkpoint."""
    pytest.importorskip("distributed")
    from rngcheck.stats import distributed

    source = wg.WEAK["bias-6"]
    alone = progressive.run(source(), tier="smoke", max_bytes=2 << 20, workers=1)
    identity = {"reproduce": "test", "tier": "smoke", "progressive": True, "max_bytes": 2 << 20}
    docs, resumed = [], []
    for _ in range(2):
        with distributed.DaskExecutor("local:1", shard_bytes=2 << 20, checkpoint=str(tmp_path / "ck"),
                                      identity=identity) as executor:
            docs.append(progressive.run(source(), tier="smoke", max_bytes=2 << 20, executor=executor))
            resumed.append(executor.execution()["ranges_resumed"])
    for doc in docs:
        assert [_rows(e["results"]) for e in doc["progressive"]["lengths"]] == \
            [_rows(e["results"]) for e in alone["progressive"]["lengths"]]
    assert doc["progressive"]["stopped"] == alone["progressive"]["stopped"] == "failed"
    assert resumed[0] == 0 and resumed[1] > 0
