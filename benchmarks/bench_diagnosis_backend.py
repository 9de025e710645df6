"""What the diagnosis costs a failing backend: a whole run with it, against the same run without it.

    python benchmarks/bench_diagnosis_backend.py [--repeats 2]

Figures only, no verdict. Each broken backend below runs its axis's cases of the full profile in
rngcheck's own process (rngcheck.conformance.runner.run) twice: as rngcheck runs it, and with every
diagnosis replaced by a constant answer (the checks, the comparisons and the reports unchanged). The
difference is what naming the failures costs that backend (the models, the step searches, the
inference, the anatomy), said per backend with its failing cases. Best of --repeats.

Backends: the numbers panel's (tests/numbers_panel.py) as a backend drawing its broken conversion for
the requests of its kind and dtype under TensorFlow's convention and the reference's otherwise (the
full profile's TensorFlow numbers cases), and the words panel's (tests/panel.py KnobbedPhilox) on the
operator's quick profile without its largest tensors (tests/test_panel.py SMALL).
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from numbers_panel import PANEL as NUMBERS_PANEL  # noqa: E402
from panel import KnobbedPhilox  # noqa: E402
from rngcheck import numbers  # noqa: E402
from rngcheck.backends.reference import NumpyBackend  # noqa: E402
from rngcheck.conformance.conventions import check as numbers_check  # noqa: E402
from rngcheck.conformance.directml import check as words_check  # noqa: E402
from rngcheck.conformance.runner import NamedBackend, RunOptions, run  # noqa: E402
from test_panel import SMALL  # noqa: E402

CONSTANT = {"id": "unknown", "summary": "not diagnosed (benchmark)", "alternatives": []}


class BrokenNumbers(NumpyBackend):
    """The reference backend, except the requests of one kind and dtype: the panel's broken draw."""

    def __init__(self, broken):
        super().__init__()
        self.broken = broken

    def random_numbers(self, request, state):
        parsed = self.numbers_request(request)
        target = self.broken.request
        if (parsed.convention, parsed.kind, parsed.dtype, parsed.seed is None) == \
                (target.convention, target.kind, target.dtype, target.seed is None) and \
                (parsed.low is None) == (target.low is None):
            return self.broken.draw(parsed, state)
        return super().random_numbers(request, state)


@contextmanager
def undiagnosed():
    """Every diagnosis a constant: the run's cost without naming anything."""
    saved = (numbers_check.diagnose, words_check.diagnose_output, words_check.diagnose_state,
             words_check.wraps.diagnose)
    numbers_check.diagnose = lambda *a, **k: dict(CONSTANT)
    words_check.diagnose_output = lambda *a, **k: dict(CONSTANT)
    words_check.diagnose_state = lambda *a, **k: dict(CONSTANT)
    words_check.wraps.diagnose = lambda *a, **k: None
    try:
        yield
    finally:
        (numbers_check.diagnose, words_check.diagnose_output, words_check.diagnose_state,
         words_check.wraps.diagnose) = saved


def timed(backend, options: RunOptions, repeats: int) -> tuple[float, int]:
    best, failed = float("inf"), 0
    for _ in range(repeats):
        start = time.perf_counter()
        document = run([NamedBackend("b", backend)], options)
        best = min(best, time.perf_counter() - start)
        failed = document["summary"]["required_failed"]
    return best, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    numbers_cases = RunOptions(profile="full", select=["uniform/tensorflow/*", "normal/tensorflow/*",
                                                       "integers/tensorflow/*", "bits/tensorflow/*"])
    words_cases = RunOptions(profile="quick", select=SMALL)
    rows = [(f"numbers: {b.name}", lambda b=b: BrokenNumbers(b), numbers_cases) for b in NUMBERS_PANEL] + \
        [(f"words: {name}", lambda kw=kw: KnobbedPhilox(**kw), words_cases)
         for name, kw in (("lanes-reversed", {"lanes_reversed": True}), ("rounds-7", {"rounds": 7}),
                          ("increment-floor", {"increment": "floor"}), ("carry-64-bit", {"carry_bits": 64}))]
    print(f"{'backend':44} {'failed':>6} {'with (s)':>9} {'without (s)':>11} {'diagnosis (s)':>13} {'per case':>9}")
    costs = []
    for label, make, options in rows:
        with_it, failed = timed(make(), options, args.repeats)
        with undiagnosed():
            without, _ = timed(make(), options, args.repeats)
        cost = max(with_it - without, 0.0)
        costs.append(cost)
        print(f"{label:44} {failed:>6} {with_it:>9.2f} {without:>11.2f} {cost:>13.2f} {cost / max(failed, 1):>9.3f}")
    print(f"diagnosis per failing backend: median {sorted(costs)[len(costs) // 2]:.2f} s, max {max(costs):.2f} s "
          f"({len(costs)} backends; numbers {numbers.CONVENTIONS.get('tensorflow').title.split(' (')[0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
