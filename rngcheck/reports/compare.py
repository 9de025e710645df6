"""``rngcheck compare BASELINE NEW...``: what newly fails, newly passes, changed, was added or removed.

    rngcheck compare baseline.json new.json --expected-failures known.txt --html compare.html

BASELINE and NEW are result documents or journals (several NEW documents are one side: a
backend and case in more than one keeps the last given). The comparison itself is
rngcheck.results.baseline; this module prints it and writes it as a self-contained HTML page.

Exit codes: 0 no regression; 1 one or more regressions (a required case that fails now and did
not, or that the baseline did not have, and that no expected-failures entry names); 2 an
unreadable document or file, or no case in common (one line on stderr); 5 nothing compared: every
case in common is n/a on the new side's other backend (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone

from .. import __version__
from ..errors import RngcheckError
from ..results.text import printable
from ..results.verdicts import COMPARE_OK, COMPARE_REGRESSED

SHOWN = 40   # changes of one kind printed on the terminal
TITLES = {
    "regression": "Regressions (newly failing)", "fixed": "Newly passing", "changed": "Output changed (both pass)",
    "xfail": "Expected failures (xfail)", "xpass": "Unexpected passes (xpass)", "still": "Still failing",
    "added": "Added cases", "removed": "Removed cases",
    "n/a": "Not comparable (n/a on the new backend, which is another implementation)",
}


MAX_COMPARED = 200_000  # results on both sides (a full profile on one backend: some 300; table and
#                          comparison of 200,000: about 40 s on 2 cores)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("baseline", metavar="BASELINE", help="the baseline result document or journal")
    parser.add_argument("new", nargs="+", metavar="NEW", help="the new result documents or journals")
    parser.add_argument("--expected-failures", metavar="FILE",
                        help="known failures: one 'PATTERN  # reason' a line (BACKEND::PATTERN for one backend)")
    parser.add_argument("--html", metavar="FILE", help="also write the comparison as an HTML page")
    parser.add_argument("--quiet", action="store_true", help="print only the one-line verdict")


def counted(sources, expected_cases) -> None:
    """Add to each result source the results its profile and selection call for that it lacks
    (``expected_cases(document)``: the case ids, given by the command layer, which knows the cases)."""
    from ..results.document import result_problems

    for source in sources:
        if source.kind == "result":
            wanted = expected_cases(source.doc)
            if wanted:
                found = result_problems(source.doc, source.name, wanted)
                source.problems += [p for p in found if p not in source.problems]


def load(baseline, new, expected_path=None, *, same_run_check: bool = True, expected_cases=None):
    """The Comparison of a baseline with new documents (paths, journals or dicts); RngcheckError
    (one line) for the same run on both sides or nothing to compare. ``expected_cases(document)``:
    the case ids a document's profile and selection call for (a document that lacks some of them and
    says it finished is refused); None checks each document against its own case list only."""
    from ..results.baseline import compare, read_expected
    from ..results.sources import run_key, sources_of
    from ..results.tables import frame, rows

    expected = read_expected(expected_path) if expected_path else []
    old = [s for s in sources_of([baseline]) if s.kind == "result"]
    new = [s for s in sources_of(list(new)) if s.kind == "result"]
    if not old:
        raise RngcheckError(f"{baseline}: not a result document or journal")
    if not new:
        raise RngcheckError("no result document or journal among the new documents")
    results = sum(len(s.doc.get("results") or []) for s in old + new)
    if results > MAX_COMPARED:
        raise RngcheckError(f"{results} results to compare, more than compare takes ({MAX_COMPARED}); "
                            "compare fewer documents at a time")
    counted(old + new, expected_cases or (lambda document: set()))
    for source in old + new:   # one that says it finished yet lacks results: edited or damaged, refused
        if source.problems and source.doc.get("complete", True) is not False and not source.doc.get("interrupted"):
            raise RngcheckError(f"{source.name}: says the run finished, but {source.problems[-1]}")
    same = [s.name for s in new if same_run_check and run_key(s.doc) == run_key(old[0].doc)]
    if same:
        raise RngcheckError(f"{same[0]} is the same run as the baseline {old[0].name}")
    old_rows, new_rows = rows(old), rows(new)
    if not old_rows or not new_rows:
        raise RngcheckError(f"{old[0].name if not old_rows else new[0].name}: no results to compare")
    old_table, new_table = frame(old_rows), frame(new_rows)
    comparison = compare(old_table, new_table, expected)
    if not comparison.common:
        raise RngcheckError("no case in common between the baseline and the new documents "
                            f"(backends {sorted(set(old_table['backend']))} "
                            f"against {sorted(set(new_table['backend']))})")
    return comparison


def text(comparison, quiet: bool = False) -> str:
    counts = comparison.counts()
    verdict = COMPARE_REGRESSED if counts["regression"] else COMPARE_OK
    head = (f"rngcheck compare: {verdict}: {counts['regression']} regressions, {counts['fixed']} newly passing, "
            f"{counts['changed']} outputs changed, {counts['xfail']} expected failures, {counts['xpass']} unexpected "
            f"passes, {counts['still']} still failing, {counts['added']} added, {counts['removed']} removed, "
            f"{counts['n/a']} not comparable ({comparison.common} cases in common)")
    if quiet:
        return head
    lines = [f"baseline: {', '.join(map(printable, comparison.baseline_runs))}; "
             f"new: {', '.join(map(printable, comparison.new_runs))}"]
    lines += [f"note: {printable(n)}" for n in comparison.notes]
    for kind in ("regression", "xpass", "fixed", "changed", "xfail", "still", "added", "removed"):
        changes = comparison.of(kind)   # (not comparable: counted once, in the notes and the verdict line)
        if not changes:
            continue
        lines.append(f"{TITLES[kind]}: {len(changes)}")
        for c in changes[:SHOWN]:
            what = f" [{c.diagnosis}]" if c.diagnosis and kind in ("regression", "still", "xfail") else ""
            why = (f" ({c.reason})" if c.reason
                   else f": {c.message}" if c.message and kind in ("regression", "removed") else "")
            lines.append(f"  {printable(c.backend)}: {printable(c.case)} {c.before or '-'} -> {c.after or '-'}"
                         f"{printable(what)}{printable(why)[:200]}")
        if len(changes) > SHOWN:
            lines.append(f"  ... and {len(changes) - SHOWN} more")
    for e in comparison.unused_expected:
        lines.append(f"note: expected-failures line {e.line} ({printable(e.pattern)}) matched no result")
    lines.append(head)
    return "\n".join(lines)


def model(comparison) -> dict:
    counts = comparison.counts()
    return {
        "title": "rngcheck compare", "verdict": COMPARE_REGRESSED if counts["regression"] else COMPARE_OK,
        "regressed": bool(counts["regression"]),   # for the template, which compares no verdict
        "counts": counts, "common": comparison.common, "notes": comparison.notes,
        "baseline_runs": comparison.baseline_runs, "new_runs": comparison.new_runs,
        "sections": [{"kind": k, "title": TITLES[k], "changes": comparison.of(k)}
                     for k in ("regression", "xpass", "fixed", "changed", "xfail", "still", "added", "removed")
                     if comparison.of(k)],
        "unused_expected": comparison.unused_expected,
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"), "rngcheck_version": __version__,
    }


def render(comparison) -> str:
    from .html import _environment

    return _environment().get_template("compare.html.j2").render(**model(comparison))


def run(args, expected_cases=None) -> int:
    from ..outputs import claim_outputs, input_paths
    from .html import write_text

    with claim_outputs({"--html": args.html}, {**input_paths([args.baseline, *args.new]),
                                               "--expected-failures": args.expected_failures}):
        comparison = load(args.baseline, args.new, args.expected_failures, expected_cases=expected_cases)
        if args.html:
            write_text(args.html, render(comparison))
    print(text(comparison, quiet=args.quiet))
    if comparison.regressions:
        return 1
    if comparison.common and comparison.counts()["n/a"] == comparison.common:
        print(f"rngcheck compare: nothing compared: all {comparison.common} cases in common are n/a on the new "
              f"backend", file=sys.stderr)
        return 5
    return 0
