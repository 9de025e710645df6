"""The check of a generator case: one block of a counter-based generator against Random123's known
answer.

The cases are rngcheck.conformance.known_answers.cases (procedure GENERATOR), one per line of the
known answers (rngcheck.vectors, every generator of rngcheck.generators). The backend computes the
block through its optional ``generator_blocks`` (rngcheck.backends.contract); the suite owns the
answer and the verdict: the block equals the known answer word for word, or the case fails and the
wrong block is diagnosed (rngcheck.conformance.known_answers.diagnosis, which names the defect a wrong
generator variant predicts). A backend that does not compute the generator, or not at that round
count, is not applicable (skipped), never a pass.
"""

from __future__ import annotations

import numpy as np

from ... import generators
from ...errors import NotApplicable
from ...results.statuses import FAILED, PASSED
from ..checks import named
from ..outcome import CaseFailed, Outcome, call_backend
from .diagnosis import diagnose


def _words(values, bits: int) -> str:
    return "[" + ", ".join(f"0x{int(w):0{bits // 4}x}" for w in values) + "]"


def check_generator(backend, case, strict: bool) -> Outcome:
    """The verdict on one generator case (rngcheck.conformance.known_answers.cases.Case)."""
    known = case.known_answer
    if known is None:
        raise ValueError(f"case {case.id} has no known answer")
    if known.generator not in tuple(getattr(backend, "generators", ()) or ()):
        raise NotApplicable(f"the backend computes no {known.generator} blocks")
    generator = generators.get(known.generator)
    counters = np.array([known.counter], dtype=generator.dtype)
    given = counters.copy()
    returned = call_backend(backend, "generator_blocks", generator.name, known.rounds, given, tuple(known.key))
    if not np.array_equal(given, counters):
        raise CaseFailed(Outcome(FAILED, "modified the counters it was given",
                                 diagnosis=named("contract", "generator_blocks must not write into its counters")))
    actual = np.asarray(returned) if isinstance(returned, np.ndarray) else None
    if actual is None or actual.shape != counters.shape or actual.dtype != counters.dtype:
        shown = f"{actual.dtype}{list(actual.shape)}" if actual is not None else type(returned).__name__
        raise CaseFailed(Outcome(FAILED, f"returned {shown}, not one block of {generator.lanes} "
                                         f"{np.dtype(generator.dtype).name} words",
                                 diagnosis=named("contract", f"return a (blocks, {generator.lanes}) "
                                                             f"{np.dtype(generator.dtype).name} array")))
    expected = np.array([known.expected], dtype=generator.dtype)
    bits = generator.word_bits
    if np.array_equal(actual, expected):
        return Outcome(PASSED, f"{known.generator}-{known.rounds}: the {generator.lanes} words are "
                               f"Random123's known answer")
    wrong = [int(i) for i in np.flatnonzero(actual[0] != expected[0])]
    diagnosis = diagnose(generator, known.rounds, counters, tuple(known.key), actual)
    message = (f"{len(wrong)} of {generator.lanes} words differ from Random123's known answer "
               f"(lanes {', '.join(map(str, wrong))}): expected {_words(expected[0], bits)}, "
               f"got {_words(actual[0], bits)}; looks like: {diagnosis['id']}")
    return Outcome(FAILED, message, diagnosis=diagnosis, mismatch_count=len(wrong),
                   detail=f"{known.generator}-{known.rounds} counter {_words(known.counter, bits)} key "
                          f"{_words(known.key, bits)} (Random123: {known.line})")
