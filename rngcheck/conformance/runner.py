"""Run the cases of a profile on one or more backends and build the result document."""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field

from ..errors import one_line
from ..progress import Progress
from ..results import document as D
from ..results.statuses import NOT_RUN
from . import axes
from .case import Case
from .outcome import Outcome


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
    cases: list[Case] | None = None   # these cases instead of the profile's (``rngcheck repro``: one)


def select_cases(options: RunOptions) -> list[Case]:
    chosen = axes.cases_for(options.profile) if options.cases is None else list(options.cases)
    if options.select:
        chosen = [c for c in chosen
                  if any(fnmatch.fnmatchcase(c.id, p) or c.category == p for p in options.select)]
        if options.cases is None:
            # A huge case (issue 29) joins any profile when a pattern that says "huge" names it.
            chosen += [c for c in axes.cases_for("huge") if c not in chosen and any(
                "huge" in p and fnmatch.fnmatchcase(c.id, p) for p in options.select)]
    return chosen


def new_document(options: RunOptions, chosen: list[Case]) -> dict:
    """The result document a run of ``chosen`` starts (rngcheck.results.document)."""
    return D.new_document(options.profile, options.seed, options.command, chosen, options.select,
                          axes.errata_of(chosen))


def selection_of(document: dict) -> list[str] | None:
    """The ``--case`` patterns a result document's run selected: its ``select`` (recorded since
    schema version 2), else read off its recorded command (``run --case P``, ``--case=P`` or a prefix
    argparse takes for it: no other option of run starts --c); None when the command is not run's."""
    select = document.get("select")
    if isinstance(select, list) and all(isinstance(p, str) for p in select):
        return list(select)
    command = document.get("command")
    if not isinstance(command, list) or not all(isinstance(w, str) for w in command) or command[:1] != ["run"]:
        return None

    def is_case(word: str) -> bool:
        return len(word) >= 3 and "--case".startswith(word)

    chosen = [word.partition("=")[2] for word in command if "=" in word and is_case(word.partition("=")[0])]
    return chosen + [after for word, after in zip(command, command[1:]) if is_case(word)]


def expected_case_ids(document: dict) -> set[str]:
    """The case ids a result document's profile and selection give, so that a document cannot drop
    results and its cases' entries both and pass: empty for a profile rngcheck does not know (a
    reproduction) or a selection it cannot read (``rngcheck compare`` and ``run --baseline`` use it)."""
    from ..results.journal import PROFILES

    profile = document.get("profile")
    select = selection_of(document)
    if profile not in PROFILES or select is None:
        return set()
    return {case.id for case in select_cases(RunOptions(profile=profile, select=select))}


def is_required(backend, case: Case) -> bool:
    """Whether a failure of this case fails the run (the case says: Case.required_on)."""
    return case.required_on(backend)


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
    document = previous or new_document(options, chosen)
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
            kept: dict = {}  # what each axis keeps for this backend over the run (DirectML: its anatomy budget)
            for case in chosen:
                if (entry["name"], case.id) in done:
                    continue
                progress.step(f"{entry['name']}: {case.id}")
                start = time.perf_counter()
                if ends is not None and time.monotonic() >= ends:
                    document["deadline_passed"] = options.deadline
                    outcome = Outcome(NOT_RUN, f"not run: the run's --deadline of {options.deadline:g} s passed")
                else:
                    outcome = axes.run_case(named.backend, case, strict=options.profile == "strict",
                                            seed=options.seed, kept=kept)
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

