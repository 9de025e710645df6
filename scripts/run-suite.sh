#!/usr/bin/env bash
# The main job: set up, then run the conformance suite on the embedded default backends
# (numpy, and opencl and directml when available) and write the results under results/:
# the result document, JUnit XML and the HTML report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p results
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$PWD/.pocl-cache}"
backends=()
if [ -n "${CI:-}" ]; then
  # in CI OpenCL (PoCL) and real DirectML (both Linux builds, and the Windows DirectML.dll under Wine,
  # all on lavapipe) are installed: required; one report compares the three DirectML builds case by case
  backends=(--backend numpy --backend opencl --backend directml:lib=0.2.5 --backend directml:lib=0.2.0
            --backend 'exec:python3 -m rngcheck.backends.directml.wine')
fi
rngcheck run "${backends[@]}" --profile "${RNGCHECK_PROFILE:-full}" --stats "${RNGCHECK_STATS:-smoke}" --json results/rngcheck-result.json \
  --junit results/rngcheck-junit.xml --html results/report.html "$@"
