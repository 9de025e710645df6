"""pytest set-up for rngcheck's own tests.

Helpers the tests import (unavailable, require, ...) live in tests/helpers.py; tests/ is on
sys.path through ``pythonpath = ["tests"]`` in pyproject.toml, not through this file.

Hypothesis runs deterministically here: the profile "rngcheck" derives every example from the
test itself (derandomize) and keeps no example database, so a run is the same on every machine
(hypothesis still caches constants in .hypothesis/, which git ignores). HYPOTHESIS_PROFILE=explore
runs random examples instead (a failure then prints the @seed that reproduces it).
"""

import os

from hypothesis import settings

settings.register_profile("rngcheck", derandomize=True, database=None)
settings.register_profile("explore", database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "rngcheck"))
