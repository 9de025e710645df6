"""The published conformance table: run the full profile on real implementations, write the table.

    python scripts/conformance_table.py [--backend SPEC ...] [--results DIR] [--update-docs] [--check] [--jobs N]

Runs `rngcheck run --profile full` for each backend (default: DEFAULT below, every library,
OpenCL and both real DirectML builds; an unavailable one is left out unless --require names it
or --require-all is given; --jobs of them at once, default one per core, at most 4), keeps each result document in
--results (default results/table), and prints a markdown table: implementation, version,
device, and per category the passed count or the diagnoses of the failures.
--update-docs (or its old name --update-readme) replaces each table between its markers in the docs
page that holds it (PAGES: docs/conformance.md, docs/generators.md; docs/NAME.md for --operator NAME);
--html FILE writes the HTML report of all the documents (every backend side by side, its diagnoses,
the agreement).
--check exits 1 when a backend fails other than as docs/expected-differences.json says (the
words categories) or docs/expected-differences-numbers.json (the numbers categories).

The numbers table has a generator column: the backend's describe() "generator" (ONNX Runtime's CPU
kernels: "not Philox: minstd_rand0"), else Philox4x32-10.

The generator table (the ``generator`` category: every Random123 known answer of every generator,
rngcheck.conformance.known_answers): one row per backend that computes any generator, one column per
generator (rngcheck.generators.NAMES), each cell the known-answer lines passed and those not applicable
(a round count the library does not offer). --case PATTERN (repeatable) runs only those cases
(``--case generator`` for the generator table alone: scripts/generator_table.sh); --update-docs
replaces it between its own markers in docs/generators.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # rngcheck from this checkout

from rngcheck.generators import NAMES as GENERATOR_NAMES  # noqa: E402
from rngcheck.results.statuses import BROKEN, NOT_APPLICABLE, PASSED, RAN  # noqa: E402
from rngcheck.results.tables import table as results_table  # noqa: E402
from rngcheck.results.text import printable  # noqa: E402
from rngcheck.results.verdicts import run_verdict, said  # noqa: E402
from rngcheck.stats.tiers import cores  # noqa: E402

DEFAULT = ["numpy", "opencl", "randomgen", "tensorflow", "tensorflow:state=spec", "jax", "jax:state_words=3",
           "mkl", "random123", "random123:mode=engine", "curand", "pyopencl", "pyopencl:mode=generator",
           "torch", "torch:state=spec", "onedpl", "openvino", "onnxruntime", "triton", "directml:lib=0.2.5",
           "directml:lib=0.2.0",
           "exec:python3 -m rngcheck.backends.directml.wine"]     # DirectML.dll 1.15.4 under Wine
MOST_JOBS = 4   # the backends are multithreaded themselves, and their memory peaks add up
CATEGORIES = ["kat", "vectors", "mapping", "counter", "key", "layout", "state", "validation", "property", "scale"]
# The numbers layer (rngcheck.numbers): a second table, of the backends that draw numbers at all.
NUMBER_CATEGORIES = ["uniform", "normal", "truncated-normal", "integers", "bits", "seed", "guide"]
BEGIN, END = "<!-- conformance-table:begin -->", "<!-- conformance-table:end -->"
NUMBERS_BEGIN, NUMBERS_END = "<!-- numbers-table:begin -->", "<!-- numbers-table:end -->"
GENERATORS_BEGIN, GENERATORS_END = "<!-- generator-table:begin -->", "<!-- generator-table:end -->"
# The docs page (mkdocs.yml's site) that holds each table between its markers; --update-docs writes there.
PAGES = {BEGIN: ROOT / "docs" / "conformance.md", NUMBERS_BEGIN: ROOT / "docs" / "conformance.md",
         GENERATORS_BEGIN: ROOT / "docs" / "generators.md"}


def operator_page(operator: str) -> Path:
    """The docs page of another operator's table (between <!-- NAME-table:begin/end -->)."""
    return ROOT / "docs" / f"{operator}.md"


def replace_table(page: Path, begin: str, finish: str, body: str) -> None:
    """Write ``body`` between the markers ``begin`` and ``finish`` of ``page`` (each there once)."""
    content = page.read_text()
    if content.count(begin) != 1 or content.count(finish) != 1:
        raise SystemExit(f"conformance_table: {page} must hold {begin} and {finish} once each")
    start, end = content.index(begin) + len(begin), content.index(finish)
    page.write_text(content[:start] + "\n" + body + "\n" + content[end:])


