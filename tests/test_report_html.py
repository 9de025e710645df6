"""The HTML comparison report, its markdown summary and `rngcheck report` (reports/html.py,
summary.py, command.py), and the JUnit XML's agreement with the JSON document.

Documents are real: the conformance runner on numpy and on broken backends of the panel,
and `rngcheck stats` on a deliberately biased raw stream.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import panel
from rngcheck import cli
from rngcheck.backends.reference import NumpyBackend
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.errors import RngcheckError
from rngcheck.reports import failures, html, junit, summary
from rngcheck.results import document as D

for _module in ("jinja2", "matplotlib"):  # the report extra: required in CI, skipped without it elsewhere
    if os.environ.get("CI") == "true":
        __import__(_module)
    else:
        pytest.importorskip(_module)

PANEL = str(Path(__file__).parent / "panel.py")
EVIL_NAME = "<script>alert(1)</script>"
EVIL_DEVICE = "<b>bold</b><img src=x onerror=alert(2)> & \"quotes\" 'single'"
EVIL_ERROR = "<img src=x onerror=alert(3)>device lost</td></table>"


class EvilName(panel.KnobbedPhilox):
    """Lanes reversed (so it fails with mismatches), and HTML in everything it says."""

    def __init__(self):
        super().__init__(EVIL_NAME, lanes_reversed=True)

    def describe(self):
        return {"device": EVIL_DEVICE, "driver<i>": "</style><script>alert(4)</script>"}


class EvilCrash(panel.KnobbedPhilox):
    def __init__(self):
        super().__init__("crash <u>underlined</u>")

    def random_generator(self, state, sizes, strides, buffer, **kw):
        raise RuntimeError(EVIL_ERROR)


def result_document(backends, select=(), profile="quick", seed=0):
    """A finished result document, as `rngcheck run --json` writes it."""
    command_line = ["run"] + [w for spec, _ in backends for w in ("--backend", spec)] \
        + [w for pattern in select for w in ("--case", pattern)]
    document = run([NamedBackend(spec, backend) for spec, backend in backends],
                   RunOptions(profile=profile, seed=seed, select=list(select), command=command_line))
    return json.loads(json.dumps(document))  # exactly what a reader of the file gets


def stats_document(tmp_path, biased: bool = True) -> dict:
    """`rngcheck stats --input FILE --json` on a raw stream (bit 0 of lane 0 stuck at 1 when biased)."""
    from rngcheck.stats import command as stats_command

    words = np.random.default_rng(7).integers(0, 2 ** 32, (2 << 20) // 4, dtype=np.uint32)
    if biased:
        words[::4] |= np.uint32(1)
    raw = tmp_path / ("biased.raw" if biased else "fair.raw")
    raw.write_bytes(words.astype("<u4").tobytes())
    out = tmp_path / (raw.stem + ".json")
    parser = argparse.ArgumentParser()
    stats_command.add_arguments(parser)
    stats_command.run(parser.parse_args(["--input", str(raw), "--tier", "smoke", "--bytes", "2M",
                                         "--json", str(out), "--quiet"]))
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def typical():
    """numpy against a broken panel backend, the whole quick profile: the typical comparison."""
    return result_document([("numpy", _load("numpy")), (f"{PANEL}:Only4D", panel.Only4D())])


@pytest.fixture(scope="module")
def counter_reversed():
    return result_document([("numpy", _load("numpy")),
                            ("panel:counter-words-reversed", panel.KnobbedPhilox("counter-words-reversed",
                                                                                 counter_high_first=True))],
                           select=["mapping", "counter", "kat"])


@pytest.fixture(scope="module")
def evil():
    return result_document([("evil.py:EvilName", EvilName()), ("evil.py:EvilCrash", EvilCrash())],
                           select=["kat", "mapping", "layout"])


@pytest.fixture(scope="module")
def stats_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("stats")


@pytest.fixture(scope="module")
def biased_stats(stats_dir):
    return stats_document(stats_dir, biased=True)


def _load(name):
    from rngcheck.backends import load
    return load(name)


class Elements(HTMLParser):
    """Every start tag with its attributes; the text outside tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(text: str) -> Elements:
    parser = Elements()
    parser.feed(text)
    parser.close()
    return parser


def ids_of(text: str) -> list[str]:
    return [attrs["id"] for _, attrs in parse(text).tags if "id" in attrs]


