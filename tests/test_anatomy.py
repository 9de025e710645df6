"""Every failure explained (issue 30): broken backends of kinds no named class models are
explained by their anatomy (or a structured family with its parameters), and a backend's
nondeterminism is the backend's verdict, never an internal error of rngcheck."""

import re
import time
from pathlib import Path

import numpy as np
import pytest

from panel import UNMODELLED, HangsOnLargeDraws, KnobbedPhilox, WrongOnCall
from rngcheck.conformance import axes, checks
from rngcheck.conformance.directml import anatomy, diagnosis
from rngcheck.conformance.directml import cases as C
from rngcheck.conformance.directml.check import FAILED, TIMEOUT, run_case
from rngcheck.conformance.runner import NamedBackend, RunOptions, run

SMALL = ["kat", "vectors/kat-*", "vectors/elements-*", "vectors/carry-*", "vectors/layout-*", "mapping",
         "counter/advance-*", "counter/carry-*", "key", "layout", "state", "validation", "property"]
STATE = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0)
UNKNOWN = {"unknown", "unknown-state"}


def said(result) -> str:
    """Everything a failure says of its cause: message, diagnosis summary and parameters, anatomy."""
    found = result["diagnosis"] or {}
    return " | ".join([result["message"], str(found.get("summary")), str(found.get("parameters")),
                       *(found.get("anatomy") or {}).get("findings", [])])


@pytest.mark.parametrize("name, make, expected, phrase", UNMODELLED, ids=[u[0] for u in UNMODELLED])
def test_an_unmodelled_bug_is_explained(name, make, expected, phrase):
    document = run([NamedBackend(name, make())], RunOptions(profile="quick", select=SMALL))
    assert document["summary"]["verdict"] == "fail"
    failed = [r for r in document["results"]
              if r["required"] and r["status"] not in ("passed", "n/a", "skipped", "info")]
    assert failed
    ids = {r["diagnosis"]["id"] for r in failed if r["diagnosis"]}
    assert expected in ids, sorted(ids)
    assert any(phrase in said(r) for r in failed if r["diagnosis"] and r["diagnosis"]["id"] == expected), \
        [said(r) for r in failed][:3]
    # None ends "unknown" with nothing else, and none blames rngcheck.
    bare = [r["case"] for r in failed if not r["diagnosis"] or
            (r["diagnosis"]["id"] in UNKNOWN and not (r["diagnosis"].get("anatomy") or {}).get("findings"))]
    assert not bare, bare
    assert "rngcheck-internal-error" not in ids


def case(sizes, strides=None, state=STATE):
    return C.Case(id="anatomy", category="anatomy", description="", rule="", source="", state=state,
                  sizes=tuple(sizes), strides=strides)


def property_case():
    (found,) = [c for c in axes.cases_for("quick") if c.procedure == C.PROPERTY]
    return found


def test_wrong_once_in_a_plain_case_is_nondeterministic_with_the_first_difference():
    outcome = run_case(WrongOnCall(1), case((5, 7)))
    assert outcome.status == FAILED
    found = outcome.diagnosis
    assert found["id"] == "nondeterministic", outcome.message
    assert found["repeats"]["right"] >= 1 and found["repeats"]["distinct_outputs"] == 2
    difference = found["repeats"]["first_difference"]
    assert difference["index"] == 0 and difference["values"][1] == difference["expected"]
    assert outcome.reproduce and outcome.reproduce["sizes"] == "5,7"
    assert "looks like: nondeterministic" in outcome.message


@pytest.mark.parametrize("how", ["words", "raises"])
def test_wrong_once_inside_the_property_case_is_the_backend_s_nondeterminism(how):
    outcome = axes.run_case(WrongOnCall(4, how), property_case(), seed=3)
    assert outcome.status == FAILED, outcome.message
    assert outcome.diagnosis["id"] == "nondeterministic", outcome.message
    assert "internal error" not in outcome.message and "Flaky" not in outcome.message
    assert outcome.message.startswith("minimal failing description: state ")
    assert outcome.reproduce and set(outcome.reproduce) == {"state", "sizes", "strides", "feature_level"}


def test_a_backend_that_hangs_in_the_property_case_is_a_timeout_not_not_run():
    from rngcheck.backends.exec_backend import isolated

    spec = f"{Path(__file__).parent / 'panel.py'}:HangsOnLargeDraws"
    backend = isolated(spec, timeout=3)
    try:
        start = time.monotonic()
        outcome = axes.run_case(backend, property_case(), seed=0)
    finally:
        backend.close()
    assert outcome.status == TIMEOUT, outcome.message
    assert outcome.diagnosis["id"] == "timeout"
    assert outcome.message.startswith("on state ") and "backend hung" in outcome.message
    assert outcome.reproduce is not None
    assert time.monotonic() - start < 60  # one time limit: the backend is not called again in this case
    sizes = [int(s) for s in outcome.reproduce["sizes"].split(",")]
    assert len(sizes) >= 3 and np.prod(sizes) > 64  # the description that hung, as drawn
    assert HangsOnLargeDraws  # the spec above names it


