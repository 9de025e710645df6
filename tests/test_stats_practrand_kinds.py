"""The PractRand-kind tests and the long linear complexity: exact nulls, and each sees the
defect it is there for (panel generators and small constructed defects)."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from rngcheck.stats import battery, linear
from rngcheck.stats import practrand_kinds as pk
from rngcheck.stats import weak_generators as panel
from rngcheck.stats.streams import philox_source

KINDS = [pk.BlockWeights, pk.WeightWindows, pk.FloatFrequency, pk.Gap16, pk.PowerLags]


def uniform_words(count, seed):
    return np.random.default_rng(seed).integers(0, 1 << 32, count, dtype=np.uint32)


def results_of(cls, words, **parameters):
    acc = cls(**parameters)
    acc.update(words)
    return acc.result()


def worst_tail(results):
    return min(battery.tail(e) for e in results)


# ---- exact cells ----------------------------------------------------------------------

def test_cell_probabilities_are_exact_and_sum_to_one():
    counts = np.bincount(pk.BYTE_CLASS, minlength=3)
    assert list(counts) == [93, 70, 93] and np.allclose(pk.BYTE_CLASS_P * 256, counts)
    assert math.isclose(pk.FPF_P.sum(), 1.0, rel_tol=1e-15)
    for level in (0, 2, 12):
        lower, upper, p = pk._weight_classes(32 << level)
        dist = stats.binom(32 << level, 0.5)
        assert math.isclose(p[0], dist.cdf(lower)) and math.isclose(p[2], dist.sf(upper - 1))
        assert 0.29 < p[0] <= 1 / 3 and math.isclose(p.sum(), 1.0)
    t = pk._tuple_probabilities([0.2, 0.3, 0.5], 3)
    assert t.size == 27 and math.isclose(t.sum(), 1.0)
    assert math.isclose(t[1 + 3 * 2 + 9 * 0], 0.3 * 0.5 * 0.2)  # code sum c_i 3^i


def test_the_written_out_weight_cuts_are_the_binomial_s():
    """The workers count block weights with WEIGHT_CUTS (no scipy.special there): each level's cuts
    are the ones _weight_classes finds on the binomial, and every level has them."""
    assert sorted(pk.WEIGHT_CUTS) == sorted(pk.BlockWeights.levels)
    for level, cuts in pk.WEIGHT_CUTS.items():
        assert cuts == pk._weight_classes(32 << level)[:2], level


def test_gap_classes_expect_exactly_the_number_of_repeats():
    n = 1 << 19
    bounds, expected = pk._gap_classes(n)
    distinct = (1 << 16) * (1 - (1 - pk.GAP_P) ** n)  # E[number of distinct values]
    assert math.isclose(expected.sum(), n - distinct, rel_tol=1e-9)
    assert bounds[-1] == n and (expected >= pk.MIN_EXPECTED).all()


def test_float_frequency_cells_of_known_windows():
    acc = pk.FloatFrequency()
    # a sample whose windows are all the same 32-bit value 0x00C00000: 8 leading zeros ->
    # the coarse exponent 8 cell, mantissa bits after the leading one "10"
    window = np.frombuffer((0x00C00000).to_bytes(4, "little") + b"\x00", dtype=np.uint8)
    raw = np.resize(window, acc.sample_words * 4)
    records, _ = acc.measure(raw.view(np.uint32).reshape(1, -1))
    counts = records["counts"][0]
    assert counts.sum() == acc.sample_words * 4 // 5
    assert counts[pk.FPF_FINE * 64 + 0 * 4 + 2] == counts.sum()


# ---- the null distributions: p-values of good streams are uniform -----------------------

@pytest.mark.parametrize("cls", KINDS, ids=lambda c: c.name)
def test_per_sample_p_values_of_a_good_stream_are_uniform(cls):
    samples = 24 if cls.sample_words >= 1 << 20 else 64
    words = uniform_words(samples * cls.sample_words, seed=len(cls.name))
    acc = cls()
    acc.update(words)
    records = acc.records()
    firsts = []
    for key, counts in records.items():
        if cls is pk.Gap16:
            _, expected = pk._gap_classes(cls.sample_words * 2)
            probabilities = expected / expected.sum()
        elif cls is pk.FloatFrequency:
            probabilities = pk.FPF_P
        elif cls is pk.PowerLags:
            probabilities = np.full(256, 1 / 256)
        elif cls is pk.BlockWeights:
            level = int(key.removeprefix("level"))
            if counts.sum(axis=1).min() * pk._tuple_probabilities(pk._weight_classes(32 << level)[2], 3).min() < 5:
                continue
            probabilities = pk._tuple_probabilities(pk._weight_classes(32 << level)[2], 3)
        else:  # WeightWindows: Q_L - Q_(L-1) of overlapping windows
            class_p = pk.BYTE_CLASS_P if key == "bytes" else pk._word_class_p()
            length = cls.byte_window if key == "bytes" else cls.word_window
            q, df = pk.overlapping_q_difference(counts, class_p, length)
            firsts.extend(stats.chi2.sf(q, df))
            continue
        firsts.extend(pk._per_sample_p(counts, probabilities))
    assert len(firsts) >= samples
    assert stats.kstest(firsts, "uniform").pvalue > 1e-4
    assert worst_tail(acc.result()) > 1e-6  # and the pooled results pass


# ---- power: each test sees what it is for ---------------------------------------------

@pytest.mark.parametrize("generator", ["lcg64high", "mcg64high"])
def test_power_lags_see_the_truncated_lcgs_in_one_sample(generator):
    words = panel.WEAK[generator]().read(pk.PowerLags.sample_words)
    found = results_of(pk.PowerLags, words)
    constant = {e["lag_words"] for e in found if e["p_value"] < battery.FAIL_AT}  # the upper tail
    assert {1 << 16, 1 << 17, 1 << 18} <= constant  # low bits of the second difference constant
    assert worst_tail(results_of(pk.PowerLags, philox_source(3).read(pk.PowerLags.sample_words))) > 1e-6


def test_block_and_weight_tuples_see_words_that_repeat():
    words = uniform_words(1 << 20, 9)
    words[1::4] = words[0::4]  # word 4i+1 copies word 4i: neighbouring weights agree
    assert worst_tail(results_of(pk.BlockWeights, words)) < battery.FAIL_AT
    assert worst_tail(results_of(pk.WeightWindows, words[:1 << 18])) < battery.FAIL_AT


def test_float_frequency_sees_too_many_leading_zeros():
    words = uniform_words(1 << 18, 10)
    raw = words.view(np.uint8)
    usable = raw.size - raw.size % 5
    blocks = raw[:usable].reshape(-1, 5)  # a view: the class's windows are bytes 0-3 of each
    windows = np.ascontiguousarray(blocks[:, :4]).view("<u4")[:, 0]
    windows[::64] >>= 6  # one window in 64 gets 6 more leading zeros
    blocks[:, :4] = windows.view(np.uint8).reshape(-1, 4)
    assert worst_tail(results_of(pk.FloatFrequency, words)) < battery.FAIL_AT
    assert worst_tail(results_of(pk.FloatFrequency, uniform_words(1 << 18, 10))) > 1e-6


def test_gap16_sees_values_that_come_back_too_soon():
    words = uniform_words(1 << 18, 11)
    halves = words.view(np.uint16)
    halves[7::64] = halves[0::64][:halves[7::64].size]  # a value repeats 7 positions later, every 64
    assert worst_tail(results_of(pk.Gap16, words)) < battery.FAIL_AT


# ---- linear complexity ----------------------------------------------------------------

def test_berlekamp_massey_counts_match_rueppel_for_every_sequence_of_12_bits():
    n = 12
    found = np.zeros(n + 1, dtype=np.int64)
    for bits in itertools.product((0, 1), repeat=n):
        found[linear.berlekamp_massey(bits)] += 1
    want = [1] + [2 ** min(2 * L - 1, 2 * n - 2 * L) for L in range(1, n + 1)]
    assert list(found) == want


def test_berlekamp_massey_finds_known_recurrences():
    s = [1, 0, 0, 1, 1]
    for i in range(5, 300):
        s.append(s[i - 5] ^ s[i - 3])  # x^5 + x^2 + 1
    assert linear.berlekamp_massey(s) == 5
    assert linear.berlekamp_massey([0] * 50) == 0
    assert linear.berlekamp_massey([0] * 49 + [1]) == 50


def test_the_long_and_the_blockwise_berlekamp_massey_agree():
    from rngcheck.stats import nist
    bits = np.random.default_rng(12).integers(0, 2, 40 * 500).astype(np.uint8)
    bits[500:1000] = 0  # a block of complexity 0, and one of an LFSR
    lfsr = [1, 0, 0, 1, 1]
    for i in range(5, 500):
        lfsr.append(lfsr[i - 5] ^ lfsr[i - 3])
    bits[1000:1500] = lfsr
    blockwise = nist.linear_complexities(bits, 500)
    assert list(blockwise) == [linear.berlekamp_massey(bits[i:i + 500].tolist()) for i in range(0, bits.size, 500)]
    assert blockwise[1] == 0 and blockwise[2] == 5


def test_linear_complexity_tails_are_exact_probabilities():
    n = 12
    tails = linear.complexity_tails(n, 6)
    counts = [1] + [2 ** min(2 * L - 1, 2 * n - 2 * L) for L in range(1, n + 1)]
    assert math.isclose(tails["p"], sum(counts[6:]) / 2 ** n)
    assert math.isclose(tails["q"], sum(counts[:7]) / 2 ** n)


@pytest.mark.parametrize("generator, stride, complexity", [
    ("lfib55", 1, 55), ("xorshift128+", 2, 128), ("xorshift32", 1, 32)])
def test_linear_generators_show_their_state_size(generator, stride, complexity):
    acc = linear.LinearComplexity(bits=1 << 12)
    acc.update(panel.WEAK[generator]().read(acc.sample_words))
    found = {(e["parameters"]["stride"], e["parameters"]["bit"]): e for e in acc.result()}
    assert found[stride, 0]["statistic"] == complexity
    assert battery.tail(found[stride, 0]) < battery.FAIL_AT


def test_the_battery_reads_a_short_and_a_long_sequence():
    names = {f(start=0).name for f in battery.main_tests("standard", battery.TIERS["standard"])}
    assert {"linear.complexity.n4096.every_bit", "linear.complexity.n32768"} <= names
    assert "linear.complexity.n131072" in {f(start=0).name for f in battery.main_tests("deep", battery.TIERS["deep"])}
    short = linear.LinearComplexity(bits=battery.SHORT_LINEAR_BITS, every=True)
    assert short.sample_words * 4 <= 64 << 10  # the power panel's smallest stream


def test_mt19937_passes_at_the_standard_length_and_fails_at_the_deep_one():
    source = panel.mt19937()
    standard = linear.LinearComplexity(bits=battery.linear_bits(battery.TIERS["standard"]))
    standard.update(source.read(standard.sample_words))
    assert worst_tail(standard.result()) > 1e-4
    deep = linear.LinearComplexity(bits=battery.linear_bits(battery.TIERS["deep"]))
    deep.update(panel.mt19937().read(deep.sample_words))
    assert {e["statistic"] for e in deep.result() if e["parameters"]["stride"] == 1} == {19937}
    assert worst_tail(deep.result()) < battery.FAIL_AT


# ---- the overlapping weight windows (DC6 kind, issue #33) ----------------------------------

def test_overlapping_codes_read_each_row_as_a_cycle():
    letters = np.array([[0, 1, 2, 0, 1]], dtype=np.int8)
    codes = pk.overlapping_codes(letters, 3, 3)
    # windows (0,1,2) (1,2,0) (2,0,1) (0,1,0) (1,0,1): code = l0 + 3 l1 + 9 l2
    assert list(codes[0]) == [0 + 3 + 18, 1 + 6 + 0, 2 + 0 + 9, 0 + 3 + 0, 1 + 0 + 9]


def test_q_difference_of_independent_letters_is_chi_square():
    # letters of unequal probability, as the byte classes: the p-values of Q_L - Q_(L-1) over
    # many short cycles are uniform (the law the test's p-values come from)
    rng = np.random.default_rng(33)
    p = np.array([0.25, 0.35, 0.4])
    letters = rng.choice(3, size=(400, 4000), p=p).astype(np.int8)
    counts = np.array([np.bincount(row, minlength=81) for row in pk.overlapping_codes(letters, 4, 3)])
    q, df = pk.overlapping_q_difference(counts, p, 4)
    assert df == 81 - 27
    pv = stats.chi2.sf(q, df)
    assert stats.kstest(pv, "uniform").pvalue > 1e-3
    histogram = np.histogram(pv, bins=10, range=(0, 1))[0]
    assert histogram.min() >= 20  # 40 expected in each tenth


def test_weight_windows_p_value_histogram_on_a_good_stream():
    acc = pk.WeightWindows()
    acc.update(philox_source(33).read(48 * pk.WeightWindows.sample_words))
    ps = []
    for key, class_p, length in (("bytes", pk.BYTE_CLASS_P, 9), ("words", pk._word_class_p(), 6)):
        q, df = pk.overlapping_q_difference(acc.records()[key], class_p, length)
        ps.extend(stats.chi2.sf(q, df))
    assert len(ps) == 96 and stats.kstest(ps, "uniform").pvalue > 1e-4
    assert np.histogram(ps, bins=4, range=(0, 1))[0].min() >= 10  # 24 expected in each quarter
    assert worst_tail(acc.result()) > 1e-6


def test_weight_windows_see_a_weight_that_follows_one_five_bytes_back():
    # one byte in 16 copies the byte five places before it (inside one 9-byte window); 1 MiB
    words = uniform_words(1 << 18, 34)
    raw = words.view(np.uint8)
    raw[5::16] = raw[0::16][:raw[5::16].size]
    assert worst_tail(results_of(pk.WeightWindows, words)) < battery.FAIL_AT
    assert worst_tail(results_of(pk.WeightWindows, uniform_words(1 << 18, 34))) > 1e-6


def test_weight_windows_see_philox_with_four_rounds():
    words = panel.WEAK["philox-4"]().read(pk.WeightWindows.sample_words)
    assert worst_tail(results_of(pk.WeightWindows, words)) < battery.FAIL_AT
