"""Streaming, mergeable accumulators: the shape every statistical test has.

A test sees the stream as consecutive *samples* of ``sample_words`` 32-bit words, aligned
on multiples of ``sample_words`` counted from word 0 of the stream. Each complete sample
yields a few numbers (its first-level p-value, statistic, small integer counts).

    acc = Monobit(start=0)          # start: index of the first word this accumulator sees
    acc.update(chunk)               # any chunk sizes, in stream order
    other = Monobit(start=acc.end)  # a later, contiguous piece (another process, machine)
    other.update(...)
    acc.merge(other)                # map-reduce: exactly as if one accumulator saw both
    acc.result()                    # list of result dicts (see battery module docstring)

Why results do not depend on chunking or splitting: a sample is always measured whole
(the words of a sample cut by a chunk or by a split are held back until it is complete;
``merge`` joins the cut pieces), per-sample numbers are kept in stream order, sums of
integer counts are exact, and floating-point sums use ``math.fsum`` (exactly rounded,
so independent of the order of addition). Memory: the held-back fragments (less than two
samples), one small record per sample, and fixed-size count totals.

A slow test may have a budget (``max_samples``): it measures only the stream's samples
0 .. max_samples-1 (counted from word 0, so still independent of splitting) and says so
in its results ("bytes").

Words at the very start (before the first sample boundary, when ``start`` is not aligned
and no predecessor is merged in) or after the last complete sample are not tested; they
are reported as ``unused_words``.

State (checkpoints, sending a finished range to another machine): ``acc.state()`` is a flat
dict of plain values (ints, floats, strings, numpy arrays of numbers) holding what the
accumulator has seen and nothing it can recompute: the constructor's parameters, the
positions, the held-back fragments, the per-sample records and the count totals. Lookup
tables and cell probabilities are rebuilt by the constructor. ``type(acc).from_state(state)``
gives an accumulator with the same ``result()`` that merges exactly like ``acc``. The dict
can be written with ``np.savez(file, **state)`` and read back with ``np.load(file,
allow_pickle=False)``: no value needs pickle (a scalar total too large for int64 is kept as
a decimal string). Keys:

    class, version                 which accumulator class, the layout's version (checked)
    start, end, samples, skipped   ints
    head, tail                     uint32 arrays (the held-back fragments)
    param/<name>                   the constructor's keyword parameters (Gap's nibble)
    set/<attribute>                a class attribute changed on the instance (battery.budgeted
                                   sets max_samples)
    records/<key>                  per-sample records, one row per measured sample
    totals/<key>                   count totals (int, or an int64 array)
    own/<name>                     a subclass's own running state (``state_fields``), if any

The mechanism lives in this base class only; a subclass declares nothing unless it keeps
running state outside records and totals (``state_fields``).
"""

from __future__ import annotations

import contextlib
import copy
import math
from typing import Any

import numpy as np

from ..errors import RngcheckError, one_line
from . import pvalues

BATCH_WORDS = 1 << 18  # words measured at once (memory bound, not a result parameter)
MIN_SECOND_LEVEL = 10  # fewer first-level p-values than this: no second-level test


_SHARED: dict | None = None  # per-chunk cache of derived arrays (see shared_chunk)


@contextlib.contextmanager
def shared_chunk():
    """While one chunk is fed to several accumulators (battery.feed), arrays derived from the
    same words (histograms, weights) are computed once and shared: ``shared`` looks them up
    by the memory the samples occupy. Outside this context nothing is cached. The chunk is
    never modified while the context is open, and a cached entry keeps its samples alive,
    so an address cannot be reused for other words."""
    global _SHARED
    saved, _SHARED = _SHARED, {}
    try:
        yield
    finally:
        _SHARED = saved


def shared(samples: np.ndarray, kind: str, compute):
    """compute(samples), cached for the current shared_chunk by (kind, address, shape, strides).
    The result must be treated as read-only."""
    cache = _SHARED
    if cache is None:
        return compute(samples)
    key = (kind, samples.__array_interface__["data"][0], samples.shape, samples.strides, samples.dtype.str)
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = (samples, compute(samples))
    return hit[1]


