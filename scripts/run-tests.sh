#!/usr/bin/env bash
# The tests of rngcheck itself: set up, then pytest. In CI (CI=true) every backend CI installs
# is required: a missing OpenCL device fails the run instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$PWD/.pocl-cache}"
python3 -m pytest -q "$@"
