"""cuRAND's numbers from Philox words, rule by rule (host and device API alike).

Sources (facts read there, written here; cuRAND 10.3.10, the nvidia-curand-cu12 wheel's headers):
  U  curand_uniform.h (_curand_uniform, _curand_uniform_double_hq, curand_uniform2_double)
  N  curand_normal.h (_curand_box_muller, _curand_box_muller_double, curand_normal,
     curand_normal4, curand_normal2_double)
  G  curand_globals.h (CURAND_2POW32_INV = 2^-32f, CURAND_2POW53_INV_DOUBLE = 2^-53,
     CURAND_2POW32_INV_2PI = 2^-32f * 6.2831855f, CURAND_PI_DOUBLE)
  H  curand.h (curandGenerate, curandGenerateUniform[Double], curandGenerateNormal[Double]:
     pseudo-random normals are made by Box-Muller and need an even count)
  M  measured on the host generator (libcurand.so.10 through ctypes, no GPU):
     tests/test_numbers_conventions.py

The word stream. cuRAND's Philox generator does not lay its stream out as the operator does: the
host generator interleaves 65536 subsequences (rngcheck.backends.curand_backend), and a device
kernel gives each thread its own subsequence (curand_init(seed, subsequence, offset)). Within one
subsequence the words come in counter order, and that is the order the rules below read: word i
is word i of one subsequence's stream. (M: curandGenerateUniform and curandGenerateNormal put
element p on curandGenerate's word p; the double kernels take two consecutive blocks of one
subsequence per call, so double element 4t + j, t < 65536, comes from blocks 0 and 1 of
subsequence t (measured for the first 4 * 4096 doubles of a fresh generator). Mapping these
layouts onto the operator's stream is a later issue.)

Conversions:
  1. float32 uniform in (0, 1]: word i converted to float (rounded to nearest: 24 bits), times
     2^-32 (exact), plus 2^-33, rounded to float (U, _curand_uniform). 0 never comes out (the
     smallest is 2^-33); 1.0 does, for every word from 0xffffff80 up (they round to 2^32).
  2. float64 uniform in (0, 1]: words 2i and 2i+1 make z = word 2i XOR (word 2i+1 << 21), a
     53-bit integer; z * 2^-53 + 2^-54 in double (U, _curand_uniform_double_hq). This is the host
     generator's and curand_uniform2_double's rule (M); the device call curand_uniform_double on
     one Philox state uses one word instead (word * 2^-32 + 2^-32), which is not this convention.
  3. normal float32: words (2k, 2k+1) give elements 2k, 2k+1 by Box-Muller (N, _curand_box_muller):
        u = rule 1 of word 2k                   (never 0: log is finite)
        v = float(word 2k+1) * C + C / 2 in float, C = float(2^-32 * 6.2831855f)   (G)
        s = sqrtf(-2 * logf(u))
        element 2k = s * sinf(v), element 2k+1 = s * cosf(v)     (sin first)
     curand_normal returns the sine one and keeps the cosine one for its next call; curand_normal4
     makes (x, y) from the first two lanes, (z, w) from the last two (N). The host generator does
     the same (M; it refuses an odd count, H). On a GPU the code takes the __sincosf intrinsic
     instead of sinf/cosf (N), whose error is absolute (CUDA Math API: about 2^-21.4 in
     [-pi, pi], more outside it; v runs up to 2 pi), so device values near a zero of sin or cos
     can be many ULPs from this rule's; the bound below is the host generator's.
  4. normal float64: words 4k..4k+3 give elements 2k, 2k+1 (N, _curand_box_muller_double):
        u = (word 4k XOR word 4k+1 << 21) * 2^-53 + 2^-54          (rule 2)
        v = (word 4k+2 XOR word 4k+3 << 21) * 2^-52 + 2^-53        (in (0, 2])
        s = sqrt(-2 log u); element 2k = s * sin(v * pi), element 2k+1 = s * cos(v * pi)
     (the device code calls sincospi(v); the host computes v * CURAND_PI_DOUBLE first, the rule
     here: the two differ by the rounding of v * pi, which is many ULPs of a result near a zero of
     sin or cos, v near 1 or 2).
  5. bits: uint32 = word i (H, curandGenerate).
cuRAND defines no [low, high) range for uniforms and no integer ranges (the host API has none).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .box_muller import polar32, polar64
from .request import BITS, NORMAL, UNIFORM, Convention, Request, required_state
from .tensorflow import interleave, stream
from .tolerance import EXACT, Bound, Interval

SOURCE_U = "curand_uniform.h"
SOURCE_N = "curand_normal.h"
SOURCE_G = "curand_globals.h"
SOURCE_H = "curand.h"

TWO_PI_FLOAT = np.float32(6.2831855)                   # G: the float literal in CURAND_2POW32_INV_2PI
ANGLE_STEP = np.float32(np.float32(2.0 ** -32) * TWO_PI_FLOAT)
SAME_ARITHMETIC = Bound(0, "the conversion rounds (an integer to float, a sum), but with IEEE operations that the "
                           "reference performs one for one, so the result is determined: exact")


def uniform_float(words: np.ndarray) -> np.ndarray:
    """Rule 1: float(word) * 2^-32 + 2^-33 in float32, in (0, 1]."""
    as_float = np.asarray(words, dtype=np.uint32).astype(np.float32)
    result: np.ndarray = as_float * np.float32(2.0 ** -32) + np.float32(2.0 ** -33)
    return result


def hq53(low_words: np.ndarray, high_words: np.ndarray) -> np.ndarray:
    """Rules 2 and 4: word XOR (next word << 21), a 53-bit integer as uint64."""
    result: np.ndarray = (np.asarray(low_words, dtype=np.uint64)
                          ^ (np.asarray(high_words, dtype=np.uint64) << np.uint64(21)))
    return result


def uniform_double(low_words: np.ndarray, high_words: np.ndarray) -> np.ndarray:
    """Rule 2: z * 2^-53 + 2^-54 (z from hq53), in (0, 1]."""
    return hq53(low_words, high_words).astype(np.float64) * 2.0 ** -53 + 2.0 ** -54


def box_muller_float(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rule 3: (s sin v, s cos v). The uniforms are exact float arithmetic; each transcendental
    step is evaluated in binary64 and rounded once to binary32 (tolerance rule 3)."""
    u = uniform_float(x)
    v = np.asarray(y, dtype=np.uint32).astype(np.float32) * ANGLE_STEP + ANGLE_STEP / np.float32(2)
    return polar32(u, v)


