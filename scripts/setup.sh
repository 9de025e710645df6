#!/usr/bin/env bash
# Everything rngcheck needs on a fresh Debian/Ubuntu machine: PoCL (a CPU OpenCL device), gcc
# (for the exec example in C), dieharder (the statistical peer), Chromium (the report's browser test; driven by Playwright, which
# downloads no browser of its own), and the Python package with its extras: tests, OpenCL, reports,
# and the library backends (randomgen, TensorFlow, JAX). Idempotent; run as root or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
APT_PACKAGES="pocl-opencl-icd ocl-icd-libopencl1 clinfo gcc libc6-dev chromium fonts-dejavu-core dieharder"
missing=""
for pkg in $APT_PACKAGES; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -e '.[test,opencl,report,tensorflow,jax]'
