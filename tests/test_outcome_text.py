"""One way to say an outcome (rngcheck.results.text): the terminal summary, rngcheck's JUnit file,
the HTML report and the pytest plugin say a wrong element with the same line, and a failure with
the same text; pytest's --junitxml carries the diagnosis and the reproduce command as properties."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from panel import philox_blocks
from rngcheck.results import text

PANEL = str(Path(__file__).parent / "panel.py")
FLIPS, LANES = f"{PANEL}:FlipsTwoWords", f"{PANEL}:LanesReversed"
CASE = "layout/column-major"   # sizes 1,1,3,5, strides 15,15,1,3: an element's offset is not its index

ROW = {"index": 13, "coordinates": [0, 0, 2, 3], "offset": 11, "expected": "0xf872289c", "actual": "0xf872289d",
       "philox_counter": "0x0370734413198a2e85a308d3243f6a8b", "lane": 1}


def test_the_mismatch_line_says_every_field_of_a_row():
    assert text.mismatch_line(ROW) == ("element 13 (0, 0, 2, 3) at offset 11: expected 0xf872289c, got 0xf872289d "
                                       "(counter 0x0370734413198a2e85a308d3243f6a8b, lane 1)")
    assert text.mismatch_fields(ROW)["coordinates"] == "(0, 0, 2, 3)"


@pytest.mark.parametrize("row", [{}, {"index": None, "coordinates": "x"}, "not a row", None, {"lane": [1]}])
def test_a_damaged_row_is_said_with_question_marks_not_an_exception(row):
    line = text.mismatch_line(row)
    assert line.startswith("element ") and " at offset " in line and "lane" in line
    assert set(text.mismatch_fields(row)) == set(text.MISMATCH_FIELDS)
    if row in ({}, None, "not a row"):
        assert line == "element ? ? at offset ?: expected ?, got ? (counter ?, lane ?)"


def _result(**changes):
    result = {"backend": "b", "case": "c", "status": "failed", "required": True, "message": "2 of 15 elements differ",
              "diagnosis": {"id": "lanes-reversed", "summary": "the four lanes in reverse order"},
              "mismatches": [ROW, dict(ROW, index=14), dict(ROW, index=15)], "mismatch_count": 2,
              "reproduce_command": "rngcheck repro --backend b --state 1,2,3,4,5,6 --sizes 15"}
    result.update(changes)
    return result


def test_the_failure_text_is_message_diagnosis_mismatches_rule_reproduce_in_that_order():
    lines = text.failure_lines(_result(), {"rule": "element i is lane i mod 4", "source": "DirectML"})
    assert lines == ["2 of 15 elements differ", "diagnosis: lanes-reversed: the four lanes in reverse order",
                     text.mismatch_line(ROW), text.mismatch_line(dict(ROW, index=14)),
                     text.mismatch_line(dict(ROW, index=15)), "rule: element i is lane i mod 4 (DirectML)",
                     "reproduce: rngcheck repro --backend b --state 1,2,3,4,5,6 --sizes 15"]
    shown = text.detail_lines(_result(), mismatches=2)
    assert shown == lines[1:4] + lines[-1:]
    bare = text.failure_lines(_result(message="", diagnosis=None, mismatches="junk", reproduce_command=None))
    assert bare == []


def test_null_fields_of_a_damaged_result_are_question_marks_not_none():
    row = dict(ROW, coordinates=[0, None, 2])
    assert text.mismatch_fields(row)["coordinates"] == "(0, ?, 2)"
    damaged = _result(diagnosis={"id": None, "summary": None}, mismatch_count=None)
    assert text.diagnosis_line(damaged["diagnosis"]) == "diagnosis: ?:"
    said = dict(text.properties(damaged))
    assert said["rngcheck.diagnosis"] == "?" and said["rngcheck.mismatch_count"] == "3"
    assert "None" not in " ".join(text.failure_lines(damaged) + [v for _, v in text.properties(damaged)])


def test_the_terminal_tags_a_failure_with_its_diagnosis_and_does_not_repeat_it():
    """The terminal names a failure group by its diagnosis id once; its example's detail lines are the
    mismatches and the reproduce command, with no separate diagnosis line."""
    import panel
    from rngcheck.conformance.runner import NamedBackend, RunOptions, run
    from rngcheck.reports import terminal
    document = run([NamedBackend("lanes", panel.LanesReversed())],
                   RunOptions(profile="quick", seed=0, select=["layout/column-major"]))
    failed = [r for r in document["results"] if r["status"] == "failed"]
    assert failed and failed[0]["diagnosis"]["id"] == "lanes-reversed"
    shown = terminal.summary(document)
    assert "1 case: lanes-reversed" in shown and "diagnosis:" not in shown
    assert text.mismatch_line(failed[0]["mismatches"][0]) in shown and "reproduce: rngcheck repro" in shown


def test_properties_say_status_diagnosis_first_mismatch_and_reproduce_and_nothing_for_a_pass():
    said = dict(text.properties(_result()))
    assert said == {"rngcheck.status": "failed", "rngcheck.diagnosis": "lanes-reversed",
                    "rngcheck.diagnosis.summary": "the four lanes in reverse order",
                    "rngcheck.mismatch": text.mismatch_line(ROW), "rngcheck.mismatch_count": "2",
                    "rngcheck.reproduce": "rngcheck repro --backend b --state 1,2,3,4,5,6 --sizes 15"}
    assert text.properties(_result(status="passed")) == []
    assert dict(text.properties(_result(required=False)))["rngcheck.status"] == "info"
    assert dict(text.properties(_result(status="bogus", diagnosis="x", mismatches=[]))) == {
        "rngcheck.status": "error", "rngcheck.reproduce": "rngcheck repro --backend b --state 1,2,3,4,5,6 --sizes 15"}


def _pytest(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)


def _failures(root) -> list:
    """[(testcase name, its properties, its failure text)] of a JUnit tree."""
    return [(case.get("name"), {p.get("name"): p.get("value") for p in case.iter("property")},
             case.find("failure").text) for case in root.iter("testcase") if case.find("failure") is not None]


def test_terminal_junit_html_and_pytest_say_a_failure_with_the_same_lines(tmp_path):
    from rngcheck.reports import html

    run = subprocess.run([sys.executable, "-m", "rngcheck", "run", "--backend", FLIPS, "--backend", LANES,
                          "--case", CASE, "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    document = json.loads((tmp_path / "r.json").read_text())
    tested = _pytest(tmp_path, "--pyargs", "rngcheck.conformance", "--rngcheck-backend", FLIPS, "--rngcheck-backend",
                     LANES, "-k", f"{CASE}]", "--junitxml", str(tmp_path / "pytest.xml"))
    assert tested.returncode == 1 and "2 failed" in tested.stdout, tested.stdout[-3000:]
    by_backend = {r["backend"]: r for r in document["results"]}
    flips, lanes = by_backend["FlipsTwoWords"], by_backend["lanes-reversed"]

    # The line says what the DirectML rule says about element 13 of sizes (1,1,3,5), strides (15,15,1,3),
    # computed here without rngcheck: its coordinates, offset, counter, lane, and the word (the panel's Philox).
    coords = np.unravel_index(13, (1, 1, 3, 5))
    state = [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0]
    counter = sum(w << (32 * i) for i, w in enumerate(state[:4])) + 13 // 4
    block = philox_blocks(np.array([[(counter >> (32 * i)) & 0xFFFFFFFF for i in range(4)]], dtype=np.uint64),
                          state[4], state[5])
    word = int(block[0, 13 % 4])
    line = text.mismatch_line(flips["mismatches"][1])
    assert line == (f"element 13 ({', '.join(map(str, coords))}) at offset {int(np.dot(coords, (15, 15, 1, 3)))}: "
                    f"expected 0x{word:08x}, got 0x{word ^ 1:08x} (counter 0x{counter:032x}, lane {13 % 4})")

    ours = _failures(ET.parse(tmp_path / "r.xml").getroot())
    theirs = _failures(ET.parse(tmp_path / "pytest.xml").getroot())
    terminal = [ln.strip() for ln in run.stdout.splitlines()]
    pytest_lines = tested.stdout.splitlines()
    assert len(ours) == len(theirs) == 2
    for spec, result in ((FLIPS, flips), (LANES, lanes)):
        (properties, failure), = [(p, body) for name, p, body in theirs if name == f"test_case[{spec}:{CASE}]"]
        # pytest's failure text is rngcheck's JUnit failure text of the same result, line for line,
        # and the properties are the same
        (our_properties, our_failure), = [(p, body) for name, p, body in ours
                                          if p["rngcheck.reproduce"] == result["reproduce_command"]]
        assert failure == our_failure and properties == our_properties
        assert properties["rngcheck.reproduce"] == result["reproduce_command"] and result["reproduce_command"]
        assert properties["rngcheck.diagnosis"] == result["diagnosis"]["id"]
        assert properties["rngcheck.status"] == "failed"
        assert properties["rngcheck.mismatch"] == text.mismatch_line(result["mismatches"][0])
        for row in result["mismatches"][:2]:   # what the terminal shows, each line as pytest and JUnit say it
            assert text.mismatch_line(row) in terminal and text.mismatch_line(row) in failure.splitlines()
        if result is flips:
            assert line in terminal and line in failure.splitlines() and line in pytest_lines
    assert lanes["diagnosis"]["id"] == "lanes-reversed"

    # the HTML report's mismatch table has the same fields
    model = html.build(html.sources_of([document]), figures=False)
    shown = next(f for c in model["columns"] for f in c["failures"] if c["name"] == "FlipsTwoWords")
    assert shown["mismatches"][1] == text.mismatch_fields(flips["mismatches"][1])
    fields = text.mismatch_fields(flips["mismatches"][1])
    assert f'<td>{fields["coordinates"]}</td><td class="num">{fields["offset"]}</td>' in html.render_model(model)


def test_the_pytest_header_names_each_backend_with_its_describe_and_junit_has_it(tmp_path):
    tested = _pytest(tmp_path, "--pyargs", "rngcheck.conformance", "--rngcheck-backend", LANES,
                     "--rngcheck-seed", "7", "-k", "kat", "--junitxml", str(tmp_path / "j.xml"))
    assert tested.returncode == 1, tested.stdout[-3000:]   # LanesReversed fails the known-answer tests
    header = tested.stdout.split("collected", 1)[0]
    assert "rngcheck: profile quick, seed 7" in header
    assert f"rngcheck backend {LANES}: implementation=tests/panel.py KnobbedPhilox, knobs=" in header
    assert "'lanes_reversed': True" in header
    root = ET.parse(tmp_path / "j.xml").getroot()
    suite_properties = {p.get("name"): p.get("value") for p in root.find("testsuite").find("properties")}
    assert suite_properties[f"rngcheck.backend.{LANES}.implementation"] == "tests/panel.py KnobbedPhilox"
    failing = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert failing and all({p.get("name") for p in c.iter("property")} >= {"rngcheck.diagnosis", "rngcheck.reproduce"}
                           for c in failing)


def test_without_a_backend_the_plugin_adds_no_header_line_and_no_property(tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_ok():\n    assert True\n")
    tested = _pytest(tmp_path, "test_plain.py", "--junitxml", str(tmp_path / "j.xml"))
    assert tested.returncode == 0, tested.stdout
    assert "rngcheck" in _pytest(tmp_path, "--help").stdout   # the plugin is loaded: its options are there
    assert "rngcheck backend" not in tested.stdout and "rngcheck: profile" not in tested.stdout
    assert "rngcheck" not in (tmp_path / "j.xml").read_text()


def test_an_info_outcome_passes_in_pytest_with_a_report_section_and_its_status_property(tmp_path):
    tested = _pytest(tmp_path, "--pyargs", "rngcheck.conformance", "--rngcheck-backend", "numpy", "-k",
                     "layout/alias-all]", "-rP", "--junitxml", str(tmp_path / "j.xml"))
    assert tested.returncode == 0 and "1 passed" in tested.stdout, tested.stdout[-3000:]
    section = tested.stdout.split("Captured rngcheck call", 1)[1].splitlines()[1:3]
    assert section[0].startswith("implementation-defined: ") and section[1].startswith("rule: ")
    (case,) = ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
    assert {p.get("name"): p.get("value") for p in case.iter("property")}["rngcheck.status"] == "info"


def test_noncharacters_from_a_backend_are_shown_escaped_on_every_surface():
    """U+FFFE and U+FFFF (no text holds them) are shown as escapes, as the controls and format
    characters are (hardening round 4, item 17): the page, the markdown summary and the terminal."""
    from rngcheck.reports import summary

    said = "refused \ufffe\uffff here"
    assert text.visible(said) == "refused \\ufffe\\uffff here"
    assert "\ufffe" not in text.printable(said) and "\\ufffe" in text.printable(said)
    assert "\ufffe" not in summary.md(said) and "\uffff" not in summary.md(said)