def assert_self_contained(text: str) -> None:
    elements = parse(text)
    names = {tag for tag, _ in elements.tags}
    assert not names & {"script", "link", "iframe", "object", "embed", "img", "base", "form", "audio", "video"}
    for tag, attrs in elements.tags:
        for key, value in attrs.items():
            assert not key.startswith("on"), (tag, key)
            if key in ("src", "href", "xlink:href", "action", "poster"):
                assert value is None or value.startswith(("#", "data:")), (tag, key, value)
    assert "@import" not in text and "url(http" not in text
    assert re.search(r'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'', text)


# ---------------------------------------------------------------------------------------
# Safety: every document string is text.
# ---------------------------------------------------------------------------------------

def test_backend_strings_with_html_are_shown_as_text(evil):
    text = html.render([evil])
    assert EVIL_NAME not in text and "<img src=x" not in text and "<b>bold</b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert_self_contained(text)
    shown = "".join(parse(text).text)
    assert EVIL_NAME in shown                    # the name reads as itself
    assert EVIL_DEVICE in shown
    assert "<img src=x onerror=alert(3)>device lost" in shown   # the exception text, as text
    assert "</style><script>alert(4)</script>" in shown


class ControlCharacters(panel.KnobbedPhilox):
    """A correct backend whose description holds a terminal escape and a NUL."""

    def __init__(self):
        super().__init__("control \x1b[31mred\x00")

    def describe(self):
        return {"device": "GPU \x1b[31mred\x00nul\x7f", "driver\x1b]0;title\x07": "1.0\r\nline"}


def test_control_characters_from_backends_are_shown_as_escapes():
    doc = result_document([("control.py:ControlCharacters", ControlCharacters())], select=["kat"])
    assert doc["backends"][0]["describe"]["device"] == "GPU \x1b[31mred\x00nul\x7f"  # the document keeps it
    text = html.render([doc])
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
    shown = "".join(parse(text).text)
    assert "GPU \\x1b[31mred\\x00nul\\x7f" in shown
    assert "driver\\x1b]0;title\\x07" in shown and "1.0\\x0d" in shown
    assert "control \\x1b[31mred\\x00" in shown
    model = html.build(html.sources_of([doc]), figures=False)
    md = summary.render(model, "report.html")
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", md)
    assert summary.md("a\x1b[31mb\x00c\td") == "a\\\\x1b\\[31mb\\\\x00c d"


def test_document_strings_cannot_break_out_of_attributes_or_figures(evil):
    doc = copy.deepcopy(evil)
    doc["reproduce"] = "\" onmouseover=\"alert(5)"
    text = html.render([doc])
    assert 'onmouseover="alert(5)' not in text
    for tag, attrs in parse(text).tags:
        assert not any(k.startswith("on") for k in attrs), tag
    # the figures carry the backend names as labels: escaped there too
    for svg in re.findall(r"<svg.*?</svg>", text, flags=re.S):
        assert "<script" not in svg and "<img" not in svg


def test_html_report_passes_through_jinja_autoescape_only():
    env = html._environment()
    assert env.autoescape is True
    template = Path(html.__file__).parent / "templates" / html.TEMPLATE
    source = template.read_text()
    assert "|safe" not in source and "Markup(" not in source  # only the `svg` filter marks markup


# ---------------------------------------------------------------------------------------
# Content.
# ---------------------------------------------------------------------------------------

def test_broken_backends_diagnosis_is_at_the_top(counter_reversed, tmp_path):
    path = tmp_path / "report.html"
    html.write([counter_reversed], path)
    text = path.read_text()
    top = text[:text.index('<section id="matrix">')]
    assert 'id="verdict" class="verdict v-FAIL">FAIL<' in top
    assert "counter-words-reversed" in top and "counter words in reverse order" in top
    groups = top[top.index('<section id="diagnoses">'):]
    assert "counter-words-reversed" in groups and "numpy" not in groups   # only the failing backend has groups
    # the matrix, agreement, the first mismatching elements table, reproduction
    assert '<section id="matrix">' in text and '<details class="fold" id="agreement">' in text
    failure = next(r for r in counter_reversed["results"] if r["status"] == "failed" and r["mismatches"])
    assert failure["mismatches"][0]["philox_counter"] in text
    assert failure["mismatches"][0]["expected"] in text and failure["mismatches"][0]["actual"] in text
    assert "rngcheck repro --backend panel:counter-words-reversed" in text
    # configuration: describe(), versions, profile, seed, command line, date, reproduce command
    for needle in ("rngcheck reference model (numpy)", counter_reversed["created"], "quick, seed 0",
                   counter_reversed["environment"]["python"],
                   "numpy " + counter_reversed["environment"]["packages"]["numpy"],
                   counter_reversed["reproduce"].replace("'", "&#39;")):
        assert needle in text, needle


def folded(text: str, name: str) -> str:
    """The folded section ``name`` (a closed <details class="fold">) of a page, from its tag to its end."""
    start = text.index(f'<details class="fold" id="{name}">')
    return text[start:text.index("</details>", start)]


def test_errata_is_next_to_the_cases_with_a_note(counter_reversed):
    text = html.render([counter_reversed])
    section = folded(text, "noted-cases")
    assert 'id="errata"' in section and "324,855" in section
    assert "7479615c" in section
    assert "counter/dml-example-324855" in section


def test_implementation_defined_observations_are_stated(typical):
    text = html.render([typical])
    section = folded(text, "implementation-defined")
    assert "layout/alias-broadcast" in section
    assert "each shared offset holds" in section
    assert "padding" in section


def test_every_case_has_an_anchor_and_failures_have_per_backend_anchors(typical):
    text = html.render([typical])
    ids = ids_of(text)
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1][:5]
    for case in typical["cases"]:
        assert f"case-{case['id']}" in ids, case["id"]
    failing = [r for r in typical["results"] if r["status"] == "failed" and r["required"]]
    assert failing
    for result in failing:
        assert f"case-{result['backend']}-{result['case']}" in ids
    # case-<id> of a failing case is its failure section, showing the diagnosis (a group's first example:
    # shown in full and open)
    model = html.build(html.sources_of([typical]), figures=False)
    (column,) = model["failing_columns"]
    for group in column["diagnoses"]:
        first = group["first"]
        section = re.search(r'<section class="case" id="case-' + re.escape(first["case"]) + r'">(.*?)</section>',
                            text, re.S)
        assert section and first["diagnosis_id"] in section.group(1)
    # links inside the page resolve
    for target in set(re.findall(r'href="#([^"]+)"', text)):
        assert target in ids, target