def test_the_anatomy_is_bounded_by_the_backend_s_budget_and_never_changes_a_status():
    broken = KnobbedPhilox(rounds=13)
    cases = [case((n,)) for n in (8, 9, 10)]
    budget = anatomy.Budget(cases=1, search=0.0)   # no time for the chain's search (issue 40) either
    outcomes = [run_case(broken, c, explain=budget) for c in cases]
    assert [o.status for o in outcomes] == [FAILED] * 3
    assert "anatomy" in outcomes[0].diagnosis and outcomes[0].diagnosis["id"] == "round-count"
    assert all("anatomy" not in o.diagnosis for o in outcomes[1:])
    assert [o.diagnosis["id"] for o in outcomes[1:]] == ["unknown", "unknown"]
    # The search has a budget of its own: past the anatomy's, it still names the round count.
    searched = run_case(broken, cases[1], explain=anatomy.Budget(cases=0))
    assert searched.status == FAILED and (searched.diagnosis["id"], searched.diagnosis["parameters"]) == \
        ("round-count", {"rounds": 13}) and searched.diagnosis["step"] == "rounds"
    off = run_case(broken, cases[0], explain=anatomy.off())
    assert off.status == FAILED and "anatomy" not in off.diagnosis
    timed = outcomes[0].diagnosis["anatomy"]
    assert 0 <= timed["seconds"] <= timed["budget_seconds"] == anatomy.SECONDS_PER_CASE


def test_a_named_class_keeps_its_id_and_gains_an_anatomy():
    outcome = run_case(KnobbedPhilox(lanes_reversed=True), case((64,)))
    assert outcome.diagnosis["id"] == "lanes-reversed"
    assert "parameters" not in outcome.diagnosis
    assert "own block at another lane" in outcome.diagnosis["anatomy"]["provenance"]["finding"]


def test_an_index_wrap_is_found_past_the_diagnosed_prefix():
    """The window starts at the first wrong element, wherever it is (here past 4096: k = 13)."""
    from panel import IndexWraps

    outcome = run_case(IndexWraps(13), case((9000,)))
    assert outcome.diagnosis["id"] == "index-wrap" and outcome.diagnosis["parameters"] == {"bits": 13}
    assert outcome.diagnosis["anatomy"]["window"]["first"] <= 8192 < outcome.diagnosis["anatomy"]["window"]["first"] + \
        outcome.diagnosis["anatomy"]["window"]["count"]


def test_bit_anatomy_of_a_single_flipped_bit_and_of_a_byte_order():
    from panel import ByteSwapped, FlipsOneBit

    flipped = run_case(FlipsOneBit(), case((200,))).diagnosis["anatomy"]["bits"]
    assert flipped["positions"][9] == flipped["words"] == 4 and sum(flipped["positions"]) == 4
    assert flipped["density"] == "sparse"
    swapped = run_case(ByteSwapped(), case((200,))).diagnosis
    assert swapped["id"] == "byte-order" and swapped["parameters"] == {"order": [3, 2, 1, 0]}
    assert swapped["anatomy"]["bits"]["byte_order"] == [3, 2, 1, 0]


def test_every_family_id_the_anatomy_writes_is_registered():
    source = Path(anatomy.__file__).read_text()
    written = set(re.findall(r'family\("([^"]+)"', source))
    assert written and written <= set(diagnosis.FAMILIES)
    assert not set(diagnosis.FAMILIES) & set(checks.CHECKS)
    with pytest.raises(KeyError, match="not registered"):
        diagnosis.family("lane-permutations", "x")


def test_terminal_junit_html_and_json_show_the_anatomy():
    from panel import LanesRotatedInSomeBlocks
    from rngcheck.reports import html, junit, terminal
    from rngcheck.results import schema

    document = run([NamedBackend("rotated", LanesRotatedInSomeBlocks("rotated"))],
                   RunOptions(profile="quick", select=["mapping/elements-64"]))
    (result,) = document["results"]
    assert result["message"] == "16 of 64 elements differ; looks like: lane-permutation"  # the one line as before
    found = result["diagnosis"]
    assert found["parameters"]["maps"] == [{"lanes": [[0, 1], [0, 2], [0, 3], [0, 0]],
                                            "blocks": {"period": 4, "residues": [3]}}]
    assert found["anatomy"]["provenance"]["counts"] == {"same-block": 16}
    schema.validate(document, "rngcheck-result")
    shown = terminal.summary(document)
    assert "1 case: lane-permutation\n" in shown + "\n"   # the group, named once, then what the family found
    assert "lanes permuted: lanes (0, 1, 2, 3) hold lanes (1, 2, 3, 0) in every 4th block (blocks 3 mod 4)" in shown
    assert "anatomy: provenance: 16 of 16 wrong elements are words of their own block at another lane" in shown
    tree = junit.to_junit(document)
    (failure,) = tree.getroot().iter("failure")
    assert "anatomy: bits: dense" in failure.text
    properties = {p.get("name"): p.get("value") for p in tree.getroot().iter("property")}
    assert properties["rngcheck.anatomy.0"].startswith("anatomy: provenance: 16 of 16")
    page = html.render([document])
    assert "<th>anatomy</th>" in page and "provenance: 16 of 16 wrong elements" in page


def test_were_hypothesis_to_find_the_search_flaky_it_is_still_the_backend_s_verdict(monkeypatch):
    """One answer per description makes the search consistent; a Flaky all the same is not rngcheck's error."""
    import hypothesis
    from hypothesis.errors import Flaky

    def flaky_find(strategy, condition, **kw):
        condition(case((9,)))  # the backend fails this description ...
        raise Flaky("inconsistent results")  # ... and hypothesis then calls it flaky

    monkeypatch.setattr(hypothesis, "find", flaky_find)
    outcome = axes.run_case(KnobbedPhilox(rounds=13), property_case())
    assert outcome.status == FAILED and outcome.diagnosis["id"] == "nondeterministic", outcome.message
    assert outcome.reproduce["sizes"] == "9" and "inconsistent results" in outcome.message
