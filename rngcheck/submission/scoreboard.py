"""The scoreboard: one static page from many packages (the ONNX backend scoreboard's shape): a row per
implementation and version, a column per must-pass list, each cell a claim linking to its package's page.

1. Every package is verified first (no re-run: the page is built where the backends may not be); a
   refused package gets no cell, only a line under the table with its first refusal.
2. A row is a backend of a package: its name, its version as its document recorded it (DirectML's
   version, else ``version``, else the package's rngcheck environment), the product and vendor.
3. A cell says met, met with waivers (how many), or not met (how many cases do not count of how many),
   and links to the package's report.html (relative to the page: the page and the packages travel
   together). Everything shown that came from a package is escaped.
"""

from __future__ import annotations

import html
import json
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..jsonfile import atomic_write
from ..results.text import printable
from .package import REPORT, STATEMENT, verify


@dataclass
class Board:
    rows: int
    columns: int
    cells: int
    refused: int


def _version(identity: dict[str, Any]) -> str:
    for key in ("DirectML version", "version"):
        if identity.get(key):
            return str(identity[key])
    return ""


def _verified(package: Path) -> Any:
    return verify(package, rerun=0)


def table(packages: list[Path], jobs: int = 1) -> tuple[list[dict[str, Any]], list[str], list[tuple[str, str]]]:
    """(rows, columns, refused): rules 1-2; a row: {backend, version, product, vendor, package,
    claims{column: claim}}."""
    rows: list[dict[str, Any]] = []
    columns: list[str] = []
    refused: list[tuple[str, str]] = []
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            verified = list(pool.map(_verified, packages))
    else:
        verified = [_verified(package) for package in packages]
    for package, checked in zip(packages, verified):
        if checked.refusals:
            refused.append((str(package), checked.refusals[0]))
            continue
        said = json.loads((package / STATEMENT).read_text(encoding="utf-8"))
        identities = {str(i.get("backend")): i.get("identity") or {} for i in said.get("implementations", [])}
        for backend in dict.fromkeys(c.backend for c in checked.claims):
            row = {"backend": backend, "version": _version(identities.get(backend, {})),
                   "product": said.get("product", ""), "vendor": said.get("vendor", ""), "package": package,
                   "claims": {}}
            for claim in checked.claims:
                if claim.backend == backend:
                    column = f"{claim.list_name} {claim.version}"
                    row["claims"][column] = claim
                    if column not in columns:
                        columns.append(column)
            rows.append(row)
    return rows, sorted(columns), refused


def build(packages: list[Path], out: Path, as_json: Path | None = None, jobs: int = 1) -> Board:
    """The page at ``out`` (and its table as JSON at ``as_json``); ``jobs``: packages verified at once."""
    rows, columns, refused = table(packages, jobs)
    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" for c in columns)
    body = []
    for row in rows:
        link = Path(os.path.relpath(row["package"] / REPORT, out.parent)).as_posix()
        cells = []
        for column in columns:
            claim = row["claims"].get(column)
            if claim is None:
                cells.append("<td class=none>not claimed</td>")
                continue
            if claim.met:
                word = "met" + (f" ({len(claim.waived)} waived)" if claim.waived else "")
                css = "waived" if claim.waived else "met"
            else:
                word, css = f"not met: {len(claim.not_counted)} of {claim.cases}", "unmet"
            said = "; ".join(f"{printable(n['case'])} {n['status']}" for n in claim.not_counted[:5])
            hint = f' title="{e(said)}"' if said else ""
            cells.append(f'<td class={css}{hint}><a href="{e(link)}">{e(word)}</a></td>')
        body.append(f"<tr><th>{e(printable(row['backend']))}</th><td>{e(printable(row['version']))}</td>"
                    f"<td>{e(printable(row['product']))}</td><td>{e(printable(row['vendor']))}</td>{''.join(cells)}</tr>")
    notes = "".join(f"<li>{e(printable(p))}: {e(printable(why))}</li>" for p, why in refused)
    page = f"""<!doctype html>
<html lang=en><head><meta charset=utf-8><title>rngcheck scoreboard</title>
<style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.25em .5em;font-size:.9em}}td.met{{background:#d9f2d9}}
td.waived{{background:#fff2cc}}td.unmet{{background:#f8d0d0}}td.none{{color:#888}}</style></head>
<body><h1>rngcheck conformance scoreboard</h1>
<p>{len(rows)} implementations from {len(packages) - len(refused)} verified packages; each cell is a claim against a
must-pass list (<code>rngcheck submission lists</code>), decided again from the package's results, and links to the
package's page. Verify any package yourself: <code>rngcheck submission verify PKG</code>.</p>
<table><tr><th>implementation</th><th>version</th><th>product</th><th>vendor</th>{head}</tr>
{chr(10).join(body)}</table>
{f"<h2>Refused packages</h2><ul>{notes}</ul>" if refused else ""}
</body></html>
"""
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, page)
    if as_json is not None:
        atomic_write(as_json, json.dumps({"columns": columns, "rows": [
            {**{k: str(v) for k, v in row.items() if k != "claims"},
             "claims": {c: claim.to_json() for c, claim in row["claims"].items()}} for row in rows],
            "refused": [{"package": p, "reason": why} for p, why in refused]}, indent=1) + "\n")
    return Board(len(rows), len(columns), sum(len(r["claims"]) for r in rows), len(refused))
