"""``rngcheck nist``: NIST's own SP 800-22 workflow (sts-2.1.2's, without the questions).

    rngcheck nist data.e                                 (ASCII '0'/'1', NIST's data format)
    rngcheck nist random.bin --format binary --sequences 100
    some-generator | rngcheck nist - --length 1000000 --sequences 10
    rngcheck nist --backend numpy --sequences 100 --json nist.json

Every sequence of ``--length`` bits goes through the 15 tests of SP 800-22 rev1a with sts's
parameters (rngcheck.stats.nist, whose p-values are sts-2.1.2's to six decimals); the report
is sts's finalAnalysisReport: for each p-value stream (188 of them with the defaults: the 148
templates, the 8 + 18 excursion states, the 2 cusum and 2 serial p-values count once each),
the distribution of p-values over ten bins C1..C10, the p-value of their uniformity
(section 4.2.2: chi2 of the bins, igamc(9/2, chi2/2); FAIL below 0.0001; shown when there are
at least 10 p-values) and the proportion of sequences with p >= alpha = 0.01 against the
acceptable range of section 4.2.1, p^ +- 3 sqrt(p^ (1 - p^) / s), p^ = 1 - alpha, with
sts-2.1.2's integer bounds (a sample of 100 needs 96 passes). As in sts-2.1.2, a sequence on
which a random excursion test does not apply (J < 500 cycles) is left out of that test's sample.

Which rule judges a p-value stream (``rule`` of each row; the one place: ``_judge``):

1. A stream of s >= PROPORTION_FROM (2) p-values: sts's proportion rule, and its uniformity
   rule from UNIFORMITY_FROM (10: sts-2.1.2 computes it once s / 10 >= 1; rev1a 4.2.2 asks
   UNIFORMITY_ASKED = 55 for it to mean much, which the report says below that).
2. A stream of one p-value (one sequence; or a random excursion state that applies to one
   sequence only): sts-2.1.2's integer lower bound is int(0.69) = 0, so the proportion rule fails
   nothing, and there is no uniformity p-value. Each p-value is judged against alpha instead, as
   sts's users read a single sequence (its stats.txt says FAILURE below alpha), for the sequence
   as a whole: with k such p-values, one fails its test below 1 - (1 - alpha)^(1/k) (Sidak, the
   battery's rule for its SUSPECT level), so that a random sequence fails with probability about
   alpha (at most: the template rows are not independent).
   Against alpha itself each p-value would fail a random sequence with probability
   1 - 0.99^k (188 streams: 85%; NIST's own e, pi and sqrt 3 would fail, with 4, 1 and 4 of 188
   below 0.01). A p-value below alpha that does not fail is shown as such.
3. No p-value at all: NOT APPLICABLE (the test's minimum n, or J < 500 cycles).

The document's verdict (``verdict_of``): FAIL when a stream fails its rule, PASS when some stream
was judged and none failed, NOT APPLICABLE when none could be.

Exit codes: 0 every test passes its rule; 1 some test fails the proportion, the uniformity or
(one sequence) the p-value rule; 2 bad input (one line on stderr).
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import shlex
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field

import numpy as np

from ..errors import RngcheckError
from ..results.nist_document import SCHEMA, SCHEMA_VERSION  # noqa: F401  (the document's format lives in results)
from ..results.verdicts import NOT_APPLICABLE, STATS_FAIL, STATS_PASS
from . import nist
from .nist_options import DEFAULT_BACKEND_SEQUENCES, DEFAULT_LENGTH, Parameters  # noqa: F401
from .special import import_settled, special
from .tiers import cores

ALPHA = 0.01
UNIFORMITY_FAIL = 0.0001
UNIFORMITY_FROM = 10    # sts-2.1.2: the uniformity p-value once s / 10 >= 1 (its expCount)
UNIFORMITY_ASKED = 55   # rev1a 4.2.2: "at least 55 sequences"

# A row's rule (module docstring, rules 1-2)
RULE_P_VALUE = "p-value against alpha"
RULE_PROPORTION = "proportion"
RULE_PROPORTION_AND_UNIFORMITY = "proportion and uniformity"
ASCII_BYTES = np.frombuffer(b"01 \t\r\n", dtype=np.uint8)  # what NIST's ASCII data files hold


# The tests in sts-2.1.2's order: name, rev1a section, the smallest n the text recommends.
TESTS = (
    ("Frequency", "2.1", 100),
    ("BlockFrequency", "2.2", 100),
    ("CumulativeSums", "2.13", 100),
    ("Runs", "2.3", 100),
    ("LongestRun", "2.4", 128),
    ("Rank", "2.5", 38 * 32 * 32),
    ("FFT", "2.6", 1000),
    ("NonOverlappingTemplate", "2.7", 0),
    ("OverlappingTemplate", "2.8", 10 ** 6),
    ("Universal", "2.9", nist.UNIVERSAL_MIN_N[6]),
    ("ApproximateEntropy", "2.12", 0),
    ("RandomExcursions", "2.14", 10 ** 6),
    ("RandomExcursionsVariant", "2.15", 10 ** 6),
    ("Serial", "2.11", 0),
    ("LinearComplexity", "2.10", 10 ** 6),
)
SECTIONS = {name: section for name, section, _ in TESTS}


def minimum_n(name: str, params: Parameters) -> int:
    """The smallest n for which rev1a recommends the test (its "Input Size Recommendation")."""
    if name == "BlockFrequency":  # n >= 100 and at least one block
        return max(100, params.block_frequency)
    if name == "LinearComplexity":
        return max(10 ** 6, params.linear_complexity)
    if name == "NonOverlappingTemplate":
        return nist.NON_OVERLAPPING_BLOCKS * params.template
    if name == "ApproximateEntropy":  # m < floor(log2 n) - 5
        return 1 << (params.approximate_entropy + 6)
    if name == "Serial":  # m < floor(log2 n) - 2
        return 1 << (params.serial + 3)
    return dict((t, least) for t, _, least in TESTS)[name]


def row_labels(name: str, params: Parameters) -> list[str]:
    """The p-value streams of one test: one row each in the report ('' when it has one)."""
    if name == "CumulativeSums":
        return ["forward", "reverse"]
    if name == "NonOverlappingTemplate":
        return ["".join(map(str, t)) for t in nist.aperiodic_templates(params.template)]
    if name == "RandomExcursions":
        return [f"x = {x:+d}" for x in nist.EXCURSION_STATES]
    if name == "RandomExcursionsVariant":
        return [f"x = {x:+d}" for x in nist.VARIANT_STATES]
    if name == "Serial":
        return ["1", "2"]
    return [""]


def _as_list(value, states=None):
    """A test's result as a list of p-values, or the DoesNotApply reason."""
    if isinstance(value, nist.DoesNotApply):
        return value
    if isinstance(value, dict):
        return [value[x] for x in states]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def test_sequence(bits: np.ndarray, params: Parameters) -> dict:
    """The 15 tests on one sequence: {test name: [p-values in row order] or DoesNotApply}."""
    n = bits.size
    runners = {
        "Frequency": lambda: nist.monobit(bits),
        "BlockFrequency": lambda: nist.block_frequency(bits, params.block_frequency),
        "CumulativeSums": lambda: [nist.cumulative_sums(bits, "forward"), nist.cumulative_sums(bits, "backward")],
        "Runs": lambda: nist.runs(bits),
        "LongestRun": lambda: nist.longest_run(bits),
        "Rank": lambda: nist.matrix_rank(bits),
        "FFT": lambda: nist.spectral(bits),
        "NonOverlappingTemplate": lambda: nist.non_overlapping_template(bits, params.template),
        "OverlappingTemplate": lambda: nist.overlapping_template(bits, params.template),
        "Universal": lambda: nist.universal(bits),
        "ApproximateEntropy": lambda: nist.approximate_entropy(bits, params.approximate_entropy),
        "RandomExcursions": lambda: _as_list(nist.random_excursions(bits), nist.EXCURSION_STATES),
        "RandomExcursionsVariant": lambda: _as_list(nist.random_excursions_variant(bits), nist.VARIANT_STATES),
        "Serial": lambda: list(nist.serial(bits, params.serial)),
        "LinearComplexity": lambda: nist.linear_complexity(bits, params.linear_complexity),
    }
    results = {}
    for name, _, _ in TESTS:
        least = minimum_n(name, params)
        if n < least:
            results[name] = nist.DoesNotApply(f"n = {n} < {least}, the minimum of rev1a section {SECTIONS[name]}")
        else:
            results[name] = _as_list(runners[name]())
    return results


