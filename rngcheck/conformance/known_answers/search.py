"""A generator's block function as steps whose parameters are data, searched when no variant matches (issue 40).

The steps of each family (rngcheck.philox, rngcheck.threefry), with the catalogs of
rngcheck.conformance.chain (published constants of every family and width):

1. Philox: the round function's multipliers (``multipliers``: every published Philox multiplier,
   cut to the word size), the key schedule's Weyl constants (``weyl``: every published one, 0, and
   the 64-bit ones' halves) and whether the key is bumped before the first round too
   (``bump_first``), the rounds (``rounds``: the counts the generator lists).
2. ThreeFry: the rotation table, one entry at a time (``rotations``: any other amount 0 .. W-1 at
   one round and position), the key schedule's parity constant (``parity``: 0, the other width's,
   Skein 1.1's 0x5555...), the rounds.
3. ARS and AES: the rounds only (diagnosis.py's variants).

``diagnose_search`` runs rngcheck.conformance.chain.search on the blocks (single changes, then pairs
of two steps within the time budget) and names a match with its step and parameters.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ... import philox, threefry
from ...generators import FAMILY_LABELS, Generator
from .. import chain
from ..chain import Change, hexed
from ..checks import rounds_id

SCALAR_ROWS = 4  # blocks up to this many are computed on Python ints (_threefry_row), more with numpy
SECONDS_PER_BACKEND = 20.0  # the search on a backend's unnamed blocks, in all (chain.SECONDS a case)


@dataclass
class Budget:
    """The search time left to one backend over a run (the axis keeps one per backend)."""

    seconds: float = SECONDS_PER_BACKEND


_ACTIVE: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("rngcheck_block_search", default=None)


@contextlib.contextmanager
def using(budget: Budget | None) -> Iterator[Budget]:
    """The budget the checks inside draw on (a fresh one when None: a single case)."""
    with chain.budget_in_force(_ACTIVE, budget, Budget) as in_force:
        yield in_force


IDS = {
    "philox-multipliers": "round function: other Philox multipliers (multipliers as parameters)",
    "philox-weyl": "key schedule: other Weyl constants (weyl as parameters)",
    "philox-key-bump-first": "key schedule: the key bumped before the first round too",
    "threefry-rotation": "round function: one rotation constant of the table wrong (round mod 8, position, "
                         "rotation as parameters)",
    "threefry-parity": "key schedule: another parity constant (parity as parameters)",
    "two-steps": "two steps of the block function differ (changes [{id, step, parameters}] as parameters)",
}


def blocks(generator: Generator, counters: np.ndarray, key: tuple[int, ...], rounds: int,
           knobs: dict) -> np.ndarray:
    """The generator's blocks with ``knobs`` changed (an empty dict: generator.blocks)."""
    rounds = knobs.get("rounds", rounds)
    if generator.family == "philox":
        weyl = knobs.get("weyl", philox.WEYL[generator.word_bits])
        mask = (1 << generator.word_bits) - 1
        if knobs.get("bump_first"):
            key = tuple((k + w) & mask for k, w in zip(key, weyl))
        return philox.philox(counters, key, rounds, multipliers=knobs.get("multipliers"), weyl=weyl)
    if generator.family == "threefry":
        table = knobs.get("rotations", threefry.ROTATIONS[generator.lanes, generator.word_bits])
        parity = knobs.get("parity", threefry.PARITY[generator.word_bits])
        if len(counters) <= SCALAR_ROWS:
            rows = [_threefry_row([int(w) for w in row], key, rounds, generator.word_bits, table, parity)
                    for row in counters]
            return np.array(rows, dtype=generator.dtype).reshape(counters.shape)
        return threefry.threefry(counters, key, rounds, rotations=table, parity=parity)
    return generator.blocks(counters, key, rounds)


def _threefry_row(x: list[int], key: tuple[int, ...], rounds: int, bits: int, table, parity: int) -> list[int]:
    """rngcheck.threefry's block function on one block of Python ints (its rules, same answers): a known
    answer is one block, and numpy's per-call cost on one block is 8 times this (the search tries thousands)."""
    n, mask = len(x), (1 << bits) - 1
    schedule = threefry.key_schedule(key, bits, parity)
    x = [(v + schedule[i]) & mask for i, v in enumerate(x)]
    for r in range(rounds):
        row = table[r % 8]
        pairs = ((0, 1),) if n == 2 else ((0, 1), (2, 3)) if r % 2 == 0 else ((0, 3), (2, 1))
        for (a, b), amount in zip(pairs, row):
            amount %= bits
            x[a] = (x[a] + x[b]) & mask
            x[b] = (((x[b] << amount) | (x[b] >> (bits - amount))) & mask) ^ x[a]
        if (r + 1) % threefry.INJECTION_PERIOD == 0:
            s = (r + 1) // threefry.INJECTION_PERIOD
            x = [(v + schedule[(s + i) % (n + 1)]) & mask for i, v in enumerate(x)]
            x[-1] = (x[-1] + s) & mask
    return x


