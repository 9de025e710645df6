"""Reading and writing a JSON file with one-line errors that name the file and what is wrong with it."""

from __future__ import annotations

import json
from pathlib import Path

from .errors import RngcheckError


def read_json(path, error: type[RngcheckError] = RngcheckError, what: str = "file"):
    """The JSON value in ``path``; ``error`` (one line) when it cannot be read or parsed."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as failure:
        raise error(f"cannot read {what} {path}: {failure.strerror or failure}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as failure:
        raise error(f"{path}: not UTF-8 text ({failure.reason} at byte {failure.start})") from None
    if not text.strip():
        raise error(f"{path}: empty file, not an rngcheck {what}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as failure:
        raise error(f"{path}: truncated or not valid JSON ({failure.msg} at line {failure.lineno} "
                    f"column {failure.colno})") from None


def write_json(path, value, error: type[RngcheckError] = RngcheckError) -> None:
    """Write ``value`` to ``path`` as indented JSON, whole (through a temporary file beside it);
    ``error`` (one line) when it cannot be written."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError as failure:
        raise error(f"cannot write {path}: {failure.strerror or failure}") from None
