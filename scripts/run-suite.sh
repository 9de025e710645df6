#!/usr/bin/env bash
# The main job: set up, then run the conformance suite on the embedded default backends
# (numpy, and opencl when a platform exists) and write the results under results/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p results
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$PWD/.pocl-cache}"
rngcheck run --profile "${RNGCHECK_PROFILE:-full}" --json results/rngcheck-result.json \
  --junit results/rngcheck-junit.xml "$@"
