"""The generators' known answers: every Random123 known answer of every generator, one block a case.

Not an operator: the counter-based generators under the operators (rngcheck.generators). Each case
asks a backend for one block through its optional ``generator_blocks`` and is judged by
rngcheck.conformance.known_answers.check. The DirectML operator's own kat cases
(kat/philox4x32-10-...) are its own category and stay with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import generators
from ...vectors import KatVector, kat_vectors
from ..case import Case as CaseHeader

GENERATOR = "generator"  # the procedure: one block (backend.generator_blocks) against a Random123 known answer
CATEGORIES = ("generator",)
RULE_GENERATOR = "the generator's block for (counter, key) at R rounds is Random123's known answer"


@dataclass(frozen=True, kw_only=True)
class Case(CaseHeader):
    """One block: the generator, its round count, counter and key, and Random123's answer."""

    axis = "known-answers"
    layer = "generator blocks"

    known_answer: KatVector
    procedure: str = GENERATOR

    def part(self) -> str:
        return self.known_answer.generator

    def inputs(self) -> dict[str, Any]:
        known = self.known_answer
        return {"generator": {"generator": known.generator, "rounds": known.rounds,
                              "counter": [f"0x{int(w):x}" for w in known.counter],
                              "key": [f"0x{int(w):x}" for w in known.key]}}


def generator_cases() -> list[Case]:
    """Every Random123 known answer of every generator (rngcheck.vectors), one block each, checked on
    every backend whose ``generators`` name it: ``generator/<generator>-<rounds>-<ctr0>-<key0>``."""
    def words(values, bits):
        return " ".join(f"{int(w):0{bits // 4}x}" for w in values)

    return [Case(id=f"generator/{v.id}", category="generator",
                 description=f"Random123 known answer of {v.generator}-{v.rounds}: counter "
                             f"{words(v.counter, generators.get(v.generator).word_bits)}, key "
                             f"{words(v.key, generators.get(v.generator).word_bits)}",
                 rule=RULE_GENERATOR, source=v.source, known_answer=v)
            for v in kat_vectors()]
