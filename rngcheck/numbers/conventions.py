"""Every convention module, imported once so that each registers itself (rngcheck.numbers.CONVENTIONS)."""

from . import curand, jax, mkl, onnxruntime, onnxruntime_cpu, pytorch, tensorflow  # noqa: F401
