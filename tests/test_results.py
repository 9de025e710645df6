"""rngcheck.results: the results table, export and read-back, baselines, expected failures, compare."""

from __future__ import annotations

import copy
import json

import pytest

import panel
from rngcheck import cli
from rngcheck.errors import RngcheckError
from rngcheck.results import baseline as B
from rngcheck.results import document as D
from rngcheck.results import journal as J
from rngcheck.results import statuses, table, tables
from test_report_html import result_document

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def base():
    """A real run: a correct implementation and one that refuses tensors that are not 4-D."""
    return result_document([("impl", panel.KnobbedPhilox("impl")), ("only4d", panel.Only4D("only4d"))],
                           select=["kat*", "layout*", "counter*"])


def edited(document, changes=None, created="2026-11-24T00:00:00+00:00"):
    """A copy of ``document`` as a later run: ``changes`` maps (backend, case) to fields to set."""
    doc = copy.deepcopy(document)
    doc["created"] = created
    for result in doc["results"]:
        result.update((changes or {}).get((result["backend"], result["case"]), {}))
    return D.finish(doc)


def write(doc, path):
    D.write(doc, path)
    return path


def test_table_is_long_form_with_every_result(base):
    data = table([base])
    assert list(data.columns) == list(tables.COLUMNS)
    assert len(data) == len(base["results"])
    assert set(data["backend"]) == {"impl", "only4d"}
    row = data[(data["backend"] == "only4d") & (data["case"] == "layout/rank5")].iloc[0]
    assert (row["status"], row["effective"], row["diagnosis"]) == ("failed", "failed", "rank-4-only")
    assert row["category"] == "layout" and row["implementation"] == "tests/panel.py KnobbedPhilox"
    passed = data[(data["backend"] == "impl") & (data["status"] == "passed")]
    assert len(passed) > 20 and set(data.loc[data["backend"] == "impl", "status"]) <= {"passed", "info"}
    assert (passed.loc[passed["category"] != "counter", "output_sha256"].str.len() == 64).all()


def test_one_list_of_statuses_everywhere():
    from rngcheck.conformance.directml import check
    from rngcheck.reports import html, terminal

    assert check.BROKEN is statuses.BROKEN and D.STATUSES is statuses.STATUSES
    assert html.STATUSES is statuses.STATUSES and terminal.STATUSES is statuses.STATUSES
    assert statuses.effective("failed", False) == "info" and statuses.effective("bogus", True) == "error"


def test_export_csv_and_parquet_read_back_to_the_same_table(base, tmp_path):
    paths = [write(base, tmp_path / "base.json"), write(edited(base), tmp_path / "later.json")]
    expected = table(paths)
    assert list(expected["run"].unique()) == ["base", "later"]
    assert cli.main(["export", *map(str, paths), "--csv", str(tmp_path / "t.csv"), "--quiet"]) == 0
    back = pd.read_csv(tmp_path / "t.csv", keep_default_na=False)
    assert len(back) == len(expected) and list(back.columns) == list(tables.COLUMNS)
    pd.testing.assert_frame_equal(tables.read_table(tmp_path / "t.csv"), expected)
    pytest.importorskip("pyarrow")
    assert cli.main(["export", *map(str, paths), "--parquet", str(tmp_path / "t.parquet"), "--quiet"]) == 0
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "t.parquet"), expected)


