"""The battery: which tests, how much data (tiers), verdicts, retests, the result document.

Result document (JSON; schema "rngcheck-stats", schema_version 1), flat on purpose:

  schema, schema_version      "rngcheck-stats", 1
  tier                        "smoke" | "standard" | "deep"
  seed                        the key of a backend stream (64-bit), or null for a raw stream
  source                      what was read: backend describe() + key/counter, or the raw file
  reproduce                   the command line that reproduces this document
  bytes_requested             the tier's size of the main stream
  bytes_tested                bytes of the main stream actually read (retests and
                              inter-stream streams not included)
  complete                    false when the stream ended before the tier's size, or the run
                              was interrupted, or the backend failed
  interrupted                 true when Ctrl-C or SIGTERM stopped it (absent otherwise)
  backend_failed              true when the backend crashed, hung or broke its protocol while
                              a stream was read (absent otherwise); message says which
  message                     why not complete ("" otherwise)
  thresholds                  {"suspect", "fail", "tests", "family_false_suspect", "family_false_fail"}
  verdict                     "PASS" | "FAIL" | "SUSPECT" (SUSPECT only when no fresh data was
                              left to retest) | "INCOMPLETE" (not complete, or nothing could
                              run; a FAIL found on the data there was still says FAIL)
  counts                      {"PASS": n, "SUSPECT": n, "FAIL": n} over the results
  elapsed_seconds, throughput_mb_s
  results                     list, one entry per p-value:
      test          e.g. "nist.monobit", "lanes.lag4.worst", "knuth.gap.nibble0"
      stream        "main", or the inter-stream pair "xor key+1" ...
      level         "aggregate" (whole stream pooled), "second-level" (KS of per-sample
                    p-values), "worst-cell", "min-of-samples"
      source        the literature reference (NIST section, Knuth section, TestU01 guide)
      statistic     the test statistic (float)
      p_value       P(T >= t), float (may underflow to 0.0: read p_display / log10_p);
                    null for a degenerate statistic (no events at all: judged FAIL)
      q_value       P(T <= t) when a too-good fit is also a defect, else null
      log10_p       log10 of p_value, finite even when p_value underflows where the
                    tail's asymptote is known; else null
      p_display     text that never rounds to 0 or 1 ("< 1e-300", "1 - 3e-12")
      verdict       "PASS" | "SUSPECT" | "FAIL" (after the retest)
      first_verdict the verdict on the first range, before any retest
      retest        null, or {"p_value", "q_value", "p_display", "words_from", "verdict"}
      samples, sample_words, parameters, and test-specific numbers
  not_run                     [{"test", "stream", "reason"}]: tests that needed more data

The tests are TESTS, a rngcheck.registry.Registry of BatteryTest under the name their results
carry, in the order they run and are reported (main_tests: those of a tier; INTERSTREAM_TESTS:
an XOR pair's). Tiers (bytes of the main stream; --bytes overrides): smoke 8 MiB (seconds: a CI gate), standard
256 MiB (seconds on 2 cores: about 4.5 CPU-seconds, benchmarks/bench_stats.py), deep 4 GiB by
default. Every test reads the whole main stream except the slowest ones (each says its
Accumulator.budget: matrix rank, serial/ApEn, cumulative sums, coupon collector read 1/8 of it,
at least 2 MiB; the spectral test 1/32, at least 1 MiB; SP 800-22's template, universal and
random excursion tests 1/128, at least 2 MiB; its linear complexity test 1/256, at least 2 MiB,
and only in the deep tier: its from_tier; the collision count of whole words 1/16, at least 4 MiB (one
sample of 2^20 words); the PractRand kinds 1/16 (block weights, power lags),
1/32 (weight tuples, float frequency) or 1/64 (gap-16), at least one sample each; the binary
ranks of large matrices (rank.SCHEDULE: 256 x 256 of whole words, low bytes, bit 0, bit 0 of
64-bit outputs, bit 31 from the smoke tier, 1024 x 1024 from standard, 2048 x 2048 in deep,
each 1/128 to 1/1024 of the tier, at least 1-4 MiB) and the long linear complexity (one
sequence per (stride, bit) of linear.SEQUENCES from the stream's first words: linear_bits;
the short one on every bit position); each result's "bytes" says what it read. Where the
source has neighbour streams (a backend, or a
Philox reference stream), three XOR pairs are tested too (streams.NEIGHBOURS: key k0+1, key
k1+1, counter + 2^96), each on 1/8 of the tier's bytes (at least 1 MiB), with lanes, monobit,
bytes and Hamming-weight tests. A seekable, fork-safe stream of 128 MiB or more is read by one
process per core the run may use (cores(): its CPU affinity), in contiguous pieces handed to
whichever process is free, each piece the work left shared among twice the processes (modelled:
work_model, each test's cost_ns_per_word; the slow tests' budgets make the stream's start dearer),
smaller and smaller down to 1/32 of the whole with 2 processes (GuidedCuts), and merged in order
while the others are read; results are those of one pass.
The hot loops of the tests are compiled C where a compiler is found (kernels.py), numpy
otherwise, with the same results. While a chunk is fed to the accumulators,
histograms and weights derived from it are computed once and shared (accumulators.shared_chunk).

Verdicts. A result's tail probability t is p, or for two-tailed statistics (q not null)
2 min(p, q). With m results in the battery:
  * FAIL at once when t < 1e-10 (TestU01's "clear failure" level): a good stream does this
    with probability at most m x 1e-10;
  * SUSPECT when t < a_s = 1 - 0.99^(1/m) (Sidak): a good stream has some SUSPECT result
    with probability about 1%;
  * a SUSPECT is re-run on fresh data (the next range of the same stream: the next counter
    range for a backend) of the same size, and becomes FAIL only if the retest is again
    below a_s; otherwise PASS ("resolved"). The family-wise false-FAIL rate is therefore
    about m x 1e-10 + 0.01 x a_s, below 1e-4 per run for any m here (the discrete and
    asymptotic null distributions make the real rate differ a little: the benchmark
    measures it on 100 seeds).
"""

