"""The five sequences of SP 800-22 rev1a Appendix B, computed here with exact integer arithmetic
(no data files): the first n bits of the binary expansions of e, pi, sqrt(2), sqrt(3) (integer
part first: e = 10.1011..., pi = 11.0010..., sqrt 2 = 1.0110..., sqrt 3 = 1.1011...), as in
sts-2.1.2's data files. Each is computed once per test session (functools.cache), in a few seconds.

The fifth sequence of Appendix B, NIST's SHA-1 generator (G-SHA1), is not here: sts-2.1.2's
generator code (FIPS 186-2 appendix 3.1 G function, seed ec822a61...) as read here did not
reproduce its data file, so that column is checked only when sts's data folder is given
(RNGCHECK_STS_DATA; see test_stats_nist_sts.py and docs/nist.md)."""

from __future__ import annotations

import math
from functools import cache

import numpy as np

N_BITS = 10 ** 6
GUARD = 64  # extra bits: a truncated series or a rounded-down root cannot change the first n bits


def _bits_of(value: int, n: int) -> np.ndarray:
    """The n bits of a non-negative integer below 2^n, most significant first."""
    raw = value.to_bytes((n + 7) // 8, "big")
    return np.unpackbits(np.frombuffer(raw, dtype=np.uint8))[-n:] if n % 8 else \
        np.unpackbits(np.frombuffer(raw, dtype=np.uint8))


def _factorial_series(a: int, b: int):
    """Binary splitting of sum_{k=a+1..b} a!/k!: returns (P, Q) with the sum = P/Q, Q = (a+1)...b."""
    if b - a == 1:
        return 1, b
    mid = (a + b) // 2
    p1, q1 = _factorial_series(a, mid)
    p2, q2 = _factorial_series(mid, b)
    return p1 * q2 + p2, q1 * q2


@cache
def e_bits(n: int = N_BITS) -> np.ndarray:
    terms = 2
    while math.lgamma(terms + 1) / math.log(2) < n + GUARD:
        terms *= 2
    p, q = _factorial_series(0, terms)  # e - 1 = p / q
    scaled = ((p + q) << (n - 2 + GUARD)) // q  # e 2^(n-2): two integer bits
    return _bits_of(scaled >> GUARD, n)


def _chudnovsky(a: int, b: int):
    if b - a == 1:
        if a == 0:
            p = q = 1
        else:
            p = (6 * a - 5) * (2 * a - 1) * (6 * a - 1)
            q = a * a * a * 10939058860032000  # 640320^3 / 24
        t = p * (13591409 + 545140134 * a)
        return p, q, -t if a & 1 else t
    mid = (a + b) // 2
    p1, q1, t1 = _chudnovsky(a, mid)
    p2, q2, t2 = _chudnovsky(mid, b)
    return p1 * p2, q1 * q2, t1 * q2 + p1 * t2


@cache
def pi_bits(n: int = N_BITS) -> np.ndarray:
    precision = n - 2 + GUARD  # pi 2^(n-2): two integer bits
    terms = int((n + GUARD) / 47.11) + 2  # each term gives log2(640320^3/1728) ~ 47.11 bits
    _, q, t = _chudnovsky(0, terms)
    root = math.isqrt(10005 << (2 * precision))  # sqrt(10005) 2^precision
    scaled = (426880 * root * q) // t
    return _bits_of(scaled >> GUARD, n)


@cache
def sqrt_bits(k: int, n: int = N_BITS) -> np.ndarray:
    """sqrt(k) for 1 < k < 4 (one integer bit): floor(sqrt(k) 2^(n-1)) = isqrt(k 4^(n-1)), exact."""
    return _bits_of(math.isqrt(k << (2 * (n - 1))), n)


SEQUENCES = {
    "e": e_bits,
    "pi": pi_bits,
    "sqrt2": lambda: sqrt_bits(2),
    "sqrt3": lambda: sqrt_bits(3),
}
