"""`rngcheck stats` (rngcheck.stats.command): backend and raw streams, short input, exit codes, JSON."""

import argparse
import io
import json
import sys

import numpy as np
import pytest

from rngcheck.errors import RngcheckError
from rngcheck.stats import battery, command
from rngcheck.stats import weak_generators as panel
from rngcheck.stats.streams import RawSource, philox_source


def parse(*argv):
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(list(argv))


def write_words(path, words):
    path.write_bytes(np.asarray(words, dtype="<u4").tobytes())
    return str(path)


def test_backend_smoke_passes_with_a_reproducible_document(tmp_path, capsys):
    out = tmp_path / "r.json"
    code = command.run(parse("--backend", "numpy", "--tier", "smoke", "--bytes", "2M", "--seed", "5",
                             "--json", str(out), "--quiet"))
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["schema"] == "rngcheck-stats" and doc["schema_version"] == 1
    assert doc["verdict"] == "PASS" and doc["seed"] == 5 and doc["complete"]
    assert doc["source"]["backend"] == "numpy"
    assert doc["reproduce"] == "rngcheck stats --backend numpy --seed 5 --tier smoke --bytes 2M"
    streams = {e["stream"] for e in doc["results"]}
    assert {"main", "xor key+1", "xor key_hi+1", "xor counter_hi+1"} <= streams
    for entry in doc["results"]:
        assert isinstance(entry["p_value"], float) and entry["p_display"] and entry["source"]
        assert entry["verdict"] in ("PASS", "SUSPECT", "FAIL")


def test_backend_stream_is_the_reference_stream():
    from rngcheck.backends import load
    from rngcheck.stats.streams import BackendSource
    source = BackendSource(load("numpy"), key=9, tensor_words=1000)  # odd sizes: states must chain
    got = np.concatenate([source.read(777), source.read(2500), source.read(3)])
    assert (got == philox_source(9).read(got.size)).all()
    assert (source.at(400).read(10) == philox_source(9).at(400).read(10)).all()
    assert (source.at(401).read(10) == philox_source(9).at(401).read(10)).all()


def test_raw_file_same_result_as_the_stream(tmp_path):
    words = philox_source(3).read(1 << 19)
    path = write_words(tmp_path / "s.bin", words)
    doc_file = battery.run(RawSource(path), tier="smoke", nbytes=2 << 20, workers=1)
    doc_func = battery.run(philox_source(3), tier="smoke", nbytes=2 << 20, workers=1, interstream=False)

    def strip(d):
        return [(e["test"], e["level"], e["p_value"]) for e in d["results"]]

    assert strip(doc_file) == strip(doc_func)


def test_stdin_and_short_stream(monkeypatch, capsys):
    words = philox_source(4).read(300000)  # 1.2 MB: shorter than the smoke tier
    data = words.astype("<u4").tobytes() + b"\x01\x02"  # and a partial word
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code = command.run(parse("--input", "-", "--tier", "smoke"))
    out = capsys.readouterr().out
    assert code == 2
    assert "the stream ended after 1200000 bytes (300000 words, plus 2 trailing bytes ignored)" in out
    assert "NOT RUN" in out and "knuth.frequency16" in out  # needs 2 MiB samples
    # the tests that had enough data report (SP 800-22 2.7-2.9, 2.14-2.15; PractRand kinds; linear
    # complexity; the 256 x 256 binary ranks of whole words and low bytes)
    assert "INCOMPLETE (stream too short for the tier): 57 p-values" in out
    assert "pr.block_weights" in out  # NOT RUN too: 4 MiB samples


def test_weak_stream_exits_1(tmp_path, capsys):
    path = write_words(tmp_path / "c.bin", panel.plain_counter().read(1 << 19))
    assert command.run(parse("--raw", path, "--bytes", "2M", "--quiet")) == 1
    assert capsys.readouterr().out.startswith("FAIL")


