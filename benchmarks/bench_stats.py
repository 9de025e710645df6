"""Benchmark of the statistical battery: speed, power, false alarms (prints a report).

    python benchmarks/bench_stats.py speed   [--deep-bytes 1G] [--tiers smoke,standard] [--workers 1]
                                                                   # MB/s and wall time per tier, from a file
    python benchmarks/bench_stats.py speed --against DIR            # and another checkout's battery, same run
    python benchmarks/bench_stats.py stdin [--tier standard]          # the same bytes from a file and from a pipe
    python benchmarks/bench_stats.py compare [--tier standard] [--repeats 3]   # CPU and wall per MiB: the
        # compiled kernels and the numpy code at 1 and 2 processes, and PractRand's RNG_test on the same
        # bytes where RNG_TEST names it (single- and multithreaded; skipped with the reason otherwise);
        # --against DIR: and another checkout's kernels at 1 and 2 processes, --no-numpy: without numpy's
    python benchmarks/bench_stats.py power   [--max-bytes 256M] [--generators a,b] [--power-tiers smoke,standard]
                                          [--json FILE]           # bytes each weak generator needs to FAIL, per tier
    python benchmarks/bench_stats.py false-alarms [--seeds 100] [--tier standard]
    python benchmarks/bench_stats.py all [--against DIR]            # all three, then docs/statistics.md's panel table

Compare times whole commands (start-up included, as PractRand's; the battery's own wall time,
its document's elapsed_seconds, beside it): ``rngcheck stats --input FILE --no-interstream
--quiet`` and ``$RNG_TEST stdin32 -tlmin N -tlmax N`` fed the same file on its
standard input, CPU time from the child's rusage, best of ``--repeats`` alternating runs.
PractRand is not packaged where this project's machines reach: build it outside the repository
(``RNG_TEST=/path/to/RNG_test``); without it the PractRand rows say why they are missing.

Speed reads a stream from a file (Philox4x32-10 words written beforehand), so the
generator is not what is measured; inter-stream tests need a generator and are not
included there. ``--against DIR`` times the battery of another checkout (say the previous
release: ``git worktree add /tmp/before v0.1``) on the same file in the same run, each
tier alternately, so the ratio is not a comparison across days or loads. Power doubles the
stream length from 64 KiB until the first FAIL, main stream only, once per tier (that tier's
tests, with the budgets of each length), up to the tier's size (deep: --max-bytes); it covers
the weak panel, PractRand's table generators (weak_generators.PRACTRAND_TABLE), the generators
shipped in GPU languages (weak_generators.SHIPPED: Warp, Taichi) and the boundary and good
controls, and prints docs/statistics.md's table and its claim. False alarms: good
generators in turn (Philox4x32-10, PCG64, SFC64, MT19937), one seed each, standard tier.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

from rngcheck.stats import battery
from rngcheck.stats import weak_generators as panel
from rngcheck.stats.command import parse_bytes
from rngcheck.stats.streams import philox_source

MiB = 1 << 20


def write_stream(path: str, nbytes: int) -> None:
    source = philox_source(0xBE7C)
    with open(path, "wb") as handle:
        left = nbytes // 4
        while left:
            words = source.read(min(left, 1 << 22))
            handle.write(words.astype("<u4").tobytes())
            left -= words.size


_TIME_ONE = """
import json, sys, time
from rngcheck.stats import battery
from rngcheck.stats.streams import RawSource
began = time.perf_counter()
doc = battery.run(RawSource(sys.argv[1]), tier=sys.argv[2], nbytes=int(sys.argv[3]),
                  workers=None if sys.argv[4] == "-" else int(sys.argv[4]))
