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


def test_a_command_line_adds_only_its_commands_options():
    """``rngcheck stats ...`` builds no other command's options (they import the conformance suite
    and the backends' hosting); every command's options are there without ``only``."""
    code = ("import sys; from rngcheck import cli; p = cli.build_parser(only='stats'); "
            "p.parse_args(['stats', '--input', 'x', '--tier', 'standard']); "
            "print(sorted(m for m in sys.modules if m.startswith(('rngcheck.conformance', "
            "'rngcheck.backends.hosting'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    from rngcheck import cli

    for only in (None, "run"):
        assert cli.build_parser(only=only).parse_args(["run", "--profile", "full"]).profile == "full"
    assert cli.build_parser(only="backends").parse_args(["backends", "--json"]).json
    repro = cli.build_parser(only="repro").parse_args(["repro", "--backend", "numpy", "--state", "0x0"])
    assert repro.backend == "numpy"
    assert cli._command_of(["stats", "--input", "-"]) == "stats" and cli._command_of(["--version"]) is None
