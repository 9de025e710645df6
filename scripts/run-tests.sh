#!/usr/bin/env bash
# The tests of rngcheck itself: set up, then pytest. In CI (CI=true) every backend CI installs
# is required: a missing OpenCL device fails the run instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$PWD/.pocl-cache}"
# One pytest worker per core (pytest-xdist; RNGCHECK_TEST_WORKERS overrides, 0 runs in this process):
# on CI's 2 cores the suite takes about 0.6 of its one-process time (measured on 187 tests of five
# files: 256 s -> 158 s). --dist loadgroup keeps a file's xdist_group (the huge profile's two 8 GiB
# tensors) on one worker, one test after the other, and so does each module's group of tests that share one of its
# module-scoped fixtures (tests/conftest.py: the fixture is then computed once, not once per worker).
python3 -m pytest -q -n "${RNGCHECK_TEST_WORKERS:-auto}" --dist loadgroup "$@"
