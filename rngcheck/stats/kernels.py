"""The battery's hot loops compiled: kernels.c, built once on first use, with numpy as the fallback.

Each test's ``measure`` asks ``active()`` for the compiled library and, where there is none,
runs its numpy code; both give the same integer counts (tests/test_stats_kernels.py holds the
two paths to each other and tests/data/stats_pinned.json holds the battery's p-values), so a
result never depends on which path ran. Floating-point work stays in numpy on both paths (the
spectral test's FFT, every statistic and p-value).

Why C through rngcheck's compile-on-first-use helper (rngcheck.native.Kernels) and not
numba or Cython: measured here, the same loops ran as fast or faster in C (poker 4.3 ns per
word against numba's 12.3, runs up 3.7 against 3.9), the whole file builds in about a second
once (numba compiled each kernel on first call, 0.9 to 2.5 s apiece), and a fresh ``pip
install`` needs nothing new: no wheel to build (Cython) and no 40 MiB LLVM (numba). Where no C
compiler is found, or the build fails, the numpy code runs: slower, the same results.

Measured on this 2-core machine (shared, so within tens of percent), one process, random words:
a test with a kernel costs 1.2 to 14 ns per word where its numpy code cost 2 to 80 (power lags
5.1 against 52, weight windows 14 against 61, the 32 x 32 ranks 7 against 38, the coupon
collector 8.6 against about 80); the spectral test's FFT (about 450 ns per word of its 1/32 of
the tier) is numpy's on both paths.

The library is built under the cache (``$RNGCHECK_CACHE/stats``) with ``-O3 -march=native``; how it is
named, and the ``RNGCHECK_KERNELS`` switch that chooses the path: rngcheck.native.Kernels.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path

import numpy as np

from .. import native

SOURCE = Path(__file__).with_name("kernels.c")
FLAGS = ("-O3", "-march=native", "-std=gnu99", "-shared", "-fPIC", "-fno-strict-aliasing")
_I64, _PTR = ctypes.c_int64, ctypes.c_void_p
SIGNATURES = {  # name -> argument types (every function returns void but those KERNELS.returns names)
    "byte_counts": (_PTR, _I64, _I64, _PTR),
    "u16_counts": (_PTR, _I64, _I64, _PTR),
    "lane_bit_counts3": (_PTR, _I64, _I64, _PTR),
    "longest_run_classes": (_PTR, _I64, _I64, _PTR),
    "poker_counts": (_PTR, _I64, _I64, _PTR, _PTR),
    "runs_up_down": (_PTR, _I64, _I64, _PTR),
    "runs_transitions": (_PTR, _I64, _I64, _PTR),
    "gap_counts": (_PTR, _I64, _I64, ctypes.c_int, _I64, _PTR, _PTR),
    "coupon_counts": (_PTR, _I64, _I64, _PTR, _I64, _I64, _PTR),
    "maximum_counts": (_PTR, _I64, _I64, _I64, _PTR, _PTR, _I64, _PTR),
    "weight_pairs": (_PTR, _I64, _I64, _PTR),
    "bits_f64": (_PTR, _I64, _PTR),
    "spectral_below": (_PTR, _I64, _I64, _I64, ctypes.c_double, _PTR),
    "spectral_table_doubles": (_I64,),
    "spectral_scratch_doubles": (_I64,),
    "spectral_tables": (_I64, _PTR),
    "spectral_counts": (_PTR, _I64, _I64, ctypes.c_double, _PTR, _PTR, _PTR),
    "spectral_terms": (_PTR, _I64, _I64, ctypes.c_double, _PTR, _PTR, _PTR, _PTR),
    "berlekamp_massey": (_PTR, _I64, _PTR),
    "walk_extremes": (_PTR, _I64, _I64, _PTR, _PTR, _PTR, _PTR),
    "gf2_ranks": (_PTR, _I64, _I64, _I64, _PTR),
    "overlapping_counts": (_PTR, _I64, _I64, ctypes.c_int, _PTR),
    "collision_counts": (_PTR, _I64, _I64, _I64, ctypes.c_int, _PTR),
    "gf2_rank32": (_PTR, _I64, _PTR),
    "block_ones": (_PTR, _I64, _I64, _PTR),
    "gap16_counts": (_PTR, _I64, _I64, _PTR, _I64, _PTR, _PTR, _PTR),
    "birthday_repeats": (_PTR, _I64, _I64, ctypes.c_int, ctypes.c_int, _PTR, _PTR),
    "birthday_sorted": (_PTR, _I64, _I64, ctypes.c_int, _PTR, _PTR),
    "block_weight_counts": (_PTR, _I64, _I64, _PTR, _I64, _PTR, _PTR, _PTR, _PTR),
    "universal_distances": (_PTR, _I64, ctypes.c_int, _I64, _I64, _PTR, _PTR),
    "block_window_counts": (_PTR, _I64, _I64, _I64, ctypes.c_int, _PTR),
    "block_ones_windows": (_PTR, _I64, _I64, _I64, ctypes.c_int, _PTR),
    "excursion_counts": (_PTR, _I64, _I64, _PTR),
    "power_lag_counts": (_PTR, _I64, _I64, _PTR, _I64, _PTR),
    "weight_window_counts": (_PTR, _I64, _I64, _PTR, ctypes.c_int, ctypes.c_int, _PTR, _PTR),
}

# The cost of each test per word measured with the compiled kernels (ns, this 2-core machine,
# standard tier of a 256 MiB file), for
# battery.balanced_ranges to cut pieces of equal work; the numpy path keeps each test's own
# cost_ns_per_word. A prefix ending in "." scales that cost instead (the large ranks, and
# Berlekamp-Massey, whose cost each test computes from its size).
COMPILED_COST = {
    "nist.monobit": 0.2, "nist.block_frequency": 0.3, "nist.runs": 1.2, "nist.longest_run": 2.7,
    "nist.matrix_rank": 7.7, "nist.serial": 19, "nist.cumulative_sums": 3.9, "nist.spectral": 90,
    "knuth.byte_frequency": 1.8, "knuth.frequency16": 2.9, "knuth.gap.nibble7": 1.0, "knuth.gap.nibble0": 1.0,
    "knuth.poker": 2.1, "knuth.coupon_collector": 8.6, "knuth.maximum_of_t": 1.3, "knuth.runs_up": 1.9,
    "knuth.runs_down": 1.9, "testu01.birthday_spacings": 5.8, "testu01.hamming": 1.7, "knuth.collision": 2.2,
    "testu01.random_walk": 1.3, "lanes": 1.7, "nist.overlapping_template": 39, "nist.non_overlapping_template": 47,
    "nist.universal": 40, "nist.random_excursions": 37, "pr.block_weights": 16.5, "pr.weight_windows": 14.3,
    "pr.float_frequency": 21.4, "pr.gap16": 86.5, "pr.power_lags": 5.1,
}
COMPILED_COST_RATIO = {"rank.binary.": 0.3, "linear.complexity.": 0.15}


def cost_ns_per_word(acc) -> float:
    """What ``acc`` costs per word on the path that runs (battery.balanced_ranges)."""
    if active() is None:
        return acc.cost_ns_per_word
    if acc.name in COMPILED_COST:
        return COMPILED_COST[acc.name]
    ratio = next((r for prefix, r in COMPILED_COST_RATIO.items() if acc.name.startswith(prefix)), 1.0)
    return acc.cost_ns_per_word * ratio


KERNELS = native.Kernels(SOURCE, FLAGS, "stats", "the statistical battery's kernels", SIGNATURES,
                         returns={"berlekamp_massey": _I64, "spectral_table_doubles": _I64,
                                  "spectral_scratch_doubles": _I64})
build = KERNELS.build        # the library's path, built now unless the cache has it
active = KERNELS.active      # the library, or None where the numpy code runs
describe = KERNELS.describe  # "c" or "numpy (why)"
using = KERNELS.using        # a block on one path, "c" or "numpy" (tests compare them)


def keep_freed_memory() -> bool:
    """glibc only: keep the memory numpy frees for its next arrays instead of handing it back to the
    system (mallopt: arrays up to 32 MiB from the heap, no trimming). The battery's per-chunk
    temporaries (megabytes each) otherwise come back as fresh pages every chunk, which the kernel
    zeroes: the standard tier's system time was 0.58 s (median of 5), 0.18-0.19 s with this
    (docs/statistics.md, Speed).
    Process-wide, for the rest of the process (the ``rngcheck stats`` command calls it; the workers
    it forks inherit it); the peak memory is the same, it is only not returned. False where it
    does not apply (not glibc)."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    if not hasattr(libc, "gnu_get_libc_version"):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_mmap_threshold, 32 << 20)) and bool(mallopt(m_trim_threshold, 1 << 30))


