"""pytest set-up for rngcheck's own tests.

Helpers the tests import (unavailable, require, ...) live in tests/helpers.py; tests/ is on
sys.path through ``pythonpath = ["tests"]`` in pyproject.toml, not through this file.

Hypothesis runs deterministically here: the profile "rngcheck" derives every example from the
test itself (derandomize) and keeps no example database, so a run is the same on every machine
(hypothesis still caches constants in .hypothesis/, which git ignores). HYPOTHESIS_PROFILE=explore
runs random examples instead (a failure then prints the @seed that reproduces it).
"""

import os

import pytest
from hypothesis import settings

import probes

settings.register_profile("rngcheck", derandomize=True, database=None)
settings.register_profile("explore", database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "rngcheck"))


@pytest.hookimpl(tryfirst=True)   # before pytest-xdist reads the groups (its own hook of this name)
def pytest_collection_modifyitems(config, items):
    """With pytest-xdist's --dist loadgroup (scripts/run-tests.sh): the tests that use a module-scoped
    fixture run on one worker, one group per module, so that fixture is computed once and not once on
    each worker that drew one of its tests (a fixture that runs rngcheck takes 10-30 s of a worker).
    A test with its own xdist_group keeps it."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(d.scope == "module" for defs in definitions.values() for d in defs):
            item.add_marker(pytest.mark.xdist_group(f"module:{item.module.__name__}"))


# A finished run of the reference on the known-answer cases, shared by the hardening tests.
@pytest.fixture(scope="module")
def kat_run(tmp_path_factory):
    """A real finished run of the reference on the known-answer cases: (document path, journal path)."""
    folder = tmp_path_factory.mktemp("kat")
    out = folder / "a.json"
    result = probes.rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out), "--quiet", cwd=folder)
    assert result.returncode == 0, result.stderr
    return out, folder / "a.journal.jsonl"
