"""The suite can fail: every broken backend of the panel is caught, with the right diagnosis."""

import pytest

from panel import PANEL, KnobbedPhilox
from rngcheck.conformance.runner import NamedBackend, RunOptions, run

# The quick profile without its few large tensors (the panel's Philox is plain and slow).
SMALL = ["kat", "vectors/kat-*", "vectors/elements-*", "vectors/carry-*", "vectors/layout-*", "mapping",
         "counter/advance-*", "counter/carry-*", "key", "layout", "state", "validation", "property"]


def diagnoses(document):
    found = set()
    for result in document["results"]:
        if result["required"] and result["status"] in ("failed", "error") and result["diagnosis"]:
            found.add(result["diagnosis"]["id"])
            found.update(result["diagnosis"].get("alternatives", []))
    return found


def test_the_panel_s_own_correct_setting_passes():
    """The panel's Philox with no knob turned conforms: a failure below is the knob's doing."""
    document = run([NamedBackend("knobbed", KnobbedPhilox())], RunOptions(profile="quick", select=SMALL))
    assert document["summary"]["verdict"] == "pass", [
        (r["case"], r["message"]) for r in document["results"] if r["status"] in ("failed", "error")]


@pytest.mark.parametrize("name, make, expected, profile", PANEL, ids=[p[0] for p in PANEL])
def test_broken_backend_is_caught_and_diagnosed(name, make, expected, profile):
    select = ["layout", "mapping"] if profile == "strict" else SMALL
    document = run([NamedBackend(name, make())], RunOptions(profile=profile, select=select))
    assert document["summary"]["verdict"] == "fail"
    assert document["summary"]["required_failed"] > 0
    assert expected in diagnoses(document), sorted(diagnoses(document))
    internal = [r["case"] for r in document["results"]
                if r["diagnosis"] and r["diagnosis"]["id"] == "rngcheck-internal-error"]
    assert not internal, internal
    failed = [r for r in document["results"] if r["required"] and r["status"] == "failed"]
    assert all(r["reproduce"] for r in failed)


def test_a_crashing_backend_is_an_error_of_each_case_and_the_run_goes_on():
    from panel import Crashes

    document = run([NamedBackend("crashes", Crashes())], RunOptions(profile="quick", select=["kat", "mapping"]))
    statuses = {r["status"] for r in document["results"]}
    assert statuses == {"error"}
    assert len(document["results"]) == len(document["cases"])
    assert all("RuntimeError: device lost" in r["message"] for r in document["results"])
    assert document["summary"]["verdict"] == "fail"


def test_aliasing_cases_still_check_the_guards_the_input_state_and_the_returned_state():
    """Only the words at shared offsets are implementation-defined on an aliasing layout."""
    from panel import KnobbedPhilox

    class MisbehavesWhenAliased(KnobbedPhilox):
        def random_generator(self, state, sizes, strides, buffer, **kw):
            result = super().random_generator(state, sizes, strides, buffer, **kw)
            if strides is not None and 0 in strides:
                buffer[-1] = 0  # past the extent
            return result

    document = run([NamedBackend("aliased", MisbehavesWhenAliased())], RunOptions(profile="quick", select=["layout"]))
    broken = {r["case"]: r for r in document["results"] if r["status"] == "failed"}
    assert set(broken) == {"layout/alias-broadcast", "layout/alias-all"}
    assert all(r["required"] and r["diagnosis"]["id"] == "out-of-extent-write" for r in broken.values())
    assert document["summary"]["verdict"] == "fail"
