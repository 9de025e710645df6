"""The property axis's diagnoses: one id per broken property (rngcheck.conformance.properties.cases
rules 2-10), each given with the parameters that show it (seeds, positions, shift, value, bit)."""

from __future__ import annotations

from typing import Any

DIAGNOSES = {
    "property-repeat": "the same seed gave different numbers on another call (rule 2; seed 0 taken as "
                       "'no seed' fails here)",
    "property-order": "a draw's numbers changed with the order in which the draws were asked (rule 3)",
    "property-recreate": "a generator re-created from its seed did not repeat its stream (rule 4: state kept "
                         "between draws)",
    "property-seeds-overlap": "adjacent seeds' streams overlap: a run of one seed's numbers appears, shifted, in "
                              "the other's (rule 5)",
    "property-stream-repeats": "one draw holds a shifted copy of itself (rule 6)",
    "property-range-missing": "an integer range never gave one of its values (rule 7)",
    "property-range-outside": "an integer range gave a value outside [low, high) (rule 7)",
    "property-range-biased": "an integer range's values are not uniform: chi-square p below the false-alarm "
                             "rate (rule 7)",
    "property-bits-unreachable": "a bit of the declared range is never set, or never clear (rule 8: a float32 "
                                 "detour, a narrow generator)",
    "property-interval": "a uniform left its declared interval (rule 9: 1.0 from [0, 1), a negative, a NaN)",
    "property-keying": "a front end keyed its platform's generator otherwise than the platform's own seeding "
                       "(rule 10: the same seed gives other numbers than the platform's)",
}


def registered_ids() -> dict[str, str]:
    return dict(DIAGNOSES)


def diagnosis(id_: str, detail: str, **parameters: Any) -> dict[str, Any]:
    """A registered id with this failure's summary and its parameters."""
    if id_ not in DIAGNOSES:
        raise KeyError(f"diagnosis id {id_!r} is not registered in properties.diagnosis.DIAGNOSES")
    return {"id": id_, "summary": f"{DIAGNOSES[id_].split(' (rule')[0]}: {detail}", "parameters": parameters}
