"""Run the cases of a profile on one or more backends and build the result document."""

from __future__ import annotations

import fnmatch
import sys
import time
from dataclasses import dataclass, field

from . import cases as C
from . import check
from .check import ERROR, FAILED, INFO, PASSED, SKIPPED
from ..reports import document as D


@dataclass
class NamedBackend:
    spec: str
    backend: object


@dataclass
class RunOptions:
    profile: str = "quick"
    seed: int = 0
    select: list[str] = field(default_factory=list)   # fnmatch patterns on case ids or categories
    progress: bool = False
    command: list[str] = field(default_factory=list)


def select_cases(options: RunOptions) -> list[C.Case]:
    chosen = C.cases_for(options.profile)
    if options.select:
        chosen = [c for c in chosen
                  if any(fnmatch.fnmatchcase(c.id, p) or c.category == p for p in options.select)]
    return chosen


def is_required(backend, case: C.Case) -> bool:
    if case.procedure == C.ALIAS:
        return False
    if case.procedure == C.REJECT:
        return bool(getattr(backend, "validates", False))
    return True


def safe_describe(backend) -> dict:
    try:
        described = backend.describe() or {}
        return {str(k): str(v) for k, v in dict(described).items()}
    except Exception as error:
        return {"describe-error": check.one_line(error)}


class Progress:
    """A one-line progress bar on stderr, only when it is a terminal."""

    def __init__(self, enabled: bool, total: int):
        self.enabled = enabled and sys.stderr.isatty()
        self.total = total
        self.done = 0

    def step(self, label: str):
        self.done += 1
        if self.enabled:
            width = 30
            filled = width * self.done // max(1, self.total)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {label[:50]:<50}")
            sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


def run(backends: list[NamedBackend], options: RunOptions) -> dict:
    """Every selected case on every backend; returns the result document (see reports.document)."""
    chosen = select_cases(options)
    document = D.new_document(options.profile, options.seed, options.command, chosen)
    progress = Progress(options.progress, len(chosen) * len(backends))
    try:
        for named in backends:
            entry = {"name": getattr(named.backend, "name", named.spec), "spec": named.spec,
                     "validates": bool(getattr(named.backend, "validates", False)),
                     "describe": safe_describe(named.backend)}
            document["backends"].append(entry)
            for case in chosen:
                progress.step(f"{entry['name']}: {case.id}")
                start = time.perf_counter()
                outcome = check.run_case(named.backend, case, strict=options.profile == "strict", seed=options.seed)
                document["results"].append(D.result_entry(entry["name"], case, outcome,
                                                          is_required(named.backend, case),
                                                          time.perf_counter() - start, named.spec))
    except KeyboardInterrupt:
        document["complete"] = False
        document["interrupted"] = True
    finally:
        progress.close()
    D.finish(document)
    return document


__all__ = ["run", "RunOptions", "NamedBackend", "select_cases", "PASSED", "FAILED", "ERROR", "INFO", "SKIPPED"]
