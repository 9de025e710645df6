"""The generators of PractRand's results table ported for the power panel (issue #33): each is
its published definition, written again here as the plain sequential code of its source, and
checked against a known first output where one is published."""

import numpy as np
import pytest

from rngcheck.stats import weak_generators as panel

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def xorshift64_outputs(x, n):
    """Marsaglia 2003, p. 4: x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x."""
    out = []
    for _ in range(n):
        x ^= (x << 13) & M64
        x ^= x >> 7
        x ^= (x << 17) & M64
        out.append(x)
    return out


def as_words(outputs64):
    return np.array(outputs64, dtype=np.uint64).view(np.uint32)


def check_random_access(source, want):
    assert (source.read(want.size) == want).all()
    for offset in (1, 777, want.size - 1500):
        assert (source.at(offset).read(1000) == want[offset:offset + 1000]).all()


def test_lcg16_is_the_c_standard_rand_and_its_known_first_outputs():
    # ISO C's example rand(): next = next * 1103515245 + 12345; return next / 65536 % 32768.
    # From srand(1) it returns 16838, 5758, 10113, 17515, 31051 (bits 16..30 of each state).
    words = panel.lcg16_32(1).read(3)
    outputs16 = np.stack([words & 0xFFFF, words >> 16], axis=1).reshape(-1)
    assert list(outputs16[:5] & 0x7FFF) == [16838, 5758, 10113, 17515, 31051]


@pytest.mark.parametrize("bits", [32, 40, 48, 56])
def test_lcg16_of_y_is_the_sequential_one(bits):
    state, outputs = 1, []
    for _ in range(6000):
        state = (1103515245 * state + 12345) % (1 << bits)
        outputs.append((state >> (bits - 16)) & 0xFFFF)
    pairs = np.array(outputs, dtype=np.uint32).reshape(-1, 2)
    want = pairs[:, 0] | (pairs[:, 1] << np.uint32(16))  # the earlier output in the low half
    check_random_access(panel.PRACTRAND_TABLE[f"lcg16of{bits}"][0](), want)


def test_xorshift64_known_first_output_and_sequence():
    # Marsaglia's example seed; its first output is the widely quoted 8748534153485358512.
    seed = 88172645463325252
    assert xorshift64_outputs(seed, 1) == [8748534153485358512]
    check_random_access(panel.xorshift64(seed), as_words(xorshift64_outputs(seed, 3000)))


def test_xorwow32of96_is_the_sequential_one():
    seed, a = 88172645463325252, 6615241
    want = []
    for out in xorshift64_outputs(seed, 5000):
        a = (a + 362437) & M32
        want.append((a + (out & M32)) & M32)
    check_random_access(panel.xorwow32of96(seed, 6615241),
                        np.array(want, dtype=np.uint32))


def test_xorwow_is_marsaglias_code():
    # Marsaglia 2003, p. 5, with the paper's seeds:
    # t=(x^(x>>2)); x=y; y=z; z=w; w=v; v=(v^(v<<4))^(t^(t<<1)); return (d+=362437)+v;
    x, y, z, w, v, d = 123456789, 362436069, 521288629, 88675123, 5783321, 6615241
    want = []
    for _ in range(5000):
        t = x ^ (x >> 2)
        x, y, z, w = y, z, w, v
        v = (v ^ ((v << 4) & M32)) ^ (t ^ ((t << 1) & M32))
        d = (d + 362437) & M32
        want.append((d + v) & M32)
    check_random_access(panel.xorwow(), np.array(want, dtype=np.uint32))


def test_xorshift32of128_is_practrands_xorshift64of128():
    # PractRand 0.96 src/RNGs/other/simple.cpp: xls(16); xrs(53); xls(47); return low, on the
    # 128-bit value high:low; xorshift32of128 keeps the low 32 bits of each output.
    state = 0x9E3779B97F4A7C15F39CC0605CEDC834
    mask = (1 << 128) - 1
    want = []
    for _ in range(4000):
        state ^= (state << 16) & mask
        state ^= state >> 53
        state ^= (state << 47) & mask
        want.append(state & M32)
    check_random_access(panel.xorshift32of128(), np.array(want, dtype=np.uint32))


def test_every_table_generator_names_practrands_figure():
    for name, (factory, figure) in panel.PRACTRAND_TABLE.items():
        assert 0 < figure <= 256 << 20, name  # the table's generators that fail within 256 MiB
        assert factory().describe()["generator"]
