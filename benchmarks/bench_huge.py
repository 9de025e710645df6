"""The huge profile's time and peak memory per case and backend (issue 29).

    python benchmarks/bench_huge.py [--backend numpy --backend opencl ...] [--case ID ...]
                                    [--with-max] [--memory-limit GIB]

Each (backend, case) runs as its own ``rngcheck run --profile huge --case ID`` (one process tree,
so that its figures are its own). Printed per row: the verdict, the wall time of the process and
the case's own seconds from its result document, the largest resident set of any process of the
tree (ru_maxrss: pages shared between the runner and its worker count in each), and the peak of
the tree's proportional set size summed over its processes, sampled every 0.2 s (a shared page
counted once: the memory the machine actually gave it), with the time ratio against the first
backend (the peer: numpy, the reference, by default). The 2^32 - 1 element case (16 GiB) runs
only with --with-max. Every run is under ``prlimit --as`` (--memory-limit, default 20 GiB of
address space for each process), so a case that grows past it dies, not the machine; with
--kill-above GIB a run whose processes pass that much memory together (PSS) is killed and shown
as ``killed``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MAX_CASE = "scale/huge-2pow32-minus-1"


def tree(pid: int) -> list[int]:
    """pid and its descendants (from /proc/PID/task/*/children)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    todo.extend(int(c) for c in children.read().split())
        except OSError:
            continue
    return found


def pss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def measure(backend: str, case: str, limit_gib: float, kill_gib: float | None = None) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        document = os.path.join(folder, "result.json")
        command = ["prlimit", f"--as={int(limit_gib * 2**30)}", sys.executable, "-m", "rngcheck", "run",
                   "--backend", backend, "--profile", "huge", "--case", case, "--quiet", "--json", document]
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   start_new_session=True)
        peak, killed = 0, False
        while True:
            peak = max(peak, sum(pss_bytes(p) for p in tree(process.pid)))
            if kill_gib is not None and peak > kill_gib * 2**30 and not killed:
                os.killpg(process.pid, 9)   # its own session: the runner and its worker
                killed = True
            finished, status, usage = os.wait4(process.pid, os.WNOHANG)
            if finished:
                break
            time.sleep(0.2)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr = process.stderr.read().decode(errors="replace").strip() if process.stderr else ""
        row = {"backend": backend, "case": case, "wall": wall, "max_rss": usage.ru_maxrss * 1024, "peak_pss": peak,
               "exit": process.returncode, "status": "?", "seconds": None, "message": stderr[-200:]}
        try:
            with open(document) as f:
                [result] = json.load(f)["results"]
            row.update(status=result["status"], seconds=result["seconds"], message=result["message"])
        except (OSError, ValueError, KeyError):
            pass
        if killed:
            row.update(status="killed", message=f"its processes passed {kill_gib:g} GiB (PSS) and were killed")
        return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", help="backend specs (default: numpy, opencl)")
    parser.add_argument("--case", action="append", help="huge case ids (default: every one)")
    parser.add_argument("--with-max", action="store_true", help=f"also {MAX_CASE} (16 GiB)")
    parser.add_argument("--memory-limit", type=float, default=20.0, help="GiB of address space per process")
    parser.add_argument("--kill-above", type=float, help="kill a run whose processes pass this many GiB (PSS)")
    args = parser.parse_args(argv)
    from rngcheck.conformance.directml import cases

    ids = args.case or [c.id for c in cases.huge_cases() if args.with_max or c.id != MAX_CASE]
    backends = args.backend or ["numpy", "opencl"]
    print(f"{'backend':<12} {'case':<28} {'status':<8} {'wall s':>7} {'case s':>7} {'vs ' + backends[0]:>9} "
          f"{'max RSS GiB':>11} {'peak PSS GiB':>12}")
    peer: dict[str, float] = {}
    failed = False
    for backend in backends:
        for case in ids:
            row = measure(backend, case, args.memory_limit, args.kill_above)
            seconds = row["seconds"]
            if backend == backends[0] and seconds:
                peer[case] = seconds
            ratio = f"{seconds / peer[case]:.2f}x" if seconds and peer.get(case) else "-"
            print(f"{backend:<12} {case:<28} {row['status']:<8} {row['wall']:7.1f} "
                  f"{seconds if seconds is not None else float('nan'):7.1f} {ratio:>9} "
                  f"{row['max_rss'] / 2**30:11.2f} {row['peak_pss'] / 2**30:12.2f}", flush=True)
            if row["status"] != "passed":
                failed |= row["status"] != "skipped"
                print(f"  {row['message']}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