def test_typical_report_is_well_under_a_megabyte(typical, biased_stats, tmp_path):
    path = tmp_path / "typical.html"
    html.write([typical, biased_stats], path)
    size = path.stat().st_size
    assert size < 600_000, size
    assert_self_contained(path.read_text())


def test_many_failures_stay_bounded():
    doc = result_document([("panel:block-per-element", panel.KnobbedPhilox("block-per-element", per_element=True))],
                          select=["kat", "mapping", "key", "state", "counter/[!d]*"])
    failures = sum(r["status"] == "failed" for r in doc["results"])
    assert failures > html.DETAILED_FAILURES
    text = html.render([doc])
    assert len(text) < 700_000
    ids = ids_of(text)
    for result in doc["results"]:
        if result["status"] == "failed":
            assert f"case-block-per-element-{result['case']}" in ids


def test_stats_section_p_values_histogram_and_lane_picture(typical, biased_stats):
    text = html.render([typical], stats=[biased_stats])
    section = text[text.index('<section id="statistics">'):]
    assert "lanes.frequency" in section
    for entry in biased_stats["results"]:
        assert entry["p_display"].replace("<", "&lt;").replace(">", "&gt;") in section
    rows = re.findall(r'<tr><td class="s-[A-Z]+">.*?</tr>', section)   # the p-values tables' rows
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row)[5:7] for row in rows]    # p-value, retest
    assert len(rows) == len(biased_stats["results"])
    assert cells and not any(c.strip() in ("0", "1", "0.0000", "1.0000", "0.0", "1.0") for c in sum(cells, []))
    assert section.count('<svg class="figure"') >= 2  # p-value histogram, lane x bit picture
    worst = next(e for e in biased_stats["results"] if e["test"] == "lanes.frequency.worst" and e["stream"] == "main")
    assert (worst["lane"], worst["bit"]) == (0, 0)
    assert "most biased cell lane 0, bit 0" in section
    assert biased_stats["verdict"] == "FAIL"
    assert 'id="verdict" class="verdict v-FAIL"' in text


def test_p_values_never_shown_as_0_or_1():
    assert html.p_text({"p_value": 0.0, "q_value": None, "log10_p": -400.0}) == "1e-400"
    assert html.p_text({"p_value": 0.0, "q_value": None}) == "< 1e-300"
    assert html.p_text({"p_value": 1.0, "q_value": 1e-12}) == "1 - 1e-12"
    assert html.p_text({"p_value": 0.99999, "q_value": None}) == "> 0.9999"
    assert html.p_text({"p_value": 3e-7}) == "3e-07"


def test_figures_have_unique_ids_and_no_external_references(typical, biased_stats):
    text = html.render([typical], stats=[biased_stats, biased_stats])
    ids = ids_of(text)
    assert len(ids) == len(set(ids))
    for reference in re.findall(r'url\(#([^)]+)\)', text):
        assert reference in ids
    for svg in re.findall(r"<svg.*?</svg>", text, flags=re.S):
        assert not re.search(r'(href|src)="(?!#|data:)', svg)


# ---------------------------------------------------------------------------------------
# The page leads with the answer (issue 38): verdict, backends, failure groups, matrix; the
# look-ups folded; pictures where people would rather look.
# ---------------------------------------------------------------------------------------

class WordsOnly(NumpyBackend):
    """The reference without any numbers convention: every numbers case is n/a on it."""

    name = "words-only"
    conventions = ()


@pytest.fixture(scope="module")
def flipped():
    """numpy against the report panel's FlipsBit0OfElement5: every case past five elements fails alike."""
    return result_document([("numpy", _load("numpy")),
                            ("tests/panel.py:FlipsBit0OfElement5", panel.FlipsBit0OfElement5())],
                           select=["kat", "vectors", "mapping", "layout", "uniform/curand/*"])


@pytest.fixture(scope="module")
def numbers_failure():
    """The report panel's NumbersOffByUlps: its curand normals a few ULPs off, past the bound."""
    return result_document([("tests/panel.py:NumbersOffByUlps", panel.NumbersOffByUlps())],
                           select=["normal/curand/*", "uniform/curand/*"])


def section_ids(text: str) -> list[str]:
    """The ids of the page's sections and folded sections, in page order (not the nested ones)."""
    return re.findall(r'^<(?:section|details class="fold") id="([^"]+)"', text, flags=re.M)


def test_the_first_sections_are_verdict_backends_and_failure_groups(flipped):
    text = html.render([flipped])
    ids = section_ids(text)
    assert ids[:4] == ["backends", "diagnoses", "matrix", "failures"], ids
    assert ids[4:] == ["configuration", "agreement", "implementation-defined", "noted-cases", "numbers", "cases"]
    assert text.index('id="verdict"') < text.index('<section id="backends">')
    backends = text[text.index('<section id="backends">'):text.index('<section id="diagnoses">')]
    rows = re.findall(r"<tr><th>.*?</tr>", backends, flags=re.S)[1:]    # after the header
    assert len(rows) == 2 and '<span class="badge s-passed">PASS</span>' in rows[0]
    assert '<span class="badge s-failed">FAIL</span>' in rows[1]
    failed = sum(r["status"] == "failed" for r in flipped["results"] if r["backend"] == "flips-bit0-element5")
    assert f'<td class="num bad">{failed}</td>' in rows[1]