print(json.dumps({"wall": time.perf_counter() - began, "verdict": doc["verdict"], "results": len(doc["results"])}))
"""


THIS_TREE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(battery.__file__))))


def tree_env(tree=None, **extra) -> dict:
    """The environment of a command that runs the checkout ``tree`` (None: this one): its directory
    first on PYTHONPATH (the variable's own entries after it). The command must run from a directory
    with no rngcheck of its own (the benchmark's temporary one): python -c and -m put the current
    directory before PYTHONPATH, so that from a checkout's root every command ran that checkout
    (until 2026-11-29: a comparison made from the root timed the same code twice)."""
    paths = [os.path.abspath(tree or THIS_TREE)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {**os.environ, **extra, "PYTHONPATH": os.pathsep.join(paths)}


def _time_tree(tree, path, tier, nbytes, workers):
    """One battery run of the checkout ``tree`` (None: this one) in a fresh process."""
    out = subprocess.run([sys.executable, "-c", _TIME_ONE, path, tier, str(nbytes), str(workers or "-")],
                         env=tree_env(tree), capture_output=True, text=True, check=True, cwd=os.path.dirname(path))
    return json.loads(out.stdout.strip().splitlines()[-1])


def speed(deep_bytes: int, tiers=("smoke", "standard", "deep"), workers=None, against=None, repeats=3):
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print("== speed: battery on a file (main stream; no inter-stream), {} cores, load average {}".format(
        os.cpu_count(), " ".join(f"{x:.2f}" for x in load) if load else "?"))
    sizes = {"smoke": battery.TIERS["smoke"], "standard": battery.TIERS["standard"], "deep": deep_bytes}
    sizes = {tier: nbytes for tier, nbytes in sizes.items() if tier in tiers}
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "philox10.bin")
        write_stream(path, max(sizes.values()))
        for tier, nbytes in sizes.items():
            trees = [("this", None)] + ([("against", against)] if against else [])
            walls = {name: [] for name, _ in trees}
            for _ in range(repeats if against else 1):  # alternate, so both see the same load
                for name, tree in trees:
                    found = _time_tree(tree, path, tier, nbytes, workers)
                    walls[name].append(found["wall"])
                    verdicts = found
            best = {name: min(values) for name, values in walls.items()}
            line = (f"{tier:9s} {nbytes / MiB:8.0f} MiB  {best['this']:7.2f} s  "
                    f"{nbytes / 1e6 / best['this']:7.1f} MB/s  "
                    f"verdict {verdicts['verdict']}  ({verdicts['results']} p-values)")
            if against:
                line += (f"  | {against}: {best['against']:7.2f} s {nbytes / 1e6 / best['against']:7.1f} MB/s"
                         f"  | throughput ratio this/against {best['against'] / best['this']:.2f}"
                         f" (best of {repeats} alternating runs)")
            figures[tier] = {"seconds": best["this"], "mb_s": nbytes / 1e6 / best["this"],
                             "against_mb_s": nbytes / 1e6 / best["against"] if against else None}
            print(line, flush=True)
    if load:
        print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return figures


def _timed(command, stdin_path=None, env=None, cwd=None):
    """(CPU seconds of the child, wall seconds, its output) of one command."""
    before = os.times()
    began = time.perf_counter()
    with open(stdin_path or os.devnull, "rb") as handle:
        done = subprocess.run(command, stdin=handle, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - began
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return cpu, wall, done


def _practrand(nbytes: int):
    """The RNG_test command lines (single- and multithreaded) for ``nbytes``, or the reason there are none."""
    path = os.environ.get("RNG_TEST", "").strip()
    if not path:
        return None, "RNG_TEST is not set (PractRand is packaged nowhere this project reaches: build RNG_test " \
                     "outside the repository and set RNG_TEST to it)"
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return None, f"RNG_TEST={path} is not an executable file"
    size = f"{nbytes >> 20}MB"  # PractRand's units are binary: 256MB is 2^28 bytes
    single = [path, "stdin32", "-tlmin", size, "-tlmax", size]
    return {"PractRand RNG_test stdin32 (1 thread)": single,
            "PractRand RNG_test stdin32 -multithreaded": single + ["-multithreaded"]}, ""


def _practrand_version(path: str) -> str:
    """RNG_test's own first line ("RNG_test using PractRand version 0.96"), or why there is none."""
    done = subprocess.run([path, "-version"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if "version" in line]
    return lines[0] if lines else f"{path}: no version line"


def _compiled(packages) -> None:
    """Byte-compile the timed checkouts' modules beforehand, as ``pip install`` does: where
    PYTHONDONTWRITEBYTECODE is set (as on this project's machines) a checkout's modules would
    otherwise be compiled again at every start (about 0.1 s of each run), while numpy's and
    SciPy's, installed by pip, are not. compileall writes __pycache__ beside the sources
    (git-ignored)."""
    for package in packages:
        subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True, stdout=subprocess.DEVNULL)
    print("(modules byte-compiled beforehand, as pip install does: " + ", ".join(packages) + ")")


def compare(tier: str = "standard", repeats: int = 3, against: str | None = None, numpy: bool = True) -> dict:
    """CPU and wall time per MiB of whole commands on the same file (module docstring); ``against``:
    also another checkout's command (compiled kernels, 1 and 2 processes), alternately in the same
    run; ``numpy``: also the numpy code's rows."""
    nbytes = battery.TIERS[tier]
    load = os.getloadavg()
    print(f"== compare: {tier} tier, {nbytes >> 20} MiB of Philox4x32-10 words from a file, {os.cpu_count()} cores, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; best of {repeats} alternating runs (and the range)")
    base = [sys.executable, "-m", "rngcheck", "stats", "--tier", tier, "--no-interstream", "--quiet"]
    runs = {}
    for kernels in ("c", "numpy") if numpy else ("c",):
        for workers in (1, 2):
            runs[f"rngcheck {kernels:5s} {workers} process{'es' if workers > 1 else ''}"] = (
                base + ["--workers", str(workers)], tree_env(RNGCHECK_KERNELS=kernels), True)
            if against and kernels == "c":
                other = os.path.basename(os.path.normpath(against))
                runs[f"{other} c {workers} process{'es' if workers > 1 else ''}"] = (
                    base + ["--workers", str(workers)], tree_env(against, RNGCHECK_KERNELS="c"), True)
    trees = [os.path.join(THIS_TREE, "rngcheck")]
    trees += [os.path.join(against, "rngcheck")] if against else []
    print(f"(each command from a directory of its own, its checkout first on PYTHONPATH: {', '.join(trees)})")
    _compiled(trees)
    practrand, why = _practrand(nbytes)
    for name, command in (practrand or {}).items():
        runs[name] = (command, dict(os.environ), False)
    found: dict[str, list] = {name: [] for name in runs}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "philox10.bin")
        write_stream(path, nbytes)
        document = os.path.join(tmp, "stats.json")
        for _ in range(repeats):
            for name, (command, env, ours) in runs.items():
                extra = ["--input", path, "--json", document] if ours else []
                cpu, wall, done = _timed(command + extra, None if ours else path, env, cwd=tmp)
                if done.returncode not in (0, 1):
                    raise SystemExit(f"{name}: exit {done.returncode}: {done.stderr[-500:]}")
                inner = None
                if ours:  # the battery's own wall time, without the start-up
                    with open(document) as handle:
                        inner = json.load(handle)["elapsed_seconds"]
                found[name].append((cpu, wall, inner))
    mib = nbytes / (1 << 20)
    for name, values in found.items():
        cpus, walls = [v[0] for v in values], [v[1] for v in values]
        print(f"{name:44s} CPU {min(cpus):6.2f} s ({min(cpus):.2f}-{max(cpus):.2f}), "
              f"{1e3 * min(cpus) / mib:5.1f} ms/MiB;  wall {min(walls):6.2f} s ({min(walls):.2f}-{max(walls):.2f}), "
              f"{1e3 * min(walls) / mib:5.1f} ms/MiB" + (
                  f";  the battery alone {min(v[2] for v in values):.2f} s wall" if values[0][2] is not None else ""))
    if not practrand:
        print(f"PractRand: not measured: {why}")
    else:
        print(f"PractRand: {_practrand_version(os.environ['RNG_TEST'])}")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return found


def stdin_speed(nbytes: int, tier: str = "standard", repeats: int = 2) -> dict:
    """The battery on the same bytes from a file and from a pipe (stdin), alternately, and a
    plain read of those bytes from a pipe: the ratios say what reading stdin costs."""
    print(f"== stdin: {tier} tier on {nbytes / MiB:.0f} MiB from a file and from a pipe (best of {repeats})")
    script = ("import sys, time\nfrom rngcheck.stats import battery\nfrom rngcheck.stats.streams import RawSource\n"
              "t = time.perf_counter(); s = RawSource(sys.argv[1])\n"
              "battery.run(s, tier=sys.argv[2], nbytes=int(sys.argv[3]), interstream=False)\n"
              "s.close()\n"
              "print(time.perf_counter() - t)")
    plain = ("import sys, time\nt = time.perf_counter()\nwhile sys.stdin.buffer.read(1 << 24): pass\n"
             "print(time.perf_counter() - t)")
    walls: dict[str, list[float]] = {"file": [], "stdin": [], "plain read": []}
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "philox10.bin")
        write_stream(path, nbytes)
        for _ in range(repeats):
            for name in walls:
                if name == "file":
                    args, feed = [path, tier, str(nbytes)], None
                else:
                    args, feed = ["-", tier, str(nbytes)], path
                code = plain if name == "plain read" else script
                with open(feed or os.devnull, "rb") as handle:
                    cat = subprocess.Popen(["cat"], stdin=handle, stdout=subprocess.PIPE) if feed else None
                    out = subprocess.run([sys.executable, "-c", code] + args, env=env, capture_output=True, text=True,
                                         check=True, stdin=cat.stdout if cat else subprocess.DEVNULL)
                    if cat:
                        cat.stdout.close()
                        cat.wait()
                walls[name].append(float(out.stdout.strip().splitlines()[-1]))
    best = {name: min(values) for name, values in walls.items()}
    for name, wall in best.items():
        print(f"{name:10s} {wall:7.2f} s  {nbytes / 1e6 / wall:8.1f} MB/s", flush=True)
    print(f"stdin / file time ratio {best['stdin'] / best['file']:.2f}; the plain read is "
          f"{best['plain read'] / best['stdin'] * 100:.1f}% of the stdin run's time")
    return best