def test_parquet_without_pyarrow_is_one_line(base, tmp_path, monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("No module named 'pyarrow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    path = write(base, tmp_path / "base.json")
    assert cli.main(["export", str(path), "--parquet", str(tmp_path / "t.parquet")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "pyarrow" in err and "rngcheck[parquet]" in err


def test_compare_tells_every_kind_of_change(base):
    rank5, kat = "layout/rank5", "kat/philox4x32-10-00000000-00000000"
    later = edited(base, {
        ("impl", kat): {"status": "failed", "output_sha256": None, "diagnosis": {"id": "lanes-reversed"}},
        ("only4d", rank5): {"status": "passed", "output_sha256": "ab" * 32, "diagnosis": None},
        ("impl", "layout/rank8"): {"output_sha256": "cd" * 32},
    })
    later["results"] = [r for r in later["results"] if r["case"] != "counter/carry-word0-inside"]
    comparison = B.compare(table([base]), table([later]))
    assert [(c.backend, c.case, c.diagnosis) for c in comparison.regressions] == [("impl", kat, "lanes-reversed")]
    assert [(c.backend, c.case) for c in comparison.of("fixed")] == [("only4d", rank5)]
    assert [(c.backend, c.case) for c in comparison.of("changed")] == [("impl", "layout/rank8")]
    assert {c.case for c in comparison.of("removed")} == {"counter/carry-word0-inside"}
    assert all(c.kind != "still" or c.backend == "only4d" for c in comparison.changes)
    assert comparison.of("still") and not comparison.of("added")


def test_expected_failures_become_xfail_and_unexpected_passes_are_told(base, tmp_path):
    entries = B.parse_expected("# known\nonly4d::layout/rank*  # refuses tensors that are not 4-D\n"
                               "impl::kat/*  # not expected to pass\n\nnever/*  # stale entry\n")
    comparison = B.compare(table([base]), table([edited(base)]), entries)
    assert {c.case for c in comparison.of("xfail")} >= {"layout/rank5", "layout/rank8"}
    assert all(c.reason == "refuses tensors that are not 4-D" for c in comparison.of("xfail"))
    assert {c.case for c in comparison.of("xpass")} == {c["id"] for c in base["cases"] if c["id"].startswith("kat/")}
    assert [e.pattern for e in comparison.unused_expected] == ["never/*"]
    assert not comparison.regressions
    with pytest.raises(RngcheckError, match=r"x.txt:2: an expected failure needs a reason"):
        B.parse_expected("a/*  # fine\nkat/*\n", "x.txt")


def test_compare_command_gates_ci_on_regressions(base, tmp_path, capsys):
    old = write(base, tmp_path / "base.json")
    same = write(edited(base), tmp_path / "same.json")
    worse = write(edited(base, {("impl", "layout/rank5"): {"status": "crashed", "output_sha256": None}}),
                  tmp_path / "worse.json")
    assert cli.main(["compare", str(old), str(same)]) == 0
    assert "OK: 0 regressions" in capsys.readouterr().out
    html = tmp_path / "compare.html"
    assert cli.main(["compare", str(old), str(worse), "--html", str(html)]) == 1
    out = capsys.readouterr().out
    assert "REGRESSED: 1 regressions" in out and "impl: layout/rank5 passed -> crashed" in out
    page = html.read_text()
    assert "REGRESSED" in page and "layout/rank5" in page and "default-src 'none'" in page
    known = tmp_path / "known.txt"
    known.write_text("impl::layout/rank5  # the device loses the context on 5-D tensors (bug 1234)\n")
    assert cli.main(["compare", str(old), str(worse), "--expected-failures", str(known)]) == 0
    assert "1 expected failures" in capsys.readouterr().out


def test_compare_bad_input_is_one_line(base, tmp_path, capsys):
    old = write(base, tmp_path / "base.json")
    other = edited(base)
    for r in other["results"]:
        r["backend"] = "x" + r["backend"]
    other["backends"] = [dict(b, name="x" + b["name"]) for b in other["backends"]]
    unrelated = write(other, tmp_path / "unrelated.json")
    newer = write({**base, "schema_version": D.SCHEMA_VERSION + 1}, tmp_path / "newer.json")
    for argv, words in ((["compare", str(old), str(unrelated)], "no case in common"),
                        (["compare", str(old), str(old)], "same run"),
                        (["compare", str(old), str(newer)], "newer than this rngcheck reads"),
                        (["compare", str(old), str(tmp_path / "missing.json")], "cannot read")):
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert words in err and err.count("\n") == 0, err


def test_versions_unfinished_journals_and_the_same_run_twice_are_labelled(base, tmp_path, capsys):
    old = write(base, tmp_path / "base.json")
    # an unfinished run: a journal without its end line, as a killed run leaves it
    journal = J.Journal(tmp_path / "new.journal.jsonl")
    later = edited(base)
    later["rngcheck_version"] = "0.2.0"
    journal.start(later, {"profile": "quick", "seed": 0})
    for entry in later["backends"]:
        journal.write({"backend": entry})
    for result in later["results"][:5]:
        journal.write({"result": result})
    journal.close()
    assert cli.main(["compare", str(old), str(tmp_path / "new.journal.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "not finished: new" in out and "rngcheck 0.1.0" in out and "0.2.0" in out
    assert "not run: the new run did not finish" in out
    data = table([old, old, tmp_path / "new.journal.jsonl"])   # the same run twice is kept once
    assert list(data["run"].unique()) == ["base", "new"]
    assert data.loc[data["run"] == "new", "complete"].eq(False).all()


def test_run_with_baseline_exits_on_regressions_only(tmp_path, capsys):
    only4d = f"{panel.__file__}:Only4D"
    base = tmp_path / "base.json"
    assert cli.main(["run", "--backend", only4d, "--case", "layout/rank5", "--json", str(base), "--quiet"]) == 1
    capsys.readouterr()
    assert cli.main(["run", "--backend", only4d, "--case", "layout/rank5", "--quiet", "--baseline", str(base)]) == 0
    known = tmp_path / "known.txt"
    known.write_text("layout/*  # refuses tensors that are not 4-D\n")
    assert cli.main(["run", "--backend", only4d, "--case", "layout/rank5", "--quiet",
                     "--expected-failures", str(known)]) == 0
    assert "0 unexpected failures" in capsys.readouterr().out
    known.write_text("layout/rank8  # another case\nkat/*  # the panel's backend passes these\n")
    assert cli.main(["run", "--backend", only4d, "--case", "layout/rank5", "--case", "kat/*", "--quiet",
                     "--expected-failures", str(known)]) == 1
    out = capsys.readouterr().out
    assert "unexpected failure: Only4D: layout/rank5 [rank-4-only]" in out
    assert "1 unexpected failures, 0 unexpected passes" in out
    assert cli.main(["run", "--backend", "numpy", "--case", "kat/*", "--quiet", "--expected-failures", str(known)]) == 0
    assert "unexpected pass: numpy: kat/" in capsys.readouterr().out
    lanes = f"{panel.__file__}:LanesReversed"
    good = tmp_path / "good.json"
    assert cli.main(["run", "--backend", "numpy", "--case", "kat/*", "--json", str(good), "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main(["run", "--backend", lanes, "--case", "kat/*", "--quiet", "--baseline", str(good)]) == 1
    assert "3 regressions" in capsys.readouterr().out


def test_records_round_trip_and_tolerate_damage(base):
    from rngcheck.results.records import CaseRecord, ResultRecord

    for result in base["results"]:
        assert ResultRecord.from_json(result).to_json() == result
    for case in base["cases"]:
        assert CaseRecord.from_json(case).to_json() == case
    damaged = ResultRecord.from_json({"backend": 3, "status": "kinda", "seconds": "x", "diagnosis": [1],
                                      "mismatches": [None, {"index": 1}], "required": False})
    assert (damaged.backend, damaged.status, damaged.diagnosis, damaged.mismatches) == ("3", "error", None,
                                                                                       [{"index": 1}])
    assert damaged.seconds != damaged.seconds and damaged.required is False   # nan: unknown


def test_a_document_and_its_journal_are_one_run_in_the_report(tmp_path, capsys):
    from rngcheck.reports import html

    out = tmp_path / "r.json"
    assert cli.main(["run", "--backend", "numpy", "--case", "kat/*", "--json", str(out), "--quiet"]) == 0
    journal = tmp_path / "r.journal.jsonl"
    sources = html.sources_of([out, journal])
    assert len(sources) == 1 and "also given as" in sources[0].notes[0]
    page = html.render([out, journal])
    assert "the same run was also given as" in page
    newer = json.loads(out.read_text())
    newer.update(created="2026-12-01T00:00:00+00:00", rngcheck_version="0.9.0")
    model = html.build(html.sources_of([out, newer]), figures=False)
    assert any("rngcheck 0.9.0" in note for run in model["runs"] for note in run["notes"])


def test_a_run_refused_before_it_starts_leaves_no_journal_and_keeps_an_old_one(tmp_path, capsys):
    """A backend that does not load ends the run before its journal's first line: a journal the
    run created is removed (no empty file left beside --json), and a previous journal at that
    path keeps its lines (it is emptied only when the new run starts)."""
    fresh = tmp_path / "fresh.json"
    assert cli.main(["run", "--backend", "no-such-backend", "--json", str(fresh), "--quiet"]) == 2
    assert not J.journal_path_for(fresh).exists() and not fresh.exists()
    kept = tmp_path / "kept.json"
    old = J.journal_path_for(kept)
    old.write_text('{"journal": "old"}\n')
    assert cli.main(["run", "--backend", "no-such-backend", "--json", str(kept), "--quiet"]) == 2
    assert old.read_text() == '{"journal": "old"}\n'
    assert cli.main(["run", "--backend", "numpy", "--case", "vectors/*", "--json", str(kept), "--quiet"]) == 0
    assert '"old"' not in old.read_text() and J.read(old)[0]["results"]
    capsys.readouterr()


def test_agreement_is_one_rule_for_the_document_and_the_report():
    """results.document.agreement: a case counts when two or more columns have its digest; it
    agrees when they are all equal; rows without a digest take no part. The HTML view of one
    document gives the same counts as the document's own agreement list."""
    rows = [("a", "x", "d1"), ("a", "y", "d1"), ("b", "x", "d1"), ("b", "y", "d2"),
            ("c", "x", "d3"), ("c", "y", ""), ("d", "x", "d4")]
    assert D.agreement(rows) == [{"case": "a", "agree": True, "outputs": {"x": "d1", "y": "d1"}},
                                 {"case": "b", "agree": False, "outputs": {"x": "d1", "y": "d2"}}]
    from rngcheck.reports import html
    document = cli_document_with_two_backends()
    listed = document["agreement"]
    view = html.build(html.sources_of([document]))["agreement"]
    assert view["compared"] == len(listed) and view["agree"] == sum(a["agree"] for a in listed)
    assert [d["case"] for d in view["differ"]] == [a["case"] for a in listed if not a["agree"]]
    assert view["differ"], "the document must have a case on which the backends differ"


def cli_document_with_two_backends():
    import panel
    from rngcheck.backends import load
    from rngcheck.conformance.runner import NamedBackend, RunOptions, run
    backends = [NamedBackend("numpy", load("numpy")), NamedBackend("flips", panel.FlipsTwoWords())]
    return run(backends, RunOptions(profile="quick", seed=0))
