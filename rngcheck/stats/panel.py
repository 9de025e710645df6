"""The power panel: deliberately weak generators, and good controls, as random-access sources.

Every generator is a function (first, count) -> uint32 words, so the battery can read it
like any stream (and split it across processes). The weak ones are linear recurrences
evaluated by jumping (x_{i+j} = A_j x_i + C_j, or a GF(2) matrix power), so they are
fast in numpy and exactly the sequential generator.

  philox-R     Philox4x32 with R rounds (R = 1..10; 10 is DirectML's)       (SC11 paper)
  randu        x' = 65539 x mod 2^31, word = x << 1                          (IBM RANDU)
  lcg32        x' = 1664525 x + 1013904223 mod 2^32                          (Numerical Recipes)
  lcg64low     low 32 bits of x' = 6364136223846793005 x + 1442695040888963407 mod 2^64 (Knuth MMIX)
  xorshift32   x ^= x<<13; x ^= x>>17; x ^= x<<5                             (Marsaglia 2003)
  counter      word i = i
  bias-K       Philox4x32-10 with bit 0 of lane 0 forced to 1 with probability 2^-K
               (P(bit = 1) = 1/2 + 2^-(K+1))
  pcg64, sfc64 numpy's bit generators (good controls), 64-bit outputs as two words (low first)
"""

from __future__ import annotations

import numpy as np

from .streams import FunctionSource, philox_source

BLOCK = 1 << 16


def _affine_jumps(a: int, c: int, modulus_bits: int, count: int):
    """A_j, C_j (j = 0..count-1) with x_{i+j} = A_j x_i + C_j mod 2^bits."""
    mask = (1 << modulus_bits) - 1
    A, C = [1], [0]
    for _ in range(count - 1):
        A.append((A[-1] * a) & mask)
        C.append((C[-1] * a + c) & mask)
    return np.array(A, dtype=np.uint64), np.array(C, dtype=np.uint64)


def _affine_source(name, a, c, bits, seed, output):
    """A sequential LCG as random access: block starts found by repeated squaring."""
    mask = (1 << bits) - 1
    A, C = _affine_jumps(a, c, bits, BLOCK)

    def state_at(index):
        # x_index = a^index seed + c (a^index - 1)/(a - 1), by binary powering of the affine map
        mul, add = 1, 0
        pa, pc = a, c
        k = index
        while k:
            if k & 1:
                mul, add = (pa * mul) & mask, (pa * add + pc) & mask
            pa, pc = (pa * pa) & mask, (pa * pc + pc) & mask
            k >>= 1
        return (mul * seed + add) & mask

    def function(first, count):
        out = np.empty(count, dtype=np.uint32)
        done = 0
        while done < count:
            x = np.uint64(state_at(first + done))
            n = min(BLOCK, count - done)
            xs = (A[:n] * x + C[:n])  # wraps mod 2^64
            if bits < 64:
                xs &= np.uint64(mask)
            out[done:done + n] = output(xs)
            done += n
        return out

    return FunctionSource(function, {"generator": name, "seed": seed})


def randu(seed: int = 1) -> FunctionSource:
    return _affine_source("RANDU", 65539, 0, 31, seed | 1, lambda x: (x << np.uint64(1)).astype(np.uint32))


def lcg32(seed: int = 1) -> FunctionSource:
    return _affine_source("LCG32 (1664525, 1013904223)", 1664525, 1013904223, 32, seed,
                          lambda x: x.astype(np.uint32))


def lcg64_low(seed: int = 1) -> FunctionSource:
    return _affine_source("LCG64 low 32 bits (MMIX)", 6364136223846793005, 1442695040888963407, 64, seed,
                          lambda x: (x & np.uint64(0xFFFFFFFF)).astype(np.uint32))


def _xorshift32_step(x: int) -> int:
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    x ^= (x << 5) & 0xFFFFFFFF
    return x


