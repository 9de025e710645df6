"""Cost of a wrong answer's anatomy (rngcheck.conformance.directml.anatomy) against the diagnosis it follows.

    python benchmarks/bench_anatomy.py [--repeats 5]

Figures only, no verdict. For broken backends of tests/panel.py (a named class, and kinds no
named class models) and tensors of 16, 1024 and 65536 elements, one call's wrong output is
diagnosed (rngcheck.conformance.directml.diagnosis.diagnose_output, the peer: what every failing case
already pays) and given its anatomy (anatomy.explain_words). Best of --repeats, milliseconds;
"anatomy/diagnosis" is the ratio of the two. The anatomy is bounded per case (a window of
anatomy.WINDOW elements, anatomy.SECONDS_PER_CASE per case) and per backend (its first
anatomy.CASES_PER_BACKEND failing cases, anatomy.SECONDS_PER_BACKEND in all).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from panel import ByteSwapped, FlipsOneBit, KnobbedPhilox, LanesRotatedInSomeBlocks  # noqa: E402
from rngcheck import reference  # noqa: E402
from rngcheck.conformance.directml import anatomy  # noqa: E402
from rngcheck.conformance.directml.cases import Case  # noqa: E402
from rngcheck.conformance.directml.check import UNWRITTEN, prefilled_buffer  # noqa: E402
from rngcheck.conformance.directml.diagnosis import diagnose_output  # noqa: E402

STATE = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0)
BACKENDS = [("lanes-reversed (named)", KnobbedPhilox(lanes_reversed=True)),
            ("lanes rotated in every 4th block", LanesRotatedInSomeBlocks()),
            ("byte-swapped", ByteSwapped()), ("one flipped bit", FlipsOneBit()),
            ("rounds-13", KnobbedPhilox(rounds=13))]


def best(repeats: int, call) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def explain(n: int, tensor: np.ndarray, first_wrong: int) -> None:
    with anatomy.using(anatomy.Budget()):
        anatomy.explain_words(STATE, (n,), None, tensor, first_wrong, UNWRITTEN)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'backend':<34} {'n':>6} {'diagnosis ms':>13} {'anatomy ms':>11} {'anatomy/diagnosis':>18}")
    for name, backend in BACKENDS:
        for n in (16, 1024, 65536):
            case = Case(id="bench", category="bench", description="", rule="", source="", state=STATE, sizes=(n,))
            full, extent = prefilled_buffer(case)
            backend.random_generator(np.array(STATE, dtype=np.uint32), (n,), None, full[64:])
            tensor = full[64:64 + extent]
            wrong = np.flatnonzero(tensor[:n] != reference.words(STATE, 0, n))
            if not wrong.size:
                continue
            diagnosed = best(args.repeats, lambda n=n, tensor=tensor: diagnose_output(STATE, (n,), None, tensor,
                                                                                     UNWRITTEN))
            explained = best(args.repeats, lambda n=n, tensor=tensor, first=int(wrong[0]): explain(n, tensor, first))
            print(f"{name:<34} {n:>6} {diagnosed:>13.2f} {explained:>11.2f} {explained / diagnosed:>18.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
