"""The GPU table of docs/gpu.md and its summary in the README (issue 41), generated from the kept GPU
measurements only.

    python scripts/gpu_table.py                    # print the table (Markdown)
    python scripts/gpu_table.py --write            # replace the blocks between the gpu-table markers of
                                                   # docs/gpu.md (the table) and README.md (a line per run)
    python scripts/gpu_table.py --check            # exit 1 when either block is not what would be written
    python scripts/gpu_table.py --include-dry-run  # preview: dry runs too, as "CPU stand-in (dry run)"

Each folder ``docs/measurements/<YYYY-MM-DD>-<gpu>/`` holds the small files of one run of
``bash scripts/gpu-check.sh`` (docs/gpu.md, "Keeping a run"): ``summary.json`` and beside it ``found.json``,
the ``run-<name>.json`` result documents and ``torch-grid.json``. One row per GPU code path of each kept run:
the device (GPU name, SM count, driver), the date (the folder's name), the path (the backend spec, or the
PyTorch grid step), the outcome (conformant; the diagnoses of the failing cases with their counts; or
"failed to run" with the step's status) and the line that reproduces it. A summary whose ``dry_run`` is true
or whose ``measured_on_gpu`` is false is not a GPU measurement and never gets a row (``--include-dry-run``
shows it, for tests and previews; --write and --check refuse that option). The README's block holds one line
per kept run (device, date, how many paths were conformant, the grid model's outcome) and points to the table,
so the front page stays short however many runs are kept. With no kept measurement both blocks are one sentence
saying so. Every text taken from a document is escaped for Markdown (a backend wrote it).

A malformed or missing file is one line on stderr naming the file, exit 2.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # rngcheck from this checkout

from rngcheck.errors import RngcheckError  # noqa: E402
from rngcheck.results import document as result_document  # noqa: E402
from rngcheck.results.statuses import BROKEN, PASSED, effective  # noqa: E402
from rngcheck.results.text import printable  # noqa: E402

MEASUREMENTS = ROOT / "docs" / "measurements"
README = ROOT / "README.md"
TABLE_PAGE = ROOT / "docs" / "gpu.md"
TABLE_LINK = "docs/gpu.md#measured-on-gpus"
START, END = "<!-- gpu-table:start -->", "<!-- gpu-table:end -->"
SCHEMA = "rngcheck-gpu-check/1"
FOLDER = re.compile(r"^(\d{4}-\d{2}-\d{2})-[a-z0-9][a-z0-9.-]*$")
LIMIT_BYTES = 3 << 20            # a kept run, every file together (docs/gpu.md, "Keeping a run")
RAN_STATUSES = ("ok", "findings")   # a step that wrote its document (scripts/gpu_check.py, Check.step)
CHECK_COMMAND = "bash scripts/gpu-check.sh"
DRY_DEVICE = "CPU stand-in (dry run)"
NOTHING_KEPT = ("No GPU measurement is kept yet, so nothing is claimed for any GPU: run `bash scripts/gpu-check.sh` "
                "on a GPU machine and keep its documents as [docs/gpu.md](docs/gpu.md#keeping-a-run) says.")
NOTHING_KEPT_HERE = NOTHING_KEPT.replace("[docs/gpu.md](docs/gpu.md#keeping-a-run) says",
                                         "[Keeping a run](#keeping-a-run) says")  # docs/gpu.md's own wording
HEADER = ("| Device | Date | Path | Outcome | Reproduce |", "|---|---|---|---|---|")
_MARKDOWN = {c: "\\" + c for c in "\\`|*[]"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


class TableError(Exception):
    """A kept measurement that cannot be read: one line naming the file and what is wrong."""


@dataclass(frozen=True)
class Row:
    device: str
    date: str
    path: str
    outcome: str
    reproduce: str
    kind: str = ""  # conformant | differences | not run | grid matched | grid differed

    def markdown(self) -> str:
        cells = (self.device, self.date, self.path, self.outcome, self.reproduce)
        return "| " + " | ".join(md(c) for c in cells) + " |"


@dataclass(frozen=True)
class Measurement:
    folder: Path
    date: str
    dry_run: bool
    device: str
    rows: tuple[Row, ...]


def md(text: object) -> str:
    """Document text as one Markdown table cell: control characters and newlines shown as escapes
    (rngcheck.results.text.printable), then the characters that would split the cell, start code, a link,
    emphasis or HTML escaped."""
    return "".join(_MARKDOWN.get(c, c) for c in printable(text))


def read_object(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TableError(f"{path}: missing") from None
    except (OSError, UnicodeDecodeError) as error:
        raise TableError(f"{path}: unreadable: {printable(error)}") from None
    except ValueError as error:
        raise TableError(f"{path}: not JSON: {printable(error)}") from None
    if not isinstance(value, dict):
        raise TableError(f"{path}: not a JSON object")
    return value


def field(document: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    value = document.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TableError(f"{path}: {key!r} is missing or not {getattr(kind, '__name__', 'the right type')}")
    return value


def device_of(found: dict[str, Any], dry_run: bool) -> str:
    """GPU name, SM count and driver (found.json: torch's device properties and nvidia-smi's csv line)."""
    if dry_run:
        return DRY_DEVICE
    gpu = found.get("gpu") if isinstance(found.get("gpu"), dict) else {}
    lines = str(found.get("nvidia-smi", "")).strip().splitlines()
    smi = [part.strip() for part in lines[0].split(",")] if lines else []   # name, driver, memory, capability
    name = gpu.get("name") or (smi[0] if len(smi) >= 4 else "unknown GPU")
    driver = smi[1] if len(smi) >= 4 else "?"
    return f"{name}, {gpu.get('sms', '?')} SMs, driver {driver}"


def diagnoses(results: list[Any], spec: str) -> tuple[Counter[str], int]:
    """The failing required cases of one backend by diagnosis (or status), and the passed count."""
    broken: Counter[str] = Counter()
    passed = 0
    for result in results:
        if not isinstance(result, dict) or result.get("backend") != spec:
            continue
        status = effective(result.get("status"), result.get("required"))
        if status == PASSED:
            passed += 1
        elif status in BROKEN:
            diagnosis = result.get("diagnosis")
            name = diagnosis.get("id") if isinstance(diagnosis, dict) and diagnosis.get("id") else status
            broken[str(name)] += 1
    return broken, passed


def run_row(step: dict[str, Any], folder: Path, base: Row) -> Row:
    """A backend's row from its step and its result document run-<name>.json."""
    match = re.fullmatch(r"run (\S+) \((.*)\)", str(step.get("step")), re.S)
    if not match:
        raise TableError(f"{folder / 'summary.json'}: step {printable(step.get('step'))!r} is not 'run NAME (SPEC)'")
    name, spec = match.groups()
    status = str(step.get("status"))
    if status not in RAN_STATUSES:
        rc = step.get("rc")
        return Row(base.device, base.date, spec, f"failed to run: {status}" + (f" (rc {rc})" if rc is not None
                                                                                 else ""), CHECK_COMMAND, "not run")
    path = folder / f"run-{name}.json"
    if not path.is_file():
        raise TableError(f"{path}: missing (summary.json's step says {status})")
    try:
        document = result_document.read(path)
    except RngcheckError as error:
        raise TableError(printable(error)) from None
    backends = document.get("backends")
    backend = backends[0] if isinstance(backends, list) and backends and isinstance(backends[0], dict) else None
    if backend is None or not isinstance(backend.get("spec"), str) or not isinstance(document.get("results"), list):
        raise TableError(f"{path}: no backend with a spec, or no results")
    spec = backend["spec"]
    broken, passed = diagnoses(document["results"], spec)
    verdict = str(backend.get("verdict"))
    kind = "differences"
    if broken:
        outcome = "; ".join(f"{n} ×{count}" if count > 1 else n for n, count in sorted(broken.items()))
        outcome = f"{sum(broken.values())} failing: {outcome} ({passed} passed)"
    elif verdict == "pass" and passed:
        outcome, kind = f"conformant ({passed} passed)", "conformant"
    else:
        outcome = f"not conformant: verdict {verdict} ({passed} passed)"
    command = ["rngcheck", "run", "--backend", spec, "--profile", str(document.get("profile", "quick"))]
    if isinstance(document.get("keyword"), str) and document["keyword"]:
        command += ["-k", document["keyword"]]
    command += ["--seed", str(document.get("seed", 0))]
    return Row(base.device, base.date, spec, outcome, shlex.join(command), kind)


