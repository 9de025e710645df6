"""Bounded time and memory: what each reader takes, each limit said in one line (hardening rounds 2 and
3)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

from helpers import require
from probes import one_line_error, rngcheck
from rngcheck.cli import main


@pytest.mark.parametrize("count", ["0", "-3"])
def test_stats_refuses_a_worker_count_below_one(count):
    one_line_error(rngcheck("stats", "--backend", "numpy", "--workers", count), 2, "--workers")


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


def test_nist_workers_zero_is_refused():
    one_line_error(rngcheck("nist", "--backend", "numpy", "--workers", "0"), 2, "--workers 0")


@pytest.mark.parametrize("address", ["scheduler-file:{garbage}", "nosuch://127.0.0.1:1"])
def test_a_bad_dask_address_is_one_line_at_once(tmp_path, address):
    require("distributed")
    garbage = tmp_path / "garbage"
    garbage.write_text("GARBAGE")
    start = time.monotonic()
    result = rngcheck("stats", "--backend", "numpy", "--dask", address.format(garbage=garbage), timeout=120)
    one_line_error(result, 2, "--dask")
    assert time.monotonic() - start < 50  # not the finaliser's 60 s wait (a hang test, not a speed target)


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


def test_warnings_module_is_quiet_for_chi2_of_empty_samples():
    from rngcheck.stats.accumulators import chi2_counts
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(chi2_counts(np.zeros((1, 4)), np.full(4, 0.25))[0])
