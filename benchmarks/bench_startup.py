"""Start-up time of the rngcheck command against the bare interpreter, measured in the same run.

    python benchmarks/bench_startup.py [--repeat N]

Prints, for each command, the best wall time of N runs and the time over ``python -c pass``
(the peer: what any Python program pays). Target: ``rngcheck --version`` under 0.3 s. Also
prints what ``rngcheck --version`` imports (``-X importtime``): scipy, pandas, matplotlib and
Jinja2 must not be among them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "python -c pass (peer)": [sys.executable, "-c", "pass"],
    "rngcheck --version": [sys.executable, "-m", "rngcheck", "--version"],
    "rngcheck backends --help": [sys.executable, "-m", "rngcheck", "backends", "--help"],
    "rngcheck backends numpy (one probe)": [sys.executable, "-m", "rngcheck", "backends", "numpy"],
    "rngcheck compare --help": [sys.executable, "-m", "rngcheck", "compare", "--help"],
}
HEAVY = ("scipy", "pandas", "matplotlib", "jinja2", "pyarrow")


def best(command, repeat, env):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    peer = None
    for label, command in COMMANDS.items():
        seconds = best(command, args.repeat, env)
        peer = seconds if peer is None else peer
        print(f"{label:<38} {seconds:6.3f} s   +{seconds - peer:6.3f} s over the interpreter")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "rngcheck", "--version"], env=env,
                          capture_output=True, text=True)
    modules = [line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    heavy = sorted({m.split(".")[0] for m in modules if m.split(".")[0].lower() in HEAVY})
    print(f"rngcheck --version imports {len(modules)} modules; heavy ones: {', '.join(heavy) or 'none'}")
    return 1 if heavy else 0


if __name__ == "__main__":
    sys.exit(main())
