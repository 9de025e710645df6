#!/usr/bin/env bash
# The prepared device check of issue 41 (docs/gpu.md): rngcheck's GPU code paths on a lent GPU machine, within
# 8 minutes, every output under $OUT (default ./gpu-out). --dry-run: the same steps on CPU stand-ins (CI).
#   bash scripts/gpu-check.sh [--dry-run] [--budget SECONDS]
# Missing runtime dependencies (jsonschema, say) are installed from gpu-wheels/ when that folder travels with the
# checkout (it is git-ignored; docs/gpu.md says how to fill it with pip download).
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
exec python3 scripts/gpu_check.py "$@"
