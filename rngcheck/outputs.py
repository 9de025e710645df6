"""Output paths checked before a command does anything: no two outputs on one file, no output over
one of the command's inputs, and every output writable (``check_outputs``, the one check of every
command: run, repro, report, compare, export, stats, nist); and outputs locked while a run writes
them (``lock_outputs``). Each refusal is one line (exit 2)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import RngcheckError


def _identity(path: Path):
    """What names the same file: (device, inode) when it exists, else its resolved path."""
    try:
        info = path.stat()
        return ("inode", info.st_dev, info.st_ino)
    except OSError:
        return ("path", str(path.resolve()))


def input_paths(paths) -> dict:
    """{what: path} of a command's input files (a list of them), for ``check_outputs``."""
    return {str(path): path for path in paths if path}


def check_outputs(outputs: dict, inputs: dict | None = None) -> None:
    """``outputs``: {option: path or None} the command will write; ``inputs``: {what: path or None}
    it reads (``input_paths`` makes them from a list). Raises RngcheckError naming the first
    collision or unwritable output. Every command calls this before it reads or runs anything."""
    seen: dict[object, tuple[str, str]] = {}
    for what, path in (inputs or {}).items():
        if path:
            seen.setdefault(_identity(Path(path)), ("input", what))
    for option, path in outputs.items():
        if not path:
            continue
        identity = _identity(Path(path))
        if identity in seen:
            kind, other = seen[identity]
            if kind == "input":
                raise RngcheckError(f"{option} {path} is the input {other}: refusing to overwrite it")
            raise RngcheckError(f"{option} and {other} are the same file ({path}): give each output its own path")
        seen[identity] = ("output", option)
        writable(option, Path(path))


def writable(option: str, path: Path) -> None:
    """Refuse an output that cannot be written, before a run is spent on it: the directory it goes
    in takes a new file (one is made and removed), and an existing file opens for writing."""
    if path.is_dir():
        raise RngcheckError(f"cannot write {option} {path}: it is a directory")
    parent = path.parent
    while not parent.exists():  # missing directories are made when it is written
        if parent.parent == parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise RngcheckError(f"cannot write {option} {path}: {parent} is not a directory")
    try:
        descriptor, probe = tempfile.mkstemp(prefix=".rngcheck-probe.", dir=parent)
        os.close(descriptor)
        os.unlink(probe)
        if path.exists():
            if not stat.S_ISREG(path.stat().st_mode):   # a device or a pipe: opening a pipe would take
                if not os.access(path, os.W_OK):         # its reader's one end-of-file
                    raise PermissionError(13, "Permission denied")
                return
            with open(path, "ab"):
                pass
    except OSError as error:
        raise RngcheckError(f"cannot write {option} {path}: {error.strerror or error}") from None


LOCK_SUFFIX = ".rngcheck-lock"


def lock_path(path) -> Path:
    """The lock file of an output: ``.NAME.rngcheck-lock`` beside the file it stands for (a symlink's
    target: two names of one file share a lock)."""
    target = Path(os.path.realpath(path))
    return target.with_name(f".{target.name}{LOCK_SUFFIX}")


class OutputLocks:
    """Exclusive locks (flock) on a command's outputs, held from before the run until its outputs
    are written: two runs writing the same ``--json`` (or ``--html``, ``--junit``...) cannot both
    succeed, the second is refused at once. The output itself is not touched: the lock is a small
    file beside it (``lock_path``), removed on release; one a killed run left is stale and reused
    (the kernel drops a dead process's lock). Devices and pipes are not locked (``/dev/stderr``)."""

    def __init__(self) -> None:
        self.held: list[tuple[int, Path]] = []

    def release(self) -> None:
        import fcntl

        for descriptor, path in reversed(self.held):
            try:
                if _same_file(descriptor, path):
                    path.unlink()
            except OSError:
                pass
            fcntl.flock(descriptor, fcntl.LOCK_UN)
            os.close(descriptor)
        self.held = []

    def __enter__(self) -> OutputLocks:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _same_file(descriptor: int, path: Path) -> bool:
    try:
        held, named = os.fstat(descriptor), path.stat()
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


def lock_outputs(outputs: dict) -> OutputLocks:
    """Lock each of ``outputs`` ({option: path or None}); RngcheckError naming the first one another
    run holds. Use as ``with lock_outputs({...}):`` around the run and the writing of its outputs."""
    import fcntl

    locks = OutputLocks()
    try:
        for option, path in outputs.items():
            if not path:
                continue
            try:
                if not stat.S_ISREG(Path(path).stat().st_mode):
                    continue   # a device or a pipe: written directly, never replaced
            except OSError:
                pass
            where = lock_path(path)
            for _ in range(5):   # a lock file its holder removed meanwhile: lock the new one
                try:
                    where.parent.mkdir(parents=True, exist_ok=True)
                    descriptor = os.open(where, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
                except OSError as error:
                    raise RngcheckError(f"cannot write {option} {path}: {error.strerror or error}") from None
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(descriptor)
                    raise RngcheckError(f"{option} {path}: another rngcheck run is writing this file (it is "
                                        f"locked); give this run another {option}") from None
                if _same_file(descriptor, where):
                    locks.held.append((descriptor, where))
                    break
                fcntl.flock(descriptor, fcntl.LOCK_UN)
                os.close(descriptor)
    except BaseException:
        locks.release()
        raise
    return locks
