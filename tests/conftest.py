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


# A finished run of the reference on the known-answer cases, shared by the hardening tests.
@pytest.fixture(scope="module")
def kat_run(tmp_path_factory):
    """A real finished run of the reference on the known-answer cases: (document path, journal path)."""
    folder = tmp_path_factory.mktemp("kat")
    out = folder / "a.json"
    result = probes.rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out), "--quiet", cwd=folder)
    assert result.returncode == 0, result.stderr
    return out, folder / "a.journal.jsonl"
