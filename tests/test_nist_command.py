"""``rngcheck nist``: NIST's data format end to end, binary and stdin input, the second-level
rules of rev1a section 4.2, bad input, and a backend's stream."""

import io
import json

import numpy as np
import pytest

from nist_sequences import e_bits
from rngcheck.cli import main
from rngcheck.stats import nist_sts


def _ascii(bits, width=25):
    """NIST's data-file layout: lines of bits, indented (sts skips whitespace)."""
    text = "".join(map(str, bits.tolist()))
    return "".join(f"   {text[i:i + width]}\n" for i in range(0, len(text), width))


def _rows(doc, test, label=""):
    return [r for r in doc["rows"] if r["test"] == test and r["label"] == label][0]


@pytest.fixture(scope="module")
def e_document(tmp_path_factory):
    path = tmp_path_factory.mktemp("nist") / "data.e"
    path.write_text(_ascii(e_bits()))
    out = path.with_suffix(".json")
    assert main(["nist", str(path), "--quiet", "--workers", "1", "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_nist_data_file_end_to_end(e_document):
    """NIST's data.e layout gives Appendix B's p-values in the document."""
    doc = e_document
    assert doc["source"]["format"] == "ascii" and doc["sequences"] == 1 and doc["length"] == 10 ** 6
    assert len(doc["rows"]) == 188
    assert abs(_rows(doc, "Frequency")["p_values"][0] - 0.953749) <= 1e-6
    assert abs(_rows(doc, "Rank")["p_values"][0] - 0.306156) <= 1e-6
    assert abs(_rows(doc, "NonOverlappingTemplate", "000000001")["p_values"][0] - 0.078790) <= 1e-6
    assert abs(_rows(doc, "RandomExcursions", "x = +1")["p_values"][0] - 0.786868) <= 1e-6
    assert abs(_rows(doc, "LinearComplexity")["p_values"][0] - 0.826335) <= 1e-6
    assert doc["verdict"] == "PASS" and doc["counts"]["FAIL"] == 0


def test_a_good_single_sequence_passes_with_p_values_below_alpha(e_document):
    """One sequence is judged p-value by p-value (rule 2 of nist_sts): e's 188 include 4 below
    alpha = 0.01 (1.9 expected by chance), none below the level the 188 together ask: PASS."""
    doc = e_document
    assert doc["rules"]["rows"] == {nist_sts.RULE_P_VALUE: 188}
    assert doc["rules"]["single_p_value_level"] == pytest.approx(5.346e-5, rel=1e-3)
    below = [(r["test"], r["label"]) for r in doc["rows"] if r["p_values"][0] < 0.01]
    assert below == [("NonOverlappingTemplate", "010001011"), ("NonOverlappingTemplate", "110101100"),
                     ("NonOverlappingTemplate", "111110000"), ("RandomExcursions", "x = -1")]
    assert all(r["verdict"] == "PASS" and r["rule"] == nist_sts.RULE_P_VALUE for r in doc["rows"])
    assert "4 of 188 are below alpha itself" in doc["notes"][0]


def test_all_zero_data_as_one_sequence_fails_and_says_why(tmp_path, capsys):
    """Hardening item 3: on one sequence sts's proportion rule passes anything (its lower bound is
    int(0.69) = 0), so 125,000 zero bytes passed 162 streams. Now each p-value is judged (rule 2):
    FAIL, exit 1, and the output and the document say which rule judged and why."""
    path = tmp_path / "z.bin"
    path.write_bytes(bytes(125000))
    out = tmp_path / "z.json"
    assert main(["nist", str(path), "--workers", "1", "--json", str(out)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("FAIL: 0 p-value streams pass, 162 fail, 26 not applicable (162 single p-values, "
                                "judged against alpha = 0.01 together: too few sequences for sts's proportion and "
                                "uniformity rules)")
    note = [line for line in lines if line.startswith("Note: ")]
    assert len(note) == 1 and "its lower bound is 0 below 2 sequences: it fails nothing" in note[0]
    assert "162 fail; 162 of 162 are below alpha itself" in note[0]
    assert any(line.endswith("*  Frequency  p = 0.000000 < alpha") for line in lines)
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "FAIL" and doc["counts"] == {"PASS": 0, "FAIL": 162, "NOT APPLICABLE": 26}
    assert doc["rules"]["rows"] == {nist_sts.RULE_P_VALUE: 162} and doc["notes"] == [note[0][len("Note: "):-1]]
    frequency = _rows(doc, "Frequency")
    assert frequency["rule"] == nist_sts.RULE_P_VALUE and frequency["verdict"] == "FAIL"
    assert frequency["reasons"] == ["p = 0.000000 < 6.2e-05 (alpha = 0.01 over 162 single p-values)"]
    assert main(["nist", str(path), "--workers", "1", "--quiet"]) == 1
    assert capsys.readouterr().out.startswith("FAIL: 0 pass, 162 fail, 26 not applicable (162 single p-values")


def test_the_fewest_sequences_each_rule_needs():
    """sts-2.1.2's proportion rule can fail a stream from 2 sequences (int(0.69) = 0 passes needed
    of 1; 1 of 2); its uniformity p-value exists from 10 (rev1a 4.2.2 asks 55); one p-value of k
    fails below 1 - 0.99^(1/k)."""
    assert nist_sts.proportion_bounds(1) == (0, 1) and nist_sts.proportion_bounds(2) == (1, 2)
    assert nist_sts.PROPORTION_FROM == nist_sts.fewest_for_proportion() == 2
    assert nist_sts.uniformity([1] * 9) is None and nist_sts.uniformity([1] * 10) == pytest.approx(1.0)
    assert nist_sts.UNIFORMITY_FROM == 10 and nist_sts.UNIFORMITY_ASKED == 55
    assert nist_sts.single_sequence_level(1) == pytest.approx(0.01)
    assert 1 - (1 - nist_sts.single_sequence_level(188)) ** 188 == pytest.approx(0.01)


def test_two_all_zero_sequences_fail_by_sts_proportion_rule():
    """From 2 sequences sts's rules judge as before: 0 of 2 passing is below the bound 1."""
    doc = nist_sts.run(np.zeros(2 * 1000, np.uint8), n=1000, sequences=None, params=nist_sts.Parameters(),
                       source={})
    frequency = _rows(doc, "Frequency")
    assert frequency["rule"] == nist_sts.RULE_PROPORTION and frequency["verdict"] == "FAIL"
    assert frequency["reasons"] == ["0/2 passed, outside 1..2"] and doc["verdict"] == "FAIL"
    assert nist_sts.RULE_P_VALUE not in doc["rules"]["rows"] and doc["rules"]["single_p_value_level"] is None
    assert len(doc["notes"]) == 1 and "fewer than 55 sequences" in doc["notes"][0]


def test_a_stream_that_applies_to_one_sequence_of_several_is_judged_by_its_p_value():
    """The rule is chosen per stream: of e and a walk that never returns (J = 1), the random
    excursion streams hold e's p-value only (rule 2, k = 26: e's x = -1, 0.0078, passes), the
    frequency stream both (sts's proportion rule: 1 of 2 passing is its bound, so the walk's
    failure alone does not fail the stream, as in sts-2.1.2)."""
    drift = np.ones(10 ** 6, dtype=np.uint8)
    drift[1::4] = 0
    doc = nist_sts.run(np.concatenate([e_bits(), drift]), n=10 ** 6, sequences=None,
                       params=nist_sts.Parameters(), source={})
    assert doc["rules"]["rows"][nist_sts.RULE_P_VALUE] == 26
    excursion = _rows(doc, "RandomExcursions", "x = -1")
    assert excursion["rule"] == nist_sts.RULE_P_VALUE and excursion["sample_size"] == 1
    assert excursion["p_values"][0] < 0.01 and excursion["verdict"] == "PASS"
    frequency = _rows(doc, "Frequency")
    assert frequency["rule"] == nist_sts.RULE_PROPORTION and frequency["passed"] == frequency["proportion_min"] == 1
    assert frequency["verdict"] == "PASS"


def test_a_backend_single_sequence_passes(tmp_path):
    out = tmp_path / "one.json"
    assert main(["nist", "--backend", "numpy", "--sequences", "1", "--length", "200000", "--quiet",
                 "--workers", "1", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "PASS" and set(doc["rules"]["rows"]) == {nist_sts.RULE_P_VALUE}


def test_binary_and_stdin_give_the_same_document(tmp_path, monkeypatch, capsys):
    bits = np.random.default_rng(4).integers(0, 2, 8 * 20000, dtype=np.uint8)
    binary = tmp_path / "r.bin"
    binary.write_bytes(np.packbits(bits).tobytes())
    ascii_path = tmp_path / "r.txt"
    ascii_path.write_text(_ascii(bits))
    docs = []
    for args in (["nist", str(binary), "--format", "binary"], ["nist", str(ascii_path)]):
        out = tmp_path / "out.json"
        assert main(args + ["--length", "20000", "--quiet", "--workers", "1", "--json", str(out)]) == 0
        docs.append(json.loads(out.read_text()))
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(ascii_path.read_bytes())))
    assert main(["nist", "-", "--length", "20000", "--quiet", "--workers", "1", "--json", "-"]) == 0
    docs.append(json.loads(capsys.readouterr().out))
    assert docs[0]["source"]["format"] == "binary" and docs[1]["source"]["format"] == "ascii"
    assert docs[0]["sequences"] == 8
    first = [r["p_values"] for r in docs[0]["rows"]]
    assert all([r["p_values"] for r in d["rows"]] == first for d in docs[1:])
    assert abs(_rows(docs[0], "Frequency")["p_values"][0]
               - __import__("rngcheck.stats.nist", fromlist=["x"]).monobit(bits[:20000])) < 1e-15


def test_parallel_equals_serial():
    bits = np.random.default_rng(9).integers(0, 2, 4 * 5000, dtype=np.uint8)
    kw = dict(n=5000, sequences=None, params=nist_sts.Parameters(), source={})
    one = nist_sts.run(bits, workers=1, **kw)
    two = nist_sts.run(bits, workers=2, **kw)
    assert one["rows"] == two["rows"]


def test_short_sequences_mark_tests_not_applicable(tmp_path, capsys):
    path = tmp_path / "short.bin"
    path.write_bytes(np.random.default_rng(2).integers(0, 256, 2000, dtype=np.uint8).tobytes())
    assert main(["nist", str(path), "--format", "binary", "--length", "16000", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "Universal: not applicable: n = 16000 < 387840, the minimum of rev1a section 2.9" in out
    assert "LinearComplexity: not applicable" in out and "Rank: not applicable" in out
    assert "Traceback" not in out


def test_a_biased_generator_fails_with_exit_1(tmp_path, capsys):
    rng = np.random.default_rng(6)
    bits = (rng.random(30 * 10000) < 0.53).astype(np.uint8)
    path = tmp_path / "biased.bin"
    path.write_bytes(np.packbits(bits).tobytes())
    out = tmp_path / "b.json"
    assert main(["nist", str(path), "--format", "binary", "--length", "10000", "--quiet", "--workers", "1",
                 "--json", str(out)]) == 1
    doc = json.loads(out.read_text())
    frequency = _rows(doc, "Frequency")
    assert frequency["verdict"] == "FAIL" and frequency["passed"] < frequency["proportion_min"]
    assert doc["verdict"] == "FAIL"
    assert "FAIL" in capsys.readouterr().out


@pytest.mark.parametrize("content,args,message", [
    (b"0101 0110 01x1" * 1000, ["--length", "100"], "byte 12 is b'x'"),
    (b"01" * 40, ["--format", "ascii", "--length", "1000"], "fewer than one sequence of 1000 bits"),
    (b"01" * 600, ["--format", "ascii", "--length", "100", "--sequences", "20"], "holds 12 sequence(s)"),
    (b"01" * 600, ["--length", "100", "--block-frequency", "0"], "--block-frequency M = 0"),
    (b"01" * 600, ["--length", "50"], "at least 100 bits"),
    (b"01" * 600, ["--length", "1000", "--serial", "2"], "--serial m = 2"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content, args, message):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    assert main(["nist", str(path), "--workers", "1"] + args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_missing_file_and_no_source(tmp_path, capsys):
    assert main(["nist", "/nonexistent/bits"]) == 2
    assert main(["nist"]) == 2
    path = tmp_path / "bits.txt"
    path.write_text("01" * 100)
    # (a missing directory is made, as for every command's output: rngcheck.outputs.check_outputs)
    assert main(["nist", str(path), "--length", "100", "--json", str(path / "under-a-file.json")]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and "give a bit FILE" in err and "cannot write" in err


def test_backend_stream(tmp_path):
    out = tmp_path / "b.json"
    assert main(["nist", "--backend", "numpy", "--sequences", "3", "--length", "50000", "--quiet",
                 "--workers", "1", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["source"]["backend"] == "numpy" and doc["sequences"] == 3
    assert doc["reproduce"] == "rngcheck nist --backend numpy --seed 1 --length 50000 --sequences 3"
    assert _rows(doc, "Frequency")["sample_size"] == 3


def test_second_level_rules():
    assert nist_sts.proportion_bounds(100) == (96, 101)  # sts-2.1.2: "approximately 96 for 100"
    assert nist_sts.proportion_bounds(1000) == (980, 999)  # rev1a 4.2.1: 0.99 - 0.0094392 = 0.9805607
    assert nist_sts.bins_of([0.0, 0.05, 0.1, 0.95, 1.0]) == [2, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert nist_sts.uniformity([10] * 10) == pytest.approx(1.0)
    assert nist_sts.uniformity([100] + [0] * 9) < 1e-10
    assert nist_sts.uniformity([1] * 9) is None
    # chi2 = (9 + 4 + 1 + 1 + 0 + 1 + 9 + 4 + 0 + 1) / 10 = 3: p = igamc(9/2, 3/2) = 0.964295
    assert nist_sts.uniformity([7, 12, 9, 11, 10, 11, 13, 8, 10, 9]) == pytest.approx(0.964295, abs=1e-6)


def test_random_excursion_rows_leave_out_sequences_where_they_do_not_apply():
    drift = np.ones(2 * 10 ** 6, dtype=np.uint8)  # a walk that never returns: J = 1
    drift[1::4] = 0
    doc = nist_sts.run(drift, n=10 ** 6, sequences=None, params=nist_sts.Parameters(), source={})
    row = _rows(doc, "RandomExcursions", "x = +1")
    assert row["verdict"] == "NOT APPLICABLE" and row["sample_size"] == 0
    assert "cycles < 500" in row["reasons"][0]
    assert _rows(doc, "Frequency")["verdict"] == "FAIL"


def test_the_html_report_shows_a_nist_document(tmp_path):
    bits = np.random.default_rng(5).integers(0, 2, 12 * 5000, dtype=np.uint8)
    path = tmp_path / "r.bin"
    path.write_bytes(np.packbits(bits).tobytes())
    out, html = tmp_path / "n.json", tmp_path / "r.html"
    assert main(["nist", str(path), "--format", "binary", "--length", "5000", "--quiet", "--workers", "1",
                 "--json", str(out)]) == 0
    assert main(["report", str(out), "--html", str(html), "--quiet"]) == 0
    page = html.read_text()
    assert "nist.sts.Frequency" in page and "nist.sts.Universal" in page  # a row, and a test that did not apply
    assert "sts-2.1.2" in page


def test_a_backend_that_crashes_is_hosted_in_a_worker_and_said_in_one_line(tmp_path):
    """``nist --backend`` hosts a backend in a worker (as run and stats do): one that exits at its
    first call does not take rngcheck down; the command says so in one line and exits 1."""
    import subprocess
    import sys
    from pathlib import Path
    spec = f"{Path(__file__).parent / 'faults.py'}:ExitsAtOnce"
    done = subprocess.run([sys.executable, "-m", "rngcheck", "nist", "--backend", spec, "--sequences", "2",
                           "--length", "100000"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("rngcheck: error: the backend failed: BackendCrashed") and "exit code 9" in lines[0]


def test_a_binary_file_is_kept_packed_and_sliced_like_the_unpacked_bits(tmp_path):
    """Binary input stays a byte per 8 bits in memory; every slice equals the unpacked array's."""
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 256, 1000, dtype=np.uint8)
    path = tmp_path / "b.bin"
    path.write_bytes(raw.tobytes())
    bits, fmt = nist_sts.read_bits(str(path), "binary")
    assert fmt == "binary" and isinstance(bits, nist_sts.PackedBits) and bits.data.nbytes == 1000
    full = np.unpackbits(raw)
    assert bits.size == full.size == 8000
    for start, stop in [(0, 8000), (0, 1), (3, 11), (7, 8), (8, 16), (5, 5), (7993, 8000), (123, 4567), (10, 3)]:
        assert np.array_equal(bits[start:stop], full[start:stop]), (start, stop)
    with pytest.raises(TypeError):
        bits[::2]