def _philox_changes(generator: Generator) -> list[Change]:
    bits, pairs = generator.word_bits, generator.lanes // 2
    spec_m = philox.MULTIPLIERS[generator.lanes, bits]
    spec_w = philox.WEYL[bits][:pairs]
    changes = []
    if pairs == 2:
        changes.append(Change("philox-multipliers", "round function", f"the multipliers are swapped (M0 = "
                              f"{hexed(spec_m[1], bits)}, M1 = {hexed(spec_m[0], bits)})",
                              {"multipliers": [hexed(m, bits) for m in spec_m[::-1]]}, {"multipliers": spec_m[::-1]}))
        changes.append(Change("philox-weyl", "key schedule", f"the Weyl constants are swapped (k0 += "
                              f"{hexed(spec_w[1], bits)}, k1 += {hexed(spec_w[0], bits)})",
                              {"weyl": [hexed(w, bits) for w in spec_w[::-1]]}, {"weyl": spec_w[::-1]}))
    kinds = (("philox-multipliers", "round function", "multipliers", spec_m, chain.multiplier_catalog(bits),
              lambda position, value: f"M{position} = {hexed(value, bits)}"),
             ("philox-weyl", "key schedule", "weyl", spec_w, chain.weyl_catalog(bits),
              lambda position, value: f"k{position} += {hexed(value, bits)}"))
    for position in range(pairs):
        for id_, step, name, spec, catalog, said in kinds:
            for value, source in catalog.items():
                if value != spec[position]:
                    new = tuple(value if p == position else spec[p] for p in range(pairs))
                    changes.append(Change(id_, step, f"{said(position, value)} ({source}) instead of "
                                          f"{hexed(spec[position], bits)}", {name: [hexed(v, bits) for v in new]},
                                          {name: new}))
    changes.append(Change("philox-key-bump-first", "key schedule", "the key bumped before the first round too "
                          "(round r uses k + (r + 1) * W)", {"bump": "before every round"}, {"bump_first": True}))
    return changes


def _threefry_changes(generator: Generator) -> list[Change]:
    bits = generator.word_bits
    spec_parity = threefry.PARITY[bits]
    mask = (1 << bits) - 1
    parities = {0: "0", threefry.PARITY[96 - bits] & mask: "the other word size's, cut to W bits",
                chain.PARITY_SKEIN_11 & mask: "Skein 1.1's 0x5555555555555555 (before the 1.2 tweak)"}
    if bits == 32:
        parities.setdefault(chain.PARITY_SKEIN_13 & mask, "the low 32 bits of 0x1BD11BDAA9FC1A22")
    changes = [Change("threefry-parity", "key schedule", f"parity constant {hexed(value, bits)} ({source}) "
                      f"instead of {hexed(spec_parity, bits)}", {"parity": hexed(value, bits)}, {"parity": value})
               for value, source in parities.items() if value != spec_parity]
    table = threefry.ROTATIONS[generator.lanes, bits]
    for row in range(8):
        for position in range(generator.lanes // 2):
            for amount in range(bits):
                if amount != table[row][position]:
                    changed = tuple(tuple(amount if (r, p) == (row, position) else v for p, v in enumerate(entries))
                                    for r, entries in enumerate(table))
                    text = (f"rotation constant R[{row}][{position}] = {amount} instead of {table[row][position]} "
                            f"(rounds {row}, {row + 8}, ... of the table)")
                    changes.append(Change("threefry-rotation", "round function", text,
                                          {"round": row, "position": position, "rotation": amount},
                                          {"rotations": changed}))
    return changes


def changes_for(generator: Generator, rounds: int) -> list[Change]:
    """The catalog for this generator: the family's constants, then the rounds (small steps first)."""
    name = f"{FAMILY_LABELS[generator.family]}{generator.lanes}x{generator.word_bits}"
    counts = [r for r in (*generator.wrong_rounds, generator.default_rounds) if r != rounds]
    rounds_changes = [Change(rounds_id(r), "rounds", f"{name}-{r}: {r} rounds instead of {rounds}", {"rounds": r},
                             {"rounds": r}) for r in dict.fromkeys(counts)]
    if generator.family == "philox":
        return [*_philox_changes(generator), *rounds_changes]
    if generator.family == "threefry":
        family = _threefry_changes(generator)
        return [*family[:3], *rounds_changes, *family[3:]]
    return []


def diagnose_search(generator: Generator, rounds: int, counters: np.ndarray, key: tuple[int, ...], got: np.ndarray,
                    seconds: float = chain.SECONDS) -> dict | None:
    """The chain's single changes, then pairs, whose blocks equal ``got`` (None: no catalog, or the backend's
    search time is spent; ``{"search": ...}`` alone: nothing matched)."""
    catalog = changes_for(generator, rounds)
    if not catalog:
        return None
    right = generator.blocks(counters, key, rounds)

    def reproduces(knobs: dict) -> bool:
        predicted = blocks(generator, counters, key, rounds, knobs)
        return not np.array_equal(predicted, right) and np.array_equal(predicted, got)

    budget = _ACTIVE.get()
    if budget is not None:
        if budget.seconds <= 0:
            return None
        seconds = min(seconds, budget.seconds)
    found = chain.search(catalog, reproduces, seconds)
    if budget is not None:
        budget.seconds -= found.seconds
    named = chain.diagnosis(found)
    return named if named is not None else {"search": chain.cost(found)}
