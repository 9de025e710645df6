"""``rngcheck repro`` shows what the backend returned beside what it should have: words and state."""

import json
import re

import numpy as np

from rngcheck import counter, reference
from rngcheck.conformance.directml.comparison import INDICES_KEPT
from rngcheck.conformance.directml.repro import TERMINAL_ROWS
from test_cli import PANEL, rngcheck

STATE = "0xffffffff,0,0,0,1,2"  # the counter carries out of word 0 on the first advance
STATE_WORDS = [0xFFFFFFFF, 0, 0, 0, 1, 2]
WORD = re.compile(r"[0-9a-f]{8}\*?")


def repro(backend, *args):
    return rngcheck("repro", "--backend", backend, "--state", STATE, *args)


def words_table(stdout: str) -> dict:
    """{element index of a row: (expected words, actual words, marked)} of the printed words."""
    rows = {}
    for line in stdout.splitlines():
        tokens = line.split()
        if len(tokens) >= 3 and tokens[0].isdigit() and all(WORD.fullmatch(t) for t in tokens[1:]):
            k = (len(tokens) - 1) // 2
            rows[int(tokens[0])] = ([int(t, 16) for t in tokens[1:1 + k]],
                                    [int(t.rstrip("*"), 16) for t in tokens[1 + k:]],
                                    [t.endswith("*") for t in tokens[1 + k:]])
    return rows


