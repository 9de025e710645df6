"""A document's fields as the page shows them: every value may be missing or of the wrong type,
and every string from a document is made visible (``results.text.visible``) and cut to a length.

The coercions themselves (a list, an object, an integer where a document may hold anything) are
the results records' (``results.records``); this module adds only what a page needs on top: text
of any value, numbers as text, p-values that are never rounded to 0 or 1, and anchors.
"""

from __future__ import annotations

import math
from typing import Any

from ..results.records import as_dict, as_int, as_list
from ..results.text import visible

TEXT_LIMIT = 4000           # characters of a message / traceback shown

__all__ = ["TEXT_LIMIT", "anchor_part", "as_dict", "as_int", "as_list", "log10_p",
           "number", "optional_float", "p_text", "short", "text", "visible"]


def text(value: Any, limit: int = TEXT_LIMIT) -> str:
    """Any value of a document as visible text of at most ``limit`` characters (then a note of the rest)."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        shown = ", ".join(str(v) for v in value)  # one level: documents hold flat lists of words
    else:
        shown = str(value)
    shown = visible(shown)
    if len(shown) > limit:
        shown = shown[:limit] + f" ... ({len(shown) - limit} more characters)"
    return shown


def optional_float(value: Any) -> float | None:
    """A number, or None where the document holds none (NaN stays NaN: a degenerate statistic)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value


def anchor_part(value: Any) -> str:
    """Text for an id attribute: any characters but whitespace (HTML5); '/' is kept."""
    return "".join("_" if c.isspace() else c for c in text(value, 200)) or "_"


def p_text(entry: dict) -> str:
    """A p-value for display, never rounded to 0 or 1 (the document's own p_display first)."""
    shown = entry.get("p_display")
    if isinstance(shown, str) and shown:
        return visible(shown[:TEXT_LIMIT])
    p, q = optional_float(entry.get("p_value")), optional_float(entry.get("q_value"))
    if p is None or p != p:
        return "undefined (degenerate statistic)"
    if q is not None and p > 0.5 and q < 1e-4:
        return f"1 - {q:.2g}" if q >= 1e-300 else "1 - < 1e-300"
    if p < 1e-300:
        log10_p = optional_float(entry.get("log10_p"))
        return f"1e{log10_p:.0f}" if log10_p is not None and math.isfinite(log10_p) else "< 1e-300"
    if p < 1e-4:
        return f"{p:.2g}"
    if p > 0.9999:
        return "> 0.9999"
    return f"{p:.4f}"


def log10_p(entry: dict) -> float | None:
    """log10 of a result's p-value; None when it is below every representable number (or degenerate)."""
    value = optional_float(entry.get("log10_p"))
    if value is not None and math.isfinite(value):
        return value
    p = optional_float(entry.get("p_value"))
    if p is not None and p > 0 and math.isfinite(p):
        return math.log10(p)
    return None


def number(value: Any) -> str:
    """A number as text (6 significant digits), "nan", or "" where there is none."""
    value = optional_float(value)
    if value is None:
        return ""
    if value != value:
        return "nan"
    return f"{value:.6g}"


def short(digest: Any) -> str:
    """The first 12 characters of a digest."""
    digest = text(digest)
    return digest[:12] if digest else ""
