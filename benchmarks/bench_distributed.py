"""Benchmark of the battery on Dask (rngcheck.stats.distributed): one process against a
LocalCluster of one and of two workers on the same stream, in one run, with the ratios;
the cluster start time, the per-task overhead and the state a range returns.

    python benchmarks/bench_distributed.py [--bytes 1G] [--shard-bytes 32M] [--tasks 200] [--no-pool]

The stream is Philox4x32-10 written to a temporary file first (as benchmarks/bench_stats.py
does: the generator is not what is measured); only the main stream is tested (no
inter-stream pairs, which need a generator), deep tier. Every run's document is checked to
equal the single-process one. Target on an idle 2-core machine (issue 16): local:2 at least
1.7x local:1 and 1.5x one process.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import tempfile
import time

from rngcheck.stats import battery, distributed

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_stats import write_stream  # noqa: E402  (the same 1 GiB file bench_stats writes)

from rngcheck.stats.command import _json_default, parse_bytes
from rngcheck.stats.streams import RawSource

MiB = 1 << 20
VOLATILE = ("execution", "elapsed_seconds", "throughput_mb_s")


def canonical(doc) -> str:
    return json.dumps({k: v for k, v in doc.items() if k not in VOLATILE}, sort_keys=True, default=_json_default)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"


def timed_run(path, nbytes, **options):
    began = time.perf_counter()
    doc = battery.run(RawSource(path), tier="deep", nbytes=nbytes, interstream=False, **options)
    return doc, time.perf_counter() - began


def task_overhead(executor, tasks: int) -> float:
    """Seconds per task of a task that does nothing, submitted and gathered in one batch."""
    client = executor.client
    client.gather([client.submit(distributed.environment, pure=False) for _ in range(8)])  # warm up
    began = time.perf_counter()
    client.gather([client.submit(distributed.environment, pure=False) for _ in range(tasks)])
    return (time.perf_counter() - began) / tasks


def range_result(path, shard_bytes, budget_bytes) -> tuple[float, int]:
    """CPU seconds of the file's second range when the run reads ``budget_bytes`` (the slow
    tests' budgets: Accumulator.budget) and the bytes of state it returns."""
    factories = [battery.budgeted(f, budget_bytes) for f in battery.main_tests()]
    words = shard_bytes // 4
    began = time.process_time()
    packed, _ = distributed.feed_range(("raw", os.path.abspath(path)), factories, 0, words, words,
                                       distributed.environment())
    return time.process_time() - began, len(pickle.dumps(packed, protocol=5))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", default="1G")
    parser.add_argument("--shard-bytes", default="32M")
    parser.add_argument("--tasks", type=int, default=200, help="tasks for the per-task overhead")
    parser.add_argument("--no-pool", action="store_true", help="leave out the local fork pool (--workers 2)")
    args = parser.parse_args(argv)
    nbytes, shard = parse_bytes(args.bytes), distributed.parse_shard_bytes(args.shard_bytes)
    print(f"== rngcheck stats on Dask: {nbytes / MiB:.0f} MiB main stream from a file, deep tier, shards of "
          f"{shard / MiB:.0f} MiB; {os.cpu_count()} cores, load average {load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "philox10.bin")
        write_stream(path, nbytes)  # only the main stream is read: the file holds exactly it
        rows = {}
        one, seconds = timed_run(path, nbytes, workers=1)
        rows["one process"] = seconds
        print(f"{'one process':18s} {seconds:7.2f} s  {nbytes / 1e6 / seconds:7.1f} MB/s  verdict {one['verdict']}",
              flush=True)
        reference = canonical(one)
        if not args.no_pool:
            doc, seconds = timed_run(path, nbytes, workers=2)
            assert canonical(doc) == reference, "the fork pool's document differs"
            rows["fork pool of 2"] = seconds
            print(f"{'fork pool of 2':18s} {seconds:7.2f} s  {nbytes / 1e6 / seconds:7.1f} MB/s", flush=True)
        starts, overhead = {}, None
        for workers in (1, 2):
            name = f"local:{workers}"
            with distributed.DaskExecutor(name, shard_bytes=shard) as executor:
                starts[name] = executor.start_seconds
                doc, seconds = timed_run(path, nbytes, executor=executor)
                assert canonical(doc) == reference, f"{name}: the document differs from one process"
                if workers == 1:
                    overhead = task_overhead(executor, args.tasks)
            rows[name] = seconds
            print(f"{name:18s} {seconds:7.2f} s  {nbytes / 1e6 / seconds:7.1f} MB/s  ({doc['execution']['ranges']} "
                  f"ranges; cluster started in {starts[name]:.2f} s, not counted)", flush=True)
        front = range_result(path, shard, 1 << 40)  # a 1 TiB run's front: every slow test still reads
        tail = range_result(path, shard, shard)  # past the slow tests' budgets (most of a deep run)
    print(f"per-task overhead (local:1, {args.tasks} empty tasks): {overhead * 1e3:.1f} ms")
    for name, (cost, returned) in (("with the slow tests", front), ("past their budgets", tail)):
        print(f"one {shard / MiB:.0f} MiB range {name}: {cost:.2f} CPU-s, {shard / 1e6 / cost:.0f} MB/CPU-s, "
              f"returns {returned / 1e6:.2f} MB of state ({100 * returned / shard:.1f}% of its data)")
    print(f"ratios: local:2 / local:1 = {rows['local:1'] / rows['local:2']:.2f}x (target >= 1.7), "
          f"local:2 / one process = {rows['one process'] / rows['local:2']:.2f}x (target >= 1.5), "
          f"local:1 / one process = {rows['one process'] / rows['local:1']:.2f}x")
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
