"""The result document: the only thing reports read. JSON, versioned.

Schema "rngcheck-result", version 2 (fields added later are optional; a reader refuses a
newer major version and reads every older one):
  schema, schema_version, rngcheck_version, created (UTC ISO 8601), command (argv),
  profile, seed, select [the run's --case patterns] (version 2), keyword [the run's -k expression,
  or null] (added in version 2), reproduce (a command line that reruns the same cases),
  environment {python, platform, machine, cpu (the processor's model name, added later: optional),
               packages{name: version}},
  errata [text], complete (false when interrupted), deadline_passed [seconds] and maxfail_reached
  [N] (only when the run's --deadline or --maxfail left cases not-run),
  backends [{name, spec, validates, describe{str: str}, summary{status: count}, verdict}],
  cases [{id, category, description, rule, source, procedure, note, inputs{...}}]: the inputs as the
        case's axis records them (version 1 gave every case the operator's description fields),
  results [{backend, case, status, required, seconds, message, diagnosis{id, summary} | null,
            mismatches [{index, coordinates, offset, expected, actual, philox_counter, lane}],
            mismatch_count, observations [text], output_sha256, returned_state,
            reproduce{...} | null (the call that reruns it, as its axis records it), reproduce_command,
            detail}],
  agreement [{case, agree, outputs{backend: sha256}}]   (cases run on two or more backends),
  summary {verdict: "pass" | "fail" | "incomplete", counts{status: n}, required_failed, cases, backends}
  stats [a stats document per backend] (``run --stats``; a FAIL among them fails the run)
Statuses: rngcheck.results.statuses (the one list); verdicts: rngcheck.results.verdicts. The
published JSON Schema of this document: rngcheck/results/schemas/rngcheck-result.schema.json.
"""

from __future__ import annotations

import platform
import shlex
import sys
from collections.abc import Hashable, Iterable
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import RngcheckError
from ..jsonfile import read_json, write_json
from . import statuses
from .records import CaseRecord, ResultRecord, Verdict
from .statuses import BROKEN, STATUSES  # noqa: F401  (re-exported for readers of documents)
from .verdicts import run_verdict

