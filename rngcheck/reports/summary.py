"""A short markdown summary of a comparison, for CI comments (``rngcheck report ... --summary FILE``).

Built from the same model as the HTML report (``reports.html.build``). Text from documents
is escaped for markdown and HTML (GitHub renders inline HTML in comments); commands are in
fenced code blocks whose fence is longer than any backtick run they contain. Links point
into the HTML report (``report.html#case-ID``) when its file name is given.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..jsonfile import atomic_write
from ..results.text import visible
from ..results.verdicts import STATS_BAD, STATS_FAIL, STATS_PASS, STATS_SUSPECT, said

SHOWN_DIAGNOSES = 6
SHOWN_FAILURES = 5


def md(text, limit: int = 300) -> str:
    """Document text as inert markdown: one line, control characters shown as escapes
    ("\\x1b"), HTML-escaped, markdown punctuation escaped."""
    text = " ".join(visible(str(text)).split())
    if len(text) > limit:
        text = text[:limit - 1] + "\u2026"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_{}\[\]()#+!|~])", r"\\\1", text)


def code_block(text: str) -> str:
    text = "".join(c if c.isprintable() or c in "\n\t" else "?" for c in str(text))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _link(href: str, html_name: str | None) -> str | None:
    if not html_name:
        return None
    return f"{html_name}{href}"


def _case_ref(case: str, anchor: str, html_name: str | None) -> str:
    target = _link(f"#{anchor}", html_name)
    label = md(case, 120)
    if not target:
        return label
    # angle brackets keep any character of the target literal (case ids contain '/')
    return f"[{label}](<{target.replace('>', '%3E').replace('<', '%3C').replace(' ', '%20')}>)"


def render(model: dict, html_name: str | None = None) -> str:
    lines = [f"## rngcheck: {model['verdict']}", ""]
    counts = model["counts"]
    if model["columns"]:
        broken = counts.get("error", 0) + counts.get("crashed", 0) + counts.get("timeout", 0)
        lines.append(f"{len(model['columns'])} backend(s), {model['case_count']} cases: {counts['passed']} passed, "
                     f"{counts['failed']} failed, {broken} errors (crashed or timed out included), "
                     f"{counts['info']} implementation-defined, {counts['n/a']} n/a, {counts['skipped']} skipped; "
                     f"**{model['required_failed']} required failed**.")
        lines.append("")
        lines.append("| backend | verdict | passed | failed | errors | impl.-defined | n/a | skipped |")
        lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for column in model["columns"]:
            c = column["counts"]
            errors = c.get("error", 0) + c.get("crashed", 0) + c.get("timeout", 0)
            lines.append(f"| {md(column['label'], 80)} | {said(column['verdict'])} | {c['passed']} | {c['failed']} | "
                         f"{errors} | {c['info']} | {c['n/a']} | {c['skipped']} |")
        lines.append("")
    if model["problems"]:
        lines.append("**Incomplete:** " + "; ".join(md(p, 200) for p in model["problems"][:4]))
        lines.append("")
    for column in model["failing_columns"]:
        lines.append(f"### {md(column['label'], 80)}: FAIL ({len(column['failures'])} required cases)")
        for group in column["diagnoses"][:SHOWN_DIAGNOSES]:
            if group["id"]:
                name = f"`{group['id']}`" if "`" not in group["id"] else md(group["id"])
                if group.get("closest"):
                    name = f"closest: {name} (not the cause: it {md(group['closest'], 200)})"
                what = group["summary"] or group["first"]["message"]
            else:
                name, what = group["first"]["status"], f"{group['label']}: {group['first']['message']}"
            shared = f" ({md(group['pattern'], 160)})" if group["pattern"] else ""
            lines.append(f"- {name}: {md(what, 200)}{shared} — {group['count']} "
                         f"case(s), smallest {_case_ref(group['first']['case'], group['first']['anchor'], html_name)}")
        if len(column["diagnoses"]) > SHOWN_DIAGNOSES:
            lines.append(f"- ... and {len(column['diagnoses']) - SHOWN_DIAGNOSES} more diagnoses")
        first = column["diagnoses"][0] if column["diagnoses"] else None
        if first and first["reproduce"]:
            lines.append("")
            lines.append(f"Reproduce {md(first['first']['case'], 120)} (the smallest case of the largest group):")
            lines.append(code_block(first["reproduce"]))
        lines.append("")
    for stats in model["stats"]:
        c = stats["counts"]
        lines.append(f"- statistics on {md(stats['title'], 100)} ({md(stats['tier'], 20)}, {stats['mib_tested']} MiB): "
                     f"**{stats['verdict']}** ({c[STATS_PASS]} pass, {c[STATS_SUSPECT]} suspect, {c[STATS_FAIL]} fail)")
        bad = [r for r in stats["rows"] if r["verdict"] in STATS_BAD][:SHOWN_FAILURES]
        for row in bad:
            lines.append(f"  - {row['verdict']} {md(row['test'], 80)} "
                         f"({md(row['stream'], 40)}, {md(row['level'], 30)}): p = {md(row['p'], 40)}")
    if model["stats"]:
        lines.append("")
    if model["agreement"].get("shown"):
        a = model["agreement"]
        lines.append(f"Cross-backend agreement: {a['agree']} of {a['compared']} cases identical on every backend"
                     + (f"; {len(a['differ'])} differ." if a["differ"] else "."))
        lines.append("")
    for run in model["runs"][:4]:
        if run["reproduce"]:
            lines.append(f"Rerun {md(run['title'], 100)}:")
            lines.append(code_block(run["reproduce"]))
    if html_name:
        lines.append("")
        lines.append(f"Full report: {md(html_name, 200)}")
    return "\n".join(lines).rstrip() + "\n"


def write(model: dict, path, html_name: str | None = None) -> None:
    atomic_write(Path(path), render(model, html_name))
