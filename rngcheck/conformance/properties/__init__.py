"""Properties every generator that draws numbers owes its users, checked without a model of it
(rngcheck.conformance.properties.cases rules 1-10): repeatable seeds in any order, seeds and streams that
do not overlap, integer ranges that are whole and uniform, uniforms that stay in their interval, and a
front end's seed keying its platform as the platform does."""

from __future__ import annotations

from ..axis import Axis
from . import cases, check, diagnosis, repro

# Asked of every backend (required): a backend that draws no numbers is not applicable, never a pass.
AXIS = Axis(
    name="properties", title="generator properties (no model)", spec="rngcheck.conformance.properties.cases",
    method="random_numbers", rules={}, cases=cases.property_cases, categories=cases.CATEGORIES,
    procedures=check.PROCEDURES, required=True, diagnoses=diagnosis.registered_ids, repro=repro.REPRO)
