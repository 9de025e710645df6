"""DirectML's property cases: random descriptions against the reference, the minimal failing one found.

Hypothesis draws descriptions (rngcheck.conformance.directml.strategies: states at the carries,
ranks 1-8, permuted and padded strides), each is run and judged as one description
(rngcheck.conformance.directml.check), and the search shrinks a failure to its minimal description,
which the outcome names and reproduces (``Outcome.reproduced_by``).
"""

from __future__ import annotations

import random

import numpy as np

from ... import counter
from ...errors import one_line
from ...results.statuses import CRASHED, ERROR, FAILED, NOT_APPLICABLE, NOT_RUN, PASSED, SKIPPED, TIMEOUT
from ..checks import looks_like, named
from ..outcome import Outcome
from . import anatomy
from . import cases as C
from .check import difference_text, first_difference, run_case


def check_property(backend, case: C.Case, strict: bool, seed: int) -> Outcome:
    """Random descriptions against the reference; the minimal failing one, confirmed by running it again.

    Hypothesis sees each description's answer once (a description asked again gets the same
    answer), so a backend that changes its answer cannot make the search itself flaky: the
    minimal failure is run again (with its anatomy), and an answer that changed is the backend's
    ``nondeterministic``. A crash or a hang ends the search at once and is reported as found.
    """
    from hypothesis import HealthCheck, find, settings
    from hypothesis.errors import Flaky, NoSuchExample

    from .strategies import descriptions

    failures: dict[C.Case, Outcome] = {}
    answers: dict[C.Case, bool] = {}
    outputs: dict[C.Case, np.ndarray] = {}   # the words of the last few failing runs (bounded)
    abandoned: list[C.Case] = []
    tried = {"run": 0, "not applicable": 0}
    budget = anatomy.current()

    class Abandon(Exception):
        """A crash or hang: the backend is not called again in this case; the first one is reported."""

    def fails(drawn: C.Case) -> bool:
        if drawn in answers:
            return answers[drawn]
        if abandoned:
            raise Abandon
        outcome = run_case(backend, drawn, strict=False, seed=seed, explain=anatomy.off())
        if outcome.status in (CRASHED, TIMEOUT, NOT_RUN):
            failures[drawn] = outcome
            abandoned.append(drawn)
            raise Abandon
        tried["not applicable" if outcome.status in (NOT_APPLICABLE, SKIPPED) else "run"] += 1
        answers[drawn] = outcome.status in (FAILED, ERROR)
        if answers[drawn]:
            failures[drawn] = outcome
            if outcome.execution is not None:
                outputs[drawn] = outcome.execution.tensor.copy()
                while len(outputs) > 8:
                    del outputs[next(iter(outputs))]
        outcome.execution = None  # the shrinking keeps many failures: not their buffers
        return answers[drawn]

    big = case.examples > 100
    try:
        minimal = find(descriptions(max_elements=20000 if big else 600, max_rank=8),
                       fails, random=random.Random(seed),
                       settings=settings(max_examples=case.examples, database=None, deadline=None,
                                         suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        if not tried["run"]:
            return Outcome(NOT_APPLICABLE, f"not applicable: none of {tried['not applicable']} random descriptions "
                                    f"could be expressed (seed {seed})")
        absent = f"; {tried['not applicable']} not applicable" if tried["not applicable"] else ""
        return Outcome(PASSED, f"{tried['run']} random descriptions agree with the reference (seed {seed}{absent})")
    except (Abandon, Flaky) as error:
        if abandoned:
            return _found_by_property(abandoned[0], failures[abandoned[0]], "on")
        # Flaky: cannot happen with one answer per description; were it to, the answers changed.
        said = f"the backend's answers changed during the search ({one_line(error)})"
        if not failures:
            return Outcome(FAILED, looks_like(said, named("nondeterministic")), diagnosis=named("nondeterministic"))
        minimal = next(reversed(failures))
        found = failures[minimal]
        return _found_by_property(minimal, Outcome(FAILED, looks_like(said, named("nondeterministic")),
                                                   diagnosis=named("nondeterministic", said),
                                                   mismatches=found.mismatches, mismatch_count=found.mismatch_count),
                                  "on")
    if abandoned:  # a crash or hang while shrinking: that is what the backend did last
        return _found_by_property(abandoned[0], failures[abandoned[0]], "on")
    found = failures[minimal]
    again = run_case(backend, minimal, strict=False, seed=seed, explain=budget)
    if again.status in (CRASHED, TIMEOUT, NOT_RUN) or _same_answer(found, again):
        return _found_by_property(minimal, again, "minimal failing description:")
    return _found_by_property(minimal, _changed_answer(minimal, found, again, outputs.get(minimal)),
                              "minimal failing description:")


def _same_answer(one: Outcome, other: Outcome) -> bool:
    return one.status == other.status and one.output_sha256 == other.output_sha256 and \
        (one.status != ERROR or one.message == other.message)


def _changed_answer(case: C.Case, first: Outcome, again: Outcome, first_words: np.ndarray | None) -> Outcome:
    """A description the property case found failing that answered otherwise when run again."""
    state = counter.as_state_words(case.state)
    difference = None
    if first_words is not None and again.execution is not None:
        difference = first_difference(case, first_words, again.execution.tensor, state)
    then = "right" if again.status == PASSED else again.message
    evidence = {"executions": 2, "right": int(again.status == PASSED),
                "distinct_outputs": 1 + int(first.output_sha256 != again.output_sha256), "first_difference": difference}
    said = (f"the same description answered differently when run again: first {first.message}; then {then}"
            + difference_text(difference))
    diagnosis = named("nondeterministic", said, repeats=evidence)
    explained = (again.diagnosis or {}).get("anatomy") or (first.diagnosis or {}).get("anatomy")
    if explained:
        diagnosis["anatomy"] = explained
    failed = first if first.status == FAILED else again
    return Outcome(FAILED, looks_like(said, diagnosis), diagnosis=diagnosis, mismatches=failed.mismatches,
                   mismatch_count=failed.mismatch_count, output_sha256=first.output_sha256,
                   detail=first.detail or again.detail, execution=again.execution)


def _found_by_property(case: C.Case, outcome: Outcome, lead: str) -> Outcome:
    outcome.message = f"{lead} {case.describe_call()}; {outcome.message}" if lead.endswith(":") else \
        f"{lead} {case.describe_call()}: {outcome.message}"
    outcome.reproduce = None   # the drawn description reproduces it (rngcheck.conformance.judging, rule 7)
    outcome.reproduced_by = case
    return outcome
