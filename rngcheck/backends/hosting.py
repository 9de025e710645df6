"""Which process runs a backend: the one rule, used by ``rngcheck run``, ``stats``, ``repro`` and the
pytest plugin.

  * the reference (REFERENCE, ``numpy``) runs in rngcheck's own process;
  * ``exec:COMMAND`` is its own process, spoken to through the exec protocol;
  * every other backend (registered name, ``module:attr``, ``file.py:attr``) is loaded in a worker
    process (``python -m rngcheck.backends.worker SPEC``), so a crash or a hang ends that process,
    not the run: the call is answered as crashed or timeout and the run goes on;
  * ``in_process=True`` loads Python backends in rngcheck's process (faster, no isolation).

A call that does not answer within ``timeout`` seconds ends the worker.
"""

from __future__ import annotations

REFERENCE = "numpy"
DEFAULT_TIMEOUT = 120.0


def seconds_argument(text: str) -> float:
    """A ``--timeout``/``--deadline`` value: a positive, finite number of seconds (argparse type)."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def where(spec: str, *, in_process: bool = False) -> str:
    """"in-process", "exec" or "worker": where ``spec`` runs under the rule."""
    if spec.startswith("exec:"):
        return "exec"
    if in_process or spec == REFERENCE:
        return "in-process"
    return "worker"


def hosted(spec: str, *, timeout: float = DEFAULT_TIMEOUT, in_process: bool = False, max_restarts: int = 3):
    """The backend of ``spec``, hosted as the rule says (raises RngcheckError / BackendUnavailable)."""
    from . import load
    from .exec_backend import ExecBackend, isolated

    place = where(spec, in_process=in_process)
    if place == "exec":
        from .exec_backend import split_command
        return ExecBackend(split_command(spec[len("exec:"):]), timeout=timeout, max_restarts=max_restarts)
    if place == "in-process":
        return load(spec)
    return isolated(spec, timeout=timeout, max_restarts=max_restarts)


def close(backend) -> None:
    """Close a backend (end its worker process); a backend that fails to close is not an error."""
    try:
        backend.close()
    except Exception:
        pass
