"""How the DirectML set-ups write into the cache, and what they trust of what is there.

* **One writer at a time.** ``locked(folder, name)`` holds an exclusive ``flock`` on
  ``folder/.NAME.lock`` while a piece is checked and made; a second set-up (two CI jobs on one
  cache) waits there, then finds the piece made. The lock file is opened with ``O_NOFOLLOW``
  and must be a regular file (one that is a symbolic link, a pipe or a device was planted:
  refused in one line); it is kept, never removed (removing it would let a third process lock a
  new file while the second still holds the old one). Locks nest in one order only: a set-up's
  (``.bridge.lock``, ``.windows.lock``), then a library's, then a download's.
* **Written whole, under a private name.** Every file is written under a temporary name of its
  own (``tempfile``) in its target's folder and moved into place with ``os.replace``: a reader
  sees the old file or the new one, never part of one, and two writers never share a name.
* **What is loaded is hashed.** A library unpacked from a wheel has a marker beside it
  (``NAME.sha256``, JSON) recording the wheel's sha256, the member, and the sha256 and size of
  the unpacked file itself. ``problem()`` compares the size first (a truncated file is found
  without reading it) and then the sha256, hashed once per process per file (``sha256_of``
  remembers a hash by the file's device, inode, size and times): a library is 18 to 34 MB, about
  70 ms of hashing, paid once by each process that loads it, next to seconds of device or Wine
  start. Size and times alone would be cheaper but trust the times: damage of the same size, or
  a damaged copy made with its times kept (``cp -p``, ``rsync -a``), would pass unseen.

Importing this module loads nothing native.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ....errors import RngcheckError
from ....jsonfile import read_text_limited


class SetupError(Exception):
    """A piece that cannot be had; the message is the one line the user sees."""


LOCK_FLAGS = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
              | getattr(os, "O_CLOEXEC", 0))
MARKER_LIMIT = 64 << 10     # bytes; a marker is about 250
BLOCK = 1 << 20


@contextmanager
def locked(folder: Path, name: str) -> Iterator[Path]:
    """Hold the exclusive lock ``folder/.NAME.lock`` (waiting for its holder) while the block runs."""
    import fcntl  # POSIX: importing this module on Windows stays possible

    where = folder / f".{name}.lock"
    planted = SetupError(f"the lock file {where} is not a regular file (a symbolic link, a pipe or a device: "
                         f"rngcheck makes none); remove it")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(where, LOCK_FLAGS, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise planted from None
        raise SetupError(f"cannot lock {where}: {error.strerror or error}") from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise planted
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield where
    finally:
        os.close(descriptor)        # and with it the lock


@contextmanager
def private_file(target: Path) -> Iterator[tuple[IO[bytes], Path]]:
    """A new file under a temporary name of this process's own beside ``target``: (handle, its path).
    The caller moves it into place (``os.replace``); if it does not, or fails, the file is removed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    path = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            yield handle, path
    finally:
        if path.exists():
            path.unlink()


