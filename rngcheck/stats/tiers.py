"""The battery's tiers and byte counts: light enough to import when the command line is built
(``rngcheck --version`` must not import scipy)."""

from __future__ import annotations

import os
import re
from decimal import Decimal

from ..errors import RngcheckError

MiB = 1 << 20
# The most a stream can be: the tests count bits, and their counts are summed in float64 (chi-square
# of counts), exact to 2^53, so 2^53 bits = 2^50 bytes (1 PiB). (At 1 GB/s that is 13 days.)
MAX_BYTES = 1 << 50
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

TIERS = {
    "smoke": 8 * MiB,
    "standard": 256 * MiB,
    "deep": 4096 * MiB,  # default; --bytes sets it
}


def parse_bytes(text: str, option: str = "--bytes") -> int:
    """'4096', '64M', '2G', '1.5GiB' -> bytes (binary units); ``option`` names the option in errors."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", str(text), re.IGNORECASE)
    if not match:
        raise RngcheckError(f"{option}: cannot read {text!r} (use e.g. 64M, 2G, 1000000)")
    exact = Decimal(match.group(1)) * _UNITS[match.group(2).upper()]   # no float: 1e400 is no infinity
    if exact > MAX_BYTES:
        raise RngcheckError(f"{option} {str(text).strip()[:40]}: more than rngcheck tests ({MAX_BYTES} bytes, "
                            "1 PiB: the tests' bit counts are exact in float64 up to 2^53 bits)")
    value = int(exact)
    if value < 4:
        raise RngcheckError(f"{option} must be at least 4 (one word)")
    return value


def cores() -> int:
    """The processes a run uses by default: every core this process may run on (its affinity:
    what a container, taskset or a batch system gives it), else every core of the machine."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