def test_the_flip_bit_run_names_element_5_and_bit_0_in_its_group_and_draws_its_strip(flipped):
    model = html.build(html.sources_of([flipped]))
    (column,) = model["failing_columns"]
    (group,) = column["diagnoses"]
    assert group["pattern"] == "only element 5, bit 0 flipped" and group["count"] == len(column["failures"])
    assert group["words"]["elements"] == list(range(7))            # elements 0-6: element 5 in its place
    assert [row[5] for row in group["words"]["counts"]][:2] == [group["words"]["results"], 0]   # bit 0 only
    assert sum(map(sum, group["words"]["counts"])) == group["words"]["results"]
    text = html.render_model(model)
    groups = text[text.index('<section id="diagnoses">'):text.index('<section id="matrix">')]
    assert '<strong class="pattern">only element 5, bit 0 flipped</strong>' in groups
    assert f'href="#{group["first"]["anchor"]}"' in groups and group["reproduce"] in groups
    assert groups.count('aria-label="wrong bits by element and bit position"') == 1   # the strip, in the group
    # its smallest case is shown in full, open; the rest of the group folded (closed)
    failures = text[text.index('<section id="failures">'):text.index('<details class="fold"')]
    before_fold = failures[:failures.index('<details class="more">')]
    assert before_fold.count('<section class="case"') == 1 and group["first"]["case"] in before_fold
    assert re.search(r'<details class="more"><summary>\d+ more cases of this group', failures)


def test_a_numbers_failure_has_its_ulp_histogram_beside_its_detail(numbers_failure):
    text = html.render([numbers_failure])
    first = re.search(r'<section class="case" id="[^"]+">(.*?)</section>', text, flags=re.S).group(1)
    assert "ULP histogram:" in first
    detail = first[first.index('<div class="numbers-detail">'):]
    assert 'aria-label="histogram of ULP distances against the bound"' in detail
    failing = sum(r["status"] == "failed" for r in numbers_failure["results"])
    drawn = text.count('aria-label="histogram of ULP distances against the bound"')
    assert 1 <= drawn <= min(failing, failures.HISTOGRAMS)
    assert 'aria-label="wrong bits' not in text          # no wrong words listed: no strip
    no_figures = html.render_model(html.build(html.sources_of([numbers_failure]), figures=False))
    assert "<svg" not in no_figures


def test_a_category_wholly_n_a_is_folded_away_and_its_cells_read_n_a():
    alone = result_document([("words-only", WordsOnly())], select=["kat", "uniform/curand/*"])
    model = html.build(html.sources_of([alone]), figures=False)
    assert [row["category"] for row in model["matrix"]] == ["kat", "total"] and model["matrix_folded"] == ["uniform"]
    text = html.render_model(model)
    assert "n/a on every backend, folded away: uniform." in text
    (column,) = model["columns"]
    assert column["not_applicable"] == f"numbers {column['counts']['n/a']}"
    assert f"n/a {column['counts']['n/a']}: numbers {column['counts']['n/a']}" in text
    cases = folded(text, "cases")
    assert '<td class="s-na">n/a</td>' in cases and "skipped" not in cases
    # beside numpy the category ran somewhere: it stays
    both = result_document([("numpy", _load("numpy")), ("words-only", WordsOnly())], select=["kat", "uniform/curand/*"])
    assert "uniform" in [row["category"] for row in html.build(html.sources_of([both]), figures=False)["matrix"]]


def test_a_backend_row_says_what_was_skipped_and_why(flipped):
    doc = copy.deepcopy(flipped)
    mine = [r for r in doc["results"] if r["backend"] == "numpy" and r["status"] == "passed"]
    for result in mine[:3]:
        result.update(status="skipped", message="needs 24 GiB; this machine has 8 GiB\nmore detail")
    mine[3].update(status="skipped", message="")
    model = html.build(html.sources_of([doc]), figures=False)
    column = model["columns"][0]
    assert column["counts"]["skipped"] == 4
    assert column["skipped_reasons"] == "needs 24 GiB; this machine has 8 GiB (3); no reason given (1)"
    backends = html.render_model(model).split('<section id="backends">')[1].split("</section>")[0]
    assert '<span class="badge s-skipped">skipped 4</span> needs 24 GiB; this machine has 8 GiB (3)' in backends


def test_a_backend_on_which_nothing_ran_says_so():
    alone = result_document([("words-only", WordsOnly())], select=["uniform/curand/*"])
    text = html.render([alone])
    assert 'id="verdict" class="verdict v-NOTHING-RAN">NOTHING RAN<' in text
    assert '<span class="badge s-nothing">NOTHING RAN</span>' in text


def test_the_look_ups_are_folded_in_closed_details(flipped, biased_stats):
    text = html.render([flipped], stats=[biased_stats])
    for tag in re.findall(r"<details[^>]*>", text):
        assert " open" not in tag, tag                     # every fold starts closed
    for name in ("configuration", "agreement", "implementation-defined", "noted-cases", "numbers", "cases"):
        section = folded(text, name)
        assert section.startswith(f'<details class="fold" id="{name}"><summary><h2>'), name
    # the statistics keep their content, after the failures and before the look-ups
    ids = section_ids(text)
    assert ids.index("failures") < ids.index("statistics") < ids.index("configuration")
    assert "lanes.frequency" in text[text.index('<section id="statistics">'):text.index('<details class="fold"')]


