"""CI's submission packages and scoreboard (issue 42): a package from each result document, each verified,
one scoreboard of them all (docs/submission.md, "What CI publishes").

    python3 scripts/submissions.py --out results/submissions \\
        --met results/directml-strict.json \\
        --documents results/directml-matrix/*.json results/table/*.json results/table/stablehlo/*.json

``--met`` documents (real DirectML under the strict profile) must give packages that verify with every
claim met, and their verification re-runs a sample of cases (``--rerun``, default 4) where the backend
is available here; ``--documents`` give packages whose claims may be unmet (a release whose feature level
lacks cases, a library with documented differences: the scoreboard says so), verified without a re-run.
Any refusal fails the script (exit 1); so does an unmet claim of a ``--met`` document. The packages are
``OUT/packages/NN-NAME/``, the page ``OUT/index.html``, its table ``OUT/scoreboard.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rngcheck.errors import RngcheckError
from rngcheck.submission import package as P
from rngcheck.submission import scoreboard


def one(target: Path, document: Path, must_meet: bool, args: argparse.Namespace) -> tuple[str, list[str]]:
    """A package of ``document`` at ``target``, verified: (its line, its failures)."""
    try:
        made = P.create(target, [document], product=args.product, vendor=args.vendor)
    except RngcheckError as error:
        return f"submissions: {document}: not packaged", [f"{document}: {error}"]
    checked = P.verify(target, rerun=args.rerun if must_meet else 0)
    unmet = [c for c in checked.claims if not c.met]
    said = "REFUSED" if checked.refusals else ("met" if not unmet else f"{len(unmet)} of {len(made.claims)} not met")
    failures = [f"{target}: {line}" for line in checked.refusals]
    if must_meet:
        failures += [f"{target}: {claim.line()}" for claim in unmet]
    return (f"submissions: {target.name}: {len(made.claims)} claims, {said}"
            + "".join(f"; {note}" for note in checked.notes)), failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--met", nargs="*", type=Path, default=[], help="documents whose claims must be met")
    parser.add_argument("--documents", nargs="*", type=Path, default=[], help="documents whose claims may be unmet")
    parser.add_argument("--rerun", type=int, default=4, help="cases re-run per backend of the --met documents")
    parser.add_argument("--product", default="rngcheck CI: the implementations as CI installs them")
    parser.add_argument("--vendor", default="rngcheck CI (not the implementations' vendors)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="packages made at once")
    args = parser.parse_args(argv)
    folder = args.out / "packages"
    folder.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    start = time.monotonic()
    given = [(d, True) for d in args.met] + [(d, False) for d in args.documents]
    targets = [folder / f"{number:02d}-{document.stem}" for number, (document, _) in enumerate(given, 1)]
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for line, failed in pool.map(one, targets, *zip(*given), [args] * len(given)):
            print(line, flush=True)
            failures += failed
    packages = [target for target in targets if target.is_dir()]
    board = scoreboard.build(packages, args.out / "index.html", args.out / "scoreboard.json", max(1, args.jobs))
    print(f"submissions: {len(packages)} packages, scoreboard {args.out / 'index.html'} ({board.rows} rows, "
          f"{board.columns} lists, {board.cells} claims, {board.refused} refused) in {time.monotonic() - start:.0f} s")
    for line in failures:
        print(f"submissions: FAILED: {line}", file=sys.stderr)
    return 1 if failures or board.refused else 0


if __name__ == "__main__":
    sys.exit(main())
