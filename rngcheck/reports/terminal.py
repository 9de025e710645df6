"""The terminal summary of a result document."""

from __future__ import annotations

from ..results.statuses import STATUSES, is_failure
from ..results.text import detail_lines, printable

SHOWN_FAILURES = 12
SHOWN_MISMATCHES = 2   # mismatch lines a failure shows (the JSON document lists more)


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


def summary(document: dict) -> str:
    lines = []
    by_category = category_counts(document)
    for backend in document["backends"]:
        name = printable(backend["name"])
        results = [r for r in document["results"] if r["backend"] == backend["name"]]
        device = printable(backend["describe"].get("device", backend["describe"].get("implementation", "")))
        lines.append(f"{name}  ({device})  profile {document['profile']}, seed {document['seed']}")
        for category, counts in by_category.get(backend["name"], {}).items():
            parts = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
            lines.append(f"  {category:<11} {parts}")
        failures = [r for r in results if is_failure(r["status"], r["required"])]
        for r in failures[:SHOWN_FAILURES]:
            tag = f" [{printable(r['diagnosis'].get('id'))}]" if isinstance(r.get("diagnosis"), dict) else ""
            lines.append(f"  {r['status'].upper()} {r['case']}{tag}: {printable(r['message'])[:160]}")
            family = isinstance(r.get("diagnosis"), dict) and "parameters" in r["diagnosis"]  # says its parameters
            lines += [f"       {printable(line)}"
                      for line in detail_lines(r, mismatches=SHOWN_MISMATCHES, diagnosis=family)]
        if len(failures) > SHOWN_FAILURES:
            lines.append(f"  ... and {len(failures) - SHOWN_FAILURES} more failures (see the JSON document)")
        info = [r for r in results if r["status"] == "info" and r["observations"]]
        for r in info[:4]:
            lines.append(f"  info {r['case']}: {printable(r['observations'][0])[:140]}")
        lines.append(f"  => {backend['verdict'].upper()}")
    if document.get("agreement"):
        disagree = [a["case"] for a in document["agreement"] if not a["agree"]]
        lines.append(f"cross-backend: {len(document['agreement']) - len(disagree)} of {len(document['agreement'])} "
                     f"cases with identical output words on every backend"
                     + (f"; differ: {', '.join(disagree[:8])}" if disagree else ""))
    s = document["summary"]
    counts = ", ".join(f"{n} {k}" for k, n in s["counts"].items() if n)
    lines.append(f"rngcheck: {s['verdict'].upper()} ({counts}; {s['required_failed']} required failed)")
    lines.append(f"reproduce: {document['reproduce']}")
    return "\n".join(lines)
