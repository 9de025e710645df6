"""The package as a user installs it: a wheel built from this checkout, pip-installed into a fresh
virtual environment (its dependencies from the interpreter's own site-packages: nothing is
downloaded), then the Windows DirectML route under Wine set up and run from that environment.

Two things an installed wheel can lose that the checkout hides: a package-data file (a template,
a schema, a vector file, a C source the DirectML bridge compiles) missing from
``[tool.setuptools.package-data]``, and code that reaches outside the package (``examples/``).
The first test compares the wheel with the package's files; the second runs the Wine route with
no checkout on the path. The Wine set-up reuses $RNGCHECK_CACHE (else ~/.cache/rngcheck), where
scripts/setup.sh built it: with the same sources it rebuilds nothing (its stamp digests the
bridge's sources as the wheel installed them, so a missing or changed one would show here).

Locally a missing Wine or Xvfb skips the run; with CI=true (CI installs both) it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from helpers import unavailable
from rngcheck.results.statuses import PASSED
from rngcheck.results.verdicts import PASS

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rngcheck"
SKIPPED = ("__pycache__", "node_modules")   # node_modules: the tfjs program's, installed by npm (setup.sh)


def run(argv, cwd, timeout=600, **kwargs):
    """``argv`` run to completion; PYTHONPATH dropped, so that a checkout on it cannot stand in for the wheel."""
    env = {k: v for k, v in kwargs.pop("env", os.environ).items() if k != "PYTHONPATH"}
    done = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          check=False, env=env, **kwargs)
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def package_files(root: Path) -> set[str]:
    """The package's files as the wheel names them (rngcheck/...), compiled files left out."""
    return {p.relative_to(root.parent).as_posix() for p in root.rglob("*")
            if p.is_file() and not any(part in SKIPPED for part in p.parts) and p.suffix not in (".pyc", ".pyo")}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the wheel, the venv's python): built from a copy of the checkout (no build/ or egg-info left
    in it), installed with pip into a venv that sees the interpreter's packages for the dependencies."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(PACKAGE, source / "rngcheck", ignore=shutil.ignore_patterns(*SKIPPED, "*.pyc"))
    for name in ("pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy2(ROOT / name, source / name)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", work / "dist", source], cwd=work)
    wheel, = (work / "dist").glob("rngcheck-*.whl")
    venv = work / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], cwd=work)
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel],
        cwd=work)
    where = run([python, "-c", "import rngcheck; print(rngcheck.__file__)"], cwd=work).stdout.strip()
    assert Path(where).is_relative_to(venv), f"the venv imports rngcheck from {where}, not from its wheel"
    return wheel, python


def test_the_wheel_holds_every_file_of_the_package(installed):
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("rngcheck/")}
    missing = sorted(package_files(PACKAGE) - shipped)
    assert not missing, f"not in the wheel (add them to [tool.setuptools.package-data]): {missing}"


def test_the_wine_route_sets_up_and_runs_from_the_installed_wheel(installed, tmp_path):
    """python -m rngcheck.backends.directml.bridge.windows from the venv (the cache already set up:
    nothing rebuilt), then the kat cases on DirectML.dll under Wine, a result document and the page."""
    _, python = installed
    for tool in ("wine", "Xvfb"):
        if shutil.which(tool) is None:
            unavailable(f"{tool} is not installed")
    set_up = run([python, "-m", "rngcheck.backends.directml.bridge.windows"], cwd=tmp_path, timeout=3600)
    assert "set up" in set_up.stdout + set_up.stderr
    backend = f"exec:{python} -m rngcheck.backends.directml.wine"
    run([python, "-m", "rngcheck", "run", "--backend", backend, "--case", "kat", "--quiet",
         "--json", "run.json", "--html", "run.html"], cwd=tmp_path, timeout=900)
    document = json.loads((tmp_path / "run.json").read_text())
    summary = document["summary"]
    assert summary["verdict"] == PASS and summary["cases"] >= 3, summary
    assert summary["counts"][PASSED] == summary["cases"], summary   # every kat case, bit for bit
    (entry,) = document["backends"]
    assert "DirectML" in json.dumps(entry["describe"]), entry
    page = (tmp_path / "run.html").read_text()
    assert "<title>rngcheck report" in page and "kat/" in page