def run_backend(spec: str, results: Path, categories=(), excludes=()) -> tuple[dict | None, str | None]:
    """(the backend's result document, None), or (None, why it could not run): `rngcheck run` exited 2
    (unavailable, a bad spec), or it ended without writing its document (a crash, a kill)."""
    out = results / (spec.replace(":", "_").replace("=", "-").replace("/", "_").replace(" ", "_") + ".json")
    out.unlink(missing_ok=True)          # an earlier run's document is never read as this one's
    command = [sys.executable, "-m", "rngcheck", "run", "--backend", spec, "--profile", "full",
               "--json", str(out), "--quiet"] + [f"--case={category}" for category in categories] + list(excludes)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode == 2:
        return None, f"{spec}: not run: {done.stderr.strip()}"
    try:
        return json.loads(out.read_text()), None
    except (OSError, ValueError):
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        return None, f"{spec}: rngcheck run exited {done.returncode} without a readable {out.name}: {last}"


def run_backends(args, specs, results: Path, categories=(), excludes=()) -> list[dict] | None:
    """The result documents of the backends that ran; None (after saying so) when one that --require or
    --require-all names could not run. Each backend runs in a process of its own, --jobs of them at once
    (most of a run is one thread: imports, compiling a case's kernel, the checks); the documents and
    what is said about them come in the table's order. A spec given twice runs once."""
    specs = list(dict.fromkeys(specs))
    pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        runs = [pool.submit(run_backend, spec, results, categories, excludes) for spec in specs]
        finished = [run.result() for run in runs]
    finally:                              # an error or Ctrl-C here starts none of the backends still queued
        pool.shutdown(wait=True, cancel_futures=True)
    documents = []
    for spec, (document, why) in zip(specs, finished):
        if document is None:
            print(why, file=sys.stderr)
            if args.require_all or spec in args.require:
                print(f"{spec} is required here but could not run", file=sys.stderr)
                return None
            continue
        documents.append(document)
    return documents


def cell(rows, category: str, divergences=frozenset()) -> str:
    """One backend's cell for one category, from its rows of the results table. A failure whose
    diagnosis is made of ``divergences`` (an operator's implementation-defined variants) is a divergence."""
    mine = rows[rows["category"] == category]
    if not len(mine):
        return "–"
    broken = mine[mine["required"] & mine["status"].isin(BROKEN)]
    absent = int((mine["status"] == NOT_APPLICABLE).sum())
    tail = f", {absent} n/a" if absent else ""
    if not len(broken):
        passed = int((mine["status"] == PASSED).sum())
        return f"{absent} n/a" if absent and not passed else f"{passed} pass{tail}"
    names = Counter(d or s for d, s in zip(broken["diagnosis"], broken["status"]))
    diverging = {name for name in names if divergences and set(str(name).split("+")) <= set(divergences)}
    parts = []
    for label, chosen in (("fail", [n for n in names if n not in diverging]), ("diverge", sorted(diverging))):
        if chosen:
            parts.append(f"{sum(names[n] for n in chosen)} {label}: "
                         + ", ".join(f"{name}" + (f" ×{names[name]}" if names[name] > 1 else "") for name in chosen))
    return "; ".join(parts) + tail


def generator_of(document: dict) -> str:
    """The word generator a backend's numbers come from (its describe()'s "generator")."""
    return document["backends"][0].get("describe", {}).get("generator") or "Philox4x32-10"


