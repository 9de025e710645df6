"""The comparison model of the HTML report: plain dicts of strings, numbers and booleans built
from result and statistics documents; the template (templates/report.html.j2) only lays it out,
and the markdown summary (reports.summary) reads the same model.

    build(sources) -> dict    # sources: results.sources.Source (reports.html.render reads the files)

The page leads with the answer: the verdict, a row per backend (its verdict, counts, what did not
apply to it and why), the failure groups, the categories x backends matrix; then the failures in
full and the statistics; then, folded, everything a reader looks up (configuration, agreement,
implementation-defined answers, errata and notes, the numbers table, all cases).

Results are read one way: the results table (``results.tables.records``: each result's row, its
effective status, run label and counts, with the result's typed record for what a page shows
beyond the table's columns: its message, mismatches, numbers, observations). The run-level fields
(environment, command) and the case entries are read from the document through
``reports.fields``; statistics documents through ``reports.statsview``; a column's failures and
their groups through ``reports.failures``.

Verdicts come from ``results.verdicts`` (a column's run verdict, the page's verdict); the model
gives the template booleans (a column ``passed``/``failed``) and words and classes to show, never
a verdict to compare.
"""

from __future__ import annotations

import shlex
from collections import Counter, OrderedDict
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from .. import __version__
from ..results.document import agreement
from ..results.groups import failure_groups
from ..results.records import CaseRecord, ResultRecord
from ..results.sources import Source
from ..results.statuses import BROKEN, FAILED, INFO, NOT_APPLICABLE, RAN, SKIPPED, STATUSES, effective
from ..results.tables import counts as status_counts
from ..results.tables import frame, records, run_labels
from ..results.verdicts import FAIL, NOTHING_RAN, PASS, report_verdict, run_verdict, said
from . import failures as _failures
from .failures import DETAILED_FAILURES, MISMATCH_ROWS, UNDIAGNOSED
from .failures import numbers_view as _numbers_view
from .fields import anchor_part as _anchor_part
from .fields import as_dict as _dict
from .fields import as_list as _list
from .fields import short as _short
from .fields import text as _text
from .figures import draw as _figure
from .statsview import stats_view

__all__ = ["DETAILED_FAILURES", "MISMATCH_ROWS", "UNDIAGNOSED", "build"]

SKIP_REASONS = 3            # distinct reasons a backend's skipped cases give, shown in its row
BADGE = {PASS: "s-passed", FAIL: "s-failed", NOTHING_RAN: "s-nothing"}   # a column's verdict badge (else a warning)


# ---------------------------------------------------------------------------------------
# The comparison model: plain dicts of strings and numbers; the template only lays it out.
# ---------------------------------------------------------------------------------------

def build(sources: list[Source], figures: bool = True, history: str = "created") -> dict:
    """The comparison model of the sources (``figures=False``: no SVG is drawn, e.g. for the summary;
    ``history``: the History view's runs by the time each was "created", or in the order "given")."""
    results_sources = [s for s in sources if s.kind == "result"]
    table_records = records(results_sources)   # every result: its table row and its record
    data = frame([row for row, _ in table_records])
    runs, columns, cases, extra_problems = _columns_of(results_sources, table_records)
    _fill_columns(columns, data, multiple_runs=len(results_sources) > 1)
    case_list = _case_views(cases, columns)
    _absences(columns, {case["id"]: case["layer"] for case in case_list})
    stats = [stats_view(i, source, figures) for i, source in enumerate(s for s in sources if s.kind == "stats")]
    problems = [f"{s.name}: {p}" for s in sources for p in list(s.problems) + extra_problems.get(id(s), [])]
    verdict = report_verdict([c["verdict"] for c in columns], [s["verdict"] for s in stats], complete=not problems)
    figures_ = {}
    if columns and figures:
        figures_["status"] = _figure("status_bars", [c["label"] for c in columns], [c["counts"] for c in columns])
        _failures.draw(columns)
    return _page(sources, runs, columns, case_list, data, stats, problems, verdict, figures_, history)


