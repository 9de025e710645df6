"""Hardening, round 4, items 14 and 16 (report): a stats document is data, and ``report`` draws what
it can of it in bounded time: at most LANE_PANELS lane panels (the rest said to be left out), a
SIGTERM acted on at once while it draws, and a figure whose numbers cannot be drawn (an infinite
z-score, a threshold that is not a probability) replaced by the reason, never a traceback.

Tests with processes poll with generous limits; none depends on a fixed sleep to pass."""

import copy
import json
import math
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from probes import rngcheck

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def stats_document(tmp_path_factory):
    """A real smoke stats document of the reference (as a dict)."""
    path = tmp_path_factory.mktemp("stats") / "s.json"
    result = rngcheck("stats", "--backend", "numpy", "--json", str(path), "--quiet")
    assert result.returncode == 0, result.stderr
    return json.loads(path.read_text())


def with_lane_tests(document: dict, count: int) -> dict:
    """``document`` with ``count`` more lanes tests of the main stream (each one panel of its own)."""
    hostile = copy.deepcopy(document)
    worst = next(r for r in document["results"] if r["test"] == "lanes.frequency.worst" and r["stream"] == "main")
    for i in range(count):
        hostile["results"].append(dict(worst, test=f"lanes.hostile{i}.worst", statistic=2.0 + i / count))
    return hostile


def missing_figures(page: str) -> list[str]:
    marker = '<p class="figure-missing">'
    return [part.split("</p>", 1)[0] for part in page.split(marker)[1:]]


def test_a_document_of_thousands_of_lane_tests_draws_a_capped_number_of_panels(tmp_path, stats_document):
    """3,000 lanes tests (a 1.6 MB document): report was busy past 300 s; now it draws LANE_PANELS
    panels, says how many it left out, in well under a minute."""
    from rngcheck.reports.figures import LANE_PANELS

    document = tmp_path / "lanes.json"
    document.write_text(json.dumps(with_lane_tests(stats_document, 3000)))
    assert document.stat().st_size > 1_500_000
    started = time.monotonic()
    result = rngcheck("report", str(document), "--html", str(tmp_path / "r.html"), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert time.monotonic() - started < 60
    page = (tmp_path / "r.html").read_text()
    assert f"{LANE_PANELS} of 3003 lanes tests drawn (the most biased); {3003 - LANE_PANELS} left out" in page


def test_report_ends_at_once_on_sigterm_while_it_draws(tmp_path, stats_document):
    """Twenty such documents keep report drawing for a minute; SIGTERM 15 s in ends it with exit 130
    within 2 s (it took 4.7 s 15 s into one figure of 3,000 panels, and more later in it)."""
    text = json.dumps(with_lane_tests(stats_document, 3000))
    documents = []
    for i in range(20):
        documents.append(tmp_path / f"lanes{i}.json")
        documents[-1].write_text(text)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "report", *map(str, documents), "--html",
                                str(tmp_path / "r.html")], stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(15)   # well into the drawing (the test passes wherever the signal lands)
        assert process.poll() is None, process.stderr.read()
        sent = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 130, process.stderr.read()[-2000:]
        assert time.monotonic() - sent < 2.0
        assert process.stderr.read().strip() == "rngcheck: interrupted"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_an_infinite_z_score_in_a_lanes_grid_is_said_in_the_figures_place(tmp_path, stats_document):
    """"Invalid vmin or vmax" was a traceback; now the page says why the lanes figure is missing."""
    hostile = copy.deepcopy(stats_document)
    for entry in hostile["results"]:
        if entry["test"] == "lanes.frequency" and entry["stream"] == "main":
            entry["z"] = [[math.inf] * 32] * 4
    document = tmp_path / "inf.json"
    document.write_text(json.dumps(hostile))
    result = rngcheck("report", str(document), "--html", str(tmp_path / "r.html"))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]
    said = missing_figures((tmp_path / "r.html").read_text())
    assert any("not drawn" in s and "infinite z-score" in s for s in said), said


@pytest.mark.parametrize("field, value", [("suspect", -0.5), ("fail", -1e-10), ("suspect", 7.0)])
def test_a_threshold_that_is_not_a_probability_is_said_in_the_figures_place(tmp_path, stats_document, field, value):
    """A negative suspect threshold was a math domain error; the failing-results figure now says why
    it is missing, and the rest of the page is drawn."""
    hostile = copy.deepcopy(stats_document)
    hostile["thresholds"][field] = value
    hostile["results"][0]["first_verdict"] = "SUSPECT"     # a result to put in the failing-results figure
    document = tmp_path / "threshold.json"
    document.write_text(json.dumps(hostile))
    result = rngcheck("report", str(document), "--html", str(tmp_path / "r.html"))
    assert "Traceback" not in result.stderr and result.returncode in (0, 1), result.stderr[-2000:]
    said = missing_figures((tmp_path / "r.html").read_text())
    named = {"fail": "failure", "suspect": "suspect"}[field]
    assert any("not drawn" in s and f"{named} threshold" in s for s in said), said


def test_lane_figures_take_nan_cells_without_a_runtime_warning():
    import numpy as np

    from rngcheck.reports.figures import draw

    tables = [{"title": "lanes.frequency", "grid": np.full((4, 32), np.nan), "worst": None},
              {"title": "lanes.lag1", "grid": None, "worst": (1, 2, float("nan"))}]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        figure = draw("lane_bias", tables)
    assert figure["svg"] and figure["error"] is None, figure
