"""``rngcheck run``'s test-runner verbs, as a pytest user expects them (issue 38): ``-k EXPRESSION``,
``-x`` / ``--maxfail N``, ``--list``, ``--case`` as a substring, and what an unknown ``--backend``
probably meant (rngcheck/conformance/runner.py rules 1 to 6, rngcheck/expression.py,
rngcheck/backends/registry.py rules 1 to 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import in_process
from rngcheck import cli
from rngcheck.conformance import axes
from rngcheck.conformance.runner import RunOptions, expected_case_ids, select_cases
from rngcheck.errors import RngcheckError
from rngcheck.expression import MAX_DEPTH, Keyword

PANEL = str(Path(__file__).parent / "panel.py")
QUICK = axes.cases_for("quick")


def ids_where(holds, cases=QUICK) -> set[str]:
    """The ids of ``cases`` for which ``holds(has)`` is true, ``has(word)``: the word is in the id or
    category, case-insensitively (written here again, plainly, not with rngcheck.expression)."""
    def has_of(case):
        return lambda word: word.lower() in case.id.lower() or word.lower() in case.category.lower()
    return {case.id for case in cases if holds(has_of(case))}


def listed(out: str) -> list[str]:
    """The case ids of ``run --list``'s output (its lines but the count)."""
    lines = out.strip().splitlines()
    return [line.split()[0] for line in lines[:-1]]


# -- -k ------------------------------------------------------------------------------------------

KEYWORDS = [
    ("counter and not dml", lambda has: has("counter") and not has("dml")),
    ("(mapping or layout) and rank and not rank-2", lambda has: (has("mapping") or has("layout")) and has("rank")
     and not has("rank-2")),
    ("KAT", lambda has: has("kat")),                         # case-insensitive, category or id
    ("not (uniform or normal or generator or rbg)", lambda has: not (has("uniform") or has("normal")
                                                                     or has("generator") or has("rbg"))),
    ("not not key or seed and tensorflow", lambda has: has("key") or (has("seed") and has("tensorflow"))),
    ("vectors/dml-example-324855", lambda has: has("vectors/dml-example-324855")),
]


@pytest.mark.parametrize("expression, holds", KEYWORDS, ids=[k for k, _ in KEYWORDS])
def test_keyword_selects_exactly_the_cases_its_words_name(expression, holds, capsys):
    expected = ids_where(holds)
    assert expected and expected != {c.id for c in QUICK}      # a selection that selects something
    assert {c.id for c in select_cases(RunOptions(keyword=expression))} == expected
    code, out, err = in_process(capsys, "run", "-k", expression, "--list")
    assert code == 0, err
    assert listed(out) == [c.id for c in QUICK if c.id in expected]   # in the profile's order


def test_keyword_and_case_must_both_hold(capsys):
    expected = ids_where(lambda has: has("kat") or has("dml"), [c for c in QUICK if c.category == "vectors"])
    assert expected == {"vectors/kat-00000000-00000000", "vectors/kat-ffffffff-ffffffff",
                        "vectors/kat-243f6a88-a4093822", "vectors/dml-example-324855"}
    code, out, _ = in_process(capsys, "run", "--case", "vectors", "-k", "kat or dml", "--list")
    assert code == 0 and set(listed(out)) == expected


