"""The numba backend in numba's CUDA simulator (``numba:mode=cudasim`` where the backend is registered; a file spec
works without the install)."""

from __future__ import annotations

from rngcheck.backends.numba_backend import NumbaBackend


class Simulated(NumbaBackend):
    def __init__(self) -> None:
        super().__init__(mode="cudasim")