SCHEMA = "rngcheck-result"
SCHEMA_VERSION = 2
PACKAGES = ("numpy", "scipy", "hypothesis", "pytest", "pyopencl", "randomgen", "tensorflow", "jax", "Jinja2")


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def cpu_name() -> str:
    """The processor's model name as the OS gives it (Linux: /proc/cpuinfo; elsewhere platform.processor()),
    or "" where it says none: a conformance statement's CPU."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Processor", "cpu model"):
                    return value.strip()
    except OSError:
        pass
    return platform.processor()


def case_entry(case: Any) -> dict[str, Any]:  # a rngcheck.conformance.case.Case
    return CaseRecord.of(case).to_json()


def reproduce_command(profile: str, seed: int, command: list[str]) -> str:
    """The command line that reruns the same cases with the same random choices."""
    command = list(command) or ["run"]
    if "--profile" not in command and not any(a.startswith("--profile=") for a in command):
        command += ["--profile", profile]
    if "--seed" not in command and not any(a.startswith("--seed=") for a in command):
        command += ["--seed", str(seed)]
    return shlex.join(["rngcheck"] + command)


def new_document(profile: str, seed: int, command: list[str], cases: Iterable[Any],
                 select: Iterable[str] = (), errata: Iterable[str] = (), *,
                 keyword: str | None = None) -> dict[str, Any]:
    """A new result document for ``cases`` (rngcheck.conformance.case.Case); ``errata``: what the
    sources of those cases get wrong, as the axes say it; ``select`` and ``keyword``: the run's
    --case patterns and -k expression, which chose them."""
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "rngcheck_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": list(command), "profile": profile, "seed": seed, "select": list(select),
        "keyword": keyword,
        "reproduce": reproduce_command(profile, seed, command),
        "environment": {"python": sys.version.split()[0], "platform": platform.platform(),
                        "machine": platform.machine(), "cpu": cpu_name(),
                        "packages": package_versions()},
        "errata": list(errata), "complete": True,
        "backends": [], "cases": [case_entry(c) for c in cases], "results": [],
    }


def repro_command(backend_spec: str, arguments: list[str] | None) -> str | None:
    """A ready-to-paste command line that reruns one failing call (its axis gave the arguments)."""
    if not arguments:
        return None
    return shlex.join(["rngcheck", "repro", "--backend", backend_spec, *arguments])


def result_entry(backend_name: str, case: Any, outcome: Verdict, required: bool, seconds: float,
                 backend_spec: str | None = None) -> dict[str, Any]:
    command = repro_command(backend_spec or backend_name, outcome.repro_arguments)
    return ResultRecord.of(outcome, backend=backend_name, case=case.id, required=required,
                           seconds=round(seconds, 6), reproduce_command=command).to_json()


def is_failure(result: dict[str, Any]) -> bool:
    return statuses.is_failure(result["status"], result["required"])


def agreement(outputs: Iterable[tuple[Hashable, Hashable, Hashable]]) -> list[dict[str, Any]]:
    """Cross-backend agreement, the one rule: ``outputs`` are (case, column, output digest) rows;
    a case with a digest in two or more columns agrees when all its digests are equal. Returns
    [{case, agree, outputs{column: digest}}] in first-seen case order (rows without a digest
    take no part). The document's ``agreement`` (columns: backends) and the HTML report's
    agreement view (columns: run and backend) both come from here."""
    by_case: dict[Hashable, dict[Hashable, Hashable]] = {}
    for case, column, digest in outputs:
        if digest:
            by_case.setdefault(case, {})[column] = digest
    return [{"case": case, "agree": len(set(digests.values())) == 1, "outputs": digests}
            for case, digests in by_case.items() if len(digests) > 1]


def finish(document: dict[str, Any]) -> dict[str, Any]:
    """Fill in per-backend summaries, cross-backend agreement and the overall summary (its verdict
    folds in the verdicts of ``stats``, when the run has them)."""
    by_backend: dict[str, list[dict[str, Any]]] = {}
    for result in document["results"]:
        by_backend.setdefault(result["backend"], []).append(result)
    for entry in document["backends"]:
        results = by_backend.get(entry["name"], [])
        entry["summary"] = {s: sum(r["status"] == s for r in results) for s in STATUSES}
        entry["verdict"] = run_verdict(failed=sum(is_failure(r) for r in results),
                                       ran=sum(r["status"] in statuses.RAN for r in results))
    if len(document["backends"]) > 1:
        document["agreement"] = agreement((r["case"], r["backend"], r["output_sha256"]) for r in document["results"])
    counts = {s: sum(r["status"] == s for r in document["results"]) for s in STATUSES}
    failed = sum(is_failure(r) for r in document["results"])
    stats = [s["verdict"] for s in document.get("stats", [])]
    verdict = run_verdict(failed=failed, ran=sum(counts[s] for s in statuses.RAN),
                          complete=document.get("complete", True), stats=stats,
                          backends=[entry["verdict"] for entry in document["backends"]])
    document["summary"] = {"verdict": verdict, "counts": counts, "required_failed": failed,
                           "cases": len(document["cases"]), "backends": len(document["backends"])}
    return document


def result_problems(document: dict[str, Any], where: str = "document",
                    expected_cases: Iterable[str] | None = None) -> list[str]:
    """What a result document lacks, counted, not taken from its ``complete``: each of its backends
    needs one result for each case it lists (and each of ``expected_cases``, the cases its profile
    and selection give, when the caller knows them). Returns the shortfalls in words; a duplicate
    result (one backend and case twice) is an error (RngcheckError, one line), not "the last wins"."""
    from .text import printable

    listed = document.get("cases")
    cases = {str(c.get("id")) for c in (listed if isinstance(listed, list) else []) if isinstance(c, dict)}
    cases |= set(expected_cases or ())
    entries = document.get("backends")
    backends = [str(b.get("name")) for b in (entries if isinstance(entries, list) else []) if isinstance(b, dict)]
    found: dict[str, set[str]] = {name: set() for name in backends}
    results = document.get("results")
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, dict):
            continue
        backend, case = str(result.get("backend")), str(result.get("case"))   # (any JSON value: text)
        done = found.setdefault(backend, set())
        if case in done:
            raise RngcheckError(f"{where}: two results for {printable(backend)}: {printable(case)} (a result "
                                f"document holds one result per backend and case): a damaged or edited document")
        done.add(case)
    problems = []
    for backend, done in found.items():
        if len(cases - done):
            problems.append(f"backend {printable(backend)} has {len(cases & done)} of the {len(cases)} results "
                            f"its cases call for")
    if not found and cases:
        problems.append(f"no backend's results for its {len(cases)} cases")
    return problems


def write(document: dict[str, Any], path: str | Path) -> None:
    write_json(path, document)


def load(path: str | Path) -> dict[str, Any]:
    """A result document or a journal (rebuilt, marked incomplete if it has no end), checked."""
    from . import journal

    if journal.is_journal(path):
        document, _ = journal.read(path)
        return finish(document)
    return read(path)


def upgraded(document: dict[str, Any]) -> dict[str, Any]:
    """A result document of an older schema version read as this version says it (in place): version 1's
    "skipped" results that said "not applicable" are n/a (statuses.read_status), and the summaries and
    verdicts are decided again by today's rule. A document of this version is returned as it is."""
    version = document.get("schema_version")
    results = document.get("results")
    if not isinstance(version, int) or version >= SCHEMA_VERSION or not isinstance(results, list):
        return document
    for result in results:
        if isinstance(result, dict):
            result["status"] = statuses.read_status(result.get("status"), result.get("message"))
    if isinstance(document.get("backends"), list) and all(isinstance(r, dict) for r in results):
        try:
            finish(document)
        except (KeyError, TypeError):   # a damaged document: its readers say what is missing
            pass
    return document


def read(path: str | Path) -> dict[str, Any]:
    """A result document, checked (raises RngcheckError with one line), read as this version says it."""
    path = Path(path)
    document = read_json(path, what="result document")
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        raise RngcheckError(f"{path}: not an rngcheck result document")
    version = document.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise RngcheckError(f"{path}: schema_version {version!r} is newer than this rngcheck reads "
                            f"({SCHEMA_VERSION})")
    return upgraded(document)
