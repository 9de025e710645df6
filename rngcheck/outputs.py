"""Output paths checked before a command does anything: no two outputs on one file, no output over
one of the command's inputs, and every output writable (``check_outputs``, the one check of every
command: run, repro, report, compare, export, stats, nist); and outputs locked while a command
writes them (``lock_outputs``, the one lock: ``claim_outputs`` checks and locks, what every command
but ``run`` calls; ``run`` checks, reads its baseline, then locks). Each refusal is one line (exit 2).

The files rngcheck derives from an output's name (its lock, a run's journal, the temporary file of
a write) are named here too (``fitting_name``): a name that would pass the file-name limit is
shortened with a hash, so every name the file system takes as an output is taken. An output that
is not a regular file (a device, a pipe) gets no derived file beside it (``regular_or_new``)."""

from __future__ import annotations

import errno
import hashlib
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


def regular_or_new(path) -> bool:
    """Whether ``path`` (after symlinks) is a regular file or does not exist yet: only such an output
    is replaced by a write, locked, and given a journal beside it. A device or a pipe (``/dev/null``,
    ``/dev/stderr``, a FIFO) is written directly and gets no file beside it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


def _name_max(directory: Path) -> int:
    """The longest file name (bytes) the file system of ``directory`` (or its nearest existing
    parent) takes; 255 where it cannot be asked."""
    while not directory.exists() and directory.parent != directory:
        directory = directory.parent
    try:
        return int(os.pathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError):
        return 255


HASHED = 16   # hex digits of SHA-256 that stand for the cut end of a name


def fitting_name(directory, name: str, prefix: str = "", suffix: str = "") -> str:
    """``prefix + name + suffix``, the name of a file rngcheck derives from ``name`` in ``directory``;
    when that is longer than a file name there may be (NAME_MAX bytes, 255 on most file systems),
    ``name`` is cut and ``~`` and 16 hex digits of the whole name's SHA-256 take the cut end's place:
    one name always derives one name (two commands find one lock), and two names share one only if
    their hashes collide."""
    whole = prefix + name + suffix
    limit = _name_max(Path(directory))
    if len(os.fsencode(whole)) <= limit:
        return whole
    tail = "~" + hashlib.sha256(os.fsencode(name)).hexdigest()[:HASHED] + suffix
    head = prefix + name
    while head and len(os.fsencode(head + tail)) > limit:
        head = head[:-1]
    return head + tail


LOCK_SUFFIX = ".rngcheck-lock"


def lock_path(path) -> Path:
    """The lock file of an output: ``.NAME.rngcheck-lock`` beside the file it stands for (a symlink's
    target: two names of one file share a lock); for a name too long for that, ``fitting_name``'s."""
    target = Path(os.path.realpath(path))
    return target.with_name(fitting_name(target.parent, target.name, ".", LOCK_SUFFIX))


class OutputLocks:
    """Exclusive locks (flock) on a command's outputs, held from before the run until its outputs
    are written: two commands writing the same ``--json`` (or ``--html``, ``--junit``, ``--csv``...)
    cannot both succeed, the second is refused at once, whichever commands they are. The output
    itself is not touched: the lock is a small file beside it (``lock_path``), removed on release;
    one a killed run left is stale and reused (the kernel drops a dead process's lock). Devices and
    pipes are not locked (``/dev/stderr``). A lock file is never followed: one that is a symbolic
    link, a pipe or anything but a regular file is refused (it was planted, rngcheck makes none)."""

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


def _open_lock(option: str, path, where: Path) -> int:
    """The descriptor of the lock file ``where``, made if missing; never through a symlink (O_NOFOLLOW),
    never blocking (a planted FIFO), and only a regular file (RngcheckError naming it otherwise)."""
    planted = RngcheckError(f"{option} {path}: its lock file {where} is not a regular file (a symbolic link, a "
                            "pipe or a device: rngcheck makes none); remove it")
    flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        if where.is_symlink():
            raise planted
        where.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(where, flags, 0o666)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise planted from None
        raise RngcheckError(f"cannot write {option} {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise planted
    return descriptor


def claim_outputs(outputs: dict, inputs: dict | None = None) -> OutputLocks:
    """``check_outputs`` and then ``lock_outputs``: what a command that writes calls before it reads or
    runs anything, and holds until its outputs are written (``with claim_outputs({...}, {...}):``)."""
    check_outputs(outputs, inputs)
    return lock_outputs(outputs)


def lock_outputs(outputs: dict) -> OutputLocks:
    """Lock each of ``outputs`` ({option: path or None}); RngcheckError naming the first one another
    command holds. Use as ``with lock_outputs({...}):`` around the run and the writing of its outputs."""
    import fcntl

    locks = OutputLocks()
    try:
        for option, path in outputs.items():
            if not path:
                continue
            if not regular_or_new(path):
                continue   # a device or a pipe: written directly, never replaced, nothing beside it
            where = lock_path(path)
            for _ in range(5):   # a lock file its holder removed meanwhile: lock the new one
                descriptor = _open_lock(option, path, where)
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(descriptor)
                    raise RngcheckError(f"{option} {path}: another rngcheck command is writing this file (it is "
                                        f"locked); give this one another {option}") from None
                if _same_file(descriptor, where):
                    locks.held.append((descriptor, where))
                    break
                fcntl.flock(descriptor, fcntl.LOCK_UN)
                os.close(descriptor)
    except BaseException:
        locks.release()
        raise
    return locks