STATE_VERSION = 1  # the layout of Accumulator.state()
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class StateError(RngcheckError, ValueError):
    """A state that is not one of this accumulator class (damaged, foreign, another layout)."""


class Accumulator:
    """Base class. Subclasses set ``name``, ``source``, ``sample_words`` and implement
    ``measure(samples)`` and ``evaluate(records, totals, samples)``."""

    name = "abstract"
    source = ""
    sample_words = 1 << 15
    second_level = True  # per-sample p-values continuous enough for a KS test
    max_samples: int | None = None  # slow tests: only the first max_samples samples of the stream are measured
    # What the battery needs to know of a test (rngcheck.stats.battery), said here by each test:
    #   budget            (divisor, floor): a slow test (numpy-bound: GF(2) elimination, FFTs, pattern
    #                     counts, coupon chains, walks) reads only the first 1/divisor of the tier's bytes,
    #                     at least floor bytes, never more than the tier; None: the whole stream
    #   from_tier         the smallest tier the test joins (its cost per word is too high below it)
    #   cost_ns_per_word  measured cost per word measured (benchmarks/bench_stats.py, this 2-core
    #                     machine); only used to cut the stream into pieces of equal work
    budget: tuple[int, int] | None = None
    from_tier = "smoke"
    cost_ns_per_word: float = 3
    batch_words = BATCH_WORDS  # words measured by one call of measure (bounds temporaries; not a result parameter)
    state_fields: tuple = ()  # instance attributes that are running state beyond records and totals (none so far)
    _settable = ("sample_words", "max_samples", "second_level")  # class attributes an instance may change

    def __init__(self, start: int = 0, **parameters):
        if start < 0:
            raise ValueError("start must be >= 0")
        self.start = start
        self.end = start
        self.parameters = dict(parameters)
        self._head_needed = (-start) % self.sample_words
        self._head = np.empty(0, dtype=np.uint32)
        self._tail = np.empty(0, dtype=np.uint32)
        self._records: list[dict] = []
        self.totals: dict[str, int | np.ndarray] = {}   # count totals: Python ints or int64 arrays
        self.samples = 0
        self.skipped = 0  # complete samples beyond max_samples
        self._settled: tuple[int, list[dict]] | None = None   # (samples, results): settle()

    # -- the streaming interface -------------------------------------------------
    @property
    def aligned(self) -> bool:
        return self._head.size >= self._head_needed

    def update(self, words) -> None:
        words = np.ascontiguousarray(words, dtype=np.uint32).reshape(-1)
        position = self.end  # stream index of words[0]
        self.end += words.size
        if not self.aligned:
            take = self._head_needed - self._head.size
            self._head = np.concatenate([self._head, words[:take]])
            words = words[take:]
            position += take
            if not self.aligned:
                return
        if self._tail.size:
            need = self.sample_words - self._tail.size
            if words.size < need:
                self._tail = np.concatenate([self._tail, words])
                return
            self._consume(np.concatenate([self._tail, words[:need]]), position - self._tail.size)
            words = words[need:]
            position += need
        usable = words.size - words.size % self.sample_words
        if usable:
            self._consume(words[:usable], position)
        self._tail = words[usable:].copy()

    def merge(self, other: Accumulator) -> Accumulator:
        """Absorb ``other``, which must have seen the words right after this one's."""
        if type(other) is not type(self) or other.parameters != self.parameters:
            raise ValueError("can only merge accumulators of the same test and parameters")
        if other.start != self.end:
            raise ValueError(f"not contiguous: this one ends at word {self.end}, the other starts at {other.start}")
        if not self.aligned:
            # this piece never reached a sample boundary: it is the front of other's head
            other_head = other._head if other._head_needed else np.empty(0, np.uint32)
            self._head = np.concatenate([self._head, other_head])
            if other.aligned:
                self._adopt(other)
            self.end = other.end
            return self
        middle = np.concatenate([self._tail, other._head])
        if other.aligned:
            if middle.size:
                self._consume(middle, other.start - self._tail.size)  # one sample, cut in two by the split
            self._adopt(other)
        else:
            self._tail = middle
        self.end = other.end
        return self

    def _adopt(self, other: Accumulator) -> None:
        self._records.extend(other._records)
        for key, value in other.totals.items():
            self.totals[key] = self.totals[key] + value if key in self.totals else _copy(value)
        self.samples += other.samples
        self.skipped += other.skipped
        self._tail = other._tail

    def _consume(self, words: np.ndarray, position: int) -> None:
        every = words.reshape(-1, self.sample_words)
        if self.max_samples is not None:  # a budget: only samples 0 .. max_samples-1 of the stream
            first_index = position // self.sample_words
            keep = max(0, min(every.shape[0], self.max_samples - first_index))
            self.skipped += every.shape[0] - keep
            every = every[:keep]
        step = max(1, self.batch_words // self.sample_words)  # bounded temporaries; results per sample
        for first in range(0, every.shape[0], step):
            samples = every[first:first + step]
            records, totals = self.measure(samples)
            self._records.append({k: np.asarray(v) for k, v in records.items()})
            for key, value in totals.items():
                value = np.asarray(value, dtype=np.int64)
                if value.ndim == 0:
                    value = int(value)  # scalar totals in Python ints: no overflow on long streams
                self.totals[key] = self.totals[key] + value if key in self.totals else _copy(value)
            self.samples += samples.shape[0]

    @property
    def unused_words(self) -> int:
        return (self.end - self.start) - (self.samples + self.skipped) * self.sample_words

    # -- state (checkpoints; see the module docstring) ----------------------------
    def state(self) -> dict:
        """What this accumulator has seen, as a flat dict of plain values (no derived tables)."""
        cls = type(self)
        out = {"class": _class_name(cls), "version": STATE_VERSION, "start": self.start, "end": self.end,
               "samples": self.samples, "skipped": self.skipped,
               "head": self._head.copy(), "tail": self._tail.copy()}
        for key, value in self.parameters.items():
            out["param/" + key] = _plain(value)
        for attribute in self._settable:
            value = self.__dict__.get(attribute, getattr(cls, attribute))
            if value != getattr(cls, attribute):
                if value is None:
                    raise ValueError(f"{attribute} = None on an instance cannot be saved")
                out["set/" + attribute] = _plain(value)
        if self._records:
            for key in self._records[0]:
                out["records/" + key] = np.concatenate([r[key] for r in self._records])
        for key, value in self.totals.items():
            out["totals/" + key] = value.copy() if isinstance(value, np.ndarray) else _plain(int(value))
        for name in self.state_fields:
            value = getattr(self, name)
            out["own/" + name] = value.copy() if isinstance(value, np.ndarray) else _plain(value)
        return out

    @classmethod
    def from_state(cls, state) -> Accumulator:
        """The accumulator ``state`` describes (from ``state()``, or read back from an .npz:
        0-d arrays are accepted for scalars). Raises StateError (one line) if it is not a
        state of this class."""
        try:
            return cls._from_state(state)
        except StateError:
            raise
        except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as error:
            raise StateError(f"not a state of {cls.name}: {one_line(error)}") from None

    @classmethod
    def _from_state(cls, state) -> Accumulator:
        if not hasattr(state, "keys"):
            raise TypeError(f"a state is a dict, not {type(state).__name__}")
        kind = _scalar(state["class"])
        if kind != _class_name(cls):
            raise StateError(f"a state of {kind!r}, not of {_class_name(cls)}")
        if _int(state["version"]) != STATE_VERSION:
            raise StateError(f"state layout {_scalar(state['version'])!r}; this rngcheck reads {STATE_VERSION}")
        known = {"class", "version", "start", "end", "samples", "skipped", "head", "tail"}
        groups: dict[str, dict[str, Any]] = {"param": {}, "set": {}, "records": {}, "totals": {}, "own": {}}
        for key in state:
            if key in known:
                continue
            group, _, name = str(key).partition("/")
            if group not in groups or not name:
                raise StateError(f"unexpected key {key!r}")
            groups[group][name] = state[key]
        start = _int(state["start"], minimum=0)
        parameters = {name: _scalar(value) for name, value in groups["param"].items()}
        acc = cls(start, **parameters)
        if acc.parameters != parameters:
            raise StateError(f"parameters {parameters} do not rebuild the accumulator (it records {acc.parameters})")
        for name, value in groups["set"].items():
            if name not in cls._settable:
                raise StateError(f"{name} cannot be set on an instance")
            setattr(acc, name, _int(value, minimum=1) if name != "second_level" else bool(_scalar(value)))
        acc._head_needed = (-start) % acc.sample_words
        acc.end = _int(state["end"], minimum=start)
        acc.samples = _int(state["samples"], minimum=0)
        acc.skipped = _int(state["skipped"], minimum=0)
        acc._head = _array(state["head"], "head", np.uint32, ndim=1)
        acc._tail = _array(state["tail"], "tail", np.uint32, ndim=1)
        if acc._head.size > acc._head_needed or acc._tail.size >= acc.sample_words:
            raise StateError("held-back fragments longer than a sample")
        if not acc.aligned and (acc._tail.size or acc.samples or acc.skipped):
            raise StateError("samples measured before the first sample boundary")
        if acc.max_samples is not None and acc.samples > acc.max_samples:
            raise StateError(f"{acc.samples} samples measured, the budget is {acc.max_samples}")
        if acc.unused_words < acc._head.size + acc._tail.size:
            raise StateError("more words held and measured than seen")
        records = {name: _array(value, "records/" + name) for name, value in groups["records"].items()}
        if bool(records) != bool(acc.samples):
            raise StateError(f"{len(records)} kinds of record for {acc.samples} samples")
        for name, value in records.items():
            if value.ndim < 1 or value.shape[0] != acc.samples:
                rows = value.shape[0] if value.ndim else 0
                raise StateError(f"records/{name} has {rows} rows for {acc.samples} samples")
        acc._records = [records] if records else []
        for name, value in groups["totals"].items():  # scalars are Python ints (no overflow), arrays int64
            if isinstance(value, np.ndarray) and value.ndim:
                acc.totals[name] = _array(value, "totals/" + name, np.int64)
            else:
                acc.totals[name] = _int(value)
        missing = [name for name in cls.state_fields if name not in groups["own"]]
        if missing or set(groups["own"]) - set(cls.state_fields):
            raise StateError(f"own state {sorted(groups['own'])}, the class keeps {sorted(cls.state_fields)}")
        for name, value in groups["own"].items():
            setattr(acc, name, value.copy() if isinstance(value, np.ndarray) and value.ndim else _scalar(value))
        return acc

    # -- for subclasses ----------------------------------------------------------
    def measure(self, samples: np.ndarray) -> tuple[dict, dict]:
        """(per-sample records: name -> array with one row per sample, totals: name -> int array summed)."""
        raise NotImplementedError

    def evaluate(self, records: dict, totals: dict, samples: int) -> list[dict]:
        raise NotImplementedError

    # -- results -----------------------------------------------------------------
    def records(self) -> dict:
        if not self._records:
            return {}
        return {k: np.concatenate([r[k] for r in self._records]) for k in self._records[0]}

    @property
    def budget_read(self) -> bool:
        """A budgeted test that has all the samples it will take (more words change no result)."""
        return self.max_samples is not None and self.samples >= self.max_samples

    def settle(self) -> None:
        """Compute the results now and keep them while no sample is added (battery.feed_parallel
        settles the budgeted tests whose budget is read while its workers read on: the p-values
        the parent computes at the end are then fewer); nothing to do where they are kept already."""
        if self._settled is None or self._settled[0] != self.samples:
            self._settled = None
            self._settled = (self.samples, self.result())

    def result(self) -> list[dict]:
        """The results (possibly several per test); [] before the first complete sample."""
        if self._settled is not None and self._settled[0] == self.samples:
            return copy.deepcopy(self._settled[1])
        if self.samples == 0:
            return []
        records = self.records()
        totals = {k: _copy(v) for k, v in self.totals.items()}
        results = self.evaluate(records, totals, self.samples)
        for entry in results:
            entry.setdefault("test", self.name)
            entry.setdefault("source", self.source)
            entry["samples"] = self.samples
            entry["sample_words"] = self.sample_words
            entry["bytes"] = self.samples * self.sample_words * 4
            entry["parameters"] = {**self.parameters, **entry.get("parameters", {})}
        return results

    def minimum_words(self) -> int:
        return self.sample_words

    # helpers -------------------------------------------------------------------
    def finding(self, level: str, statistic: float, pvalue: pvalues.PValue, **extra) -> dict:
        statistic = float(statistic)
        degenerate = pvalue["p"] != pvalue["p"]
        entry = {
            "test": self.name,
            "level": level,
            "statistic": statistic if math.isfinite(statistic) else None,
            "p_value": None if degenerate else pvalue["p"],
            "q_value": pvalue["q"],
            "log10_p": pvalue["log10_p"],
            "tail": pvalue["tail"],
            "p_display": pvalues.display(pvalue["p"], pvalue["q"]),
        }
        entry.update(extra)
        return entry

    def second_level_ks(self, first_level_p) -> list[dict]:
        """Second level (TestU01 guide section 1.3; NIST SP 800-22 section 4.2.2)."""
        first_level_p = np.asarray(first_level_p, dtype=float)
        if not self.second_level or first_level_p.size < MIN_SECOND_LEVEL:
            return []
        statistic, p = pvalues.ks_uniform(first_level_p)
        return [self.finding("second-level", statistic, p, second_level="KS of per-sample p-values",
                             first_level_count=int(first_level_p.size))]


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _class_name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _plain(value):
    """A parameter or scalar total as a value np.savez stores without pickle: an int outside
    int64 becomes its decimal string (``_int`` reads it back)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, int):
        if not isinstance(value, (bool, float, str)):
            raise TypeError(f"{type(value).__name__} is not a plain state value")
        return value
    return value if _INT64_MIN <= value <= _INT64_MAX else str(value)


def _scalar(value):
    """A Python scalar from a plain value or a 0-d array (what np.load gives for a scalar)."""
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise TypeError(f"expected a single value, got an array of shape {value.shape}")
        value = value[()]
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float, str)):
        raise TypeError(f"{type(value).__name__} is not a plain state value")
    return value


def _int(value, minimum=None) -> int:
    value = _scalar(value)
    if isinstance(value, str) and value.lstrip("-").isdigit() and value.isascii():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{value} is below {minimum}")
    return value


def _array(value, what: str, dtype=None, ndim=None) -> np.ndarray:
    """A copy of a numeric array of the state; of ``dtype`` when given (integers are converted
    only when every value fits: never a silent wrap or rounding)."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{what} is {type(value).__name__}, not an array")
    if value.dtype.kind not in "biuf" or value.dtype.hasobject:
        raise TypeError(f"{what} has dtype {value.dtype}, not numbers")
    if ndim is not None and value.ndim != ndim:
        raise TypeError(f"{what} has shape {value.shape}")
    if dtype is not None and value.dtype != np.dtype(dtype):
        info = np.iinfo(dtype)
        if value.dtype.kind not in "iu" or (value.size and (value.min() < info.min or value.max() > info.max)):
            raise TypeError(f"{what} has dtype {value.dtype}, not {np.dtype(dtype)}")
    return np.array(value, dtype=dtype, copy=True)