def _columns_of(results_sources: list[Source], table_records) -> tuple[list, list, OrderedDict, dict]:
    """The runs, the backend columns (a backend of a run: its entry, its results by case, its failure
    groups), the case entries by id (the first document's) and the problems found while reading."""
    labels = run_labels(results_sources)
    by_run: dict[str, list[ResultRecord]] = {label: [] for label in labels}
    for row, record in table_records:
        by_run[row.run].append(record)
    runs, columns = [], []
    cases: OrderedDict[str, dict[str, Any]] = OrderedDict()   # id -> case entry (the first document that has it)
    extra_problems: dict[int, list[str]] = {}   # id(source) -> problems found while building (the Source is kept)
    for index, source in enumerate(results_sources):
        run = _run(index, source)
        runs.append(run)
        for case in _list(source.doc.get("cases")):
            if isinstance(case, dict) and case.get("id") is not None:
                cases.setdefault(_text(case["id"], 300), case)
        groups = {_text(k, 200): v for k, v in failure_groups(source.doc).items()}
        mine = by_run[labels[index]]
        for entry in _entries(source, mine, extra_problems):
            name = _text(entry.get("name"), 200)
            results: OrderedDict[str, ResultRecord] = OrderedDict()
            for record in mine:
                if _text(record.backend, 200) == name:
                    case_id = _text(record.case, 300)
                    results[case_id] = record
                    if case_id not in cases:
                        cases[case_id] = {"id": case_id, "category": case_id.split("/")[0] if "/" in case_id else "?"}
            columns.append({"name": name, "run": run, "entry": entry, "results": results,
                            "groups": groups.get(name, []), "key": (labels[index], _key_name(entry))})
    return runs, columns, cases, extra_problems


def _key_name(entry: dict) -> str:
    name = entry.get("name")
    return "" if name is None else str(name)


def _entries(source: Source, results: list[ResultRecord], extra_problems: dict[int, list[str]]) -> list[dict]:
    """A run's backend entries, and one for each backend that has results but no entry (a problem)."""
    entries = [b for b in _list(source.doc.get("backends")) if isinstance(b, dict)]
    seen = {_text(b.get("name")) for b in entries}
    for record in results:
        if _text(record.backend) not in seen:
            seen.add(_text(record.backend))
            entries.append({"name": record.backend, "describe": {}})
            extra_problems.setdefault(id(source), []).append(
                f"backend {_text(record.backend)!r} has results but no entry")
    return entries


def _fill_columns(columns: list[dict], data, multiple_runs: bool) -> None:
    """Each column's label and anchor (a backend name in several runs is told apart by its run), its
    status counts (from the results table), failures, groups and verdict."""
    names = Counter(column["name"] for column in columns)
    per_column = status_counts(data, ["run", "backend"]) if len(data) else None
    used: set[str] = set()
    for column in columns:
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


def _case_views(cases: OrderedDict, columns: list[dict]) -> list[dict]:
    """Every case as the page shows it, with its anchors: case-<id> on the first failure section of
    that case (shown in full), else on its row in the case list; and its cell on each column."""
    case_list = [_case_view(cid, case) for cid, case in cases.items()]
    case_by_id = {c["id"]: c for c in case_list}
    failure_anchor = {}
    for column in columns:
        for failure in column["failures"]:
            failure["case_view"] = case_by_id.get(failure["case"])
            if failure["case"] not in failure_anchor and failure["detailed"]:
                failure_anchor[failure["case"]] = failure
                failure["case_anchor"] = f"case-{_anchor_part(failure['case'])}"
            else:
                failure["case_anchor"] = None
    for case in case_list:
        case["row_anchor"] = None if case["id"] in failure_anchor else f"case-{_anchor_part(case['id'])}"
        case["link"] = f"#case-{_anchor_part(case['id'])}"
        case["cells"] = [_cell(column, case["id"]) for column in columns]
    return case_list