def first_fail(factory, max_bytes: int, start: int = 1 << 16, interstream: bool = True, tier: str = "deep"):
    """Doubling from ``start``: the first length at which ``tier``'s tests (with that length's
    budgets) give a FAIL, with the strongest failing result; (None, ...) up to ``max_bytes``."""
    nbytes = start
    while nbytes <= max_bytes:
        began = time.perf_counter()
        doc = battery.run(factory(), tier=tier, nbytes=nbytes, interstream=interstream)
        wall = time.perf_counter() - began
        if doc["verdict"] == "FAIL":
            failing = [e for e in doc["results"] if e["verdict"] == "FAIL"]
            worst = min(failing, key=lambda e: -1e9 if e["log10_p"] is None else e["log10_p"])
            return nbytes, worst, len(failing), wall
        nbytes *= 2
    return None, None, 0, None


# PractRand's bytes to its first FAIL (its standard battery), and where the figure comes from.
# PractRand is not packaged where CI can reach it: these are quoted, not measured here.
PR_RESULTS = "PractRand 0.96 doc/Tests_results.txt"
PRACTRAND = {
    "xorshift32": (64 << 10, PR_RESULTS + " (xorshift32)"),
    "lfib55": (2 << 20, PR_RESULTS + " (mm32: LFib(55,24,ADD))"),
    "lcg64high": (32 << 20, "issue #17: lcg(32,64) flagged at 32 MiB, measured by the issue's author"),
    "mt19937": (256 << 30, PR_RESULTS + " (mt19937: 256 GB)"),
    "lcg128high": (None, PR_RESULTS + ": lcg(16,128) passes > 32 TB (16-bit outputs)"),
    "xorshift128+": (None, "not in " + PR_RESULTS + "; its relative xoroshiro128plus: 32 MB"),
    "xoroshiro128+": (32 << 20, PR_RESULTS + " (xoroshiro128plus: 32 MB)"),
    "philox-6": (None, "issue #17: passes (PractRand and Crush agree)"),
    "sfc64": (None, PR_RESULTS + ": sfc64 passes > 4 TB"),
}
# issue #33: the generators of PractRand's table ported in weak_generators.PRACTRAND_TABLE
TABLE_NAMES = {"xorwow": "xorwow32x6", **{f"lcg16of{y}": f"lcg(16,{y})" for y in (32, 40, 48, 56)}}
PRACTRAND.update({name: (figure, f"{panel.PRACTRAND_TABLE_SOURCE} ({TABLE_NAMES.get(name, name)})")
                  for name, (_, figure) in panel.PRACTRAND_TABLE.items()})
