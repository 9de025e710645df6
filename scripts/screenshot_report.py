#!/usr/bin/env python3
"""Regenerate docs/report.png: a screenshot of a real report comparing the numpy reference
with a deliberately broken backend of the test panel (tests/panel.py:Only4D), with the
statistical results of the numpy stream.

    python scripts/screenshot_report.py [--out docs/report.png] [--keep build/screenshot]
    python scripts/screenshot_report.py --documents result.json [stats.json ...] --out page.png

Runs the real commands (rngcheck run, rngcheck stats, rngcheck report) from the repository
root, so the report shows the same relative command lines a user would type (or, with
--documents, reports on the documents given); then opens the page in headless Chromium
(/usr/bin/chromium, driven by Playwright for Python) with every network request blocked,
saves the top of the page and says the page's size and its height in Chromium (its full
scroll height at the window's width, every fold closed as the page opens). Needs the report
extra (Jinja2, matplotlib), Debian's chromium and `pip install playwright` (no browser download).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("RNGCHECK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BROKEN = "tests/panel.py:Only4D"


def rngcheck(*args: str, expect=(0, 1)) -> None:
    result = subprocess.run([sys.executable, "-m", "rngcheck", *args], cwd=ROOT, capture_output=True, text=True)
    if result.returncode not in expect:
        sys.exit(f"rngcheck {' '.join(args)} exited {result.returncode}:\n{result.stderr}")


def build_report(work: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    rel = work.relative_to(ROOT) if work.is_relative_to(ROOT) else work
    rngcheck("run", "--backend", "numpy", "--backend", BROKEN, "--json", str(rel / "result.json"), "--quiet")
    rngcheck("stats", "--backend", "numpy", "--tier", "smoke", "--json", str(rel / "stats-numpy.json"), "--quiet")
    report = rel / "report.html"
    result = subprocess.run([sys.executable, "-m", "rngcheck", "report", str(rel / "result.json"),
                             str(rel / "stats-numpy.json"), "--html", str(report), "--quiet"],
                            cwd=ROOT, capture_output=True, text=True)
    if result.returncode not in (0, 1, 5):
        sys.exit(f"rngcheck report exited {result.returncode}:\n{result.stderr}")
    return ROOT / report


def report_of(documents: list[str], work: Path) -> Path:
    """The report of documents already written (``--documents``), as `rngcheck report` writes it."""
    work.mkdir(parents=True, exist_ok=True)
    report = work / "report.html"
    result = subprocess.run([sys.executable, "-m", "rngcheck", "report", *documents, "--html", str(report),
                             "--quiet"], cwd=ROOT, capture_output=True, text=True)
    if result.returncode not in (0, 1, 5):
        sys.exit(f"rngcheck report exited {result.returncode}:\n{result.stderr}")
    return report


def screenshot(page_path: Path, out: Path, width: int, height: int) -> int:
    """Save the top of the page (``width`` x ``height``) to ``out``; the page's full height in pixels."""
    from playwright.sync_api import sync_playwright

    url = page_path.resolve().as_uri()
    left, errors = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": width, "height": height}, offline=True)

            def route(request_route):
                target = request_route.request.url
                if target.split("#")[0] == url or target.startswith("data:"):
                    request_route.continue_()
                else:
                    left.append(target)
                    request_route.abort()

            context.route("**/*", route)
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(url, wait_until="load")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=False)
            page_height = int(page.evaluate("document.documentElement.scrollHeight"))
        finally:
            browser.close()
    if left or errors:
        sys.exit(f"the page asked for {left} / logged errors {errors}")
    return page_height


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "report.png"))
    parser.add_argument("--keep", default=str(ROOT / "build" / "screenshot"),
                        help="where the documents and the HTML report are written (default build/screenshot)")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1400)
    parser.add_argument("--documents", nargs="+", metavar="FILE",
                        help="report on these result and stats documents instead of running the commands")
    args = parser.parse_args(argv)
    work = Path(args.keep).resolve()
    report = report_of(args.documents, work) if args.documents else build_report(work)
    page_height = screenshot(report, Path(args.out), args.width, args.height)
    print(f"wrote {args.out} from {report} ({report.stat().st_size} bytes of HTML, {page_height} px tall "
          f"at {args.width} px wide)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
