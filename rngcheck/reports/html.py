"""The HTML comparison report: one self-contained page from result (and stats) documents.

    write([document, ...], "report.html")                  # result and/or stats documents, mixed
    write([result_document], "report.html", stats=[stats_document])
    render(documents) -> str

The page reads only documents: result documents (schema "rngcheck-result", see
``results.document``), statistics documents (schema "rngcheck-stats", see
``stats.battery``) and results journals (the JSON Lines file a run writes case by case,
read with ``results.journal``; a journal without its end line renders as an incomplete
report). Several result documents (other runs, machines, drivers) become columns of one
comparison; a backend name that occurs in several documents is told apart by its run.

Safety: the page has no script and no external resource (inline CSS, inline SVG, a
Content-Security-Policy that forbids everything else); every string from a document goes
through Jinja2's autoescape. A document of a newer schema version, not JSON, or not an
rngcheck document is refused with one line (RngcheckError); a truncated journal, an
interrupted run (``complete`` false) or missing fields give a report marked incomplete.
"""

from __future__ import annotations

import functools
import math
import shlex
from collections import Counter, OrderedDict
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__, counter
from ..errors import RngcheckError
from ..jsonfile import atomic_write
from ..results.document import agreement
from ..results.sources import STATS_SCHEMA, Source, classify, read, sources_of  # noqa: F401  (reading API)
from ..results.statuses import BROKEN, PASSED, STATUSES, effective
from ..results.tables import counts as status_counts
from ..results.tables import frame, rows, run_labels
from ..results.text import mismatch_fields, shown, visible  # noqa: F401  (the one sanitiser; visible re-exported)
from ..results.verdicts import (
    STATS_BAD,
    STATS_FAIL,
    STATS_INCOMPLETE,
    STATS_JUDGED,
    STATS_PASS,
    STATS_SUSPECT,
    STATS_VERDICTS,
    report_verdict,
    run_verdict,
)

DETAILED_FAILURES = 40      # per backend column: full sections; the rest in a compact table
MISMATCH_ROWS = 16          # first mismatching elements shown per case
TEXT_LIMIT = 4000           # characters of a message / traceback shown
TEMPLATE = "report.html.j2"
UNDIAGNOSED = {  # a failure without a diagnosis, by status
    "failed": "no known bug class matches",
    "error": "the backend raised an exception or broke the protocol",
    "crashed": "the backend's process died",
    "timeout": "the backend did not answer in time",
}


# ---------------------------------------------------------------------------------------
# Small helpers (every value from a document may be missing or of the wrong type).
# ---------------------------------------------------------------------------------------