# ------------------------------------------------------------------------------------------
# The second level: sts-2.1.2's finalAnalysisReport.
# ------------------------------------------------------------------------------------------

def proportion_bounds(s: int, alpha: float = ALPHA) -> tuple[int, int]:
    """Section 4.2.1's range p^ +- 3 sqrt(p^ alpha / s) of passing sequences, as counts cut to
    integers as sts-2.1.2 does (s = 100: 96 .. 101)."""
    p_hat = 1.0 - alpha
    spread = 3.0 * math.sqrt(p_hat * alpha / s)
    return int((p_hat - spread) * s), int((p_hat + spread) * s)


def fewest_for_proportion(alpha: float = ALPHA) -> int:
    """The fewest p-values for which sts-2.1.2's proportion rule can fail a stream: below it the
    integer lower bound is 0 (one sequence: int(0.99 - 3 sqrt(0.0099)) = int(0.69) = 0), and no
    count of passes is below 0."""
    s = 1
    while proportion_bounds(s, alpha)[0] < 1:
        s += 1
    return s


PROPORTION_FROM = fewest_for_proportion()  # 2


def single_sequence_level(k: int, alpha: float = ALPHA) -> float:
    """The level below which one of k single p-values fails its test (rule 2): 1 - (1 - alpha)^(1/k),
    so that a random sequence fails one of them with probability alpha (k = 1: alpha itself)."""
    return -math.expm1(math.log1p(-alpha) / max(k, 1))


