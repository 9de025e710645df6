"""The property cases: what every generator that draws numbers owes its users, with no model of it.

Rules (each case names the one it checks; rngcheck.conformance.properties.check judges it):

1. A *seed* s is the 6-word state with key words (s mod 2^32, s >> 32) and counter words zero; its
   *position* c puts c in counter word 0. What a position means is the backend's: a Philox stream's
   block c, or the c-th draw of a library generator seeded with s (tinygrad, Keras: their backends
   say so). Every draw of a case is a plain ``random_numbers`` request under the first of the
   backend's conventions that can draw it (rngcheck.backends.contract).
2. repeat: the same seed, drawn three times in a row, gives the same numbers each time, seed 0
   included (a library that takes 0 for "no seed" fails here, uniforms and normals each: TensorFlow.js
   takes it so for its normals only).
   The counts keep the axis cheap (about 40,000 numbers a backend, under a second on every library
   here but tinygrad's interpreter): DRAW numbers where draws are compared, WINDOW where searched.
3. order: the draws at positions 0..3 of one seed are the same whether asked first to last or last
   to first.
4. recreate: a seed drawn again after another seed's draws repeats its first numbers (a generator
   re-created from its seed repeats its stream; state kept between draws breaks it).
5. seeds: adjacent seeds s and s + 1 do not overlap: no run of OVERLAP_RUN numbers of seed s + 1's
   draws (positions 0..3, WINDOW numbers in all) appears anywhere in seed s's, at any shift.
6. stream: one draw of WINDOW numbers holds no run of OVERLAP_RUN numbers twice (no shifted copy of
   itself).
7. integers: an integer range [low, high) gives every value, nothing outside it, each as often as
   chance allows: Pearson's chi-square over the values fails below FALSE_ALARM.
8. bits: [0, 2^30) reaches every bit: over its draws each of the 30 bits is set at least once and
   clear at least once (a float32 detour leaves the low bits clear; the chance that a bit of a fair
   draw is constant over 4096 numbers is 2^-4095).
9. interval: a float32 uniform in [0, 1) never returns 1.0, nothing below 0, nothing that is not a
   number. Besides a plain draw, the first numbers of the seeds in EDGE_SEEDS: seeds known to take a
   shipped generator to the top of its range, where a rounding to float32 gives 1.0 (found with a model
   of that library's seeding, kept here as vectors: any generator without the defect passes them).
10. keying: a front end that draws through a platform's generator keys it from seed s as the platform's
   own integer seeding does, so seed s gives the platform's numbers for seed s. The one rule with a model:
   the platform's, named by the backend (its ``describe()["platform_seeding"]``; PLATFORMS lists those
   rngcheck models). A backend that names none is not applicable. JAX: ``jax.random.key(s)`` is key data
   [0, s] (rngcheck.numbers.jax_keys rule 1); Keras 3 on JAX draws from [s, counter] instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import counter, numbers
from ..case import Case as CaseHeader

SOURCE = ("TensorFlow guide 'Random number generation' (determinism, independent streams); "
          "tinygrad#16520; issue 43")
WINDOW = 4096           # numbers searched for a shifted copy (rules 5, 6)
DRAW = 1024             # numbers of a draw where a case compares draws (rules 2-4)
OVERLAP_RUN = 8         # a run of this many equal numbers (bit for bit) is an overlap
POSITIONS = 4           # draws of WINDOW / POSITIONS numbers at positions 0..3 (rules 3, 5)
FALSE_ALARM = 1e-9      # the p-value below which a count is not chance (rule 7)
INTEGER_COUNT = 10000   # rule 7's draw: 1000 a value over [-5, 5)
# Rule 9's seeds that reach the top of a shipped generator's float32 range: numba.cuda.random 0.68.1's
# xoroshiro128+ (its first float64 uniform from seed 20610118 lies in [1 - 2^-25, 1): numba#10810); Keras 3.15.1's
# numpy backend (numpy's float64 uniform cast to float32: default_rng([1183528, 0])'s number 15 lies in
# [1 - 2^-25, 1); rngcheck.numbers.keras rule 5).
EDGE_SEEDS = {20610118: "numba#10810", 1183528: "Keras's numpy backend, a float64 cast to float32"}
EDGE_COUNT = 16         # the first numbers of each edge seed
KEYING_SEED = 42        # rule 10's seed (the seed of Keras's JAX finding, issue 43)
PLATFORMS = ("jax",)    # rule 10's platforms: rngcheck.conformance.properties.check models their seeding
PROPERTIES = ("repeat", "order", "recreate", "seeds", "stream", "integers", "bits", "interval", "keying")
CATEGORIES = tuple(f"property-{name}" for name in PROPERTIES)   # each also the procedure of its cases


@dataclass(frozen=True, kw_only=True)
class Case(CaseHeader):
    """One property on one draw: the rule's procedure, its seeds, and what is drawn (kind, dtype, count, range)."""

    axis = "properties"
    layer = "numbers"

    seeds: tuple[int, ...]
    kind: str = numbers.UNIFORM
    dtype: str = "float32"
    count: int = WINDOW
    low: int | None = None
    high: int | None = None

    def size(self) -> int:
        return self.count * len(self.seeds)

    def part(self) -> str:
        return f"{self.kind} {self.dtype}"

    def inputs(self) -> dict[str, Any]:
        drawn: dict[str, Any] = {"kind": self.kind, "dtype": self.dtype, "count": self.count}
        if self.low is not None:
            drawn.update(low=self.low, high=self.high)
        return {"property": self.procedure, "seeds": list(self.seeds), "draw": drawn}

    def reproduction(self) -> dict[str, Any] | None:
        return {"property": self.id}

    def repro_arguments(self) -> list[str] | None:
        return ["--property", self.id]

    def request(self, convention: str, count: int | None = None) -> numbers.Request:
        """The rule-1 request of this case under ``convention``."""
        return numbers.Request(convention, self.kind, self.dtype, self.count if count is None else count,
                               self.low, self.high)


