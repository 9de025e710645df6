"""The keras backend on each Keras backend, as file specs (``keras:backend=NAME`` where the backend is
registered; these work without the install)."""

from __future__ import annotations

from rngcheck.backends.keras_backend import KerasBackend


class KerasTorch(KerasBackend):
    def __init__(self) -> None:
        super().__init__(backend="torch")


class KerasJax(KerasBackend):
    def __init__(self) -> None:
        super().__init__(backend="jax")


class KerasTensorflow(KerasBackend):
    def __init__(self) -> None:
        super().__init__(backend="tensorflow")


class KerasNumpy(KerasBackend):
    def __init__(self) -> None:
        super().__init__(backend="numpy")
