"""A backend's failures said once per fault (rngcheck.results.groups): what they share, the smallest
case and its reproduce line, the same in the terminal, the JUnit file and the markdown summary."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from probes import rngcheck as run_rngcheck
from rngcheck.results.groups import failure_groups

TESTS = Path(__file__).resolve().parent
FLIP = f"{TESTS / 'faults.py'}:FlipsBitOfElement5"


def rngcheck(*args, timeout=600):
    return run_rngcheck(*args, timeout=timeout)


@pytest.fixture(scope="module")
def flipped(tmp_path_factory):
    folder = tmp_path_factory.mktemp("flip")
    done = rngcheck("run", "--backend", FLIP, "--profile", "quick", "--json", str(folder / "r.json"),
                    "--junit", str(folder / "r.xml"))
    return done, json.loads((folder / "r.json").read_text()), folder


def test_one_fault_is_one_group_naming_the_element_and_the_bit(flipped):
    done, document, _ = flipped
    (groups,) = failure_groups(document).values()
    assert len(groups) == 1
    (group,) = groups
    failed = [r for r in document["results"] if r["status"] == "failed"]
    assert group.count == len(failed) > 50
    assert group.pattern == "only element 5, bit 0 flipped"
    # the smallest case: 6 elements, the first that has an element 5
    sizes = {c["id"]: c["size"] for c in document["cases"]}
    assert sizes[group.example["case"]] == min(sizes[r["case"]] for r in failed if sizes[r["case"]])
    assert group.reproduce.startswith("rngcheck repro --backend ") and "--sizes 6" in group.reproduce


def test_the_terminal_names_element_and_bit_once_in_at_most_25_lines(flipped):
    done, _, _ = flipped
    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    assert len(lines) <= 25, done.stdout
    assert done.stdout.count("only element 5, bit 0 flipped") == 1
    assert done.stdout.count("looks like") <= 1   # the example's message only: no per-case blocks
    assert lines[-2].startswith("rngcheck: FAIL")


def test_the_junit_suite_carries_the_groups(flipped):
    _, _, folder = flipped
    suite = ET.parse(folder / "r.xml").getroot().find("testsuite")
    said = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert said["rngcheck.verdict"] == "fail"
    assert "only element 5, bit 0 flipped" in said["rngcheck.group.1"]
    assert said["rngcheck.group.1.reproduce"].startswith("rngcheck repro")
    assert "rngcheck.group.2" not in said


def test_the_markdown_summary_says_the_group(flipped, tmp_path):
    _, _, folder = flipped
    done = rngcheck("report", str(folder / "r.json"), "--summary", str(tmp_path / "s.md"))
    assert done.returncode == 1
    text = (tmp_path / "s.md").read_text()
    assert "only element 5, bit 0 flipped" in text and "smallest" in text


def test_different_faults_are_different_groups():
    """Two results with other wrong elements and another mask are two groups; a result whose wrong words
    are not all listed joins the group of its diagnosis alone."""
    def result(case, index, mask, diagnosis="unknown", listed=True):
        rows = [{"index": index, "expected": "0x00000000", "actual": f"0x{mask:08x}"}]
        return {"backend": "b", "case": case, "status": "failed", "required": True, "diagnosis": {"id": diagnosis},
                "mismatches": rows, "mismatch_count": 1 if listed else 9, "message": "", "reproduce_command": None}
    document = {"backends": [{"name": "b", "spec": "b"}], "cases": [{"id": c, "size": n} for c, n in
                                                                     (("x", 8), ("y", 9), ("z", 7), ("w", 6))],
                "results": [result("x", 5, 1), result("y", 5, 1), result("z", 2, 0x80),
                            result("w", 3, 0x5, listed=False)]}
    groups = failure_groups(document)["b"]
    assert [(g.count, g.pattern) for g in groups] == [(2, "only element 5, bit 0 flipped"),
                                                       (1, "only element 2, bit 7 flipped"), (1, "")]
    assert groups[0].example["case"] == "x"   # the smaller of the two
    assert groups[2].reproduce == "rngcheck run --backend b --case w"