def bins_of(p_values) -> list[int]:
    """Counts of p-values in [0, 0.1), [0.1, 0.2), ..., [0.9, 1] (sts: floor(10 p), 10 -> 9)."""
    pos = np.minimum(np.floor(np.asarray(p_values, dtype=np.float64) * 10).astype(int), 9)
    return np.bincount(pos, minlength=10).tolist()


def uniformity(bins) -> float | None:
    """Section 4.2.2: chi2 of the ten bins against s/10 each, p = igamc(9/2, chi2/2); None below
    10 p-values (sts prints ----). sts-2.1.2 uses floor(s/10) as the expected count; this uses
    s/10 (the text's formula; the same when s is a multiple of 10)."""
    s = sum(bins)
    if s < 10:
        return None
    expected = s / 10.0
    chi2 = sum((b - expected) ** 2 / expected for b in bins)
    return float(special.gammaincc(4.5, chi2 / 2.0))


@dataclass
class Row:
    test: str
    label: str
    section: str
    p_values: list = field(default_factory=list)
    not_applicable: list = field(default_factory=list)  # reasons, one per sequence left out
    bins: list = field(default_factory=list)
    uniformity_p: float | None = None
    passed: int = 0
    sample_size: int = 0
    proportion_min: int = 0
    proportion_max: int = 0
    verdict: str = NOT_APPLICABLE
    reasons: list = field(default_factory=list)
    rule: str = ""  # RULE_*: which rule judged it ("" when not applicable)


def analyse(per_sequence: list[dict], params: Parameters) -> list[Row]:
    """The final analysis report's rows from the per-sequence results, each judged (``_judge``)."""
    rows = []
    for name, section, _ in TESTS:
        labels = row_labels(name, params)
        for index, label in enumerate(labels):
            row = Row(name, label, section)
            for result in per_sequence:
                value = result[name]
                if isinstance(value, nist.DoesNotApply):
                    row.not_applicable.append(str(value))
                else:
                    row.p_values.append(float(value[index]))
            rows.append(row)
    single = sum(0 < len(row.p_values) < PROPORTION_FROM for row in rows)
    return [_judge(row, single) for row in rows]


def _judge(row: Row, single: int) -> Row:
    """The row's verdict, by the rule its number of p-values allows (module docstring, rules 1-3);
    ``single``: how many rows hold a single p-value (rule 2's k)."""
    s = row.sample_size = len(row.p_values)
    if s == 0:
        row.verdict = NOT_APPLICABLE
        row.reasons = sorted(set(row.not_applicable))[:1]
        return row
    row.bins = bins_of(row.p_values)
    row.uniformity_p = uniformity(row.bins)
    row.passed = sum(p >= ALPHA for p in row.p_values)
    row.proportion_min, row.proportion_max = proportion_bounds(s)
    row.reasons = []
    if s < PROPORTION_FROM:
        row.rule = RULE_P_VALUE
        level = single_sequence_level(single)
        row.reasons += [f"p = {p:.6f} < {level:.3g} (alpha = {ALPHA} over {single} single p-values)"
                        for p in row.p_values if p < level]
    else:
        row.rule = RULE_PROPORTION if row.uniformity_p is None else RULE_PROPORTION_AND_UNIFORMITY
        if not row.proportion_min <= row.passed <= row.proportion_max:
            row.reasons.append(f"{row.passed}/{s} passed, outside {row.proportion_min}..{row.proportion_max}")
        if row.uniformity_p is not None and row.uniformity_p < UNIFORMITY_FAIL:
            row.reasons.append(f"uniformity p = {row.uniformity_p:.6f} < {UNIFORMITY_FAIL}")
    row.verdict = STATS_FAIL if row.reasons else STATS_PASS
    return row


def verdict_of(rows: list[Row]) -> str:
    """The document's verdict: FAIL when a row fails its rule, else PASS when a row was judged,
    else NOT APPLICABLE (nothing could be)."""
    if any(row.verdict == STATS_FAIL for row in rows):
        return STATS_FAIL
    return STATS_PASS if any(row.verdict == STATS_PASS for row in rows) else NOT_APPLICABLE


