"""The GPU options of the torch-free backends (issue 41): on a machine without a CUDA device each is unavailable
with a one-line reason naming what is missing (no traceback); wrong option values are refused. Their GPU paths
run only in scripts/gpu-check.sh on a lent GPU machine."""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rngcheck.errors import BackendSpecError

ROOT = Path(__file__).resolve().parents[1]
# spec -> the words its reason must contain on a machine without a CUDA device (or without CuPy)
GPU_OPTIONS = {"triton:device=gpu": ("triton", "CUDA device"), "numba:mode=cuda": ("numba", "CUDA device"),
               "curand:device=gpu": ("curand", "device=gpu"), "jax:platform=gpu": ("jax", "'gpu'")}


def _has_gpu() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.skipif(_has_gpu(), reason="a CUDA device is present: the GPU options are available here")
def test_gpu_options_are_unavailable_in_one_line_without_a_gpu():
    needed = {"triton:device=gpu": ("triton", "torch"), "numba:mode=cuda": ("numba",),
              "curand:device=gpu": (), "jax:platform=gpu": ("jax",)}
    specs = [spec for spec, modules in needed.items() if all(importlib.util.find_spec(m) for m in modules)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TRITON_INTERPRET", None)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    done = subprocess.run([sys.executable, "-m", "rngcheck", "backends", *specs], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    lines = {line.split(" ", 1)[0]: line for line in output.splitlines() if " unavailable: " in line}
    for spec in specs:
        assert spec in lines, output
        assert all(word in lines[spec] for word in GPU_OPTIONS[spec]), lines[spec]


@pytest.mark.parametrize("module, cls, option", [("triton_backend", "TritonBackend", {"device": "cuda0"}),
                                                 ("numba_backend", "NumbaBackend", {"mode": "rocm"}),
                                                 ("curand_backend", "CurandBackend", {"device": "tpu"})])
def test_unknown_device_values_are_refused(module, cls, option):
    backend = getattr(importlib.import_module(f"rngcheck.backends.{module}"), cls)
    with pytest.raises(BackendSpecError):
        backend(**option)