def seed_state(seed: int, position: int = 0):
    """Rule 1: the state of ``seed`` at ``position``."""
    return counter.state_from_words((position, 0, 0, 0), (seed & 0xFFFFFFFF, seed >> 32))


def _case(rule_name: str, name: str, description: str, rule: str, seeds: tuple[int, ...], **drawn) -> Case:
    return Case(id=f"properties/{rule_name}/{name}", category=f"property-{rule_name}", description=description,
                rule=rule, source=SOURCE, procedure=f"property-{rule_name}", seeds=seeds, **drawn)


def property_cases() -> list[Case]:
    cases = [_case("repeat", f"seed-{s}", f"seed {s} drawn 3 times gives the same {DRAW} float32 uniforms",
                   "rule 2: a seed repeats its numbers on every call (0 included)", (s,), count=DRAW)
             for s in (0, 42)]
    cases.append(_case("repeat", "normal-seed-0", f"seed 0 drawn 3 times gives the same {DRAW} float32 normals",
                       "rule 2: a seed repeats its numbers on every call (0 included)", (0,), kind=numbers.NORMAL,
                       count=DRAW))
    cases.append(_case("order", "seed-1", f"seed 1's positions 0..{POSITIONS - 1} asked first to last, then last "
                       "to first, give the same numbers", "rule 3: the numbers do not depend on evaluation order",
                       (1,), count=WINDOW // POSITIONS))
    cases.append(_case("recreate", "seed-7", "seed 7 drawn, then seed 8, then seed 7 again: the same numbers",
                       "rule 4: re-creating a generator from its seed repeats its stream", (7, 8), count=DRAW))
    cases += [_case("seeds", f"adjacent-{s}-{s + 1}", f"no run of {OVERLAP_RUN} of seed {s + 1}'s numbers in seed "
                    f"{s}'s, within {WINDOW} numbers each", "rule 5: adjacent seeds do not overlap", (s, s + 1),
                    count=WINDOW // POSITIONS) for s in (0, 1)]
    cases.append(_case("stream", "seed-1", f"no run of {OVERLAP_RUN} numbers twice in seed 1's {WINDOW}",
                       "rule 6: a stream holds no shifted copy of itself", (1,)))
    cases.append(_case("integers", "range-m5-5", f"int32 in [-5, 5), {INTEGER_COUNT} numbers: every value, nothing "
                       f"outside, chi-square p >= {FALSE_ALARM:g}",
                       "rule 7: an integer range is uniform over [low, high)",
                       (3,), kind=numbers.INTEGERS, dtype="int32", count=INTEGER_COUNT, low=-5, high=5))
    cases.append(_case("bits", "range-0-2pow30", "int32 in [0, 2^30), 4096 numbers: each of the 30 bits set and "
                       "clear", "rule 8: a declared range's every bit is reachable", (3,), kind=numbers.INTEGERS,
                       dtype="int32", count=WINDOW, low=0, high=1 << 30))
    cases.append(_case("interval", "uniform-float32", f"{WINDOW} float32 uniforms lie in [0, 1)",
                       "rule 9: a uniform stays in its declared interval", (5,), count=WINDOW))
    cases += [_case("interval", f"edge-seed-{s}", f"seed {s}'s first {EDGE_COUNT} float32 uniforms lie in [0, 1) "
                    f"(the seed of {finding})", "rule 9: a uniform stays in its declared interval", (s,),
                    count=EDGE_COUNT) for s, finding in EDGE_SEEDS.items()]
    cases.append(_case("keying", f"seed-{KEYING_SEED}", f"seed {KEYING_SEED}'s first {DRAW} float32 uniforms are "
                       f"the platform's own for seed {KEYING_SEED}", "rule 10: a front end keys its platform's "
                       "generator as the platform's own seeding does", (KEYING_SEED,), count=DRAW))
    return cases


def by_id(case_id: str) -> Case | None:
    return next((case for case in property_cases() if case.id == case_id), None)