from __future__ import annotations

import functools
import math
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends.lifetime import die_with_parent
from ..errors import BackendProcessFailed, BackendStopped, RemoteError, RngcheckError, one_line
from ..registry import Registry
from ..results.verdicts import STATS_FAIL, STATS_JUDGED, STATS_PASS, STATS_SUSPECT, stats_verdict
from . import kernels, knuth, lanes, linear, nist, practrand_kinds, rank, testu01
from .accumulators import Accumulator, shared_chunk
from .special import import_beside, import_settled
from .streams import NEIGHBOURS, XorSource
from .tiers import TIERS, MiB, cores, parse_bytes  # noqa: F401  (one home: stats/tiers.py)

CHUNK_WORDS = 1 << 22  # 16 MiB read at once (the coupon collector's chains want many samples)
PARALLEL_MIN_WORDS = 8 * CHUNK_WORDS  # 32 Mi words (128 MiB): below it one process is about as fast
FAIL_AT = 1e-10
FAMILY_SUSPECT = 0.01

# The long linear complexity (linear.py) reads one sequence of n bits per (stride, bit) from
# the stream's first stride x n words: n = 2^15 below DEEP_LINEAR_BYTES (MT19937's complexity, 19937, is then out of
# reach: it passes, as it passes Crush), 2^17 from there on (it fails, as in BigCrush).
# A short one (2^12 bits, from the first 32 KiB) on every bit position of the words and of
# 64-bit outputs (linear.EVERY_BIT) sees small states (xorshift32, a lagged Fibonacci, a
# combined Tausworthe, a linear bit under nonlinear ones) in the smallest streams.
DEEP_LINEAR_BYTES = 1 << 30
SHORT_LINEAR_BITS = 1 << 12


def linear_bits(nbytes: int | None) -> int:
    return 1 << 17 if nbytes is not None and nbytes >= DEEP_LINEAR_BYTES else 1 << 15


INTERSTREAM_SHARE = 8  # each neighbour pair reads 1/8 of the main stream's bytes (at least 1 MiB, at most all)