def test_hostile_numbers_layers_and_reasons_are_text_in_the_page_and_its_figures(numbers_failure):
    doc = copy.deepcopy(numbers_failure)
    for result in doc["results"]:   # whichever failure the page draws
        result["numbers"]["histogram"] = {EVIL_NAME: 3, "0": 5, "$\\frac{1}{0}$": 1}
    failed = next(r for r in doc["results"] if r["status"] == "failed")
    failed["mismatches"] = [{"index": 5, "expected": "0x00000001", "actual": "0x00000000"},
                            {"index": EVIL_NAME, "expected": EVIL_ERROR, "actual": "0x1"}]
    failed["mismatch_count"] = 2
    skipped, not_applicable = [r for r in doc["results"] if r is not failed][:2]
    skipped.update(status="skipped", message=EVIL_ERROR)
    not_applicable.update(status="n/a", message="not applicable: " + EVIL_NAME)
    for case in doc["cases"]:
        case["layer"] = EVIL_DEVICE
    text = html.render([doc])
    assert "<img" not in text and "<script" not in text and "<b>bold" not in text
    assert_self_contained(text)
    shown = "".join(parse(text).text)
    assert EVIL_ERROR in shown and EVIL_DEVICE in shown and "not applicable: " + EVIL_NAME not in text
    # both pictures were drawn from the hostile values (a label is text in the SVG, escaped)
    assert 'aria-label="wrong bits by element and bit position"' in text
    histogram = next(svg for svg in re.findall(r"<svg.*?</svg>", text, flags=re.S) if "ULP distances" in svg)
    assert "&lt;script&gt;" in histogram


# ---------------------------------------------------------------------------------------
# Several documents, incomplete and bad documents.
# ---------------------------------------------------------------------------------------

def test_merge_of_several_documents(typical, counter_reversed, biased_stats, tmp_path):
    paths = []
    for name, doc in (("a.json", typical), ("b.json", counter_reversed), ("s.json", biased_stats)):
        if doc.get("schema") == D.SCHEMA:
            D.write(doc, tmp_path / name)
        else:
            (tmp_path / name).write_text(json.dumps(doc))
        paths.append(tmp_path / name)
    model = html.build([html.read(p) for p in paths], figures=False)
    labels = [c["label"] for c in model["columns"]]
    assert labels == ["numpy [run 1]", "Only4D", "numpy [run 2]", "counter-words-reversed"]
    assert len({c["anchor"] for c in model["columns"]}) == 4
    assert len(model["runs"]) == 2 and len(model["stats"]) == 1
    assert model["verdict"] == "FAIL"
    assert model["agreement"]["shown"] and model["agreement"]["compared"] > 0
    # counter-words-reversed writes other words than numpy: those cases do not agree
    assert 0 < model["agreement"]["agree"] < model["agreement"]["compared"]
    text = html.render(paths)
    ids = ids_of(text)
    assert len(ids) == len(set(ids))
    assert text.count("<th>numpy [run 1]</th>") >= 2


def test_interrupted_run_is_marked_incomplete(typical):
    doc = copy.deepcopy(typical)
    doc["complete"] = False
    doc["interrupted"] = True
    doc["results"] = [r for r in doc["results"] if r["backend"] == "numpy"][:20]
    model = html.build(html.sources_of([doc]), figures=False)
    assert model["verdict"] == "INCOMPLETE" and model["incomplete"]
    text = html.render([doc])
    assert 'id="incomplete"' in text and "interrupted" in text


def real_journal(tmp_path) -> Path:
    """The journal `rngcheck run --json` writes beside its document (numpy runs in-process)."""

    assert cli.main(["run", "--backend", "numpy", "--case", "mapping", "--json", str(tmp_path / "r.json"),
                     "--quiet"]) == 0
    journals = list(tmp_path.glob("*.jsonl"))
    assert len(journals) == 1
    return journals[0]


def test_journal_of_a_killed_run_renders_incomplete(tmp_path):
    journal = real_journal(tmp_path)
    lines = journal.read_text().splitlines()
    assert json.loads(lines[-1]).keys() == {"end"}
    kept = lines[:12]  # header, backend, ten results: then SIGKILL in the middle of a line
    journal.write_text("\n".join(kept) + "\n" + lines[12][:57])
    source = html.read(journal)
    assert source.kind == "result"
    model = html.build([source], figures=False)
    assert model["incomplete"] and model["verdict"] == "INCOMPLETE"
    assert sum(sum(c["counts"].values()) for c in model["columns"]) == 10
    page = html.render([journal])
    assert "Incomplete report" in page and "did not finish: 10 results" in page and "cut off" in page
    assert cli.main(["report", str(journal), "--summary", str(tmp_path / "s.md")]) == 1
    assert "**Incomplete:**" in (tmp_path / "s.md").read_text()