def rule_notes(rows: list[Row]) -> list[str]:
    """What the report says of the rules where the sequences are too few for sts's (empty when
    every judged row had UNIFORMITY_ASKED p-values or more)."""
    notes = []
    single = [row for row in rows if row.rule == RULE_P_VALUE]
    if single:
        k = len(single)
        below = sum(row.passed < row.sample_size for row in single)
        failed = sum(row.verdict == STATS_FAIL for row in single)
        notes.append(
            f"{k} p-value stream(s) of a single sequence: too few sequences for sts's proportion rule (its lower "
            f"bound is 0 below {PROPORTION_FROM} sequences: it fails nothing) and for its uniformity rule "
            f"({UNIFORMITY_FROM} sequences in sts-2.1.2, {UNIFORMITY_ASKED} in rev1a 4.2.2); each p-value is "
            f"judged against alpha = {ALPHA} for the sequence as a whole instead: it fails its test below "
            f"{single_sequence_level(k):.3g} = 1 - (1 - alpha)^(1/{k}), so that a random sequence fails with "
            f"probability at most about alpha; {failed} fail; {below} of {k} are below alpha itself "
            f"({k * ALPHA:.1f} expected by chance); give {PROPORTION_FROM} or more sequences for sts's rules")
    few = [row for row in rows if row.rule and row.rule != RULE_P_VALUE and row.sample_size < UNIFORMITY_ASKED]
    if few:
        notes.append(
            f"{len(few)} p-value stream(s) of fewer than {UNIFORMITY_ASKED} sequences: judged by sts's proportion "
            f"rule, and by its uniformity rule from {UNIFORMITY_FROM} sequences as sts-2.1.2 does; rev1a 4.2.2 "
            f"asks {UNIFORMITY_ASKED} sequences for the uniformity of p-values to mean much")
    return notes


def rules_used(rows: list[Row]) -> dict[str, int]:
    """How many rows each rule judged (RULE_* -> count), for the document."""
    used: dict[str, int] = {}
    for row in rows:
        if row.rule:
            used[row.rule] = used.get(row.rule, 0) + 1
    return used


# ------------------------------------------------------------------------------------------
# Input: NIST's ASCII format, bytes, or a backend's stream.
# ------------------------------------------------------------------------------------------

