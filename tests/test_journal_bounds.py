"""Hardening, round 4, item 13 (the journal's part): a journal's header carries at most MAX_SELECT
--case patterns. ``--resume`` needs no trust for a select list, and each pattern is tried against
every case (past fnmatch's cache of 32,768 patterns, each one compiled again for every case): a
journal of 40,000 patterns kept ``--resume`` busy past 120 s; it is now refused in one line at once."""

import time

from test_hardening import _journal_with, one_line_error
from test_hardening_round3 import rngcheck


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
