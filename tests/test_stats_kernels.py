"""The battery's compiled kernels (rngcheck/stats/kernels.c) and its numpy code give the same
numbers: every accumulator's state on both paths, and the battery's p-values pinned before the
kernels came (tests/data/stats_pinned.json, written by the pure-numpy battery of issue 44's
start; regenerate only for a change that is meant to move them). The rows of knuth.collision.words
were added when that test joined the battery (2026-11-29); no other row moved. The second level's
KS p-values came from scipy.stats.kstest; since rngcheck/stats/kolmogorov.py computes them
(2026-11-29) they are held to the pinned ones within 1e-9 relative, every other number exactly."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rngcheck.stats import battery, kernels
from rngcheck.stats import weak_generators as wg
from rngcheck.stats.streams import philox_source

PINNED = Path(__file__).parent / "data" / "stats_pinned.json"
# (generator, tier, bytes): the cases of the pinned file
PINNED_CASES = [("philox-10", "deep", 4 << 20), ("lcg64high", "standard", 4 << 20),
                ("xorshift32", "standard", 2 << 20), ("mt19937", "deep", 4 << 20)]

needs_c = pytest.mark.skipif(kernels.active() is None, reason="no compiled kernels here (no C compiler?)")


def _source(name):
    return philox_source(0x1234) if name == "philox-10" else {**wg.WEAK, **wg.BOUNDARY}[name]()


def _pinned_rows(doc):
    return [[e["test"], e["level"], e["stream"], e["statistic"], e["p_value"], e["q_value"],
             (e["retest"] or {}).get("p_value")] for e in doc["results"]]


def _close(now, before, relative: float = 1e-9) -> bool:
    """The same number to ``relative`` (both None, or both NaN, counts as the same)."""
    if now is None or before is None:
        return now is None and before is None
    if now != now or before != before:
        return now != now and before != before
    return now == before or abs(now - before) <= relative * abs(before)


@pytest.mark.parametrize("name, tier, nbytes", PINNED_CASES)
def test_pinned_p_values(name, tier, nbytes):
    """Every p-value, q-value, statistic and retest of the battery on these streams is the one the
    numpy battery gave before the kernels (on whichever path runs here: both give the same).

    Test, level and stream are held exactly; the numbers within 1e-9 relative. Decision, recorded
    here: the last bits of a few numbers depend on the CPU, not on rngcheck. numpy's float64 log has
    its own AVX-512 code, other CPUs use the C library's, and OpenBLAS picks its dot-product kernel
    by CPU model (the runs tests' quadratic form). Measured on an AMD EPYC (AVX2) against the
    pins recorded on an earlier machine: at most 6e-13 relative, in the runs up and down (and their
    second levels) and the approximate entropy; every other number bit for bit. A change to what the tests count moves a
    statistic by far more than 1e-9. Second-level KS p-values: kolmogorov.py's, not kstest's,
    within 1e-9 too."""
    pinned = json.loads(PINNED.read_text())[f"{name} {tier} {nbytes}"]
    doc = battery.run(_source(name), tier=tier, nbytes=nbytes, workers=1)
    got = _pinned_rows(doc)
    assert len(got) == len(pinned)
    for row, then in zip(got, pinned):
        assert row[:3] == then[:3], (row, then)
        assert all(_close(now, before) for now, before in zip(row[3:], then[3:])), (row, then)
    assert sum(row[1] == "second-level" for row in got) >= 20


def _inputs():
    rng = np.random.default_rng(5)
    n, small = 1 << 19, 1 << 17  # 2 MiB: a sample of every test (the 16-bit frequency's is 2 MiB)
    return {
        "random": rng.integers(0, 2 ** 32, n, dtype=np.uint32),
        "lcg32": wg.lcg32().read(n),
        "counter": wg.plain_counter().read(small),
        "zeros": np.zeros(small, np.uint32),
        "ones": np.full(small, 0xFFFFFFFF, np.uint32),
        "sparse": (rng.random(small) < 0.01).astype(np.uint32) * np.uint32(0xFFFF0000),
        "ties": rng.integers(0, 4, small, dtype=np.uint32),  # equal neighbours (runs up and down), few values
    }


def _same_state(a: dict, b: dict) -> list[str]:
    if a.keys() != b.keys():
        return sorted(set(a) ^ set(b))
    return [k for k in a if not (np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k])]


@needs_c
@pytest.mark.parametrize("input_name", list(_inputs()))
def test_compiled_and_numpy_give_the_same_state(input_name):
    """Every accumulator of the deep tier (below 1 GiB: Berlekamp-Massey on 2^15 bits, the same
    code as 2^17), fed the same words in two uneven chunks, holds the same records and totals on
    both paths (so the same results, merged or not)."""
    words = _inputs()[input_name]
    cut = 3 * words.size // 7 + 5
    differ = []
    for factory in battery.main_tests("deep", 1 << 29):
        states = {}
        for path in ("numpy", "c"):
            with kernels.using(path):
                acc = factory(start=0)
                acc.update(words[:cut])
                acc.update(words[cut:])
                states[path] = acc.state()
        differ += [f"{acc.name}: {key}" for key in _same_state(states["numpy"], states["c"])]
    assert not differ


@needs_c
def test_kernel_functions_match_their_numpy_forms():
    """The shared helpers the kernels stand in for, called directly on odd shapes."""
    from rngcheck.stats import bits, lanes, rank
    from rngcheck.stats.nist.entropy import overlapping_counts
    from rngcheck.stats.nist.matrix_rank import gf2_rank32

    rng = np.random.default_rng(9)
    words = rng.integers(0, 2 ** 32, (3, 4096), dtype=np.uint32)
    lib = kernels.active()
    for samples in (words, words & np.uint32(0x0F0F00FF), np.zeros_like(words)):
        with kernels.using("numpy"):
            numpy_walk = bits.walk_extremes(samples)
            numpy_pairs = bits.weight_pairs(samples)
            numpy_overlap = overlapping_counts(samples, 9)
        assert all(np.array_equal(a, b) for a, b in zip(numpy_walk, bits.walk_extremes(samples)))
        assert np.array_equal(numpy_pairs, bits.weight_pairs(samples))
        assert np.array_equal(numpy_overlap, overlapping_counts(samples, 9))
        counts = kernels.lane_bit_counts3(lib, samples)
        assert np.array_equal(counts[:, 0], lanes.lane_bit_counts(samples))
        assert np.array_equal(gf2_rank32(samples.reshape(-1, 32)), _rank32_c(lib, samples))
    matrices = rng.integers(0, 2 ** 63, (4, 256, 4), dtype=np.uint64)
    matrices[1, 100:] = matrices[1, :156]  # rank 156 at most
    assert np.array_equal(rank.gf2_ranks(matrices.copy()), kernels.gf2_ranks(lib, matrices.copy()))
    sequence = rng.integers(0, 2, 3000, dtype=np.uint8)
    sequence[1000:] = sequence[:2000] ^ sequence[1:2001]  # a linear recurrence from bit 1000 on
    from rngcheck.stats.linear import berlekamp_massey
    for seq in (sequence, sequence[:1], np.zeros(200, np.uint8), np.ones(130, np.uint8)):
        assert kernels.berlekamp_massey(lib, seq) == berlekamp_massey(seq.tolist())


def _plain_library():
    """kernels.c built without AVX2 (``-march=x86-64`` where the machine is an x86-64; elsewhere its
    own build, which has no AVX2 either): the plain loops that stand in for the AVX2 helpers."""
    import platform

    from rngcheck import native

    flags = tuple("-march=x86-64" if flag == "-march=native" and platform.machine() in ("x86_64", "AMD64")
                  else flag for flag in kernels.FLAGS)
    plain = native.Kernels(kernels.SOURCE, flags, "stats-plain", "the kernels without AVX2", kernels.SIGNATURES,
                           returns=kernels.KERNELS.returns)
    return plain.active()


@needs_c
@pytest.mark.parametrize("build", ["native", "plain"])
def test_vectorised_kernels_match_numpy_on_every_row_length(build):
    """The kernels that work on several words at once give the numpy code's counts on rows of every
    length, so their leftover words are counted too: the longest run (four 128-bit blocks a vector,
    rows of 4 to 68 words and 1036), runs up and down and the gaps (64 comparisons a mask, AVX2 where
    the library is built for it) and the runs' transitions (two words a popcount), rows of 1 to 70
    words and 1033; on random words, long runs of ones, equal neighbours, zeros and ones; the GF(2)
    ranks (eight matrices a vector) of 1 to 19 matrices of full and deficient rank. Both the
    library as the battery builds it (-march=native: AVX2 on CI's machines) and one built without
    AVX2 (the plain loops a CPU without it runs)."""
    from rngcheck.stats.knuth import Gap, RunsUp
    from rngcheck.stats.nist.runs import LongestRun, Runs

    rng = np.random.default_rng(16)
    lib = kernels.active() if build == "native" else _plain_library()
    assert lib is not None
    base = rng.integers(0, 2 ** 32, 3 * 1036, dtype=np.uint32)
    dense = base | (base << np.uint32(1)) | (base << np.uint32(2)) | (base >> np.uint32(3))
    inputs = {"random": base, "long runs": dense,
              "ties": rng.integers(0, 3, base.size, dtype=np.uint32) << np.uint32(30),
              "zeros": np.zeros_like(base), "ones": np.full_like(base, 0xFFFFFFFF)}
    gaps = [Gap(nibble=nibble) for nibble in (0, 7)]
    for name, words in inputs.items():
        for s in [*range(1, 71), 1033, 1036]:
            rows = np.ascontiguousarray(words[:3 * s].reshape(3, s))
            if s % 4 == 0:
                assert np.array_equal(kernels.per_row(lib, "longest_run_classes", rows, 6),
                                      LongestRun._counts(rows)), (name, s)
            assert np.array_equal(kernels.per_row(lib, "runs_transitions", rows, 2).T,
                                  np.stack(Runs._counts(rows))), (name, s)
            if s > 1:
                up_down = kernels.per_row(lib, "runs_up_down", rows, 12).reshape(-1, 2, 6)
                assert np.array_equal(up_down[:, 0], RunsUp._counts(rows, True)), (name, s)
                assert np.array_equal(up_down[:, 1], RunsUp._counts(rows, False)), (name, s)
            for gap in gaps:
                counts, hits = kernels.gap_counts(lib, rows, int(gap.shift), gap.t)
                numpy_counts, numpy_hits = gap._counts(rows)
                assert np.array_equal(counts, numpy_counts) and np.array_equal(hits, numpy_hits), (name, s)
    # the GF(2) ranks of 32 x 32 matrices: eight a vector with AVX2, the leftover ones alone; full
    # ranks and deficient ones (repeated rows, half the columns, a single row, none)
    from rngcheck.stats.nist.matrix_rank import gf2_rank32

    matrices = rng.integers(0, 2 ** 32, (19, 32), dtype=np.uint32)
    matrices[3, 16:] = matrices[3, :16]
    matrices[9] &= np.uint32(0x0000FFFF)
    matrices[11, 1:] = 0
    matrices[12] = 0
    matrices[15, 31] = matrices[15, 0] ^ matrices[15, 1]
    expected = gf2_rank32(matrices)
    assert {0, 1, 16} <= set(expected.tolist())
    for count in range(1, 20):
        assert np.array_equal(_rank32_c(lib, matrices[:count]), expected[:count]), count


@needs_c
def test_collision_and_block_ones_kernels_match_numpy():
    """The collision count's hash set (its tag wraps every 255 sets) and the ones per block of words."""
    from rngcheck.stats.testu01 import Collision

    rng = np.random.default_rng(11)
    lib = kernels.active()
    for words in (rng.integers(0, 2 ** 32, (2, 300 * 64), dtype=np.uint32),
                  rng.integers(0, 2 ** 8, (2, 300 * 64), dtype=np.uint32) << np.uint32(24),  # many collisions
                  np.zeros((2, 300 * 64), np.uint32)):
        values = np.sort((words >> np.uint32(8)).reshape(-1, 64), axis=1)
        expected = (values[:, 1:] == values[:, :-1]).sum(axis=1).reshape(2, -1).sum(axis=1)
        got = kernels.per_row(lib, "collision_counts", words, 1, 64, 24)[:, 0]
        assert np.array_equal(got, expected)
        bitmap = kernels.per_row(lib, "collision_counts", words, 1, 64, 25)[:, 0]  # the bitmap above 24 bits
        values = np.sort((words >> np.uint32(7)).reshape(-1, 64), axis=1)
        assert np.array_equal(bitmap, (values[:, 1:] == values[:, :-1]).sum(axis=1).reshape(2, -1).sum(axis=1))
        for block in (1, 3, 64, words.shape[1]):
            width = words.shape[1] // block * block
            expected_ones = np.bitwise_count(words[:, :width]).reshape(2, -1, block).sum(axis=2, dtype=np.int64)
            assert np.array_equal(kernels.block_ones(lib, words[:, :width], block), expected_ones)
    samples = rng.integers(0, 2 ** 32, (2, 1 << 16), dtype=np.uint32)
    with kernels.using("numpy"):
        numpy_state = Collision().measure(samples)
    assert np.array_equal(Collision().measure(samples)[0]["C"], numpy_state[0]["C"])


@needs_c
def test_window_kernels_match_the_nist_reference_functions():
    """Universal's distances and the template tests' window counts from words, against the
    reference functions on the same bits (random, all ones, a short period)."""
    from rngcheck.stats.bits import to_bits
    from rngcheck.stats.nist import common, complexity, templates

    rng = np.random.default_rng(13)
    lib = kernels.active()
    n_words = common.SAMPLE_WORDS
    for row in (rng.integers(0, 2 ** 32, n_words, dtype=np.uint32), np.full(n_words, 0xFFFFFFFF, np.uint32),
                np.tile(rng.integers(0, 2 ** 32, 3, dtype=np.uint32), n_words // 3 + 1)[:n_words]):
        bits = to_bits(row)
        L, Q, K = complexity.universal_parameters(bits.size)
        assert np.array_equal(kernels.universal_distances(lib, row, L, Q, K),
                              complexity.universal_distances(bits, L, Q, K))
        for N, m in ((8, 9), (3, 5), (1016, 9)):
            M = bits.size // N
            expected = np.stack([np.bincount(common.window_values(block, m), minlength=1 << m)
                                 for block in bits[:N * M].reshape(N, M)])
            assert np.array_equal(kernels.block_window_counts(lib, row, N, M, m), expected)
            assert np.array_equal(kernels.block_ones_windows(lib, row, N, M, m), expected[:, -1])
        hits = np.minimum(kernels.block_ones_windows(lib, row, bits.size // 1032, 1032, 9), 5)
        assert np.array_equal(np.bincount(hits, minlength=6), templates.overlapping_classes(bits))


def _rank32_c(lib, samples):
    ranks = np.empty(samples.size // 32, dtype=np.int64)
    words = np.ascontiguousarray(samples)
    lib.gf2_rank32(words.ctypes.data, ranks.size, ranks.ctypes.data)
    return ranks


def _child(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), **env})


def test_environment_chooses_the_path(tmp_path):
    """RNGCHECK_KERNELS=numpy never builds; without a compiler, auto runs numpy and says why, and
    c refuses in one line; a bad value is refused."""
    code = "from rngcheck.stats import kernels; print(kernels.describe())"
    assert _child(code, RNGCHECK_KERNELS="numpy").stdout.strip() == "numpy (RNGCHECK_KERNELS=numpy)"
    no_cc = {"CC": str(tmp_path / "no-such-cc"), "RNGCHECK_CACHE": str(tmp_path / "cache")}
    auto = _child(code, RNGCHECK_KERNELS="auto", **no_cc)
    assert auto.stdout.startswith("numpy (no C compiler"), auto.stderr
    forced = _child(code, RNGCHECK_KERNELS="c", **no_cc)
    assert forced.returncode != 0
    assert "RNGCHECK_KERNELS=c: the statistical battery's kernels cannot be had compiled" in forced.stderr
    bad = _child(code, RNGCHECK_KERNELS="fast")
    assert bad.returncode != 0 and "use auto, numpy or c" in bad.stderr
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.so"))


@needs_c
def test_the_library_is_built_once_per_source_and_machine(tmp_path, monkeypatch):
    path = kernels.build()
    assert path.is_file() and path.parent.name == "stats" and path.name.startswith("kernels-")
    assert kernels.build() == path  # cached: the same name, not rebuilt
    # another compiler program (here a wrapper of the same one), or the same one changed: another build
    import shutil

    wrapper = tmp_path / "cc-wrapper"
    wrapper.write_text(f"#!/bin/sh\nexec {shutil.which(os.environ.get('CC') or 'gcc')} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", str(wrapper))
    monkeypatch.setenv("RNGCHECK_CACHE", str(tmp_path / "cache"))  # these builds stay out of the real cache
    other = kernels.build()
    assert other.name != path.name and other.is_file()   # the digest is another
    os.utime(wrapper, ns=(1, 1))
    assert kernels.build().name not in (path.name, other.name)


@needs_c
def test_gap16_kernel_matches_numpy():
    """pr.gap16's counts in C are the numpy code's (stable argsort, searchsorted side="right"), on
    random, weak and constant rows, and on bounds that are not powers of two."""
    from rngcheck.stats import practrand_kinds

    rng = np.random.default_rng(44)
    lib = kernels.active()
    full = rng.integers(0, 2 ** 32, (2, 1 << 18), dtype=np.uint32)
    for samples in (full, full & np.uint32(0x00FF00FF), np.zeros_like(full),
                    (np.arange(1 << 19, dtype=np.uint32) * np.uint32(2654435761)).reshape(2, -1)):
        acc = practrand_kinds.Gap16(start=0)
        with kernels.using("numpy"):
            before = acc.measure(samples)
        after = acc.measure(samples)
        assert np.array_equal(before[0]["counts"], after[0]["counts"])
        assert np.array_equal(before[1]["counts"], after[1]["counts"])
    odd_bounds = ([3, 5, 6, 100, 1000], [1, 2, 7, 64, 65, 4096, 70000], [2, 4, 8, 1 << 17])
    for bounds in map(np.array, odd_bounds):
        samples = rng.integers(0, 2 ** 32, (2, 40000), dtype=np.uint32) & np.uint32(0x0FFF0FFF)
        rows = []
        for row in samples.view(np.uint16).reshape(2, -1):
            order = np.argsort(row, kind="stable")
            ordered = row[order]
            gaps = np.diff(order)[ordered[1:] == ordered[:-1]]
            classes = np.searchsorted(bounds, gaps, side="right")
            rows.append(np.bincount(classes, minlength=len(bounds) + 1)[:len(bounds)])
        assert np.array_equal(kernels.gap16_counts(lib, samples, bounds), np.array(rows))


@needs_c
def test_overlapping_counts_kernel_matches_numpy_for_every_m():
    """The (m + 3)-bit windows' histogram gives the numpy code's counts for m = 1 .. 12, on
    rows of one, three and 4096 words (the wrap-around), random, weak, constant and all-ones."""
    from rngcheck.stats.nist.entropy import _overlapping_counts_shifts, overlapping_counts

    rng = np.random.default_rng(12)
    for shape in ((3, 4096), (2, 1), (2, 3)):
        words = rng.integers(0, 2 ** 32, shape, dtype=np.uint32)
        for samples in (words, words & np.uint32(0x0F0F00FF), np.zeros_like(words), np.full_like(words, 0xFFFFFFFF)):
            for m in range(1, 13):
                compiled = overlapping_counts(samples, m)
                with kernels.using("numpy"):
                    assert np.array_equal(compiled, overlapping_counts(samples, m)), (shape, m)
                assert np.array_equal(compiled, _overlapping_counts_shifts(samples, m)), (shape, m)


@needs_c
def test_birthday_repeats_kernel_matches_numpy():
    """testu01.birthday_spacings' records on the C path (spacings and repeats in C around
    numpy's sorts) are the numpy code's, on random, tied, constant and weak words."""
    from rngcheck.stats import testu01

    rng = np.random.default_rng(4096)
    words = rng.integers(0, 2 ** 32, (3, 1 << 16), dtype=np.uint32)
    lcg = (np.arange(1 << 17, dtype=np.uint32) * np.uint32(69069) + np.uint32(1)).reshape(2, -1)
    for samples in (words, words & np.uint32(0xFFFF0000), np.zeros_like(words), words >> np.uint32(12), lcg):
        acc = testu01.BirthdaySpacings(start=0)
        with kernels.using("numpy"):
            before = acc.measure(samples)
        after = acc.measure(samples)
        assert np.array_equal(before[0]["J"], after[0]["J"]) and before[1]["J"] == after[1]["J"]


def _repeats_numpy(sets: np.ndarray) -> np.ndarray:
    """The birthday spacings' count by its definition: sort, spacings (the first from 0), sort, ties."""
    ordered = np.sort(sets, axis=1)
    spacings = np.diff(ordered, axis=1, prepend=np.uint32(0))
    spacings.sort(axis=1)
    return (spacings[:, 1:] == spacings[:, :-1]).sum(axis=1)


@needs_c
def test_birthday_kernel_sorts_every_input_of_a_full_bucket():
    """kernels.c's birthday sort: a counting sort by bucket, then one odd-even transposition round per
    value of the fullest bucket. A comparator network that sorts every 0-1 input sorts every input
    (Knuth's 0-1 principle), so every 0-1 input of 1 to 10 values (the most before the radix sort
    takes over) in one bucket, beginning on an odd and on an even place, proves it for every order;
    11 values (the radix sort), weak, random and tied sets are checked against numpy's sort, and the
    repeats of sets with a full bucket in every order of 8 distinct or tied values against the definition."""
    import itertools

    m, lib = 64, kernels.active()                       # 64 buckets: the top 6 bits
    under = (np.arange(40, dtype=np.uint32) << np.uint32(26)) + np.uint32(12345)       # buckets 0 .. 39
    over = np.concatenate([(np.arange(41, 64, dtype=np.uint32) << np.uint32(26)) + np.uint32(c)
                           for c in (12345, 54321)])    # buckets 41 .. 63, a second value when needed
    low, high = np.uint32((40 << 26) + 5), np.uint32((40 << 26) + 977)

    def with_bucket(inside, below):
        """Sets of m: ``inside`` (rows of values of bucket 40), ``below`` values before it, the rest after."""
        rest = np.concatenate([under[:below], over[:m - inside.shape[1] - below]])
        return np.ascontiguousarray(np.concatenate([inside, np.broadcast_to(rest, (len(inside), rest.size))], axis=1))

    for size in range(1, 11):
        patterns = np.array(list(itertools.product((low, high), repeat=size)), dtype=np.uint32)
        for below in (39, 38):                          # the bucket begins at an odd, then an even place
            sets = with_bucket(patterns, below)
            assert (np.sort(sets, axis=1) < np.uint32(40 << 26)).sum(axis=1).tolist() == [below] * len(sets)
            assert np.array_equal(kernels.birthday_sorted(lib, sets, m), np.sort(sets, axis=1)), (size, below)
    rng = np.random.default_rng(9)
    crowded = rng.integers(0, 1 << 20, (50, m), dtype=np.uint32)        # every value in bucket 0
    lattice = (np.arange(50 * m, dtype=np.uint32) * np.uint32(2654435761)).reshape(50, m)
    eleven = with_bucket(rng.integers(low, high, (50, 11), dtype=np.uint32), 39)
    uniform = rng.integers(0, 2 ** 32, (500, m), dtype=np.uint32)
    for sets in (crowded, lattice, eleven, np.zeros((3, m), np.uint32), uniform):
        assert np.array_equal(kernels.birthday_sorted(lib, sets, m), np.sort(sets, axis=1))
        assert np.array_equal(kernels.birthday_repeats(lib, sets, m), _repeats_numpy(sets))
    for values in ((np.arange(8) * 977 + 5).astype(np.uint32), np.array([7, 7, 9, 9, 9, 1, 7, 1], np.uint32)):
        sets = with_bucket(np.array(list(itertools.permutations(values)), dtype=np.uint32) | np.uint32(40 << 26), 39)
        assert np.array_equal(kernels.birthday_repeats(lib, sets, m), _repeats_numpy(sets))
    # the hash set's slots carry a set's tag (16 bits), so the table is cleared once the tags are
    # used up, after 65535 sets of one call: a set, 65535 constant ones (one slot), then the same set
    # again, whose tag would be the first's without the clearing (its slots all there to be found)
    first = rng.integers(0, 2 ** 32, (1, m), dtype=np.uint32)
    wrapped = np.concatenate([first, np.zeros((65535, m), np.uint32), first])
    assert np.array_equal(kernels.birthday_repeats(lib, wrapped, m), _repeats_numpy(wrapped))


@needs_c
def test_spectral_kernel_keeps_its_arrays_and_gives_numpy_s_counts_for_every_batch_size():
    """kernels.spectral_below keeps its batch's arrays between calls: batches of 8, 3, 8, 1, 5, 2 and 1
    rows (shorter batches, full ones again, more sizes than it keeps) give, row by row, the numpy code's
    counts; so do rows too long to keep."""
    from rngcheck.stats.nist.spectral import Spectral

    rng = np.random.default_rng(65536)
    rows = rng.integers(0, 2 ** 32, (28, 64), dtype=np.uint32)      # 2048 bits a row
    rows[5] &= np.uint32(0x0F0F0F0F)                                  # a weak row among them
    half = np.sqrt(np.log(20) * 2048) / 2
    lib, start, counts = kernels.active(), 0, []
    for size in (8, 3, 8, 1, 5, 2, 1):
        counts.append(kernels.spectral_below(lib, rows[start:start + size], half))
        start += size
    assert np.array_equal(np.concatenate(counts), Spectral._below(rows, half))
    long_rows = rng.integers(0, 2 ** 32, (2, 1 << 15), dtype=np.uint32)   # 2^20 bits a row: not kept
    long_half = np.sqrt(np.log(20) * (1 << 20)) / 2
    assert np.array_equal(kernels.spectral_below(lib, long_rows, long_half), Spectral._below(long_rows, long_half))


def _spectral_rows(s: int) -> np.ndarray:
    """Rows of s words for the spectral test's FFT: random ones, and ones its rounding could trip on
    (constant, periodic in words and in bits, a single one or zero, sparse and dense bits, a counter)."""
    rng = np.random.default_rng(2006)
    rows = [np.zeros(s), np.full(s, 0xFFFFFFFF), np.arange(s), np.r_[np.zeros(s // 2), np.full(s // 2, 0xFFFFFFFF)]]
    rows += [np.full(s, pattern) for pattern in (0x55555555, 0x33333333, 0x0F0F0F0F, 0x00FF00FF, 0x0000FFFF,
                                                 0x80000000, 0x00000001, 0x11111111, 0x7FFFFFFF)]
    for bit in (0, 31, 32, 16 * s - 1, 32 * s - 1):
        single = np.zeros(s, dtype=np.uint32)
        single[bit // 32] = 1 << (31 - bit % 32)
        rows += [single, ~single]
    rows += [np.resize(rng.integers(0, 2 ** 32, period, dtype=np.uint32), s) for period in (2, 3, 5, 7, 12)]
    for period in (3, 5, 24, 1000, 4097):
        rows.append(np.packbits(np.resize(rng.integers(0, 2, period), 32 * s).astype(np.uint8)).view(">u4"))
    for p in (0.001, 0.1, 0.9, 0.999):
        rows.append(np.packbits((rng.random(32 * s) < p).astype(np.uint8)).view(">u4"))
    rows = np.array([np.asarray(row, dtype=np.uint64).astype(np.uint32) for row in rows], dtype=np.uint32)
    return np.concatenate([rows, rng.integers(0, 2 ** 32, (23, s), dtype=np.uint32)])


@needs_c
@pytest.mark.parametrize("build", ["native", "plain"])
def test_spectral_fft_gives_numpy_s_counts_and_terms(build):
    """kernels.c's FFT for the spectral test (spectral_counts; four rows a vector with AVX, two
    without): counts equal to numpy's rfft path on random and awkward rows of 2048 words, on every row
    length from 64 to 4096 words and every number of rows in a vector's last group; its terms within
    1e-9 of numpy's (Higham's bound for both FFTs: the band it hands back to numpy is 1e-9 t^2 in the
    squared modulus, about 1e-7 in the modulus near t); a threshold on a term's own modulus is handed
    back (-1) and still counted as numpy counts."""
    from rngcheck.stats.nist.spectral import Spectral

    lib = kernels.active() if build == "native" else _plain_library()
    rows = _spectral_rows(2048)
    half = math.sqrt(math.log(20) * 65536) / 2
    assert np.array_equal(kernels.spectral_below(lib, rows, half), Spectral._below(rows, half))
    octets = np.ascontiguousarray(rows, dtype=">u4").view(np.uint8)
    reference = np.fft.rfft(np.unpackbits(octets, axis=1).astype(np.float64), axis=1)[:, 1:32768]
    terms, raw = kernels.spectral_terms(lib, rows, half)
    assert np.abs(terms[:, :32767] - reference).max() < 1e-9
    assert (raw >= 0).all()                              # none of these rows has a term in the band
    rng = np.random.default_rng(64)
    for s in (64, 128, 256, 512, 1024, 4096):            # N1 x N2 splits of even and odd powers of two
        for count in (1, 2, 3, 5):
            some = rng.integers(0, 2 ** 32, (count, s), dtype=np.uint32)
            t = math.sqrt(math.log(20) * 32 * s) / 2
            assert np.array_equal(kernels.spectral_below(lib, some, t), Spectral._below(some, t)), (s, count)
    tables, scratch = kernels._spectral_fft_arrays(lib, 64)
    for count in (1, 2, 3, 5):                           # nothing written past the rows' counts
        out = np.full(count + 4, -7, dtype=np.int64)
        some = rng.integers(0, 2 ** 32, (count, 64), dtype=np.uint32)
        lib.spectral_counts(some.ctypes.data, count, 64, 1.0, tables.ctypes.data, scratch.ctypes.data, out.ctypes.data)
        assert (out[:count] >= 0).all() and (out[count:] == -7).all(), count
    random = rows[-8:]
    on_a_term = float(np.abs(reference[-8 + 3, 999]))     # |X_1000| of the random row 3: its side is not sure
    _, raw = kernels.spectral_terms(lib, random, on_a_term)
    assert raw[3] == -1 and (raw[[0, 1, 2, 4, 5, 6, 7]] >= 0).all()
    assert np.array_equal(kernels.spectral_below(lib, random, on_a_term), Spectral._below(random, on_a_term))


@needs_c
def test_block_weights_kernel_matches_numpy():
    """pr.block_weights' records on the C path are the numpy code's (random, weak, constant,
    all-ones and heavy words: every class at every level)."""
    from rngcheck.stats import practrand_kinds

    rng = np.random.default_rng(27)
    words = rng.integers(0, 2 ** 32, (2, 1 << 20), dtype=np.uint32)
    for samples in (words, words & np.uint32(0x0F0F0F0F), np.zeros_like(words), np.full_like(words, 0xFFFFFFFF),
                    words | np.uint32(0x11111111)):
        acc = practrand_kinds.BlockWeights(start=0)
        with kernels.using("numpy"):
            before = acc.measure(samples)
        after = acc.measure(samples)
        for part in (0, 1):
            assert before[part].keys() == after[part].keys()
            assert all(np.array_equal(before[part][key], after[part][key]) for key in before[part])
