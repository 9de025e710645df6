"""No wrong names (rngcheck.results.groups rule 6): a class is said to be the cause only when it
reproduces every failure of its part (backend, layer, output or state); one that reproduces some is
said as the closest, with how many it explains and what the others are."""

from __future__ import annotations

import pytest

from panel import KnobbedPhilox
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.results.groups import failure_groups
from test_panel import SMALL

SMALL_TENSOR = 64


class MixedFaults(KnobbedPhilox):
    """Two faults in one backend: lanes reversed up to 64 elements, 7 rounds above."""

    def logical_words(self, state, n):
        small = n <= SMALL_TENSOR
        self.knobs.update(lanes_reversed=small, rounds=10 if small else 7)
        try:
            return super().logical_words(state, n)
        finally:
            self.knobs.update(lanes_reversed=False, rounds=10)


def _groups(backend):
    document = run([NamedBackend("b", backend)], RunOptions(profile="quick", select=SMALL))
    (groups,) = failure_groups(document).values()
    return document, groups


@pytest.fixture(scope="module")
def mixed():
    return _groups(MixedFaults())


def test_two_mixed_faults_are_each_the_closest_never_the_cause(mixed):
    _, groups = mixed
    by_id = {g.diagnosis: g for g in groups}
    lanes, rounds = by_id["lanes-reversed"], by_id["rounds-7"]
    for group, other in ((lanes, rounds), (rounds, lanes)):
        assert group.closest, group.label()
        assert group.explains == group.count < group.weighed == lanes.count + rounds.count
        assert group.label().startswith(f"{group.count} cases: closest: {group.diagnosis}, explains "
                                        f"{group.count} of {group.weighed}; the other {other.count}: "
                                        f"{other.diagnosis} ({other.count})")


def test_no_model_group_of_a_mixed_backend_claims_to_be_the_cause(mixed):
    document, groups = mixed
    answered = [r for r in document["results"] if r["status"] == "failed" and "alternatives" in (r["diagnosis"] or {})]
    for group in groups:
        if group.weighed:
            reproduced = [r for r in answered
                          if group.diagnosis in {r["diagnosis"]["id"], *r["diagnosis"]["alternatives"]}]
            assert group.closest == (len(reproduced) < len(answered))


def test_one_fault_is_one_named_group_even_where_a_case_first_matched_a_narrower_class():
    """increment = floor(n / 4): n < 4 returns the state unchanged, which state-not-advanced also
    predicts; increment-floor predicts every case, so it is the cause and the only group."""
    document, groups = _groups(KnobbedPhilox(increment="floor"))
    first = {r["diagnosis"]["id"] for r in document["results"] if r["status"] == "failed"}
    assert {"increment-floor", "state-not-advanced"} <= first
    (group,) = groups
    assert group.diagnosis == "increment-floor" and not group.closest
    assert group.explains == group.weighed == group.count
    assert group.label() == f"{group.count} cases: increment-floor"


def _result(case, diagnosis, alternatives=(), wrong=3):
    return {"backend": "b", "case": case, "status": "failed", "required": True, "mismatch_count": wrong,
            "diagnosis": {"id": diagnosis, "summary": diagnosis, "alternatives": list(alternatives)}}


def test_a_class_that_explains_some_of_a_part_is_the_closest_and_the_parts_are_apart():
    cases = [{"id": f"c{i}", "layer": "words", "size": i + 1} for i in range(5)] + \
        [{"id": "n0", "layer": "numbers", "size": 1}]
    results = [_result("c0", "x"), _result("c1", "x", ["y"]), _result("c2", "y", ["x"]), _result("c3", "unknown"),
               _result("c4", "s", wrong=0), _result("n0", "z")]
    groups = {g.diagnosis: g for g in failure_groups({"cases": cases, "results": results})["b"]}
    assert (groups["x"].explains, groups["x"].weighed) == (3, 4) and groups["x"].closest
    assert "the other 1: unknown (1)" in groups["x"].label()
    assert (groups["y"].explains, groups["y"].weighed) == (2, 4) and groups["y"].closest   # no cause: apart
    assert groups["y"].others == "x (1), unknown (1)"
    assert not groups["s"].closest and groups["s"].weighed == 1  # the returned state is its own part
    assert not groups["z"].closest and groups["z"].weighed == 1  # so is another layer
    assert groups["unknown"].weighed == 0                        # unknown names nothing: never weighed


