#!/usr/bin/env bash
# The generator conformance table alone: every Random123 known answer of every generator
# (rngcheck's 'generator' cases) on the reference and the independent implementations that compute
# generator blocks, one result document each in results/generators, the table printed; exits 1 when
# a backend fails a known answer it claims (docs/expected-differences.json lists none for these).
# The full conformance table (scripts/conformance_table.py) prints the same table from its own runs.
# Extra arguments go to scripts/conformance_table.py (e.g. --update-docs, --require-all).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/conformance_table.py --case generator --results results/generators --check \
  --backend numpy --backend randomgen --backend random123 --backend jax --backend tensorflow:jit_compile=1 --backend triton "$@"
