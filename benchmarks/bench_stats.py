"""Benchmark of the statistical battery: speed, power, false alarms (prints a report).

    python benchmarks/bench_stats.py speed   [--deep-bytes 1G] [--tiers smoke,standard] [--workers 1]
                                                                   # MB/s and wall time per tier, from a file
    python benchmarks/bench_stats.py power   [--max-bytes 256M]     # bytes each weak generator needs to FAIL
    python benchmarks/bench_stats.py false-alarms [--seeds 100] [--tier standard]
    python benchmarks/bench_stats.py all

Speed reads a stream from a file (Philox4x32-10 words written beforehand), so the
generator is not what is measured; inter-stream tests need a generator and are not
included there. Power doubles the stream length from 64 KiB until the first FAIL.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time

from rngcheck.stats import battery, panel
from rngcheck.stats.command import parse_bytes
from rngcheck.stats.streams import RawSource, philox_source

MiB = 1 << 20


def write_stream(path: str, nbytes: int) -> None:
    source = philox_source(0xBE7C)
    with open(path, "wb") as handle:
        left = nbytes // 4
        while left:
            words = source.read(min(left, 1 << 22))
            handle.write(words.astype("<u4").tobytes())
            left -= words.size


def speed(deep_bytes: int, tiers=("smoke", "standard", "deep"), workers=None) -> None:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print("== speed: battery on a file (main stream; no inter-stream), {} cores, load average {}".format(
        os.cpu_count(), " ".join(f"{x:.2f}" for x in load) if load else "?"))
    sizes = {"smoke": battery.TIERS["smoke"], "standard": battery.TIERS["standard"], "deep": deep_bytes}
    sizes = {tier: nbytes for tier, nbytes in sizes.items() if tier in tiers}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "philox10.bin")
        write_stream(path, max(sizes.values()))
        for tier, nbytes in sizes.items():
            began = time.perf_counter()
            doc = battery.run(RawSource(path), tier=tier, nbytes=nbytes, workers=workers)
            wall = time.perf_counter() - began
            print(f"{tier:9s} {nbytes / MiB:8.0f} MiB  {wall:7.1f} s  {nbytes / 1e6 / wall:7.1f} MB/s  "
                  f"verdict {doc['verdict']}  ({len(doc['results'])} p-values)", flush=True)
    if load:
        print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


def first_fail(factory, max_bytes: int, start: int = 1 << 16, interstream: bool = True):
    nbytes = start
    while nbytes <= max_bytes:
        began = time.perf_counter()
        doc = battery.run(factory(), tier="deep", nbytes=nbytes, interstream=interstream)
        wall = time.perf_counter() - began
        if doc["verdict"] == "FAIL":
            failing = [e for e in doc["results"] if e["verdict"] == "FAIL"]
            worst = min(failing, key=lambda e: -1e9 if e["log10_p"] is None else e["log10_p"])
            return nbytes, worst, len(failing), wall
        nbytes *= 2
    return None, None, 0, None


def power(max_bytes: int) -> None:
    print(f"== power: bytes of the main stream before the first FAIL (doubling from 64 KiB, up to {max_bytes / MiB:.0f} MiB;"
          " inter-stream pairs read 1/8 of it, at least 1 MiB, where the generator has neighbours)")
    for name, factory in {**panel.WEAK, **panel.BOUNDARY, **panel.GOOD}.items():
        for interstream in (False, True):
            if interstream and factory().neighbour("key+1") is None:
                continue  # no neighbour streams for this generator
            label = f"{name:12s} {'+ inter-stream' if interstream else 'main only':15s}"
            nbytes, worst, count, wall = first_fail(factory, max_bytes, interstream=interstream)
            if nbytes is None:
                print(f"{label} no FAIL up to {max_bytes / MiB:.0f} MiB", flush=True)
            else:
                print(f"{label} FAIL at {nbytes / MiB:9.3f} MiB ({count} failing p-values; strongest "
                      f"{worst['test']} [{worst['stream']}] p = {worst['p_display']}) in {wall:.1f} s", flush=True)


def false_alarms(seeds: int, tier: str) -> None:
    print(f"== false alarms: {seeds} Philox4x32-10 streams (keys 1..{seeds}), tier {tier}")
    verdicts = collections.Counter()
    flagged = collections.Counter()
    began = time.perf_counter()
    for seed in range(1, seeds + 1):
        doc = battery.run(philox_source(seed), tier=tier)
        verdicts[doc["verdict"]] += 1
        for e in doc["results"]:
            if e["first_verdict"] != "PASS":
                flagged[f"{e['test']} [{e['stream']}] {e['first_verdict']}->{e['verdict']}"] += 1
    print(f"final verdicts: {dict(verdicts)}; FAIL rate {verdicts['FAIL'] / seeds:.3f}; "
          f"first-range SUSPECT/FAIL results: {dict(flagged) or 'none'}; {time.perf_counter() - began:.0f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["speed", "power", "false-alarms", "all"])
    parser.add_argument("--deep-bytes", default="1G")
    parser.add_argument("--tiers", default="smoke,standard,deep", help="speed: comma-separated tiers to time")
    parser.add_argument("--workers", type=int, default=None, help="speed: processes (default: up to 2)")
    parser.add_argument("--max-bytes", default="256M")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--tier", default="standard")
    args = parser.parse_args(argv)
    if args.what in ("speed", "all"):
        speed(parse_bytes(args.deep_bytes), tuple(args.tiers.split(",")), args.workers)
    if args.what in ("power", "all"):
        power(parse_bytes(args.max_bytes))
    if args.what in ("false-alarms", "all"):
        false_alarms(args.seeds, args.tier)
    return 0


if __name__ == "__main__":
    sys.exit(main())
