"""Generator-level diagnosis: which known bug class of a block function wrong blocks look like.

An operator's diagnosis (diagnosis.py) asks how the words of a tensor went wrong; this one asks
how a generator's blocks went wrong, given the counters and the key they were computed from
(a Random123 known answer, a randomgen or JAX block, a StableHLO operator's block). Each variant
is the block function of rngcheck.philox or rngcheck.threefry with one standard parameter
changed; ``diagnose_blocks`` names the first whose blocks equal what the implementation gave.
Add a bug class by adding a GeneratorVariant to VARIANTS (or to _rounds_variants). The ids and
summaries live here only, except the round counts, whose ids are rngcheck.conformance.checks' (rounds_id).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ... import philox, threefry
from ...generators import FAMILY_LABELS, GENERATORS, Generator
from ..checks import named, rounds_id
from . import search

Blocks = Callable[[Generator, np.ndarray, tuple[int, ...], int], np.ndarray]


@dataclass(frozen=True)
class GeneratorVariant:
    """A wrong block function: id, what it does, the families (None: every one) and lane counts it applies to."""

    id: str
    summary: str
    predict: Blocks
    families: tuple[str, ...] | None = None
    lanes: tuple[int, ...] = (2, 4)

    def applies_to(self, generator: Generator) -> bool:
        return (self.families is None or generator.family in self.families) and generator.lanes in self.lanes


def _threefry(**changed) -> Blocks:
    """ThreeFry with some standard parameters changed (the others as the generator's)."""
    def predict(generator: Generator, counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
        options = {name: (value(generator) if callable(value) else value) for name, value in changed.items()}
        return threefry.threefry(counters, key, rounds, **options)
    return predict


def _philox(**changed) -> Blocks:
    def predict(generator: Generator, counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
        options = {name: (value(generator) if callable(value) else value) for name, value in changed.items()}
        return philox.philox(counters, key, rounds, **options)
    return predict


def _table(generator: Generator) -> tuple[tuple[int, ...], ...]:
    return threefry.ROTATIONS[generator.lanes, generator.word_bits]


def _other_width_table(generator: Generator) -> tuple[tuple[int, ...], ...]:
    return threefry.ROTATIONS[generator.lanes, 96 - generator.word_bits]


def _shifted_table(amount: int) -> Callable[[Generator], tuple[tuple[int, ...], ...]]:
    return lambda g: tuple(tuple(r + amount for r in row) for row in _table(g))


def _rows_one_round_late(generator: Generator) -> tuple[tuple[int, ...], ...]:
    table = _table(generator)
    return table[1:] + table[:1]


def _pairs_swapped(generator: Generator) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(reversed(row)) for row in _table(generator))


def _lanes_reversed(generator: Generator, counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    return generator.blocks(counters, key, rounds)[:, ::-1]


def _key_reversed(generator: Generator, counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    return generator.blocks(counters, key[::-1], rounds)


def _counter_reversed(generator: Generator, counters: np.ndarray, key: tuple[int, ...], rounds: int) -> np.ndarray:
    return generator.blocks(np.ascontiguousarray(counters[:, ::-1]), key, rounds)


THREEFRY = ("threefry",)
PHILOX = ("philox",)

VARIANTS: tuple[GeneratorVariant, ...] = (
    # ThreeFry: the rotation constants.
    GeneratorVariant("threefry-rotations-other-width", "rotation constants of the other word size's table (ThreeFry"
                     "Nx64's on Nx32 or Nx32's on Nx64; threefry.h R_32xN / R_64xN)",
                     _threefry(rotations=_other_width_table), THREEFRY),
    GeneratorVariant("threefry-rotations-plus-one", "every rotation constant one too large",
                     _threefry(rotations=_shifted_table(1)), THREEFRY),
    GeneratorVariant("threefry-rotations-minus-one", "every rotation constant one too small",
                     _threefry(rotations=_shifted_table(-1)), THREEFRY),
    GeneratorVariant("threefry-rotations-one-round-late", "the rotation row of round r + 1 used in round r (the "
                     "table indexed off by one)", _threefry(rotations=_rows_one_round_late), THREEFRY),
    GeneratorVariant("threefry-rotation-pairs-swapped", "the two rotation constants of each 4xW round swapped",
                     _threefry(rotations=_pairs_swapped), THREEFRY, (4,)),
    # ThreeFry: the key schedule and its injection.
    GeneratorVariant("threefry-key-injection-missing", "the key injected only before the first round, never "
                     "after every 4 rounds", _threefry(injection_period=0), THREEFRY),
    GeneratorVariant("threefry-key-injection-every-round", "the key injected after every round instead of every "
                     "4 rounds", _threefry(injection_period=1), THREEFRY),
    GeneratorVariant("threefry-key-ignored", "no key injection at all (the key is not used)",
                     _threefry(injection_period=0, initial_injection=False), THREEFRY),
    GeneratorVariant("threefry-first-injection-missing", "the key not added before the first round (the "
                     "injections after every 4 rounds kept)", _threefry(initial_injection=False), THREEFRY),
    GeneratorVariant("threefry-injection-count-missing", "the injection count s not added to the last lane at "
                     "the s-th injection", _threefry(injection_count=False), THREEFRY),
    GeneratorVariant("threefry-parity-zero", "key-schedule parity constant 0 (the extra key word is the xor of "
                     "the key words alone)", _threefry(parity=0), THREEFRY),
    GeneratorVariant("threefry-parity-other-width", "the other word size's parity constant (0x1BD11BDA for 64-bit "
                     "words, or 0x1BD11BDAA9FC1A22 cut to its low 32 bits, 0xA9FC1A22, for 32-bit words)",
                     _threefry(parity=lambda g: threefry.PARITY[96 - g.word_bits]), THREEFRY),
    # Philox: the multipliers and the key schedule.
    GeneratorVariant("philox-key-not-bumped", "the key not bumped by the Weyl constants between rounds",
                     _philox(weyl=(0, 0)), PHILOX),
    GeneratorVariant("philox-multipliers-swapped", "the two round multipliers swapped (M1 on x0, M0 on x2)",
                     _philox(multipliers=lambda g: philox.MULTIPLIERS[g.lanes, g.word_bits][::-1]), PHILOX, (4,)),
    GeneratorVariant("philox-weyl-other-width", "the other word size's Weyl constants (32-bit ones on 64-bit "
                     "words, or the 64-bit ones cut to 32 bits)",
                     _philox(weyl=lambda g: tuple(w & ((1 << g.word_bits) - 1) for w in philox.WEYL[96 - g.word_bits])),
                     PHILOX),
    # Any generator: how the block is handed over.
    GeneratorVariant("block-lanes-reversed", "the output lanes of each block in reverse order", _lanes_reversed),
    GeneratorVariant("block-key-words-reversed", "the key words taken in reverse order", _key_reversed),
    GeneratorVariant("block-counter-words-reversed", "the counter words taken in reverse order", _counter_reversed),
)


def _rounds_variants(generator: Generator, rounds: int) -> list[GeneratorVariant]:
    """R' rounds instead of R, for each R' the generator lists (diagnosis.py's rounds ids)."""
    name = f"{FAMILY_LABELS[generator.family]}{generator.lanes}x{generator.word_bits}"
    tried = [r for r in (*generator.wrong_rounds, generator.default_rounds) if r != rounds]
    return [GeneratorVariant(rounds_id(r), f"{name}-{r}: {r} rounds instead of {rounds}", _with_rounds(r))
            for r in dict.fromkeys(tried)]


def _with_rounds(wrong: int) -> Blocks:
    return lambda generator, counters, key, _rounds: generator.blocks(counters, key, wrong)


def variants_for(generator: Generator, rounds: int) -> list[GeneratorVariant]:
    """The variants that apply to this generator at this round count, in the order they are tried."""
    return [v for v in VARIANTS if v.applies_to(generator)] + _rounds_variants(generator, rounds)


def matching_variants(generator: Generator, rounds: int, counters: npt.ArrayLike, key: Sequence[int],
                      got: npt.ArrayLike) -> list[GeneratorVariant]:
    """Every variant whose blocks equal ``got`` where the right blocks do not (so none when got is right)."""
    counters = np.asarray(counters, dtype=generator.dtype)
    got = np.asarray(got)
    key = tuple(int(word) for word in key)
    right = generator.blocks(counters, key, rounds)
    if got.shape != right.shape:
        return []
    got = got.astype(generator.dtype)
    return [v for v in variants_for(generator, rounds)
            if not np.array_equal(predicted := v.predict(generator, counters, key, rounds), right)
            and np.array_equal(predicted, got)]


def diagnose_blocks(generator: Generator, rounds: int, counters: npt.ArrayLike, key: Sequence[int],
                    got: npt.ArrayLike) -> str | None:
    """The id of the first known bug class whose blocks equal ``got`` (blocks of ``counters`` under
    ``key``, meant to be ``generator`` at ``rounds`` rounds), or None when none does (a right answer
    included: compare with generator.blocks first). Counters and got: shape (blocks, N)."""
    matches = matching_variants(generator, rounds, counters, key, got)
    return matches[0].id if matches else None


def diagnose(generator: Generator, rounds: int, counters: np.ndarray, key: tuple[int, ...], got: np.ndarray) -> dict:
    """The diagnosis of a wrong block: the first bug class whose blocks equal ``got``, naming the others
    that predict the same; else the chain's search (search.py: one or two steps' parameters changed, named with
    the step and the parameters); else the shared "unknown" (with what the search tried)."""
    matches = matching_variants(generator, rounds, counters, key, got)
    if not matches:
        searched = search.diagnose_search(generator, rounds, np.asarray(counters, dtype=generator.dtype),
                                          tuple(int(k) for k in key), np.asarray(got).astype(generator.dtype))
        if searched is not None and "id" in searched:
            return searched
        return named("unknown", **({"search": searched["search"]} if searched else {}))
    ids = list(dict.fromkeys(v.id for v in matches))
    return {"id": ids[0], "summary": matches[0].summary, "alternatives": ids[1:]}


def registered_ids() -> dict[str, str]:
    """Every id this module can give, with its summary (the round counts' ids are
    rngcheck.conformance.checks.rounds_id of each count a generator lists), and "unknown"'s."""
    ids = {v.id: v.summary for v in VARIANTS}
    ids.update(search.IDS)
    for generator in GENERATORS:
        for rounds in (*generator.wrong_rounds, generator.default_rounds):
            ids.setdefault(rounds_id(rounds), f"{rounds} rounds instead of the generator's")
    return ids
