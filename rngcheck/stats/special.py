"""``scipy.special``, imported when a p-value first needs it.

The tests' counting never calls a special function: only their p-values do, after the reading.
Importing ``scipy.special`` costs about 0.17 s of CPU (its array-API layer star-imports numpy,
which brings numpy.f2py and numpy.testing), so the battery's modules name it through ``special``
below instead of importing it: the workers forked to read a stream never import it, and with two
processes the parent imports it while they read (``import_beside``), not before they start.

``special.gammaincc(...)`` is ``scipy.special.gammaincc(...)``: the same function object, found
once and kept on ``special`` (docs/statistics.md, Speed).
"""

from __future__ import annotations

import importlib
import sys
import threading
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


_IMPORTING: threading.Thread | None = None


def import_beside() -> None:
    """Start importing scipy.special in a thread, beside work that does not need it (a pool's
    workers reading), so that the p-values do not wait for it at the end. The caller must call
    ``import_settled`` before forking (a child must not inherit a lock held by an import half done):
    battery.feed_parallel starts it after its workers exist. Not in one process: there the
    import would take the GIL from the reading for as long as it saves."""
    global _IMPORTING
    if _IMPORTING is None and "scipy.special" not in sys.modules:
        _IMPORTING = threading.Thread(target=_import, name="rngcheck-import-scipy.special", daemon=True)
        _IMPORTING.start()


def _import() -> None:
    try:
        importlib.import_module("scipy.special")
    except Exception:  # the first attribute asked for imports it again, and says what failed
        pass


def import_settled() -> None:
    """Wait for an import started by import_beside (if any) to end."""
    global _IMPORTING
    if _IMPORTING is not None:
        _IMPORTING.join()
        _IMPORTING = None