# issue #43: generators shipped in GPU languages (weak_generators.SHIPPED); no PractRand figure is
# published for these streams
PRACTRAND.update({name: (None, "none published for this stream") for name in panel.SHIPPED})


def _size(nbytes):
    if nbytes is None:
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= size:
            return f"{nbytes / size:g} {unit}"
    return f"{nbytes} B"


POWER_TIERS = ("smoke", "standard", "deep")


def power(max_bytes: int, names=None, tiers=POWER_TIERS) -> dict:
    """Per generator and tier: bytes before the tier's first FAIL, doubling from 64 KiB up to
    the tier's size (smoke 8 MiB; standard 256 MiB) or ``max_bytes`` for deep."""
    print("== power: bytes of the main stream before the first FAIL, per tier "
          f"(doubling from 64 KiB up to the tier's size, deep up to {max_bytes / MiB:.0f} MiB;"
          " main stream only; PractRand's figure beside it where one is published or measured)")
    found = {}
    for name, factory in panel.panel_factories().items():
        if names and name not in names:
            continue
        theirs, where = PRACTRAND.get(name, (None, ""))
        row = {"practrand": theirs, "source": where, "tiers": {}}
        texts = []
        for tier in tiers:
            limit = min(max_bytes, battery.TIERS[tier]) if tier != "deep" else max_bytes
            nbytes, worst, count, wall = first_fail(factory, limit, interstream=False, tier=tier)
            row["tiers"][tier] = {"bytes": nbytes, "limit": limit, "test": worst and worst["test"]}
            if nbytes is None:
                texts.append(f"{tier}: no FAIL up to {_size(limit)}")
            else:
                texts.append(f"{tier}: FAIL at {_size(nbytes)} ({count} failing; strongest {worst['test']} "
                             f"p = {worst['p_display']}; {wall:.1f} s)")
        found[name] = row
        print(f"{name:15s} " + "; ".join(texts) +
              f"; PractRand: {_size(theirs) if theirs else '-'} ({where or 'no figure'})", flush=True)
    return found


