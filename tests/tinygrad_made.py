"""The tinygrad backend realising its lazy tensors in the order made (``tinygrad:realise=made`` where the
backend is registered; a file spec works without the install)."""

from __future__ import annotations

from rngcheck.backends.tinygrad_backend import TinygradBackend


class RealisedAsMade(TinygradBackend):
    def __init__(self) -> None:
        super().__init__(realise="made")