def grid_row(step: dict[str, Any], folder: Path, base: Row) -> Row:
    """The PyTorch grid step's row: rngcheck.numbers.pytorch_cuda against torch.rand (torch-grid.json)."""
    path_label = "PyTorch CUDA grid: torch.rand against rngcheck.numbers.pytorch_cuda"
    status = str(step.get("status"))
    if status not in RAN_STATUSES:
        return Row(base.device, base.date, path_label, f"failed to run: {status}", CHECK_COMMAND, "not run")
    path = folder / "torch-grid.json"
    grid = read_object(path)
    rows = field(grid, "rows", list, path)
    if not rows or not all(isinstance(r, dict) and isinstance(r.get("n"), int) for r in rows):
        raise TableError(f"{path}: 'rows' is empty or a row has no size n")
    rules = [k for k, v in rows[0].items() if isinstance(v, dict) and "equal" in v]
    if not rules:
        raise TableError(f"{path}: no grid rule in its rows")
    sizes = sorted({r["n"] for r in rows})
    differing: dict[str, list[int]] = {}
    for rule in rules:
        bad = set()
        for r in rows:
            entry = r.get(rule)
            if not isinstance(entry, dict) or entry.get("equal") != r["n"] \
                    or ("offset_after" in r and r["offset_after"] != entry.get("next_offset")):
                bad.add(r["n"])
        differing[rule] = sorted(bad)
    matched = [rule for rule in rules if not differing[rule]]
    if matched:
        outcome = f"model matched torch.rand at {len(sizes)} sizes (grid rule {', '.join(matched)})"
    else:
        outcome = "model differed from torch.rand: " + "; ".join(
            f"grid rule {rule} at n = {', '.join(str(n) for n in differing[rule])}" for rule in rules)
    if grid.get("complete") is not True:
        outcome += f" (incomplete: {len(rows)} rows)"
    return Row(base.device, base.date, path_label, outcome, CHECK_COMMAND,
               "grid matched" if matched else "grid differed")


