"""Helpers the tests import (``from helpers import ...``): tests/ is on sys.path through
``pythonpath = ["tests"]`` in pyproject.toml's [tool.pytest.ini_options]. Fixtures and hooks
live in conftest.py; this module is plain code.
"""

import importlib
import importlib.util
import os
import signal

import pytest

# CI (.ci/run) sets CI=true: there whatever CI installs must be present, and a missing one
# fails instead of skipping (a skip would hide it).
IN_CI = os.environ.get("CI") == "true"


def sigint_as_a_terminal_sends_it():
    """preexec_fn for a child the test interrupts with SIGINT: a shell starts background jobs
    with SIGINT ignored, and a child inherits that (Python then installs no KeyboardInterrupt
    handler), so a suite run in the background would test nothing. The child gets the
    default disposition, as a program started from a terminal has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def unavailable(reason: str):
    """Skip the test locally; in CI fail it (``reason`` names what is missing)."""
    if IN_CI:
        pytest.fail(f"{reason}, and CI must have it (CI=true)")
    pytest.skip(reason)


def require(module: str, *, load: bool = True):
    """``module`` imported (or, with load=False, only looked up and None returned):
    missing, the test skips locally and fails in CI."""
    if not load:
        if importlib.util.find_spec(module) is None:
            unavailable(f"{module} is not installed")
        return None
    try:
        return importlib.import_module(module)
    except ImportError as error:
        unavailable(f"{module} is not importable ({error})")


def isolated_backend(spec: str, *modules: str):
    """The backend ``spec`` in its own worker process (as rngcheck run hosts a library), after
    ``modules`` are found installed; missing or unavailable, the test skips locally and fails in CI.
    The caller closes it."""
    from rngcheck.backends.exec_backend import isolated
    from rngcheck.errors import BackendUnavailable

    for module in modules:
        require(module, load=False)
    try:
        return isolated(spec)
    except BackendUnavailable as error:
        unavailable(str(error))


def in_process(capsys, *args):
    """``rngcheck ARGS`` through cli.main in this process: (exit code, stdout, stderr)."""
    from rngcheck import cli

    try:
        code = cli.main(list(args))
    except SystemExit as exit:  # argparse's usage errors
        code = exit.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err
