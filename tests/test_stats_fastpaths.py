"""The vectorised fast paths equal straightforward computations of the same numbers.

The battery's speed comes from bit-sliced counting, shared histograms, table lookups and
chains advanced together; each is checked here against a plain reference on random and
on structured words (all ones, all zeros, counters, sparse bits), so a speed-up can never
change a result.
"""

import numpy as np
import pytest

from rngcheck.stats import battery, bits, knuth, lanes, nist
from rngcheck.stats import weak_generators as panel
from rngcheck.stats.accumulators import shared_chunk
from rngcheck.stats.streams import philox_source

RNG = np.random.default_rng(20261121)


def word_sets(s, k=4):
    r = RNG.integers(0, 2 ** 32, (k, s), dtype=np.uint32)
    return {
        "random": r,
        "sparse": (r & RNG.integers(0, 2 ** 32, (k, s), dtype=np.uint32)
                   & RNG.integers(0, 2 ** 32, (k, s), dtype=np.uint32)),
        "dense": (r | RNG.integers(0, 2 ** 32, (k, s), dtype=np.uint32)
                  | RNG.integers(0, 2 ** 32, (k, s), dtype=np.uint32)),
        "zeros": np.zeros((k, s), np.uint32),
        "ones": np.full((k, s), 0xFFFFFFFF, np.uint32),
        "counter": np.arange(k * s, dtype=np.uint32).reshape(k, s),
        "lcg32": panel.lcg32().read(k * s).reshape(k, s),
    }


@pytest.mark.parametrize("name", sorted(word_sets(8)))
def test_lane_bit_counts(name):
    for s in (1 << 15, 1 << 12):
        w = word_sets(s)[name]
        assert (lanes.lane_bit_counts(w) == lanes.lane_bit_counts_bytes(w)).all()


@pytest.mark.parametrize("name", sorted(word_sets(8)))
def test_overlapping_counts(name):
    w = word_sets(1 << 11)[name]
    for m in (12, 10, 3):
        assert (nist.overlapping_counts(w, m) == nist._overlapping_counts_shifts(w, m)).all()


@pytest.mark.parametrize("name", sorted(word_sets(8)))
def test_walk_extremes(name):
    w = word_sets(1 << 10)[name]
    total, highest, lowest = bits.walk_extremes(w)
    walk = np.cumsum(2 * bits.to_bits(w).astype(np.int64) - 1, axis=1)
    assert (total == walk[:, -1]).all() and (highest == walk.max(axis=1)).all() and (lowest == walk.min(axis=1)).all()


@pytest.mark.parametrize("name", sorted(word_sets(8)))
def test_gf2_rank32(name):
    w = word_sets(1 << 10, k=1)[name].reshape(-1, 32)
    w[::7, 3] = w[::7, 9]  # some dependent rows
    want = [nist.gf2_rank(bits.to_bits(m).reshape(32, 32)) for m in w]
    assert list(nist.gf2_rank32(w)) == want


def test_weight_pairs_and_histograms():
    for name, w in word_sets(1 << 15, k=2).items():
        weights = np.bitwise_count(w).astype(np.int64)
        joint = bits.weight_pairs(w)
        for r in range(w.shape[0]):
            want = np.zeros((33, 33), np.int64)
            np.add.at(want, (weights[r, 0::2], weights[r, 1::2]), 1)
            assert (joint[r] == want).all(), name
        histograms = bits.u16_histograms(w)
        assert (bits.byte_counts_of(histograms)[1] == np.bincount(w[1].view(np.uint8), minlength=256)).all()
        assert (histograms[0] == np.bincount(w[0].view(np.uint16), minlength=1 << 16)).all()


def test_maximum_of_t_cells_equal_searchsorted():
    acc = knuth.MaximumOfT()
    edges = acc.edges.astype(np.int64)
    values = np.concatenate([edges - 1, edges, edges + 1, RNG.integers(0, 2 ** 32, 100000)])
    values = np.clip(values, 0, 2 ** 32 - 1).astype(np.uint32)
    top = values >> np.uint32(16)
    cells = acc._cell_below[top].astype(np.int64) + (values >= acc._edge_in[top])
    assert (cells == np.searchsorted(acc.edges, values.astype(np.uint64), side="right")).all()


def coupon_reference(words, d=16):
    """Segment lengths of one sample, digit by digit (Knuth 3.3.2 E), complete segments only."""
    digits = [(int(w) >> (28 - 4 * t)) & 15 for w in words for t in range(8)]
    lengths, seen, start = [], set(), 0
    for i, x in enumerate(digits):
        seen.add(x)
        if len(seen) == d:
            lengths.append(i + 1 - start)
            seen, start = set(), i + 1
    return lengths


@pytest.mark.parametrize("name", ["random", "sparse", "counter", "lcg32", "zeros"])
def test_coupon_collector_chains(name):
    acc = knuth.CouponCollector()
    w = word_sets(acc.sample_words, k=3)[name]
    counts = acc.measure(w)[0]["counts"]
    for r in range(w.shape[0]):
        want = np.zeros(counts.shape[1], np.int64)
        for length in coupon_reference(w[r]):
            want[acc.bin_of_length[min(length, acc.t)]] += 1
        assert (counts[r] == want).all()


def test_runs_up_and_down_counts():
    w = word_sets(1 << 10, k=2)["random"]
    for cls, sign in ((knuth.RunsUp, 1), (knuth.RunsDown, -1)):
        got = cls().measure(w)[0]["V"]
        for r in range(2):
            x = w[r].astype(np.int64) * sign
            lengths, run = [], 1
            for i in range(1, x.size):
                if x[i] > x[i - 1]:
                    run += 1
                else:
                    lengths.append(run)
                    run = 1
            lengths.append(run)
            counts = np.bincount(np.minimum(lengths, 6) - 1, minlength=6)
            dev = counts - x.size * knuth.RUNS_UP_B
            # the battery forms V by elementwise steps (each row alone): the same to rounding
            assert got[r] == pytest.approx(dev @ knuth.RUNS_UP_A @ dev / (x.size - 6), rel=1e-12)


def test_shared_chunk_gives_the_results_of_separate_accumulators():
    words = philox_source(31).read(3 << 19)
    factories = battery.main_tests()
    alone = []
    for factory in factories:
        acc = factory(start=0)
        acc.update(words)
        alone.append(acc.result())
    shared = [factory(start=0) for factory in factories]
    with shared_chunk():
        for acc in shared:
            acc.update(words)
    assert [acc.result() for acc in shared] == alone


def test_balanced_ranges_cover_the_stream():
    factories = [battery.budgeted(f, 256 << 20) for f in battery.main_tests()]
    for words, pieces in ((64 << 20, 4), (1 << 20, 3), (12345, 4)):
        ranges = battery.balanced_ranges(factories, words, pieces, align=1 << 10)
        assert ranges[0][0] == 0 and sum(n for _, n in ranges) == words
        assert all(a + n == b for (a, n), (b, _) in zip(ranges, ranges[1:]))