@pytest.mark.parametrize("expression, column", [
    ("counter and", 12), ("(counter or kat", 16), ("counter)", 8), ("counter $ kat", 9), ("", 1),
    ("not", 4), ("counter kat", 9), ("and counter", 1), ("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1), None),
])
def test_a_malformed_keyword_is_one_line_naming_the_column_and_exit_2(expression, column, capsys):
    code, out, err = in_process(capsys, "run", "--backend", "numpy", f"-k={expression}", "--quiet")
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert (f"at column {column}:" if column else f"nested deeper than {MAX_DEPTH}") in err, err


def test_keyword_is_parsed_never_evaluated():
    with pytest.raises(RngcheckError, match="unexpected character"):
        Keyword.compile("__import__('os').system('false')")
    long = " or ".join(["counter"] * 50_000)      # a long chain is no RecursionError
    assert Keyword.compile(long).matches(["counter/x"])


def test_the_document_records_the_keyword_and_report_and_resume_keep_the_selection(tmp_path, capsys):
    out = tmp_path / "r.json"
    expression = "counter and not carry"
    code, _, err = in_process(capsys, "run", "--backend", "numpy", "-k", expression, "--json", str(out), "--quiet")
    assert code == 0, err
    document = json.loads(out.read_text())
    expected = ids_where(lambda has: has("counter") and not has("carry"))
    assert document["keyword"] == expression and {c["id"] for c in document["cases"]} == expected
    assert expected_case_ids(document) == expected          # what report and compare count
    journal = tmp_path / "r.journal.jsonl"
    lines = journal.read_text().splitlines()
    assert json.loads(lines[0])["run"]["keyword"] == expression
    journal.write_text("\n".join(lines[:-4]) + "\n")       # killed: no end line, three results lost
    out.unlink()
    code, _, err = in_process(capsys, "run", "--resume", str(journal), "--quiet")
    assert code == 0, err
    resumed = json.loads(out.read_text())
    assert resumed["keyword"] == expression
    assert sorted(r["case"] for r in resumed["results"]) == sorted(expected)


# -- -x / --maxfail ------------------------------------------------------------------------------

def test_x_stops_after_the_first_failure_and_the_rest_are_not_run(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, _, err = in_process(capsys, "run", "--backend", f"{PANEL}:Only4D", "--case", "mapping/rank", "-x",
                        "--in-process", "--json", str(out), "--quiet")
    assert code == 1
    assert "--maxfail 1 reached; the cases left are not-run" in err
    document = json.loads(out.read_text())
    statuses = [(r["case"], r["status"]) for r in document["results"]]
    assert statuses[0] == ("mapping/rank-1", "failed")
    assert [s for _, s in statuses[1:]] == ["not-run"] * 7      # rank-4 would have passed: not run either
    assert all(r["message"] == "not run: --maxfail 1 reached" for r in document["results"][1:])
    assert document["maxfail_reached"] == 1 and document["complete"] and document["summary"]["verdict"] == "fail"
    from rngcheck.results import schema
    pytest.importorskip("jsonschema")
    schema.validate(document, "rngcheck-result")


def test_maxfail_counts_failures_over_every_backend(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, _, err = in_process(capsys, "run", "--backend", f"{PANEL}:Only4D", "--backend", f"{PANEL}:LanesReversed",
                        "-k", "mapping/rank-3 or mapping/rank-4 or mapping/rank-5", "--maxfail", "3",
                        "--in-process", "--json", str(out), "--quiet")
    assert code == 1, err
    document = json.loads(out.read_text())
    only4d, lanes = (b["name"] for b in document["backends"])
    statuses = {(r["backend"], r["case"]): r["status"] for r in document["results"]}
    assert statuses == {
        (only4d, "mapping/rank-3"): "failed", (only4d, "mapping/rank-4"): "passed",
        (only4d, "mapping/rank-5"): "failed",
        (lanes, "mapping/rank-3"): "failed",             # the third failure: the run stops here
        (lanes, "mapping/rank-4"): "not-run", (lanes, "mapping/rank-5"): "not-run"}
    assert document["maxfail_reached"] == 3


def test_maxfail_3_on_one_backend_and_a_passing_run_is_untouched(tmp_path, capsys):
    out = tmp_path / "r.json"
    code, _, _ = in_process(capsys, "run", "--backend", f"{PANEL}:Only4D", "--case", "mapping/elements",
                            "--maxfail", "3", "--in-process", "--json", str(out), "--quiet")
    assert code == 1
    results = json.loads(out.read_text())["results"]
    assert [r["status"] for r in results] == ["failed"] * 3 + ["not-run"] * (len(results) - 3)
    assert all(r["message"] == "not run: --maxfail 3 reached" for r in results[3:])
    code, _, err = in_process(capsys, "run", "--backend", "numpy", "--case", "kat", "-x", "--json", str(out), "--quiet")
    assert code == 0 and "maxfail" not in err
    assert "maxfail_reached" not in json.loads(out.read_text())


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_maxfail_takes_a_positive_integer(value, capsys):
    code, _, err = in_process(capsys, "run", "--backend", "numpy", "--maxfail", value)
    assert code == 2 and "not a positive integer" in err


# -- --list --------------------------------------------------------------------------------------

def test_list_prints_ids_categories_and_a_count_and_loads_no_backend(capsys):
    code, out, err = in_process(capsys, "run", "--backend", "no-such-backend", "--case", "dml-example", "--list")
    assert code == 0, err      # the backend is not loaded (it would be an error)
    lines = out.strip().splitlines()
    assert [line.split() for line in lines[:-1]] == [["vectors/dml-example-324855", "vectors"],
                                                     ["counter/dml-example-324855", "counter"]]
    assert lines[-1] == "2 cases (profile quick)"
    code, out, _ = in_process(capsys, "run", "--list")
    assert code == 0 and listed(out) == [c.id for c in QUICK]
    assert out.strip().splitlines()[-1] == f"{len(QUICK)} cases (profile quick)"


def test_an_empty_selection_is_exit_5_listed_or_run(capsys):
    """pytest's "no tests ran": one line on stderr, exit 5, for --list and for a run."""
    code, out, err = in_process(capsys, "run", "--case", "no-such-case", "-k", "kat", "--list")
    assert code == cli.EXIT_NOTHING_RAN == 5 and not out
    assert err.strip() == "rngcheck: no case matches --case no-such-case and -k kat in profile quick"
    code, _, err = in_process(capsys, "run", "--backend", "numpy", "-k", "no-such-case")
    assert code == 5 and err.strip() == "rngcheck: nothing ran: no case matches -k no-such-case in profile quick"


def test_list_runs_nothing_and_writes_nothing(tmp_path, capsys):
    code, _, err = in_process(capsys, "run", "--list", "--json", str(tmp_path / "r.json"))
    assert code == 2 and "--list runs nothing and writes nothing: drop --json" in err
    assert not list(tmp_path.iterdir())


# -- --case --------------------------------------------------------------------------------------

def test_a_plain_case_pattern_is_a_category_an_id_or_else_a_substring_of_ids():
    def chosen(*patterns, profile="quick"):
        return {c.id for c in select_cases(RunOptions(profile=profile, select=list(patterns)))}

    assert chosen("dml-example") == {"counter/dml-example-324855", "vectors/dml-example-324855"}
    assert chosen("dml-example", "kat") == chosen("dml-example") | {c.id for c in QUICK if c.category == "kat"}
    # a category is that category (not every id with the word: rng-bit-generator/..., vectors/kat-...)
    assert chosen("generator") == {c.id for c in QUICK if c.category == "generator"}
    assert chosen("kat") == {c.id for c in QUICK if c.category == "kat"} and len(chosen("kat")) == 3
    assert chosen("layout/rank5") == {"layout/rank5"}                 # an id is that case (not layout/rank5-ndhwc)
    assert chosen("layout/rank") == {"layout/rank5", "layout/rank5-ndhwc", "layout/rank8", "layout/rank8-strided"}
    assert chosen("vectors/kat*") == {c.id for c in QUICK if c.id.startswith("vectors/kat")}   # a glob: a glob
    assert chosen("*dml-example") == set()                    # a glob matches the whole id
    assert chosen("huge") == {c.id for c in axes.cases_for("huge")}   # a pattern that says huge pulls them in
    assert not [c for c in select_cases(RunOptions(select=["scale"])) if "huge" in c.id]


def test_expected_case_ids_reads_the_keyword_and_nothing_from_an_unreadable_one():
    document = {"profile": "quick", "select": ["vectors"], "command": ["run"], "keyword": "kat or dml"}
    assert expected_case_ids(document) == {"vectors/kat-00000000-00000000", "vectors/kat-ffffffff-ffffffff",
                                           "vectors/kat-243f6a88-a4093822", "vectors/dml-example-324855"}
    assert expected_case_ids({**document, "keyword": None}) == {c.id for c in QUICK if c.category == "vectors"}
    assert expected_case_ids({**document, "keyword": "(("}) == set()    # unreadable: nothing asserted
    assert expected_case_ids({**document, "keyword": 3}) == set()


def test_case_substring_on_the_command_line(capsys):
    code, out, _ = in_process(capsys, "run", "--case", "dml-example", "--list")
    assert code == 0 and set(listed(out)) == {"counter/dml-example-324855", "vectors/dml-example-324855"}


# -- did you mean --------------------------------------------------------------------------------

def test_an_existing_program_path_suggests_exec(tmp_path, capsys):
    program = tmp_path / "philox_exec"
    program.write_text("#!/bin/sh\nexit 3\n")
    program.chmod(0o755)
    code, _, err = in_process(capsys, "run", "--backend", str(program), "--case", "kat", "--quiet", "--in-process")
    assert code == 2
    assert err.strip() == (f"rngcheck: error: unknown backend '{program}'; did you mean exec:{program} "
                           f"(a program speaking the exec protocol)?")


def test_a_py_file_without_attr_lists_its_backend_classes_without_importing_it(tmp_path, monkeypatch, capsys):
    marker = tmp_path / "imported"
    (tmp_path / "flipbit.py").write_text(
        "from rngcheck.backends import Backend\n"
        f"open({str(marker)!r}, 'w').write('the file ran')\n"
        "class FlipBit(Backend):\n    pass\n"
        "class Helper:\n    pass\n"
        "class Other:\n    def random_generator(self, state, sizes, strides, buffer):\n        pass\n")
    monkeypatch.chdir(tmp_path)
    for hosting in (["--in-process"], []):    # in rngcheck's process, and in a worker's
        code, _, err = in_process(capsys, "run", "--backend", "flipbit.py", "--case", "kat", "--quiet", *hosting)
        assert code == 2
        assert err.strip() == ("rngcheck: error: unknown backend 'flipbit.py'; did you mean flipbit.py:FlipBit or "
                               "flipbit.py:Other?")
    assert not marker.exists()
    code, _, err = in_process(capsys, "run", "--backend", "missing.py", "--case", "kat", "--quiet", "--in-process")
    assert code == 2 and err.strip() == "rngcheck: error: unknown backend 'missing.py': the file 'missing.py' does " \
                                        "not exist"
    for name in ("a" * 5000, "a" * 5000 + ".py"):     # too long to be a file's name: still the one line
        code, _, err = in_process(capsys, "run", "--backend", name, "--case", "kat", "--quiet", "--in-process")
        assert code == 2 and err.startswith("rngcheck: error: unknown backend 'aaa") and len(err.splitlines()) == 1


def test_run_help_names_every_form_of_a_backend_and_the_verbs(capsys):
    code, out, _ = in_process(capsys, "run", "--help")
    assert code == 0
    for word in ("exec:COMMAND", "module:attr", "file.py:attr", "-k EXPRESSION", "--maxfail N", "--list", "-x"):
        assert word in out
