"""Throughput of real DirectML's DML_RANDOM_GENERATOR (on vkd3d + lavapipe here) vs the numpy reference.

    RNGCHECK_CACHE=/tmp/rc python benchmarks/bench_directml.py [--lib 0.2.5 --lib 0.2.0] [--repeats 5]
                                                               [--log2n 12 16 20 22]

Figures only, no verdict. Each DirectML build (--lib, repeatable; default 0.2.5 and 0.2.0)
is loaded with rngcheck.backends.load("directml:lib=...") in a worker process of its own
(a process holds one D3D12 and one DirectML), and the numpy reference backend
(rngcheck.backends.load("numpy"), i.e. rngcheck.reference) is timed in that same worker,
interleaved with it, so a busy machine slows both alike and the ratio stays fair.
All workers load first (a build that cannot load is reported in one line, exit 2, before
anything is measured); then they measure one after the other.

Cases (OutputTensor words, UINT32; the state's counter carries out of its low 64 bits):
  per call   16 words, packed: the fixed cost of one call. A sample is the mean of
             --calls consecutive calls; the figure is the best sample.
  packed     2^k words for each k of --log2n, a packed 1-D tensor.
  padded     rows x 8192 words (2^max(log2n) in all), strides (8192 + 16, 1): 16 unused
             words after each row, which neither contender may touch.
For each build, every case is first checked: the whole buffer (prefilled, padding
included) and the output state must equal the reference's, else one line and exit 1.
Then best of --repeats per case. GB/s counts the output words generated (4 bytes each) per
second of one whole call. A DirectML call is everything backend.random_generator does:
create, compile and initialise the operator, allocate the D3D12 buffers, upload the state
and the prefilled buffer, dispatch, read back, release; the first call of each case carries
one-time costs and is shown apart ("1st call"), not timed. "DML/numpy" is numpy's best time
over DirectML's: above 1, DirectML is faster.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

DEFAULT_LIBS = ("0.2.5", "0.2.0")
ROW, PAD = 8192, 16
TINY = 16
SENTINEL = 0xA5A5A5A5


# -- the worker: one DirectML build and the numpy reference, in one process ------------------

def cases(log2n):
    """[(label, sizes, strides, buffer words)]"""
    found = [("per call", (TINY,), None, TINY)]
    found += [(f"packed 2^{k}", (1 << k,), None, 1 << k) for k in log2n]
    rows = max(1, (1 << max(log2n)) // ROW)
    found.append((f"padded {rows}x{ROW} +{PAD}", (rows, ROW), (ROW + PAD, 1), rows * (ROW + PAD)))
    return found


def seconds(run, calls=1):
    started = time.perf_counter()
    for _ in range(calls):
        run()
    return (time.perf_counter() - started) / calls


def first_difference(got, want):
    wrong = np.flatnonzero(got != want)
    i = int(wrong[0])
    return (f"{wrong.size} of {want.size} words differ, first at offset {i} "
            f"(0x{int(got[i]):08X}, want 0x{int(want[i]):08X})")


def measure(directml, numpy_backend, args, state):
    """Check every case, then time them; a dict for the parent."""
    plan = []
    for label, sizes, strides, extent in cases(args.log2n):
        want = np.full(extent, SENTINEL, dtype=np.uint32)
        got = want.copy()
        want_state = numpy_backend.random_generator(state, sizes, strides, want)
        first = seconds(lambda sizes=sizes, strides=strides, got=got:
                        directml.random_generator(state, sizes, strides, got))
        got_state = directml.random_generator(state, sizes, strides, got)
        if not np.array_equal(got, want):
            return {"mismatch": f"{label}: {first_difference(got, want)}"}
        if not np.array_equal(np.asarray(got_state), np.asarray(want_state)):
            return {"mismatch": f"{label}: output state {list(map(int, got_state))}, want {list(map(int, want_state))}"}
        plan.append((label, sizes, strides, want, got, first))

    rows = []
    for label, sizes, strides, want, got, first in plan:
        mine = np.full(want.size, SENTINEL, dtype=np.uint32)
        runs = {"directml": lambda sizes=sizes, strides=strides, got=got:
                    directml.random_generator(state, sizes, strides, got),
                "numpy": lambda sizes=sizes, strides=strides, mine=mine:
                    numpy_backend.random_generator(state, sizes, strides, mine)}
        calls = args.calls if label == "per call" else 1
        best = dict.fromkeys(runs, float("inf"))
        for repeat in range(args.repeats):
            for name in (runs if repeat % 2 == 0 else reversed(list(runs))):   # alternate who goes first
                best[name] = min(best[name], seconds(runs[name], calls))
        if not (np.array_equal(got, want) and np.array_equal(mine, want)):
            return {"mismatch": f"{label}: a buffer changed while timing"}
        rows.append({"case": label, "words": int(np.prod(sizes)), "extent": int(want.size),
                     "first": first, "directml": best["directml"], "numpy": best["numpy"]})
    return {"rows": rows}


def worker(args):
    """Protocol on the original stdout, one JSON object a line: ready (or unavailable), then the results."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                       # anything a library prints goes to stderr
    sys.stdout = sys.stderr

    def send(message):
        channel.write(json.dumps(message) + "\n")

    from rngcheck import counter
    from rngcheck.backends import load
    from rngcheck.errors import RngcheckError, one_line

    try:
        started = time.perf_counter()
        directml = load(f"directml:lib={args.worker}")
        setup = time.perf_counter() - started
        numpy_backend = load("numpy")
        info = directml.describe()
    except RngcheckError as error:
        send({"unavailable": str(error)})
        return 2
    send({"ready": info, "setup": setup})
    if not sys.stdin.readline():        # the parent gave up on the run
        directml.close()
        return 0
    state = counter.make_state(2**64 - 2**10, (0x9E3779B9, 0x243F6A88))
    try:
        send(measure(directml, numpy_backend, args, state))
    except Exception as error:          # one line for the parent, which stops the run
        send({"error": one_line(error)})
        return 1
    finally:
        directml.close()
    return 0


