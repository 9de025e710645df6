"""Each Knuth / TestU01-style / lane test: a known-good stream passes, a known-bad one fails.

Good: Philox4x32-10 (rngcheck.reference). Bad: a sequence built to break exactly what the
test measures. Also the exact probability tables against their definitions.
"""


import numpy as np
import pytest

from rngcheck.stats import battery, knuth, lanes, pvalues, testu01
from rngcheck.stats.streams import philox_source

GOOD = philox_source(77).read(1 << 21)  # 8 MiB


def run(factory, words):
    acc = factory(start=0)
    acc.update(words)
    return acc.result()


def tails(results):
    return [battery.tail(e) for e in results]


def aggregate_tail(results, test=None):
    return min(battery.tail(e) for e in results if e["level"] != "second-level" and (test is None or e["test"] == test))


def random_words(n):
    """Fresh, fixed random words (independent of test order)."""
    return np.random.default_rng(11 + n).integers(0, 2 ** 32, n, dtype=np.uint32)


def bad_bytes(n):
    return random_words(n) & np.uint32(0xFEFFFFFF)  # one byte value class missing half its bits


def bad_16(n):
    return random_words(n) & np.uint32(0x7FFF7FFF)


def bad_gap(n):  # hits (top nibble 0) exactly every 16th word
    w = random_words(n) | np.uint32(0x10000000)
    w[::16] &= np.uint32(0x0FFFFFFF)
    return w


def bad_gap_low(n):
    w = random_words(n) | np.uint32(1)
    w[::16] &= np.uint32(0xFFFFFFF0)
    return w


def bad_poker(n):  # only nibbles 0..7: too few distinct values
    return random_words(n) & np.uint32(0x77777777)


def bad_coupon(n):  # digits 0..15 in a cycle: every segment is exactly 16 long
    return np.full(n, 0, np.uint32) + np.where(np.arange(n) % 2 == 0, np.uint32(0x01234567), np.uint32(0x89ABCDEF))


def bad_max(n):  # slightly too small values
    w = random_words(n)
    return np.where(w > np.uint32(0xFF000000), w - np.uint32(0x01000000), w).astype(np.uint32)


def bad_runs_up(n):
    w = random_words(n)
    w[1::2] = np.maximum(w[1::2], w[0::2])  # pairs ascending
    return w


def bad_runs_down(n):
    w = random_words(n)
    w[1::2] = np.minimum(w[1::2], w[0::2])  # pairs descending
    return w


