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

Shipped in GPU languages (issue #43; SHIPPED, at the end of this file): warp-pcg* (NVIDIA Warp's
iterated PCG hash) and taichi-* (Taichi's per-thread xorshift128), as the libraries lay them out.

Added for PractRand-level power (the issue "Statistical power at PractRand's level"):

  lcg64high    high 32 bits of x' = 6364136223846793005 x + 1442695040888963407 mod 2^64
               (PractRand's lcg(32,64): a truncated LCG with a power-of-two modulus)
  mcg64high    high 32 bits of x' = 0xd1342543de82ef95 x mod 2^64 (a multiplicative LCG;
               multiplier from Steele & Vigna 2021, "Computationally easy, spectrally good
               multipliers")
  lcg128high   high 64 bits of x' = a x + c mod 2^128 (a, c: PCG's 128-bit defaults), as two
               words (low first)
  lfib55       additive lagged Fibonacci x_n = x_{n-55} + x_{n-24} mod 2^32 (Mitchell-Moore;
               Knuth TAOCP vol. 2, 3.2.2 (7); PractRand's mm32)
  mt19937      numpy's MT19937, 32-bit outputs (Matsumoto & Nishimura 1998)
  xoroshiro128+ s1 ^= s0; s0 = rotl(s0, 24) ^ s1 ^ (s1 << 16); s1 = rotl(s1, 37); output s0 + s1
               before the step (Blackman & Vigna 2018), as two words (low first)
  xorshift128+ s1 ^= s1 << 23; s1 ^= s1 >> 17 (with s0 ^ s0 >> 26), output s0 + s1 mod 2^64
               (Vigna 2017), as two words (low first)

Every generator here is checked against a plain sequential implementation in
tests/test_stats_panel.py.
"""

from __future__ import annotations

import functools

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


def _affine_state(a: int, c: int, mask: int, seed: int, index: int) -> int:
    """x_index of x' = a x + c mod (mask + 1) from x_0 = seed: a^index seed + c (a^index - 1)/(a - 1),
    by binary powering of the affine map."""
    mul, add, pa, pc, k = 1, 0, a, c, index
    while k:
        if k & 1:
            mul, add = (pa * mul) & mask, (pa * add + pc) & mask
        pa, pc = (pa * pa) & mask, (pa * pc + pc) & mask
        k >>= 1
    return (mul * seed + add) & mask


def _affine_source(name, a, c, bits, seed, output):
    """A sequential LCG as random access: block starts found by repeated squaring."""
    mask = (1 << bits) - 1
    A, C = _affine_jumps(a, c, bits, BLOCK)

    def state_at(index):
        return _affine_state(a, c, mask, seed, index)

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


def lcg64_high(seed: int = 1) -> FunctionSource:
    return _affine_source("LCG64 high 32 bits (MMIX)", 6364136223846793005, 1442695040888963407, 64, seed,
                          lambda x: (x >> np.uint64(32)).astype(np.uint32))


MCG64_MULTIPLIER = 0xD1342543DE82EF95


def mcg64_high(seed: int = 1) -> FunctionSource:
    return _affine_source("MCG64 high 32 bits (0xd1342543de82ef95)", MCG64_MULTIPLIER, 0, 64, seed | 1,
                          lambda x: (x >> np.uint64(32)).astype(np.uint32))


LCG128_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645  # PCG's default 128-bit multiplier
LCG128_INCREMENT = 0x5851F42D4C957F2D14057B7EF767814F  # PCG's default 128-bit increment


def lcg128_high(seed: int = 1) -> FunctionSource:
    """High 64 bits of a 128-bit LCG, each output as two words (low first). Python integers
    (exact, slower than the 64-bit generators: about 2 M outputs per second)."""
    a, c, mask = LCG128_MULTIPLIER, LCG128_INCREMENT, (1 << 128) - 1
    block = 1 << 12
    jumps = [(1, 0)]
    for _ in range(block - 1):
        mul, add = jumps[-1]
        jumps.append(((mul * a) & mask, (add * a + c) & mask))
    jump_mul, jump_add = (jumps[-1][0] * a) & mask, (jumps[-1][1] * a + c) & mask  # `block` steps

    def state_at(output):
        return _affine_state(a, c, mask, seed, output)

    def function(first, count):
        begin, end = first // 2, -(-(first + count) // 2)
        highs = []
        x = state_at(begin)
        for offset in range(0, end - begin, block):
            n = min(block, end - begin - offset)
            highs.extend(((m * x + d) & mask) >> 64 for m, d in jumps[:n])
            x = (jump_mul * x + jump_add) & mask
        words = np.array(highs, dtype=np.uint64).view(np.uint32)
        return words[first - 2 * begin:first - 2 * begin + count].copy()

    return FunctionSource(function, {"generator": "LCG128 high 64 bits (PCG's constants)", "seed": seed})


PIECES = 1 << 12  # a long recurrence is run as up to this many consecutive pieces side by side


def _pieces(count: int, minimum: int) -> tuple[int, int]:
    """(pieces, length of each): ``count`` outputs cut into consecutive pieces run side by side."""
    k = max(1, min(PIECES, count // minimum))
    return k, -(-count // k)


def _piece_starts(step, seed: int, begin: int, count: int) -> tuple[int, int, list[int]]:
    """(pieces, length of each, each piece's starting state): ``count`` steps from step ``begin`` of
    the GF(2) recurrence ``step`` (a _GF2Matrix) from ``seed``, cut as _pieces cuts them, each start
    reached by jumping (a power of the matrix)."""
    k, length = _pieces(count, 64)
    jump = step.power(length)
    state = step.power(begin)(seed)
    starts = []
    for _ in range(k):
        starts.append(state)
        state = jump(state)
    return k, length, starts


def _power(base, k: int, identity):
    """base^k by repeated squaring, for anything multiplied with @ (GF(2) or integer matrices)."""
    result = identity
    while k:
        if k & 1:
            result = base @ result
        base = base @ base
        k >>= 1
    return result


class _GF2Matrix:
    """A linear map on n-bit integers over GF(2), kept as the images of the unit vectors."""

    def __init__(self, columns):
        self.columns = list(columns)

    @classmethod
    def of(cls, step, bits: int) -> _GF2Matrix:
        return cls(step(1 << b) for b in range(bits))

    def __call__(self, x: int) -> int:
        out, b = 0, 0
        while x:
            if x & 1:
                out ^= self.columns[b]
            x >>= 1
            b += 1
        return out

    def __matmul__(self, other: _GF2Matrix) -> _GF2Matrix:
        return _GF2Matrix(self(c) for c in other.columns)

    def power(self, k: int) -> _GF2Matrix:
        return _power(self, k, _GF2Matrix(1 << b for b in range(len(self.columns))))


M64 = (1 << 64) - 1
XORSHIFT128P = (23, 18, 5)  # Vigna 2017, "Further scramblings of Marsaglia's xorshift generators"


def _xorshift128p_step(state: int) -> int:
    """State as one 128-bit integer, s[0] in the low half; returns the next state."""
    a, b, c = XORSHIFT128P
    s1, s0 = state & M64, state >> 64
    s1 ^= (s1 << a) & M64
    new1 = s1 ^ s0 ^ (s1 >> b) ^ (s0 >> c)
    return s0 | (new1 << 64)


def _plus_source(state_step, vector_step, seed: int, meta: dict) -> FunctionSource:
    """A 128-bit generator whose output is s[0] + s[1] mod 2^64, each output as two words (low
    first), read at any offset: ``state_step`` (one 128-bit integer, s[0] in the low half) as a
    GF(2) matrix jumps to the start of each of k pieces, ``vector_step`` then steps all k pieces
    at once on numpy uint64 arrays (s0, s1) -> (s0, s1)."""
    step = _GF2Matrix.of(state_step, 128)

    def function(first, count):
        begin, end = first // 2, -(-(first + count) // 2)
        k, length, starts = _piece_starts(step, seed, begin, end - begin)
        s0 = np.array([x & M64 for x in starts], dtype=np.uint64)
        s1 = np.array([x >> 64 for x in starts], dtype=np.uint64)
        out = np.empty((length, k), dtype=np.uint64)
        for j in range(length):
            np.add(s0, s1, out=out[j])
            s0, s1 = vector_step(s0, s1)
        words = np.ascontiguousarray(out.T).reshape(-1)[:end - begin].view(np.uint32)
        return words[first - 2 * begin:first - 2 * begin + count].copy()

    return FunctionSource(function, meta)


def xorshift128plus(seed: int = 0x9E3779B97F4A7C15F39CC0605CEDC834) -> FunctionSource:
    """xorshift128+: output s[0] + s[1] mod 2^64, then the xorshift step; each output as two
    words (low first)."""
    a, b, c = (np.uint64(v) for v in XORSHIFT128P)

    def vector_step(s0, s1):
        t = s0 ^ (s0 << a)
        return s1, t ^ s1 ^ (t >> b) ^ (s1 >> c)

    return _plus_source(_xorshift128p_step, vector_step, seed,
                        {"generator": "xorshift128+ (23, 18, 5)", "seed": hex(seed)})


XOROSHIRO128P = (24, 16, 37)  # Blackman & Vigna 2018, "Scrambled linear pseudorandom number generators"


def _rotl64(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & M64


def _xoroshiro128p_step(state: int) -> int:
    """State as one 128-bit integer, s[0] in the low half; returns the next state."""
    a, b, c = XOROSHIRO128P
    s0, s1 = state & M64, state >> 64
    s1 ^= s0
    return (_rotl64(s0, a) ^ s1 ^ ((s1 << b) & M64)) | (_rotl64(s1, c) << 64)


def xoroshiro128plus(seed: int = 0x9E3779B97F4A7C15F39CC0605CEDC834) -> FunctionSource:
    """xoroshiro128+ (24, 16, 37): output s[0] + s[1] mod 2^64, then the xoroshiro step; each
    output as two words (low first). Its lowest bit is an LFSR of degree 128."""
    a, b, c = XOROSHIRO128P

    def rotl(x, k):
        return (x << np.uint64(k)) | (x >> np.uint64(64 - k))

    def vector_step(s0, s1):
        s1 = s1 ^ s0
        return rotl(s0, a) ^ s1 ^ (s1 << np.uint64(b)), rotl(s1, c)

    return _plus_source(_xoroshiro128p_step, vector_step, seed,
                        {"generator": "xoroshiro128+ (24, 16, 37)", "seed": hex(seed)})


def lagged_fibonacci(long_lag: int = 55, short_lag: int = 24, seed: int = 55) -> FunctionSource:
    """Additive lagged Fibonacci x_n = x_{n-long} + x_{n-short} mod 2^32; words 0..long-1 are
    the seed words (PCG64(seed) outputs, word 0 made odd), word n = x_n."""
    r, s = long_lag, short_lag
    initial = np.random.PCG64(seed).random_raw(r).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    initial[0] |= np.uint64(1)
    # one step of the state (x_n .. x_{n+r-1}) as an r x r matrix; uint64 products wrap mod
    # 2^64, which keeps every value right mod 2^32
    step = np.zeros((r, r), dtype=np.uint64)
    step[np.arange(r - 1), np.arange(1, r)] = 1
    step[r - 1, 0] = step[r - 1, r - s] = 1

    def power(k):
        return _power(step, k, np.eye(r, dtype=np.uint64))

    def function(first, count):
        k, length = _pieces(count, 4 * r)
        jump = power(length)
        state = power(first) @ initial
        x = np.empty((length + r, k), dtype=np.uint32)
        for piece in range(k):
            x[:r, piece] = state.astype(np.uint32)
            state = jump @ state
        for j in range(r, length + r):
            np.add(x[j - r], x[j - s], out=x[j])
        return np.ascontiguousarray(x[:length].T).reshape(-1)[:count].copy()

    return FunctionSource(function, {"generator": f"additive lagged Fibonacci ({r}, {s})", "seed": seed})


def mt19937(seed: int = 5489) -> FunctionSource:
    """numpy's MT19937 (32-bit outputs); random access regenerates from the seed."""

    def function(first, count):
        gen = np.random.MT19937(seed)
        for done in range(0, first, 1 << 22):  # discard in bounded pieces
            gen.random_raw(min(1 << 22, first - done))
        return gen.random_raw(count).astype(np.uint32)

    return FunctionSource(function, {"generator": "MT19937 (numpy)", "seed": seed})


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
    **{f"philox-{r}": functools.partial(philox_source, 0x1234, rounds=r) for r in range(1, 6)},
    "randu": randu,
    "lcg32": lcg32,
    "lcg64low": lcg64_low,
    "xorshift32": xorshift32,
    "counter": plain_counter,
    "bias-6": lambda: biased(6),
    "bias-8": lambda: biased(8),
    "bias-10": lambda: biased(10),
}
# The truncated-LCG family and the linear generators PractRand's figures are set against
# (the README's power table: bytes to the first FAIL, rngcheck's beside PractRand's, from
# benchmarks/bench_stats.py all).
WEAK.update({
    "lcg64high": lcg64_high,
    "mcg64high": mcg64_high,
    "lfib55": lagged_fibonacci,
    "xorshift128+": xorshift128plus,
    "xoroshiro128+": xoroshiro128plus,  # issue #33: PractRand 0.96 fails it at 32 MB (its results table)
})
BOUNDARY = {"philox-6": lambda: philox_source(0x1234, rounds=6),
            "lcg128high": lcg128_high,  # PractRand: lcg(16,128) passes 32 TB
            "mt19937": mt19937}  # passes the standard tier; fails linear complexity on enough data
GOOD = {
    "philox-10": lambda: philox_source(0x1234, rounds=10),
    "pcg64": lambda: numpy_bitgen("pcg64", 12345),
    "sfc64": lambda: numpy_bitgen("sfc64", 12345),
}


# Reduced-round ThreeFry (issue #28): ThreeFry-2x32 and ThreeFry-4x32 with R rounds (20 is the
# standard: JAX's ThreeFry-2x32-20), laid out as an operator on that generator lays them out
# (rngcheck.reference.words with the generator: element i is word i mod N of block floor(i / N)).
# The panel keeps round counts that fail rngcheck's smoke tier (measured with key 0x1234: 2x32
# fails the standard tier from 64 KiB at 4-6 rounds, 256 KiB at 8, 2 MiB at 9, and not up to
# 128 MiB at 10-13; 4x32 from 64 KiB at 4-6, 4 MiB at 8, not up to 128 MiB at 9-12).


def threefry_source(lanes: int, key: int, rounds: int = 20, counter_start: int = 0) -> FunctionSource:
    """The stream of ThreeFry-{lanes}x32-``rounds`` under ``key`` (an int, key word 0 least
    significant) from counter ``counter_start``."""
    from .. import generators, reference

    generator = generators.get(f"threefry{lanes}x32")
    words = generator.counter_bits // 32
    state = np.array([(counter_start >> (32 * i)) & 0xFFFFFFFF for i in range(words)] +
                     [(key >> (32 * i)) & 0xFFFFFFFF for i in range(generator.key_bits // 32)], dtype=np.uint32)

    def function(first, count):
        return reference.words(state, first, count, rounds=rounds, generator=generator)

    return FunctionSource(function, {"generator": f"ThreeFry{lanes}x32-{rounds} (rngcheck.reference)",
                                     "key": hex(key), "counter": hex(counter_start)})


WEAK.update({f"threefry{lanes}x32-{rounds}": functools.partial(threefry_source, lanes, 0x1234, rounds)
             for lanes in (2, 4) for rounds in (4, 6, 8)})

# --- issue #33: generators of PractRand's results table (PractRand 0.96, doc/Tests_results.txt,
# "PractRand standard" column) that fail within 256 MiB, each ported from its published
# definition. PractRand's byte stream of a generator with 16- or 64-bit outputs is its outputs
# little-endian, one after the other; as 32-bit words that is two 16-bit outputs per word (the
# earlier one low) or one 64-bit output as two words (low first), which is what these give.

def _lcg16_source(modulus_bits: int, seed: int) -> FunctionSource:
    """PractRand's lcg(16, Y): x' = 1103515245 x + 12345 mod 2^Y (the multiplier and increment
    of the example rand() in the C standard, ISO/IEC 9899 7.22.2), output bits Y-16..Y-1 of
    each state after the step. Two outputs per 32-bit word, the earlier one in the low half."""
    shift = np.uint64(modulus_bits - 16)
    base = _affine_source(f"lcg(16,{modulus_bits}): C standard rand() LCG mod 2^{modulus_bits}, bits "
                          f"{modulus_bits - 16}..{modulus_bits - 1}", 1103515245, 12345, modulus_bits, seed,
                          lambda x: ((x >> shift) & np.uint64(0xFFFF)).astype(np.uint32))

    def function(first, count):
        halves = base.function(2 * first + 1, 2 * count)  # x_0 = seed; outputs are x_1, x_2, ...
        return halves[0::2] | (halves[1::2] << np.uint32(16))

    return FunctionSource(function, dict(base.description, outputs="16-bit, two per word (earlier low)"))


def lcg16_32(seed: int = 1) -> FunctionSource:
    return _lcg16_source(32, seed)


def lcg16_40(seed: int = 1) -> FunctionSource:
    return _lcg16_source(40, seed)


def lcg16_48(seed: int = 1) -> FunctionSource:
    return _lcg16_source(48, seed)


def lcg16_56(seed: int = 1) -> FunctionSource:
    return _lcg16_source(56, seed)


def _linear_source(step, bits: int, seed: int, vector_step, unpack, output, meta: dict,
                   words_per_output: int = 1) -> FunctionSource:
    """A GF(2)-linear generator of a ``bits``-bit state read at any offset. ``step`` maps the
    state (one Python integer) to the next; ``unpack`` turns a list of such integers into a
    tuple of numpy arrays (one per state word) which ``vector_step`` steps all at once;
    ``output(n, arrays)`` gives the outputs after step n (n: numpy array of step numbers,
    1-based), as uint32 (one word per output) or uint64 (two words, low first)."""
    matrix = _GF2Matrix.of(step, bits)

    def function(first, count):
        begin, end = first // words_per_output, -(-(first + count) // words_per_output)
        k, length, starts = _piece_starts(matrix, seed, begin, end - begin)
        arrays = unpack(starts)
        out = np.empty((length, k), dtype=np.uint32 if words_per_output == 1 else np.uint64)
        steps = begin + np.arange(k, dtype=np.uint64) * np.uint64(length)
        for j in range(length):
            arrays = vector_step(*arrays)
            out[j] = output(steps + np.uint64(j + 1), arrays)
        words = np.ascontiguousarray(out.T).reshape(-1)[:end - begin]
        if words_per_output == 2:
            words = words.view(np.uint32)
        offset = first - words_per_output * begin
        return words[offset:offset + count].copy()

    return FunctionSource(function, meta)


XORSHIFT64 = (13, 7, 17)  # Marsaglia 2003, "Xorshift RNGs", J. Stat. Softw. 8(14), p. 4


def _xorshift64_step(x: int) -> int:
    a, b, c = XORSHIFT64
    x ^= (x << a) & M64
    x ^= x >> b
    return x ^ ((x << c) & M64)


def _xorshift64_vector(x):
    a, b, c = (np.uint64(v) for v in XORSHIFT64)
    x = x ^ (x << a)
    x = x ^ (x >> b)
    return (x ^ (x << c),)


def _unpack64(starts):
    return (np.array(starts, dtype=np.uint64),)


def xorshift64(seed: int = 88172645463325252) -> FunctionSource:
    """Marsaglia's xorshift64 (13, 7, 17) (2003, p. 4; PractRand's xorshift64): each 64-bit
    output (the state after the step) as two words, low first."""
    return _linear_source(_xorshift64_step, 64, seed, _xorshift64_vector, _unpack64, lambda n, s: s[0],
                          {"generator": "xorshift64 (13,7,17)", "seed": seed}, words_per_output=2)


WEYL = 362437  # Marsaglia's Weyl increment (2003, p. 5, xorwow)
XORSHIFT128 = (16, 53, 47)  # PractRand's xorshift64of128 (src/RNGs/other/simple.cpp): xls(16), xrs(53), xls(47)


def _xorshift64of128_step(state: int) -> int:
    """PractRand's xorshift64of128 on the 128-bit value high:low (state: low in the low half),
    a left shift-xor by 16, a right one by 53, a left one by 47 of the whole 128 bits."""
    a, b, c = XORSHIFT128
    mask = (1 << 128) - 1
    state ^= (state << a) & mask
    state ^= state >> b
    return state ^ ((state << c) & mask)


def _shift128(low, high, k, left):
    k64 = np.uint64(k)
    if left:
        return low << k64, (high << k64) | (low >> np.uint64(64 - k))
    return (low >> k64) | (high << np.uint64(64 - k)), high >> k64


def _xorshift64of128_vector(low, high):
    a, b, c = XORSHIFT128
    for k, left in ((a, True), (b, False), (c, True)):
        sl, sh = _shift128(low, high, k, left)
        low, high = low ^ sl, high ^ sh
    return low, high


def xorshift32of128(seed: int = 0x9E3779B97F4A7C15F39CC0605CEDC834) -> FunctionSource:
    """PractRand's xorshift32of128: the low 32 bits of each output (the low 64 bits of the state
    after the step) of its 128-bit xorshift (shifts 16 left, 53 right, 47 left; src/RNGs/other/
    simple.cpp and simple.h, PractRand 0.96)."""
    return _linear_source(_xorshift64of128_step, 128, seed, _xorshift64of128_vector,
                          lambda s: (np.array([x & M64 for x in s], dtype=np.uint64),
                                     np.array([x >> 64 for x in s], dtype=np.uint64)),
                          lambda n, s: (s[0] & np.uint64(0xFFFFFFFF)).astype(np.uint32),
                          {"generator": "xorshift32of128 (PractRand; 128-bit xorshift 16,53,47, low 32 bits)",
                           "seed": hex(seed)})


def xorwow32of96(seed: int = 88172645463325252, weyl: int = 6615241) -> FunctionSource:
    """PractRand's xorwow32of96: a += 362437; output a + (low 32 bits of xorshift64 (13, 7, 17)'s
    next output) mod 2^32 (src/RNGs/other/simple.cpp, PractRand 0.96; Marsaglia's xorwow
    construction, 2003 p. 5, on a 64-bit xorshift)."""
    def output(n, s):
        return ((s[0] & np.uint64(0xFFFFFFFF)) + (np.uint64(weyl) + n * np.uint64(WEYL))).astype(np.uint32)

    return _linear_source(_xorshift64_step, 64, seed, _xorshift64_vector, _unpack64, output,
                          {"generator": "xorwow32of96 (PractRand)", "seed": seed, "weyl": weyl})


M32 = 0xFFFFFFFF
XORWOW_SEED = (123456789, 362436069, 521288629, 88675123, 5783321)  # Marsaglia 2003, p. 5
XORWOW_D = 6615241


def _xorwow_step(state: int) -> int:
    """Marsaglia's xorwow state x, y, z, w, v (x in the lowest 32 bits): t = x ^ (x >> 2);
    x = y; y = z; z = w; w = v; v = (v ^ (v << 4)) ^ (t ^ (t << 1))."""
    x, y, z, w, v = ((state >> (32 * i)) & M32 for i in range(5))
    t = x ^ (x >> 2)
    v_new = (v ^ ((v << 4) & M32)) ^ (t ^ ((t << 1) & M32))
    return y | (z << 32) | (w << 64) | (v << 96) | (v_new << 128)


def _xorwow_vector(x, y, z, w, v):
    t = x ^ (x >> np.uint32(2))
    return y, z, w, v, (v ^ (v << np.uint32(4))) ^ (t ^ (t << np.uint32(1)))


def xorwow(seed: tuple = XORWOW_SEED, d: int = XORWOW_D) -> FunctionSource:
    """Marsaglia's xorwow (2003, "Xorshift RNGs", p. 5; PractRand's xorwow32x6 is the same
    generator): the 160-bit xorshift above, d += 362437, output v + d mod 2^32."""
    start = sum(word << (32 * i) for i, word in enumerate(seed))

    def unpack(states):
        return tuple(np.array([(s >> (32 * i)) & M32 for s in states], dtype=np.uint32) for i in range(5))

    def output(n, s):
        return s[4] + ((np.uint64(d) + n * np.uint64(WEYL)) & np.uint64(M32)).astype(np.uint32)

    return _linear_source(_xorwow_step, 160, start, _xorwow_vector, unpack, output,
                          {"generator": "xorwow (Marsaglia 2003)", "seed": list(seed), "d": d})


# PractRand's own small nonlinear generators (src/RNGs/other/simple.cpp, PractRand 0.96): no jump
# ahead, so they run sequentially in Python (about 1 M outputs per second) and the words made
# are kept for the latest generator asked (the power panel asks the same stream at doubling
# lengths). PractRand seeds them with its own seeder; here the state is given.

_SEQUENTIAL_CACHE: dict = {}


def _sequential_source(name: str, make_steps, width: int, meta: dict) -> FunctionSource:
    """``make_steps()`` yields outputs of ``width`` bits (16 or 32) one at a time; words are
    two 16-bit outputs (the earlier low) or one 32-bit output."""
    per_word = 32 // width

    def words_up_to(end):
        cached = _SEQUENTIAL_CACHE.get(name)
        if cached is None:
            _SEQUENTIAL_CACHE.clear()  # one generator's stream at a time
            cached = _SEQUENTIAL_CACHE[name] = [make_steps(), np.empty(0, dtype=np.uint32)]
        steps, words = cached
        if words.size < end:
            need = max(end, 2 * words.size) - words.size
            dtype = np.uint16 if width == 16 else np.uint32
            fresh = np.fromiter((next(steps) for _ in range(need * per_word)), dtype=dtype, count=need * per_word)
            cached[1] = words = np.concatenate([words, fresh.view(np.uint32)])  # little-endian: earlier low
        return words

    def function(first, count):
        return words_up_to(first + count)[first:first + count].copy()

    return FunctionSource(function, meta)


def _rotl32(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & M32


def _rotl16(x: int, k: int) -> int:
    return ((x << k) | (x >> (16 - k))) & 0xFFFF


def sapparot(a: int = 0x12345678, b: int = 0x9ABCDEF0) -> FunctionSource:
    """PractRand's sapparot: t = rotl(a + 0x9e3779b9, 7); a = rotl(b ^ ~t ^ (t << 3), 7);
    b = t; output a ^ b."""
    def steps():
        x, y = a, b
        while True:
            t = _rotl32((x + 0x9E3779B9) & M32, 7)
            x = _rotl32(y ^ (~t & M32) ^ ((t << 3) & M32), 7)
            y = t
            yield x ^ y

    return _sequential_source(f"sapparot{a}{b}", steps, 32, {"generator": "sapparot (PractRand)", "seed": [a, b]})


def sap32of96(a: int = 0x12345678, b: int = 0x9ABCDEF0, c: int = 0x0F1E2D3C) -> FunctionSource:
    """PractRand's sap32of96: t = rotl(a + 0x9e3779b9 + c, 7); a = rotl(b ^ ~t ^ (t << 3), 7);
    b = t; c = (c + a) ^ b; output b."""
    def steps():
        x, y, z = a, b, c
        while True:
            t = _rotl32((x + 0x9E3779B9 + z) & M32, 7)
            x = _rotl32(y ^ (~t & M32) ^ ((t << 3) & M32), 7)
            y = t
            z = ((z + x) & M32) ^ y
            yield y

    return _sequential_source(f"sap32of96{a}{b}{c}", steps, 32,
                              {"generator": "sap32of96 (PractRand)", "seed": [a, b, c]})


def sap16of48(a: int = 0x1234, b: int = 0x5678, c: int = 0x9ABC) -> FunctionSource:
    """PractRand's sap16of48: 16-bit sap32of96 with 0x79b9 and rotations by 5."""
    def steps():
        x, y, z = a, b, c
        while True:
            t = _rotl16((x + 0x79B9 + z) & 0xFFFF, 5)
            x = _rotl16(y ^ (~t & 0xFFFF) ^ ((t << 3) & 0xFFFF), 5)
            y = t
            z = ((z + x) & 0xFFFF) ^ y
            yield y

    return _sequential_source(f"sap16of48{a}{b}{c}", steps, 16,
                              {"generator": "sap16of48 (PractRand)", "seed": [a, b, c]})


def xsalta16x3(a: int = 0x1234, b: int = 0x5678, c: int = 0x9ABC) -> FunctionSource:
    """PractRand's xsalta16x3: output a + c + rotl(b, 5); then a, b, c = b ^ (b >> 3),
    c ^ (c << 7), c ^ (c >> 8) ^ a (16-bit words)."""
    def steps():
        x, y, z = a, b, c
        while True:
            out = (x + z + _rotl16(y, 5)) & 0xFFFF
            x, y, z = y ^ (y >> 3), z ^ ((z << 7) & 0xFFFF), z ^ (z >> 8) ^ x
            yield out

    return _sequential_source(f"xsalta16x3{a}{b}{c}", steps, 16,
                              {"generator": "xsalta16x3 (PractRand)", "seed": [a, b, c]})


def mo_lesr32(state: int = 0x12345678) -> FunctionSource:
    """PractRand's mo_Lesr32: state = rotl((state << 7) - state, 23); output state."""
    def steps():
        x = state
        while True:
            x = _rotl32(((x << 7) - x) & M32, 23)
            yield x

    return _sequential_source(f"mo_Lesr32{state}", steps, 32, {"generator": "mo_Lesr32 (PractRand)", "seed": state})


def mo_rers32of64(state: int = 0x123456789ABCDEF1) -> FunctionSource:
    """PractRand's mo_Rers32of64: state = rotl64(state, 8) - rotl64(state, 29) mod 2^64; output
    its low 32 bits."""
    def steps():
        x = state
        while True:
            x = (_rotl64(x, 8) - _rotl64(x, 29)) & M64
            yield x & M32

    return _sequential_source(f"mo_Rers32of64{state}", steps, 32,
                              {"generator": "mo_Rers32of64 (PractRand)", "seed": state})


def simple_b(a: int = 0x1234, b: int = 0x5678, c: int = 0x9ABC) -> FunctionSource:
    """PractRand's simpleB: t = rotl16(a, 3) ^ ~b; a = b + c; b = c; c = t + rotl16(c, 5);
    output t."""
    def steps():
        x, y, z = a, b, c
        while True:
            t = _rotl16(x, 3) ^ (~y & 0xFFFF)
            x, y, z = (y + z) & 0xFFFF, z, (t + _rotl16(z, 5)) & 0xFFFF
            yield t

    return _sequential_source(f"simpleB{a}{b}{c}", steps, 16, {"generator": "simpleB (PractRand)", "seed": [a, b, c]})


# name -> (factory, PractRand's figure in bytes); lcg16ofY is the table's lcg(16,Y), xorwow its xorwow32x6
PRACTRAND_TABLE_SOURCE = "PractRand 0.96 doc/Tests_results.txt"
PRACTRAND_TABLE = {
    "xorshift64": (xorshift64, 64 << 10),
    "xorshift32of128": (xorshift32of128, 512 << 10),
    "xorwow32of96": (xorwow32of96, 2 << 20),
    "xorwow": (xorwow, 16 << 20),  # the table's xorwow32x6
    "lcg16of32": (lcg16_32, 512 << 10),
    "lcg16of40": (lcg16_40, 32 << 20),
    "lcg16of48": (lcg16_48, 32 << 20),
    "lcg16of56": (lcg16_56, 128 << 20),
    "mo_Lesr32": (mo_lesr32, 64 << 10),
    "sap16of48": (sap16of48, 512 << 10),
    "xsalta16x3": (xsalta16x3, 1 << 20),
    "sap32of96": (sap32of96, 2 << 20),
    "mo_Rers32of64": (mo_rers32of64, 8 << 20),
    "sapparot": (sapparot, 16 << 20),
    "simpleB": (simple_b, 128 << 20),
}
# --- end of issue #33's PractRand-table block


# --- issue #43: generators shipped in GPU languages, each a numpy model of the library's own
# code (read in the installed packages), checked against the real library's words in
# rngcheck/vectors/shipped_streams.json (recorded by scripts/record_shipped_streams.py) and, where
# the library is importable, live (tests/test_stats_shipped.py).
#
# NVIDIA Warp (warp-lang 1.19.0, warp/native/rand.h): the state is one uint32; every draw
# (wp.randi, wp.randu, wp.randf) replaces it by rand_pcg(state), the PCG-RXS-M-XS 32-bit hash of
# Jarzynski & Olano (JCGT 2020), and returns it (randf: its top 24 bits / 2^24). A thread's
# state is wp.rand_init(seed, offset) = rand_pcg(seed + rand_pcg(offset)), offset usually the
# thread index. So a thread's stream iterates one fixed bijection of 32-bit words: it never
# repeats a word before its cycle closes, and every thread (every seed) walks the same cycles.
#
# Taichi (taichi 1.7.4, LLVM runtime: runtime_x64.bc's initialize_rand_state and rand_u32; the
# CPU and CUDA backends share it): one xorshift128 state (x, y, z, w) per thread (a CPU worker
# thread, or a CUDA thread: linear_thread_idx), state i set at start-up from
# k = random_seed * 1048391 + i: x = 123456789 * k * 1000000007, y, z, w = 362436069, 521288629,
# 88675123 (Marsaglia's xor128 constants); ti.random(ti.u32) steps it (t = x ^ x << 11;
# x, y, z = y, z, w; w = w ^ w >> 19 ^ t ^ t >> 8) and returns w * 1000000007 mod 2^32.
# taichi#7182 (fixed by taichi#7239, merged January 2023): the seed was multiplied by 2^20, so the
# low 20 bits of k, and with them the parity of every thread's first draw, did not depend on the
# seed. With 1048391 the parity does depend on the seed, but output bit b of a thread's first
# draw is still a function of k mod 2^(b + 9) alone (bits b and b + 8 of x, and x's low bits
# come from k's low bits): the first draws of threads i = 0, 1, 2, ... have a lowest bit
# periodic in i with period 512 (and periodic in the seed, with the same period, for one thread).

WARP_SEED = 42
TAICHI_SEED = 0
TAICHI_MULTIPLIER = 1000000007
TAICHI_SEED_SCALE = 1048391  # taichi 1.7.4; 1 << 20 before taichi#7239
TAICHI_XYZW = (362436069, 521288629, 88675123)


def warp_rand_pcg(state):
    """Warp's rand_pcg on a numpy uint32 array (or scalar): the PCG-RXS-M-XS 32-bit hash."""
    b = np.asarray(state, dtype=np.uint32) * np.uint32(747796405) + np.uint32(2891336453)
    c = ((b >> ((b >> np.uint32(28)) + np.uint32(4))) ^ b) * np.uint32(277803737)
    return (c >> np.uint32(22)) ^ c


def warp_rand_init(seed: int, offsets):
    """wp.rand_init(seed, offset) for an array of offsets (thread indices)."""
    offsets = np.asarray(offsets, dtype=np.int64).astype(np.uint32)
    return warp_rand_pcg(np.uint32(seed & M32) + warp_rand_pcg(offsets))


def taichi_init(seed: int, threads, scale: int = TAICHI_SEED_SCALE):
    """Taichi's per-thread xorshift128 states (x, y, z, w) for thread indices ``threads``."""
    k = (np.uint32((seed * scale) & M32) + np.asarray(threads, dtype=np.int64).astype(np.uint32))
    x = k * np.uint32(123456789) * np.uint32(TAICHI_MULTIPLIER)
    y, z, w = (np.full(x.shape, v, dtype=np.uint32) for v in TAICHI_XYZW)
    return x, y, z, w


def _taichi_step(x, y, z, w):
    t = x ^ (x << np.uint32(11))
    return y, z, w, (w ^ (w >> np.uint32(19))) ^ (t ^ (t >> np.uint32(8)))


def _threads_source(init, step, output, threads: int | None, draws: int | None, meta: dict) -> FunctionSource:
    """Many threads' streams as one stream, vectorized across threads. ``init(indices)`` gives the
    states (a tuple of uint32 arrays) of those threads, ``step(*state)`` the next state and
    ``output(state)`` a draw's word. Thread-major (``draws`` given, ``threads`` None): thread 0's
    ``draws`` words, then thread 1's, ... (a kernel writing out[tid * draws + k]). Interleaved
    (``threads`` given): draw 0 of threads 0..threads-1, then draw 1 of each, ... (one draw per
    thread per launch, the states kept between launches, or out[k * threads + tid])."""
    if draws is not None:
        def thread_major(first, count):
            t0, t1 = first // draws, -(-(first + count) // draws)
            state = init(np.arange(t0, t1))
            out = np.empty((draws, t1 - t0), dtype=np.uint32)
            for k in range(draws):
                state = step(*state)
                out[k] = output(state)
            words = np.ascontiguousarray(out.T).reshape(-1)
            return words[first - t0 * draws:first - t0 * draws + count].copy()
        return FunctionSource(thread_major, meta)

    assert threads is not None
    cache: dict = {}  # the states after `launch` draws, of the latest launch reached

    def states_at(launch):
        done, state = cache.get("at", (0, None))
        if state is None or done > launch:
            done, state = 0, init(np.arange(threads))
        for _ in range(launch - done):
            state = step(*state)
        cache["at"] = (launch, state)
        return state

    def interleaved(first, count):
        l0, l1 = first // threads, -(-(first + count) // threads)
        state = states_at(l0)
        out = np.empty((l1 - l0, threads), dtype=np.uint32)
        for row in range(l1 - l0):
            state = step(*state)
            out[row] = output(state)
        cache["at"] = (l1, state)
        return out.reshape(-1)[first - l0 * threads:first - l0 * threads + count].copy()

    return FunctionSource(interleaved, meta)


WARP_DRAWS = 256  # draws per thread in the thread-major layout
GPU_THREADS = 1 << 16  # threads per launch in the interleaved layouts


def warp_pcg(seed: int = WARP_SEED, draws: int = WARP_DRAWS) -> FunctionSource:
    """Warp's stream, thread-major: thread tid = 0, 1, 2, ... runs ``state = wp.rand_init(seed,
    tid)`` and ``draws`` times ``wp.randu(state)``, writing out[tid * draws + k] (warp-lang 1.19.0)."""
    return _threads_source(lambda tids: (warp_rand_init(seed, tids),), lambda s: (warp_rand_pcg(s),),
                           lambda state: state[0], None, draws,
                           {"generator": "Warp rand_pcg iterated (warp-lang 1.19.0), thread-major",
                            "seed": seed, "draws_per_thread": draws})


def warp_pcg_threads(seed: int = WARP_SEED, threads: int = GPU_THREADS) -> FunctionSource:
    """Warp's stream, interleaved: ``threads`` threads each with ``wp.rand_init(seed, tid)``;
    word k * threads + tid is thread tid's k-th ``wp.randu`` (warp-lang 1.19.0)."""
    return _threads_source(lambda tids: (warp_rand_init(seed, tids),), lambda s: (warp_rand_pcg(s),),
                           lambda state: state[0], threads, None,
                           {"generator": "Warp rand_pcg iterated (warp-lang 1.19.0), across threads",
                            "seed": seed, "threads": threads})


def taichi_xorshift128_threads(seed: int = TAICHI_SEED, threads: int = GPU_THREADS,
                               scale: int = TAICHI_SEED_SCALE) -> FunctionSource:
    """Taichi's ti.random(ti.u32) across threads: word k * threads + i is the k-th draw of
    thread i's state (a CUDA kernel over ``threads`` threads drawing once per launch, launches
    in sequence; thread i's state as the LLVM runtime sets it, taichi 1.7.4). ``scale``
    1 << 20 gives the seeding before taichi#7239 (taichi#7182)."""
    return _threads_source(lambda tids: taichi_init(seed, tids, scale), _taichi_step,
                           lambda state: state[3] * np.uint32(TAICHI_MULTIPLIER), threads, None,
                           {"generator": "Taichi xorshift128 (taichi 1.7.4 LLVM runtime), across threads",
                            "seed": seed, "threads": threads, "seed_scale": scale})


def _taichi_state_step(state: int) -> int:
    """Taichi's xorshift128 step on the 128-bit state x | y << 32 | z << 64 | w << 96."""
    x, y, z, w = ((state >> (32 * i)) & M32 for i in range(4))
    t = x ^ ((x << 11) & M32)
    w_new = (w ^ (w >> 19)) ^ (t ^ (t >> 8))
    return y | (z << 32) | (w << 64) | (w_new << 96)


def taichi_xorshift128(seed: int = TAICHI_SEED, thread: int = 0) -> FunctionSource:
    """One Taichi thread's stream: successive ti.random(ti.u32) of thread ``thread``'s state
    (on the CPU backend with cpu_max_num_threads=1 every draw of a serialized loop comes from
    thread 0's state; taichi 1.7.4)."""
    x, y, z, w = (int(v[0]) for v in taichi_init(seed, [thread]))
    start = x | (y << 32) | (z << 64) | (w << 96)

    def unpack(states):
        return tuple(np.array([(s >> (32 * i)) & M32 for s in states], dtype=np.uint32) for i in range(4))

    return _linear_source(_taichi_state_step, 128, start, _taichi_step, unpack,
                          lambda n, s: s[3] * np.uint32(TAICHI_MULTIPLIER),
                          {"generator": "Taichi xorshift128 (taichi 1.7.4 LLVM runtime), one thread",
                           "seed": seed, "thread": thread})


def _warp_pcg_step(state: int) -> int:
    b = (state * 747796405 + 2891336453) & M32
    c = (((b >> ((b >> 28) + 4)) ^ b) * 277803737) & M32
    return (c >> 22) ^ c


def warp_pcg_one_thread(seed: int = WARP_SEED, tid: int = 0) -> FunctionSource:
    """One Warp thread drawing without end: ``state = wp.rand_init(seed, tid)``, then
    ``wp.randu(state)`` again and again (warp-lang 1.19.0). Sequential (no jump ahead for an
    iterated hash): Python integers, about 1 M words per second, kept as _sequential_source keeps them."""
    start = int(warp_rand_init(seed, [tid])[0])

    def steps():
        x = start
        while True:
            x = _warp_pcg_step(x)
            yield x

    return _sequential_source(f"warp-pcg-one-thread{seed}:{tid}", steps, 32,
                              {"generator": "Warp rand_pcg iterated (warp-lang 1.19.0), one thread",
                               "seed": seed, "tid": tid})


def taichi_first_draw_by_seed(thread: int = 0, scale: int = TAICHI_SEED_SCALE) -> FunctionSource:
    """taichi#7182's stream: word s is thread ``thread``'s first ti.random(ti.u32) after
    ti.init(random_seed=s), s = 0, 1, 2, ... (a program run once per seed, as in the issue).
    ``scale`` 1048391 is taichi 1.7.4's seeding; 1 << 20 the seeding before taichi#7239
    (introduced by taichi#2297; modelled, not run here), where every word has one parity."""
    def function(first, count):
        seeds = np.arange(first, first + count, dtype=np.uint64)
        k = ((seeds * np.uint64(scale) + np.uint64(thread)) & np.uint64(M32)).astype(np.uint32)
        x = k * np.uint32(123456789) * np.uint32(TAICHI_MULTIPLIER)
        y, z, w = (np.full(x.shape, v, dtype=np.uint32) for v in TAICHI_XYZW)
        return _taichi_step(x, y, z, w)[3] * np.uint32(TAICHI_MULTIPLIER)

    return FunctionSource(function, {"generator": "Taichi xorshift128: first draw per seed", "thread": thread,
                                     "seed_scale": scale})


SHIPPED = {
    "warp-pcg": warp_pcg,
    "warp-pcg-one-thread": warp_pcg_one_thread,
    "warp-pcg-threads": warp_pcg_threads,
    "taichi-xorshift128": taichi_xorshift128,
    "taichi-xorshift128-threads": taichi_xorshift128_threads,
    "taichi-first-draw-by-seed": taichi_first_draw_by_seed,
    "taichi-first-draw-by-seed-pre7239": lambda: taichi_first_draw_by_seed(scale=1 << 20),
}
# --- end of issue #43's shipped block


def panel_factories() -> dict:
    """Every panel generator by the name the power table gives it."""
    table = {name: factory for name, (factory, _) in PRACTRAND_TABLE.items()}
    return {**WEAK, **table, **SHIPPED, **BOUNDARY, **GOOD}


def main(argv=None) -> int:
    """``python -m rngcheck.stats.weak_generators NAME [--bytes N]``: a panel generator's words,
    32-bit little-endian, on standard output (without --bytes, until the reader stops), e.g.
    ``python -m rngcheck.stats.weak_generators taichi-xorshift128 | rngcheck stats --input - --progressive``."""
    import argparse
    import sys

    from .tiers import parse_bytes

    factories = panel_factories()
    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0] if main.__doc__ else None)
    parser.add_argument("name", choices=sorted(factories), metavar="NAME", help="a panel generator: " +
                        ", ".join(sorted(factories)))
    parser.add_argument("--bytes", default=None, help="bytes to write (a multiple of 4; units K, M, G)")
    args = parser.parse_args(argv)
    left = parse_bytes(args.bytes) // 4 if args.bytes else None
    source = factories[args.name]()
    out = sys.stdout.buffer
    try:
        while left is None or left > 0:
            count = 1 << 18 if left is None else min(left, 1 << 18)
            out.write(source.read(count).astype("<u4").tobytes())
            left = None if left is None else left - count
        out.flush()
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
