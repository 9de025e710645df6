"""Reading and writing JSON files with one-line errors that name the file and what is wrong with it.

This is the one reader of files a user hands rngcheck (result and stats documents, journals,
vector files, Dask scheduler files, checkpoint manifests and ranges, expected-failures files;
text through ``read_text_limited``, bytes through ``read_bytes_limited``): a file that is not
what it claims is refused here, with one line, before anything reads it. Limits: a device
(``/dev/zero``) is refused from its file type before any read, and at most ``MAX_BYTES`` (or
the caller's smaller limit) are read from anything else (a pipe that never ends is refused
after that many bytes, not read until memory runs out); where only a regular file can be right
(``regular=True``: a checkpoint's files), anything else, a symlink to a device or a pipe
included, is refused before it is opened; containers nested at most ``MAX_DEPTH`` deep
(rngcheck's own documents nest about six; JSON nested 100,000 deep is refused, not a RecursionError;
the parser's own recursion guard stops it, and the depth of what parsed is checked without recursion).

Writing goes through a temporary file beside the target and a rename (``atomic_write``): the
target is either its old content or the whole new one, never a truncated mix (a full disk
included), and a failed write leaves no temporary file behind. Only a regular file is replaced so:
a symlink is followed (its target is replaced, the link stays), and a device or a pipe
(``/dev/stderr``) is written directly. A pipe is opened without blocking: one that no process
reads (a FIFO without its reader) is one line after ``PIPE_READER_WAIT`` seconds, never a hang.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
import time
from pathlib import Path

from .errors import RngcheckError
from .outputs import fitting_name

MAX_BYTES = 512 << 20  # a full-profile document of many backends is some MiB
MAX_DEPTH = 64


def read_bytes_limited(path, error: type[RngcheckError] = RngcheckError, what: str = "file",
                       limit: int = MAX_BYTES, regular: bool = False) -> bytes:
    """The bytes of ``path``, refused with one line when there are more than ``limit``.
    ``regular``: only a regular file (after symlinks) is read; a pipe is refused too, before it is
    opened (a file rngcheck wrote itself, as a checkpoint's, is never a pipe)."""
    path = Path(path)
    try:
        if regular and not stat.S_ISREG(os.stat(path).st_mode):
            raise error(f"{path}: not a regular file (a device, a pipe or a directory): an rngcheck {what} "
                        "is a file")
        with open(path, "rb") as file:
            status = os.fstat(file.fileno())
            if stat.S_ISCHR(status.st_mode) or stat.S_ISBLK(status.st_mode) or (
                    regular and not stat.S_ISREG(status.st_mode)):
                # /dev/zero, /dev/urandom, a disk: endless or huge, and never a document
                raise error(f"{path}: a device, not a file: an rngcheck {what} is a file"
                            + ("" if regular else " (or a pipe)"))
            size = status.st_size
            if size > limit:
                raise error(f"{path}: {size} bytes, larger than an rngcheck {what} can be ({limit} bytes)")
            raw = file.read(limit + 1)
    except OSError as failure:
        raise error(f"cannot read {what} {path}: {failure.strerror or failure}") from None
    if len(raw) > limit:
        raise error(f"{path}: more than {limit} bytes (not a regular file?), larger than an rngcheck {what} can be")
    return raw


def read_text_limited(path, error: type[RngcheckError] = RngcheckError, what: str = "file",
                      limit: int = MAX_BYTES, regular: bool = False) -> str:
    """The UTF-8 text of ``path``, read as ``read_bytes_limited`` reads it."""
    raw = read_bytes_limited(path, error, what, limit, regular)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as failure:
        raise error(f"{path}: not UTF-8 text ({failure.reason} at byte {failure.start}), not an rngcheck "
                    f"{what}") from None


def parse_json(text: str | bytes, where: str, error: type[RngcheckError] = RngcheckError, what: str = "file"):
    """The JSON value in ``text`` (of ``where``, for the message), within the depth limit."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as failure:
            raise error(f"{where}: not UTF-8 text ({failure.reason} at byte {failure.start})") from None
    deep = f"{where}: JSON nested deeper than {MAX_DEPTH} levels, not an rngcheck {what}"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as failure:
        raise error(f"{where}: truncated or not valid JSON ({failure.msg} at line {failure.lineno} "
                    f"column {failure.colno})") from None
    except RecursionError:
        raise error(deep) from None
    except ValueError as failure:  # numbers too long to convert, and the like
        raise error(f"{where}: not valid JSON ({' '.join(str(failure).split())[:100]})") from None
    if _depth(value) > MAX_DEPTH:
        raise error(deep)
    return value


def _depth(value) -> int:
    """The nesting depth of a parsed JSON value (without recursion), stopping past MAX_DEPTH."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                return deepest
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
                         if isinstance(child, (dict, list)))
    return deepest