@pytest.mark.parametrize("argv,message", [
    ((), "give --backend"),
    (("--input", "/nonexistent/x.bin"), "cannot open"),
    (("--backend", "numpy", "--bytes", "lots"), "--bytes"),
    (("--backend", "numpy", "--bytes", "6"), "multiple of 4"),
    (("--input", "-", "--seed", "3"), "--seed applies"),
    (("--backend", "numpy", "--seed", "-1"), "64-bit"),
    (("--backend", "no-such-backend"), "unknown backend"),
])
def test_usage_errors_are_one_line(argv, message):
    with pytest.raises(RngcheckError, match=message):
        command.run(parse(*argv))


def test_parse_bytes():
    assert command.parse_bytes("64M") == 64 << 20
    assert command.parse_bytes("1.5GiB") == 3 << 29
    assert command.parse_bytes("4096") == 4096


def test_suspect_is_retested_on_fresh_data(monkeypatch):
    """Force a SUSPECT level so high that some result is SUSPECT; the retest resolves it."""
    monkeypatch.setattr(battery, "suspect_level", lambda m: 0.2)
    doc = battery.run(philox_source(8), tier="smoke", nbytes=1 << 20, workers=1, interstream=False)
    retested = [e for e in doc["results"] if e["first_verdict"] == "SUSPECT"]
    assert retested and all(e["retest"] is not None for e in retested)
    assert all(e["retest"]["words_from"] == (1 << 18) for e in retested)
    for e in retested:
        assert e["verdict"] == ("FAIL" if e["retest"]["verdict"] != "PASS" else "PASS")


def test_document_is_plain_json():
    doc = battery.run(panel.WEAK["philox-3"](), tier="smoke", nbytes=1 << 20, workers=1)
    text = json.dumps(doc, allow_nan=False)  # strict JSON: plain Python types, no NaN or Infinity
    assert json.loads(text)["verdict"] == "FAIL"
    assert any(e["p_display"] == "< 1e-300" for e in doc["results"])