def fsum(values) -> float:
    """Exactly rounded sum: independent of the order (and so of how the stream was split)."""
    return math.fsum(float(v) for v in np.asarray(values, dtype=float).reshape(-1))


def chi2_counts(observed, probabilities) -> float:
    """Pearson's chi-square of integer counts against exact cell probabilities."""
    observed = np.asarray(observed, dtype=np.float64)
    expected = observed.sum(axis=-1, keepdims=True) * np.asarray(probabilities, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # a sample that observed nothing (an all-zero
        return ((observed - expected) ** 2 / expected).sum(axis=-1)  # stream) has no chi-square: nan


def chi2_uniform_exact(counts) -> np.ndarray:
    """Chi-square of counts against equal cells, from exact integer arithmetic.

    chi2 = sum (O - E)^2 / E with E = n/k equals (k * sum O^2 - n^2) / n: integers until
    the last division, so the value is identical however it is computed.
    """
    counts = np.asarray(counts, dtype=np.int64)
    k = counts.shape[-1]
    n = counts.sum(axis=-1)
    if counts.ndim == 1:
        squares = (counts.astype(object) ** 2).sum(axis=-1)
        total = int(n)
        return np.float64((k * int(squares) - total * total) / total)
    sq = np.einsum("...i,...i->...", counts, counts)  # int64: fine for per-sample counts
    return (k * sq - n * n) / n