def measurement(folder: Path) -> Measurement:
    """One kept run: its summary, found.json and the documents beside them, as rows."""
    date = FOLDER.match(folder.name)
    if not date:
        raise TableError(f"{folder}: the folder's name is not <YYYY-MM-DD>-<gpu> (lower case, digits, '-', '.')")
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    if size > LIMIT_BYTES:
        raise TableError(f"{folder}: {size / (1 << 20):.1f} MiB kept; at most {LIMIT_BYTES >> 20} MiB "
                         f"(docs/gpu.md, 'Keeping a run')")
    summary_path = folder / "summary.json"
    summary = read_object(summary_path)
    if summary.get("schema") != SCHEMA:
        raise TableError(f"{summary_path}: 'schema' is {printable(summary.get('schema'))!r}, not {SCHEMA!r}")
    dry = field(summary, "dry_run", bool, summary_path) or not field(summary, "measured_on_gpu", bool, summary_path)
    steps = field(summary, "steps", list, summary_path)
    if not all(isinstance(s, dict) and isinstance(s.get("step"), str) for s in steps):
        raise TableError(f"{summary_path}: a step is not an object with a 'step' name")
    found_path = folder / "found.json"
    found = read_object(found_path) if found_path.exists() else field(summary, "found", dict, summary_path)
    base = Row(device_of(found, dry), date.group(1), "", "", "")
    rows = []
    for step in steps:
        if step["step"] == "torch-grid":
            rows.append(grid_row(step, folder, base))
        elif step["step"].startswith("run "):
            rows.append(run_row(step, folder, base))
    return Measurement(folder, date.group(1), dry, base.device, tuple(rows))


