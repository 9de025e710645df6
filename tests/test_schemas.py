"""The published JSON Schemas (rngcheck/results/schemas/) hold for what rngcheck writes."""

from __future__ import annotations

import copy
import json

import pytest

import panel
from rngcheck import cli
from rngcheck.errors import RngcheckError
from rngcheck.results import schema, statuses
from test_report_html import result_document, stats_document

pytest.importorskip("jsonschema")


@pytest.fixture(scope="module")
def document():
    return result_document([("numpy", panel.KnobbedPhilox("numpy")), ("only4d", panel.Only4D("only4d")),
                            ("crashes", panel.Crashes("crashes"))], select=["kat*", "layout*", "validation*"])


def test_result_documents_hold_to_their_schema(document):
    assert {r["status"] for r in document["results"]} >= {"passed", "failed", "error", "info"}
    schema.validate(document, "rngcheck-result")


def test_the_schema_has_the_one_list_of_statuses():
    result = schema.schema("rngcheck-result")["$defs"]["result"]
    assert tuple(result["properties"]["status"]["enum"]) == statuses.STATUSES


def test_a_broken_document_is_named(document):
    bad = copy.deepcopy(document)
    bad["results"][3]["status"] = "kinda"
    del bad["cases"][1]["inputs"]
    found = schema.problems(bad, "rngcheck-result")
    assert any(p.startswith("at results/3/status") for p in found)
    assert any(p.startswith("at cases/1") and "inputs" in p for p in found)
    with pytest.raises(RngcheckError, match="not a valid rngcheck-result document"):
        schema.validate(bad, "rngcheck-result")


def test_journal_lines_and_stats_documents_hold_to_their_schemas(tmp_path):
    out = tmp_path / "run.json"
    code = cli.main(["run", "--backend", "numpy", "--backend", f"{panel.__file__}:LanesReversed", "--case", "kat*",
                     "--case", "layout/rank5", "--json", str(out), "--quiet"])
    assert code == 1
    schema.validate(json.loads(out.read_text()), "rngcheck-result")
    with_stats = tmp_path / "stats.json"
    assert cli.main(["run", "--backend", "numpy", "--case", "kat*", "--json", str(with_stats), "--stats", "smoke",
                     "--quiet"]) == 0
    document = json.loads(with_stats.read_text())
    assert document["stats"]
    schema.validate(document, "rngcheck-result")   # with its embedded stats document
    lines = [json.loads(line) for line in (tmp_path / "run.journal.jsonl").read_text().splitlines()]
    assert "journal" in lines[0] and "end" in lines[-1] and len(lines) == 1 + 2 + 8 + 1
    for line in lines:
        schema.validate(line, "rngcheck-journal")
    with pytest.raises(RngcheckError):
        schema.validate({"result": {"backend": "x"}}, "rngcheck-journal")
    schema.validate(stats_document(tmp_path, biased=True), "rngcheck-stats")
