"""NIST SP 800-22 rev1a 2.6, Discrete Fourier Transform (Spectral): the reference function
and the streaming form (with the corrected variance).
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels, pvalues
from ..accumulators import Accumulator
from ..special import special
from ..tiers import MiB


def spectral(bits) -> float:
    """2.6 Discrete Fourier Transform (Spectral) Test, as published (variance n*0.95*0.05/4)."""
    x = 2.0 * np.asarray(bits, dtype=np.float64) - 1.0
    n = x.size
    modulus = np.abs(np.fft.rfft(x))[: n // 2]  # the first n/2 terms of the DFT (rfft: the same terms)
    threshold = math.sqrt(math.log(1 / 0.05) * n)
    n0 = 0.95 * n / 2.0
    n1 = int((modulus < threshold).sum())
    d = (n1 - n0) / math.sqrt(n * 0.95 * 0.05 / 4.0)
    return float(special.erfc(abs(d) / math.sqrt(2)))


class Spectral(Accumulator):
    """NIST SP 800-22 rev1a section 2.6 (Discrete Fourier Transform Test), on 2^16-bit samples.

    The published variance n*0.95*0.05/4 is known to be too small (Kim, Umeno, Hasegawa,
    IACR ePrint 2004/018; Pareschi, Rovatti, Setti 2012), which makes the p-values
    non-uniform: the battery uses the corrected variance n*0.95*0.05/3.8 and pools the
    count of peaks below the threshold over all samples (aggregate only, a z-test).
    """

    name = "nist.spectral"
    budget = (32, 1 * MiB)  # reads 1/32 of the tier, at least 1 MiB (Accumulator.budget)
    cost_ns_per_word = 350
    source = "NIST SP 800-22 rev1a, section 2.6 (variance per Kim et al. 2004)"
    sample_words = 1 << 11
    second_level = False
    batch_words = 1 << 14  # 8 transforms at once: their arrays stay in the caches (a third faster than 128)

    def measure(self, samples):
        n = self.sample_words * 32
        # NIST transforms x = 2 bit - 1; for every term but DC, DFT(2 bit - 1) = 2 DFT(bit), so
        # |X| < T is |DFT(bit)| < T / 2 (the same counts, without the +-1 array)
        half = math.sqrt(math.log(1 / 0.05) * n) / 2
        lib = kernels.active()
        below = kernels.spectral_below(lib, samples, half) if lib is not None else self._below(samples, half)
        return {"below": below}, {"below": below.sum()}

    @staticmethod
    def _below(samples, half):
        """Per sample, the DFT terms 1 .. n/2 - 1 whose modulus is below ``half``: numpy
        (kernels.spectral_below: the same rfft, the rest in C)."""
        k = samples.shape[0]
        octets = np.ascontiguousarray(samples, dtype=">u4").view(np.uint8).reshape(k, -1)
        bits = np.unpackbits(octets, axis=1).astype(np.float64)  # most significant bit first
        n = bits.shape[1]
        modulus = np.abs(np.fft.rfft(bits, axis=1))[:, 1: n // 2]  # without the DC term (not complex-normal)
        return (modulus < half).sum(axis=1)

    def evaluate(self, records, totals, samples):
        n = self.sample_words * 32
        n0 = 0.95 * (n / 2.0 - 1) * samples
        d = (int(totals["below"]) - n0) / math.sqrt(n * 0.95 * 0.05 / 3.8 * samples)
        return [self.finding("aggregate", d, pvalues.normal_two_sided(d), variance="n*0.95*0.05/3.8")]