def _text(value, limit: int = TEXT_LIMIT) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        text = ", ".join(str(v) for v in value)  # one level: documents hold flat lists of words
    else:
        text = str(value)
    text = visible(text)
    if len(text) > limit:
        text = text[:limit] + f" ... ({len(text) - limit} more characters)"
    return text


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _int(value, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _float(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value


def _effective_status(result: dict) -> str:
    """A failure that is not required (implementation-defined, non-validating) counts as info."""
    return effective(result.get("status"), result.get("required"))


def _anchor_part(text: str) -> str:
    """Text for an id attribute: any characters but whitespace (HTML5); '/' is kept."""
    return "".join("_" if c.isspace() else c for c in _text(text, 200)) or "_"


def p_text(entry: dict) -> str:
    """A p-value for display, never rounded to 0 or 1 (the document's own p_display first)."""
    shown = entry.get("p_display")
    if isinstance(shown, str) and shown:
        return visible(shown[:TEXT_LIMIT])
    p, q = _float(entry.get("p_value")), _float(entry.get("q_value"))
    if p is None or p != p:
        return "undefined (degenerate statistic)"
    if q is not None and p > 0.5 and q < 1e-4:
        return f"1 - {q:.2g}" if q >= 1e-300 else "1 - < 1e-300"
    if p < 1e-300:
        log10_p = _float(entry.get("log10_p"))
        return f"1e{log10_p:.0f}" if log10_p is not None and math.isfinite(log10_p) else "< 1e-300"
    if p < 1e-4:
        return f"{p:.2g}"
    if p > 0.9999:
        return "> 0.9999"
    return f"{p:.4f}"


def _log10_p(entry: dict):
    """log10 of a result's p-value; None when it is below every representable number (or degenerate)."""
    value = _float(entry.get("log10_p"))
    if value is not None and math.isfinite(value):
        return value
    p = _float(entry.get("p_value"))
    if p is not None and p > 0 and math.isfinite(p):
        return math.log10(p)
    return None


def _number(value) -> str:
    value = _float(value)
    if value is None:
        return ""
    if value != value:
        return "nan"
    return f"{value:.6g}"


def _short(digest) -> str:
    digest = _text(digest)
    return digest[:12] if digest else ""


# ---------------------------------------------------------------------------------------
# The comparison model: plain dicts of strings and numbers; the template only lays it out.
# ---------------------------------------------------------------------------------------

def build(sources: list[Source], figures: bool = True) -> dict:
    """The comparison model of the sources (``figures=False``: no SVG is drawn, e.g. for the summary)."""
    results_sources = [s for s in sources if s.kind == "result"]
    stats_sources = [s for s in sources if s.kind == "stats"]
    runs: list[dict[str, Any]] = []
    columns: list[dict[str, Any]] = []
    cases: OrderedDict[str, dict[str, Any]] = OrderedDict()   # id -> case entry (the first document that has it)
    names: Counter[str] = Counter()
    extra_problems: dict[int, list[str]] = {}   # id(source) -> problems found while building (the Source is kept)
    for index, source in enumerate(results_sources):
        doc = source.doc
        run = _run(index, source)
        runs.append(run)
        for case in _list(doc.get("cases")):
            if isinstance(case, dict) and case.get("id") is not None:
                cases.setdefault(_text(case["id"], 300), case)
        entries = [b for b in _list(doc.get("backends")) if isinstance(b, dict)]
        seen = {_text(b.get("name")) for b in entries}
        for result in _list(doc.get("results")):
            if isinstance(result, dict) and _text(result.get("backend")) not in seen:
                seen.add(_text(result.get("backend")))
                entries.append({"name": result.get("backend"), "describe": {}})
                extra_problems.setdefault(id(source), []).append(
                    f"backend {_text(result.get('backend'))!r} has results but no entry")
        for entry in entries:
            name = _text(entry.get("name"), 200)
            names[name] += 1
            results = OrderedDict()
            for result in _list(doc.get("results")):
                if isinstance(result, dict) and _text(result.get("backend"), 200) == name:
                    case_id = _text(result.get("case"), 300)
                    results[case_id] = result
                    if case_id not in cases:
                        cases[case_id] = {"id": case_id, "category": case_id.split("/")[0] if "/" in case_id else "?"}
            columns.append({"name": name, "run": run, "entry": entry, "results": results})
    multiple_runs = len(results_sources) > 1
    # Every count below comes from the results table (rngcheck.results.tables), one row per result.
    data = _results_table(results_sources)
    run_of = dict(zip(range(1, len(results_sources) + 1), run_labels(results_sources)))
    per_column = status_counts(data, ["run", "backend"]) if len(data) else None
    used: set[str] = set()
    for column in columns:
        name = column["entry"].get("name")
        column["key"] = (run_of[column["run"]["index"]], "" if name is None else str(name))
        label = column["name"]
        if names[column["name"]] > 1 and multiple_runs:
            label = f"{column['name']} [{column['run']['label']}]"
        anchor = _anchor_part(label)
        while anchor in used:
            anchor += "_"
        used.add(anchor)
        column["label"] = label
        column["anchor"] = anchor
        found = (per_column.loc[column["key"]]
                 if per_column is not None and column["key"] in per_column.index else None)
        _fill_column(column, {s: int(found[s]) if found is not None else 0 for s in STATUSES})

    case_list = [_case_view(cid, case) for cid, case in cases.items()]
    categories = list(OrderedDict((c["category"], None) for c in case_list))
    case_by_id = {c["id"]: c for c in case_list}

    # Anchors: case-<id> on the first failure section of that case, else on its row in the case list.
    failure_anchor = {}
    for column in columns:
        for failure in column["failures"]:
            failure["case_view"] = case_by_id.get(failure["case"])
            failure["anchor"] = f"case-{column['anchor']}-{_anchor_part(failure['case'])}"
            if failure["case"] not in failure_anchor and failure["detailed"]:
                failure_anchor[failure["case"]] = failure
                failure["case_anchor"] = f"case-{_anchor_part(failure['case'])}"
            else:
                failure["case_anchor"] = None
    for case in case_list:
        case["row_anchor"] = None if case["id"] in failure_anchor else f"case-{_anchor_part(case['id'])}"
        case["link"] = f"#case-{_anchor_part(case['id'])}"
        case["cells"] = [_cell(column, case["id"]) for column in columns]

    matrix = _matrix(data, columns, categories)
    agreement = _agreement(data, columns, case_by_id)
    trend = _trend(data)
    observations = _observations(columns, case_list)
    numbers_rows = _numbers_rows(columns, case_list)
    stats = [_stats_view(i, s, figures) for i, s in enumerate(stats_sources)]

    counts: Counter[str] = Counter()
    for column in columns:
        counts.update(column["counts"])
    required_failed = sum(len(c["failures"]) for c in columns)
    problems = [f"{s.name}: {p}" for s in sources for p in list(s.problems) + extra_problems.get(id(s), [])]
    verdict = report_verdict([c["verdict"] for c in columns], [s["verdict"] for s in stats], complete=not problems)

    errata = list(OrderedDict((_text(e), None) for s in results_sources for e in _list(s.doc.get("errata"))))
    counter_cases = [c for c in case_list if c["category"] in ("counter", "vectors")]
    figures_ = {}
    if columns and figures:
        figures_["status"] = _figure("status_bars", [c["label"] for c in columns], [c["counts"] for c in columns])
    return {
        "title": _title(columns, stats),
        "verdict": verdict,
        "incomplete": bool(problems),
        "problems": problems,
        "counts": {s: counts[s] for s in STATUSES},
        "required_failed": required_failed,
        "case_count": len(case_list),
        "runs": runs,
        "columns": columns,
        "failing_columns": [c for c in columns if c["failures"]],
        "describe_rows": _describe_rows(columns),
        "categories": categories,
        "matrix": matrix,
        "agreement": agreement,
        "trend": trend,
        "observations": observations,
        "numbers_rows": numbers_rows,
        "cases": case_list,
        "counter_cases": counter_cases,
        "errata": errata,
        "stats": stats,
        "figures": figures_,
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "rngcheck_version": __version__,
        "sources": [{"name": s.name, "kind": s.kind} for s in sources],
    }


def _title(columns, stats) -> str:
    names = list(OrderedDict((c["label"], None) for c in columns))
    if not names:
        names = list(OrderedDict((s["title"], None) for s in stats))
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"rngcheck report: {shown}" if shown else "rngcheck report"


def _run(index: int, source: Source) -> dict:
    doc = source.doc
    env = _dict(doc.get("environment"))
    command = doc.get("command")
    if isinstance(command, list):
        command = shlex.join(["rngcheck"] + [_text(w) for w in command]) if command else ""
    packages = _dict(env.get("packages"))
    created = _text(doc.get("created"))
    label = f"run {index + 1}"
    detail = ", ".join(filter(None, [_text(env.get("machine")), created]))
    return {
        "index": index + 1,
        "label": label,
        "title": f"{label}" + (f" ({detail})" if detail else ""),
        "file": source.name,
        "created": created,
        "rngcheck_version": _text(doc.get("rngcheck_version")),
        "schema_version": _text(doc.get("schema_version")),
        "profile": _text(doc.get("profile")),
        "seed": _text(doc.get("seed")),
        "command": _text(command),
        "reproduce": _text(doc.get("reproduce")),
        "python": _text(env.get("python")),
        "platform": _text(env.get("platform")),
        "machine": _text(env.get("machine")),
        "packages": [(_text(k), _text(v)) for k, v in packages.items()],
        "complete": not source.problems,
        "problems": list(source.problems),
        "notes": [_text(n) for n in source.notes],
    }


def _fill_column(column: dict, counts: dict) -> None:
    """The column's failures, diagnoses and verdict; ``counts``: its status counts (from the results table)."""
    entry = column["entry"]
    failures = []
    for case_id, result in column["results"].items():
        status = _effective_status(result)
        if status in BROKEN:
            failures.append(_failure_view(column, case_id, result))
    for number, failure in enumerate(failures):
        failure["detailed"] = number < DETAILED_FAILURES
    verdict = run_verdict(failed=len(failures), passed=counts[PASSED], complete=column["run"]["complete"],
                          failure_stands=True)
    groups: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for failure in failures:
        key = failure["diagnosis_id"] or f"({failure['status']})"
        group = groups.setdefault(key, {"id": failure["diagnosis_id"], "summary": failure["diagnosis_summary"],
                                        "label": UNDIAGNOSED.get(failure["status"], UNDIAGNOSED["failed"]),
                                        "alternatives": [], "count": 0, "first": failure, "cases": []})
        group["count"] += 1
        group["cases"].append(failure["case"])
        for alternative in failure["alternatives"]:
            if alternative not in group["alternatives"]:
                group["alternatives"].append(alternative)
    column.update({
        "spec": _text(entry.get("spec")),
        "validates": entry.get("validates"),
        "describe": [(_text(k, 200), _text(v)) for k, v in _dict(entry.get("describe")).items()],
        "counts": {s: counts[s] for s in STATUSES},
        "failures": failures,
        "detailed_failures": [f for f in failures if f["detailed"]],
        "brief_failures": [f for f in failures if not f["detailed"]],
        "diagnoses": sorted(groups.values(), key=lambda g: -g["count"]),
        "verdict": verdict,
    })


def _failure_view(column: dict, case_id: str, result: dict) -> dict:
    diagnosis = _dict(result.get("diagnosis"))
    mismatches = [{key: _text(value) for key, value in mismatch_fields(m).items()}
                  for m in _list(result.get("mismatches"))[:MISMATCH_ROWS] if isinstance(m, dict)]
    returned = result.get("returned_state")
    return {
        "column": column["label"],
        "case": case_id,
        "status": _effective_status(result),
        "message": _text(result.get("message")),
        "diagnosis_id": _text(diagnosis.get("id"), 200),
        "diagnosis_summary": _text(diagnosis.get("summary"), 500),
        "alternatives": [_text(a, 200) for a in _list(diagnosis.get("alternatives"))],
        "mismatches": mismatches,
        "mismatch_count": _int(result.get("mismatch_count"), len(mismatches)),
        "mismatches_listed": len(_list(result.get("mismatches"))),
        "observations": [_text(o) for o in _list(result.get("observations"))],
        "returned_state": ", ".join(_text(w) for w in returned) if isinstance(returned, list) else _text(returned),
        "reproduce_command": _text(result.get("reproduce_command")),
        "detail": _text(result.get("detail")),
        "seconds": _number(result.get("seconds")),
        "numbers": _numbers_view(result),
    }


def _counter_text(state) -> str:
    """The 128-bit counter of a state as 0xw3'w2'w1'w0 (rngcheck.counter, rules 1 and 5); the
    words may be hex text, as documents hold them. Not four words: nothing."""
    try:
        words = [int(str(w), 0) & counter.WORD_MASK for w in state[:counter.COUNTER_WORDS]]
    except (TypeError, ValueError):
        return ""
    if len(words) != counter.COUNTER_WORDS:
        return ""
    return counter.counter_text(counter.counter_of(words), "'")


def _case_view(case_id: str, case: dict) -> dict:
    inputs = _dict(case.get("inputs"))
    sizes = _list(inputs.get("sizes"))
    try:
        elements = str(math.prod(int(v) for v in sizes)) if sizes else ""
    except (TypeError, ValueError):
        elements = ""
    strides = inputs.get("strides")
    output_state = inputs.get("output_state")
    return {
        "id": case_id,
        "category": _text(case.get("category")) or "?",
        "description": _text(case.get("description")),
        "rule": _text(case.get("rule")),
        "source": _text(case.get("source")),
        "procedure": _text(case.get("procedure")),
        "note": _text(case.get("note")),
        "state": " ".join(_text(w) for w in _list(inputs.get("state"))),
        "counter": _counter_text(_list(inputs.get("state"))),
        "elements": elements,
        "sizes": "{" + ", ".join(_text(s) for s in _list(inputs.get("sizes"))) + "}" if "sizes" in inputs else "",
        "strides": "packed" if strides is None else "{" + ", ".join(_text(s) for s in _list(strides)) + "}",
        "feature_level": _text(inputs.get("feature_level")),
        "output_state": ("yes" if output_state is True else "omitted" if output_state is False
                         else "{" + ", ".join(_text(s) for s in _list(output_state)) + "}"
                         if output_state is not None else ""),
    }


def _cell(column: dict, case_id: str) -> dict:
    result = column["results"].get(case_id)
    if result is None:
        return {"status": "", "text": "not run", "link": None}
    status = _effective_status(result)
    link = f"#case-{column['anchor']}-{_anchor_part(case_id)}" if status in BROKEN else None
    return {"status": status, "text": status, "link": link,
            "title": _text(result.get("message"), 300)}


def _results_table(results_sources):
    """The results table (rngcheck.results.tables) of the result documents, with their run labels."""
    return frame(rows(results_sources))


def _matrix(data, columns, categories) -> list[dict]:
    """Categories x columns: status counts, from the results table."""
    per_category = status_counts(data, ["run", "backend", "category"]) if len(data) else None
    per_column = status_counts(data, ["run", "backend"]) if len(data) else None
    empty = {s: 0 for s in STATUSES}
    table_rows = []
    for category in categories + ["total"]:
        cells = []
        for column in columns:
            key = column["key"] + (() if category == "total" else (category,))
            counts = per_column if category == "total" else per_category
            cells.append(dict(counts.loc[key]) if counts is not None and key in counts.index else dict(empty))
        table_rows.append({"category": category, "cells": [{s: int(c[s]) for s in STATUSES} for c in cells],
                           "errata": category in ("counter", "vectors")})
    return table_rows


def _agreement(data, columns, case_by_id) -> dict:
    """Cases with output on two or more columns: do their output digests agree? The rule is
    results.document.agreement, fed from the results table (a column is a run and a backend)."""
    if len(columns) < 2:
        return {"shown": False}
    keys = [c["key"] for c in columns]
    shown = set(keys)
    found = {a["case"]: a for a in agreement(
        (r.case, (r.run, r.backend), r.output_sha256) for r in data.itertuples() if (r.run, r.backend) in shown)}
    compared = [found[case_id] for case_id in case_by_id if case_id in found]
    differ = [{"case": a["case"], "link": f"#case-{_anchor_part(a['case'])}",
               "cells": [_short(a["outputs"].get(k)) or "-" for k in keys]} for a in compared if not a["agree"]]
    return {"shown": True, "compared": len(compared), "agree": len(compared) - len(differ), "differ": differ}


def _trend(data) -> list[dict]:
    """Per backend that occurs in two or more runs: runs x categories, newest first, and for each case
    failing in the newest run, the first run of its current streak of failures."""
    views = []
    for backend, group in data.groupby("backend", sort=False):
        order = list(dict.fromkeys(group["run"]))
        if len(order) < 2:
            continue
        first = group.drop_duplicates("run").set_index("run")
        runs = sorted(order, key=lambda r: (first.at[r, "created"], order.index(r)), reverse=True)
        categories = list(dict.fromkeys(group["category"]))
        counts = status_counts(group, ["run", "category"])
        totals = status_counts(group, ["run"])
        broken = group[group["effective"].isin(BROKEN)]
        failing = {run: set(broken.loc[broken["run"] == run, "case"]) for run in runs}
        since = []
        for case in sorted(failing[runs[0]]):
            streak = 0
            while streak + 1 < len(runs) and case in failing[runs[streak + 1]]:
                streak += 1
            start = runs[streak]
            row = broken[(broken["run"] == runs[0]) & (broken["case"] == case)].iloc[0]
            since.append({"case": case, "link": f"#case-{_anchor_part(case)}", "since": start,
                          "since_created": first.at[start, "created"], "always": streak + 1 == len(runs),
                          "diagnosis": row["diagnosis"] or row["effective"]})

        def cell(table, key):
            if key not in table.index:
                return None
            c = table.loc[key]
            bad = int(sum(c[s] for s in BROKEN))
            return {"passed": int(c["passed"]), "broken": bad, "other": int(c["info"] + c["skipped"])}

        views.append({
            "backend": _text(backend, 200), "anchor": f"trend-{_anchor_part(backend)}", "categories": categories,
            "runs": [{"run": _text(r), "created": _text(first.at[r, "created"]),
                      "version": _text(first.at[r, "version"]),
                      "complete": bool(first.at[r, "complete"]),
                      "cells": [cell(counts, (r, c)) for c in categories], "total": cell(totals, r)} for r in runs],
            "since": since,
        })
    return views


def _numbers_view(result: dict) -> dict | None:
    """A numbers result's bound, ULP histogram and worst element, as text (everything escaped)."""
    found = _dict(result.get("numbers"))
    if not found:
        return None
    worst = _dict(found.get("worst"))
    return {
        "request": _text(" ".join(f"{k}={v}" for k, v in _dict(found.get("request")).items())),
        "bound": _text(found.get("bound_ulps")), "why": _text(found.get("bound")),
        "histogram": ", ".join(f"{_text(k, 20)}: {_int(v, 0)}" for k, v in _dict(found.get("histogram")).items()),
        "worst": _text(f"element {worst.get('index')}: expected {worst.get('expected')}, got {worst.get('actual')} "
                       f"({worst.get('ulps')} ULP)") if worst else "",
        "over": _int(found.get("over"), 0), "count": _int(found.get("count"), 0),
        "worst_ulps": _int(worst.get("ulps"), 0) if worst else 0,
        "rows": [{key: _text(_dict(row).get(key)) for key in ("index", "expected", "actual", "ulps")}
                 for row in _list(found.get("mismatches"))[:MISMATCH_ROWS]],
    }


def _case_rows(columns, case_list, cell: Callable[[dict | None], tuple[object, bool]], key: str) -> list[dict]:
    """One row per case whose cells (``cell`` of each column's result, None where it has none: the
    value and whether it says something) say something somewhere; the cells under ``key``."""
    rows = []
    for case in case_list:
        cells = [cell(column["results"].get(case["id"])) for column in columns]
        if any(says for _, says in cells):
            rows.append({"case": case, key: [value for value, _ in cells]})
    return rows


def _numbers_cell(result: dict | None) -> tuple[object, bool]:
    """A numbers case's cell: its bound, worst and histogram; a result without numbers (not
    applicable, crashed, ...) shows its status and says nothing of its own."""
    if result is None:
        return None, False
    view = _numbers_view(result)
    if view is None:
        return {"status": _effective_status(result)}, False
    return view, True


def _numbers_rows(columns, case_list) -> list[dict]:
    """Every numbers case: per backend, the worst distance, the bound and the ULP histogram."""
    return _case_rows(columns, case_list, _numbers_cell, "cells")


def _observation_cell(result: dict | None) -> tuple[object, bool]:
    """What a backend did where the specification leaves it open: its observations, or an info
    result's message."""
    text = ""
    if result is not None:
        observed = [_text(o) for o in _list(result.get("observations"))]
        if observed:
            text = "; ".join(observed)
        elif _effective_status(result) == "info":
            text = _text(result.get("message"))
    return text, bool(text)


def _observations(columns, case_list) -> list[dict]:
    """Implementation-defined answers and observations (padding, aliasing, invalid descriptions)."""
    return _case_rows(columns, case_list, _observation_cell, "texts")


def _describe_rows(columns) -> list[dict]:
    keys = list(OrderedDict((k, None) for c in columns for k, _ in c["describe"]))
    rows = [{"key": key, "values": [dict(c["describe"]).get(key, "") for c in columns]} for key in keys]
    return rows


# ---------------------------------------------------------------------------------------
# Statistics.
# ---------------------------------------------------------------------------------------

_VERDICT_ORDER = {STATS_FAIL: 0, STATS_SUSPECT: 1, STATS_PASS: 2}


def _stats_view(index: int, source: Source, draw: bool = True) -> dict:
    doc = source.doc
    src = _dict(doc.get("source"))
    title = _text(src.get("backend") or src.get("raw") or src.get("file") or src.get("generator") or src.get("path")
                  or src.get("implementation") or f"stream {index + 1}", 200)
    results = [r for r in _list(doc.get("results")) if isinstance(r, dict)]
    rows = []
    for r in results:
        retest = _dict(r.get("retest"))
        rows.append({
            "verdict": _text(r.get("verdict")) or "?",
            "first_verdict": _text(r.get("first_verdict")),
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
    figures = {}
    if not draw:
        results_for_figures = []
    else:
        results_for_figures = results
    second = [_float(r.get("p_value")) for r in results_for_figures if r.get("level") == "second-level"]
    other = [_float(r.get("p_value")) for r in results_for_figures if r.get("level") != "second-level"]
    series = {}
    if any(v is not None for v in second):
        series["second-level (KS of per-sample p-values)"] = [v for v in second if v is not None]
    if any(v is not None for v in other):
        series["first-level and aggregate"] = [v for v in other if v is not None]
    if series:
        figures["histogram"] = _figure("pvalue_histogram", series)
    tables = _lane_tables(results_for_figures)
    if tables:
        figures["lanes"] = _figure("lane_bias", tables)
    bad = [r for r in results_for_figures if r.get("verdict") in STATS_BAD or r.get("first_verdict") in STATS_BAD]
    if bad:
        bad.sort(key=lambda r: -math.inf if _log10_p(r) is None else _log10_p(r))
        bad = bad[:30]
        figures["worst"] = _figure("log10_p_bars",
                                   [f"{_text(r.get('test'))} {_text(r.get('stream'))} {_text(r.get('level'))}"
                                    for r in bad], [_log10_p(r) for r in bad],
                                   _float(thresholds.get("fail")) or 1e-10, _float(thresholds.get("suspect")))
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
        "not_run": [{"test": _text(n.get("test")), "stream": _text(n.get("stream")), "reason": _text(n.get("reason"))}
                    for n in _list(doc.get("not_run")) if isinstance(n, dict)],
        "problems": list(source.problems),
        "figures": figures,
    }


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


def _figure(name: str, *args) -> dict:
    """An inline SVG figure, or the reason it could not be drawn (matplotlib missing)."""
    try:
        from . import figures
    except ImportError as error:  # pragma: no cover - matplotlib is in the report extra
        return {"svg": None, "error": f"figures need matplotlib ({error})"}
    try:
        return {"svg": getattr(figures, name)(*args), "error": None}
    except ImportError as error:
        return {"svg": None, "error": f"figures need matplotlib ({error})"}


# ---------------------------------------------------------------------------------------
# Rendering.
# ---------------------------------------------------------------------------------------

def _environment():
    try:
        import jinja2
    except ImportError:
        raise RngcheckError("the HTML report needs Jinja2 (a dependency of rngcheck): pip install Jinja2") from None
    from markupsafe import Markup

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True, finalize=shown)
    # Only the figures (SVG that matplotlib wrote from numbers and escaped labels) are trusted markup.
    env.filters["svg"] = lambda figure: Markup(figure["svg"]) if figure and figure.get("svg") else ""
    return env


def render(documents, stats=None) -> str:
    """The report's HTML text; ``documents`` (and ``stats``) are dicts, paths or Sources, mixed."""
    sources = sources_of(list(documents) + list(stats or []))
    if not sources:
        raise RngcheckError("no document to report on")
    return render_model(build(sources))


@functools.cache
def template():
    """The report's template, compiled once per process (a report of many documents, or a test
    rendering hundreds, compiles it once)."""
    return _environment().get_template(TEMPLATE)


def render_model(model: dict) -> str:
    """The HTML text of a model from ``build``."""
    return template().render(**model)


def write(documents, path, stats=None) -> None:
    """Write the report for result and/or stats documents (mixed) to ``path``."""
    write_text(path, render(documents, stats))


def write_text(path, text: str) -> None:
    """Write a report file whole (``jsonfile.atomic_write``), or raise RngcheckError."""
    atomic_write(Path(path), text)
