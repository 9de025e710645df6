"""Run the cases of a profile on one or more backends and build the result document.

Which cases (``select_cases``):
1. The profile's cases (or RunOptions.cases, ``rngcheck repro``'s one).
2. ``--case P`` (any of them): a pattern with a glob character (* ? [) matches case ids as an
   fnmatch glob; a pattern that is a category or a case id (of any profile) selects that category
   or that case (``--case generator`` is the generators' category, not every id that contains the
   word); any other pattern matches the ids it is a substring of (``--case dml-example``).
3. A huge case (issue 29) joins any profile when a pattern that says "huge" matches it.
4. ``-k EXPRESSION`` (rngcheck.expression): of those, the cases whose id or category the
   expression names, as pytest's -k; with --case, both must hold.

When the run stops early (``run``):
5. ``--deadline``: the cases left when it passes are not-run, and the document says
   ``deadline_passed``.
6. ``--maxfail N`` (``-x``: 1): once N results fail the run (statuses.is_failure, over every
   backend; the not-run results of rules 5 and 6 do not count, a resumed run's earlier results do),
   the cases left, on every backend, are not-run, and the document says ``maxfail_reached``.
"""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass, field

from ..errors import RngcheckError, one_line
from ..expression import Keyword
from ..progress import Progress
from ..results import document as D
from ..results.journal import MAX_SELECT
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
    select: list[str] = field(default_factory=list)   # --case patterns (rule 2)
    keyword: str | None = None     # the -k expression (rule 4)
    maxfail: int | None = None     # stop after this many failures (rule 6)
    progress: bool = False
    command: list[str] = field(default_factory=list)
    deadline: float | None = None  # seconds for the whole run: the cases left then are not run
    cases: list[Case] | None = None   # these cases instead of the profile's (``rngcheck repro``: one)


def is_glob(pattern: str) -> bool:
    return any(character in pattern for character in "*?[")


def matcher(patterns: list[str]):
    """``matches(case, pattern)``: whether one of ``patterns`` selects ``case`` (rule 2)."""
    named = {name for case in axes.all_cases() for name in (case.id, case.category)
             if any(pattern == name for pattern in patterns)}

    def matches(case: Case, pattern: str) -> bool:
        if is_glob(pattern):
            return fnmatch.fnmatchcase(case.id, pattern)
        if pattern in named:
            return pattern in (case.category, case.id)
        return pattern in case.id

    return matches


def select_cases(options: RunOptions) -> list[Case]:
    """The cases a run of ``options`` runs (rules 1 to 4; a malformed -k raises RngcheckError)."""
    keyword = Keyword.compile(options.keyword) if options.keyword is not None else None
    if len(options.select) > MAX_SELECT:   # each pattern is matched against every case: bounded work
        raise RngcheckError(f"{len(options.select)} --case patterns: at most {MAX_SELECT} (give a glob or -k instead)")
    chosen = axes.cases_for(options.profile) if options.cases is None else list(options.cases)
    if options.select:
        matches = matcher(options.select)
        chosen = [c for c in chosen if any(matches(c, p) for p in options.select)]
        if options.cases is None:
            chosen += [c for c in axes.cases_for("huge") if c not in chosen and any(
                "huge" in p and matches(c, p) for p in options.select)]
    if keyword is not None:
        chosen = [c for c in chosen if keyword.matches((c.id, c.category))]
    return chosen


def new_document(options: RunOptions, chosen: list[Case]) -> dict:
    """The result document a run of ``chosen`` starts (rngcheck.results.document)."""
    return D.new_document(options.profile, options.seed, options.command, chosen, options.select,
                          axes.errata_of(chosen), keyword=options.keyword)


def selection_of(document: dict) -> list[str] | None:
    """The ``--case`` patterns a result document's run selected: its ``select`` (recorded since
    schema version 2), else read off its recorded command (``run --case P``, ``--case=P`` or a prefix
    argparse takes for it: no other option of run starts --c); None when the command is not run's."""
    select = document.get("select")
    if isinstance(select, list) and len(select) > MAX_SELECT:
        return None   # more than a run could have given: a selection this rngcheck does not read
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
    """The case ids a result document's profile and selection (its --case patterns and -k expression)
    give, so that a document cannot drop results and its cases' entries both and pass: empty for a
    profile rngcheck does not know (a reproduction) or a selection it cannot read (``rngcheck compare``
    and ``run --baseline`` use it)."""
    from ..results.journal import PROFILES

    profile = document.get("profile")
    select = selection_of(document)
    keyword = document.get("keyword")
    if profile not in PROFILES or select is None or not (keyword is None or isinstance(keyword, str)):
        return set()
    try:
        return {case.id for case in select_cases(RunOptions(profile=profile, select=select, keyword=keyword))}
    except RngcheckError:  # a -k no run could have had (an edited document)
        return set()


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
    failures = sum(D.is_failure(r) for r in document["results"])   # rule 6: a resumed run's count goes on
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
                ran = False
                if options.maxfail is not None and failures >= options.maxfail:
                    document["maxfail_reached"] = options.maxfail
                    outcome = Outcome(NOT_RUN, f"not run: --maxfail {options.maxfail} reached")
                elif ends is not None and time.monotonic() >= ends:
                    document["deadline_passed"] = options.deadline
                    outcome = Outcome(NOT_RUN, f"not run: the run's --deadline of {options.deadline:g} s passed")
                else:
                    outcome, ran = axes.run_case(named.backend, case, strict=options.profile == "strict",
                                                 seed=options.seed, kept=kept), True
                result = D.result_entry(entry["name"], case, outcome, is_required(named.backend, case),
                                        time.perf_counter() - start, named.spec)
                if ran and D.is_failure(result):
                    failures += 1
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

