"""Measured power at the smoke tier (fixed seeds: deterministic, no flakiness).

Every weak generator of the panel FAILs the smoke tier; the good controls PASS it.
The byte counts each weak generator needs, and the standard tier's catches, are measured
by benchmarks/bench_stats.py.
"""

import numpy as np
import pytest

from rngcheck.stats import battery
from rngcheck.stats import weak_generators as panel


def test_panel_generators_are_the_sequential_ones():
    x, out = 2463534242, []
    for _ in range(5000):
        x = panel._xorshift32_step(x)
        out.append(x)
    src = panel.xorshift32()
    assert list(src.read(5000)) == out
    assert list(src.at(4500).read(500)) == out[4500:]
    x, out = 1, []
    for _ in range(70000):
        x = (1664525 * x + 1013904223) % 2 ** 32
        out.append(x)
    assert list(panel.lcg32().read(70000)) == [1] + out[:-1]  # word 0 is the seed
    assert (panel.lcg32().at(66000).read(100) == np.array(([1] + out)[66000:66100], np.uint32)).all()
    pcg = panel.numpy_bitgen("pcg64", 1)
    raw = np.random.PCG64(1).random_raw(10).astype(np.uint64).view(np.uint32)
    assert (pcg.read(20) == raw).all() and (pcg.at(7).read(5) == raw[7:12]).all()


def sequential_xorshift128plus(seed, count):
    m = (1 << 64) - 1
    s0, s1, out = seed & m, seed >> 64, []
    for _ in range(count):
        out.append((s0 + s1) & m)
        x, y = s0, s1
        s0 = y
        x ^= (x << 23) & m
        s1 = x ^ y ^ (x >> 18) ^ (y >> 5)
    return np.array(out, dtype=np.uint64).view(np.uint32)


def sequential_xoroshiro128plus(seed, count):
    m = (1 << 64) - 1

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & m

    s0, s1, out = seed & m, seed >> 64, []
    for _ in range(count):
        out.append((s0 + s1) & m)
        s1 ^= s0
        s0 = rotl(s0, 24) ^ s1 ^ ((s1 << 16) & m)
        s1 = rotl(s1, 37)
    return np.array(out, dtype=np.uint64).view(np.uint32)


def test_xoroshiro128plus_is_the_sequential_one():
    want = sequential_xoroshiro128plus(0x9E3779B97F4A7C15F39CC0605CEDC834, 3000)
    src = panel.xoroshiro128plus()
    assert (src.read(6000) == want).all() and (src.at(1001).read(3000) == want[1001:4001]).all()


def test_the_practrand_panel_generators_are_the_sequential_ones():
    want = sequential_xorshift128plus(0x9E3779B97F4A7C15F39CC0605CEDC834, 3000)
    src = panel.xorshift128plus()
    assert (src.read(6000) == want).all() and (src.at(1001).read(3000) == want[1001:4001]).all()

    x = [int(v) for v in np.random.PCG64(55).random_raw(55) & np.uint64(0xFFFFFFFF)]
    x[0] |= 1
    for n in range(55, 20000):
        x.append((x[n - 55] + x[n - 24]) & 0xFFFFFFFF)
    lfib = panel.lagged_fibonacci()
    assert list(lfib.read(20000)) == x and list(lfib.at(777).read(5000)) == x[777:5777]

    for source, a, c, bits, shift in ((panel.lcg64_high(), 6364136223846793005, 1442695040888963407, 64, 32),
                                      (panel.mcg64_high(), panel.MCG64_MULTIPLIER, 0, 64, 32),
                                      (panel.lcg128_high(), panel.LCG128_MULTIPLIER, panel.LCG128_INCREMENT, 128, 64)):
        state, outputs = 1, []
        for _ in range(5000):
            outputs.append(state >> shift)
            state = (a * state + c) % (1 << bits)
        want = np.array(outputs, dtype=np.uint64 if shift == 64 else np.uint32)
        want = want.view(np.uint32)
        assert (source.read(want.size) == want).all()
        offset = want.size - 1999  # lcg128high: across its 4096-output blocks
        assert (source.at(offset).read(1000) == want[offset:offset + 1000]).all()

    mt = np.random.MT19937(5489).random_raw(100).astype(np.uint32)
    assert (panel.mt19937().read(100) == mt).all() and (panel.mt19937().at(10).read(5) == mt[10:15]).all()


# Defects that need more than the smoke tier's 8 MiB (benchmarks/bench_stats.py measures how much).
BEYOND_SMOKE = {"bias-8", "bias-10"}


@pytest.mark.parametrize("name", sorted(set(panel.WEAK) - BEYOND_SMOKE))
def test_smoke_tier_fails_every_weak_generator(name):
    doc = battery.run(panel.WEAK[name](), tier="smoke", workers=1)
    assert doc["verdict"] == "FAIL", [(e["test"], e["p_display"]) for e in doc["results"]][:5]


def test_a_bias_beyond_the_smoke_tier_fails_on_the_standard_tier_s_tens_of_mib():
    doc = battery.run(panel.WEAK["bias-8"](), tier="standard", nbytes=64 << 20)
    assert doc["verdict"] == "FAIL"


@pytest.mark.parametrize("name", sorted(panel.GOOD))
def test_smoke_tier_passes_good_generators(name):
    doc = battery.run(panel.GOOD[name](), tier="smoke", workers=1)
    assert doc["verdict"] == "PASS", [(e["test"], e["stream"], e["p_display"]) for e in doc["results"]
                                      if e["verdict"] != "PASS"]
    assert doc["counts"]["FAIL"] == 0
