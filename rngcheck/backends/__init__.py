"""Backends: the implementations under test. The contract is rngcheck.backends.contract (Backend);
how one is named, loaded and listed, rngcheck.backends.registry; native helpers (the cache, compiling
on first use), rngcheck.native. This package only hands their public names on."""

from ..errors import BackendUnavailable, Rejected
from .contract import Backend
from .registry import ENTRY_POINT_GROUP, KnownBackend, known_backends, load

__all__ = ["Backend", "BackendUnavailable", "Rejected", "load", "known_backends", "KnownBackend", "ENTRY_POINT_GROUP"]
