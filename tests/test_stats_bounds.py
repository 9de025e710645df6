"""Hardening, round 4, items 5, 15, 16 and 17 (stats and nist): a full disk is the disk, not the end of
stdin; what a run holds in memory or on disk is checked before it is allocated, and past what rngcheck
can test a size is refused in one line; a uniform range is checked in its dtype; and no RuntimeWarning
with a source line reaches stderr on edge inputs.

Tests with processes poll with generous limits; none depends on a fixed sleep to pass."""

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from probes import one_line_error

TESTS = Path(__file__).parent
ROOT = TESTS.parent


def rngcheck(*args, timeout=300, limit=None, stdin=None, warnings_are_errors=False, **kw):
    """The command in a child process; ``limit``: a shell ``ulimit`` line run first (ulimit -v N, -f N)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    python = [sys.executable] + (["-W", "error::RuntimeWarning"] if warnings_are_errors else [])
    command = python + ["-m", "rngcheck", *args]
    if limit:
        command = ["bash", "-c", f'{limit}; exec "$@"', "bash", *command]
    kw.setdefault("text", True)
    return subprocess.run(command, capture_output=True, timeout=timeout, env=env, stdin=stdin, **kw)


# -- 5. a full disk is the disk -------------------------------------------------------------------

def _random_file(path: Path, nbytes: int) -> Path:
    path.write_bytes(np.random.default_rng(5).integers(0, 256, nbytes, dtype=np.uint8).tobytes())
    return path


def test_a_file_size_limit_under_the_stdin_spool_is_one_line_naming_the_folder_not_a_short_stream(tmp_path):
    """ulimit -f 4096 (4 MiB) under a smoke run of stdin (8 MiB): the spool's write fails with EFBIG;
    the run used to say INCOMPLETE, "the stream ended after 4 MiB", as if the generator had stopped."""
    stream = _random_file(tmp_path / "stream.bin", 12 << 20)
    with open(stream, "rb") as stdin:
        result = rngcheck("stats", "--input", "-", "--quiet", stdin=stdin, limit="ulimit -f 4096")
    one_line_error(result, 2, "temporary file", "not the end of the stream", os.strerror(errno.EFBIG))
    assert "INCOMPLETE" not in result.stdout + result.stderr


class _Stdin:
    def __init__(self, path: Path):
        self.buffer = open(path, "rb")


def _stats_on_stdin(monkeypatch, capsys, path: Path, *args):
    """``rngcheck stats --input - ARGS`` in this process with ``path`` as stdin: (exit code, stderr)."""
    from rngcheck import cli

    stdin = _Stdin(path)
    monkeypatch.setattr(sys, "stdin", stdin)
    try:
        code = cli.main(["stats", "--input", "-", "--quiet", "--workers", "1", *args])
    finally:
        stdin.buffer.close()
    return code, capsys.readouterr().err


def test_a_full_disk_while_stdin_is_spooled_is_the_disk_in_one_line(tmp_path, monkeypatch, capsys):
    """ENOSPC on the spool's fourth block of 1 MiB: one line naming the folder and the disk, exit 2."""
    from rngcheck.stats import streams

    stream = _random_file(tmp_path / "stream.bin", 12 << 20)
    monkeypatch.setattr(streams.StdinSpool, "BLOCK", 1 << 20)
    real = os.pwrite

    def pwrite(fd, data, offset):
        if offset >= 3 << 20:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", pwrite)
    code, err = _stats_on_stdin(monkeypatch, capsys, stream)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert os.strerror(errno.ENOSPC) in err and streams.spool_folder() in err and "not the end of the stream" in err