def measurements(root: Path) -> list[Measurement]:
    folders = sorted(p.parent for p in root.glob("*/summary.json")) if root.is_dir() else []
    return [measurement(folder) for folder in folders]


def kept(root: Path, include_dry_run: bool = False) -> list[Measurement]:
    """The kept runs in date order (dry runs only when asked)."""
    found = [m for m in measurements(root) if include_dry_run or not m.dry_run]
    return sorted(found, key=lambda m: (m.date, m.folder.name))


def table(root: Path, include_dry_run: bool = False) -> str:
    """docs/gpu.md's block: the table of the kept GPU measurements, or the sentence that there is none."""
    rows = [row for m in kept(root, include_dry_run) for row in m.rows]
    if not rows:
        return NOTHING_KEPT_HERE
    return "\n".join([*HEADER, *(row.markdown() for row in rows)])


def summary(root: Path, include_dry_run: bool = False) -> str:
    """The README's block: one line per kept run, or the sentence that there is none."""
    lines = []
    for m in kept(root, include_dry_run):
        paths = [r for r in m.rows if not r.kind.startswith("grid")]
        counts = Counter(r.kind for r in paths)
        grid = [r.kind for r in m.rows if r.kind.startswith("grid")]
        parts = [f"{counts['conformant']} of {len(paths)} GPU paths conformant"]
        if counts["differences"]:
            parts.append(f"{counts['differences']} with named differences")
        if counts["not run"]:
            parts.append(f"{counts['not run']} did not run")
        parts.append("PyTorch grid model " + ("matched torch.rand" if grid == ["grid matched"] else
                                              "differed from torch.rand" if grid == ["grid differed"] else "not run"))
        lines.append(f"- {md(m.device)}, {m.date}: " + "; ".join(parts) + f" ([table]({TABLE_LINK}))")
    return "\n".join(lines) if lines else NOTHING_KEPT


def block(readme: Path) -> tuple[str, str, str]:
    """A page's text before the block (through the start marker), the block, and the rest (from the end marker)."""
    text = readme.read_text(encoding="utf-8")
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise TableError(f"{readme}: needs one {START} and after it one {END}")
    head, rest = text.split(START, 1)
    body, tail = rest.split(END, 1)
    return head + START, body, END + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="replace the blocks in docs/gpu.md and README.md")
    mode.add_argument("--check", action="store_true", help="exit 1 when a block is not the generated one")
    parser.add_argument("--include-dry-run", action="store_true", help="dry runs too (tests, previews; not --write)")
    parser.add_argument("--measurements", type=Path, default=MEASUREMENTS, help=argparse.SUPPRESS)
    parser.add_argument("--readme", type=Path, default=README, help=argparse.SUPPRESS)
    parser.add_argument("--table-page", type=Path, default=TABLE_PAGE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.include_dry_run and (args.write or args.check):
        parser.error("--include-dry-run is for previews: a dry run never goes into the README or docs/gpu.md")
    try:
        generated = table(args.measurements, args.include_dry_run)
        if not (args.write or args.check):
            print(generated)
            return 0
        targets = ((args.table_page, generated), (args.readme, summary(args.measurements)))
        blocks = [(path, block(path), f"\n{wanted}\n") for path, wanted in targets]
        if args.check:
            stale = [str(path) for path, (_, body, _), wanted in blocks if body != wanted]
            if stale:
                print(f"gpu_table: the GPU block of {' and '.join(stale)} differs from docs/measurements/: run "
                      f"python scripts/gpu_table.py --write", file=sys.stderr)
                return 1
            return 0
        for path, (head, _, tail), wanted in blocks:
            path.write_text(head + wanted + tail, encoding="utf-8")
    except TableError as error:
        print(f"gpu_table: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"gpu_table: {printable(error)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