def state_rows(stdout: str) -> tuple[list[int], list[int], list[bool]]:
    """(expected, actual, marked) of the printed output state."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("output state"))
    expected, actual = lines[start + 1].split(), lines[start + 2].split()
    assert expected[0] == "expected" and actual[0] == "actual"
    return ([int(t, 16) for t in expected[1:]], [int(t.rstrip("*"), 16) for t in actual[1:]],
            [t.endswith("*") for t in actual[1:]])


def flat(rows: dict, part: int) -> list:
    return [w for first in sorted(rows) for w in rows[first][part]]


def test_numpy_shows_the_expected_words_and_state_as_its_own_with_no_marker():
    result = repro("numpy", "--sizes", "2,3")
    assert result.returncode == 0 and "rngcheck: PASS" in result.stdout
    rows = words_table(result.stdout)
    assert sorted(rows) == [0, 4]  # a row per Philox block, labelled by its first element
    assert flat(rows, 0) == flat(rows, 1) == reference.words(STATE_WORDS, 0, 6).tolist()
    assert "*" not in result.stdout
    assert "all 6 words as expected" in result.stdout
    expected, actual, marked = state_rows(result.stdout)
    assert expected == actual == counter.advance(STATE_WORDS, 6).tolist() and not any(marked)


def test_a_lanes_reversed_backend_shows_its_words_all_marked():
    result = repro(f"{PANEL}:LanesReversed", "--sizes", "8")
    assert result.returncode == 1 and "1 case: lanes-reversed" in result.stdout
    rows = words_table(result.stdout)
    right = reference.words(STATE_WORDS, 0, 8).reshape(2, 4)
    assert flat(rows, 0) == right.reshape(-1).tolist()
    assert flat(rows, 1) == right[:, ::-1].reshape(-1).tolist()  # what the backend wrote
    assert all(flat(rows, 2))
    assert "8 of 8 words differ: first at element 0, last at element 7" in result.stdout
    expected, actual, marked = state_rows(result.stdout)
    assert expected == actual and not any(marked)


def test_the_markers_are_on_exactly_the_differing_words():
    result = repro(f"{PANEL}:FlipsTwoWords", "--sizes", "2,5")
    assert result.returncode == 1
    rows = words_table(result.stdout)
    expected, actual, marked = flat(rows, 0), flat(rows, 1), flat(rows, 2)
    assert len(actual) == 10
    assert [i for i, m in enumerate(marked) if m] == [i for i in range(10) if expected[i] != actual[i]] == [1, 8]
    assert actual[1] == expected[1] ^ 1 and actual[8] == expected[8] ^ 1
    assert "2 of 10 words differ: first at element 1, last at element 8" in result.stdout


def test_a_state_not_advanced_shows_the_returned_state_with_the_wrong_words_marked():
    result = repro(f"{PANEL}:StateNotAdvanced", "--sizes", "2,3")
    assert result.returncode == 1 and "1 case: state-not-advanced" in result.stdout
    expected, actual, marked = state_rows(result.stdout)
    assert expected == counter.advance(STATE_WORDS, 6).tolist() == [1, 1, 0, 0, 1, 2]
    assert actual == STATE_WORDS
    assert marked == [True, True, False, False, False, False]
    assert "2 of 6 words differ (words 0, 1)" in result.stdout
    rows = words_table(result.stdout)
    assert flat(rows, 0) == flat(rows, 1) and not any(flat(rows, 2))


def test_json_holds_the_description_words_state_differences_and_verdict(tmp_path):
    path = tmp_path / "out" / "repro.json"
    result = repro(f"{PANEL}:FlipsTwoWords", "--sizes", "2,5", "--strides", "7,1", "--json", str(path))
    assert result.returncode == 1
    document = json.loads(path.read_text())
    assert document["schema"] == "rngcheck-repro" and document["schema_version"] == 1
    assert document["description"]["sizes"] == [2, 5] and document["description"]["strides"] == [7, 1]
    assert document["description"]["element_count"] == 10
    assert document["verdict"] == "fail" and document["result"]["status"] == "failed"
    assert document["result"]["diagnosis"]["id"] == "unknown"
    assert document["reproduce"].startswith("rngcheck repro --backend")
    words = document["words"]
    assert words["complete"] and words["differing_indices_complete"]
    (window,) = words["windows"]
    right = reference.words(STATE_WORDS, 0, 10).tolist()
    assert window["first"] == 0 and window["expected"] == right
    assert window["actual"] == [w ^ 1 if i in (1, 8) else w for i, w in enumerate(right)]
    assert words["differing_indices"] == [1, 8] and words["differing_count"] == 2 and words["last_differing"] == 8
    state = document["output_state"]
    assert state["expected"] == state["actual"] == counter.advance(STATE_WORDS, 10).tolist()
    assert state["differing"] == [] and state["returned"] == ""

    clean = repro("numpy", "--sizes", "3", "--json", str(path))
    assert clean.returncode == 0
    document = json.loads(path.read_text())
    assert document["verdict"] == "pass" and document["words"]["differing_indices"] == []
    assert document["words"]["windows"][0]["expected"] == document["words"]["windows"][0]["actual"]


def test_json_of_a_call_that_did_not_complete_has_no_words(tmp_path):
    path = tmp_path / "repro.json"
    result = repro(f"{PANEL}:Crashes", "--sizes", "4", "--json", str(path))
    assert result.returncode == 1 and "words: none to show" in result.stdout
    document = json.loads(path.read_text())
    assert document["words"] is None and document["output_state"] is None
    assert document["result"]["status"] == "error"


def test_json_of_a_garbage_state_says_what_came_back(tmp_path):
    path = tmp_path / "repro.json"
    result = repro(f"{PANEL}:GarbageState", "--sizes", "4", "--json", str(path))
    assert result.returncode == 1 and "actual    (not 6 uint32 words" in result.stdout
    state = json.loads(path.read_text())["output_state"]
    assert state["actual"] is None and "not 6 uint32 words" in state["returned"]
    assert state["differing"] == [0, 1, 2, 3, 4, 5]


def test_a_large_tensor_prints_a_bounded_window_and_counts_every_difference(tmp_path):
    path = tmp_path / "repro.json"
    result = repro(f"{PANEL}:LanesReversed", "--sizes", "1000,1000", "--json", str(path))
    assert result.returncode == 1
    assert len(result.stdout.splitlines()) < TERMINAL_ROWS + 30
    rows = words_table(result.stdout)
    assert sorted(rows) == [4 * r for r in range(TERMINAL_ROWS)] and all(flat(rows, 2))
    assert "1000000 of 1000000 words differ: first at element 0, last at element 999999" in result.stdout
    assert f"shown: {TERMINAL_ROWS} of 250000 rows, with {4 * TERMINAL_ROWS} of the 1000000 differing words" \
        in result.stdout
    assert "(249984 rows not shown)" in result.stdout
    words = json.loads(path.read_text())["words"]
    assert not words["complete"] and not words["differing_indices_complete"]
    assert words["differing_count"] == 1_000_000 and words["differing_indices"] == list(range(INDICES_KEPT))
    assert sum(len(w["actual"]) for w in words["windows"]) < 2 * INDICES_KEPT
    assert path.stat().st_size < 200_000


def test_a_large_tensor_shows_the_rows_around_each_sparse_difference():
    result = repro(f"{PANEL}:FlipsTwoWords", "--sizes", "1000,1000")
    assert result.returncode == 1
    rows = words_table(result.stdout)
    assert sorted(rows) == [0, 4, 999992, 999996]  # each differing row with its neighbours
    marked = [first + i for first in sorted(rows) for i, m in enumerate(rows[first][2]) if m]
    assert marked == [1, 999998]
    assert "(249996 rows not shown)" in result.stdout  # the gap between the two windows
    assert "2 of 1000000 words differ: first at element 1, last at element 999998" in result.stdout
    expected, actual, marked = state_rows(result.stdout)
    assert expected == actual and not any(marked)


def test_comparison_rows_are_bounded_whatever_the_differences():
    from rngcheck.conformance.directml import cases as C
    from rngcheck.conformance.directml.comparison import WordComparison

    case = C.Case(id="x", category="x", description="", rule="", source="", sizes=(4000,))
    state = counter.state_array(STATE_WORDS)
    tensor = np.zeros(4000, dtype=np.uint32)
    scattered = list(range(0, 4000, 40))
    words = WordComparison(case, state, tensor, len(scattered), scattered, scattered[-1])
    assert words.rows(1000) == list(range(1000))          # every row fits
    assert len(words.rows(16)) <= 16 and words.rows(16)[:3] == [0, 1, 9]
    windows = words.windows(16)
    assert sum(w.expected.size for w in windows) == 4 * len(words.rows(16))
    assert all(w.expected.tolist() == reference.words(state, w.first, w.expected.size).tolist() for w in windows)