GOOD_IN_TURN = (("philox-10", lambda seed: philox_source(seed)),
                ("pcg64", lambda seed: panel.numpy_bitgen("pcg64", seed)),
                ("sfc64", lambda seed: panel.numpy_bitgen("sfc64", seed)),
                ("mt19937", lambda seed: panel.mt19937(seed)))


def false_alarms(seeds: int, tier: str) -> dict:
    print(f"== false alarms: {seeds} streams of good generators in turn "
          f"({', '.join(n for n, _ in GOOD_IN_TURN)}; seeds 1..{seeds}), tier {tier}")
    verdicts = collections.Counter()
    flagged = collections.Counter()
    failed = []
    began = time.perf_counter()
    for seed in range(1, seeds + 1):
        name, make = GOOD_IN_TURN[(seed - 1) % len(GOOD_IN_TURN)]
        doc = battery.run(make(seed), tier=tier)
        verdicts[doc["verdict"]] += 1
        if doc["verdict"] == "FAIL":
            failed.append(f"{name} seed {seed}")
        for e in doc["results"]:
            if e["first_verdict"] != "PASS":
                flagged[f"{e['test']} [{e['stream']}] {e['first_verdict']}->{e['verdict']}"] += 1
    rate = verdicts["FAIL"] / seeds
    print(f"final verdicts: {dict(verdicts)}; FAIL rate {rate:.3f} ({', '.join(failed) or 'none'}); "
          f"first-range SUSPECT/FAIL results: {dict(flagged) or 'none'}; {time.perf_counter() - began:.0f} s",
          flush=True)
    return {"seeds": seeds, "tier": tier, "fail_rate": rate, "verdicts": dict(verdicts)}


