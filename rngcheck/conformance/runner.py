"""Run the cases of a profile on one or more backends and build the result document."""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field

from ..errors import one_line
from ..progress import Progress
from ..results import document as D
from . import anatomy, check, operators
from . import cases as C


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
    deadline: float | None = None  # seconds for the whole run: the cases left then are not run
    cases: list[C.Case] | None = None   # these cases instead of the profile's (``rngcheck repro``: one)


def select_cases(options: RunOptions) -> list[C.Case]:
    chosen = operators.cases_for(options.profile) if options.cases is None else list(options.cases)
    if options.select:
        chosen = [c for c in chosen
                  if any(fnmatch.fnmatchcase(c.id, p) or c.category == p for p in options.select)]
        if options.cases is None:
            # A huge case (issue 29) joins any profile when a pattern that says "huge" names it.
            chosen += [c for c in operators.cases_for("huge") if c not in chosen and any(
                "huge" in p and fnmatch.fnmatchcase(c.id, p) for p in options.select)]
    return chosen


def is_required(backend, case: C.Case) -> bool:
    """Whether a failure of this case fails the run. What is implementation-defined (the words at
    aliased offsets, padding) comes back as INFO and never fails; the guards, the input state and
    the returned state are checked on every case, aliased ones included."""
    if case.procedure == C.REJECT:
        return bool(getattr(backend, "validates", False))
    return True


def safe_describe(backend) -> dict:
    try:
        described = backend.describe() or {}
        return {str(k): str(v) for k, v in dict(described).items()}
    except Exception as error:
        return {"describe-error": one_line(error)}


def unique_name(backend, spec: str, taken) -> str:
    """The backend's name, or its spec when that is the name with options (``jax:state_words=3``:
    a mode is another implementation); when another backend has it, its spec, then name#N."""
    name = str(getattr(backend, "name", "") or spec)
    if (spec.startswith(name + ":") or name in taken) and spec not in taken:
        return spec
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}#{number}", number + 1
    return candidate


def run(backends: list[NamedBackend], options: RunOptions, *, journal=None, previous: dict | None = None,
        observe=None) -> dict:
    """Every selected case on every backend; returns the result document (see results.document).

    ``journal``: a rngcheck.results.journal.Journal that receives each result as it is made.
    ``previous``: a document rebuilt from a journal (``--resume``): its results are kept and
    its finished cases are not run again.
    ``observe(named, case, outcome)``: called with each outcome (its execution included) as it is made.
    """
    chosen = select_cases(options)
    document = previous or D.new_document(options.profile, options.seed, options.command, chosen)
    done = {(r["backend"], r["case"]) for r in document["results"]}
    known = {b["spec"]: b for b in document["backends"]}
    todo = sum(1 for named in backends for case in chosen
               if (known.get(named.spec, {}).get("name"), case.id) not in done)
    progress = Progress(options.progress, todo)
    document["complete"] = True
    document.pop("interrupted", None)
    ends = None if options.deadline is None else time.monotonic() + options.deadline
    for named in backends:
        if ends is not None and hasattr(named.backend, "run_deadline"):
            named.backend.run_deadline = ends  # a call in progress is cut at the deadline too
    try:
        for named in backends:
            entry = known.get(named.spec)
            if entry is None:
                entry = {"name": unique_name(named.backend, named.spec, {b["name"] for b in document["backends"]}),
                         "spec": named.spec, "validates": bool(getattr(named.backend, "validates", False)),
                         "describe": safe_describe(named.backend)}
                document["backends"].append(entry)
                if journal:
                    journal.write({"backend": entry})
            explain = anatomy.Budget()  # the anatomy of this backend's first failing cases
            for case in chosen:
                if (entry["name"], case.id) in done:
                    continue
                progress.step(f"{entry['name']}: {case.id}")
                start = time.perf_counter()
                if ends is not None and time.monotonic() >= ends:
                    document["deadline_passed"] = options.deadline
                    outcome = check.Outcome(check.NOT_RUN, f"not run: the run's --deadline of {options.deadline:g} s "
                                                           f"passed")
                else:
                    outcome = operators.run_case(named.backend, case, strict=options.profile == "strict",
                                             seed=options.seed, explain=explain)
                result = D.result_entry(entry["name"], case, outcome, is_required(named.backend, case),
                                        time.perf_counter() - start, named.spec)
                document["results"].append(result)
                if observe:
                    observe(named, case, outcome)
                outcome.execution = None  # the case's buffer goes now, not when the next case is done
                if journal:
                    journal.write({"result": result})
    except KeyboardInterrupt:
        document["complete"] = False
        document["interrupted"] = True
    finally:
        progress.close()
    D.finish(document)
    if journal and document["complete"]:
        journal.write({"end": document["summary"]})
    return document

