"""Measured power at the smoke tier (fixed seeds: deterministic, no flakiness).

Every weak generator of the panel FAILs the smoke tier; the good controls PASS it.
The byte counts each weak generator needs, and the standard tier's catches, are measured
by benchmarks/bench_stats.py.
"""

import numpy as np
import pytest

from rngcheck.stats import battery, panel


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
