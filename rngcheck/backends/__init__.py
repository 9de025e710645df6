"""Backends: the implementations under test. The contract is rngcheck.backends.contract (Backend);
how one is named, loaded and listed, rngcheck.backends.registry. This package only hands their public
names on, each imported at its first use (PEP 562): a module that needs one submodule of the package
(the stats battery: lifetime's die_with_parent for its pool) does not pay for the contract and the
registry, which bring the numbers layer and the description (about 19 ms of every stats command's
start-up). (Backends that compile a C or C++ helper on first use do it through rngcheck.native.)"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import BackendUnavailable, Rejected

if TYPE_CHECKING:
    from .contract import Backend
    from .registry import ENTRY_POINT_GROUP, KnownBackend, known_backends, load

_HOMES = {"Backend": "contract", "ENTRY_POINT_GROUP": "registry", "KnownBackend": "registry",
          "known_backends": "registry", "load": "registry"}

__all__ = ["Backend", "BackendUnavailable", "Rejected", "load", "known_backends", "KnownBackend", "ENTRY_POINT_GROUP"]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