class PackedBits:
    """The bits of an input kept packed (a byte per 8 bits, most significant first; ``size`` bits,
    the last byte's low bits unused when it is not a multiple of 8): binary files, and ASCII files
    packed as they are read. A slice is unpacked when a sequence is read, so an input costs an
    eighth of its bits in memory, not a byte a bit. ``size`` and ``bits[a:b]`` (a uint8 0/1 array)
    are all ``run`` needs."""

    def __init__(self, data: np.ndarray, size: int | None = None):
        self.data = data
        self.size = int(data.size) * 8 if size is None else min(int(size), int(data.size) * 8)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key) -> np.ndarray:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("PackedBits takes a contiguous slice")
        start, stop, _ = key.indices(self.size)
        stop = max(start, stop)
        first = start // 8
        return np.unpackbits(self.data[first:(stop + 7) // 8])[start - 8 * first:stop - 8 * first]


MAX_INPUT_BYTES = 1 << 30   # bytes read at most (without --sequences: a regular file, a pipe)
CHUNK_BYTES = 1 << 22       # read a chunk at a time: SIGTERM and Ctrl-C are seen between chunks
# Testing one sequence of n bits holds about 33 n bytes at its peak (measured for n = 10^6 .. 1.3 x 10^8
# with sts's parameters and with m = 24: the spectral test's float64 and complex arrays); 40 with room.
BYTES_PER_BIT = 40
# The longest sequence: the random excursion tests' walk is an int32 cumulative sum.
MAX_LENGTH = (1 << 31) - 1


def check_length(n: int) -> None:
    """Refuse, in one line naming the limit, a --length rngcheck cannot test: past MAX_LENGTH, or a
    sequence whose tests need more memory than this process can allocate (rngcheck.sharedmem)."""
    from ..sharedmem import shortfall

    if n > MAX_LENGTH:
        raise RngcheckError(f"--length {n}: at most {MAX_LENGTH} bits a sequence (the random excursion tests' "
                            "walk is a 32-bit sum)")
    why = shortfall(BYTES_PER_BIT * n)
    if why:
        raise RngcheckError(f"--length {n}: testing one sequence takes about {BYTES_PER_BIT} bytes a bit: {why}; "
                            "give a shorter --length")


def workers_that_fit(workers: int, n: int) -> int:
    """``workers``, fewer when the memory this process can allocate holds fewer sequences of n bits
    under test at once (at least one: check_length refused a sequence that does not fit)."""
    from ..sharedmem import memory_available

    room = memory_available()
    return workers if room is None else max(1, min(workers, room // (BYTES_PER_BIT * n)))


def _check_room(path: str, nbytes: int, what: str) -> None:
    """Refuse, in one line, input bits that would not fit in memory (rngcheck.sharedmem.shortfall)."""
    from ..sharedmem import shortfall

    why = shortfall(nbytes)
    if why:
        raise RngcheckError(f"{path}: {what}, kept packed (a bit a bit): {why}; run fewer sequences at a time")


def read_bits(path: str, fmt: str = "auto", want_bits: int | None = None) -> tuple[PackedBits, str]:
    """The bits of a file ('-': stdin), packed (PackedBits), and the format read.

    ascii: '0' and '1' characters; spaces, tabs and line ends are skipped (NIST's data files
    wrap lines); anything else is an error naming its offset. binary: every byte, most
    significant bit first (sts's "binary" input). auto: ascii when at least 90% of the first
    64 KiB are those characters (random bytes: about 2%), else binary. Either is kept packed, a
    byte per 8 bits.

    ``want_bits`` (--length x --sequences): reading stops once that many bits are in; without it,
    the whole input, at most MAX_INPUT_BYTES, and never a device (it does not end). Read in
    chunks, so a SIGTERM or Ctrl-C ends it; what is kept is checked against the memory this process
    can allocate (before reading, with ``want_bits``; chunk by chunk without), one line if it does not fit."""
    try:
        if path == "-":
            return _read_bits_from(sys.stdin.buffer, "stdin", fmt, want_bits)
        with open(path, "rb") as handle:
            return _read_bits_from(handle, path, fmt, want_bits)
    except OSError as error:
        raise RngcheckError(f"cannot read {path!r}: {error.strerror or error}") from None


class _Packer:
    """Bits packed as they come (a byte per 8 bits, most significant first): ``add`` 0/1 arrays or
    whole bytes, ``bits()`` the PackedBits."""

    def __init__(self) -> None:
        self.packed = bytearray()
        self.carry = np.zeros(0, np.uint8)   # fewer than 8 bits not packed yet (ascii)

    @property
    def count(self) -> int:
        return 8 * len(self.packed) + self.carry.size

    def add_bytes(self, chunk: bytes) -> None:
        self.packed += chunk

    def add_bits(self, bits: np.ndarray) -> None:
        if self.carry.size:
            bits = np.concatenate([self.carry, bits])
        whole = bits.size - bits.size % 8
        self.packed += np.packbits(bits[:whole]).tobytes()
        self.carry = bits[whole:]

    def bits(self, limit: int | None) -> PackedBits:
        count = self.count
        data = np.frombuffer(bytes(self.packed) + np.packbits(self.carry).tobytes(), dtype=np.uint8) \
            if self.carry.size else np.frombuffer(self.packed, dtype=np.uint8)
        if limit is not None and count > limit:
            data, count = data[:(limit + 7) // 8], limit
        return PackedBits(data, count)


def _read_bits_from(handle, path: str, fmt: str, want_bits: int | None) -> tuple[PackedBits, str]:
    import stat

    try:
        mode = os.fstat(handle.fileno()).st_mode
    except (OSError, ValueError):  # a stream without a descriptor (an in-memory stdin)
        mode = 0
    if want_bits is None and (stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
        raise RngcheckError(f"{path}: a device never ends: give --sequences (and --length) to read what they need")
    if stat.S_ISDIR(mode):
        raise RngcheckError(f"{path}: a directory, not a bit file")
    if want_bits is not None and want_bits > 8 * MAX_INPUT_BYTES:
        raise RngcheckError(f"--length x --sequences asks for {want_bits} bits, more than rngcheck nist reads "
                            f"({8 * MAX_INPUT_BYTES}): run fewer sequences at a time")
    if want_bits is not None:
        _check_room(path, (want_bits + 7) // 8, f"--length x --sequences = {want_bits} bits")
    packer = _Packer()
    read = 0
    while want_bits is None or packer.count < want_bits:
        if want_bits is None:
            size = CHUNK_BYTES
        elif fmt == "binary":
            size = min(CHUNK_BYTES, (want_bits - packer.count + 7) // 8)
        else:
            size = CHUNK_BYTES if fmt == "auto" else min(CHUNK_BYTES, max(1 << 16, want_bits - packer.count))
        chunk = handle.read(size)
        if not chunk:
            break
        if want_bits is None:   # no size known before: each chunk's growth checked as it comes
            _check_room(path, len(packer.packed) + len(chunk), f"the {read + len(chunk)} bytes read so far")
        if fmt == "auto":
            head = np.frombuffer(chunk[:1 << 16], np.uint8)
            fmt = "ascii" if np.isin(head, ASCII_BYTES).mean() >= 0.9 else "binary"
        if fmt == "binary":
            packer.add_bytes(chunk)
        else:
            data = np.frombuffer(chunk, dtype=np.uint8)
            bad = np.flatnonzero(~np.isin(data, ASCII_BYTES))
            if bad.size:
                at = int(bad[0])
                raise RngcheckError(f"{path}: byte {read + at} is {bytes([chunk[at]])!r}: an ASCII bit file holds "
                                    "only '0', '1' and whitespace (--format binary reads raw bytes)")
            packer.add_bits((data[(data == 48) | (data == 49)] - 48).astype(np.uint8))
        read += len(chunk)
        if want_bits is None and read > MAX_INPUT_BYTES:
            raise RngcheckError(f"{path}: more than {MAX_INPUT_BYTES} bytes: give --sequences (and --length) to "
                                "read what they need")
    if fmt == "auto":
        fmt = "binary"  # an empty input
    return packer.bits(want_bits), fmt


class BackendBits:
    """A backend's stream as bits (the battery's bit order: rngcheck.stats.bits), drawn as it is read:
    ``bits[a:b]`` in increasing order (one sequence after the other), so only a sequence and a word
    are held, whatever --sequences x --length. The backend is hosted as ``rngcheck run`` and
    ``rngcheck stats`` host it (the reference in-process, any other backend in a worker), so one
    that crashes cannot take rngcheck down; ``close`` ends it."""

    def __init__(self, spec: str, seed: int, total_bits: int):
        from ..backends.hosting import hosted
        from .streams import BackendSource

        if not 0 <= seed < 1 << 64:
            raise RngcheckError("--seed must be a 64-bit unsigned integer")
        self.size = int(total_bits)
        self.backend = hosted(spec)
        self.source = BackendSource(self.backend, key=seed)
        self.held = np.zeros(0, np.uint8)   # packed bytes of the stream from bit 8 * self.first_byte on
        self.first_byte = 0

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key) -> np.ndarray:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("BackendBits takes a contiguous slice")
        start, stop, _ = key.indices(self.size)
        stop = max(start, stop)
        if start < 8 * self.first_byte:
            raise ValueError("BackendBits is read in order: that part of the stream was dropped")
        drop = start // 8 - self.first_byte   # the bytes before this slice are not read again
        self.held, self.first_byte = self.held[drop:], start // 8
        end_byte = (stop + 7) // 8 - self.first_byte
        if end_byte > self.held.size:
            words = self.source.read((end_byte - self.held.size + 3) // 4)
            self.held = np.concatenate([self.held, np.ascontiguousarray(words, dtype=">u4").view(np.uint8)])
        return np.unpackbits(self.held[:end_byte])[start % 8:start % 8 + stop - start]

    def describe(self) -> dict:
        return self.source.describe()

    def close(self) -> None:
        from ..backends.hosting import close

        self.source.close()
        close(self.backend)


# ------------------------------------------------------------------------------------------
# Running: sequences in parallel (fork), the document, the table.
# ------------------------------------------------------------------------------------------

Bits = np.ndarray | PackedBits | BackendBits


def _test_packed(packed: np.ndarray, n: int, params: Parameters) -> dict:
    """A worker's part: one sequence, sent packed (n / 8 bytes)."""
    return test_sequence(np.unpackbits(packed)[:n], params)


def run_sequences(bits: Bits, n: int, count: int, params: Parameters, workers: int = 1, progress=None):
    """Per-sequence results of sequences 0 .. count-1 of ``bits``, in order. Each sequence is cut
    here, in order (a backend's stream is drawn as it is read: BackendBits), and tested here or, with
    ``workers`` > 1, in a worker process it is sent to packed; at most two sequences a worker are cut
    ahead of the results, so memory holds a few sequences, never the input unpacked."""
    results: list[dict] = []
    if workers <= 1 or count == 1:
        for k in range(count):
            results.append(test_sequence(bits[k * n:(k + 1) * n], params))
            if progress:
                progress(f"sequence {k + 1}/{count}")
        return results
    from collections import deque
    from concurrent.futures.process import BrokenProcessPool

    from ..backends.lifetime import die_with_parent
    workers = min(workers, count)
    import_settled()  # no import half done in a thread (battery.feed_parallel's) when the workers fork
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=die_with_parent,
                               initargs=(os.getpid(),))  # the workers die with rngcheck
    pending: deque = deque()
    finished = False

    def collect() -> None:
        try:
            results.append(pending.popleft().result())
        except BrokenProcessPool:
            raise RngcheckError(f"a worker process died (killed, or out of memory) while testing sequence "
                                f"{len(results) + 1} of {count} ({n} bits); --workers 1 tests in this process"
                                ) from None
        if progress and len(results) % 10 == 0:
            progress(f"sequence {len(results)}/{count}")

    try:
        for k in range(count):
            pending.append(pool.submit(_test_packed, np.packbits(bits[k * n:(k + 1) * n]), n, params))
            while len(pending) >= 2 * workers:
                collect()
        while pending:
            collect()
        finished = True
    finally:
        if not finished:   # an interrupt or a failure: the workers are ended now, not after their sequences
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                try:
                    process.kill()
                except (OSError, AttributeError):
                    pass
        pool.shutdown(wait=finished, cancel_futures=not finished)
    return results


def run(bits: Bits, *, n: int, sequences: int | None, params: Parameters, source: dict,
        reproduce: str = "", workers: int = 1, progress=None) -> dict:
    """The result document (schema "rngcheck-nist") of ``sequences`` sequences of n bits."""
    began = time.perf_counter()
    if n < 100:
        raise RngcheckError(f"--length {n}: every SP 800-22 test needs at least 100 bits")
    params.check(n)
    check_length(n)
    available = bits.size // n
    if available < 1:
        raise RngcheckError(f"the input holds {bits.size} bits, fewer than one sequence of {n} bits (--length)")
    count = available if sequences is None else sequences
    if count < 1:
        raise RngcheckError("--sequences must be at least 1")
    if count > available:
        raise RngcheckError(f"the input holds {available} sequence(s) of {n} bits ({bits.size} bits); "
                            f"--sequences asks for {count}")
    per_sequence = run_sequences(bits, n, count, params, workers_that_fit(workers, n), progress)
    rows = analyse(per_sequence, params)
    judged = [r for r in rows if r.verdict != NOT_APPLICABLE]
    failed = [r for r in judged if r.verdict == STATS_FAIL]
    elapsed = time.perf_counter() - began
    used = rules_used(rows)
    rules = {"alpha": ALPHA, "proportion_from": PROPORTION_FROM, "uniformity_from": UNIFORMITY_FROM,
             "uniformity_asked": UNIFORMITY_ASKED, "rows": used,
             "single_p_value_level": single_sequence_level(used[RULE_P_VALUE]) if RULE_P_VALUE in used else None}
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "source": source,
        "reproduce": reproduce,
        "length": n,
        "sequences": count,
        "unused_bits": int(bits.size - count * n),
        "parameters": asdict(params),
        "alpha": ALPHA,
        "verdict": verdict_of(rows),
        "counts": {STATS_PASS: len(judged) - len(failed), STATS_FAIL: len(failed),
                   NOT_APPLICABLE: len(rows) - len(judged)},
        "rules": rules,
        "notes": rule_notes(rows),
        "elapsed_seconds": elapsed,
        "rows": [asdict(r) for r in rows],
    }


def render(doc: dict, out=None) -> None:
    """sts's finalAnalysisReport layout: bins, uniformity p-value, proportion, test."""
    out = out or sys.stdout
    line = "-" * 86
    print(line, file=out)
    print("RESULTS FOR THE UNIFORMITY OF P-VALUES AND THE PROPORTION OF PASSING SEQUENCES", file=out)
    print(f"   source: {doc['source'].get('describe', doc['source'])}", file=out)
    print(f"   {doc['sequences']} sequence(s) of {doc['length']} bits; parameters: "
          + ", ".join(f"{k} {v}" for k, v in doc["parameters"].items()), file=out)
    print(line, file=out)
    print(" C1  C2  C3  C4  C5  C6  C7  C8  C9 C10  P-VALUE  PROPORTION  STATISTICAL TEST", file=out)
    print(line, file=out)
    for row in doc["rows"]:
        name = row["test"] + (f" {row['label']}" if row["label"] else "")
        if row["verdict"] == NOT_APPLICABLE:
            print(f"{'':40s}  ----      ----     {name}: not applicable: {row['reasons'][0]}", file=out)
            continue
        bins = "".join(f"{b:3d} " for b in row["bins"])
        u = row["uniformity_p"]
        u_text = "    ----  " if u is None else f"{u:9.6f}{'*' if u < UNIFORMITY_FAIL else ' '}"
        s, passed = row["sample_size"], row["passed"]
        if row.get("rule") == RULE_P_VALUE:  # one p-value: shown, '*' when it fails (below rule 2's level)
            bad = row["verdict"] == STATS_FAIL
            name += "".join(f"  p = {p:.6f}" + (" < alpha" if p < ALPHA else "") for p in row["p_values"])
        else:
            bad = not row["proportion_min"] <= passed <= row["proportion_max"]
        proportion = f"{passed:>5d}/{s:<5d}{'*' if bad else ' '}"
        print(f"{bins}{u_text}  {proportion}  {name}", file=out)
    print(line, file=out)
    s = doc["sequences"]
    if s >= PROPORTION_FROM:
        low, high = proportion_bounds(s)
        print(f"The minimum pass rate of each test (random excursion tests: of the sequences they apply to) is "
              f"{low} of {s} sequences (alpha = {ALPHA}); a '*' marks a proportion outside {low}..{high} or a "
              f"uniformity p-value below {UNIFORMITY_FAIL} (shown from {UNIFORMITY_FROM} sequences).", file=out)
    level = (doc.get("rules") or {}).get("single_p_value_level")
    if level is not None:
        print(f"A single sequence's row shows its p-value; a '*' marks one below {level:.3g} (rule 2 of "
              "rngcheck.stats.nist_sts: alpha for the sequence's p-values together).", file=out)
    for note in doc.get("notes", []):
        print(f"Note: {note}.", file=out)
    print(f"{verdict_line(doc)}; {doc['elapsed_seconds']:.1f} s; reproduce: {doc['reproduce']}", file=out)


def verdict_line(doc: dict, short: bool = False) -> str:
    """The verdict, its counts, and the rule that judged a single sequence when one did."""
    c = doc["counts"]
    streams = "" if short else " p-value streams"
    line = (f"{doc['verdict']}: {c[STATS_PASS]}{streams} pass, {c[STATS_FAIL]} fail, {c[NOT_APPLICABLE]} not "
            "applicable")
    single = (doc.get("rules") or {}).get("rows", {}).get(RULE_P_VALUE)
    if single:
        line += (f" ({single} single p-values, judged against alpha = {ALPHA} together: too few sequences for "
                 "sts's proportion and uniformity rules)")
    return line


# ------------------------------------------------------------------------------------------
# The command.
# ------------------------------------------------------------------------------------------

def _reproduce(args, seed) -> str:
    parts = ["rngcheck", "nist"]
    parts += ["--backend", args.backend, "--seed", str(seed)] if args.backend else [args.file, "--format", args.format]
    parts += ["--length", str(args.length)]
    if args.sequences is not None or args.backend:
        parts += ["--sequences", str(args.sequences or DEFAULT_BACKEND_SEQUENCES)]
    defaults = Parameters()
    for key in asdict(defaults):
        if getattr(args, key) != getattr(defaults, key):
            parts += ["--" + key.replace("_", "-"), str(getattr(args, key))]
    return " ".join(shlex.quote(p) for p in parts)


def command(args) -> int:
    if (args.file is None) == (args.backend is None):
        raise RngcheckError("give a bit FILE ('-' for stdin) or --backend NAME, not both")
    if args.seed is not None and not args.backend:
        raise RngcheckError("--seed applies to --backend streams only")
    if args.length < 100:
        raise RngcheckError(f"--length {args.length}: every SP 800-22 test needs at least 100 bits")
    if args.sequences is not None and args.sequences < 1:
        raise RngcheckError("--sequences must be at least 1")
    if args.workers is not None and args.workers < 1:
        raise RngcheckError(f"--workers {args.workers}: give a positive number of processes")
    params = Parameters(args.block_frequency, args.template, args.approximate_entropy, args.serial,
                        args.linear_complexity)
    params.check(args.length)
    check_length(args.length)   # before any input is read or drawn
    from ..outputs import claim_outputs, input_paths
    output = args.json if args.json != "-" else None   # refused before the run, not after it; locked
    with claim_outputs({"--json": output}, input_paths([args.file if args.file != "-" else None])):
        return _command(args, params)


def _command(args, params: Parameters) -> int:
    progress = None if args.quiet else (lambda text: print(text, file=sys.stderr))
    bits: Bits
    workers = args.workers or cores()
    if args.backend:   # drawn sequence by sequence as the run reads it (BackendBits)
        seed = 1 if args.seed is None else args.seed
        count = args.sequences or DEFAULT_BACKEND_SEQUENCES
        drawn = BackendBits(args.backend, seed, count * args.length)
        try:
            doc = run(drawn, n=args.length, sequences=count, params=params,
                      source={"backend": args.backend, "seed": seed, "describe": drawn.describe()},
                      reproduce=_reproduce(args, seed), workers=workers, progress=progress)
        finally:
            drawn.close()
    else:
        count = args.sequences
        bits, fmt = read_bits(args.file, args.format, None if count is None else count * args.length)
        source = {"file": args.file, "format": fmt, "bits": int(bits.size), "describe": f"{args.file} ({fmt})"}
        doc = run(bits, n=args.length, sequences=count, params=params, source=source,
                  reproduce=_reproduce(args, None), workers=workers, progress=progress)
    from .command import to_stdout
    if args.json:
        text = json.dumps(doc, indent=1)
        if args.json == "-":
            to_stdout(lambda: print(text))
        else:   # whole or not at all (a full disk leaves the previous document as it was)
            from ..jsonfile import atomic_write
            atomic_write(args.json, text + "\n")
    out = sys.stderr if args.json == "-" else sys.stdout
    if args.quiet:
        to_stdout(lambda: print(verdict_line(doc, short=True), file=out))
    else:
        to_stdout(lambda: render(doc, out))
    return 1 if doc["verdict"] == STATS_FAIL else 0
