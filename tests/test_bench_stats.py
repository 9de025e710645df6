"""benchmarks/bench_stats.py's comparison of two checkouts times each checkout's own code."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("bench_stats", ROOT / "benchmarks" / "bench_stats.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_command_runs_the_checkout_it_names(tmp_path):
    """tree_env puts a checkout first on PYTHONPATH; run from a directory of its own (as the benchmark
    runs them) a command imports that checkout's rngcheck, and this one's with no tree given. From a
    checkout's root the current directory would come first: the hazard the directory avoids."""
    bench = _bench()
    other = tmp_path / "other"
    (other / "rngcheck").mkdir(parents=True)
    (other / "rngcheck" / "__init__.py").write_text("")
    where = tmp_path / "run"
    where.mkdir()
    probe = [sys.executable, "-c", "import rngcheck; print(rngcheck.__file__)"]

    def found(env, cwd):
        return Path(subprocess.run(probe, env=env, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip())

    assert found(bench.tree_env(other), where) == other / "rngcheck" / "__init__.py"
    assert found(bench.tree_env(), where) == ROOT / "rngcheck" / "__init__.py"
    assert found(bench.tree_env(other), ROOT) == ROOT / "rngcheck" / "__init__.py"
