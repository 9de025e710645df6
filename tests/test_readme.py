"""The README is a guide whose commands work, and docs/ is one MkDocs site (issue 38).

The README's install block and quickstart (a) block (between ``<!-- install:begin/end -->`` and
``<!-- quickstart-a:begin/end -->``) run as written, in a copy of the checkout (the files a clone
has) with a fresh virtual environment: ``python3 -m venv`` without the system's site packages, a
no-root ``pip install .`` of rngcheck's core dependencies only, gcc for the C example. pip's
downloads are cached in ``$RNGCHECK_CACHE/pip`` (CI: the run's own .cache/), else the checkout's
.cache/pip, so a second run installs from the cache (about a minute from an empty cache here, 2
cores). In CI (CI=true) the test may not skip; elsewhere it skips when the package index cannot
be reached.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from helpers import unavailable

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 250


def block(name: str) -> str:
    """The commands of the fenced block between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``."""
    found = re.findall(rf"<!-- {name}:begin -->\s*```[a-z]*\n(.*?)```\s*<!-- {name}:end -->",
                       README.read_text(), re.S)
    assert len(found) == 1, f"README.md must hold one fenced block between <!-- {name}:begin/end -->"
    return found[0]


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav names (every ``title: page.md`` or ``- page.md`` entry)."""
    text = (ROOT / "mkdocs.yml").read_text()
    nav = text[text.index("\nnav:"):]
    return re.findall(r"^\s*-\s*(?:[^\n]*?:\s*)?([\w./-]+\.md)\s*$", nav, re.M)


def table_script():
    spec = importlib.util.spec_from_file_location("conformance_table", ROOT / "scripts" / "conformance_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------- the guide
def test_the_readme_is_a_guide_of_at_most_250_lines():
    lines = README.read_text().count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines; at most {MAX_LINES}: move reference text to docs/"


def test_the_readme_keeps_the_commands_ci_relies_on():
    """The two set-up commands, as indented code lines, and the test command .ci/run runs."""
    lines = README.read_text().splitlines()
    for command in ("bash scripts/run-suite.sh", "bash scripts/run-tests.sh"):
        assert f"    {command}" in lines, f"README.md must show `{command}` as a command line"
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^bash scripts/run-tests.sh\b", ci, re.M), ".ci/run runs the README's test command"


def test_every_docs_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    nav = nav_pages()
    assert len(nav) == len(set(nav)), f"a page twice in mkdocs.yml's nav: {sorted(p for p in nav if nav.count(p) > 1)}"
    assert sorted(pages - set(nav)) == [], "docs pages missing from mkdocs.yml's nav"
    assert sorted(set(nav) - pages) == [], "mkdocs.yml's nav names pages that do not exist"


def test_the_tables_markers_are_in_the_pages_conformance_table_writes():
    script = table_script()
    for begin, end in ((script.BEGIN, script.END), (script.NUMBERS_BEGIN, script.NUMBERS_END),
                       (script.GENERATORS_BEGIN, script.GENERATORS_END)):
        page = script.PAGES[begin].read_text()
        assert page.count(begin) == 1 and page.count(end) == 1 and page.index(begin) < page.index(end), begin
    for operator in script.OPERATOR_BACKENDS:
        page = script.operator_page(operator).read_text()
        assert page.count(f"<!-- {operator}-table:begin -->") == 1 and page.count(f"<!-- {operator}-table:end -->") == 1


def test_replace_table_writes_between_the_markers_only(tmp_path):
    script = table_script()
    page = tmp_path / "page.md"
    page.write_text("before\n<!-- t:begin -->\nold\n<!-- t:end -->\nafter\n")
    script.replace_table(page, "<!-- t:begin -->", "<!-- t:end -->", "| new |")
    assert page.read_text() == "before\n<!-- t:begin -->\n| new |\n<!-- t:end -->\nafter\n"
    with pytest.raises(SystemExit):
        script.replace_table(page, "<!-- u:begin -->", "<!-- u:end -->", "x")


def test_the_site_builds_strictly(tmp_path):
    """mkdocs build --strict: no broken link or anchor, no page outside the nav (the docs extra)."""
    if importlib.util.find_spec("mkdocs") is None:
        unavailable("mkdocs is not installed (pip install -e '.[docs]')")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


# ---------------------------------------------------------------------------------- quickstart (a)
def index_reachable() -> str | None:
    """None when pip's index answers, else why not."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/").rstrip("/") + "/pip/"
    try:
        with urllib.request.urlopen(index, timeout=15):
            return None
    except (OSError, ValueError) as error:
        return f"pip's index {index} cannot be reached ({error})"


def fresh_clone(destination: Path) -> None:
    """The files a clone of this checkout has (tracked, and untracked that git does not ignore)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                                capture_output=True, check=True, timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(ROOT, destination, ignore=shutil.ignore_patterns(
            ".git", ".venv", ".cache", ".pocl-cache", "results", "ci-artifacts", "build", "*.egg-info", "__pycache__"))
        return
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def test_quickstart_a_runs_as_written(tmp_path):
    install, quickstart = block("install"), block("quickstart-a")
    assert "pip install ." in install and "python3 -m venv" in install and "--system-site-packages" not in install
    if shutil.which("gcc") is None:
        unavailable("gcc is not installed (the C example of quickstart (a))")
    if shutil.which("python3") is None:
        unavailable("python3 is not on PATH")
    why = index_reachable()
    if why:
        unavailable(why)
    clone = tmp_path / "rngcheck"
    fresh_clone(clone)
    cache = Path(os.environ.get("RNGCHECK_CACHE") or ROOT / ".cache") / "pip"
    cache.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PYTEST_ADDOPTS")}
    env.update(PIP_CACHE_DIR=str(cache), PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_PROGRESS_BAR="off")
    script = "set -euxo pipefail\n" + install + quickstart
    done = subprocess.run(["bash", "-c", script], cwd=clone, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    output = done.stdout
    assert done.returncode == 0, f"the README's install and quickstart (a) failed (exit {done.returncode}):\n" \
                                 f"{output[-6000:]}"
    assert "include-system-site-packages = false" in (clone / ".venv" / "pyvenv.cfg").read_text()
    where = subprocess.run([clone / ".venv" / "bin" / "python", "-c", "import rngcheck; print(rngcheck.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60).stdout
    assert str(clone / ".venv") in where, f"the venv's rngcheck is not its own install: {where}"
    runs = quickstart.count("rngcheck run ")
    assert runs and output.count("rngcheck: PASS") == runs, output[-6000:]
    if "--junitxml" in quickstart:
        junit = clone / re.search(r"--junitxml[ =](\S+)", quickstart).group(1)
        suites = ET.parse(junit).getroot().iter("testsuite")
        counts = [(int(s.get("tests")), int(s.get("failures")), int(s.get("errors"))) for s in suites]
        assert counts and all(tests > 0 and failures == errors == 0 for tests, failures, errors in counts), counts