def test_parallel_split_and_retest_on_the_next_range(monkeypatch):
    """Two processes give the same document as one; a SUSPECT's retest reads the next range."""
    monkeypatch.setattr(battery, "PARALLEL_MIN_WORDS", 1 << 16)
    monkeypatch.setattr(battery, "suspect_level", lambda m: 0.3)
    nbytes = 3 << 20
    one = battery.run(philox_source(21), tier="smoke", nbytes=nbytes, workers=1, interstream=False)
    two = battery.run(philox_source(21), tier="smoke", nbytes=nbytes, workers=2, interstream=False)

    def key(d):
        return [(e["test"], e["level"], e["p_value"], e["verdict"], e["retest"]) for e in d["results"]]

    assert key(one) == key(two)
    from rngcheck.stats.streams import FunctionSource
    base = philox_source(21)
    shifted = FunctionSource(lambda first, count: base.function(first + nbytes // 4, count), {})
    fresh = battery.run(shifted, tier="smoke", nbytes=nbytes, workers=1, interstream=False)
    fresh_p = {(e["test"], e["level"]): e["p_value"] for e in fresh["results"]}
    retested = [e for e in two["results"] if e["retest"]]
    assert retested
    for e in retested:
        assert e["retest"]["p_value"] == fresh_p[(e["test"], e["level"])]


# -- fork safety is the backend's to declare (Backend.fork_safe) ---------------------------

class CallerPids:
    """The numpy reference under another name, noting which process made each call."""

    name = "numpy"  # the name alone used to make a stream fork-safe; it no longer does

    def __init__(self, log, fork_safe=None):
        from rngcheck.backends import load
        self.reference, self.log = load("numpy"), log
        if fork_safe is not None:
            self.fork_safe = fork_safe

    def random_generator(self, state, sizes, strides, buffer, **options):
        with open(self.log, "a") as log:
            log.write(f"{__import__('os').getpid()}\n")
        return self.reference.random_generator(state, sizes, strides, buffer, **options)


@pytest.mark.parametrize("declared", [True, False, None])
def test_the_backend_contract_decides_whether_a_stream_is_read_in_forked_processes(tmp_path, monkeypatch,
                                                                                    declared):
    """A backend that declares fork_safe = True is read by forked workers; one that declares
    False, or nothing (a backend need not subclass Backend), is read in this process only.
    The words, and so the results, are the same either way."""
    import os

    from rngcheck.stats.streams import BackendSource, XorSource
    monkeypatch.setattr(battery, "PARALLEL_MIN_WORDS", 1 << 16)
    log = tmp_path / "pids"
    source = BackendSource(CallerPids(log, declared), key=17, tensor_words=1 << 14)
    assert source.fork_safe is (declared is True)
    assert source.at(5).fork_safe is source.fork_safe  # a copy at an offset, as the workers open it
    assert XorSource(source.at(0), source.neighbour("key+1"), "key+1").fork_safe is source.fork_safe
    factories = battery.interstream_tests()
    words = 1 << 18
    accs, read = battery.feed_parallel(source, factories, words, workers=2)
    assert read == words
    callers = set(map(int, log.read_text().split()))
    if declared is True:
        assert callers - {os.getpid()}, "a fork-safe backend was read in this process only"
    else:
        assert callers == {os.getpid()}, "a backend that did not declare itself fork-safe was called after a fork"
    serial, _ = battery.feed(philox_source(17), factories, words)

    def key(accs):
        return json.dumps([acc.result() for acc in accs], sort_keys=True, default=float)

    assert key(accs) == key(serial)


def test_which_backends_declare_themselves_fork_safe():
    """The CPU reference does; the base class and the exec layer do not, even for an isolated
    worker hosting the reference, whose handshake names it "numpy" (its forked copies would
    share one child's pipes)."""
    from rngcheck.backends import Backend, load
    from rngcheck.backends.exec_backend import ExecBackend, isolated
    from rngcheck.stats.streams import BackendSource
    assert Backend.fork_safe is False and ExecBackend.fork_safe is False
    assert BackendSource(load("numpy"), key=1).fork_safe is True
    hosted = isolated("numpy", timeout=60)
    try:
        assert hosted.name == "numpy"
        assert BackendSource(hosted, key=1).fork_safe is False
    finally:
        hosted.close()


# -- the optional real peer: dieharder ---------------------------------------------------

from helpers import unavailable  # noqa: E402
from rngcheck.stats import peers  # noqa: E402


def need_dieharder():
    """Skip when dieharder is absent, except in CI, where it is installed and its absence fails."""
    if peers.dieharder_path() is None:
        unavailable("dieharder is not installed (apt-get install dieharder)")


def test_with_dieharder_absent_is_a_one_line_usage_error(monkeypatch, capsys):
    from rngcheck import cli
    monkeypatch.setattr(peers, "dieharder_path", lambda: None)
    with pytest.raises(RngcheckError, match="dieharder is not installed"):
        command.run(parse("--backend", "numpy", "--with", "dieharder"))
    assert cli.main(["stats", "--backend", "numpy", "--bytes", "1M", "--with", "dieharder"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "apt-get install dieharder" in err[0]


@pytest.mark.parametrize("argv,message", [
    (("--backend", "numpy", "--with", "testu01"), "unknown peer"),
    (("--backend", "numpy", "--dieharder-tests", "0"), "needs --with dieharder"),
])
def test_peer_usage_errors(argv, message, monkeypatch):
    monkeypatch.setattr(peers, "dieharder_path", lambda: "/usr/bin/dieharder")
    with pytest.raises(RngcheckError, match=message):
        command.run(parse(*argv))


def test_peers_are_one_registry(monkeypatch):
    """``--with NAME`` looks the peer up in peers.PEERS (rngcheck.registry): one line for a name it
    does not hold, naming those it does."""
    monkeypatch.setattr(peers, "dieharder_path", lambda: "/usr/bin/dieharder")
    assert peers.PEERS.names() == ("dieharder",)
    with pytest.raises(RngcheckError) as error:
        peers.check(["dieharder", "testu01"])
    assert str(error.value) == "unknown peer 'testu01' (known: dieharder)"


def test_parse_dieharder_table():
    text = """#=============================================================================#
        test_name   |ntup| tsamples |psamples|  p-value |Assessment
#=============================================================================#
   diehard_birthdays|   0|       100|     100|0.84435005|  PASSED
      rgb_lagged_sum|  31|   1000000|     100|0.99951234|   WEAK
 diehard_runs|   0|    100000|     100|0.00000000|  FAILED
# stdin_input_raw(): Error: EOF
"""
    rows = peers.parse_dieharder(text)
    assert [(r["test"], r["ntup"], r["p_value"], r["assessment"]) for r in rows] == [
        ("diehard_birthdays", 0, 0.84435005, "PASSED"), ("rgb_lagged_sum", 31, 0.99951234, "WEAK"),
        ("diehard_runs", 0, 0.0, "FAILED")]


def test_with_dieharder_beside_ours(tmp_path, capsys):
    """dieharder reads the same backend stream (continued as far as it asks); its results sit in
    doc["peers"], informative (the exit code is ours)."""
    need_dieharder()
    out = tmp_path / "r.json"
    code = command.run(parse("--backend", "numpy", "--bytes", "1M", "--seed", "3", "--with", "dieharder",
                             "--dieharder-tests", "0,100", "--json", str(out)))
    assert code == 0
    doc = json.loads(out.read_text())
    (peer,) = doc["peers"]
    assert peer["tool"] == "dieharder" and peer["version"] and peer["tests"] == [0, 100] and not peer["errors"]
    assert [r["test"] for r in peer["results"]] == ["diehard_birthdays", "sts_monobit"]
    for row in peer["results"]:
        assert 0.0 <= row["p_value"] <= 1.0 and row["assessment"] in ("PASSED", "WEAK", "FAILED")
    assert doc["reproduce"].endswith("--with dieharder --dieharder-tests 0,100")
    assert "peer dieharder" in capsys.readouterr().out


def test_with_dieharder_on_a_short_file_reports_the_end_of_the_stream(tmp_path):
    need_dieharder()
    path = write_words(tmp_path / "s.bin", philox_source(5).read(1 << 18))  # 1 MiB: dieharder wants far more
    out = tmp_path / "r.json"
    command.run(parse("--input", path, "--with", "dieharder", "--dieharder-tests", "100", "--json", str(out),
                      "--quiet"))
    (peer,) = json.loads(out.read_text())["peers"]
    assert peer["results"] == [] and "the stream ended" in peer["errors"][0]["error"]


def test_a_backend_that_dies_mid_stream_gives_an_incomplete_document_not_a_traceback(tmp_path):
    """The worker exits after three calls, while the inter-stream pairs are read: the streams read
    before keep their tests, the document is written (complete false, backend_failed true, the
    message names the stream and the exit), the verdict line says why, exit 2, no traceback."""
    import json
    import subprocess
    import sys
    from pathlib import Path
    spec = f"{Path(__file__).parent / 'faults.py'}:ExitsAfterCalls"
    out = tmp_path / "stats.json"
    done = subprocess.run([sys.executable, "-m", "rngcheck", "stats", "--backend", spec, "--tier", "smoke",
                           "--json", str(out), "--quiet"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and doc["backend_failed"] is True and doc["verdict"] == "INCOMPLETE"
    assert "the backend failed while reading the" in doc["message"] and "exit code 9" in doc["message"]
    assert doc["results"], "the tests of the streams read before the failure are kept"
    assert "(the backend failed)" in done.stdout