@contextmanager
def private_folder(folder: Path, name: str) -> Iterator[Path]:
    """A new folder under a temporary name of this process's own inside ``folder``, removed afterwards:
    where a download lands before its files are checked and moved into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".part", dir=folder))
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def write_whole(target: Path, write: Callable[[IO[bytes]], object], mode: int = 0o644) -> None:
    """``target`` written by ``write(handle)`` under a private name, flushed and moved into place;
    SetupError (one line) when it cannot be written, the old ``target`` then untouched."""
    try:
        with private_file(target) as (handle, path):
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
            os.chmod(path, mode)
            os.replace(path, target)
    except OSError as error:
        raise SetupError(f"cannot write {target}: {error.strerror or error}") from None


def write_bytes(target: Path, data: bytes, mode: int = 0o644) -> None:
    """``data`` as ``target``, written whole (``write_whole``)."""
    write_whole(target, lambda handle: handle.write(data), mode)


def install(built: Path, target: Path, mode: int = 0o755) -> None:
    """Copy ``built`` (a file in a scratch folder) to ``target`` whole (``write_whole``)."""
    def copy(handle: IO[bytes]) -> None:
        with open(built, "rb") as source:
            shutil.copyfileobj(source, handle, BLOCK)
    write_whole(target, copy, mode)


# -- hashes ---------------------------------------------------------------------------------

_HASHED: dict[tuple, str] = {}      # (path, device, inode, size, mtime, ctime) -> sha256, this process's


def _identity(path: Path, status: os.stat_result) -> tuple:
    return (str(path), status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def sha256_of(path: Path, remember: bool = False) -> str:
    """The sha256 of the file at ``path``; with ``remember``, hashed once per process while the file
    stays the same file (device, inode, size and times): a file replaced or written since is hashed again."""
    with open(path, "rb") as handle:
        status = os.fstat(handle.fileno())
        key = _identity(path, status)
        if remember and key in _HASHED:
            return _HASHED[key]
        digest = hashlib.sha256()
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    if remember:
        _HASHED[key] = digest.hexdigest()
    return digest.hexdigest()


# -- the marker of an unpacked library -------------------------------------------------------

def marker_of(target: Path) -> Path:
    """``libdirectml.so`` -> ``libdirectml.sha256`` beside it (the name rngcheck has always used)."""
    return target.with_suffix(".sha256")


def read_marker(target: Path) -> dict | str | None:
    """The marker's record, the old form's text (a wheel's sha256 alone), or None when there is none."""
    marker = marker_of(target)
    if not marker.is_file():
        return None
    try:
        text = read_text_limited(marker, what="DirectML cache marker", limit=MARKER_LIMIT, regular=True)
    except RngcheckError:
        return ""
    try:
        record = json.loads(text)
    except ValueError:
        return text.strip()
    return record if isinstance(record, dict) else text.strip()


def problem(target: Path, wheel_sha256: str) -> str | None:
    """What is wrong with the library ``target`` unpacked from the wheel of ``wheel_sha256``, in a
    few words (``is damaged (...)``), or None when it is the file its unpacking recorded."""
    record = read_marker(target)
    try:
        size = target.stat().st_size
    except FileNotFoundError:
        return "is missing"
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if record is None:
        return "has no marker (its unpacking did not finish)"
    if isinstance(record, str):
        if record == wheel_sha256:
            return "has no sha256 of its own recorded (it was unpacked by an older rngcheck)"
        if not re.fullmatch(r"[0-9a-f]{64}", record):
            return f"has a damaged marker ({marker_of(target)})"
        return "was unpacked from another wheel"
    if record.get("wheel") != wheel_sha256:
        return "was unpacked from another wheel"
    if not isinstance(record.get("size"), int) or not isinstance(record.get("sha256"), str):
        return f"has a damaged marker ({marker_of(target)})"
    if size != record["size"]:
        return f"is damaged ({size} bytes; it was unpacked with {record['size']})"
    try:
        actual = sha256_of(target, remember=True)
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if actual != record["sha256"]:
        return f"is damaged (sha256 {actual}; it was unpacked with {record['sha256']})"
    return None


def unpack(wheel: Path, member: str, target: Path, wheel_sha256: str) -> None:
    """``member`` of ``wheel`` to ``target`` whole, hashed as it is written, then its marker
    (the library first: a marker never vouches for a file not yet in place)."""
    digest, size = hashlib.sha256(), 0

    def copy(handle: IO[bytes]) -> None:
        nonlocal size
        with zipfile.ZipFile(wheel) as archive, archive.open(member) as source:
            for block in iter(lambda: source.read(BLOCK), b""):
                handle.write(block)
                digest.update(block)
                size += len(block)
    try:
        write_whole(target, copy, 0o755)
    except KeyError:
        raise SetupError(f"{wheel} has no {member}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError):
        raise SetupError(f"{wheel} is not a wheel (zip), or is damaged") from None
    record = {"wheel": wheel_sha256, "member": member, "sha256": digest.hexdigest(), "size": size}
    write_bytes(marker_of(target), (json.dumps(record, indent=1) + "\n").encode())
    _HASHED[_identity(target, target.stat())] = digest.hexdigest()
