"""Hardening, round 4, item 13 (the journal's part): a journal's header carries at most MAX_SELECT
--case patterns. ``--resume`` needs no trust for a select list, and each pattern is tried against
every case (past fnmatch's cache of 32,768 patterns, each one compiled again for every case): a
journal of 40,000 patterns kept ``--resume`` busy past 120 s; it is now refused in one line at once."""

import time

from probes import _journal_with, one_line_error, rngcheck


def test_a_journal_with_more_select_patterns_than_the_cap_is_refused_at_once(tmp_path):
    path = _journal_with(tmp_path, select=[f"nosuch/{i}/*" for i in range(40_000)])
    started = time.monotonic()
    result = rngcheck("run", "--resume", str(path), cwd=tmp_path, timeout=60)
    assert time.monotonic() - started < 30
    from rngcheck.results.journal import MAX_SELECT
    one_line_error(result, 2, "40000 --case patterns", f"({MAX_SELECT})")


def test_a_journal_at_the_cap_is_read(tmp_path):
    from rngcheck.results import journal as J

    select = ["kat"] + [f"nosuch/{i}" for i in range(J.MAX_SELECT - 1)]
    path = _journal_with(tmp_path, select=select)
    _, header = J.read(path)
    assert J.run_settings(path, header)["select"] == select


def test_a_command_line_or_document_selection_past_the_cap_is_bounded(tmp_path):
    """The same cap on --case given directly (one line, at once) and on a document's recorded selection
    (compare and report do not select 40,000 patterns again: the selection is not read)."""
    import time

    from rngcheck.conformance.runner import RunOptions, expected_case_ids, select_cases
    from rngcheck.errors import RngcheckError
    from rngcheck.results.journal import MAX_SELECT

    patterns = [f"kat/no-such-{i}" for i in range(MAX_SELECT + 1)]
    start = time.monotonic()
    try:
        select_cases(RunOptions(select=patterns))
        raise AssertionError("accepted")
    except RngcheckError as error:
        assert f"at most {MAX_SELECT}" in str(error)
    document = {"profile": "quick", "select": [f"x{i}" for i in range(40_000)], "command": ["run"]}
    assert expected_case_ids(document) == set()
    assert time.monotonic() - start < 10
