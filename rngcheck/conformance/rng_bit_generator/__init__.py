"""StableHLO's rng_bit_generator as a conformance axis (XLA's variant as the reference; the variant is
implementation-defined, so another answer is a named divergence)."""

from __future__ import annotations

from ... import stablehlo
from ..axis import Axis
from . import cases, check, diagnosis, repro

AXIS = Axis(
    name="stablehlo", title="StableHLO rng_bit_generator (XLA's variant as the reference)",
    spec=stablehlo.__name__, method="rng_bit_generator", rules=stablehlo.RULES, cases=cases.stablehlo_cases,
    categories=cases.CATEGORIES, procedures={cases.RNG_BIT_GENERATOR: check.check},
    divergences=diagnosis.DIVERGENCES, diagnoses=diagnosis.registered_ids, repro=repro.REPRO)
