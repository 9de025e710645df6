"""``scipy.special``, imported when a p-value first needs it.

The tests' counting never calls a special function: only their p-values do, after the reading.
Importing ``scipy.special`` costs about 0.17 s of CPU (its array-API layer star-imports numpy,
which brings numpy.f2py and numpy.testing), so the battery's modules name it through ``special``
below instead of importing it: the workers forked to read a stream never import it, and with two
processes the parent imports it while they read (``pvalues.prepare_ks``), not before they start.

``special.gammaincc(...)`` is ``scipy.special.gammaincc(...)``: the same function object, found
once and kept on ``special`` (docs/statistics.md, Speed).
"""

from __future__ import annotations

import importlib
from typing import Any


class _Deferred:
    """A module's attributes, the module imported at the first one asked for."""

    def __init__(self, module: str):
        self._module_name = module

    def __getattr__(self, name: str) -> Any:   # only for names not yet kept on the instance
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(importlib.import_module(self._module_name), name)
        setattr(self, name, value)
        return value


special: Any = _Deferred("scipy.special")