def xorshift32(seed: int = 2463534242) -> FunctionSource:
    """Marsaglia's xorshift32 (13, 17, 5); word i is the state after i+1 steps."""
    # columns[j][b] = image of unit vector e_b after j+1 steps (linear over GF(2))
    block = 1 << 12
    columns = np.zeros((block, 32), dtype=np.uint32)
    x = np.uint32(1) << np.arange(32, dtype=np.uint32)
    for j in range(block):  # all 32 unit vectors at once
        x = x ^ (x << np.uint32(13))
        x = x ^ (x >> np.uint32(17))
        x = x ^ (x << np.uint32(5))
        columns[j] = x
    jump_block = columns[block - 1]  # `block` steps

    def apply(matrix_columns, x):
        out = 0
        for b in range(32):
            if (x >> b) & 1:
                out ^= int(matrix_columns[b])
        return out

    def state_before(index):  # state after `index` steps
        x = seed
        for _ in range(index // block):
            x = apply(jump_block, x)
        for _ in range(index % block):
            x = _xorshift32_step(x)
        return x

    def function(first, count):
        out = np.empty(count, dtype=np.uint32)
        x = state_before(first)
        done = 0
        while done < count:
            n = min(block, count - done)
            acc = np.zeros(n, dtype=np.uint32)
            for b in range(32):
                if (x >> b) & 1:
                    acc ^= columns[:n, b]
            out[done:done + n] = acc
            x = int(acc[-1])
            done += n
        return out

    return FunctionSource(function, {"generator": "xorshift32 (13,17,5)", "seed": seed})


def plain_counter(start: int = 0) -> FunctionSource:
    return FunctionSource(lambda first, count: (np.arange(first, first + count, dtype=np.uint64) + start)
                          .astype(np.uint32), {"generator": "counter"})


def biased(k: int, key: int = 7) -> FunctionSource:
    """Philox4x32-10 where bit 0 of lane 0 is forced to 1 with probability 2^-k."""
    base = philox_source(key)
    mask_source = philox_source(key ^ 0x5DEECE66D)

    def function(first, count):
        words = base.function(first, count).copy()
        noise = mask_source.function(first, count)
        lane0 = (np.arange(first, first + count) % 4) == 0
        force = (noise >> np.uint32(32 - k)) == 0  # probability 2^-k
        words[lane0 & force] |= np.uint32(1)
        return words

    return FunctionSource(function, {"generator": f"Philox4x32-10, bit 0 of lane 0 biased by 2^-{k + 1}"})


def numpy_bitgen(name: str, seed: int) -> FunctionSource:
    """numpy's PCG64 / SFC64: 64-bit outputs split into two words (low first); sequential
    underneath, so random access regenerates from the seed (fine for the panel's sizes)."""
    cls = {"pcg64": np.random.PCG64, "sfc64": np.random.SFC64}[name]

    def function(first, count):
        gen = cls(seed)
        start = first // 2
        if start:
            if name == "pcg64":
                gen = gen.advance(start)
            else:
                for done in range(0, start, 1 << 22):  # discard in bounded pieces
                    gen.random_raw(min(1 << 22, start - done))
        raw = gen.random_raw(-(-(first % 2 + count) // 2)).astype(np.uint64)
        words = raw.view(np.uint32)  # little-endian: low word first
        return words[first % 2:first % 2 + count].copy()

    return FunctionSource(function, {"generator": f"numpy {name}", "seed": seed})


WEAK = {
    **{f"philox-{r}": (lambda r=r: philox_source(0x1234, rounds=r)) for r in range(1, 6)},
    "randu": randu,
    "lcg32": lcg32,
    "lcg64low": lcg64_low,
    "xorshift32": xorshift32,
    "counter": plain_counter,
    "bias-6": lambda: biased(6),
    "bias-8": lambda: biased(8),
    "bias-10": lambda: biased(10),
}
BOUNDARY = {"philox-6": lambda: philox_source(0x1234, rounds=6)}
GOOD = {
    "philox-10": lambda: philox_source(0x1234, rounds=10),
    "pcg64": lambda: numpy_bitgen("pcg64", 12345),
    "sfc64": lambda: numpy_bitgen("sfc64", 12345),
}
