"""The verdicts a run, a statistics stream and a comparison can have, what each means, and the
one rule that decides a run's. Everything else imports them (a test holds that no verdict is
spelled anywhere else in the package).

A run's verdict (lowercase; a result document's ``summary.verdict`` and each backend's ``verdict``),
decided here once and read the same way by every command (run, report, compare, the pytest plugin):
  pass         no required case is broken, and something ran (statuses.RAN) on every backend
  fail         a required case is broken (statuses.BROKEN), or a statistics stream folded into
               the run failed
  incomplete   the run did not finish (interrupted, or past its --deadline): resume it
  nothing-ran  nothing ran on a backend: no selected case applies to it (every result n/a or
               skipped). A run is nothing-ran when one of its backends is and none failed: a backend
               that was asked for and tested nothing is never a pass (exit code 5, pytest's "no
               tests ran")

A statistics verdict (uppercase; a stats document's ``verdict``, each p-value's ``verdict``
and ``first_verdict``, the keys of its ``counts``; the HTML page's verdict is said in these):
  PASS            no p-value is below the suspect threshold (or each one that was passed its retest)
  SUSPECT         a p-value is below the suspect threshold and no fresh data was left to retest it
  FAIL            a p-value is below the fail threshold, or a suspect one failed its retest
  INCOMPLETE      the battery did not finish, or nothing could be tested (a stream's verdict only)
  NOTHING RAN     a report's verdict when a run in it is nothing-ran (and nothing failed)
  NOT APPLICABLE  a NIST SP 800-22 test whose minimum input the sequences do not reach (a row of
                  ``rngcheck nist``, never a battery's)

A comparison's verdict (``rngcheck compare``, ``run --baseline``):
  OK          nothing that passed before is broken now
  REGRESSED   a case that passed before is broken now
"""

from __future__ import annotations

from collections.abc import Iterable

PASS, FAIL, INCOMPLETE, NOTHING_RAN = "pass", "fail", "incomplete", "nothing-ran"
RUN_VERDICTS = (PASS, FAIL, INCOMPLETE, NOTHING_RAN)

STATS_PASS, STATS_SUSPECT, STATS_FAIL, STATS_INCOMPLETE = "PASS", "SUSPECT", "FAIL", "INCOMPLETE"
REPORT_NOTHING_RAN = "NOTHING RAN"
STATS_VERDICTS = (STATS_PASS, STATS_SUSPECT, STATS_FAIL, STATS_INCOMPLETE)
STATS_JUDGED = (STATS_PASS, STATS_SUSPECT, STATS_FAIL)  # a p-value's verdict: the keys of a stats document's counts
STATS_BAD = (STATS_FAIL, STATS_SUSPECT)                 # a p-value worth showing
NOT_APPLICABLE = "NOT APPLICABLE"

COMPARE_OK, COMPARE_REGRESSED = "OK", "REGRESSED"


def run_verdict(*, failed: int, ran: int, complete: bool = True, stats: Iterable[str] = (),
                failure_stands: bool = False, backends: Iterable[str] = ()) -> str:
    """A run's verdict (PASS, FAIL, INCOMPLETE or NOTHING_RAN), the one rule.

    ``failed``: its required results that are broken. ``ran``: its results that ran (statuses.RAN).
    ``complete``: whether it finished. ``stats``: the statistics verdicts folded into it (``run
    --stats``): a FAIL fails the run, finished or not. ``failure_stands``: a required failure fails
    the run even when it did not finish (the report page's column); otherwise an unfinished run is
    incomplete (the document: resume it). ``backends``: the verdicts of the run's backends (a
    document's summary), of which one that is nothing-ran makes the run nothing-ran.
    """
    if any(verdict == STATS_FAIL for verdict in stats) or (failed and failure_stands):
        return FAIL
    if failed:
        return FAIL if complete else INCOMPLETE
    if not complete:
        return INCOMPLETE
    if not ran or NOTHING_RAN in tuple(backends):
        return NOTHING_RAN
    return PASS


def stats_verdict(counts: dict[str, int], *, found: bool, complete: bool = True) -> str:
    """A statistics stream's verdict from the counts of its p-values' verdicts (STATS_JUDGED): a
    failure found on the data there was stands, complete or not; then INCOMPLETE when nothing was
    tested (``found`` False) or it did not finish; then SUSPECT; else PASS."""
    if counts.get(STATS_FAIL):
        return STATS_FAIL
    if not found or not complete:
        return STATS_INCOMPLETE
    if counts.get(STATS_SUSPECT):
        return STATS_SUSPECT
    return STATS_PASS


def report_verdict(runs: Iterable[str], stats: Iterable[str], *, complete: bool) -> str:
    """The verdict of a report over several runs (their run verdicts) and statistics streams (their
    verdicts), said in the statistics vocabulary: FAIL if any failed, else INCOMPLETE if a source
    is not ``complete`` or a stream is incomplete, else SUSPECT if a stream is, else INCOMPLETE
    when there is nothing at all, else NOTHING RAN if a run is nothing-ran, else PASS."""
    runs, stats = list(runs), list(stats)
    if FAIL in runs or STATS_FAIL in stats:
        return STATS_FAIL
    if not complete or STATS_INCOMPLETE in stats:
        return STATS_INCOMPLETE
    if STATS_SUSPECT in stats:
        return STATS_SUSPECT
    if not runs and not stats:
        return STATS_INCOMPLETE
    if NOTHING_RAN in runs:
        return REPORT_NOTHING_RAN
    return STATS_PASS


def said(verdict: str) -> str:
    """A verdict as the terminal says it: upper case, words apart (NOTHING RAN)."""
    return verdict.replace("-", " ").upper()