def test_stdin_is_refused_before_reading_when_its_spool_cannot_fit_the_free_space(tmp_path, monkeypatch, capsys):
    """statvfs says 20 MiB free; a smoke run spools up to 2 x 8 MiB + the read-ahead: refused before any
    byte of stdin is read, naming the folder and both sizes."""
    from rngcheck.stats import streams

    class Full:
        f_bavail, f_frsize = 20 << 8, 4096    # 20 MiB

    folder = streams.spool_folder()
    monkeypatch.setattr(os, "statvfs", lambda path: Full())
    stream = _random_file(tmp_path / "stream.bin", 1 << 20)
    stdin = _Stdin(stream)
    monkeypatch.setattr(sys, "stdin", stdin)
    from rngcheck import cli
    try:
        code = cli.main(["stats", "--input", "-", "--quiet"])
        assert stdin.buffer.tell() == 0          # nothing read
    finally:
        stdin.buffer.close()
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert folder in err and "20.0 MiB free" in err and "56.0 MiB" in err and "TMPDIR" in err, err


def test_progressive_stdin_with_max_bytes_is_refused_when_its_spool_cannot_fit(tmp_path, monkeypatch, capsys):
    """--progressive --max-bytes 16M from stdin spools up to 2 x 16 MiB + the read-ahead: refused
    before any byte is read where statvfs says 20 MiB free."""
    from rngcheck.stats import streams

    class Full:
        f_bavail, f_frsize = 20 << 8, 4096    # 20 MiB

    monkeypatch.setattr(os, "statvfs", lambda path: Full())
    stream = _random_file(tmp_path / "stream.bin", 1 << 20)
    stdin = _Stdin(stream)
    monkeypatch.setattr(sys, "stdin", stdin)
    from rngcheck import cli
    try:
        code = cli.main(["stats", "--input", "-", "--quiet", "--progressive", "--max-bytes", "16M"])
        assert stdin.buffer.tell() == 0          # nothing read
    finally:
        stdin.buffer.close()
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert streams.spool_folder() in err and "20.0 MiB free" in err and "72.0 MiB" in err, err


def test_the_spool_room_counts_the_retest_and_the_peers_copy():
    from rngcheck.stats.streams import StdinSpool, spool_bytes

    extra = StdinSpool.READ_AHEAD + StdinSpool.BLOCK
    assert spool_bytes(8 << 20) == (16 << 20) + extra
    assert spool_bytes(8 << 20, copies=2) == 2 * ((16 << 20) + extra)


# -- 15. sizes past what rngcheck can test or hold --------------------------------------------------

@pytest.mark.parametrize("size", ["99999999999999999999T", "1025T", "9" * 400])
def test_stats_refuses_a_size_past_what_it_can_test(size):
    one_line_error(rngcheck("stats", "--backend", "numpy", "--bytes", size, timeout=60), 2, "--bytes", "1 PiB")


def test_stats_bytes_up_to_the_cap_still_parse():
    from rngcheck.stats.tiers import MAX_BYTES, parse_bytes

    assert parse_bytes("1024T") == MAX_BYTES and parse_bytes("1.5GiB") == 3 << 29 and parse_bytes("64M") == 64 << 20


def test_nist_refuses_a_length_past_its_cap():
    one_line_error(rngcheck("nist", "--backend", "numpy", "--length", str(1 << 31), timeout=60), 2,
                   "--length", str((1 << 31) - 1))


def test_nist_refuses_a_sequence_whose_tests_do_not_fit_the_memory_limit_before_reading():
    """ulimit -v 3 GB, --length 2 x 10^8 (about 7.5 GiB under test): one line naming RLIMIT_AS, at once,
    without reading the endless /dev/urandom (it was a MemoryError traceback after reading it)."""
    started = time.monotonic()
    result = rngcheck("nist", "/dev/urandom", "--length", str(2 * 10 ** 8), "--sequences", "1", timeout=120,
                      limit="ulimit -v 3000000")
    one_line_error(result, 2, "--length", "RLIMIT_AS")
    assert time.monotonic() - started < 60