def _cell(entry):
    if entry is None:
        return "-"
    return f"{_size(entry['bytes'])} ({entry['test']})" if entry["bytes"] else f"no FAIL to {_size(entry['limit'])}"


def table(found: dict, alarms: dict | None, figures: dict | None) -> None:
    """The power panel table of docs/statistics.md (markdown) from this run's figures, and its claim."""
    print("\n| generator | PractRand | PractRand's figure from | smoke | standard | deep |")
    print("|---|---|---|---|---|---|")
    for name, row in found.items():
        cells = [_cell(row["tiers"].get(tier)) for tier in POWER_TIERS]
        print(f"| {name} | {_size(row['practrand']) if row['practrand'] else '-'} | {row['source'] or '-'} | "
              + " | ".join(cells) + " |")
    within = {name: row for name, row in found.items() if row["practrand"] and row["practrand"] <= 64 * MiB}
    caught = [n for n, row in within.items() if (row["tiers"].get("standard") or {}).get("bytes")]
    missed = sorted(set(within) - set(caught))
    print(f"\n{len(caught)} of {len(within)} generators PractRand fails within 64 MiB fail the standard tier"
          + (f"; missed: {', '.join(missed)}" if missed else "") + ".")
    at_or_below = [n for n in caught if row_bytes(within[n], "standard") <= within[n]["practrand"]]
    print(f"{len(at_or_below)} of them at or below PractRand's figure.")
    if alarms:
        print(f"\nFalse alarms: FAIL rate {alarms['fail_rate']:.3f} over {alarms['seeds']} good streams, "
              f"{alarms['tier']} tier ({alarms['verdicts']}).")
    if figures and "standard" in figures:
        std = figures["standard"]
        against = f"; the other checkout {std['against_mb_s']:.1f} MB/s" if std["against_mb_s"] else ""
        print(f"Standard tier: {std['mb_s']:.1f} MB/s{against}.")


def row_bytes(row, tier):
    return (row["tiers"].get(tier) or {}).get("bytes")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["speed", "stdin", "compare", "power", "false-alarms", "all"])
    parser.add_argument("--against", help="speed, compare: also time the battery of this checkout (a directory)")
    parser.add_argument("--no-numpy", action="store_true", help="compare: without the numpy code's rows")
    parser.add_argument("--repeats", type=int, default=3,
                        help="speed --against, compare: alternating runs of each command (the best is kept)")
    parser.add_argument("--generators", help="power: comma-separated panel names (default: all)")
    parser.add_argument("--deep-bytes", default="1G")
    parser.add_argument("--tiers", default="smoke,standard,deep", help="speed: comma-separated tiers to time")
    parser.add_argument("--workers", type=int, default=None,
                        help="speed: processes (default: one per core this process may use)")
    parser.add_argument("--max-bytes", default="256M")
    parser.add_argument("--power-tiers", default=",".join(POWER_TIERS), help="power: tiers to measure")
    parser.add_argument("--json", help="power/all: write the figures found to this file")
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--tier", default="standard")
    args = parser.parse_args(argv)
    figures = found = alarms = None
    if args.what in ("speed", "all"):
        figures = speed(parse_bytes(args.deep_bytes), tuple(args.tiers.split(",")), args.workers,
                        args.against, args.repeats)
    if args.what == "stdin":
        stdin_speed(battery.TIERS[args.tier], args.tier, args.repeats)
    if args.what in ("compare", "all"):
        compare(args.tier, args.repeats, args.against, not args.no_numpy)
    if args.what in ("power", "all"):
        found = power(parse_bytes(args.max_bytes), args.generators and args.generators.split(","),
                      tuple(args.power_tiers.split(",")))
        if args.json:
            with open(args.json, "w") as handle:
                json.dump(found, handle, indent=1)
    if args.what in ("false-alarms", "all"):
        alarms = false_alarms(args.seeds, args.tier)
    if args.what in ("all", "power"):
        table(found, alarms, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
