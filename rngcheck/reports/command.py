"""``rngcheck report``: one comparison from result documents, stats documents and journals.

    rngcheck report results/a.json results/b.json stats.json --html report.html --summary summary.md

Several result documents (runs on other machines, drivers or backends) become the columns
of one comparison; stats documents add the statistical section; a journal of an
interrupted run renders as a report marked incomplete. Without --html or --summary the
markdown summary is printed.

Exit codes: 0 the comparison passes; 1 a backend or a statistical test fails, or the
report is incomplete (a SUSPECT left unresolved counts too); 2 an unreadable document, a
newer schema version, or an unwritable output (one line on stderr).
"""

from __future__ import annotations

import argparse
import os

from ..results.verdicts import REPORT_NOTHING_RAN, STATS_PASS

HISTORY_ORDERS = ("created", "given")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("documents", nargs="+", metavar="DOCUMENT.json",
                        help="result documents (rngcheck run --json), stats documents (rngcheck stats --json) "
                             "or results journals, in any order")
    parser.add_argument("--html", metavar="FILE", help="write the self-contained HTML report")
    parser.add_argument("--summary", metavar="FILE", help="write a short markdown summary (for CI comments)")
    parser.add_argument("--history", choices=HISTORY_ORDERS, default="created",
                        help="the History view's runs of a backend: by the time each document was created "
                             "(default), or in the order the documents are given, the last the newest (runs "
                             "made at once, a release matrix)")
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")


def run(args, expected_cases=None) -> int:
    """``expected_cases(document)``: the case ids a result document's profile and selection give (the
    command layer knows the cases); a run that lacks some of them is counted incomplete."""
    from ..outputs import claim_outputs
    from . import html, summary
    from .compare import counted

    with claim_outputs({"--html": args.html, "--summary": args.summary},
                       {f"document {path}": path for path in args.documents}):
        sources = html.sources_of(args.documents)  # paths; embedded stats documents come along
        counted(sources, expected_cases or (lambda document: set()))   # the results each run's profile calls for
        model = html.build(sources, figures=bool(args.html), history=args.history)
        if args.html:
            html.write_text(args.html, html.render_model(model))
        if args.summary:
            name = os.path.basename(args.html) if args.html else None
            summary.write(model, args.summary, html_name=name)
    if not args.html and not args.summary:
        print(summary.render(model), end="")
    elif not args.quiet:
        written = " and ".join(filter(None, [args.html, args.summary]))
        print(f"rngcheck report: {model['verdict']} ({len(model['columns'])} backend columns, "
              f"{len(model['stats'])} stats documents); wrote {written}")
    return 0 if model["verdict"] == STATS_PASS else 5 if model["verdict"] == REPORT_NOTHING_RAN else 1