# -- calls (arrays made contiguous and of the kernels' types here) ----------------------------

def _words(samples) -> np.ndarray:
    return np.ascontiguousarray(samples, dtype=np.uint32)


def _p(array: np.ndarray) -> int:
    return array.ctypes.data


def per_row(lib, name: str, samples, width: int, *extra) -> np.ndarray:
    """(k, width) int64 from kernel ``name`` called as name(words, k, s, *extra, out)."""
    words = _words(samples)
    k, s = words.shape
    out = np.zeros((k, width), dtype=np.int64)
    getattr(lib, name)(_p(words), k, s, *extra, _p(out))
    return out


def table(array, dtype) -> np.ndarray:
    """A lookup table as a kernel reads it (contiguous, of its type); kept alive by the caller."""
    return np.ascontiguousarray(array, dtype=dtype)


def lane_bit_counts3(lib, samples) -> np.ndarray:
    """(k, 3, 4, 32): ones of the words, of word i ^ word i+1, of word i ^ word i+4."""
    return per_row(lib, "lane_bit_counts3", samples, 3 * 128).reshape(-1, 3, 4, 32)


def block_ones(lib, samples, block: int) -> np.ndarray:
    """(k, s / block) int64: the ones of each run of ``block`` words of each row (bits.ones)."""
    words = _words(samples)
    k, s = words.shape
    out = np.empty((k, s // block), dtype=np.int64)
    lib.block_ones(_p(words), k * (s // block), block, _p(out))
    return out


def universal_distances(lib, row, L: int, Q: int, K: int) -> np.ndarray:
    """(K,) int64: nist.complexity.universal_distances of a row of words read as bits."""
    words = _words(row)
    last = np.empty(1 << L, dtype=np.int64)
    out = np.empty(K, dtype=np.int64)
    lib.universal_distances(_p(words), words.size, L, Q, K, _p(last), _p(out))
    return out


def block_window_counts(lib, row, N: int, M: int, m: int) -> np.ndarray:
    """(N, 2^m) int64: the counts of the m-bit windows of each M-bit block of a row of words."""
    words = _words(row)
    out = np.zeros((N, 1 << m), dtype=np.int64)
    lib.block_window_counts(_p(words), words.size, N, M, m, _p(out))
    return out


def block_ones_windows(lib, row, N: int, M: int, m: int) -> np.ndarray:
    """(N,) int64: the m-bit windows of all ones in each M-bit block of a row of words."""
    words = _words(row)
    out = np.empty(N, dtype=np.int64)
    lib.block_ones_windows(_p(words), words.size, N, M, m, _p(out))
    return out


def gap_counts(lib, samples, shift: int, t: int):
    words = _words(samples)
    k, s = words.shape
    counts = np.empty((k, t + 1), dtype=np.int64)
    hits = np.empty(k, dtype=np.int64)
    lib.gap_counts(_p(words), k, s, shift, t, _p(counts), _p(hits))
    return counts, hits


def gap16_counts(lib, samples, bounds: np.ndarray) -> np.ndarray:
    """(k, len(bounds)) int64: per row (its words' 16-bit halves), the gaps between consecutive
    occurrences of each value counted by class, the class np.searchsorted(bounds, gap,
    side="right") (practrand_kinds.Gap16's numpy code)."""
    words = _words(samples)
    k, s = words.shape
    table = np.ascontiguousarray(bounds, dtype=np.int64)
    low = np.left_shift(1, np.arange(63, dtype=np.int64))  # gaps of bit length L + 1: low .. 2 low - 1
    first, final = (np.searchsorted(table, ends, side="right") for ends in (low, 2 * low - 1))
    by_length = np.append(np.where(first == final, first, -1), -1).astype(np.int64)
    last = np.empty(1 << 16, dtype=np.int64)
    out = np.empty((k, table.size), dtype=np.int64)
    lib.gap16_counts(_p(words), k, 2 * s, _p(table), table.size, _p(by_length), _p(last), _p(out))
    return out


def _birthday_sets(samples, m: int) -> tuple[np.ndarray, int]:
    """(the words as rows of m, the bits of the sort's buckets: m buckets or more, a value each on average)."""
    if not 1 <= m <= 1 << 24:
        raise ValueError(f"birthday sets of 1 to 2^24 words, not {m}")
    return np.ascontiguousarray(samples, dtype=np.uint32).reshape(-1, m), max(1, (m - 1).bit_length())


def birthday_repeats(lib, samples, m: int) -> np.ndarray:
    """Per set of m consecutive words (row-major), the repeated values among its sorted spacings
    (testu01.BirthdaySpacings' numpy code, with its two sorts): kernels.c's birthday_repeats."""
    words, bits = _birthday_sets(samples, m)
    hash_bits = bits + 4 if m <= 1 << 16 else 0         # 16 slots a spacing (kernels.c's BIRTHDAY_INDEXED)
    scratch = np.empty(2 * m + 2049 + (1 << bits) + 1 + (1 << hash_bits), dtype=np.uint32)
    out = np.empty(words.shape[0], dtype=np.int64)
    lib.birthday_repeats(_p(words), words.shape[0], m, bits, hash_bits, _p(scratch), _p(out))
    return out


def birthday_sorted(lib, samples, m: int) -> np.ndarray:
    """Each set of m words sorted by birthday_repeats' own sort (step 1 alone: for the tests)."""
    words, bits = _birthday_sets(samples, m)
    scratch = np.empty(m + 2049 + (1 << bits) + 1, dtype=np.uint32)
    out = np.empty_like(words)
    lib.birthday_sorted(_p(words), words.shape[0], m, bits, _p(scratch), _p(out))
    return out


def block_weight_counts(lib, samples, levels, lower, upper) -> np.ndarray:
    """(k, len(levels), 27): per row, level (blocks of 2^level words, ascending) and cell, the
    non-overlapping triples of consecutive blocks' weight classes (practrand_kinds.BlockWeights'
    numpy code): class 0 at or below ``lower``, 2 at or above ``upper``, 1 between."""
    words = _words(samples)
    k, s = words.shape
    tables = [np.ascontiguousarray(t, dtype=np.int64) for t in (levels, lower, upper)]
    scratch = np.empty(s, dtype=np.int64)
    out = np.empty((k, len(levels), 27), dtype=np.int64)
    lib.block_weight_counts(_p(words), k, s, _p(tables[0]), len(levels), _p(tables[1]), _p(tables[2]),
                            _p(scratch), _p(out))
    return out


def coupon_counts(lib, samples, bin_of: np.ndarray, t: int, bins: int) -> np.ndarray:
    table = np.ascontiguousarray(bin_of, dtype=np.int64)
    return per_row(lib, "coupon_counts", samples, bins, _p(table), t, bins)


def maximum_counts(lib, samples, t: int, below: np.ndarray, edge_in: np.ndarray, cells: int) -> np.ndarray:
    below, edge_in = table(below, np.uint8), table(edge_in, np.uint64)
    return per_row(lib, "maximum_counts", samples, cells, t, _p(below), _p(edge_in), cells)


def poker_counts(lib, samples, sets: np.ndarray) -> np.ndarray:
    sets = table(sets, np.uint16)
    return per_row(lib, "poker_counts", samples, 6, _p(sets))


def walk_extremes(lib, samples, total, high, low):
    """(final sum, highest, lowest partial sum) per row, from the per-byte tables of bits.py."""
    tables = [table(t, np.int32) for t in (total, high, low)]
    out = per_row(lib, "walk_extremes", samples, 3, *(_p(t) for t in tables))
    return out[:, 0].copy(), out[:, 1].copy(), out[:, 2].copy()


def gf2_ranks(lib, matrices: np.ndarray) -> np.ndarray:
    """Ranks of (B, N, N/64) uint64 matrices (rank.gf2_ranks); the array is destroyed."""
    m = np.ascontiguousarray(matrices, dtype=np.uint64)
    batch, n, words = m.shape
    out = np.empty(batch, dtype=np.int64)
    lib.gf2_ranks(_p(m), batch, n, words, _p(out))
    return out


def power_lag_counts(lib, samples, lags) -> np.ndarray:
    """(k, len(lags), 256) counts of the second differences' low bytes (practrand_kinds.PowerLags)."""
    table_ = table(lags, np.int64)
    return per_row(lib, "power_lag_counts", samples, len(lags) * 256, _p(table_), len(lags)).reshape(-1, len(lags), 256)


def weight_window_counts(lib, samples, byte_class, cuts):
    """(bytes (k, 3^9), words (k, 3^6)) window counts (practrand_kinds.WeightWindows)."""
    words = _words(samples)
    k, s = words.shape
    classes = table(byte_class, np.int8)
    out_bytes = np.empty((k, 3 ** 9), dtype=np.int64)
    out_words = np.empty((k, 3 ** 6), dtype=np.int64)
    lib.weight_window_counts(_p(words), k, s, _p(classes), cuts[0], cuts[1], _p(out_bytes), _p(out_words))
    return out_bytes, out_words


# numpy 2's FFT writes into a given array; 1.x returns a new one (its kept transform unused).
_RFFT_OUT = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
_SPECTRAL_ARRAYS = threading.local()   # per thread: .arrays (rfft), .fft (spectral_counts)
_SPECTRAL_KEPT_BITS = 8 << 16          # the battery's batch (Spectral.batch_words: 8 transforms of 2^16 bits)


def _spectral_arrays(k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The arrays of one batch of k transforms of n bits, kept from one call to the next. A batch's
    two fresh 4 MiB arrays have their pages faulted in anew (measured on an AMD EPYC, the spectral
    test's 1024 transforms: 65,000 page faults and 0.22-0.29 s of system time with fresh arrays,
    0.004 s with kept ones; the whole command 0.30 s of CPU less, the same counts)."""
    if k * n > _SPECTRAL_KEPT_BITS:    # larger than the battery's batches: not kept
        return np.empty((k, n), dtype=np.float64), np.empty((k, n // 2 + 1), dtype=np.complex128)
    kept = getattr(_SPECTRAL_ARRAYS, "arrays", None)
    if kept is None:
        kept = _SPECTRAL_ARRAYS.arrays = {}
    if (k, n) not in kept:
        if len(kept) >= 2:             # a batch size and the stream's last, shorter batch
            kept.clear()
        kept[(k, n)] = (np.empty((k, n), dtype=np.float64), np.empty((k, n // 2 + 1), dtype=np.complex128))
    return kept[(k, n)]


def spectral_below(lib, samples, threshold: float) -> np.ndarray:
    """Per row: the terms 1 .. n/2 - 1 of the DFT of its bits whose modulus is below ``threshold``,
    numpy's counts (Spectral._below): kernels.c's own FFT (spectral_counts) where a row has s a power
    of two from 64 to SPECTRAL_FFT_MOST_WORDS words, numpy's rfft (spectral_rfft_below) for the other
    rows and for those with a term too near the threshold for the FFTs' rounding to be sure of its
    side (spectral_counts' -1)."""
    words = _words(samples)
    k, s = words.shape
    if s < 64 or s > SPECTRAL_FFT_MOST_WORDS or s & (s - 1):
        return spectral_rfft_below(lib, words, threshold)
    tables, scratch = _spectral_fft_arrays(lib, s)
    out = np.empty(k, dtype=np.int64)
    lib.spectral_counts(_p(words), k, s, threshold, _p(tables), _p(scratch), _p(out))
    undecided = np.flatnonzero(out < 0)
    if undecided.size:
        out[undecided] = spectral_rfft_below(lib, words[undecided], threshold)
    return out


# The band spectral_counts hands back to numpy (1e-9 t^2) over the error bound of the two FFTs: the
# margin falls as 1/sqrt(n) (t grows as sqrt(n), the bound as n): 49x at the battery's 2048 words
# (65536 bits), about 35x at 4096; longer rows are counted by numpy's rfft.
SPECTRAL_FFT_MOST_WORDS = 4096


def spectral_terms(lib, samples, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """spectral_counts' terms X_1 .. X_(n/2 - 1) of each row (k, n/2 - 1) complex, and its counts
    with -1 (for the tests: the terms against numpy's)."""
    words = _words(samples)
    k, s = words.shape
    tables, scratch = _spectral_fft_arrays(lib, s)
    out = np.empty(k, dtype=np.int64)
    terms = np.zeros((k, 16 * s), dtype=np.complex128)
    lib.spectral_terms(_p(words), k, s, threshold, _p(tables), _p(scratch), _p(out), _p(terms))
    return terms[:, 1:], out


def _spectral_fft_arrays(lib, s: int) -> tuple[np.ndarray, np.ndarray]:
    """spectral_counts' twiddle tables for rows of s words and its scratch (2 MiB for the battery's
    2048 words), kept per thread from one call to the next, for the library that asks (a build
    without AVX works two rows at once, not four: its scratch is half the size)."""
    key = (s, lib.spectral_table_doubles(s), lib.spectral_scratch_doubles(s))
    kept = getattr(_SPECTRAL_ARRAYS, "fft", None)
    if kept is None or kept[0] != key:
        tables = np.empty(key[1], dtype=np.float64)
        lib.spectral_tables(s, _p(tables))
        kept = _SPECTRAL_ARRAYS.fft = (key, tables, np.zeros(key[2], dtype=np.float64))
    return kept[1], kept[2]


def spectral_rfft_below(lib, samples, threshold: float) -> np.ndarray:
    """spectral_below by numpy's rfft: the bits as float64 (bits_f64), their transform, the terms
    below ``threshold`` counted in C (hypot near it, as numpy's abs)."""
    words = _words(samples)
    k, s = words.shape
    n = 32 * s
    bits, terms = _spectral_arrays(k, n)
    lib.bits_f64(_p(words), words.size, _p(bits))
    if _RFFT_OUT:
        np.fft.rfft(bits, axis=1, out=terms)  # (k, n/2 + 1), C-contiguous
    else:
        terms = np.fft.rfft(bits, axis=1)     # numpy 1.x: a new array (the kept one unused)
    out = np.empty(k, dtype=np.int64)
    lib.spectral_below(_p(terms), k, terms.shape[1], n // 2, threshold, _p(out))
    return out


def berlekamp_massey(lib, bits) -> int:
    sequence = np.ascontiguousarray(bits, dtype=np.uint8)
    n = sequence.size
    scratch = np.empty(4 * (n // 64 + 2), dtype=np.uint64)
    return int(lib.berlekamp_massey(_p(sequence), n, _p(scratch)))