def table(documents: list[dict], categories=CATEGORIES, divergences=frozenset()) -> str:
    """The markdown table, computed from the results table (rngcheck.results.tables) of the documents:
    the words categories, or (``categories=NUMBER_CATEGORIES``) the numbers layer's, where a backend
    that draws no numbers at all has no row, and a generator column says which generator it reads."""
    data = results_table(documents)
    numbers_table = list(categories) == NUMBER_CATEGORIES
    generators = {document["backends"][0]["spec"]: generator_of(document) for document in documents}
    header = ["implementation", "version", "device"] + (["generator"] if numbers_table else []) \
        + list(categories) + ["verdict"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for _, rows in data.groupby("run", sort=False):
        rows = rows[rows["backend"] == rows["backend"].iloc[0]]   # each document: one backend
        rows = rows[rows["category"].isin(categories)]
        if not len(rows) or (rows["status"] == NOT_APPLICABLE).all() and not (
                numbers_table and (~rows["message"].str.contains("the backend draws no")).any()):
            continue   # (a numbers row stays when the backend says why its numbers are not applicable)
        first = rows.iloc[0]
        row = [f"`{first['spec']}`", first["version"], first["device"]]
        if numbers_table:
            row.append(generators.get(first["spec"], "Philox4x32-10"))
        row += [cell(rows, category, divergences) for category in categories]
        row.append(row_verdict(rows))
        lines.append(table_row(row))
    return "\n".join(lines)


def row_verdict(rows) -> str:
    """A backend's verdict column (results.verdicts.run_verdict, as the terminal says it): FAIL when a
    required case is broken, NOTHING RAN when no case of the table applies to it."""
    return said(run_verdict(failed=int((rows["required"] & rows["status"].isin(BROKEN)).sum()),
                            ran=int(rows["status"].isin(RAN).sum())))


def table_row(cells) -> str:
    """One markdown row: a backend's text (its version, a diagnosis or generator cell) on one line with
    control characters shown (rngcheck.results.text.printable), and no "|" to split a cell."""
    return "| " + " | ".join(printable(c).replace("|", "/") for c in cells) + " |"


def generator_table(documents: list[dict]) -> str:
    """The markdown generator table (see the module doc), from the same results table: a backend
    whose every generator case is "computes no ... blocks" has no row."""
    data = results_table(documents)
    header = ["implementation", "version"] + list(GENERATOR_NAMES) + ["verdict"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for _, rows in data.groupby("run", sort=False):
        rows = rows[(rows["backend"] == rows["backend"].iloc[0]) & (rows["category"] == "generator")].copy()
        if not len(rows) or rows["message"].str.contains("computes no .* blocks").all():
            continue
        rows["category"] = rows["case"].str.split("/").str[1].str.split("-").str[0]   # generator/<name>-R-...
        first = rows.iloc[0]
        row = [f"`{first['spec']}`", first["version"]]
        for name in GENERATOR_NAMES:   # "–": a generator the backend does not compute at all
            mine = rows[rows["category"] == name]
            row.append("–" if mine["message"].str.contains("computes no .* blocks").all() else cell(rows, name))
        row.append(row_verdict(rows))
        lines.append(table_row(row))
    return "\n".join(lines)


def unexpected(document: dict, expected: dict, expected_numbers: dict | None = None) -> list[str]:
    """Required failures not listed for the backend: a words case against ``expected``, a numbers
    case (NUMBER_CATEGORIES) against ``expected_numbers``."""
    spec = document["backends"][0]["spec"]
    allowed = set(expected.get(spec, {}).get("diagnoses", []))
    allowed_numbers = set((expected_numbers or {}).get(spec, {}).get("diagnoses", {}))
    # one case's own allowance (its diagnosis, and where it happens): a difference that depends on the
    # machine, allowed for that case only
    allowed_cases = {case: entry["diagnosis"]
                     for case, entry in (expected_numbers or {}).get(spec, {}).get("cases", {}).items()}
    category = {c["id"]: c["category"] for c in document.get("cases", [])}
    problems = []
    for r in document["results"]:
        if r["required"] and r["status"] in BROKEN:
            numbers_case = category.get(r["case"]) in NUMBER_CATEGORIES
            diagnosis = r["diagnosis"]["id"] if r["diagnosis"] else r["status"]
            if diagnosis not in (allowed_numbers if numbers_case else allowed) and \
                    not (numbers_case and allowed_cases.get(r["case"]) == diagnosis):
                problems.append(f"{spec}: {r['case']}: {diagnosis}: {r['message'][:120]}")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append")
    parser.add_argument("--case", action="append", default=[], metavar="PATTERN",
                        help="only these cases (rngcheck run --case; e.g. generator)")
    parser.add_argument("--results", type=Path, default=ROOT / "results" / "table")
    parser.add_argument("--update-docs", "--update-readme", dest="update_docs", action="store_true",
                        help="write the tables into their docs pages (docs/conformance.md, docs/generators.md, "
                             "docs/NAME.md for --operator NAME)")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--html", type=Path, help="also write the HTML report of every backend's document")
    parser.add_argument("--require", action="append", default=[], help="a backend that must be available")
    parser.add_argument("--require-all", action="store_true", help="every backend of the table must be available")
    parser.add_argument("--jobs", type=int, default=None,
                        help="backends run at once, each in its own process (default: one per core, at most "
                             f"{MOST_JOBS})")
    parser.add_argument("--operator", help="the table of another operator (rngcheck.conformance.axes), "
                                           "e.g. stablehlo: its categories, its backends, "
                                           "docs/expected-differences-NAME.json")
    args = parser.parse_args(argv)
    args.jobs = args.jobs or min(cores(), MOST_JOBS)
    if args.operator:
        return operator_main(args)
    args.results.mkdir(parents=True, exist_ok=True)
    documents = run_backends(args, args.backend or DEFAULT, args.results, args.case, MAIN_EXCLUDES)
    if documents is None:
        return 1
    text = table(documents)
    numbers_text = table(documents, NUMBER_CATEGORIES)
    generators_text = generator_table(documents)
    print("\n\n".join(t for t in (text, numbers_text, generators_text) if t.count("\n") > 1))  # tables with rows
    expected = json.loads((ROOT / "docs" / "expected-differences.json").read_text())["backends"]
    expected_numbers = json.loads((ROOT / "docs" / "expected-differences-numbers.json").read_text())["backends"]
    if args.update_docs:
        for begin, finish, body in ((BEGIN, END, text), (NUMBERS_BEGIN, NUMBERS_END, numbers_text),
                                    (GENERATORS_BEGIN, GENERATORS_END, generators_text)):
            if body.count("\n") > 1:      # a table with rows: a --case run leaves the other tables as they are
                replace_table(PAGES[begin], begin, finish, body)
    if args.html:
        from rngcheck.reports import html
        html.write(documents, args.html)
        print(f"wrote {args.html}", file=sys.stderr)
    if args.check:
        problems = [p for d in documents for p in unexpected(d, expected, expected_numbers)]
        for p in problems:
            print("UNEXPECTED " + p, file=sys.stderr)
        return 1 if problems else 0
    return 0


# ---------------------------------------------------------------------------------- another operator
# ``--operator NAME``: the same table for another operator, its columns the operator's categories
# (rngcheck.conformance.axes), its rows OPERATOR_BACKENDS[NAME] (every one installed by setup.sh),
# checked against docs/expected-differences-NAME.json, written between <!-- NAME-table:begin/end --> in docs/NAME.md.
OPERATOR_BACKENDS = {"stablehlo": ["numpy", "xla", "iree"],
                     # The property axis (issue 43): the libraries that draw from a seed they can be given, the
                     # reference first. cuRAND's host generator passes too but takes 32 s for it; JAX's and torch's
                     # backends are n/a (no seed maps onto their keys). Cost: docs/properties.md.
                     "properties": ["numpy", "tensorflow", "openvino", "onnxruntime", "tinygrad", "keras:backend=torch",
                                    "keras:backend=jax", "keras:backend=tensorflow", "keras:backend=numpy",
                                    "exec:node rngcheck/backends/tfjs/tfjs_exec.js", "triton",
                                    "numba", "mlx"]}
# The main tables leave the property cases to their own table (--operator properties).
MAIN_EXCLUDES = ["-k", "not properties/"]


def operator_main(args) -> int:
    from rngcheck.conformance.axes import AXES

    operator = AXES.find(args.operator)
    if operator is None or args.operator not in OPERATOR_BACKENDS:
        print(f"conformance_table: no operator table {args.operator!r} (known: {', '.join(OPERATOR_BACKENDS)})",
              file=sys.stderr)
        return 2
    results = args.results / args.operator
    results.mkdir(parents=True, exist_ok=True)
    documents = run_backends(args, args.backend or OPERATOR_BACKENDS[args.operator], results, operator.categories)
    if documents is None:
        return 1
    text = table(documents, operator.categories, frozenset(operator.divergences))
    print(f"{operator.title}\n\n{text}")
    expected = json.loads((ROOT / "docs" / f"expected-differences-{args.operator}.json").read_text())["backends"]
    if args.update_docs:
        replace_table(operator_page(args.operator), f"<!-- {args.operator}-table:begin -->",
                      f"<!-- {args.operator}-table:end -->", text)
    if args.html:
        from rngcheck.reports import html
        html.write(documents, args.html)
        print(f"wrote {args.html}", file=sys.stderr)
    if args.check:
        problems = [p for d in documents for p in unexpected(d, expected)]
        for p in problems:
            print("UNEXPECTED " + p, file=sys.stderr)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
