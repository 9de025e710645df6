"""Start-up: building the command line imports nothing heavy (timings: benchmarks/bench_startup.py)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("scipy", "pandas", "matplotlib", "jinja2", "pyarrow", "hypothesis", "rich")


def test_the_command_line_imports_nothing_heavy():
    code = ("import sys; from rngcheck import cli; cli.build_parser(); "
            f"print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_version_is_answered():
    done = subprocess.run([sys.executable, "-m", "rngcheck", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("rngcheck ")
