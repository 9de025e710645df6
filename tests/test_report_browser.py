"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``) driven by
Playwright for Python, with every network request blocked and recorded.

Asserts: no request left the page (only the file:// page itself and data: URIs), no console
error, no dialog (a backend named ``<script>alert(1)</script>`` stays text), the verdict and
the failing case's diagnosis are visible, the figures rendered. Takes a screenshot: under the
test's temporary directory, or, when RNGCHECK_TEST_ARTIFACTS names a directory (.ci/run sets
it to ci-artifacts/), there as report.png, for CI to keep.

In CI (CI=true) a missing Chromium or Playwright fails; elsewhere the test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import panel
from rngcheck.reports import html
from test_report_html import EVIL_NAME, EvilName, history_documents, result_document, stats_document

ARTIFACTS = "RNGCHECK_TEST_ARTIFACTS"   # a directory for what CI keeps of the tests (.ci/run)
CHROMIUM = os.environ.get("RNGCHECK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _require_browser():
    reasons = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reasons.append("Playwright for Python is not installed (pip install playwright; no browser download)")
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        reasons.append(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    if reasons:
        message = "; ".join(reasons)
        if os.environ.get("CI") == "true":
            pytest.fail("CI requires the browser test: " + message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


class Visit:
    """A page opened with every request other than the page itself or data: aborted and recorded."""

    def __init__(self, browser, path: Path):
        self.url = path.resolve().as_uri()
        self.left, self.console_errors, self.dialogs = [], [], []
        self.context = browser.new_context(viewport={"width": 1280, "height": 1600}, offline=True,
                                           java_script_enabled=True)
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("request", self._request)
        self.page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.console_errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(self.url, wait_until="load")

    def _allowed(self, url: str) -> bool:
        return url.split("#")[0] == self.url or url.startswith("data:")

    def _route(self, route):
        if self._allowed(route.request.url):
            route.continue_()
        else:
            self.left.append(route.request.url)
            route.abort()

    def _request(self, request):
        if not self._allowed(request.url):
            self.left.append(request.url)

    def check_clean(self):
        assert self.left == [], f"requests left the page: {self.left}"
        assert self.console_errors == [], self.console_errors
        assert self.dialogs == [], f"a dialog opened: {self.dialogs}"

    def close(self):
        self.context.close()


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    """numpy against the panel's Only4D, with a statistics document."""
    where = tmp_path_factory.mktemp("browser")
    from rngcheck.backends import load

    document = result_document([("numpy", load("numpy")), ("tests/panel.py:Only4D", panel.Only4D())])
    stats = stats_document(where, biased=True)
    path = where / "report.html"
    html.write([document, stats], path)
    return path, document


def test_report_in_chromium_offline(browser, comparison, tmp_path):
    path, document = comparison
    screenshot = Path(os.environ.get(ARTIFACTS) or tmp_path) / "report.png"
    visit = Visit(browser, path)
    page = visit.page
    try:
        verdict = page.locator("#verdict")
        assert verdict.is_visible() and verdict.inner_text().strip() == "FAIL"
        diagnoses = page.locator("#diagnoses")
        assert diagnoses.is_visible()
        assert "rank-4-only" in diagnoses.inner_text() and "Only4D" in diagnoses.inner_text()
        # the first screen: the verdict, a row per backend, the failure groups begin
        for selector in ("#verdict", "#backends", "#diagnoses"):
            box = page.locator(selector).bounding_box()
            assert box and box["y"] < 1600, (selector, box)
        assert page.locator("#backends tr").count() == 3   # the header and the two backends

        failing = next(r for r in document["results"] if r["required"] and r["status"] == "failed")
        page.goto(f"{visit.url}#case-{failing['case']}", wait_until="load")
        case = page.locator(f'[id="case-{failing["case"]}"]')
        assert case.is_visible()
        assert failing["diagnosis"]["id"] in case.inner_text()
        assert "rngcheck repro --backend tests/panel.py:Only4D" in case.inner_text()
        box = case.bounding_box()
        assert box and box["y"] < 1600  # the fragment scrolled the case into view

        figures = page.locator("svg.figure:visible")   # (a figure in a closed fold has no box)
        assert figures.count() >= 3  # status bars, p-value histogram, lane x bit picture
        for index in range(figures.count()):
            figure = figures.nth(index)
            figure.scroll_into_view_if_needed()
            box = figure.bounding_box()
            assert box and box["width"] > 100 and box["height"] > 50, (index, box)
            assert figure.locator("text").count() > 0  # axis labels drawn as text
        page.goto(visit.url, wait_until="load")
        page.wait_for_timeout(100)
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), full_page=False)
        assert screenshot.stat().st_size > 10_000
        visit.check_clean()
    finally:
        visit.close()


def test_flip_bit_page_in_chromium(browser, tmp_path):
    """The report panel's FlipsBit0OfElement5: its group (element 5, bit 0) and its strip on the first screen,
    the look-ups folded and closed until opened, and the page far shorter than the whole of what it holds."""
    from rngcheck.backends import load

    document = result_document([("numpy", load("numpy")),
                                ("tests/panel.py:FlipsBit0OfElement5", panel.FlipsBit0OfElement5())],
                               select=["kat", "vectors", "mapping", "layout"])
    path = tmp_path / "flip.html"
    html.write([document], path)
    visit = Visit(browser, path)
    try:
        page = visit.page
        group = page.locator("#diagnoses .group").first
        assert "only element 5, bit 0 flipped" in group.inner_text()
        strip = group.locator("svg.figure")
        box = strip.bounding_box()
        assert box and box["y"] + box["height"] < 1600 and box["width"] > 100 and box["height"] > 50
        folds = page.locator("details.fold")
        assert folds.count() >= 5 and folds.evaluate_all("all => all.every(d => !d.open)")
        assert not page.locator("#cases table").is_visible()
        height = page.evaluate("document.documentElement.scrollHeight")
        page.locator("#cases > summary").click()
        assert page.locator("#cases table").is_visible()
        assert page.evaluate("document.documentElement.scrollHeight") > height   # it was folded away
        visit.check_clean()
    finally:
        visit.close()


def test_history_trend_in_chromium(browser, tmp_path):
    """Three runs of one backend: the History section renders, newest run first, and each case failing
    in the newest run links to its failure and names the run it started failing in."""
    documents, broken_case = history_documents()
    path = tmp_path / "history.html"
    html.write(documents, path)
    visit = Visit(browser, path)
    try:
        page = visit.page
        page.locator('nav.toc a[href="#trend"]').click()
        trend = page.locator("#trend")
        assert trend.is_visible()
        box = trend.bounding_box()
        assert box and box["y"] < 1600 and box["height"] > 100
        rows = trend.locator("table.trend tr")
        assert rows.count() == 4  # header and three runs
        assert "2026-11-22" in rows.nth(1).inner_text() and "31.1" in rows.nth(1).inner_text()
        assert "2026-11-20" in rows.nth(3).inner_text() and "failed" not in rows.nth(3).inner_text()
        since = trend.locator("table.since")
        assert since.is_visible()
        row = since.locator("tr", has_text=broken_case)
        assert row.count() == 1 and "2026-11-22" in row.inner_text()
        rank5 = since.locator("tr", has=page.get_by_role("link", name="layout/rank5", exact=True))
        assert "2026-11-21" in rank5.inner_text() and "rank-4-only" in rank5.inner_text()
        rank5.locator("a").click()
        assert page.url.endswith("#case-layout/rank5")
        assert page.locator('[id="case-layout/rank5"]').is_visible()
        visit.check_clean()
    finally:
        visit.close()


def test_hostile_names_stay_text_in_chromium(browser, tmp_path):
    document = result_document([("evil.py:EvilName", EvilName())], select=["kat", "mapping"])
    path = tmp_path / "evil.html"
    html.write([document], path)
    visit = Visit(browser, path)
    try:
        page = visit.page
        assert page.locator("script").count() == 0
        title = page.locator("h1").inner_text()
        assert EVIL_NAME in title
        assert page.get_by_text(EVIL_NAME, exact=True).count() > 0
        assert page.locator("img").count() == 0
        visit.check_clean()
    finally:
        visit.close()


def test_blocked_request_would_be_seen(browser, tmp_path):
    """The harness itself: a page that asks for a remote image is caught (so silence means something)."""
    path = tmp_path / "leaky.html"
    path.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png"><p>x</p></body></html>')
    visit = Visit(browser, path)
    try:
        assert any(url.startswith("http://127.0.0.1:9/") for url in visit.left)
    finally:
        visit.close()


def test_compare_page_in_chromium(browser, tmp_path):
    """`rngcheck compare --html`: a regression and an expected failure, offline and as text."""
    from rngcheck import cli

    documents, broken_case = history_documents()
    older, newest = tmp_path / "older.json", tmp_path / "newest.json"
    older.write_text(json.dumps(documents[0]))
    newest.write_text(json.dumps(documents[1]))
    known = tmp_path / "known.txt"
    known.write_text("layout/rank* # <script>alert(5)</script> refuses tensors that are not 4-D\n")
    path = tmp_path / "compare.html"
    assert cli.main(["compare", str(older), str(newest), "--expected-failures", str(known), "--html", str(path),
                     "--quiet"]) == 1
    visit = Visit(browser, path)
    try:
        page = visit.page
        assert page.locator("#verdict").inner_text().strip() == "REGRESSED"
        regressions = page.locator("#regression")
        assert regressions.is_visible() and broken_case in regressions.inner_text()
        assert "<script>alert(5)</script>" in page.locator("#xfail").inner_text()
        assert page.locator("script").count() == 0
        visit.check_clean()
    finally:
        visit.close()
