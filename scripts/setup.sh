#!/usr/bin/env bash
# Everything rngcheck needs on a fresh Debian/Ubuntu machine: PoCL (a CPU OpenCL device), gcc
# (for the exec example in C), dieharder (the statistical peer), Chromium (the report's browser test; driven by Playwright, which
# downloads no browser of its own), the Python package with its extras: tests, OpenCL, reports,
# and the library backends (randomgen, TensorFlow, JAX, OpenVINO, ONNX Runtime with onnx), MkDocs (the docs site);
# and real DirectML on Linux: Mesa's lavapipe
# (a CPU Vulkan device), then the pinned DirectML builds, vkd3d and rngcheck's bridge, fetched and
# built into the cache ($RNGCHECK_CACHE, else ~/.cache/rngcheck) by
# `python3 -m rngcheck.backends.directml.bridge.build` (seconds once cached); and the Windows
# DirectML.dll under Wine (wine, mingw-w64, Xvfb), by `python3 -m rngcheck.backends.directml.bridge.windows`.
# Idempotent; run as root or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
APT_PACKAGES="pocl-opencl-icd ocl-icd-libopencl1 clinfo gcc libc6-dev chromium fonts-dejavu-core dieharder
  mesa-vulkan-drivers libvulkan1 libvulkan-dev bison flex dpkg-dev g++ librandom123-dev
  wine wine64 gcc-mingw-w64-x86-64 xvfb xauth"
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

python3 -m pip install -q --disable-pip-version-check -e '.[test,parquet,opencl,report,tensorflow,jax,mkl,curand,torch,onedpl,distributed,openvino,onnxruntime,iree,tinygrad,triton,numba,mlx,docs,submission]'

# TensorFlow.js (issue 43): its random ops behind the exec protocol (rngcheck/backends/tfjs/tfjs_exec.js), from npm
# at the versions package-lock.json pins (node 18 or later; Debian's nodejs where none is on PATH). Measured: npm ci
# about 5 s, 53 MB of node_modules.
command -v npm >/dev/null 2>&1 || $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
npm ci --silent --no-audit --no-fund --prefix rngcheck/backends/tfjs

# Real DirectML (Linux): the build says in one line what is missing when a piece cannot be had.
# Outside CI a machine that cannot have it (no Debian mirror, say) goes on without it.
if [ "$(uname -s)" = "Linux" ]; then
  if ! python3 -m rngcheck.backends.directml.bridge.build --quiet; then
    [ -z "${CI:-}" ] || exit 1
    echo "setup: real DirectML is not set up (reason above): the directml backend stays unavailable" >&2
  fi
  # The Windows DirectML.dll under Wine: vkd3d cross-built with mingw-w64, dml_exec.exe, a Wine prefix.
  if ! python3 -m rngcheck.backends.directml.bridge.windows --quiet; then
    [ -z "${CI:-}" ] || exit 1
    echo "setup: DirectML.dll under Wine is not set up (reason above): directml-wine stays unavailable" >&2
  fi
fi

# DirectML across its releases (docs/directml.md, "DirectML by release"): every release's wheel from
# PyPI, checked against rngcheck.backends.directml.releases' sha256 and unpacked into the cache once.
if [ "$(uname -s)" = "Linux" ]; then
  if ! python3 -m rngcheck.backends.directml.releases fetch >/dev/null; then
    [ -z "${CI:-}" ] || exit 1
    echo "setup: the DirectML releases are not fetched (reason above): scripts/directml_matrix.sh fetches them" >&2
  fi
fi
