"""DirectML's DML_RANDOM_GENERATOR (Philox4x32-10) as a conformance axis: its cases, checks, diagnosis
(with the anatomy of a failure and the 2^31 wraps), the property search and ``rngcheck repro``."""

from __future__ import annotations

from ... import description
from ..axis import Axis
from . import anatomy, cases, check, diagnosis, property_search, repro

ERRATA = (
    "DirectML's page says the counter 0x48656c6c'6f46726f'6d536561'74746c65 advanced by 324,855 becomes "
    "0x48656c6c'6f46726f'6d536561'746f776e; that is the counter minus 324,855. rngcheck follows the rule "
    "(add ceil(n/4) with carry): 0x48656c6c'6f46726f'6d536561'7479615c. The cases vectors/dml-example-324855 "
    "and counter/dml-example-324855 require the corrected value.",
)

AXIS = Axis(
    name="directml", title="DirectML DML_RANDOM_GENERATOR (Philox4x32-10)",
    spec="rngcheck.reference", method="random_generator", rules=description.RULES, cases=cases.directml_cases,
    categories=("kat", "vectors", "mapping", "counter", "key", "layout", "state", "validation", "property", "scale"),
    procedures={**check.PROCEDURES, cases.PROPERTY: property_search.check_property}, required=True,
    seeded=frozenset({cases.PROPERTY}), diagnoses=diagnosis.registered_ids, keep=anatomy.Budget,
    within=anatomy.using, repro=repro.REPRO, errata=ERRATA)