def test_damaged_journal_header_is_a_one_line_error(tmp_path):
    path = tmp_path / "bad.journal.jsonl"
    path.write_text('{"journal": "rngcheck-journal", "version": 1}\n{"result": {}}\n')
    with pytest.raises(RngcheckError, match="damaged journal") as caught:
        html.read(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    path.write_text('{"journal": "rngcheck-journal", "version": 1, "document": {"schema": "rngcheck-result", '
                    '"schema_version": 7, "cases": [], "backends": [], "results": []}}\n')
    with pytest.raises(RngcheckError, match="newer"):
        html.read(path)


def test_journal_of_a_finished_run_is_complete(tmp_path):
    journal = real_journal(tmp_path)
    model = html.build([html.read(journal)], figures=False)
    assert not model["incomplete"] and model["verdict"] == "PASS"


def test_truncated_document_is_a_one_line_error(typical, tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(typical, indent=1)[:5000])
    with pytest.raises(RngcheckError) as caught:
        html.read(path)
    message = str(caught.value)
    assert "\n" not in message and "truncated or not valid JSON" in message and str(path) in message


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(schema_version=D.SCHEMA_VERSION + 1), "newer than this rngcheck reads"),
    (lambda d: d.update(schema_version="1"), "without a valid schema_version"),
    (lambda d: d.update(schema="something-else"), "not an rngcheck result or stats document"),
])
def test_unknown_or_newer_schema_is_a_one_line_error(typical, tmp_path, mutate, message):
    doc = copy.deepcopy(typical)
    mutate(doc)
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(RngcheckError, match=message):
        html.read(path)


def test_newer_stats_schema_is_refused(biased_stats):
    doc = dict(biased_stats, schema_version=99)
    with pytest.raises(RngcheckError, match="rngcheck-stats schema_version 99 is newer"):
        html.render([doc])


@pytest.mark.parametrize("path", ["[]", "{}", "null", '"text"', ""])
def test_not_a_document(tmp_path, path):
    file = tmp_path / "x.json"
    file.write_text(path)
    with pytest.raises(RngcheckError):
        html.read(file)


# What a damaged field may become: wrong types, and text a hostile backend could have put there
# (markup, an attribute break-out, terminal escapes and NUL, a bidi override, a string past
# TEXT_LIMIT), so a damaged document also tests escaping in every field, not only the ones
# the evil backends above fill.
BAD_VALUES = [None, 0, -1, "", "x", [], {}, [None], {"a": None}, 1.5, True, float("nan"),
              EVIL_NAME, EVIL_ERROR, "\" onmouseover=\"alert(5)", "' onfocus='alert(6)",
              "\x1b[31mred\x00nul\x7f\u202e", ["<b>list", "\x07"], {"<i>key</i>": "<u>value</u>"},
              "<s>" * 2000]
HOSTILE_KEYS = ["<script>alert(7)</script>", "\x1b]0;t\x07", "k"]
RAW_HOSTILE = ["<script", "<img", 'onmouseover="alert(5)', "' onfocus='alert(6)", "<b>list", "<i>key", "<u>value",
               "<s><s>"]
