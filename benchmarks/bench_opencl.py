"""Throughput of DML_RANDOM_GENERATOR: the opencl backend vs the numpy reference vs randomgen.

    python benchmarks/bench_opencl.py [--repeats 7] [--log2n 26]

Two cases of 2^26 output words: packed, and padded rows (16 unused words after every row
of 8192, so the buffer must be uploaded as well as read back). GB/s counts the output
words generated (4 bytes each) per second of one whole call, best of --repeats; the
contenders run in turn within each repeat, so a busy machine slows them alike.
  opencl     backend.random_generator: host->device copy (padded case only: a packed
             extent is overwritten entirely), kernel, device->host copy. The first call
             (buffer allocation) and the program build are reported, not timed.
  numpy      rngcheck.reference.random_generator (fewer repeats: it is slow).
  randomgen  Philox(number=4, width=32) through numpy.random.Generator.integers, its
             fastest uint32 path; in the padded case the words are then assigned into the
             strided view of the buffer. randomgen emits block C+1 first for counter C, so
             it is seeded with C-1; its words are checked equal to the reference's first.
Every contender's buffer is checked equal to the reference's. Ratios are vs randomgen.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rngcheck import counter, reference
from rngcheck.backends.opencl import OpenCLBackend

STATE = counter.make_state(2**64 - 2**10, (0x9E3779B9, 0x243F6A88))   # a carry inside the run
ROW, PAD = 8192, 16


def cases(log2n):
    n = 1 << log2n
    rows = n // ROW
    return {"packed": ((n,), None, n),
            f"padded rows ({rows} x {ROW}, +{PAD} words each)": ((rows, ROW), (ROW + PAD, 1), rows * (ROW + PAD))}


def seconds(run):
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def randomgen_words(n):
    from randomgen import Philox
    ctr = (counter.counter_of(STATE) - 1) % 2**128
    k0, k1 = counter.key_of(STATE)
    generator = np.random.Generator(Philox(counter=ctr, key=k0 | k1 << 32, number=4, width=32))
    return generator.integers(0, 2**32, n, dtype=np.uint32)


def contenders(backend, sizes, strides, buffer, use_randomgen):
    """name -> a zero-argument call that fills ``buffer`` (or, packed randomgen, returns the words)."""
    runs = {"opencl (PoCL)": lambda: backend.random_generator(STATE, sizes, strides, buffer)}
    if use_randomgen:
        n = buffer.size if strides is None else int(np.prod(sizes))
        if strides is None:
            runs["randomgen Philox4x32"] = lambda: randomgen_words(n)   # a fresh array: its fastest
        else:
            view = np.lib.stride_tricks.as_strided(buffer, shape=sizes, strides=[4 * s for s in strides])

            def strided():
                view[...] = randomgen_words(n).reshape(sizes)
            runs["randomgen Philox4x32"] = strided
    return runs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--log2n", type=int, default=26)
    args = parser.parse_args()

    started = time.perf_counter()
    backend = OpenCLBackend()
    setup = time.perf_counter() - started
    info = backend.describe()
    print(f"opencl device: {info['device']}\n  platform {info['platform']}, driver {info['driver version']}")
    print(f"  setup (context + program): {setup:.3f} s; build {info['build time']}")
    try:
        import randomgen
        print(f"randomgen {randomgen.__version__}, numpy {np.__version__}")
    except ImportError:
        randomgen = None
        print("randomgen is not installed: its column is skipped (pip install rngcheck[randomgen])")

    for name, (sizes, strides, extent) in cases(args.log2n).items():
        n = int(np.prod(sizes))
        print(f"\n== {name}: {n} words in a buffer of {extent}")
        want = np.zeros(extent, dtype=np.uint32)
        best = {"numpy reference": min(seconds(lambda sizes=sizes, strides=strides, want=want:
                                               reference.random_generator(STATE, sizes, strides, want))
                                       for _ in range(max(1, args.repeats // 3)))}

        buffer = np.zeros(extent, dtype=np.uint32)
        first_call = seconds(lambda sizes=sizes, strides=strides, buffer=buffer:
                             backend.random_generator(STATE, sizes, strides, buffer))
        assert np.array_equal(buffer, want), "opencl differs from the reference"
        if randomgen:
            assert np.array_equal(randomgen_words(n), reference.words(STATE, 0, n)), "randomgen's words differ"
        runs = contenders(backend, sizes, strides, buffer, randomgen is not None)
        backend.timings = dict.fromkeys(backend.timings, 0.0)
        for _ in range(args.repeats):
            for label, run in runs.items():
                best[label] = min(best.get(label, np.inf), seconds(run))
        assert np.array_equal(buffer, want), "a contender's buffer differs from the reference"

        baseline = best.get("randomgen Philox4x32")
        for label in sorted(best, key=best.get):
            ratio = f"  {baseline / best[label]:5.2f}x randomgen" if baseline else ""
            print(f"  {label:22s} {best[label] * 1e3:8.1f} ms  {4 * n / best[label] / 1e9:6.2f} GB/s{ratio}")
        split = {step: total / args.repeats for step, total in backend.timings.items()}
        print("  opencl per call (mean): " + ", ".join(f"{step} {t * 1e3:.1f} ms" for step, t in split.items())
              + f"; kernel alone {4 * n / split['kernel'] / 1e9:.2f} GB/s; first call {first_call * 1e3:.0f} ms")
    backend.close()


if __name__ == "__main__":
    main()