def test_nist_draws_a_backend_sequence_by_sequence_under_a_memory_limit():
    """3000 sequences of 10^6 bits (3 x 10^9 bits: 2.8 GiB a byte a bit, drawn at once before) under
    ulimit -v 3 GB: the sequences are tested as they are drawn; SIGTERM then ends it (exit 130)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(["bash", "-c", 'ulimit -v 3000000; exec "$@"', "bash", sys.executable, "-m", "rngcheck",
                                "nist", "--backend", "numpy", "--sequences", "3000", "--length", "1000000",
                                "--workers", "1"], stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = process.stderr.readline()
        assert first.strip() == "sequence 1/3000", first + process.stderr.read()[-2000:]
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 130
        rest = process.stderr.read()
        assert "MemoryError" not in rest and "Traceback" not in rest, rest[-2000:]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_backend_bits_are_the_whole_streams_bits_read_in_order_and_hold_one_sequence(monkeypatch):
    from rngcheck.backends.hosting import close, hosted
    from rngcheck.stats import nist_sts
    from rngcheck.stats.bits import to_bits
    from rngcheck.stats.streams import BackendSource

    n, count = 1001, 40
    backend = hosted("numpy")
    try:
        whole = to_bits(BackendSource(backend, key=7).read((n * count + 31) // 32))[:n * count]
    finally:
        close(backend)
    drawn = nist_sts.BackendBits("numpy", 7, n * count)
    try:
        for k in range(count):
            assert np.array_equal(drawn[k * n:(k + 1) * n], whole[k * n:(k + 1) * n]), k
            assert drawn.held.size <= n // 8 + 8
        with pytest.raises(ValueError):
            drawn[0:n]                               # read in order only
    finally:
        drawn.close()


def test_an_ascii_input_is_kept_packed(tmp_path):
    """ASCII bits were kept a byte a bit (8 Gbit of --sequences x --length: 8 GiB); now a bit a bit."""
    from rngcheck.stats import nist_sts

    bits = np.random.default_rng(2).integers(0, 2, 100_003, dtype=np.uint8)
    chars = "".join("01"[b] for b in bits)
    path = tmp_path / "bits.txt"
    path.write_text("\n".join(chars[i:i + 61] for i in range(0, len(chars), 61)))
    for want in (None, 99_999, 100_003):
        held, fmt = nist_sts.read_bits(str(path), "auto", want)
        size = bits.size if want is None else want
        assert fmt == "ascii" and isinstance(held, nist_sts.PackedBits) and held.size == size
        assert held.data.nbytes == (size + 7) // 8
        assert np.array_equal(held[0:size], bits[:size]) and np.array_equal(held[13:9000], bits[13:9000])


def test_input_bits_that_do_not_fit_the_memory_limit_are_refused_in_one_line(tmp_path, monkeypatch):
    from rngcheck import sharedmem
    from rngcheck.errors import RngcheckError
    from rngcheck.stats import nist_sts

    path = _random_file(tmp_path / "bits.bin", 1 << 20)
    monkeypatch.setattr(sharedmem, "memory_limits", lambda: {"cgroup": 1 << 16})
    for want in (1 << 23, None):
        with pytest.raises(RngcheckError, match="cgroup") as caught:
            nist_sts.read_bits(str(path), "binary", want)
        assert "\n" not in str(caught.value)


def test_nist_runs_fewer_workers_when_memory_holds_fewer_sequences(monkeypatch):
    from rngcheck import sharedmem
    from rngcheck.stats import nist_sts

    monkeypatch.setattr(sharedmem, "memory_limits", lambda: {"MemAvailable": 3 * nist_sts.BYTES_PER_BIT * 10 ** 6})
    assert nist_sts.workers_that_fit(8, 10 ** 6) == 3
    assert nist_sts.workers_that_fit(2, 10 ** 6) == 2
    assert nist_sts.workers_that_fit(2, 10 ** 7) == 1


# -- 16. a uniform range is checked in its dtype ----------------------------------------------------

@pytest.mark.parametrize("dtype, low, high, words", [
    ("float64", "-1e308", "1e308", "wider than float64"),
    ("float16", "-60000", "60000", "wider than float16"),
    ("bfloat16", "-3e38", "3e38", "wider than bfloat16"),
    ("float32", "1e-320", "2e-320", "in float32 is empty"),
    ("float32", "-1e39", "0", "in float32 is not finite"),
    ("float64", "-8e307", "8e307", "too wide for the moment tests"),
    ("float32", "1e-45", "3e-45", "too narrow for the moment tests"),
])
def test_a_uniform_range_the_dtype_cannot_hold_is_refused_in_one_line(dtype, low, high, words):
    result = rngcheck("stats", "--distribution", "uniform", "--dtype", dtype, f"--low={low}", f"--high={high}",
                      "--quiet", timeout=120, warnings_are_errors=True)
    one_line_error(result, 2, words)


def test_the_stats_range_is_checked_in_its_dtype_and_a_request_still_takes_any_range_a_library_does():
    """The check is the battery's (stats.distributions.request_of): numbers.Request takes any finite
    range, as a conformance case compares a library's draws on it (TensorFlow's bfloat16 [1000, 1001)
    is every number 1000)."""
    from rngcheck.errors import RngcheckError
    from rngcheck.numbers import Request
    from rngcheck.stats.distributions import request_of

    request_of("uniform", "tensorflow", "float16", -30000.0, 30000.0)           # 60000 < 65504
    request_of("uniform", "tensorflow", "float32", 1e-40, 2e-40)                # subnormals, distinct
    with pytest.raises(RngcheckError, match="in float32 is empty"):
        request_of("uniform", "tensorflow", "float32", 1e-320, 2e-320)
    with pytest.raises(RngcheckError, match="wider than float16"):
        request_of("uniform", "tensorflow", "float16", -60000.0, 60000.0)
    with pytest.raises(RngcheckError, match="in bfloat16 is empty"):
        request_of("uniform", "tensorflow", "bfloat16", 1000.0, 1001.0)
    Request("tensorflow", "uniform", "bfloat16", 4, 1000.0, 1001.0)


# -- 17. no RuntimeWarning reaches stderr ----------------------------------------------------------

HOSTILE = '''
import sys
sys.path.insert(0, {tests!r})
import numpy as np
from faults import DrawsNumbers


class Huge(DrawsNumbers):
    """Every third number the dtype's largest finite value: far outside the support."""

    name = "huge-numbers"

    def random_numbers(self, request, state):
        out = np.array(super().random_numbers(request, state), copy=True)
        out[::3] = np.finfo(out.dtype).max
        return out
'''


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_numbers_far_outside_the_support_fail_without_a_runtime_warning(tmp_path, kind):
    """The moment and correlation sums overflowed (RuntimeWarning with its source line, then an
    OverflowError traceback); such numbers now fail the support test and are left out of the sums."""
    backend = tmp_path / "hostile.py"
    backend.write_text(HOSTILE.format(tests=str(TESTS)))
    result = rngcheck("stats", "--distribution", kind, "--dtype", "float64", "--backend", f"{backend}:Huge",
                      "--in-process", "--quiet", "--bytes", "256K", timeout=300, warnings_are_errors=True)
    assert result.returncode == 1, result.stderr[-3000:]
    assert "Warning" not in result.stderr and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stdout.startswith("FAIL"), result.stdout


def test_the_centred_values_mask_what_would_overflow():
    import warnings

    from rngcheck.stats.distributions import CENTRED_LIMIT, _centred

    x = np.array([-1e308, np.inf, -np.inf, np.nan, 1.7e308, -1.7e308, CENTRED_LIMIT])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, usable = _centred(x, -1e308)
    assert usable.tolist() == [True, False, False, False, False, False, False]
    assert np.isfinite(y).all()
