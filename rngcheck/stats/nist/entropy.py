"""NIST SP 800-22 rev1a, overlapping m-bit patterns: 2.11 Serial and 2.12 Approximate Entropy
(window counts, psi^2, phi), the reference functions, and the streaming form of both from one count
of the overlapping 12-bit patterns per sample.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels, pvalues
from ..accumulators import Accumulator
from ..special import special
from ..tiers import MiB
from .common import SAMPLE_WORDS, window_values


def _window_counts(bits, m: int) -> np.ndarray:
    """Counts of every m-bit pattern over the n overlapping windows, the sequence wrapped around
    (the augmented sequence of 2.11.4 step 1 and 2.12.4 step 1); m <= 25."""
    bits = np.asarray(bits, dtype=np.uint8)
    if m <= 0:
        return np.array([bits.size])
    return np.bincount(window_values(np.concatenate([bits, bits[:m - 1]]), m), minlength=1 << m)


def _marginal(counts: np.ndarray) -> np.ndarray:
    """Counts of the (m-1)-bit prefixes from the counts of the m-bit wrapped windows."""
    return counts[0::2] + counts[1::2]


def _psi2(counts: np.ndarray, n: int) -> float:
    if counts.size <= 1:  # m = 0 (and the text's m = -1): psi^2 = 0
        return 0.0
    return (float(counts.size) / n) * float((counts.astype(np.float64) ** 2).sum()) - n


def serial(bits, m: int) -> tuple[float, float]:
    """2.11 Serial Test: (p1, p2) from del psi^2_m and del^2 psi^2_m."""
    bits = np.asarray(bits, dtype=np.uint8)
    counts = _window_counts(bits, m)  # the m-1 and m-2 bit counts are its marginals
    psim, psim1, psim2 = (_psi2(c, bits.size) for c in (counts, _marginal(counts), _marginal(_marginal(counts))))
    d1 = psim - psim1
    d2 = psim - 2 * psim1 + psim2
    return float(special.gammaincc(2 ** (m - 2), d1 / 2)), float(special.gammaincc(2 ** (m - 3), d2 / 2))


def _phi(counts: np.ndarray, n: int) -> float:
    c = counts[counts > 0] / n
    return float((c * np.log(c)).sum())


def approximate_entropy(bits, m: int) -> float:
    """2.12 Approximate Entropy Test: chi2 = 2n(ln 2 - ApEn), p = igamc(2^(m-1), chi2/2)."""
    bits = np.asarray(bits, dtype=np.uint8)
    n = bits.size
    counts = _window_counts(bits, m + 1)
    apen = _phi(_marginal(counts), n) - _phi(counts, n)  # phi(0) = 0: one pattern, frequency 1
    chi2 = 2.0 * n * (math.log(2) - apen)
    return float(special.gammaincc(2 ** (m - 1), chi2 / 2))


def overlapping_counts(samples: np.ndarray, m: int) -> np.ndarray:
    """Counts of the n overlapping m-bit patterns of each sample, wrapping around (m <= 32).

    For m <= 12: one histogram of the 16-bit windows starting at every 4-bit boundary (two
    bincounts of 4 values per word), then the m-bit patterns starting 0..3 bits into each
    window are marginals of it (exact integer sums, in float64 below 2^53).
    """
    k, s = samples.shape
    if m > 12:
        return _overlapping_counts_shifts(samples, m)
    lib = kernels.active()
    if lib is not None:
        return kernels.per_row(lib, "overlapping_counts", samples, 1 << m, m)
    octets = np.empty((k, 4 * s + 2), dtype=np.uint8)  # stream order (big-endian words), 2 bytes wrapped
    octets[:, :4 * s] = np.ascontiguousarray(samples, dtype=">u4").view(np.uint8).reshape(k, 4 * s)
    octets[:, 4 * s:] = octets[:, :2]
    wide = octets.astype(np.uint16)
    counts = np.empty((k, 1 << m), dtype=np.int64)
    for row in range(k):
        w = wide[row]
        even = (w[:-2] << np.uint16(8)) | w[1:-1]  # the 16 bits from bit 8b
        odd = (even << np.uint16(4)) | (w[2:] >> np.uint16(4))  # the 16 bits from bit 8b + 4
        h = (np.bincount(even, minlength=1 << 16) + np.bincount(odd, minlength=1 << 16)).astype(np.float64)
        c = np.zeros(1 << m)
        for o in range(4):  # the pattern starting o bits into the window: drop o high, 16-m-o low bits
            low = 1 << (16 - m - o)
            c += h.reshape(1 << o, -1).sum(axis=0).reshape(1 << m, low) @ np.ones(low)
        counts[row] = c.astype(np.int64)
    return counts


def _overlapping_counts_shifts(samples: np.ndarray, m: int) -> np.ndarray:
    """overlapping_counts by 32 shifted bincounts (any m <= 32)."""
    k, s = samples.shape
    pair = (samples.astype(np.uint64) << np.uint64(32)) | np.roll(samples, -1, axis=1).astype(np.uint64)
    mask = np.uint64((1 << m) - 1)
    offsets = (np.arange(k, dtype=np.uint64) << np.uint64(m))[:, None]
    counts = np.zeros(k << m, dtype=np.int64)
    for shift in range(32):
        values = ((pair >> np.uint64(64 - m - shift)) & mask) + offsets
        counts += np.bincount(values.reshape(-1).astype(np.intp), minlength=k << m)
    return counts.reshape(k, 1 << m)


class OverlappingPatterns(Accumulator):
    """NIST SP 800-22 rev1a sections 2.11 (Serial Test, m = 12) and 2.12 (Approximate
    Entropy Test, m = 10), from one count of the overlapping 12-bit patterns per sample.
    The aggregate sums the per-sample statistics (independent chi-squares; NIST's
    igamc(a, x/2) is a chi-square with 2a degrees of freedom)."""

    name = "nist.serial"
    budget = (8, 2 * MiB)  # reads 1/8 of the tier, at least 2 MiB (Accumulator.budget)
    cost_ns_per_word = 30
    source = "NIST SP 800-22 rev1a, sections 2.11 and 2.12"
    sample_words = SAMPLE_WORDS
    m_serial = 12
    m_apen = 10

    def measure(self, samples):
        n = self.sample_words * 32
        counts = overlapping_counts(samples, self.m_serial)
        by_m = {self.m_serial: counts}
        for m in range(self.m_serial - 1, self.m_apen - 1, -1):
            c = by_m[m + 1]
            by_m[m] = c[:, 0::2] + c[:, 1::2]  # drop the last bit: marginal of the (m)-bit prefix
        a = {m: (c * c).sum(axis=1) << m for m, c in by_m.items()}  # 2^m sum c^2 (exact)
        m = self.m_serial
        d1 = a[m] - a[m - 1]
        d2 = a[m] - 2 * a[m - 1] + a[m - 2]
        phi = {}
        for mm in (self.m_apen, self.m_apen + 1):
            c = by_m[mm] / n
            with np.errstate(divide="ignore", invalid="ignore"):
                phi[mm] = np.where(c > 0, c * np.log(np.where(c > 0, c, 1)), 0.0).sum(axis=1)
        apen = phi[self.m_apen] - phi[self.m_apen + 1]
        chi2_apen = 2.0 * n * (math.log(2) - apen)
        return {"d1": d1, "d2": d2, "apen_chi2": chi2_apen}, {"d1": d1.sum(), "d2": d2.sum()}

    def evaluate(self, records, totals, samples):
        n = self.sample_words * 32
        m = self.m_serial
        p1 = special.gammaincc(2 ** (m - 2), records["d1"] / n / 2)
        p2 = special.gammaincc(2 ** (m - 3), records["d2"] / n / 2)
        pa = special.gammaincc(2 ** (self.m_apen - 1), records["apen_chi2"] / 2)
        d1 = int(totals["d1"]) / n
        d2 = int(totals["d2"]) / n
        apen_total = math.fsum(records["apen_chi2"].tolist())
        results = [
            self.finding("aggregate", d1, pvalues.chi2(d1, 2 ** (m - 1) * samples), statistic_name="del psi^2", m=m),
            self.finding("aggregate", d2, pvalues.chi2(d2, 2 ** (m - 2) * samples), statistic_name="del^2 psi^2", m=m,
                         test="nist.serial2"),
            self.finding("aggregate", apen_total, pvalues.chi2(apen_total, 2 ** self.m_apen * samples),
                         m=self.m_apen, test="nist.approximate_entropy"),
        ]
        for name, first in (("nist.serial", p1), ("nist.serial2", p2), ("nist.approximate_entropy", pa)):
            for entry in self.second_level_ks(first):
                entry["test"] = name
                results.append(entry)
        for entry in results:
            entry["source"] = ("NIST SP 800-22 rev1a, section 2.12" if entry["test"] == "nist.approximate_entropy"
                               else "NIST SP 800-22 rev1a, section 2.11")
        return results