NEVER_DAMAGED = ("schema", "schema_version")   # damaged, they make a one-line refusal, tested above
DAMAGE_SETTINGS = dict(deadline=None, database=None, derandomize=True,   # the same examples every run
                       suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def damaged(document: dict, data) -> dict:
    """``document`` with 1 to 5 nested places damaged (a field deleted, replaced by a value of
    BAD_VALUES or a hostile key added; a list element replaced), each noted for the
    falsifying example. Only the containers on a damaged path are copied: the module's
    fixtures stay intact. Shrinks towards one damage at the top level."""
    document = dict(document)
    for _ in range(data.draw(st.integers(1, 5), label="damages")):
        target, path = document, []
        while True:  # walk down into a nested container, or stop here
            keys = list(target) if isinstance(target, dict) else list(range(len(target)))
            if target is document:
                keys = [k for k in keys if k not in NEVER_DAMAGED]
            nested = [k for k in keys if isinstance(target[k], (dict, list)) and target[k]]
            if not nested or not data.draw(st.booleans(), label="deeper"):
                break
            key = data.draw(st.sampled_from(nested), label="into")
            target[key] = copy.copy(target[key])
            target = target[key]
            path.append(key)
        value = copy.deepcopy(data.draw(st.sampled_from(BAD_VALUES), label="value"))
        action = data.draw(st.sampled_from(["replace", "delete", "add"]), label="action")
        if isinstance(target, list):
            if not target:
                continue
            key, action = data.draw(st.integers(0, len(target) - 1), label="index"), "replace"
        elif action == "add" or not keys:
            key, action = data.draw(st.sampled_from(HOSTILE_KEYS), label="key"), "add"
        else:
            key = data.draw(st.sampled_from(keys), label="key")
        note(f"{document.get('schema')}{''.join(f'[{k!r}]' for k in path + [key])}: {action}"
             + ("" if action == "delete" else f" {value!r:.60}"))
        if action == "delete":
            del target[key]
        else:
            target[key] = value
    return document


def assert_damaged_report_is_safe(documents: list[dict], figures: bool) -> None:
    """A damaged document gives a report (possibly incomplete) or a one-line RngcheckError,
    never another exception; the report shows every string as text (the intact report's
    structure is held by assert_self_contained in the tests above)."""
    try:
        text = html.template().render(**html.build(html.sources_of(documents), figures=figures))
    except RngcheckError as error:
        assert "\n" not in str(error).strip(), str(error)
        return
    for raw in RAW_HOSTILE:                 # every hostile string arrives escaped, wherever it was put
        assert raw not in text, raw
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", text)   # control characters shown as escapes


class Documents(dict):
    """The fixtures' documents by name, shown by name in a falsifying example (not in full)."""

    def __repr__(self):
        return f"Documents({', '.join(self)})"


@pytest.fixture(scope="module")
def intact_documents(typical, biased_stats):
    return Documents(typical=typical, biased_stats=biased_stats)


@settings(max_examples=120, **DAMAGE_SETTINGS)
@given(data=st.data(), which=st.sampled_from([("typical",), ("biased_stats",), ("typical", "biased_stats")]),
       figures=st.sampled_from([False] * 9 + [True]))   # figures in one example of ten, as matplotlib is slow
def test_damaged_fields_never_crash(intact_documents, data, which, figures):
    """Any field missing, of the wrong type or hostile: a report (possibly incomplete), never a traceback."""
    assert_damaged_report_is_safe([damaged(intact_documents[name], data) for name in which], figures)


# ---------------------------------------------------------------------------------------
# The command, the summary, JUnit.
# ---------------------------------------------------------------------------------------

def test_report_command_writes_html_and_summary(typical, biased_stats, tmp_path, capsys):
    D.write(typical, tmp_path / "r.json")
    (tmp_path / "s.json").write_text(json.dumps(biased_stats))
    code = cli.main(["report", str(tmp_path / "r.json"), str(tmp_path / "s.json"),
                     "--html", str(tmp_path / "out" / "report.html"),
                     "--summary", str(tmp_path / "out" / "summary.md")])
    assert code == 1  # Only4D fails
    assert (tmp_path / "out" / "report.html").stat().st_size > 10_000
    md = (tmp_path / "out" / "summary.md").read_text()
    assert md.startswith("## rngcheck: FAIL")
    assert "`rank-4-only`" in md and "(<report.html#case-Only4D-" in md
    assert "rngcheck repro --backend" in md
    assert "statistics on" in md and "**FAIL**" in md
    assert len(md.splitlines()) < 60


def test_report_command_passing_run_exits_0(tmp_path, capsys):
    doc = result_document([("numpy", _load("numpy"))], select=["kat", "counter"])
    D.write(doc, tmp_path / "ok.json")
    assert cli.main(["report", str(tmp_path / "ok.json")]) == 0
    assert capsys.readouterr().out.startswith("## rngcheck: PASS")


def test_report_command_bad_input_is_one_line_exit_2(tmp_path, capsys):
    (tmp_path / "cut.json").write_text('{"schema": "rngcheck-result", "schema_version": 1, "results": [')
    assert cli.main(["report", str(tmp_path / "cut.json"), "--html", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rngcheck: error:") and err.count("\n") == 1
    assert not (tmp_path / "r.html").exists()
    assert cli.main(["report", str(tmp_path / "missing.json")]) == 2


def test_summary_escapes_markdown_and_html(evil):
    model = html.build(html.sources_of([evil]), figures=False)
    md = summary.render(model, "report.html")
    assert "<script>" not in md and "<img" not in md and "<u>" not in md
    assert "&lt;script&gt;alert\\(1\\)&lt;/script&gt;" in md
    assert summary.code_block("a ``` b").startswith("````\n")


def test_junit_is_well_formed_and_counts_match_json(typical, evil, tmp_path):
    for doc in (typical, evil):
        path = tmp_path / "junit.xml"
        junit.write(doc, path)
        root = ET.parse(path).getroot()   # well formed
        results = doc["results"]
        required_failed = [r for r in results if r["required"] and r["status"] == "failed"]
        required_error = [r for r in results if r["required"] and r["status"] in ("error", "crashed", "timeout")]
        assert int(root.get("tests")) == len(results) == len(root.findall(".//testcase"))
        assert int(root.get("failures")) == len(required_failed) == len(root.findall(".//failure"))
        assert int(root.get("errors")) == len(required_error) == len(root.findall(".//error"))
        assert int(root.get("skipped")) == sum(r["status"] in ("skipped", "n/a") for r in results)  # both <skipped>
        assert int(root.get("failures")) + int(root.get("errors")) == doc["summary"]["required_failed"]
        suites = root.findall("testsuite")
        assert [s.get("name") for s in suites] == [f"rngcheck.{b['name']}" for b in doc["backends"]]
        for suite, backend in zip(suites, doc["backends"]):
            mine = [r for r in results if r["backend"] == backend["name"]]
            assert int(suite.get("tests")) == len(mine) == len(suite.findall("testcase"))
        # and the report counts the same
        model = html.build(html.sources_of([doc]), figures=False)
        assert model["required_failed"] == doc["summary"]["required_failed"]
        assert model["counts"]["passed"] == doc["summary"]["counts"]["passed"]


def test_run_html_writes_the_report(tmp_path):
    """`rngcheck run --html FILE` (cli.py calls html.write([document], path))."""

    code = cli.main(["run", "--backend", "numpy", "--case", "kat", "--quiet", "--html", str(tmp_path / "r.html")])
    assert code == 0
    text = (tmp_path / "r.html").read_text()
    assert 'id="verdict" class="verdict v-PASS">PASS<' in text


def test_rngcheck_report_subcommand(typical, tmp_path):
    """`rngcheck report` as wired in cli.py (add_arguments / run of reports.command)."""
    import subprocess
    import sys

    D.write(typical, tmp_path / "r.json")
    result = subprocess.run([sys.executable, "-m", "rngcheck", "report", str(tmp_path / "r.json"), "--html",
                             str(tmp_path / "r.html"), "--summary", str(tmp_path / "s.md")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert (tmp_path / "r.html").is_file() and (tmp_path / "s.md").is_file()
    (tmp_path / "new.json").write_text(json.dumps(dict(typical, schema_version=D.SCHEMA_VERSION + 1)))
    result = subprocess.run([sys.executable, "-m", "rngcheck", "report", str(tmp_path / "new.json"), "--html",
                             str(tmp_path / "n.html")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "newer" in result.stderr


def test_lane_picture_draws_every_cell_when_the_document_has_them(biased_stats):
    """If a lanes result carries its 4 x 32 z-scores ("z"), the picture shows every cell."""
    doc = copy.deepcopy(biased_stats)
    grid = np.zeros((4, 32))
    grid[0, 0] = 9.0
    for entry in doc["results"]:
        if entry["test"] == "lanes.frequency" and entry["level"] == "aggregate" and entry["stream"] == "main":
            entry["z"] = grid.tolist()
    with_grid = html.build(html.sources_of([doc]))["stats"][0]["figures"]["lanes"]["svg"]
    without = html.build(html.sources_of([biased_stats]))["stats"][0]["figures"]["lanes"]["svg"]
    assert with_grid.count("<image") == without.count("<image") + 1  # the 4 x 32 cells, as one small image
    assert "data:image/png;base64," in with_grid


# ---------------------------------------------------------------------------------------
# History: several runs of the same backend.
# ---------------------------------------------------------------------------------------

def history_documents() -> list[dict]:
    """Three runs of one backend, "driver", as one per driver version: 30.0 passes; 31.0 refuses
    tensors that are not 4-D (a real run of the panel's Only4D); 31.1 also breaks layout/packed-3d."""
    select = ["kat*", "layout*"]

    class Driver(panel.KnobbedPhilox):
        def __init__(self, version):
            super().__init__("driver")
            self.version = version

        def describe(self):
            return {"implementation": "a vendor driver", "driver version": self.version}

    class Only4DDriver(panel.Only4D):
        def describe(self):
            return {"implementation": "a vendor driver", "driver version": "31.0"}

    documents = [result_document([("driver", Driver("30.0"))], select=select),
                 result_document([("driver", Only4DDriver("driver"))], select=select)]
    newest = copy.deepcopy(documents[1])
    newest["backends"][0]["describe"]["driver version"] = "31.1"
    broken = next(r for r in newest["results"] if r["status"] == "passed" and r["case"].startswith("layout/"))
    broken.update(status="failed", output_sha256=None, message="3 of 24 elements differ",
                  diagnosis={"id": "strides-ignored", "summary": "writes packed"})
    for number, doc in enumerate(documents + [newest]):
        doc["created"] = f"2026-11-{20 + number}T10:00:00+00:00"
    return [documents[1], newest, documents[0]], broken["case"]   # not in date order


def test_history_trend_is_newest_first_with_when_each_failure_started():
    documents, broken_case = history_documents()
    model = html.build(html.sources_of(documents), figures=False)
    (trend,) = model["trend"]
    assert trend["backend"] == "driver"
    assert [r["created"][:10] for r in trend["runs"]] == ["2026-11-22", "2026-11-21", "2026-11-20"]
    assert [r["version"] for r in trend["runs"]] == ["driver version 31.1", "driver version 31.0",
                                                     "driver version 30.0"]
    oldest = trend["runs"][-1]
    assert oldest["total"]["broken"] == 0 and oldest["total"]["passed"] > 0
    assert trend["runs"][0]["total"]["broken"] == trend["runs"][1]["total"]["broken"] + 1
    since = {s["case"]: s for s in trend["since"]}
    assert since[broken_case]["since"] == trend["runs"][0]["run"]
    assert since["layout/rank5"]["since"] == trend["runs"][1]["run"] and not since["layout/rank5"]["always"]
    assert since["layout/rank5"]["diagnosis"] == "rank-4-only"
    page = html.render(documents)
    assert 'id="trend"' in page and "failing since" in page


def test_history_in_the_order_given_ignores_the_times(tmp_path, capsys):
    """--history given (runs made at once, a release matrix): the last given is the newest, whatever
    each document's time; by default the times decide."""
    documents, _ = history_documents()   # given 31.0, 31.1, 30.0; created 21st, 22nd, 20th
    model = html.build(html.sources_of(documents), figures=False, history="given")
    (trend,) = model["trend"]
    assert [r["version"] for r in trend["runs"]] == ["driver version 30.0", "driver version 31.1",
                                                     "driver version 31.0"]
    paths = []
    for number, document in enumerate(documents):
        paths.append(str(tmp_path / f"{number}.json"))
        D.write(document, paths[-1])
    for history, newest in (("given", "30.0"), ("created", "31.1")):
        cli.main(["report", *paths, "--history", history, "--html", str(tmp_path / f"{history}.html"), "--quiet"])
        page = (tmp_path / f"{history}.html").read_text()
        page = page[page.index('id="trend"'):]
        assert page.index(f"driver version {newest}") < min(page.index(f"driver version {v}")
                                                             for v in ("30.0", "31.0", "31.1") if v != newest)
    with pytest.raises(SystemExit) as refused:
        cli.main(["report", *paths, "--history", "version"])
    assert refused.value.code == 2 and "invalid choice: 'version'" in capsys.readouterr().err


def test_no_trend_for_one_run_per_backend(typical):
    assert html.build(html.sources_of([typical]), figures=False)["trend"] == []
