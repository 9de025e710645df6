"""Values of command-line arguments as rngcheck reads them: integers, word lists, numbers.

1. An integer is ASCII decimal, or 0x / 0o / 0b (no "1_000", no fullwidth or other Unicode digits,
   which Python's int() would take).
2. A word list is comma-separated integers (spaces ignored); a wrong one is one line naming the
   option and what it holds (RngcheckError).
3. A number is an integer (rule 1) or an ASCII float without underscores.
"""

from __future__ import annotations

import re

from .errors import RngcheckError
from .results.text import printable

_INTEGER = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)", re.ASCII)


def integer(text: str) -> int:
    """``text`` as an integer (rule 1; ValueError otherwise)."""
    if not _INTEGER.fullmatch(text):
        raise ValueError(text)
    return int(text, 0) if not text.lstrip("+-").isdigit() else int(text, 10)


def words(text: str, count: int | None, what: str) -> list[int]:
    """``text`` as a word list (rule 2), of ``count`` words when given."""
    try:
        values = [integer(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise RngcheckError(f"{what}: {printable(text)!r} is not a comma-separated list of integers "
                            f"(decimal or 0x hex)") from None
    if count is not None and len(values) != count:
        raise RngcheckError(f"{what}: expected {count} values, got {len(values)}")
    return values


def number(text: str | None, what: str) -> int | float | None:
    """``text`` as a number (rule 3), None for None."""
    if text is None:
        return None
    try:
        return integer(text)
    except ValueError:
        try:
            if not text.isascii() or "_" in text:
                raise ValueError(text)
            return float(text)
        except ValueError:
            raise RngcheckError(f"{what} {printable(text)!r} is not a number") from None
