"""NIST SP 800-22 rev1a tests (Rukhin et al., NIST Special Publication 800-22 Revision 1a, 2010),
one module per kind of test:

  common       the sample size, DoesNotApply (a reason in a p-value's place), m-bit windows
  frequency    2.1 Frequency (Monobit), 2.2 Frequency within a Block, 2.13 Cumulative Sums
  runs         2.3 Runs, 2.4 Longest Run of Ones in a Block
  matrix_rank  2.5 Binary Matrix Rank (GF(2) ranks)
  spectral     2.6 Discrete Fourier Transform (Spectral)
  templates    2.7 Non-overlapping and 2.8 Overlapping Template Matching
  complexity   2.9 Maurer's Universal Statistical Test, 2.10 Linear Complexity
  entropy      2.11 Serial, 2.12 Approximate Entropy (overlapping m-bit patterns)
  excursions   2.14 Random Excursions, 2.15 Random Excursions Variant

Two forms of each test, side by side in its module:
  * a reference function on a 0/1 bit array that follows the document step by step and
    reproduces its worked examples (tests/test_stats_nist.py checks them all) and the p-values
    NIST's program sts-2.1.2 prints for e, pi, sqrt 2 and sqrt 3 (rev1a Appendix B, to six
    decimals: tests/test_stats_nist_sts.py). Where the text and sts-2.1.2 differ (longest-run
    and linear complexity tables, rank and overlapping-template probabilities) the function
    follows the program, and says so; the text's variant stays available. All 15 tests;
    ``rngcheck nist`` (stats/nist_sts.py) runs them on sequences as sts does;
  * a streaming accumulator on 32-bit words (bit order: rngcheck.stats.bits), vectorised,
    checked against the reference function on random data, for the battery.

A sample is 2^20 bits (2^15 words; NIST suggests n >= 10^6). Each accumulator reports
the test on the whole stream ("aggregate": the counts of every sample pooled, the most
powerful form against a small constant bias) and the second level (KS on the per-sample
p-values, NIST section 4.2.2).

This package's namespace (``nist.monobit``, ``nist.Monobit``, ...) is the one the battery,
``rngcheck nist``, the tests and the benchmark use; the modules import each other directly.
"""

from __future__ import annotations

from .common import SAMPLE_WORDS, DoesNotApply
from .complexity import (
    LINEAR_COMPLEXITY_PI,
    LINEAR_COMPLEXITY_PI_EXACT,
    UNIVERSAL_MIN_N,
    UNIVERSAL_TABLE,
    LinearComplexity,
    Universal,
    linear_complexities,
    linear_complexity,
    linear_complexity_classes,
    universal,
    universal_parameters,
    universal_sigma,
    universal_statistic,
)
from .entropy import (
    OverlappingPatterns,
    _overlapping_counts_shifts,
    _window_counts,
    approximate_entropy,
    overlapping_counts,
    serial,
)
from .excursions import (
    EXCURSION_STATES,
    MIN_CYCLES,
    VARIANT_STATES,
    RandomExcursions,
    _walk_cycles,
    excursion_probabilities,
    excursion_table,
    random_excursions,
    random_excursions_variant,
    variant_visits,
)
from .frequency import BlockFrequency, CumulativeSums, Monobit, block_frequency, cumulative_sums, cusum_p, monobit
from .matrix_rank import RANK_PROBABILITIES_PUBLISHED, MatrixRank, gf2_rank, gf2_rank32, matrix_rank, rank_probabilities
from .runs import (
    LONGEST_RUN_TABLE,
    STS_LONGEST_RUN_PROBABILITIES,
    LongestRun,
    Runs,
    longest_run,
    longest_run_probabilities,
    longest_runs,
    runs,
)
from .spectral import Spectral, spectral
from .templates import (
    NON_OVERLAPPING_BLOCKS,
    NonOverlappingTemplate,
    OverlappingTemplate,
    aperiodic_templates,
    non_overlapping_moments,
    non_overlapping_template,
    overlapping_classes,
    overlapping_probabilities,
    overlapping_probabilities_exact,
    overlapping_template,
    template_counts,
)

# _window_counts, _overlapping_counts_shifts and _walk_cycles: helpers the tests check directly
__all__ = [
    "BlockFrequency",
    "CumulativeSums",
    "DoesNotApply",
    "EXCURSION_STATES",
    "LINEAR_COMPLEXITY_PI",
    "LINEAR_COMPLEXITY_PI_EXACT",
    "LONGEST_RUN_TABLE",
    "LinearComplexity",
    "LongestRun",
    "MIN_CYCLES",
    "MatrixRank",
    "Monobit",
    "NON_OVERLAPPING_BLOCKS",
    "NonOverlappingTemplate",
    "OverlappingPatterns",
    "OverlappingTemplate",
    "RANK_PROBABILITIES_PUBLISHED",
    "RandomExcursions",
    "Runs",
    "SAMPLE_WORDS",
    "STS_LONGEST_RUN_PROBABILITIES",
    "Spectral",
    "UNIVERSAL_MIN_N",
    "UNIVERSAL_TABLE",
    "Universal",
    "VARIANT_STATES",
    "_overlapping_counts_shifts",
    "_walk_cycles",
    "_window_counts",
    "aperiodic_templates",
    "approximate_entropy",
    "block_frequency",
    "cumulative_sums",
    "cusum_p",
    "excursion_probabilities",
    "excursion_table",
    "gf2_rank",
    "gf2_rank32",
    "linear_complexities",
    "linear_complexity",
    "linear_complexity_classes",
    "longest_run",
    "longest_run_probabilities",
    "longest_runs",
    "matrix_rank",
    "monobit",
    "non_overlapping_moments",
    "non_overlapping_template",
    "overlapping_classes",
    "overlapping_counts",
    "overlapping_probabilities",
    "overlapping_probabilities_exact",
    "overlapping_template",
    "random_excursions",
    "random_excursions_variant",
    "rank_probabilities",
    "runs",
    "serial",
    "spectral",
    "template_counts",
    "universal",
    "universal_parameters",
    "universal_sigma",
    "universal_statistic",
    "variant_visits",
]
