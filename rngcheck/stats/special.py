"""``scipy.special``'s functions, loaded when a p-value first needs one, without what
``scipy.special`` brings around them.

The tests' counting never calls a special function: only their p-values do, after the reading.
So the battery's modules name them through ``special`` below instead of importing scipy.special:
the workers forked to read a stream never load them, and with two processes the parent loads them
while the workers read (``import_beside``), not before they start.

Every function the battery calls (gammaincc, erfc, smirnov, ndtr, chdtrc, ...) is a ufunc of
scipy.special's compiled module ``scipy.special._ufuncs``, and ``scipy.special.gammaincc`` is that
very object. Importing the package ``scipy.special`` itself costs about 0.3 s of CPU more
(measured on this project's machine: 0.33 s against 0.04 s for the compiled module alone): its
``__init__`` imports its array-API layer, which star-imports numpy and so brings numpy.f2py,
numpy.testing and the codecs those import. ``_load_ufuncs`` loads the compiled module alone: the
package is stood in for by an empty module of its name and path while ``_ufuncs`` and the compiled
modules it needs load, then taken out again, so a later ``import scipy.special`` runs its
``__init__`` as usual and finds those modules loaded (the same objects). A name that is not a ufunc
there (``factorial2``), or a SciPy where the compiled module does not load this way, imports the
whole package, as before (tests/test_stats_special.py holds both ways to the same objects).

``special.gammaincc(...)`` is ``scipy.special.gammaincc(...)``: the same function object, found
once and kept on ``special`` (docs/statistics.md, Speed). Where ``SCIPY_ARRAY_API`` is set,
scipy.special hands on array-API wrappers of some of these ufuncs instead: there the package is
imported whole and its own objects used, as before.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import threading
import types
from typing import Any

PACKAGE, UFUNCS = "scipy.special", "scipy.special._ufuncs"
_LOADING = threading.Lock()


class _Special:
    """scipy.special's attributes, each found at the first use: in its compiled ufuncs where
    scipy.special is not imported (``_load_ufuncs``), else in scipy.special (imported then)."""

    def __getattr__(self, name: str) -> Any:   # only for names not yet kept on the instance
        if name.startswith("__"):
            raise AttributeError(name)
        # under the lock: a load in flight in import_beside's thread ends (its stand-in gone) first
        ufuncs = None if os.environ.get("SCIPY_ARRAY_API") else _load_ufuncs()
        if ufuncs is not None and name == "_ufuncs":
            value = ufuncs
        elif ufuncs is not None and isinstance(getattr(ufuncs, name, None), _ufunc_type()):
            value = getattr(ufuncs, name)
        else:
            value = getattr(importlib.import_module(PACKAGE), name)
        setattr(self, name, value)
        return value


def _ufunc_type() -> type:
    import numpy

    return numpy.ufunc


def _load_ufuncs():
    """``scipy.special._ufuncs`` without ``scipy.special``'s ``__init__`` (module docstring), or
    None where it cannot be had so (then the caller imports the package). While it loads, the
    stand-in is what ``import scipy.special`` would find: rngcheck's own threads reach scipy.special
    only through ``special``, which waits for ``_LOADING``; a program that imports rngcheck and
    imports scipy.special in another thread at that moment could find the stand-in (a battery's
    reading with two processes: the first 0.04 s or so while its workers read)."""
    with _LOADING:
        loaded = sys.modules.get(UFUNCS)
        if loaded is not None:
            return loaded
        try:
            found = importlib.util.find_spec(PACKAGE)   # imports scipy (light), not scipy.special
        except ImportError:
            return None
        if found is None or not found.submodule_search_locations or PACKAGE in sys.modules:
            return None
        stand_in = types.ModuleType(PACKAGE)
        stand_in.__path__ = list(found.submodule_search_locations)
        stand_in.__package__ = PACKAGE
        sys.modules[PACKAGE] = stand_in
        try:
            return importlib.import_module(UFUNCS)
        except Exception:   # another SciPy's layout: the package, imported whole, says what fails
            return None
        finally:
            if sys.modules.get(PACKAGE) is stand_in:
                del sys.modules[PACKAGE]


special: Any = _Special()


_IMPORTING: threading.Thread | None = None


def import_beside() -> None:
    """Start loading scipy.special's ufuncs (``_load_ufuncs``) in a thread, beside work that does
    not need them (a pool's workers reading), so that the p-values do not wait for them at the end. The caller must call
    ``import_settled`` before forking (a child must not inherit a lock held by an import half done):
    battery.feed_parallel starts it after its workers exist. Not in one process: there the
    import would take the GIL from the reading for as long as it saves."""
    global _IMPORTING
    if _IMPORTING is None and PACKAGE not in sys.modules and UFUNCS not in sys.modules:
        _IMPORTING = threading.Thread(target=_import, name="rngcheck-import-scipy.special", daemon=True)
        _IMPORTING.start()


def _import() -> None:
    try:
        _load_ufuncs()
    except Exception:  # nothing printed from this thread: the first attribute asked for loads it again
        pass           # (or imports scipy.special), in the thread that asks, and says what fails


def import_settled() -> None:
    """Wait for an import started by import_beside (if any) to end."""
    global _IMPORTING
    if _IMPORTING is not None:
        _IMPORTING.join()
        _IMPORTING = None