def read_json(path, error: type[RngcheckError] = RngcheckError, what: str = "file"):
    """The JSON value in ``path``; ``error`` (one line) when it cannot be read or parsed."""
    path = Path(path)
    raw = read_bytes_limited(path, error, what)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as failure:
        raise error(f"{path}: not UTF-8 text ({failure.reason} at byte {failure.start})") from None
    if not text.strip():
        raise error(f"{path}: empty file, not an rngcheck {what}")
    return parse_json(text, str(path), error, what)


def atomic_write(path, data: str | bytes, error: type[RngcheckError] = RngcheckError) -> None:
    """Write ``data`` to ``path`` whole: a temporary file in the same directory, flushed to disk and
    renamed over the target. On any failure the target is unchanged and the temporary file is gone."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if not stat.S_ISREG(path.stat().st_mode):   # a device or a pipe: written, never replaced
            if _write_directly(path, payload, error):
                return
    except FileNotFoundError:
        pass
    except OSError as failure:
        raise error(f"cannot write {path}: {failure.strerror or failure}") from None
    path = Path(os.path.realpath(path))   # a symlink: its target is replaced, not the link
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # ".NAME.XXXXXXXX.tmp" (mkstemp's 8 characters), cut to a name the file system takes
        prefix = fitting_name(path.parent, path.name, ".", "." + "X" * 8 + ".tmp")[:-len(".tmp") - 8]
        descriptor, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
        with os.fdopen(descriptor, "wb") as file:
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.chmod(tmp, 0o666 & ~_umask())
        except OSError:
            pass
        os.replace(tmp, path)
        tmp = None
    except OSError as failure:
        raise error(f"cannot write {path}: {failure.strerror or failure}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


PIPE_READER_WAIT = 2.0   # seconds a pipe without a reader is given for its reader to open it


def _write_directly(path: Path, payload: bytes, error: type[RngcheckError]) -> bool:
    """Write ``payload`` into the device or pipe ``path``; False when it turned out to be a regular
    file (replaced meanwhile: written the atomic way instead). Opened with O_NONBLOCK, so that a pipe
    no process reads is ENXIO instead of an open that never returns; then written blocking."""
    import fcntl  # (POSIX: devices and pipes as outputs)

    deadline = time.monotonic() + PIPE_READER_WAIT
    while True:
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
            break
        except OSError as failure:
            if failure.errno != errno.ENXIO:
                raise
            if time.monotonic() >= deadline:
                raise error(f"cannot write {path}: a pipe that no process is reading (start its reader "
                            "first, e.g. cat, or give a file)") from None
            time.sleep(0.05)
    try:
        if stat.S_ISREG(os.fstat(descriptor).st_mode):
            return False
        fcntl.fcntl(descriptor, fcntl.F_SETFL, fcntl.fcntl(descriptor, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        view = memoryview(payload)
        while view:
            view = view[os.write(descriptor, view):]
    finally:
        os.close(descriptor)
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path, value, error: type[RngcheckError] = RngcheckError) -> None:
    """Write ``value`` to ``path`` as indented JSON, whole (``atomic_write``); ``error`` (one line)
    when it cannot be written."""
    atomic_write(path, json.dumps(value, indent=1) + "\n", error)
