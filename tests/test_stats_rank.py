"""The binary rank of large GF(2) matrices (rngcheck/stats/rank.py) and the linear complexity on
every bit position (linear.py): exact null laws, the elimination against a plain one, the
p-values' distribution on good streams, and power on constructed weak streams."""

import math

import numpy as np
import pytest

from rngcheck.stats import battery, linear, nist, rank
from rngcheck.stats import weak_generators as panel
from rngcheck.stats.pvalues import ks_uniform


def plain_rank(rows) -> int:
    basis = {}
    for x in rows:
        while x:
            top = x.bit_length() - 1
            if top not in basis:
                basis[top] = x
                break
            x ^= basis[top]
    return len(basis)


@pytest.mark.parametrize("n", [64, 128, 256])
def test_the_elimination_is_the_plain_one(n):
    rng = np.random.default_rng(n)
    m = rng.integers(0, 2 ** 63, (12, n, n // 64), dtype=np.uint64)
    m[1, 3] = m[1, 5] ^ m[1, 7]  # rank n - 1 at most
    m[2, : n // 2] = 0  # rank n / 2 at most
    m[3] = m[3, 0]  # rank 1
    m[4] = 0
    want = [plain_rank(int.from_bytes(m[b, r].tobytes(), "little") for r in range(n)) for b in range(12)]
    assert list(rank.gf2_ranks(m.copy())) == want
    assert want[2] <= n // 2 and want[3] == 1 and want[4] == 0


def test_the_deficit_law_is_exact():
    p = rank.deficit_probabilities(256)
    assert math.isclose(p.sum(), 1.0)
    assert np.allclose(p, [0.2888, 0.5776, 0.1284, 0.0053], atol=1e-4)  # the published values
    full, minus, rest = nist.rank_probabilities(64, 64)  # SP 800-22's general formula
    q = 2.0 ** rank.deficit_log2_probabilities(64)
    assert math.isclose(q[0], full, rel_tol=1e-12) and math.isclose(q[1], minus, rel_tol=1e-12)
    # small n by enumeration: all 2^9 3x3 matrices
    counts = np.zeros(4)
    for code in range(1 << 9):
        counts[3 - plain_rank([(code >> (3 * r)) & 7 for r in range(3)])] += 1
    assert np.allclose(2.0 ** rank.deficit_log2_probabilities(3), counts / 512)
    assert rank.deficit_tail_log2(256, 100) < -9990  # a deficit of 100: about 2^-10000


def good_words(seed, count):
    return np.random.PCG64(seed).random_raw(count // 2).view(np.uint32)


@pytest.mark.parametrize("select", ["all", "bit0/2"])
def test_p_values_on_good_streams_are_uniform(select):
    size = 256 if select == "all" else 64
    aggregate, worst = [], []
    for seed in range(40):
        acc = rank.BinaryRank(size=size, select=select)
        acc.update(good_words(1000 + seed, acc.sample_words * 48))
        found = {e["level"]: e for e in acc.result()}
        aggregate.append(found["aggregate"]["p_value"])
        worst.append(found["worst-cell"]["p_value"])
    histogram = np.histogram(aggregate, bins=4, range=(0, 1))[0]
    assert histogram.min() >= 3, histogram  # 10 expected per bin
    assert ks_uniform(aggregate)[1]["p"] > 1e-3
    assert min(worst) > 1e-3  # discrete and conservative: never small on good streams


def test_a_linear_generator_fails_at_once():
    acc = rank.BinaryRank(size=256, select="all")
    acc.update(panel.xorshift32().read(acc.sample_words))  # one matrix
    entry = next(e for e in acc.result() if e["level"] == "worst-cell")
    assert entry["largest_deficit"] >= 256 - 32
    assert battery.tail(entry) < battery.FAIL_AT


def test_a_linear_low_bit_under_random_bits_fails_the_bit_selection_only():
    words = good_words(7, 1 << 18)
    lfsr = np.asarray(panel.xorshift32().read(words.size)) & np.uint32(1)
    weak = (words & ~np.uint32(1)) | lfsr  # bit 0 linear (32-bit state), the others random
    results = {}
    for select in ("all", "bit0", "bit31"):
        acc = rank.BinaryRank(size=256, select=select)
        acc.update(weak)
        results[select] = min(battery.tail(e) for e in acc.result())
    assert results["bit0"] < battery.FAIL_AT
    assert results["all"] > 1e-4 and results["bit31"] > 1e-4


def test_every_bit_linear_complexity_sees_a_linear_middle_bit():
    words = good_words(11, 1 << 14)
    linear_bits = np.asarray(panel.xorshift32().read(words.size)) & np.uint32(1 << 5)
    weak = (words & ~np.uint32(1 << 5)) | linear_bits  # bit 5 linear, bit 0 good
    acc = linear.LinearComplexity(bits=1 << 12, every=True)
    acc.update(weak[:acc.sample_words])
    found = {e["test"]: e for e in acc.result()}
    stride1 = found["linear.complexity.n4096.every_bit.stride1"]
    assert stride1["worst_bit"] == 5 and stride1["statistic"] <= 32
    assert battery.tail(stride1) < battery.FAIL_AT
    sample = linear.LinearComplexity(bits=1 << 12)  # bits 0 and 1 only: blind to it
    sample.update(weak[:sample.sample_words])
    assert min(battery.tail(e) for e in sample.result()) > 1e-4


def test_every_bit_linear_complexity_is_calm_on_good_streams():
    tails = []
    for seed in range(6):
        acc = linear.LinearComplexity(bits=1 << 12, every=True)
        acc.update(good_words(50 + seed, acc.sample_words))
        tails += [e["p_value"] for e in acc.result()]
    assert min(tails) > 1e-3


def test_the_rank_tests_are_in_every_tier_with_their_budgets():
    for tier in battery.TIERS:
        nbytes = battery.TIERS[tier]
        accs = [battery.budgeted(f, nbytes)(start=0) for f in battery.main_tests(tier, nbytes)]
        ranks = [a for a in accs if isinstance(a, rank.BinaryRank)]
        order = list(battery.TIERS)
        assert {(a.size, a.select) for a in ranks} == {k for k, v in rank.SCHEDULE.items()
                                                       if order.index(v[0]) <= order.index(tier)}
        for a in ranks:
            assert a.max_samples * a.sample_words * 4 <= max(nbytes, a.sample_words * 4)
            assert a.budget == rank.SCHEDULE[a.size, a.select][1]


def test_state_round_trip_and_merge():
    words = good_words(3, 1 << 17)
    whole = rank.BinaryRank(size=256, select="low8")
    whole.update(words)
    first = rank.BinaryRank(size=256, select="low8")
    first.update(words[:50001])
    second = rank.BinaryRank(start=50001, size=256, select="low8")
    second.update(words[50001:])
    again = rank.BinaryRank.from_state(first.state())
    again.merge(second)
    assert again.result() == whole.result()


def test_deficit_log2_probabilities_are_the_generator_sums():
    """The terms computed once and summed by slices give the bits the per-call generator gave."""
    def before(n, top=64):
        def log2_prod(a, b):
            return sum(math.log1p(-2.0 ** -i) for i in range(a, b + 1)) / math.log(2)
        return [-k * k + 2 * log2_prod(k + 1, n) - log2_prod(1, n - k) for k in range(0, min(n, top) + 1)]

    for n in (1, 2, 3, 8, 32, 100, 256, 1024):
        for top in (64, 8, 50):
            assert rank.deficit_log2_probabilities(n, top).tolist() == before(n, top)
