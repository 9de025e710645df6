"""Backends: the implementations under test. The contract is rngcheck.backends.contract (Backend);
how one is named, loaded and listed, rngcheck.backends.registry. This package only hands their public
names on. (Backends that compile a C or C++ helper on first use do it through rngcheck.native.)"""

from ..errors import BackendUnavailable, Rejected
from .contract import Backend
from .registry import ENTRY_POINT_GROUP, KnownBackend, known_backends, load

__all__ = ["Backend", "BackendUnavailable", "Rejected", "load", "known_backends", "KnownBackend", "ENTRY_POINT_GROUP"]
