"""Throughput of the reference model's Philox against randomgen's C Philox, in one run.

    python benchmarks/bench_reference.py [--log2-words 26] [--repeat 3]

Both produce the same 2^k words (checked before timing): the reference through the
operator (rngcheck.reference.random_generator, packed) on each of its paths (philox.c compiled,
where it can be had, and the numpy code: rngcheck.philox.KERNELS), randomgen through
numpy.random.Generator(Philox(number=4, width=32)).integers(0, 2**32, dtype=uint32),
its fastest path to uint32 words. Prints GB/s (of 32-bit words written) and the ratio;
target: reference >= 0.3x randomgen. Best of --repeat runs each.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rngcheck import counter, philox, reference


def best_seconds(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2-words", type=int, default=26)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    try:
        from randomgen import Philox
    except ImportError:
        print("randomgen is not installed: pip install randomgen")
        return 2
    n = 1 << args.log2_words
    start_counter, key = (1 << 64) - 12345, 0x0123456789ABCDEF
    state = counter.make_state(start_counter, key)

    def randomgen_words(count):
        bitgen = Philox(counter=(start_counter - 1) % (1 << 128), key=key, number=4, width=32)
        return np.random.Generator(bitgen).integers(0, 2**32, count, dtype=np.uint32)

    paths = ["c", "numpy"] if philox.KERNELS.active() is not None else ["numpy"]
    check = np.zeros(1 << 16, dtype=np.uint32)
    for path in paths:
        check[:] = 0
        with philox.KERNELS.using(path):
            reference.random_generator(state, (check.size,), None, check)
        if not np.array_equal(check, randomgen_words(check.size)):
            print(f"randomgen and the reference ({path}) disagree: not a fair comparison")
            return 1
    buffer = np.empty(n, dtype=np.uint32)
    times = {}
    for path in paths:
        with philox.KERNELS.using(path):
            times[path] = best_seconds(lambda: reference.random_generator(state, (n,), None, buffer), args.repeat)
    t_randomgen = best_seconds(lambda: randomgen_words(n), args.repeat)
    gigabytes = 4 * n / 1e9
    print(f"words: 2^{args.log2_words} ({4 * n / 2**20:.0f} MiB), best of {args.repeat}")
    if len(paths) == 1:
        print(f"(no compiled stream here: {philox.KERNELS.describe()})")
    for path, seconds in times.items():
        label = f"reference ({'philox.c' if path == 'c' else 'numpy'}, chunks of {reference.CHUNK_ELEMENTS}):"
        print(f"{label:38} {gigabytes / seconds:6.3f} GB/s, {t_randomgen / seconds:.2f}x randomgen")
    print(f"{'randomgen Philox4x32 (C):':38} {gigabytes / t_randomgen:6.3f} GB/s")
    print(f"target: the numpy code >= 0.3x randomgen: {'met' if t_randomgen / times['numpy'] >= 0.3 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
