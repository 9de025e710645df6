"""The streaming forms of SP 800-22 sections 2.7 - 2.10, 2.14, 2.15 against the reference
functions on the same bits, their exact pooled probabilities, and a biased stream caught."""

import numpy as np
import pytest
from scipy import special

from rngcheck.stats import nist
from rngcheck.stats import nist as nist_stream  # the streaming forms moved into the nist package
from rngcheck.stats.accumulators import chi2_counts
from rngcheck.stats.bits import to_bits


def _words(seed, samples=2):
    return np.random.default_rng(seed).integers(0, 2 ** 32, nist.SAMPLE_WORDS * samples, dtype=np.uint32)


def _fed(cls, words):
    acc = cls()
    acc.update(words)
    return acc


def test_first_level_equals_the_reference_functions():
    words = _words(1)
    bits = to_bits(words[:nist.SAMPLE_WORDS])
    over = _fed(nist_stream.OverlappingTemplate, words)
    p = special.gammaincc(2.5, chi2_counts(over.records()["nu"][0], nist.overlapping_probabilities()) / 2)
    assert p == pytest.approx(nist.overlapping_template(bits), rel=1e-12)
    lc = _fed(nist_stream.LinearComplexity, words)
    p = special.gammaincc(3, chi2_counts(lc.records()["nu"][0], nist.LINEAR_COMPLEXITY_PI) / 2)
    assert p == pytest.approx(nist.linear_complexity(bits), rel=1e-12)
    uni = _fed(nist_stream.Universal, words)
    assert uni.records()["fn"][0] == pytest.approx(nist.universal_statistic(bits)[0], rel=1e-15)
    non = _fed(nist_stream.NonOverlappingTemplate, words)
    first = special.gammaincc(4, non._chi2(non.records()["sum"][0], non.records()["squares"][0], 8) / 2)
    assert first == pytest.approx(nist.non_overlapping_template(bits), rel=1e-9)
    rex = _fed(nist_stream.RandomExcursions, words)
    walk, cycle, J = nist._walk_cycles(bits)
    assert rex.records()["J"][0] == (J if J >= 500 else 0)


def test_results_do_not_depend_on_splitting():
    words = _words(2, samples=3)
    for cls in (nist_stream.OverlappingTemplate, nist_stream.LinearComplexity, nist_stream.Universal,
                nist_stream.NonOverlappingTemplate, nist_stream.RandomExcursions):
        whole = _fed(cls, words)
        cut = nist.SAMPLE_WORDS + 1000
        a, b = cls(), cls(start=cut)
        a.update(words[:cut])
        b.update(words[cut:])
        a.merge(b)
        assert [r["p_value"] for r in a.result()] == [r["p_value"] for r in whole.result()]


def test_exact_probabilities():
    exact = nist.overlapping_probabilities_exact()
    assert exact == pytest.approx((0.364091, 0.185659, 0.139381, 0.100571, 0.070432, 0.139865), abs=1e-6)
    assert sum(nist.LINEAR_COMPLEXITY_PI_EXACT) == pytest.approx(1.0, abs=1e-15)
    # the exact linear complexity classes of random 500-bit blocks, against many blocks
    bits = np.random.default_rng(3).integers(0, 2, 500 * 20000, dtype=np.uint8)
    nu = nist.linear_complexity_classes(bits, 500)
    assert special.gammaincc(3, chi2_counts(nu, nist.LINEAR_COMPLEXITY_PI_EXACT) / 2) > 1e-3


def test_a_biased_stream_is_caught():
    rng = np.random.default_rng(4)
    bits = (rng.random(32 * nist.SAMPLE_WORDS * 4) < 0.51).astype(np.uint8)
    words = np.packbits(bits).view(">u4").astype(np.uint32)
    over = _fed(nist_stream.OverlappingTemplate, words)
    assert over.result()[0]["p_value"] < 1e-10  # runs of nine ones come 20% more often
    non = _fed(nist_stream.NonOverlappingTemplate, words)
    assert non.result()[0]["p_value"] < 1e-10


def test_a_periodic_stream_is_caught():
    """Three words repeated: every 7-bit block of Maurer's test comes back within 96 blocks (a
    random one: 128 on average), and Berlekamp-Massey finds L <= 96 in every 500-bit block."""
    short = np.tile(np.random.default_rng(6).integers(0, 2 ** 32, 3, dtype=np.uint32), nist.SAMPLE_WORDS // 3 + 1)
    words = short[:nist.SAMPLE_WORDS]
    assert _fed(nist_stream.Universal, words).result()[0]["p_value"] < 1e-10
    assert _fed(nist_stream.LinearComplexity, words).result()[0]["p_value"] < 1e-10


def test_every_nist_test_of_the_battery_keeps_its_document_name():
    """A test's name is what documents, baselines and the report key on: each accumulator the
    battery takes from the NIST package is named 'nist.<test>', and no two tests share a name
    (moving the code between modules must not rename a result)."""
    from rngcheck.stats import battery

    accumulators = [factory(start=0) for factory in battery.main_tests("deep", 1 << 30)]
    names = [acc.name for acc in accumulators]
    assert len(names) == len(set(names)), sorted(names)
    from_nist = [acc.name for acc in accumulators if type(acc).__module__.startswith("rngcheck.stats.nist")]
    assert len(from_nist) == 13 and all(name.startswith("nist.") for name in from_nist), from_nist
