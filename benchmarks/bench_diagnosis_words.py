"""Cost of the chain's search (issue 40) per failing case, on the panel of tests/search_panel.py.

    python benchmarks/bench_diagnosis_words.py [--repeats 3] [--sizes 301,4099]

Figures only, no verdict. For each broken operator of tests/search_panel.py (WORDS) and each tensor
size, one call's wrong output is searched (rngcheck.conformance.directml.search.diagnose_words: the
catalog's single changes, then pairs of two steps within chain.SECONDS); for each broken block function
(GENERATORS), one known answer's block (rngcheck.conformance.known_answers.diagnosis.diagnose). Two
cases with no match show the cost of an exhausted search: a word flipped in every element, and a
ThreeFry4x64 block with one flipped bit (its catalog is the largest: 1020 single changes). Best of
--repeats, seconds; then the median and the maximum over the failing cases.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import search_panel  # noqa: E402
from rngcheck import generators, reference  # noqa: E402
from rngcheck.conformance.directml import search  # noqa: E402
from rngcheck.conformance.known_answers.diagnosis import diagnose  # noqa: E402

STATE = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0)


def best(repeats: int, call) -> tuple[float, dict]:
    times, result = [], {}
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return min(times), result


def word_cases(sizes: list[int]):
    for n in sizes:
        for entry in search_panel.WORDS:
            layout = ((7, 9), (10, 1)) if entry[2] else ((n,), None)
            yield f"{entry[0]} n={int(np.prod(layout[0]))}", layout, search_panel.extent_of(entry, STATE, *layout)
        yield f"(no match: a bit flipped) n={n}", ((n,), None), reference.words(STATE, 0, n) ^ np.uint32(1)


def block_cases():
    for name, generator_name, knobs, rounds, _, _ in search_panel.GENERATORS:
        g = generators.get(generator_name)
        rng = np.random.default_rng(40)
        top = (1 << g.word_bits) - 1
        counters = rng.integers(0, top, (1, g.lanes), dtype=g.dtype, endpoint=True)
        key = tuple(int(k) for k in rng.integers(0, top, g.key_words, dtype=g.dtype, endpoint=True))
        yield name, g, counters, key, search_panel.generator_blocks(g.family, counters, key, rounds, g.word_bits, knobs)
    g = generators.get("threefry4x64")
    counters = np.array([[1, 2, 3, 4]], dtype=np.uint64)
    key = (5, 6, 7, 8)
    got = g.blocks(counters, key)
    got[0, 0] ^= np.uint64(1)
    yield "(no match: a bit flipped) threefry4x64", g, counters, key, got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", default="301,4099")
    args = parser.parse_args()
    seconds: list[float] = []
    print(f"{'case':<58} {'seconds':>8}  named")
    for name, (sizes, strides), extent in word_cases([int(s) for s in args.sizes.split(",")]):
        took, found = best(args.repeats, lambda sizes=sizes, strides=strides, extent=extent:
                           search.diagnose_words(STATE, sizes, strides, extent))
        seconds.append(took)
        print(f"{name:<58} {took:>8.3f}  {found['id']} {found.get('search', {}).get('not_tried', '')}")
    for name, g, counters, key, got in block_cases():
        took, found = best(args.repeats, lambda g=g, counters=counters, key=key, got=got:
                           diagnose(g, g.default_rounds, counters, key, got))
        seconds.append(took)
        print(f"{name:<58} {took:>8.3f}  {found['id']} {found.get('search', {}).get('not_tried', '')}")
    print(f"\n{len(seconds)} failing cases: median {statistics.median(seconds):.3f} s, max {max(seconds):.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
