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


def test_the_end_of_a_command_keeps_its_code_and_output(tmp_path):
    """cli.entry ends the process without Python's teardown: the verdict's exit code and every byte
    of a document written to a pipe (about 60 KB) come out, and atexit's handlers still run; with a
    thread that is not a daemon still running, Python ends the process itself, with the same code."""
    zeros = tmp_path / "zeros.bin"
    zeros.write_bytes(bytes(8 << 20))
    done = subprocess.run([sys.executable, "-m", "rngcheck", "stats", "--input", str(zeros), "--tier", "smoke",
                           "--no-interstream", "--json", "-"], capture_output=True, text=True)
    import json

    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert len(done.stdout) > 20000 and document["verdict"] == "FAIL"
    # a global whose __del__ runs in Python's teardown: printed only when Python ends the process
    teardown = ("import os\nclass Torn:\n    def __del__(self, write=os.write): write(1, b'teardown\\n')\n"
                "kept = Torn()\n")
    # the thread outlives the command (3 s): Python waits for it, then tears down
    for thread, torn in (("", ""), ("threading.Thread(target=time.sleep, args=(3,)).start()\n", "teardown\n")):
        code = (f"import atexit, sys, threading, time\n{teardown}{thread}from rngcheck import cli\n"
                "atexit.register(print, 'atexit ran')\n"
                "sys.argv = ['rngcheck', 'stats', '--input', '/nonexistent/file']\ncli.entry()\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 2 and done.stdout == "atexit ran\n" + torn, (thread, done)
        assert "cannot open" in done.stderr


_BLAS_PROBE = """
import json, os, subprocess, sys
from rngcheck import cli

def main():
    import numpy  # noqa: F401  (what a command does first)
    if "special" in sys.argv:   # what a battery does at its first p-value: scipy's own OpenBLAS loads
        from rngcheck.stats.special import special
        special.erfc
    child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('OPENBLAS_NUM_THREADS'))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    print(json.dumps([len(os.listdir("/proc/self/task")), os.environ.get("OPENBLAS_NUM_THREADS"), child]))
    return 0

if "entry" in sys.argv:
    cli.main = main
    cli.entry()
else:
    main()
"""


def _blas_probe(*args: str, env_extra: dict | None = None) -> list:
    import json
    import os

    # none of the variables OpenBLAS reads for its thread count (OPENBLAS_, GOTO_, OMP_NUM_THREADS), but those given
    limits = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k not in limits}
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, "-c", _BLAS_PROBE, *args], capture_output=True, text=True, check=True,
                          env=env)
    return json.loads(done.stdout)


def test_the_command_loads_numpy_and_scipy_with_one_blas_thread_and_gives_the_setting_to_no_one_else():
    """cli.entry: numpy's OpenBLAS, and scipy's own (scipy.special's compiled ufuncs, which the
    p-values load), load with one thread (no thread beside the main one after the imports), the
    variable that asks for it is gone once they are imported, and a process the command starts
    never sees it; a user's own setting is theirs, untouched."""
    import os

    for args in (("entry",), ("entry", "special")):
        for _ in range(3):   # the command's probe and the control together, from one attempt
            command, plain = _blas_probe(*args), _blas_probe(*args[1:])
            # the control shows the probe sees BLAS threads (CI's 2 cores: OpenBLAS starts one per core of
            # its own); once, in a full run with both cores busy, it found 1 thread: both are then asked again
            if len(os.sched_getaffinity(0)) < 2 or plain[0] > 1:
                break
        assert command == [1, None, "None"], args
        if len(os.sched_getaffinity(0)) >= 2:
            assert plain[0] > 1, plain
        assert plain[1:] == [None, "None"]
        libraries = len(args)   # each OpenBLAS starts a thread per core beside the main one: 1 with the user's 2
        assert _blas_probe(*args, env_extra={"OPENBLAS_NUM_THREADS": "2"}) == [min(1 + libraries, plain[0]), "2", "2"]
