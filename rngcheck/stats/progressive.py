"""``rngcheck stats --progressive``: a stream tested at every doubling of its length until it fails.

PractRand's way of running (``RNG_test``): read without end, report at 64 KiB, 128 KiB, 256 KiB,
..., stop at the first failure, so that the answer is a length ("fails at 32 MiB"). Here each
doubling L gives exactly the document ``rngcheck stats --tier T --bytes L --no-interstream``
gives on the first L bytes (the same p-values, the same retest of a SUSPECT on the next L bytes,
the same verdict), so the length it stops at is the one benchmarks/bench_stats.py's power table
measures; it stops at the first FAIL (after its retest) or at ``--max-bytes``.

Each doubling reads only what it adds: the accumulators of the tests that read the whole
stream carry their state from L/2 to L and read bytes L/2 .. L-1 (merged exactly: the
accumulators are mergeable); a test with a budget (Accumulator.budget: the slow tests read the
first 1/divisor of the tier's bytes) reads on from where it stopped to its budget at L, which
lies before L/2 once the stream is long: those bytes are read again from the source (a file, a
backend's counter range, or standard input's spool, which keeps what was read on the disk until
the run ends). Every feed goes through the battery's fork pool or the Dask executor, with
checkpoints (each doubling's range is a stream of its own in the checkpoint directory).

The line at each doubling grades its worst result with PractRand's words, on rngcheck's own
thresholds (battery.FAIL_AT and the family's SUSPECT level; not PractRand's): normal (tail above
1e-3), unusual (below 1e-3), suspicious (a SUSPECT, retested on the next range), FAIL.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..errors import BackendProcessFailed, BackendStopped, RemoteError, one_line
from ..results.verdicts import STATS_FAIL, STATS_SUSPECT
from . import battery
from .tiers import MAX_BYTES, MiB

START_BYTES = 64 << 10   # the first report, as the power table's first length
UNUSUAL = 1e-3           # a tail below this is "unusual" (PractRand's word) when it is not SUSPECT
# A doubling's new range is read by several processes from 16 MiB on (battery.PARALLEL_MIN_WORDS
# is larger: a whole run's start is dear with the budgeted tests, a doubling's new range is not)
PARALLEL_MIN_WORDS = 4 << 20


def grade(entry: dict, suspect_at: float) -> str:
    """PractRand's word for a judged result (on rngcheck's thresholds: module docstring)."""
    if entry["verdict"] == STATS_FAIL:
        return STATS_FAIL               # PractRand's word is the verdict's
    if entry["first_verdict"] == STATS_SUSPECT:
        return "suspicious"
    return "unusual" if battery.tail(entry) < UNUSUAL else "normal"


def strongest(results: list) -> dict | None:
    """The most extreme result: the smallest tail, then the smallest log10 p (past the floats' range)."""
    def key(e):
        return battery.tail(e), -1e9 if e["log10_p"] is None else e["log10_p"], e["test"]
    return min(results, key=key, default=None)


def size_text(nbytes: int) -> str:
    """'64 KiB (2^16 bytes)'; a length that is not a power of two without the exponent."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            text = f"{nbytes / size:g} {unit}"
            break
    else:
        text = f"{nbytes} bytes"
    return f"{text} (2^{nbytes.bit_length() - 1} bytes)" if nbytes > 0 and nbytes & (nbytes - 1) == 0 else text


@dataclass
class State:
    """The accumulators carried from one doubling to the next."""
    names: list = field(default_factory=list)   # a key per test: its class and parameters
    accs: list = field(default_factory=list)    # its accumulator, or None before it read anything
    read: int = 0                               # words of the stream the whole-stream tests have read


def _key(factory) -> tuple:
    probe = factory(start=0)
    return type(probe), tuple(sorted(probe.parameters.items())), probe.name


def _limit(acc, words: int) -> int:
    """The words a test reads of a stream of ``words`` words (its budget, if any, on the sample grid)."""
    if acc.max_samples is None:
        return words
    return min(words, acc.max_samples * acc.sample_words)


def _placed(factory, first: int):
    """``factory`` with its accumulators' first word at ``first`` of the stream (the feeds' starts
    are relative to the range they read)."""
    def make(start: int = 0):
        return factory(start=first + start)
    return make


def _feed(source, factories, begin: int, words: int, *, workers: int, executor, label: str):
    """Words begin .. begin+words-1 into new accumulators whose first word is ``begin``."""
    placed = [_placed(f, begin) for f in factories]
    if executor is not None:
        return executor.feed(source, placed, words, offset=begin, stream=label)
    return battery.feed_parallel(source, placed, words, workers, offset=begin, min_words=PARALLEL_MIN_WORDS)


def advance(state: State, source, factories: list, words: int, *, workers: int, executor=None) -> int:
    """Bring every test to a stream of ``words`` words: the new range for the whole-stream tests,
    the next part of its budget for each limited one (read again from the source where it lies
    behind). Returns the words of the stream there were (fewer at its end)."""
    keys = [_key(f) for f in factories]
    if keys != state.names:  # a test added, or its parameters changed with the length: it starts afresh
        old = dict(zip(state.names, state.accs))
        state.accs = [old.get(k) for k in keys]
        state.names = keys
    wanted: dict[tuple[int, int], list[int]] = {}
    for i, factory in enumerate(factories):
        acc = state.accs[i]
        probe = factory(start=0)
        begin = acc.end if acc is not None else 0
        end = _limit(probe, words)
        if acc is not None:
            acc.max_samples = probe.max_samples  # the budget of this length (it only grows)
        if end > begin:
            wanted.setdefault((begin, end), []).append(i)
    got = words
    for (begin, end), members in sorted(wanted.items()):
        label = f"progressive {4 * words}" + ("" if end == words else f" to {end}")  # a checkpoint stream each
        parts, count = _feed(source, [factories[i] for i in members], begin, end - begin,
                             workers=workers, executor=executor, label=label)
        if count < end - begin and end == words:
            got = begin + count  # the stream ended
        for i, part in zip(members, parts):
            state.accs[i] = part if state.accs[i] is None else state.accs[i].merge(part)
    state.read = got
    return got


def judge_length(state: State, source, factories: list, words: int, got: int, *, tier: str, workers: int,
                 executor=None, say=lambda text: None) -> dict:
    """The battery's document of the first ``got`` words (``words`` asked): results, verdicts,
    the retest of every SUSPECT on the next range, as battery.run gives it."""
    began = time.perf_counter()
    reading = battery.Reading()
    group = battery.StreamGroup("main", source, factories, words)
    battery._record_stream(reading, group, [acc for acc in state.accs if acc is not None], got, tier)
    suspect_at = battery.judge_first(reading.results)
    if got == words:
        battery.retest_suspects(source, reading, suspect_at, workers=workers, say=say, executor=executor)
    doc = battery.document(reading, source=source, tier=tier, nbytes=words * 4, seed=None, reproduce="",
                           suspect_at=suspect_at, elapsed=time.perf_counter() - began)
    return doc


def summary(doc: dict, nbytes: int, elapsed: float) -> dict:
    """A doubling in a few numbers: its verdict, counts, grades and worst result."""
    suspect_at = doc["thresholds"]["suspect"]
    grades: dict[str, int] = {}
    for entry in doc["results"]:
        word = grade(entry, suspect_at)
        grades[word] = grades.get(word, 0) + 1
    worst = strongest(doc["results"])
    return {"bytes": nbytes, "bytes_tested": doc["bytes_tested"], "verdict": doc["verdict"], "counts": doc["counts"],
            "grades": grades, "elapsed_seconds": elapsed,
            "worst": None if worst is None else {"test": worst["test"], "level": worst["level"],
                                                 "p_display": worst["p_display"], "grade": grade(worst, suspect_at)},
            "results": doc["results"], "not_run": doc["not_run"]}


def line(entry: dict) -> str:
    """The one terminal line of a doubling."""
    worst = entry["worst"]
    grades = entry["grades"]
    if worst is None:
        what = "no test had enough data"
    elif worst["grade"] == "normal":
        what = f"no anomalies in {sum(grades.values())} test results"
    else:
        odd = ", ".join(f"{grades[w]} {w}" for w in (STATS_FAIL, "suspicious", "unusual") if grades.get(w))
        what = f"{odd} of {sum(grades.values())}; worst {worst['test']} ({worst['level']}) p = {worst['p_display']}"
    return (f"length= {size_text(entry['bytes_tested'])}, time= {entry['elapsed_seconds']:.1f} s: "
            f"{entry['verdict']}: {what}")


def run(source, *, tier: str = "standard", max_bytes: int | None = None, start_bytes: int = START_BYTES,
        workers: int | None = None, executor=None, report=lambda entry: None, reproduce: str = "",
        seed=None) -> dict:
    """Double from ``start_bytes`` until a FAIL, the stream's end or ``max_bytes``; ``report(entry)``
    after each doubling (summary()). The document is the last doubling's battery document with
    "progressive" added (module docstring). Without ``max_bytes`` it stops at tiers.MAX_BYTES (1 PiB,
    where the tests' counts stop being exact), as --max-bytes does."""
    workers = workers or battery.cores()
    began = time.perf_counter()
    state = State()
    lengths: list[dict] = []
    nbytes, doc, stopped, message = max(4, start_bytes - start_bytes % 4), None, "max-bytes", ""
    while nbytes <= min(max_bytes or MAX_BYTES, MAX_BYTES):
        words = nbytes // 4
        factories = [battery.budgeted(f, nbytes) for f in battery.main_tests(tier, nbytes)]
        try:
            got = advance(state, source, factories, words, workers=workers, executor=executor)
            if got < words and lengths and 4 * got == lengths[-1]["bytes_tested"]:
                stopped = "end-of-stream"  # it ended right at the last length: nothing new to report
                break
            doc = judge_length(state, source, factories, words, got, tier=tier, workers=workers, executor=executor)
        except KeyboardInterrupt:
            stopped, message = "interrupted", f"interrupted while reading towards {size_text(nbytes)}"
            break
        except (BackendProcessFailed, BackendStopped, RemoteError) as failure:
            stopped, message = "backend-failed", f"the backend failed towards {size_text(nbytes)}: {one_line(failure)}"
            break
        entry = summary(doc, nbytes, time.perf_counter() - began)
        lengths.append(entry)
        report(entry)
        if doc["counts"][STATS_FAIL]:
            stopped = "failed"
            break
        if got < words:
            stopped = "end-of-stream"
            break
        nbytes *= 2
    return _document(doc, lengths, stopped=stopped, message=message, tier=tier, start_bytes=start_bytes,
                     max_bytes=max_bytes, source=source, reproduce=reproduce, seed=seed,
                     elapsed=time.perf_counter() - began)


def _document(doc, lengths, *, stopped, message, tier, start_bytes, max_bytes, source, reproduce, seed, elapsed):
    """The last doubling's document (or an empty one when none finished) with "progressive"."""
    if doc is None:
        doc = battery.document(battery.Reading(complete=False, message=message), source=source, tier=tier,
                               nbytes=start_bytes, seed=seed, reproduce=reproduce, suspect_at=battery.suspect_level(1),
                               elapsed=elapsed)
    doc.update(seed=seed, reproduce=reproduce, elapsed_seconds=elapsed)
    doc["throughput_mb_s"] = doc["bytes_tested"] / MiB / elapsed if elapsed > 0 else None
    failed = lengths[-1]["bytes_tested"] if stopped == "failed" else None
    if stopped == "interrupted":
        doc["interrupted"], doc["complete"] = True, False
    if stopped == "backend-failed":
        doc["backend_failed"], doc["complete"] = True, False
    if message:
        doc["message"] = message
    doc["progressive"] = {"start_bytes": start_bytes, "max_bytes": max_bytes, "stopped": stopped,
                          "failed_at_bytes": failed,
                          "lengths": [{k: v for k, v in e.items()} for e in lengths]}
    return doc
