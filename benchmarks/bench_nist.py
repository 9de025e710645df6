"""Benchmark of ``rngcheck nist`` against the PyPI package sp80022suite (sts-2.1.2's C tests
wrapped for Python), in the same run, on the same sequences (prints a report).

    python benchmarks/bench_nist.py [--sequences 100] [--length 1000000] [--workers 2]

Both read 100 sequences of 10^6 bits of a Philox4x32-10 stream from a binary file written
beforehand (the generator is not what is measured). rngcheck: the whole command (read, 15 tests
with sts's defaults on every sequence, the final analysis report). sp80022suite: its 15 test
functions on every sequence with the same parameters (its non-overlapping template test reads
sts's template file, written here from rngcheck's aperiodic templates), in one process as it
is used, and in as many processes as rngcheck uses (the fair comparison on this machine).
Prints wall times, sequences per second and the ratios; also how many of sp80022suite's
p-values equal rngcheck's to six decimals on the first sequence (where they compare).
Without sp80022suite installed (pip install sp80022suite), only rngcheck's figures.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import sys
import tempfile
import time

import numpy as np

from rngcheck.cli import main as rngcheck_main
from rngcheck.stats import nist
from rngcheck.stats.bits import to_bits
from rngcheck.stats.streams import philox_source

PEER_CALLS = (  # sp80022suite function, extra arguments (sts's defaults), rngcheck row(s) it compares with
    # (its cusum and template functions return one p-value: any of rngcheck's rows of that test may be it)
    ("frequency", (), ("Frequency", "")),
    ("block_frequency", (128,), ("BlockFrequency", "")),
    ("cumulative_sums", (), ("CumulativeSums", None)),
    ("runs", (), ("Runs", "")),
    ("longest_run_of_ones", (), ("LongestRun", "")),
    ("rank", (), ("Rank", "")),
    ("discrete_fourier_transform", (), ("FFT", "")),
    ("non_overlapping_template_matchings", (9,), ("NonOverlappingTemplate", None)),
    ("overlapping_template_matchings", (9,), ("OverlappingTemplate", "")),
    ("universal", (), ("Universal", "")),
    ("approximate_entropy", (10,), ("ApproximateEntropy", "")),
    ("random_excursions", (), None),
    ("random_excursions_variant", (), None),
    ("serial", (16,), ("Serial", "1")),
    ("linear_complexity", (500,), ("LinearComplexity", "")),
)


def write_sequences(path: str, bits_total: int) -> np.ndarray:
    words = philox_source(0x5722).read((bits_total + 31) // 32)
    bits = to_bits(words)[:bits_total]
    with open(path, "wb") as handle:
        handle.write(np.packbits(bits).tobytes())
    return bits


@contextlib.contextmanager
def sts_templates(directory: str):
    """sp80022suite opens templates/template9 in the working directory (sts's file layout)."""
    os.makedirs(os.path.join(directory, "templates"), exist_ok=True)
    with open(os.path.join(directory, "templates", "template9"), "w") as handle:
        for t in nist.aperiodic_templates(9):
            handle.write(" ".join(map(str, t)) + "\n")
    here = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(here)


_PEER = {}


def _peer_one(index):
    import sp80022suite
    n = _PEER["n"]
    data = _PEER["bits"][index * n:(index + 1) * n].tobytes()
    results = []
    for name, extra, _ in PEER_CALLS:
        try:
            results.append(getattr(sp80022suite, name)(*extra, data))  # parameters first
        except ValueError:  # "Insufficient number of cycles" (random excursions: not applicable)
            results.append(None)
    return results


def run_peer(bits, n, count, processes):
    _PEER.update(bits=bits, n=n)
    began = time.perf_counter()
    if processes == 1:
        results = [_peer_one(i) for i in range(count)]
    else:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
            results = pool.map(_peer_one, range(count), chunksize=1)
    return time.perf_counter() - began, results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=100)
    parser.add_argument("--length", type=int, default=10 ** 6)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    n, count = args.length, args.sequences
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "philox.bin")
        bits = write_sequences(path, n * count)
        out = os.path.join(tmp, "nist.json")
        began = time.perf_counter()
        code = rngcheck_main(["nist", path, "--format", "binary", "--length", str(n), "--sequences", str(count),
                              "--workers", str(args.workers), "--quiet", "--json", out])
        ours = time.perf_counter() - began
        import json
        with open(out) as handle:
            doc = json.load(handle)
        print(f"rngcheck nist: {count} sequences of {n} bits, {args.workers} processes: {ours:.1f} s "
              f"({count / ours:.2f} sequences/s), exit {code}, verdict {doc['verdict']}")
        try:
            import sp80022suite  # noqa: F401
        except ImportError:
            print("sp80022suite is not installed (pip install sp80022suite): no peer figures")
            return 0
        with sts_templates(tmp):
            one, results = run_peer(bits, n, count, 1)
            many, _ = run_peer(bits, n, count, args.workers) if args.workers > 1 else (one, results)
        print(f"sp80022suite, 1 process:   {one:.1f} s ({count / one:.2f} sequences/s)")
        print(f"sp80022suite, {args.workers} processes: {many:.1f} s ({count / many:.2f} sequences/s)")
        print(f"ratio (sp80022suite / rngcheck): {one / ours:.1f}x against one process, "
              f"{many / ours:.1f}x against {args.workers} processes (goal: 5x)")
        same, compared = [], 0
        for (name, _, row), value in zip(PEER_CALLS, results[0]):
            if row is None or value is None:
                continue
            compared += 1
            candidates = [r["p_values"][0] for r in doc["rows"]
                          if r["test"] == row[0] and row[1] in (None, r["label"]) and r["p_values"]]
            if any(round(float(value), 6) == round(p, 6) for p in candidates):
                same.append(name)
            else:
                print(f"  differs on sequence 1: {name}: sp80022suite {float(value):.6f}, rngcheck "
                      + ", ".join(f"{p:.6f}" for p in candidates[:3]) + (" ..." if len(candidates) > 3 else ""))
        print(f"sp80022suite equals rngcheck to six decimals on {len(same)} of {compared} comparable p-values "
              "(its random excursion functions return one p-value of unnamed state: not compared)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
