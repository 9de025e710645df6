"""Statistical batteries: is a stream statistically sound, across lanes, bits, keys and counters?

Modules (each test cites its source: NIST SP 800-22 rev1a section, Knuth TAOCP vol. 2
section 3.3.2, or the TestU01 user's guide):

  accumulators     the streaming, mergeable shape of every test (update / merge / result)
  pvalues          p-values from exact distributions or scipy survival functions; display
  bits             how words are read as bits; walk extremes
  nist/            NIST SP 800-22, the 15 tests (reference function and streaming form of each),
                   one module per kind: frequency (monobit, block frequency, cumulative sums),
                   runs (runs, longest run), matrix_rank, spectral (DFT), templates (non-overlapping,
                   overlapping), complexity (Maurer's universal, linear complexity), entropy (serial,
                   approximate entropy), excursions (random excursions and variant); common (shared)
  knuth            bytes and 16-bit chi-square, gap, poker, coupon collector, maximum-of-t, runs up
  testu01          birthday spacings, Hamming weight and independence, collision, random walk
  lanes            per (Philox lane, bit position) frequency and lag-1 / lag-4 agreement
  linear           linear complexity of long bit sequences (GF(2)-linear generators)
  rank             binary rank of large matrices (linear generators with a small state)
  practrand_kinds  tests of the kinds that give PractRand its power
  streams          sources: a backend's operator, a raw file / stdin, generator functions; XOR pairs
  weak_generators  weak generators and good controls (power measurements)
  distributions    goodness of fit of the numbers layer's uniform, normal and truncated normal
                   (rngcheck.numbers conventions): support, chi-square bins, lattice, tails, moments,
                   pair products; ``rngcheck stats --distribution`` (docs/distribution-stats.md)
  tiers            the tiers and byte counts (light: imported when the command line is built)
  battery          which tests, tiers, verdicts (PASS / SUSPECT / FAIL, retest), the result document
  checkpoint       checkpoints of a battery run cut into ranges (finished ranges survive a killed client)
  distributed      the battery's ranges on Dask (a LocalCluster, or a scheduler's address)
  peers            real peers: an installed tool (dieharder) reads the same stream, beside ours
  command          ``rngcheck stats`` (add_arguments / run)
  nist_options     ``rngcheck nist``'s command line: its options and sts-2.1.2's parameters
  nist_sts         ``rngcheck nist``: NIST's own SP 800-22 workflow (sts-2.1.2's), its document
"""

from .tiers import TIERS

__all__ = ["TIERS", "run"]


def run(*args, **kwargs):
    """rngcheck.stats.battery.run (imported when called: it brings scipy)."""
    from .battery import run as _run

    return _run(*args, **kwargs)
