"""The terminal summary of a result document: per backend, what passed, what does not apply, the
failures grouped (rngcheck.results.groups), the verdict; then the run's verdict and how to reproduce it.

A backend on which everything passed takes a few lines whatever the profile: the categories that
passed whole are one line, those wholly not applicable are folded into the n/a line, which counts
them by what the backend does not implement (the case records' ``layer``).
"""

from __future__ import annotations

from collections import Counter

from ..results.groups import failure_groups, group_lines
from ..results.statuses import INFO, NOT_APPLICABLE, PASSED, SKIPPED, STATUSES, effective
from ..results.text import printable
from ..results.verdicts import said

SHOWN_GROUPS = 4       # failure groups a backend shows (the JSON document and the page have every one)
SHOWN_INFO = 3         # implementation-defined observations a backend shows


def category_counts(document: dict) -> dict:
    """{backend: {category: {status: n}}} from the results table (effective statuses)."""
    from ..results.tables import counts, table

    data = table([document])
    if not len(data):
        return {}
    grouped = counts(data, ["backend", "category"])
    out: dict[str, dict[str, dict[str, int]]] = {}
    for (backend, category), row in grouped.iterrows():
        out.setdefault(backend, {})[category] = {s: int(row[s]) for s in STATUSES}
    return out


def not_applicable_line(results: list[dict], layers: dict[str, str]) -> str:
    """``n/a 365 (not implemented here): numbers 271, generator blocks 67, StableHLO 92``, or ""."""
    counted = Counter(layers.get(r["case"]) or "other" for r in results if r["status"] == NOT_APPLICABLE)
    if not counted:
        return ""
    parts = ", ".join(f"{layer} {n}" for layer, n in counted.most_common())
    return f"n/a {sum(counted.values())} (what this backend does not implement): {parts}"


def _category_lines(by_category: dict[str, dict[str, int]]) -> list[str]:
    """One line for the categories that passed whole; one each for the others (wholly n/a ones folded)."""
    whole = [(c, n[PASSED]) for c, n in by_category.items() if n[PASSED] and n[PASSED] == sum(n.values()) - n[
        NOT_APPLICABLE]]
    lines = []
    if whole:
        lines.append(f"  passed {sum(n for _, n in whole)}: " + ", ".join(f"{c} {n}" for c, n in whole))
    for category, counts in by_category.items():
        if (category, counts[PASSED]) in whole or sum(counts.values()) == counts[NOT_APPLICABLE]:
            continue
        parts = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s] and s != NOT_APPLICABLE)
        lines.append(f"  {category:<11} {parts}")
    return lines


def backend_lines(document: dict, backend: dict, by_category: dict, groups: list, layers: dict[str, str]) -> list[str]:
    name = printable(backend["name"])
    results = [r for r in document["results"] if r["backend"] == backend["name"]]
    device = printable(backend["describe"].get("device", backend["describe"].get("implementation", "")))
    lines = [f"{name}  ({device})  profile {document['profile']}, seed {document['seed']}"]
    lines += _category_lines(by_category)
    absent = not_applicable_line(results, layers)
    if absent:
        lines.append("  " + absent)
    skipped = [r for r in results if r["status"] == SKIPPED]
    if skipped:
        lines.append(f"  skipped {len(skipped)}: {printable(skipped[0]['message'])[:140]}"
                     + (" (and others: see the JSON document)" if len(skipped) > 1 else ""))
    if groups:
        failed = sum(g.count for g in groups)
        lines.append(f"  failures: {failed} in {len(groups)} group{'s' if len(groups) != 1 else ''} "
                     f"(what they share, the smallest case, how to reproduce it)")
        lines += ["    " + printable(line) for line in group_lines(groups, shown=SHOWN_GROUPS)]
        if len(groups) > SHOWN_GROUPS:
            rest = sum(g.count for g in groups[SHOWN_GROUPS:])
            lines.append(f"    ... and {len(groups) - SHOWN_GROUPS} more groups ({rest} cases): see the JSON "
                         f"document or the HTML report")
    info = [r for r in results if effective(r["status"], r["required"]) == INFO and r["observations"]]
    if info:   # implementation-defined: what the backend did, never a failure (the page and JSON say each)
        cases: dict[str, list[str]] = {}
        for r in info:
            cases.setdefault(printable(r["observations"][0])[:120], []).append(r["case"])
        said_once = "; ".join(f"{what} ({len(ids)} cases)" if len(ids) > 1 else f"{what} ({ids[0]})"
                              for what, ids in list(cases.items())[:SHOWN_INFO])
        lines.append(f"  info {len(info)} (implementation-defined): {said_once}")
    lines.append(f"  => {said(backend['verdict'])}")
    return lines


def summary(document: dict) -> str:
    by_category = category_counts(document)
    groups = failure_groups(document)
    layers = {str(c.get("id")): str(c.get("layer") or "") for c in document["cases"] if isinstance(c, dict)}
    lines: list[str] = []
    for backend in document["backends"]:
        lines += backend_lines(document, backend, by_category.get(backend["name"], {}),
                               groups.get(backend["name"], []), layers)
    if document.get("agreement"):
        disagree = [a["case"] for a in document["agreement"] if not a["agree"]]
        lines.append(f"cross-backend: {len(document['agreement']) - len(disagree)} of {len(document['agreement'])} "
                     f"cases with identical output words on every backend"
                     + (f"; differ: {', '.join(disagree[:8])}" if disagree else ""))
    s = document["summary"]
    counts = ", ".join(f"{n} {k}" for k, n in s["counts"].items() if n)
    lines.append(f"rngcheck: {said(s['verdict'])} ({counts}; {s['required_failed']} required failed)")
    lines.append(f"reproduce: {document['reproduce']}")
    return "\n".join(lines)
