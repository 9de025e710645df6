"""ONNX Runtime's CPU RandomUniform and RandomNormal: not Philox, libstdc++'s minstd_rand0.

Sources (facts read there, written here; each measured against onnxruntime 1.32.0's CPU
execution provider, tests/test_onnxruntime_backend.py):
  O  onnxruntime/core/providers/cpu/generator/random.h, random.cc (RandomUniform, RandomNormal:
     ``std::default_random_engine`` seeded with the ``seed`` attribute, then
     ``std::uniform_real_distribution<T>(low, high)`` / ``std::normal_distribution<T>(mean, scale)``
     drawn element after element; the engine lives in the kernel, so a second run continues it)
  L  libstdc++ <bits/random.h>, <bits/random.tcc> (default_random_engine = minstd_rand0;
     linear_congruential_engine::seed; generate_canonical; uniform_real_distribution;
     normal_distribution's polar method)

How the contract expresses a generator that is not Philox. The 6-word state is the operator's;
this convention reads only its word 4 (the key's low word) as the engine's 32-bit seed, and
ignores the other five. ONNX's ``seed`` attribute is a float32, so an implementation can be given
only states whose word 4 is a float32 integer (rngcheck.conformance.conventions.cases.BLOCK_ZERO_STATE is one);
the others are not applicable there. Nothing here reads Philox words.

Rules:
  1. minstd_rand0: x <- 16807 x mod (2^31 - 1); seeded with s, x0 = s mod (2^31 - 1), or 1 when
     that is 0 (L, seed); each call returns the new x, in 1 .. 2^31 - 2.
  2. float32 in [0, 1): generate_canonical<float, 24> (L): one engine value (log2 of the range
     2^31 - 2 is above 24), float(x - 1) / float(2^31 - 2), that divisor rounding to 2^31 in
     float: float(x - 1) * 2^-31, exact after the first rounding; x - 1 >= 2^31 - 64 rounds to
     2^31, a result of 1, which becomes the float below 1, 1 - 2^-24 (L: LWG 2524's clamp;
     measured: seed 31048880 gives x = 2147483586 first, and ONNX Runtime returns 0.99999994).
  3. float64 in [0, 1): generate_canonical<double, 53>: two engine values a, b:
     (double(a - 1) + double(b - 1) * 2147483646.0) / double(2147483646^2), each operation rounded
     in double (the divisor is computed in long double, exact, then rounded to double).
  4. [low, high): u * (high - low) + low in the dtype (L, uniform_real_distribution).
  5. normal: Marsaglia's polar method (L, normal_distribution): u, v from rules 2/3 in turn,
     x = T(2u - 1.0), y = T(2v - 1.0) (the subtraction in double, then rounded to T),
     r2 = x*x + y*y in T; a pair with r2 > 1 or r2 == 0 is rejected and the next two drawn; else
     m = sqrt(-2 log(r2) / r2) and the draw gives y*m, then (saved) x*m; then * scale + mean.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .. import counter
from . import floats
from .request import NORMAL, UNIFORM, Convention, Request, required_state
from .tolerance import EXACT, Bound, multiply_add_orders

SOURCE_O = "onnxruntime/core/providers/cpu/generator/random.cc"
SOURCE_L = "libstdc++ <bits/random.h>, <bits/random.tcc>"
MODULUS = (1 << 31) - 1
MULTIPLIER = 16807
CLAMP_SEED = 31048880           # its first engine value, 2147483586, makes float32 1.0 before the clamp
SPAN = MODULUS - 1              # the engine's max - min + 1 (values 1 .. 2^31 - 2)
BLOCK = 1024                    # engine values computed at once: x0 * a^k mod m for k = 1 .. BLOCK
_POWERS = np.array([pow(MULTIPLIER, k, MODULUS) for k in range(1, BLOCK + 1)], dtype=np.int64)


def seed_of(state: npt.ArrayLike) -> int:
    """The engine's seed: word 4 of the state (the key's low word)."""
    return counter.key_of(state)[0]


def minstd_rand0(seed: int, count: int) -> np.ndarray:
    """Rule 1: the engine's first ``count`` values (int64)."""
    x = int(seed) % MODULUS or 1
    out = np.empty(count, dtype=np.int64)
    for start in range(0, count, BLOCK):
        row = (x * _POWERS) % MODULUS
        take = min(BLOCK, count - start)
        out[start:start + take] = row[:take]
        x = int(row[-1])
    return out


def continued(state: npt.ArrayLike, draws: int) -> np.ndarray:
    """The state whose engine continues ``state``'s after ``draws`` engine values: word 4 set to the
    engine's value then (seeding minstd_rand0 with x, 1 <= x < 2^31 - 1, continues from x: rule 1),
    the other words kept. How a stream longer than one draw is cut into draws (rngcheck.stats)."""
    words = np.array(counter.state_array(state), dtype=np.uint32)
    x = seed_of(words) % MODULUS or 1
    words[4] = x * pow(MULTIPLIER, int(draws), MODULUS) % MODULUS
    return words


