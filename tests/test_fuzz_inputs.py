"""Hostile input, generated: JSON that is not what it claims and arguments that make no sense, thrown at
every reader and command (in-process, through ``cli.main``). Whatever comes in, the answer is an exit
code; a usage or input error is exit 2 with one line on stderr; nothing ends in a traceback."""

import contextlib
import io
import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rngcheck import cli

SETTINGS = settings(max_examples=40, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70),
                    st.floats(allow_nan=False), st.text(max_size=20))
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                           max_leaves=20)


def call(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exit_:  # argparse
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


def assert_clean(code, err, expect_usage=False):
    assert "Traceback" not in err, err
    assert code in (0, 1, 2, 130), (code, err)
    if expect_usage:
        assert code == 2, (code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err


@pytest.fixture(scope="module")
def valid_document(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "valid.json"
    code, _, err = call(["run", "--backend", "numpy", "--case", "kat", "--json", str(path), "--quiet"])
    assert code == 0, err
    return json.loads(path.read_text())


@SETTINGS
@given(value=json_values)
def test_arbitrary_json_is_refused_by_every_reader(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("doc") / "doc.json"
    path.write_text(json.dumps(value))
    assert_clean(*call(["report", str(path)])[::2], expect_usage=True)
    journal = path.with_name("doc.journal.jsonl")
    journal.write_text(json.dumps(value) + "\n")
    assert_clean(*call(["run", "--resume", str(journal)])[::2], expect_usage=True)


@SETTINGS
@given(field=st.sampled_from(["backends", "results", "cases", "summary", "complete", "profile", "seed",
                              "schema_version", "agreement", "environment", "command", "stats"]),
       value=json_values, nested=st.integers(0, 3))
def test_a_result_document_with_a_field_of_the_wrong_kind(tmp_path_factory, valid_document, field, value, nested):
    document = json.loads(json.dumps(valid_document))
    target = document
    if nested and field in ("results", "backends", "cases") and document[field]:
        target = document[field][0]
        field = sorted(target)[nested % len(target)]
    target[field] = value
    path = tmp_path_factory.mktemp("mutant") / "doc.json"
    path.write_text(json.dumps(document))
    code, out, err = call(["report", str(path), "--html", str(path.with_suffix(".html"))])
    assert_clean(code, err)


@SETTINGS
@given(text=st.text(max_size=200), depth=st.integers(0, 3000))
def test_broken_and_deep_json_text(tmp_path_factory, text, depth):
    path = tmp_path_factory.mktemp("text") / "doc.json"
    path.write_text("[" * depth + text + "]" * depth)
    assert_clean(*call(["report", str(path)])[::2], expect_usage=True)


small_ints = st.integers(-3, 9).map(str)
junk = st.text(alphabet=string.printable + "\u202e\u200b\x00", max_size=12)
word_lists = st.lists(st.one_of(small_ints, junk), min_size=0, max_size=7).map(",".join)


@SETTINGS
@given(state=word_lists, sizes=word_lists, strides=st.one_of(st.none(), word_lists),
       level=st.one_of(st.sampled_from(["4.0", "3.0", "5.1"]), junk))
def test_repro_arguments(state, sizes, strides, level):
    argv = ["repro", "--backend", "numpy", "--state", state, "--sizes", sizes, "--feature-level", level]
    if strides is not None:
        argv += ["--strides", strides]
    assert_clean(*call(argv)[::2])


options = st.sampled_from(["--timeout", "--deadline", "--max-worker-restart", "--profile", "--seed", "--stats",
                           "--case", "--backend", "--workers", "--tier", "--bytes", "--json", "--nonsense"])


@SETTINGS
@given(command=st.sampled_from(["run", "stats", "report", "repro", "vectors", "backends"]),
       pairs=st.lists(st.tuples(options, st.one_of(junk, small_ints, st.just("-1"), st.just("0"))), max_size=3))
def test_nonsense_arguments_are_one_line(tmp_path_factory, command, pairs):
    argv = [command]
    for option, value in pairs:
        argv += [option, value]
    if command == "run":
        argv += ["--backend", "no-such-backend"]  # never a real run
    if command == "stats":
        argv += ["--backend", "no-such-backend"]
    if command == "report":
        argv += [str(tmp_path_factory.mktemp("missing") / "absent.json")]
    assert_clean(*call(argv)[::2], expect_usage=command in ("run", "stats", "report", "repro"))


@pytest.mark.parametrize("argv", [["run", "--backend", "numpy", "--json", "a\0b"], ["report", "a\0b"],
                                  ["stats", "--input", "a\0b"]])
def test_a_nul_in_a_path_is_one_line(argv):
    assert_clean(*call(argv)[::2], expect_usage=True)
