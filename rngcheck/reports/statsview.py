"""The statistics view of the HTML report: one statistics document (schema "rngcheck-stats",
see ``stats.battery``) as the page shows it: its verdict, counts, rows of p-values (the worst
first), the tests not run, and its figures (p-value histogram, per lane and bit bias, the
failing and suspect results).

A statistics document is read as it is (there is no results table of p-values): every field
through ``reports.fields``, so a missing or mistyped field shows as empty, never raises.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

from ..results.sources import Source
from ..results.verdicts import (
    STATS_BAD,
    STATS_FAIL,
    STATS_INCOMPLETE,
    STATS_JUDGED,
    STATS_PASS,
    STATS_SUSPECT,
    STATS_VERDICTS,
)
from .fields import as_dict as _dict
from .fields import as_int as _int
from .fields import as_list as _list
from .fields import log10_p as _log10_p
from .fields import number as _number
from .fields import optional_float as _float
from .fields import p_text
from .fields import text as _text
from .figures import draw as _figure

_VERDICT_ORDER = {STATS_FAIL: 0, STATS_SUSPECT: 1, STATS_PASS: 2}


def stats_view(index: int, source: Source, draw: bool = True) -> dict:
    doc = source.doc
    src = _dict(doc.get("source"))
    title = _text(src.get("backend") or src.get("raw") or src.get("file") or src.get("generator") or src.get("path")
                  or src.get("implementation") or f"stream {index + 1}", 200)
    results = [r for r in _list(doc.get("results")) if isinstance(r, dict)]
    rows: list[dict[str, Any]] = []
    for r in results:
        retest = _dict(r.get("retest"))
        verdict, first = _text(r.get("verdict")) or "?", _text(r.get("first_verdict"))
        rows.append({
            "verdict": verdict,
            "first_verdict": first,
            "first_differs": bool(first) and first != verdict,   # retested: the first verdict is shown beside
            "test": _text(r.get("test"), 200), "stream": _text(r.get("stream"), 100),
            "level": _text(r.get("level"), 100), "statistic": _number(r.get("statistic")),
            "p": p_text(r), "retest": (p_text(retest) + " " + _text(retest.get("verdict"))) if retest else "",
            "source": _text(r.get("source"), 300),
            "where": (f"lane {_text(r.get('lane'))}, bit {_text(r.get('bit'))}"
                      if r.get("lane") is not None and r.get("bit") is not None else ""),
        })
    rows.sort(key=lambda row: _VERDICT_ORDER.get(row["verdict"], -1))
    thresholds = _dict(doc.get("thresholds"))
    counts = _dict(doc.get("counts"))
    verdict = _text(doc.get("verdict"))
    if verdict not in STATS_VERDICTS:
        verdict = STATS_INCOMPLETE
    figures = _figures(results if draw else [], thresholds)
    return {
        "index": index + 1,
        "anchor": f"stats-{index + 1}",
        "file": source.name,
        "title": title,
        "verdict": verdict,
        "counts": {k: _int(counts.get(k)) for k in STATS_JUDGED},
        "tier": _text(doc.get("tier")),
        "seed": _text(doc.get("seed")),
        "source": [(_text(k, 200), _text(v)) for k, v in src.items()],
        "reproduce": _text(doc.get("reproduce")),
        "bytes_tested": _int(doc.get("bytes_tested")),
        "mib_tested": f"{_int(doc.get('bytes_tested')) / (1 << 20):.1f}",
        "mib_requested": f"{_int(doc.get('bytes_requested')) / (1 << 20):.1f}",
        "complete": doc.get("complete") is not False,
        "message": _text(doc.get("message")),
        "elapsed": _number(doc.get("elapsed_seconds")),
        "suspect_at": _number(thresholds.get("suspect")),
        "fail_at": _number(thresholds.get("fail")),
        "tests": _text(thresholds.get("tests")),
        "rows": rows,
        # the rows a reader looks at first (failing or suspect, now or before a retest), and the rest (folded)
        "flagged": [row for row in rows if row["verdict"] in STATS_BAD or row["first_verdict"] in STATS_BAD],
        "unflagged": [row for row in rows if not (row["verdict"] in STATS_BAD or row["first_verdict"] in STATS_BAD)],
        "not_run": [{"test": _text(n.get("test")), "stream": _text(n.get("stream")), "reason": _text(n.get("reason"))}
                    for n in _list(doc.get("not_run")) if isinstance(n, dict)],
        "problems": list(source.problems),
        "figures": figures,
    }


def _figures(results: list[dict], thresholds: dict) -> dict:
    """A stream's pictures: the p-value histogram, the per lane and bit bias, the failing and suspect results."""
    figures = {}
    second = [_float(r.get("p_value")) for r in results if r.get("level") == "second-level"]
    other = [_float(r.get("p_value")) for r in results if r.get("level") != "second-level"]
    series = {}
    if any(v is not None for v in second):
        series["second-level (KS of per-sample p-values)"] = [v for v in second if v is not None]
    if any(v is not None for v in other):
        series["first-level and aggregate"] = [v for v in other if v is not None]
    if series:
        figures["histogram"] = _figure("pvalue_histogram", series)
    tables = _lane_tables(results)
    if tables:
        figures["lanes"] = _figure("lane_bias", tables)
    bad = [r for r in results if r.get("verdict") in STATS_BAD or r.get("first_verdict") in STATS_BAD]
    if bad:
        bad.sort(key=lambda r: -math.inf if (log10_p := _log10_p(r)) is None else log10_p)
        bad = bad[:30]
        figures["worst"] = _figure("log10_p_bars",
                                   [f"{_text(r.get('test'))} {_text(r.get('stream'))} {_text(r.get('level'))}"
                                    for r in bad], [_log10_p(r) for r in bad],
                                   _float(thresholds.get("fail")) or 1e-10, _float(thresholds.get("suspect")))
    return figures


def _lane_tables(results: list[dict]) -> list[dict]:
    """The per (lane, bit) tables of the main stream (lanes.frequency, lag1, lag4)."""
    from .figures import _grid_of

    tables: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for r in results:
        test = _text(r.get("test"))
        if not test.startswith("lanes.") or _text(r.get("stream")) not in ("main", ""):
            continue
        base = test[:-len(".worst")] if test.endswith(".worst") else test
        table = tables.setdefault(base, {"title": base, "grid": None, "worst": None})
        grid = _grid_of(r)
        if grid is not None:
            table["grid"] = grid
        if r.get("lane") is not None and r.get("bit") is not None and _float(r.get("statistic")) is not None:
            lane, bit = _int(r.get("lane"), -1), _int(r.get("bit"), -1)
            if 0 <= lane < 4 and 0 <= bit < 32:
                table["worst"] = (lane, bit, _float(r.get("statistic")))
                table["title"] = (f"{base}: most biased cell lane {lane}, bit {bit}; p = {p_text(r)} "
                                  f"({_text(r.get('verdict'))})")
    return [t for t in tables.values() if t["grid"] is not None or t["worst"] is not None]

