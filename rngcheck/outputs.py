"""Output paths checked before a command does anything: no two outputs on one file, no output over
one of the command's inputs, and every output writable. Each refusal is one line (exit 2)."""

from __future__ import annotations

import os
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


def check_outputs(outputs: dict, inputs: dict | None = None) -> None:
    """``outputs``: {option: path or None} the command will write; ``inputs``: {what: path} it reads.
    Raises RngcheckError naming the first collision or unwritable output."""
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
            with open(path, "ab"):
                pass
    except OSError as error:
        raise RngcheckError(f"cannot write {option} {path}: {error.strerror or error}") from None