def bad_birthday(n):  # 2^32 / 2^31-ish lattice: spacings collide a lot
    return (np.arange(n, dtype=np.uint64) * np.uint64(2654435761) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def bad_hamming_indep(n):
    w = random_words(n)
    w[1::2] = ~w[0::2]  # pair weights sum to 32
    return w


def bad_hamming_weight(n):
    w = random_words(n)
    return w | (w >> np.uint32(16)) & np.uint32(1)  # a bit more ones


def bad_collision(n):
    return (random_words(n) & np.uint32(0xFFFF0000)) | np.uint32(5)  # top 24 bits from 2^16 values


def bad_walk(n):
    w = random_words(n)
    w[::7] |= np.uint32(0x0F0F0000)
    return w


def bad_lane(n):
    w = random_words(n)
    w[2::4] |= (random_words(n // 4) > np.uint32(0xE0000000)).astype(np.uint32) << np.uint32(17)
    return w


def bad_lag4(n):
    w = random_words(n)
    # bit 0 of lane 0 alternates
    w[0::4] = (w[0::4] & np.uint32(0xFFFFFFFE)) | (np.arange(n // 4) & 1).astype(np.uint32)
    return w


CASES = [
    (knuth.ByteFrequency, bad_bytes, None),
    (knuth.Frequency16, bad_16, None),
    (lambda start=0: knuth.Gap(start, 7), bad_gap, "knuth.gap.nibble7"),
    (lambda start=0: knuth.Gap(start, 0), bad_gap_low, "knuth.gap.nibble0"),
    (knuth.Poker, bad_poker, None),
    (knuth.CouponCollector, bad_coupon, None),
    (knuth.MaximumOfT, bad_max, None),
    (knuth.RunsUp, bad_runs_up, None),
    (knuth.RunsDown, bad_runs_down, None),
    (testu01.BirthdaySpacings, bad_birthday, None),
    (testu01.HammingWeight, bad_hamming_indep, "testu01.hamming_independence"),
    (testu01.HammingWeight, bad_hamming_weight, "testu01.hamming_weight"),
    (testu01.Collision, bad_collision, None),
    (testu01.RandomWalk, bad_walk, None),
    (lanes.LaneBits, bad_lane, "lanes.frequency.worst"),
    (lanes.LaneBits, bad_lag4, "lanes.lag4.worst"),
]


@pytest.mark.parametrize("factory,bad,test", CASES, ids=lambda x: getattr(x, "__name__", None) if callable(x) else None)
def test_known_bad_fails_and_good_passes(factory, bad, test):
    size = max(4 * factory(start=0).sample_words, 1 << 18)
    size = min(size, GOOD.size)
    good = run(factory, GOOD[:size])
    assert good and min(tails(good)) > 1e-5, [(e["test"], e["level"], e["p_display"]) for e in good]
    failed = run(factory, bad(size))
    assert aggregate_tail(failed, test) < 1e-10, [(e["test"], e["level"], e["p_display"]) for e in failed]


def test_too_good_a_fit_is_a_defect():
    """A byte counter makes byte counts perfectly flat: chi-square = 0, p ~ 1: flagged by q."""
    counter = np.arange(4 << 17, dtype=np.uint64).astype(np.uint8).view(np.uint32)
    entry = run(knuth.ByteFrequency, counter)[0]
    assert entry["p_value"] > 0.999999 and battery.tail(entry) < 1e-10
    assert entry["p_display"].startswith("1 - ")


def test_exact_tables():
    # poker: probabilities of r distinct among 8 hex digits sum to 1
    assert sum(knuth.poker_probabilities(8, 16)) == 1
    # Knuth 3.3.2 D: d = 10, k = 5, p(r = 5) = 0.3024
    assert float(knuth.poker_probabilities(5, 10)[4]) == pytest.approx(0.3024)
    # coupon collector: segment lengths distribution sums to 1
    assert sum(knuth.coupon_probabilities(16, 160)) == 1
    assert sum(knuth.coupon_probabilities(5, 30)) == 1
    assert knuth.stirling2(5, 2) == 15 and knuth.stirling2(10, 3) == 9330
    # maximum-of-t cells sum to 1 and are near 1/64
    acc = knuth.MaximumOfT()
    assert acc.probabilities.sum() == pytest.approx(1.0) and np.allclose(acc.probabilities, 1 / 64, rtol=1e-6)
    # gap: geometric
    g = knuth.Gap()
    assert g.probabilities.sum() == pytest.approx(1.0)
    # collision moments: mean ~ n^2 / (2m)
    mean, var = testu01.Collision().moments()
    assert mean == pytest.approx((1 << 28) / (2 << 24), rel=1e-3) and var == pytest.approx(mean, rel=1e-2)


def test_runs_up_matrix_is_knuths():
    # Knuth 3.3.2 (10): b = (1/6, 5/24, 11/120, 19/720, 29/5040, 1/840), sums to 1/2 + 1/840 ... check normalisation
    b = knuth.RUNS_UP_B
    assert sum((i + 1) * b[i] for i in range(5)) + 6 * b[5] == pytest.approx(1.0, rel=1e-2)
    assert np.allclose(knuth.RUNS_UP_A, knuth.RUNS_UP_A.T)


def test_pvalue_display_never_rounds():
    assert pvalues.display(0.0) == "< 1e-300"
    assert pvalues.display(1e-305) == "< 1e-300"
    assert pvalues.display(1.0, 1e-20) == "1 - 1e-20"
    assert pvalues.display(0.5) == "0.5000"
    far = pvalues.chi2(1e5, 10)
    assert far["p"] == 0.0 and -50000 < far["log10_p"] < -20000
    z = pvalues.normal_two_sided(60.0)
    assert z["p"] == 0.0 and z["log10_p"] == pytest.approx(-783.4, abs=1.0)


# -- the battery's tests: one registry (rngcheck.registry) ----------------------------------

def test_the_battery_tests_are_one_registry():
    """battery.TESTS: each test under the name its results carry (the long linear complexity's n,
    in its name, is the tier's), with its accumulator's from_tier, in the battery's order; the
    tiers and the XOR pairs take theirs from it; an unknown name is one line."""
    from rngcheck.errors import RngcheckError

    names = battery.TESTS.names()
    assert len(names) == len(set(names)) == 42
    assert names[:3] == ("nist.monobit", "nist.block_frequency", "nist.runs") and names[-1] == "rank.binary.2048.all"
    for name, test in battery.TESTS.items():
        acc = test.factory_for(1 << 20)(start=0)
        assert acc.name == (name if name != "linear.complexity" else "linear.complexity.n32768")
        assert acc.from_tier == test.from_tier
    assert battery.TESTS["linear.complexity"].factory_for(1 << 30)(start=0).name == "linear.complexity.n131072"
    assert [len(battery.main_tests(tier)) for tier in ("smoke", "standard", "deep")] == [39, 40, 42]
    deep = [f(start=0).name for f in battery.main_tests("deep", 1 << 20)]
    assert deep == [n if n != "linear.complexity" else "linear.complexity.n32768" for n in names]
    assert [f(start=0).name for f in battery.interstream_tests()] == list(battery.INTERSTREAM_TESTS) == [
        "lanes", "nist.monobit", "knuth.byte_frequency", "testu01.hamming"]
    with pytest.raises(RngcheckError, match=r"^unknown statistical test 'nist\.nope' \(known: nist\.monobit, "):
        battery.TESTS.get("nist.nope")

