"""Hostile documents and files: deep, endless, devices, pipes, formulas, invisible characters, inflated
checkpoints (hardening rounds 2 and 3)."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
import zipfile

import numpy as np
import pytest

from probes import HOSTILE, INVISIBLE, _checkpoint, _hostile_files, edited_copy, one_line_error, rngcheck, run_args


@pytest.mark.parametrize("which", ["deep", "zero", "urandom", "journal"])
def test_a_hostile_document_is_one_line_exit_2(tmp_path, which, monkeypatch):
    import rngcheck.jsonfile as jsonfile
    path = _hostile_files(tmp_path)[which]
    from rngcheck import cli
    monkeypatch.setattr(jsonfile, "MAX_BYTES", 8 << 20)  # /dev/zero: refused after the limit, not memory
    code = cli.main(["report", path])
    assert code == 2


@pytest.mark.parametrize("which", ["deep", "zero", "journal"])
def test_a_hostile_file_through_the_command_is_one_line(tmp_path, which):
    path = _hostile_files(tmp_path)[which]
    one_line_error(rngcheck("report", path), 2)
    one_line_error(rngcheck("run", "--resume", path), 2)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_before_it_is_read(device, monkeypatch):
    """An endless device is refused from its file type, not after reading up to the size limit
    (the limit is left at its 512 MiB default here: a read would take seconds and memory)."""
    from rngcheck.errors import RngcheckError
    from rngcheck.jsonfile import read_bytes_limited
    with pytest.raises(RngcheckError, match="a device, not a file"):
        read_bytes_limited(device, what="document")


def test_a_document_through_a_pipe_is_still_read(tmp_path):
    """A pipe is not a device: ``... | rngcheck report /dev/stdin`` reads the document."""
    document = tmp_path / "doc.json"
    assert rngcheck("run", "--backend", "numpy", "--case", "vectors/*", "--json", str(document),
                    "--quiet").returncode == 0
    done = rngcheck("report", "/dev/stdin", "--html", str(tmp_path / "r.html"), input=document.read_text())
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").stat().st_size > 0


def test_bidi_and_zero_width_characters_in_names_are_shown_escaped(tmp_path):
    from rngcheck.reports import html
    from rngcheck.reports.terminal import printable
    from rngcheck.results import document as D
    doc = tmp_path / "a.json"
    assert run_args(tmp_path, "--json", str(doc)).returncode == 0
    data = json.loads(doc.read_text())
    evil = "numpy\u202eLIAF\u200b"
    data["backends"][0]["name"] = evil
    for r in data["results"]:
        r["backend"] = evil
    page = html.render([D.finish(data)])
    assert "\u202e" not in page and "\u200b" not in page and "\\u202e" in page
    assert "\u202e" not in printable(evil) and "\\u200b" in printable(evil)
    stats = {"p_display": "0.5\u202e1"}
    assert html.p_text(stats) == "0.5\\u202e1"
    from rngcheck.reports import junit
    for r in data["results"]:
        r["message"] = "refused: <b>\x1b[2J\u202eLIAF"
    xml = ET.tostring(junit.to_junit(D.finish(data)).getroot(), encoding="unicode")
    assert "\u202e" not in xml and "\x1b" not in xml and "\\u202e" in xml and "\\x1b" in xml and "<b>" not in xml


def test_csv_export_neutralises_formulas_and_control_characters(tmp_path, kat_run):
    import pandas as pd

    from rngcheck.results.tables import COLUMNS, DTYPES, table

    def hostile(document):
        for result, name in zip(document["results"], HOSTILE * 3):
            result["message"] = name
        document["results"][0]["case"] = HOSTILE[0]
        document["cases"][0]["id"] = HOSTILE[0]

    doc = edited_copy(kat_run[0], tmp_path / "hostile.json", hostile)
    out = tmp_path / "t.csv"
    result = rngcheck("export", str(doc), "--csv", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    raw = out.read_text(encoding="utf-8")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u200b\u202e]", raw)
    read = pd.read_csv(out, dtype=str, keep_default_na=False)
    original = table([doc])
    texts = [c for c in COLUMNS if DTYPES[c] == "str"]
    for column in texts:
        for written, value in zip(read[column], original[column]):
            if value.startswith(("=", "+", "-", "@", "\uff1d")):
                assert written == "'" + value.replace("\x1b", "\\x1b"), (column, value, written)
            elif value.isprintable():
                assert written == value, (column, value, written)   # what is not hostile reads back equal
            else:
                assert written.isprintable() and "\\" in written, (column, value, written)


def test_history_and_compare_pages_escape_invisible_characters(tmp_path, kat_run):
    def rename(created):
        def edit(document):
            document["created"] = created
            for entry in document["backends"]:
                entry["name"] = INVISIBLE
                entry["describe"]["version"] = "v\u202e1"
            for result in document["results"]:
                result["backend"] = INVISIBLE
        return edit

    old = edited_copy(kat_run[0], tmp_path / "old.json", rename("2001-01-01T00:00:00+00:00"))
    new = edited_copy(kat_run[0], tmp_path / "new.json", rename("2002-01-01T00:00:00+00:00"))
    new_doc = json.loads(new.read_text())
    new_doc["results"][0]["status"] = "failed"
    new.write_text(json.dumps(new_doc))
    page = tmp_path / "r.html"
    assert rngcheck("report", str(old), str(new), "--html", str(page)).returncode in (0, 1)
    html = page.read_text(encoding="utf-8")
    assert 'id="trend"' in html
    compare_page = tmp_path / "c.html"
    assert rngcheck("compare", str(old), str(new), "--html", str(compare_page)).returncode == 1
    for text in (html, compare_page.read_text(encoding="utf-8")):
        assert not re.search("[\x00\x1b\u200b\u202e]", text)
        assert "\\u202e" in text


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