def test_a_class_in_every_answer_of_a_part_is_its_cause_and_takes_its_cases():
    cases = [{"id": f"c{i}", "layer": "words", "size": i + 1} for i in range(3)]
    results = [_result("c0", "x"), _result("c1", "y", ["x"]), _result("c2", "x", ["y"])]
    (group,) = failure_groups({"cases": cases, "results": results})["b"]
    assert group.diagnosis == "x" and group.count == 3 and not group.closest and group.label() == "3 cases: x"


def test_every_surface_says_closest_not_the_cause(mixed):
    from rngcheck.reports import html, junit, summary, terminal

    document, _ = mixed
    assert "closest: lanes-reversed, explains" in terminal.summary(document)
    properties = [p.get("value") for p in junit.to_junit(document).getroot().iter("property")]
    assert any("closest: rounds-7, explains" in str(value) for value in properties)
    page = html.render([document])
    assert "not the cause: it explains" in page and "closest: <span class=\"diag-id\">rounds-7</span>" in page
    markdown = summary.render(html.build(html.sources_of([document]), figures=False))
    assert "closest: `lanes-reversed` (not the cause: it explains" in markdown


def test_a_searched_step_and_an_inference_are_said_on_every_surface(mixed):
    import copy

    from rngcheck.reports import html, junit, terminal
    from rngcheck.results.text import detail_lines

    document = copy.deepcopy(mixed[0])
    search = {"step": "key schedule", "parameters": {"weyl": ["0xbb67ae85", "0x9e3779b9"]},
              "inference": "the words equal Philox4x32 with key (0x1, 0x2)"}
    failed = [r for r in document["results"] if r["status"] == "failed"]
    for result in failed:
        result["diagnosis"].update(search)
    step = 'step: key schedule (weyl=["0xbb67ae85","0x9e3779b9"])'
    assert step in detail_lines(failed[0]) and f"inference: {search['inference']}" in detail_lines(failed[0])
    assert step in terminal.summary(document)
    said = [(p.get("name"), p.get("value")) for p in junit.to_junit(document).getroot().iter("property")]
    assert ("rngcheck.diagnosis.step", step.removeprefix("step: ")) in said
    page = html.render([document])
    assert "<th>step</th>" in page and "<th>inference</th>" in page and search["inference"] in page


def test_a_fault_of_one_conversion_is_not_weighed_against_another_conversion_s():
    """OpenVINO's three numbers defects (measured): an int64 range in 32 bits, a float computed in
    float32, an int32 full range overflowing: each is the cause of its own part's failures."""
    cases = [{"id": f"i{i}", "layer": "numbers", "part": "tensorflow integers int64", "size": 1} for i in range(3)] + \
        [{"id": f"u{i}", "layer": "numbers", "part": "tensorflow uniform float16", "size": 1} for i in range(2)]
    results = [_result(f"i{i}", "integers-range-32-bit") for i in range(3)] + \
        [_result(f"u{i}", "uniform-computed-in-float32") for i in range(2)]
    groups = failure_groups({"cases": cases, "results": results})["b"]
    assert [(g.label(), g.closest) for g in groups] == [("3 cases: integers-range-32-bit", False),
                                                        ("2 cases: uniform-computed-in-float32", False)]
    for case in cases:
        case["part"] = ""
    groups = failure_groups({"cases": cases, "results": results})["b"]
    assert all(g.closest for g in groups)   # one part: each explains only some
