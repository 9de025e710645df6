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