def canonical32(values: np.ndarray) -> np.ndarray:
    """Rule 2."""
    result: np.ndarray = (values - 1).astype(np.float32) * np.float32(2.0 ** -31)
    return np.where(result >= 1, np.float32(1) - np.float32(2.0 ** -24), result).astype(np.float32)


def canonical64(values: np.ndarray) -> np.ndarray:
    """Rule 3: one double from each pair of engine values (first, second)."""
    first = (values[0::2] - 1).astype(np.float64)
    second = (values[1::2] - 1).astype(np.float64)
    result: np.ndarray = (first * 1.0 + second * float(SPAN)) / float(SPAN * SPAN)
    return result


def unit(dtype: str, values: np.ndarray) -> np.ndarray:
    return canonical64(values) if dtype == "float64" else canonical32(values)


def polar(dtype: str, seed: int, count: int) -> np.ndarray:
    """Rule 5 (mean 0, scale 1): transcendental steps in binary64, rounded once to the dtype."""
    kind = np.float64 if dtype == "float64" else np.float32
    per = 2 if dtype == "float64" else 1                   # engine values per uniform
    pairs_needed = -(-count // 2)
    pairs = pairs_needed * 4 // 3 + 64                     # acceptance is pi/4
    while True:
        u = unit(dtype, minstd_rand0(seed, 2 * pairs * per))
        x = (2.0 * u[0::2].astype(np.float64) - 1.0).astype(kind)
        y = (2.0 * u[1::2].astype(np.float64) - 1.0).astype(kind)
        r2 = (x * x + y * y).astype(kind)
        kept = np.flatnonzero((r2 <= 1.0) & (r2 != 0.0))
        if kept.size >= pairs_needed:
            break
        pairs *= 2
    kept = kept[:pairs_needed]
    r2k = r2[kept]
    log = np.log(r2k.astype(np.float64)).astype(kind)
    m = np.sqrt(((kind(-2) * log).astype(kind) / r2k).astype(kind).astype(np.float64)).astype(kind)
    out = np.empty(2 * pairs_needed, dtype=kind)
    out[0::2] = (y[kept] * m).astype(kind)
    out[1::2] = (x[kept] * m).astype(kind)
    return out[:count]


class OnnxRuntimeCpu(Convention):
    name = "onnxruntime-cpu"
    title = "ONNX Runtime CPU (RandomUniform, RandomNormal; not Philox: minstd_rand0)"
    generator = "minstd_rand0"
    reaches_high = True   # rule 4: u * (high - low) + low in the dtype can round onto high
    kinds = {UNIFORM: ("float32", "float64"), NORMAL: ("float32", "float64")}
    sources = {UNIFORM: f"{SOURCE_O} (RandomUniform); {SOURCE_L} (minstd_rand0, generate_canonical, "
                        "uniform_real_distribution)",
               NORMAL: f"{SOURCE_O} (RandomNormal); {SOURCE_L} (normal_distribution: the polar method)"}

    def draw(self, request: Request, state: npt.ArrayLike | None = None) -> np.ndarray:
        seed = seed_of(required_state(state))
        if request.kind == NORMAL:
            return polar(request.dtype, seed, request.count)
        per = 2 if request.dtype == "float64" else 1
        values = unit(request.dtype, minstd_rand0(seed, request.count * per))
        if request.low is None:
            return values
        return self._ranged(request, values, fused=False)

    @staticmethod
    def _ranged(request: Request, values: np.ndarray, fused: bool) -> np.ndarray:
        """values * (high - low) + low in the dtype: the product and sum each rounded, or one multiply-add."""
        kind = np.dtype(request.dtype).type
        low, high = request.uniform_range
        result: np.ndarray = floats.multiply_add(floats.format_of(request.dtype), values, kind(high) - kind(low),
                                                 kind(low), fused).astype(request.dtype)
        return result

    def orders(self, request: Request, state: npt.ArrayLike | None) -> np.ndarray | None:
        """Tolerance rule 7 for the ranged uniform: the product and sum rounded apart, or fused."""
        if request.kind != UNIFORM or request.low is None:
            return None
        per = 2 if request.dtype == "float64" else 1
        values = unit(request.dtype, minstd_rand0(seed_of(required_state(state)), request.count * per))
        return np.stack([self._ranged(request, values, fused) for fused in (False, True)])

    def bound(self, request: Request) -> Bound:
        if request.kind == UNIFORM:
            return EXACT if request.low is None else multiply_add_orders("values * (high - low) + low")
        return Bound(4, "the polar method: x, y and r2 exact given the engine; log within 1 ULP (libm), the "
                        "product and quotient 0.5 each, sqrt 0.5 and halving, the last product 0.5; the reference "
                        "rounds each step once: at most 4 ULP")


ONNXRUNTIME_CPU = OnnxRuntimeCpu()