# -- the parent: start the workers, print the machine, the builds and the table --------------

def cpu_name():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


class Worker:
    def __init__(self, lib, args):
        self.lib = lib
        env = dict(os.environ)
        env.setdefault("VKD3D_DEBUG", "none")         # vkd3d's fixme/message lines, per call
        env.setdefault("VKD3D_SHADER_DEBUG", "none")
        command = [sys.executable, os.path.abspath(__file__), "--worker", lib, "--repeats", str(args.repeats),
                   "--calls", str(args.calls), "--log2n", *map(str, args.log2n)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def receive(self, what):
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            return {"died": f"the worker for lib={self.lib} ended ({code}) while {what}"}
        try:
            return json.loads(line)
        except ValueError:
            return {"died": f"the worker for lib={self.lib} sent {line.strip()[:80]!r} while {what}"}

    def go(self):
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def finish(self):
        try:
            self.process.stdin.close()          # a waiting worker reads end of input and leaves
        except OSError:
            pass
        self.process.wait()


def stop(workers, message, code):
    for w in workers:
        w.finish()
    print(message)
    return code


def milliseconds(t):
    return f"{t * 1e3:9.3f}"


def rate(value):
    """Three significant digits (the per-call case's rates are tiny)."""
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", action="append", help="a DirectML build (0.2.5, 0.2.0) or a libdirectml.so; "
                                                       "repeatable (default: 0.2.5 and 0.2.0)")
    parser.add_argument("--repeats", type=int, default=5, help="best of N (default 5)")
    parser.add_argument("--log2n", type=int, nargs="+", default=[12, 16, 20, 22], help="packed sizes, 2^k words")
    parser.add_argument("--calls", type=int, default=20, help="calls per sample in the per-call case")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.repeats, args.calls = max(1, args.repeats), max(1, args.calls)
    if args.worker:
        return worker(args)

    started, load_before = time.perf_counter(), load_average()
    workers, ready = [], []
    for lib in args.lib or DEFAULT_LIBS:            # all load first: an absent build stops the run unmeasured
        workers.append(Worker(lib, args))
        message = workers[-1].receive("loading DirectML")
        if "ready" not in message:
            reason = message.get("unavailable") or message.get("died")
            return stop(workers, f"DirectML lib={lib} is unavailable: {reason}", 2)
        ready.append(message)

    results = []
    for w in workers:
        print(f"measuring DirectML lib={w.lib} ...", file=sys.stderr, flush=True)
        w.go()
        message = w.receive("measuring")
        w.finish()
        if "rows" not in message:
            if "mismatch" in message:
                return stop(workers, f"DirectML lib={w.lib} differs from the reference: {message['mismatch']}", 1)
            return stop(workers, f"DirectML lib={w.lib} failed: {message.get('error') or message.get('died')}", 1)
        results.append(message["rows"])

    print(f"machine: {cpu_name()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    print(f"load average (1/5/15 min): {load_before} at start, {load_average()} at end")
    for w, message in zip(workers, ready):
        info = message["ready"]
        print(f"DirectML {info.get('DirectML version', '?')} (lib={w.lib}): max feature level "
              f"{info.get('max feature level', '?')}; set-up {message['setup']:.2f} s")
        print(f"  D3D12: {info.get('D3D12 implementation', info.get('platform', '?'))}")
        print(f"  adapter: {info.get('adapter', info.get('Vulkan device', '?'))}"
              + (f", Vulkan {info['Vulkan API']}" if "Vulkan API" in info else ""))
        if "directml library" in info:
            print(f"  library: {info['directml library']}")
    from rngcheck import reference
    print(f"numpy reference: rngcheck.reference (chunks of {reference.CHUNK_ELEMENTS} elements), "
          f"in each build's worker")
    print(f"all words and output states equal the reference's; best of {args.repeats}"
          f" (per call: of {args.calls}-call means); times in ms\n")

    header = (f"{'case':24s} {'words':>8s} {'build':>6s} | {'DirectML':>9s} {'Mword/s':>8s} {'GB/s':>8s}"
              f" {'1st call':>9s} | {'numpy':>9s} {'Mword/s':>8s} {'GB/s':>8s} | DML/numpy")
    print(header)
    print("-" * len(header))
    for i in range(len(results[0])):
        for w, rows in zip(workers, results):
            row = rows[i]
            words, dml, ref = row["words"], row["directml"], row["numpy"]
            case = row["case"] if w is workers[0] else ""
            count = str(words) if w is workers[0] else ""
            figures = {name: f"{milliseconds(t)} {rate(words / t / 1e6):>8s} {rate(4 * words / t / 1e9):>8s}"
                       for name, t in (("directml", dml), ("numpy", ref))}
            print(f"{case:24s} {count:>8s} {w.lib:>6s} | {figures['directml']} {milliseconds(row['first'])} |"
                  f" {figures['numpy']} | {ref / dml:7.2f}x")
    print(f"\n(padded: the buffer holds {results[0][-1]['extent']} words; GB/s counts the words generated."
          f" Whole run {time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
