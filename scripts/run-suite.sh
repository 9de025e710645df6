#!/usr/bin/env bash
# The main job: set up, then run the conformance suite on the embedded default backends
# (numpy, and opencl when a platform exists) and write the results under results/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p results
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$PWD/.pocl-cache}"
backends=()
if [ -n "${CI:-}" ]; then
  backends=(--backend numpy --backend opencl)  # in CI OpenCL (PoCL) is installed, so it is required
fi
rngcheck run "${backends[@]}" --profile "${RNGCHECK_PROFILE:-full}" --stats "${RNGCHECK_STATS:-smoke}" --json results/rngcheck-result.json \
  --junit results/rngcheck-junit.xml "$@"
