"""Accumulators: results independent of chunk sizes and of how the stream is split and merged."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rngcheck.stats import battery, knuth, lanes, nist, testu01
from rngcheck.stats.accumulators import Accumulator
from rngcheck.stats.streams import philox_source

FACTORIES = battery.main_tests()
STREAM = philox_source(2024).read(int(3.4 * (1 << 19)))  # > 3 samples of the largest test


def canonical(acc: Accumulator) -> str:
    return json.dumps(acc.result(), sort_keys=True, default=float)


def one_pass(factory, words, start=0):
    acc = factory(start=start)
    acc.update(words)
    return acc


def pieces(words, cuts, chunk):
    """Accumulate words[a:b] for consecutive ranges, each fed in chunks of `chunk` words."""
    bounds = [0] + sorted(cuts) + [words.size]
    return [(a, b) for a, b in zip(bounds, bounds[1:])]


def split_and_merge(factory, words, cuts, chunk):
    accs = []
    for a, b in pieces(words, cuts, chunk):
        acc = factory(start=a)
        for i in range(a, b, chunk):
            acc.update(words[i:min(b, i + chunk)])
        accs.append(acc)
    total = accs[0]
    for other in accs[1:]:
        total.merge(other)
    return total


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f(start=0).name)
def test_split_anywhere_gives_the_same_result(factory):
    size = min(STREAM.size, 3 * factory(start=0).sample_words + 12345)
    words = STREAM[:size]
    want = canonical(one_pass(factory, words))
    rng = np.random.default_rng(size)
    for trial in range(3):
        cuts = sorted(int(c) for c in rng.integers(1, size, size=trial + 1))
        chunk = int(rng.integers(1000, 200000))
        assert canonical(split_and_merge(factory, words, cuts, chunk)) == want


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(1, 3 * nist.SAMPLE_WORDS + 999), max_size=4, unique=True),
       chunk=st.integers(1000, 70000), tree=st.booleans())
def test_hypothesis_splits(cuts, chunk, tree):
    words = STREAM[:3 * nist.SAMPLE_WORDS + 1000]
    for factory in (nist.Runs, lanes.LaneBits, knuth.Gap, testu01.HammingWeight):
        want = canonical(one_pass(factory, words))
        if tree and len(cuts) >= 2:
            bounds = [0] + sorted(cuts) + [words.size]
            accs = [one_pass(factory, words[a:b], start=a) for a, b in zip(bounds, bounds[1:])]
            while len(accs) > 1:  # merge pairwise, like a reduction tree
                merged = []
                for i in range(0, len(accs) - 1, 2):
                    merged.append(accs[i].merge(accs[i + 1]))
                if len(accs) % 2:
                    merged.append(accs[-1])
                accs = merged
            got = accs[0]
        else:
            got = split_and_merge(factory, words, cuts, chunk)
        assert canonical(got) == want


def test_merge_refuses_non_contiguous_pieces():
    a = nist.Monobit(start=0)
    a.update(STREAM[:100])
    b = nist.Monobit(start=200)
    with pytest.raises(ValueError):
        a.merge(b)


def test_budgeted_test_measures_only_the_first_samples_wherever_split():
    def factory(start=0):
        acc = nist.MatrixRank(start=start)
        acc.max_samples = 2
        return acc
    words = STREAM[:4 * nist.SAMPLE_WORDS]
    whole = one_pass(factory, words)
    assert whole.samples == 2 and whole.skipped == 2
    assert canonical(split_and_merge(factory, words, [nist.SAMPLE_WORDS + 17, 3 * nist.SAMPLE_WORDS - 5], 9999)) \
        == canonical(whole)


def test_unused_words_are_reported():
    acc = nist.Monobit(start=5)
    acc.update(STREAM[:nist.SAMPLE_WORDS * 2])
    assert acc.samples == 1
    assert acc.unused_words == 2 * nist.SAMPLE_WORDS - nist.SAMPLE_WORDS