def _page(sources, runs, columns, case_list, data, stats, problems, verdict, figures, history) -> dict:
    """The page's model: what every section shows."""
    results_sources = [s for s in sources if s.kind == "result"]
    categories = list(OrderedDict((c["category"], None) for c in case_list))
    noted_cases = [c for c in case_list if c["note"]]
    matrix, folded = _fold(_matrix(data, columns, categories, {c["category"] for c in noted_cases}))
    counts: Counter[str] = Counter()
    for column in columns:
        counts.update(column["counts"])
    return {
        "title": _title(columns, stats),
        "verdict": verdict,
        "verdict_class": "v-" + verdict.replace(" ", "-"),
        "incomplete": bool(problems),
        "problems": problems,
        "counts": {s: counts[s] for s in STATUSES},
        "required_failed": sum(len(c["failures"]) for c in columns),
        "case_count": len(case_list),
        "runs": runs,
        "columns": columns,
        "failing_columns": [c for c in columns if c["failures"]],
        "describe_rows": _describe_rows(columns),
        "categories": categories,
        "matrix": matrix,
        "matrix_folded": folded,
        "agreement": _agreement(data, columns, {c["id"]: c for c in case_list}),
        "trend": _trend(data, history),
        "observations": _observations(columns, case_list),
        "numbers_rows": _numbers_rows(columns, case_list),
        "cases": case_list,
        "case_groups": _case_groups(case_list),
        "noted_cases": noted_cases,
        "errata": list(OrderedDict((_text(e), None) for s in results_sources for e in _list(s.doc.get("errata")))),
        "stats": stats,
        "figures": figures,
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
    """The column's failures and groups (reports.failures), its counts and its verdict; ``counts``:
    its status counts (from the results table)."""
    entry = column["entry"]
    _failures.fill(column)
    verdict = run_verdict(failed=len(column["failures"]), ran=sum(counts[s] for s in RAN),
                          complete=column["run"]["complete"], failure_stands=True)
    broken = [(counts[s], s) for s in BROKEN if counts[s]]
    column.update({
        "spec": _text(entry.get("spec")),
        "validates": entry.get("validates"),
        "describe": [(_text(k, 200), _text(v)) for k, v in _dict(entry.get("describe")).items()],
        "counts": {s: counts[s] for s in STATUSES},
        "broken": sum(n for n, _ in broken),
        "broken_detail": ", ".join(f"{n} {s}" for n, s in broken) if any(s != FAILED for _, s in broken) else "",
        "verdict": verdict,
        "verdict_text": said(verdict),
        "verdict_class": BADGE.get(verdict, "s-SUSPECT"),
        "passed": verdict == PASS,   # for the template, which compares no verdict
        "failed": verdict == FAIL,
    })


def _absences(columns: list[dict], layer_of: dict[str, str]) -> None:
    """What a column did not run: its n/a results counted by what the backend lacks (the case's
    layer), and its skipped results by their reason."""
    for column in columns:
        layers: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        for case_id, result in column["results"].items():
            status = effective(result.status, result.required)
            if status == NOT_APPLICABLE:
                layers[layer_of.get(case_id) or "other"] += 1
            elif status == SKIPPED:
                reasons[_text(result.message.splitlines()[0] if result.message else "", 200) or "no reason given"] += 1
        column["not_applicable"] = ", ".join(f"{layer} {n}" for layer, n in layers.most_common())
        shown = [f"{reason} ({n})" if len(reasons) > 1 else reason for reason, n in reasons.most_common(SKIP_REASONS)]
        if len(reasons) > SKIP_REASONS:
            shown.append(f"{len(reasons) - SKIP_REASONS} other reasons")
        column["skipped_reasons"] = "; ".join(shown)


def _input_text(value) -> str:
    """One input of a case as text: a list as its items joined by spaces (in braces when they are
    numbers), an object as key=value pairs, anything else as itself."""
    if isinstance(value, list):
        items = " ".join(_text(v) for v in value)
        return items if all(isinstance(v, str) for v in value) else "{" + items.replace(" ", ", ") + "}"
    if isinstance(value, dict):
        return ", ".join(f"{_text(k)}={_input_text(v)}" for k, v in value.items() if v is not None)
    return "packed" if value is None else _text(value)


def _case_view(case_id: str, entry: dict) -> dict:
    """A case as the page shows it: its header, and its inputs as its axis recorded them (the page names
    no axis: each input is a label and a text)."""
    case = CaseRecord.from_json(entry)
    return {
        "id": case_id,
        "category": _text(case.category) or "?",
        "description": _text(case.description),
        "rule": _text(case.rule),
        "source": _text(case.source),
        "procedure": _text(case.procedure),
        "note": _text(case.note),
        "layer": _text(case.layer, 200),
        "inputs": "; ".join(f"{_text(key).replace('_', ' ')} {_input_text(value)}"
                            for key, value in case.inputs.items()),
    }


def _cell(column: dict, case_id: str) -> dict:
    result = column["results"].get(case_id)
    if result is None:
        return {"status": "", "text": "not run", "link": None, "css": "muted"}
    status = effective(result.status, result.required)
    link = f"#case-{column['anchor']}-{_anchor_part(case_id)}" if status in BROKEN else None
    return {"status": status, "text": status, "link": link, "css": status_class(status)}


def status_class(status: str) -> str:
    """A status's CSS class (s-passed, ..., s-na for n/a)."""
    return "s-" + ("na" if status == NOT_APPLICABLE else status)


def _matrix(data, columns, categories, noted: set[str]) -> list[dict]:
    """Categories x columns: status counts, from the results table; ``noted``: the categories with a
    case that carries a note (linked to the errata and notes)."""
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
                           "errata": category in noted})
    return table_rows