def box_muller_double(x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rule 4, in binary64."""
    u = uniform_double(x0, x1)
    v = hq53(y0, y1).astype(np.float64) * 2.0 ** -52 + 2.0 ** -53
    return polar64(u, v * np.pi)


def normal_from_words(dtype: str, words: np.ndarray) -> np.ndarray:
    """Rules 3-4 on a whole number of pairs (float32: 2 words, float64: 4 words per pair)."""
    if dtype == "float64":
        return interleave(*box_muller_double(words[0::4], words[1::4], words[2::4], words[3::4]))
    return interleave(*box_muller_float(words[0::2], words[1::2]))


class Curand(Convention):
    name = "curand"
    title = "NVIDIA cuRAND, Philox4_32_10 (host generator and device API)"
    kinds = {UNIFORM: ("float32", "float64"), NORMAL: ("float32", "float64"), BITS: ("uint32",)}
    ranged_uniform = False   # (0, 1] only (a ranged request is not this convention's)
    sources = {UNIFORM: f"{SOURCE_U} (_curand_uniform, _curand_uniform_double_hq); {SOURCE_G}",
               NORMAL: f"{SOURCE_N} (_curand_box_muller, _curand_box_muller_double); {SOURCE_G}",
               BITS: f"{SOURCE_H} (curandGenerate)"}

    def interval(self, request: Request) -> Interval | None:
        """Rules 1-2: (0, 1]."""
        if request.kind == UNIFORM:
            return Interval(0.0, 1.0, low_closed=False, high_closed=True)
        return super().interval(request)

    def draw(self, request: Request, state: npt.ArrayLike | None = None) -> np.ndarray:
        n = request.count
        if request.kind == UNIFORM:
            if request.dtype == "float64":
                words = stream(required_state(state), 0, 2 * n)
                return uniform_double(words[0::2], words[1::2])
            return uniform_float(stream(required_state(state), 0, n))
        if request.kind == NORMAL:
            per_pair = 4 if request.dtype == "float64" else 2
            return normal_from_words(request.dtype, stream(required_state(state), 0, -(-n // 2) * per_pair))[:n]
        return stream(required_state(state), 0, n)

    def bound(self, request: Request) -> Bound:
        if request.kind == BITS:
            return EXACT
        if request.kind == UNIFORM:
            return SAME_ARITHMETIC
        if request.dtype == "float64":
            return Bound(4, "Box-Muller in double, u and v * pi computed as cuRAND does (IEEE, identical): "
                            "log within 1 ULP in each libm (2 apart, halved by sqrt: 1), sqrt and the product "
                            "round alike (1 between two different inputs), sin/cos within 1 ULP in each libm "
                            "(2 apart): at most 4 ULP; measured 2 (cuRAND 10.3.10 host). The host's rule: a GPU's "
                            "sincospi "
                            "differs near the zeros of sin/cos (rule 4)")
        return Bound(4, "Box-Muller in float: u and v bit-exact (float arithmetic as cuRAND's); logf within "
                        "1 ULP (halved by sqrtf: 0.5), sqrtf 0.5, sinf/cosf within 2 ULP (CUDA math), the "
                        "product 0.5, the reference's own rounding of each step 0.5: at most 4 ULP; "
                        "measured 3 (cuRAND 10.3.10 host). The host's rule: a GPU's __sincosf has an absolute "
                        "error and "
                        "differs by more near the zeros of sin/cos (rule 3)")


CURAND = Curand()