def slow_budget(budget: tuple[int, int], nbytes: int) -> int:
    """The bytes a test with ``budget`` (Accumulator.budget: divisor, floor) reads of ``nbytes``."""
    divisor, floor = budget
    return min(nbytes, max(floor, nbytes // divisor))


def budgeted(factory, nbytes: int):
    """The factory, with its test's budget applied (Accumulator.budget)."""
    def make(start=0):
        acc = factory(start=start)
        if acc.budget is not None:
            acc.max_samples = max(1, slow_budget(acc.budget, nbytes) // (4 * acc.sample_words))
        return acc
    return make


@dataclass(frozen=True)
class BatteryTest:
    """One test of the battery, as TESTS holds it: how its accumulator is built, and the smallest
    tier it joins (the accumulator's from_tier)."""
    factory: Callable[..., Any]   # factory(start=..., **sized(nbytes)) -> an Accumulator
    from_tier: str = "smoke"
    sized: Callable[[int | None], dict] | None = None  # parameters set by the tier's bytes, if any

    def factory_for(self, nbytes: int | None) -> Callable[..., Any]:
        """The factory (called with start=...) for a tier of ``nbytes`` bytes."""
        return self.factory if self.sized is None else functools.partial(self.factory, **self.sized(nbytes))


def _register_tests() -> None:
    """Fills TESTS (rngcheck.registry rule 2): the battery's tests, each under the name its
    results carry, in the order they run and are reported."""
    def add(test_class: type[Accumulator], name: str | None = None, sized=None, **parameters) -> None:
        factory = functools.partial(test_class, **parameters) if parameters else test_class
        TESTS.add(name or test_class.name, BatteryTest(factory, test_class.from_tier, sized))

    test_class: type[Accumulator]
    for test_class in (nist.Monobit, nist.BlockFrequency, nist.Runs, nist.LongestRun, nist.MatrixRank,
                       nist.OverlappingPatterns, nist.CumulativeSums, nist.Spectral,
                       knuth.ByteFrequency, knuth.Frequency16):
        add(test_class)
    for nibble in (7, 0):
        add(knuth.Gap, f"{knuth.Gap.name}.nibble{nibble}", nibble=nibble)
    for test_class in (knuth.Poker, knuth.CouponCollector, knuth.MaximumOfT, knuth.RunsUp, knuth.RunsDown,
                       testu01.BirthdaySpacings, testu01.HammingWeight, testu01.Collision, testu01.WordCollision,
                       testu01.RandomWalk,
                       lanes.LaneBits,
                       nist.OverlappingTemplate, nist.NonOverlappingTemplate, nist.Universal,
                       nist.RandomExcursions, nist.LinearComplexity,
                       practrand_kinds.BlockWeights, practrand_kinds.WeightWindows, practrand_kinds.FloatFrequency,
                       practrand_kinds.Gap16, practrand_kinds.PowerLags):
        add(test_class)
    add(linear.LinearComplexity, f"{linear.LinearComplexity.name}.n{SHORT_LINEAR_BITS}.every_bit",
        bits=SHORT_LINEAR_BITS, every=True)
    # the long one: its n (and so its results' name) by the tier's bytes (linear_bits)
    add(linear.LinearComplexity, sized=lambda nbytes: {"bits": linear_bits(nbytes)})
    for name, factory, from_tier in rank.battery_tests():
        TESTS.add(name, BatteryTest(factory, from_tier))


TESTS: Registry[BatteryTest] = Registry("statistical test", load=_register_tests)
# The tests of an inter-stream XOR pair (TESTS' names), in their order
INTERSTREAM_TESTS = (lanes.LaneBits.name, nist.Monobit.name, knuth.ByteFrequency.name, testu01.HammingWeight.name)


def main_tests(tier: str = "deep", nbytes: int | None = None) -> list:
    """Accumulator factories of the main battery (each called with start=...) in ``tier``, in
    TESTS' order; ``nbytes``, the tier's size, sets the long linear-complexity sequence (linear_bits)."""
    order = list(TIERS)
    return [test.factory_for(nbytes) for test in TESTS.values()
            if order.index(test.from_tier) <= order.index(tier)]


def interstream_tests() -> list:
    """Accumulator factories of an inter-stream XOR pair (INTERSTREAM_TESTS)."""
    return [TESTS.get(name).factory for name in INTERSTREAM_TESTS]


# ----------------------------------------------------------------------------------------
# Feeding accumulators (one process, or contiguous ranges in several and merged).
# ----------------------------------------------------------------------------------------

def feed(source, factories, words: int, start: int = 0, chunk: int = CHUNK_WORDS, tick=None):
    """Read up to ``words`` words from ``source`` (positioned at ``start``) into new accumulators;
    ``tick(n)`` after each block of n words (progress)."""
    accs = [factory(start=start) for factory in factories]
    read = 0
    while read < words:
        asked = min(chunk, words - read)
        block = source.read(asked)
        with shared_chunk():  # histograms and weights derived from this block are computed once
            for acc in accs:
                acc.update(block)
        read += block.size
        if tick:
            tick(block.size)
        if block.size < asked:
            break  # the stream ended
    return accs, read


def work_model(factories):
    """work(x): the modelled cost of words 0 .. x-1 of the stream (ns): each test's cost per word
    on the path that runs (kernels.cost_ns_per_word), the budgeted ones only up to their budget
    (Accumulator.budget: the start of the stream is dearer than its end)."""
    fixed, limited = 0.0, []
    for factory in factories:
        acc = factory(start=0)
        cost = kernels.cost_ns_per_word(acc)  # on the path that runs: compiled or numpy
        if acc.max_samples is None:
            fixed += cost
        else:
            limited.append((cost, acc.max_samples * acc.sample_words))

    def work(x):  # work of words 0 .. x-1
        return fixed * x + sum(c * min(x, b) for c, b in limited)

    return work


def _cut(work, lo: int, words: int, target: float, align: int) -> int:
    """The cut after ``lo``: the smallest x with work(x) >= target, on a multiple of ``align``,
    at least one align step past ``lo`` (a dear start, the linear complexity's first sample, must
    not merge two pieces into one), at most ``words``."""
    a, b = lo, words
    while b - a > 1:
        mid = (a + b) // 2
        a, b = (mid, b) if work(mid) < target else (a, mid)
    return min(words, max(lo + align, round(b / align) * align))


def balanced_ranges(factories, words: int, pieces: int, align: int = 1 << 19):
    """Contiguous (start, count) ranges of about equal work (work_model). Boundaries on multiples
    of ``align`` words (merge would join cut samples anyway)."""
    work = work_model(factories)
    total = work(words)
    bounds = [0]
    for j in range(1, pieces):
        cut = _cut(work, bounds[-1], words, total * j / pieces, align)
        if bounds[-1] < cut < words:
            bounds.append(cut)
    bounds.append(words)
    return [(a, b - a) for a, b in zip(bounds, bounds[1:])]


# Guided pieces (feed_parallel): each piece handed to a free process is the work left, shared
# among GUIDED_SHARE x the processes (the first a quarter of the stream's work with 2 processes),
# down to 2 / (GUIDED_SMALLEST x processes) of the whole; the last pieces are small, so the
# processes end together even where a test costs more or less here than its cost_ns_per_word says
# (measured on an AMD EPYC: the spectral test 1.4x, the birthday spacings 1.6x, the gap test
# 0.2x). 12 pieces for 2 processes (11 since they are cut on 2^20 words: piece_align); measured
# there (three runs each, standard tier of 256 MiB), the two processes ended 0.00-0.04 s apart,
# against 0.01-0.29 s with a smallest piece of 1/8 (7 pieces) and 0.1-0.33 s with 4 pieces of
# equal modelled work; a piece costs about 10-15 ms of CPU (its accumulators, their results sent
# back, the merge).
GUIDED_SHARE = 2
GUIDED_SMALLEST = 32


class GuidedCuts:
    """The next contiguous (start, count) range of the stream for a process that is free (guided
    self-scheduling: a piece is the work left / (GUIDED_SHARE x processes), no less than the whole
    work / (GUIDED_SMALLEST x processes / 2) where it can, the rest when less is left)."""

    def __init__(self, factories, words: int, workers: int, align: int):
        self.work, self.words, self.workers, self.align = work_model(factories), words, workers, align
        self.total = self.work(words)
        self.position = 0

    def next(self) -> tuple[int, int] | None:
        if self.position >= self.words:
            return None
        done = self.work(self.position)
        share = max((self.total - done) / (GUIDED_SHARE * self.workers),
                    self.total * 2 / (GUIDED_SMALLEST * self.workers))
        cut = _cut(self.work, self.position, self.words, done + share, self.align)
        piece = (self.position, cut - self.position)
        self.position = cut
        return piece


def piece_align(factories, words: int, workers: int) -> int:
    """Where pieces may be cut: on multiples of the largest sample (every test's samples are powers
    of two words, so no sample is cut in two and no piece sends back the words of one: cut on 2^18
    words, the standard tier's pieces sent 8-13 MB each, pickled, piped, unpickled and merged; two
    processes used 3.62 s of CPU and 2.07 s of wall where they now use 2.88 s and 1.63 s), no
    coarser than a smallest guided piece of the stream."""
    largest = max((factory(start=0).sample_words for factory in factories), default=1)
    return max(1, min(largest, words // (GUIDED_SMALLEST * workers)))


_JOB: dict[str, Any] = {}


def _worker(start: int, count: int):
    source, factories, offset = _JOB["source"], _JOB["factories"], _JOB["offset"]
    return feed(source.at(offset + start), factories, count, start=start)


def feed_parallel(source, factories, words: int, workers: int, offset: int = 0, tick=None,
                  min_words: int | None = None):
    """Words offset .. offset+words-1 of ``source``: cut into contiguous pieces (GuidedCuts: each
    process is given the next one when it is free, smaller and smaller), read by ``workers``
    processes, and merged in order (map-reduce). Without a seekable, fork-safe source: one process,
    reading on from the source's current position (``offset`` must then be where it is).
    ``min_words``: the fewest words worth forking for (PARALLEL_MIN_WORDS by default)."""
    if min_words is None:
        min_words = PARALLEL_MIN_WORDS
    if workers <= 1 or not source.seekable or not getattr(source, "fork_safe", False) or words < min_words:
        here = not source.seekable or getattr(source, "position", None) == offset
        return feed(source if here else source.at(offset), factories, words, tick=tick)
    cuts = GuidedCuts(factories, words, workers, piece_align(factories, words, workers))
    _JOB.update(source=source, factories=factories, offset=offset)
    import_settled()  # no import half done in a thread when the workers are forked
    try:
        context = multiprocessing.get_context("fork")
    except ValueError:
        _JOB.clear()
        return feed(source, factories, words, tick=tick)
    # concurrent.futures, not multiprocessing.Pool: a dead worker fails the run instead of hanging it.
    # The workers die with this process (PR_SET_PDEATHSIG), and are killed at once when it stops
    # early (an interrupt, SIGTERM, a dead sibling) instead of finishing their ranges.
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=die_with_parent, initargs=(os.getpid(),))
    reading = _Pieces(pool, cuts, offset)
    finished = False
    try:
        for _ in range(workers + 1):  # one piece queued beyond the processes: none waits for this one
            reading.hand_out()
        # the workers are forked (all at the first submit): this process, idle until they end, loads
        # the p-values' special functions meanwhile. Not in one process: the import would take the GIL
        # from the reading for as long as it saves (measured: the same wall time, more CPU)
        import_beside()
        while reading.pending:
            done, _ = wait(reading.pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: reading.pending[f][0]):
                count = reading.collect(future)
                if tick:
                    tick(count)
                reading.hand_out()
            reading.absorb()
        finished = True
    finally:
        _JOB.clear()
        if not finished:
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                try:
                    process.kill()
                except (OSError, AttributeError):
                    pass
        pool.shutdown(wait=finished, cancel_futures=not finished)
    import_settled()  # the special functions loaded beside the reading: the p-values come next
    return reading.accs, reading.read


class _Pieces:
    """One feed_parallel's pieces: handed to the pool (GuidedCuts), collected, merged in order."""

    def __init__(self, pool, cuts: GuidedCuts, offset: int):
        self.pool, self.cuts, self.offset = pool, cuts, offset
        self.pending: dict[Future, tuple[int, int]] = {}
        self.parts: dict[int, tuple] = {}          # start -> (accumulators, words read), not merged yet
        self.order: list[tuple[int, int]] = []     # the pieces handed out and not merged, in stream order
        self.accs: list | None = None              # the merged accumulators of the stream's first pieces
        self.read = 0                              # and the words they read
        self.ended = False                         # a merged piece read less than it asked: the stream ended

    def lost(self, start: int, count: int) -> RngcheckError:
        return RngcheckError(
            f"a worker process died (killed, or out of memory) before words {self.offset + start}.."
            f"{self.offset + start + count - 1} were read; the run stopped (--workers 1 reads in this "
            "process; --dask re-runs lost ranges)")

    def hand_out(self) -> None:
        piece = self.cuts.next()
        if piece is not None:
            self.order.append(piece)
            try:
                self.pending[self.pool.submit(_worker, *piece)] = piece
            except BrokenProcessPool:  # a worker died while another piece was being read
                raise self.lost(*piece) from None

    def collect(self, future) -> int:
        """A finished piece's accumulators, kept until its turn to merge; its word count."""
        start, count = self.pending.pop(future)
        try:
            self.parts[start] = future.result()
        except BrokenProcessPool:
            raise self.lost(start, count) from None
        return count

    def absorb(self) -> None:
        """Merge the pieces that follow the merged ones, while the workers read on (the merge is
        then not left to the end), and settle the tests whose budget is read (their p-values not
        left to the end either: 23 tests, 0.135 s of the parent's 0.16 s in a standard-tier run). A
        piece that read less than it asked (the stream ended) is the last: the ones after it are not
        contiguous."""
        while self.order and self.order[0][0] in self.parts and not self.ended:
            start, asked = self.order.pop(0)
            accs, read = self.parts.pop(start)
            if self.accs is None:
                self.accs = accs
            else:
                for acc, other in zip(self.accs, accs):
                    acc.merge(other)
            self.read += read
            self.ended = read < asked
        if self.accs is not None and (self.order or self.pending):   # the workers read on meanwhile
            for acc in self.accs:
                if acc.budget_read:
                    acc.settle()


# ----------------------------------------------------------------------------------------
# Verdicts.
# ----------------------------------------------------------------------------------------

def tail(entry) -> float:
    """t of the module docstring: the false-alarm probability of a result this extreme."""
    p, q = entry["p_value"], entry.get("q_value")
    if p is None or p != p:  # a degenerate statistic (e.g. no event at all where thousands were expected)
        return 0.0
    if q is None:
        return p
    return min(1.0, 2.0 * min(p, q))


def suspect_level(m: int) -> float:
    return -math.expm1(math.log1p(-FAMILY_SUSPECT) / max(m, 1))


def judge(entry, suspect_at: float) -> str:
    t = tail(entry)
    if t < FAIL_AT:
        return STATS_FAIL
    if t < suspect_at:
        return STATS_SUSPECT
    return STATS_PASS


def judge_first(results: list[dict]) -> float:
    """Each result's first verdict at the family's suspect level (returned): the retest comes later."""
    suspect_at = suspect_level(max(len(results), 1))
    for entry in results:
        entry["first_verdict"] = entry["verdict"] = judge(entry, suspect_at)
        entry["retest"] = None
    return suspect_at


def record_retest(entry: dict, again: dict, suspect_at: float, **where) -> None:
    """A SUSPECT result retested on fresh data (``again``): FAIL unless the retest passes; the
    retest's p-value, its own verdict and ``where`` it read are kept (PractRand-style escalation)."""
    verdict = judge(again, suspect_at)
    entry["retest"] = {"p_value": again["p_value"], "q_value": again["q_value"], "p_display": again["p_display"],
                       **where, "verdict": verdict}
    entry["verdict"] = STATS_FAIL if verdict != STATS_PASS else STATS_PASS


def _key(entry):
    return entry["test"], entry["level"], entry.get("stream", "main")


# ----------------------------------------------------------------------------------------
# The battery.
# ----------------------------------------------------------------------------------------

def run(source, *, tier: str = "smoke", nbytes: int | None = None, seed=None, reproduce: str = "",
        workers: int | None = None, interstream: bool = True, progress=None, executor=None) -> dict:
    """Run the battery on ``source``; return the result document (see module docstring).

    The steps: the streams to read (``stream_groups``: the main stream, and the XOR pairs of its
    neighbours), reading them (``read_streams``), the first verdicts (``judge_first``), the
    retest of every SUSPECT on fresh data (``retest_suspects``), the document (``document``).

    ``executor``: feeds every stream elsewhere, range by range, with the same results
    (``executor.feed(source, factories, words, offset=, stream=)`` like ``feed``; e.g.
    distributed.DaskExecutor); its ``execution()`` goes into the document as "execution"."""
    began = time.perf_counter()
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}")
    nbytes = int(nbytes or TIERS[tier])
    workers = workers or cores()
    say = progress or (lambda text: None)
    groups = stream_groups(source, tier, nbytes, interstream)
    reading = read_streams(groups, tier, workers=workers, progress=progress, executor=executor)
    suspect_at = judge_first(reading.results)
    if not reading.interrupted:
        retest_suspects(source, reading, suspect_at, workers=workers, say=say, executor=executor)
    doc = document(reading, source=source, tier=tier, nbytes=nbytes, seed=seed, reproduce=reproduce,
                   suspect_at=suspect_at, elapsed=time.perf_counter() - began)
    if executor is not None and hasattr(executor, "execution"):
        doc["execution"] = executor.execution()
    return doc


@dataclass(frozen=True)
class StreamGroup:
    """One stream the battery reads, and the tests it reads it with."""
    name: str          # "main", or "xor <neighbour kind>"
    source: Any        # a streams.Source
    factories: list    # accumulator factories (each called with start=...)
    words: int         # words to read


@dataclass
class Reading:
    """What reading the streams gave (read_streams), the retests add to it (retest_suspects)."""
    results: list = field(default_factory=list)   # one entry per p-value, in stream then test order
    not_run: list = field(default_factory=list)   # {"test", "stream", "reason"}: too little data
    groups_read: dict = field(default_factory=dict)  # stream name -> its StreamGroup, once read whole
    bytes_tested: int = 0                          # of the main stream
    complete: bool = True
    message: str = ""                              # why not complete
    interrupted: bool = False                      # Ctrl-C or SIGTERM
    backend_failed: bool = False                   # crashed, hung or broke its protocol


def stream_groups(source, tier: str, nbytes: int, interstream: bool) -> list[StreamGroup]:
    """The main stream with the tier's tests (their budgets applied), then, where ``source`` has
    neighbours and ``interstream`` is set, each NEIGHBOURS XOR pair with the inter-stream tests."""
    words = nbytes // 4
    groups = [StreamGroup("main", source, [budgeted(f, nbytes) for f in main_tests(tier, nbytes)], words)]
    if interstream:
        for kind in NEIGHBOURS:
            other = source.neighbour(kind) if hasattr(source, "neighbour") else None
            if other is None:
                continue
            share = max(words // INTERSTREAM_SHARE, min(words, MiB // 4))
            groups.append(StreamGroup(f"xor {kind}", XorSource(source.at(0), other.at(0), kind),
                                      interstream_tests(), share))
    return groups


def read_streams(groups: list[StreamGroup], tier: str, *, workers: int, progress=None, executor=None) -> Reading:
    """Each group's stream fed to its tests, in order, and their results. An interrupt or a
    failing backend ends the reading: the streams read before it keep their results."""
    reading = Reading()
    say = progress or (lambda text: None)
    begin, tick = getattr(progress, "begin", None), getattr(progress, "advance", None)  # a progress bar
    for group in groups:
        say(f"{group.name}: reading {group.words * 4 / MiB:.0f} MiB")
        if begin:
            begin(f"{group.name} stream", group.words * 4, "bytes")
        try:
            if executor is not None:
                accs, got = executor.feed(group.source, group.factories, group.words, offset=0, stream=group.name)
            else:  # an inter-stream pair is cut into ranges too when it is seekable (XorSource.at)
                accs, got = feed_parallel(group.source, group.factories, group.words, workers,
                                          tick=(lambda n: tick(4 * n)) if tick else None)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the streams read so far make a partial document
            reading.interrupted, reading.complete = True, False
            reading.message = (f"interrupted while reading the {group.name} stream; the tests of the streams "
                               "read before are kept")
            break
        except (BackendProcessFailed, BackendStopped, RemoteError) as failure:  # it crashed, hung or raised mid-stream
            reading.complete, reading.backend_failed = False, True
            reading.message = (f"the backend failed while reading the {group.name} stream ({one_line(failure)}); "
                               "the tests of the streams read before are kept")
            break
        _record_stream(reading, group, accs, got, tier)
    return reading


def _record_stream(reading: Reading, group: StreamGroup, accs, got: int, tier: str) -> None:
    """One stream's results (or why a test could not run), and, for the main stream, how much of
    it there was."""
    if group.name == "main":
        reading.bytes_tested = got * 4
        if got < group.words:
            reading.complete = False
            trailing = getattr(group.source, "trailing_bytes", 0) or _file_trailing_bytes(group.source)
            reading.message = (f"the stream ended after {got * 4} bytes ({got} words"
                               + (f", plus {trailing} trailing bytes ignored" if trailing else "")
                               + f"); the {tier} tier reads {group.words * 4} bytes")
    reading.groups_read[group.name] = group
    for acc in accs:
        found = acc.result()
        if not found:
            reading.not_run.append({"test": acc.name, "stream": group.name,
                                    "reason": f"needs {acc.sample_words * 4} bytes per sample, got {got * 4}"})
        for entry in found:
            entry["stream"] = group.name
            entry["words_from"] = 0
            reading.results.append(entry)


def retest_suspects(source, reading: Reading, suspect_at: float, *, workers: int, say, executor=None) -> None:
    """Retest every SUSPECT on the next range of its stream (PractRand-style escalation): only
    the accumulators whose results were suspect, on as many words as the first reading."""
    suspects = [e for e in reading.results if e["verdict"] == STATS_SUSPECT]
    for stream in sorted({e["stream"] for e in suspects}):
        group = reading.groups_read[stream]
        names = {e["test"] for e in suspects if e["stream"] == stream}
        say(f"retesting {sorted(names)} on {stream}")
        chosen = [f for f in group.factories if _produces(f, names)]
        want = group.words
        if executor is not None and (stream == "main" or source.seekable):
            accs, got = executor.feed(source if stream == "main" else group.source, chosen, want, offset=want,
                                      stream=stream)
        elif stream == "main":
            accs, got = feed_parallel(source, chosen, want, workers, offset=want)
        else:
            fresh_source = _fresh(source, stream, want)
            if fresh_source is None:
                continue
            accs, got = feed(fresh_source, chosen, want)
        retested = {}
        for acc in accs:
            for entry in acc.result():
                entry["stream"] = stream
                retested[_key(entry)] = entry
        for entry in suspects:
            if entry["stream"] != stream:
                continue
            again = retested.get(_key(entry))
            if again is None:
                continue
            record_retest(entry, again, suspect_at, words_from=want, words=got)


def document(reading: Reading, *, source, tier: str, nbytes: int, seed, reproduce: str, suspect_at: float,
             elapsed: float) -> dict:
    """The result document (module docstring) of a reading whose results are judged."""
    results = reading.results
    m = max(len(results), 1)
    counts = {v: sum(e["verdict"] == v for e in results) for v in STATS_JUDGED}
    doc = {
        "schema": "rngcheck-stats",
        "schema_version": 1,
        "tier": tier,
        "seed": seed,
        "source": source.describe(),
        "reproduce": reproduce,
        "bytes_requested": nbytes,
        "bytes_tested": reading.bytes_tested,
        "complete": reading.complete,
        "message": reading.message,
        "thresholds": {"suspect": suspect_at, "fail": FAIL_AT, "tests": m,
                       "family_false_suspect": FAMILY_SUSPECT,
                       "family_false_fail": m * FAIL_AT + FAMILY_SUSPECT * suspect_at},
        "verdict": stats_verdict(counts, found=bool(results), complete=reading.complete),
        "counts": counts,
        "elapsed_seconds": elapsed,
        "throughput_mb_s": reading.bytes_tested / MiB / elapsed if elapsed > 0 else None,
        "results": results,
        "not_run": reading.not_run,
    }
    if reading.interrupted:
        doc["interrupted"] = True
    if reading.backend_failed:
        doc["backend_failed"] = True
    return doc


def _produces(factory, names) -> bool:
    return bool(_result_names(factory(start=0)) & names)


_NAMES_CACHE: dict[tuple[type, str], set[str]] = {}


def _result_names(acc) -> set:
    """The test names an accumulator reports (probed once with two samples of random words)."""
    key = (type(acc), acc.name)
    if key not in _NAMES_CACHE:
        acc.update(np.random.default_rng(0).integers(0, 2 ** 32, acc.sample_words * 2, dtype=np.uint32))
        _NAMES_CACHE[key] = {e["test"] for e in acc.result()}
    return _NAMES_CACHE[key]


def _file_trailing_bytes(source) -> int:
    path = getattr(source, "path", "-")
    return os.path.getsize(path) % 4 if path != "-" else 0


def _fresh(source, stream: str, words: int):
    """The next range after the first ``words`` words of an inter-stream pair, or None."""
    kind = stream.split(" ", 1)[1]
    if not source.seekable:
        return None
    other = source.neighbour(kind)
    if other is None:
        return None
    return XorSource(source.at(words), other.at(words), kind)


