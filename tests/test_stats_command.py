"""`rngcheck stats` (rngcheck.stats.command): backend and raw streams, short input, exit codes, JSON."""

import argparse
import io
import json
import sys

import numpy as np
import pytest

from rngcheck.errors import RngcheckError
from rngcheck.stats import battery, command, panel
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
    strip = lambda d: [(e["test"], e["level"], e["p_value"]) for e in d["results"]]
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
    assert "PASS (stream too short for the tier): 35 p-values" in out  # the tests that had enough data report


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
    key = lambda d: [(e["test"], e["level"], e["p_value"], e["verdict"], e["retest"]) for e in d["results"]]
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
