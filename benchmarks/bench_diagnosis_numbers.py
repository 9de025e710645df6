"""Cost of the numbers diagnosis's step search (rngcheck.conformance.conventions.search) per failing case.

    python benchmarks/bench_diagnosis_numbers.py [--repeats 3] [--count 256]

Figures only, no verdict. Each broken implementation of tests/numbers_panel.py (and the two the
search cannot name, which pay for every pair of changes) draws --count numbers; the whole
diagnosis (the named models, the search, the inference) runs on that one failing case
(rngcheck.conformance.conventions.diagnosis.diagnose, the reference and its wide form given, as the
check gives them). Best of --repeats per case, seconds; then the median and the maximum over the
panel, and the search's own share (the diagnosis's ``search.seconds``), against the budget
(search.BUDGET_SECONDS a case).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from numbers_panel import PANEL, UNMODELLED  # noqa: E402
from rngcheck import numbers  # noqa: E402
from rngcheck.conformance.conventions import search  # noqa: E402
from rngcheck.conformance.conventions.diagnosis import diagnose  # noqa: E402


def one(broken, count: int, repeats: int) -> tuple[float, float, str]:
    # the no-clamp case keeps its 4 numbers: its state has the zero mantissa at word 1
    request = broken.request if broken.state is not None else replace(broken.request, count=count)
    state = broken.state_of()
    actual = broken.draw(request, state)
    right, wide = numbers.draw(request, state), numbers.wide_reference(request, state)
    best, searched, named = float("inf"), 0.0, ""
    for _ in range(repeats):
        start = time.perf_counter()
        diagnosis = diagnose(request, state, actual, right=right, wide=wide)
        elapsed = time.perf_counter() - start
        if elapsed < best:
            best, searched, named = elapsed, diagnosis["search"].get("seconds", 0.0), diagnosis["id"]
    return best, searched, named


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--count", type=int, default=256)
    args = parser.parse_args()
    print(f"{'broken implementation':<32} {'named':<28} {'diagnosis s':>12} {'search s':>9}")
    totals, searches = [], []
    for broken in [*PANEL, *(b for b, _ in UNMODELLED)]:
        seconds, searched, named = one(broken, args.count, args.repeats)
        totals.append(seconds)
        searches.append(searched)
        print(f"{broken.name:<32} {named:<28} {seconds:>12.3f} {searched:>9.3f}")
    print(f"\n{len(totals)} failing cases of {args.count} numbers: diagnosis median {statistics.median(totals):.3f} s, "
          f"max {max(totals):.3f} s; search median {statistics.median(searches):.3f} s, max {max(searches):.3f} s "
          f"(budget {search.BUDGET_SECONDS:g} s a case)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