def _case_groups(case_list: list[dict]) -> list[dict]:
    """All cases, compactly: per category, the cases with the same status on every column, one row
    each (a row's cells are the statuses; its cases are listed, each with its anchor or link)."""
    groups: OrderedDict[tuple, dict] = OrderedDict()
    for case in case_list:
        statuses = tuple(cell["status"] for cell in case["cells"])
        key = (case["category"], statuses)
        if key not in groups:
            groups[key] = {"category": case["category"], "cases": [],
                           "cells": [{"text": c["text"], "css": c["css"], "link": None} for c in case["cells"]]}
        groups[key]["cases"].append(case)
    return list(groups.values())


def _fold(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """The matrix without the categories that are n/a on every column (and the names of those)."""
    def wholly_not_applicable(row: dict) -> bool:
        cells = row["cells"]
        return (row["category"] != "total" and any(c[NOT_APPLICABLE] for c in cells)
                and all(c[s] == 0 for c in cells for s in STATUSES if s != NOT_APPLICABLE))

    return ([row for row in rows if not wholly_not_applicable(row)],
            [row["category"] for row in rows if wholly_not_applicable(row)])


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


def _trend(data, history: str = "created") -> list[dict]:
    """Per backend that occurs in two or more runs: runs x categories, newest first, and for each case
    failing in the newest run, the first run of its current streak of failures. The newest: the
    latest created (ties: the later given), or with ``history="given"`` the later given."""
    views = []
    for backend, group in data.groupby("backend", sort=False):
        order = list(dict.fromkeys(group["run"]))
        if len(order) < 2:
            continue
        first = group.drop_duplicates("run").set_index("run")
        runs = order[::-1] if history == "given" else sorted(
            order, key=lambda r: (first.at[r, "created"], order.index(r)), reverse=True)
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


def _case_rows(columns, case_list, cell: Callable[[ResultRecord | None], tuple[object, bool]],
               key: str) -> list[dict]:
    """One row per case whose cells (``cell`` of each column's result, None where it has none: the
    value and whether it says something) say something somewhere; the cells under ``key``."""
    rows = []
    for case in case_list:
        cells = [cell(column["results"].get(case["id"])) for column in columns]
        if any(says for _, says in cells):
            rows.append({"case": case, key: [value for value, _ in cells]})
    return rows


def _numbers_cell(result: ResultRecord | None) -> tuple[object, bool]:
    """A numbers case's cell: its bound, worst and histogram; a result without numbers (not
    applicable, crashed, ...) shows its status and says nothing of its own."""
    if result is None:
        return None, False
    view = _numbers_view(result)
    if view is None:
        return {"status": effective(result.status, result.required)}, False
    return view, True


def _numbers_rows(columns, case_list) -> list[dict]:
    """Every numbers case: per backend, the worst distance, the bound and the ULP histogram."""
    return _case_rows(columns, case_list, _numbers_cell, "cells")


def _observation_cell(result: ResultRecord | None) -> tuple[object, bool]:
    """What a backend did where the specification leaves it open: its observations, or an info
    result's message."""
    text = ""
    if result is not None:
        observed = [_text(o) for o in result.observations]
        if observed:
            text = "; ".join(observed)
        elif effective(result.status, result.required) == INFO:
            text = _text(result.message)
    return text, bool(text)


def _observations(columns, case_list) -> list[dict]:
    """Implementation-defined answers and observations (padding, aliasing, invalid descriptions)."""
    return _case_rows(columns, case_list, _observation_cell, "texts")


def _describe_rows(columns) -> list[dict]:
    keys = list(OrderedDict((k, None) for c in columns for k, _ in c["describe"]))
    rows = [{"key": key, "values": [dict(c["describe"]).get(key, "") for c in columns]} for key in keys]
    return rows
