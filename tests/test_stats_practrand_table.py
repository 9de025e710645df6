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


def rotl(x, k, bits):
    mask = (1 << bits) - 1
    return ((x << k) | (x >> (bits - k))) & mask


def pack16(outputs):
    pairs = np.array(outputs, dtype=np.uint32).reshape(-1, 2)
    return pairs[:, 0] | (pairs[:, 1] << np.uint32(16))


def test_practrands_small_nonlinear_generators_are_their_code():
    # PractRand 0.96 src/RNGs/other/simple.cpp, line by line, with the panel's default seeds
    n = 4000
    a, b, out = 0x12345678, 0x9ABCDEF0, []
    for _ in range(n):  # sapparot
        t = rotl((a + 0x9E3779B9) & M32, 7, 32)
        a = rotl(b ^ (~t & M32) ^ ((t << 3) & M32), 7, 32)
        b = t
        out.append(a ^ b)
    check_random_access(panel.sapparot(), np.array(out, dtype=np.uint32))

    a, b, c, out = 0x12345678, 0x9ABCDEF0, 0x0F1E2D3C, []
    for _ in range(n):  # sap32of96
        t = rotl((a + 0x9E3779B9 + c) & M32, 7, 32)
        a = rotl(b ^ (~t & M32) ^ ((t << 3) & M32), 7, 32)
        b = t
        c = ((c + a) & M32) ^ b
        out.append(b)
    check_random_access(panel.sap32of96(), np.array(out, dtype=np.uint32))

    a, b, c, out = 0x1234, 0x5678, 0x9ABC, []
    for _ in range(2 * n):  # sap16of48
        t = rotl((a + 0x79B9 + c) & 0xFFFF, 5, 16)
        a = rotl(b ^ (~t & 0xFFFF) ^ ((t << 3) & 0xFFFF), 5, 16)
        b = t
        c = ((c + a) & 0xFFFF) ^ b
        out.append(b)
    check_random_access(panel.sap16of48(), pack16(out))

    a, b, c, out = 0x1234, 0x5678, 0x9ABC, []
    for _ in range(2 * n):  # xsalta16x3
        tmp = (a + c + rotl(b, 5, 16)) & 0xFFFF
        old = a
        a = b ^ (b >> 3)
        b = c ^ ((c << 7) & 0xFFFF)
        c = c ^ (c >> 8) ^ old
        out.append(tmp)
    check_random_access(panel.xsalta16x3(), pack16(out))

    a, b, c, out = 0x1234, 0x5678, 0x9ABC, []
    for _ in range(2 * n):  # simpleB
        tmp = rotl(a, 3, 16) ^ (~b & 0xFFFF)
        a = (b + c) & 0xFFFF
        b = c
        c = (tmp + rotl(c, 5, 16)) & 0xFFFF
        out.append(tmp)
    check_random_access(panel.simple_b(), pack16(out))

    state, out = 0x12345678, []
    for _ in range(n):  # mo_Lesr32
        state = ((state << 7) - state) & M32
        state = rotl(state, 23, 32)
        out.append(state)
    check_random_access(panel.mo_lesr32(), np.array(out, dtype=np.uint32))

    state, out = 0x123456789ABCDEF1, []
    for _ in range(n):  # mo_Rers32of64
        state = (rotl(state, 8, 64) - rotl(state, 29, 64)) & M64
        out.append(state & M32)
    check_random_access(panel.mo_rers32of64(), np.array(out, dtype=np.uint32))
