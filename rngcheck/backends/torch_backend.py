"""The ``torch`` backend: PyTorch's at::Philox4_32 (ATen/core/PhiloxRNGEngine.h).

Eager PyTorch on the CPU has no Philox (its CPU generator is mt19937). The Philox engine that
PyTorch ships is the header-only ``at::Philox4_32``; the CPU code that TorchInductor
(``torch.compile``) generates calls it for ``torch.rand``, ``randn`` and ``randint``
(torch/csrc/inductor/cpp_prefix.h). This backend tests the header itself: rngcheck's own C++
helper (rngcheck/backends/philox_helper.cpp) is compiled with g++ against the torch
wheel's include/ folder on first use, into ``<cache>/torch`` (rebuilt when the source,
the flags or the torch version change), and called through ctypes. libtorch is never loaded
and ``import torch`` never runs.

Mapping (see docs/library-findings.md):
  * seed = k0 | k1 << 32 (state words 4, 5): the engine's key;
  * subsequence = words 2 | 3 << 32, offset = words 0 | 1 << 32 (in blocks): the engine's
    counter is then exactly the state's 128-bit counter;
  * the words are ``engine()``, one per call, lanes in order; a chunk after the first starts
    with the engine's own ``incr_n(first / 4)``;
  * output state (``state=library``, the default): what the engine can report after the draw,
    ``get_offset()`` as words 0-1, the subsequence it was given as words 2-3 (the engine
    keeps no accessor for them; its state, as PyTorch uses it, is seed, subsequence and a
    64-bit offset), the seed as the key. ``state=spec`` returns rngcheck.counter.advance
    instead, to check the words alone.

The helper and ``HelperBackend`` (rngcheck/backends/philox_helper.py) are shared with the
``onedpl`` backend, which builds the same source with ``-DRNGCHECK_ENGINE_ONEDPL``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import platform
from pathlib import Path

from ..errors import BackendSpecError, BackendUnavailable
from .philox_helper import SOURCE, HelperBackend, build_helper, compiler_or_unavailable

INSTALL_HINT = "torch is not installed: pip install rngcheck[torch] (torch==2.13.0, the CPU build)"
HEADER = Path("ATen") / "core" / "PhiloxRNGEngine.h"
STATE_MODES = ("library", "spec")


def torch_include_dir() -> tuple[Path, str]:
    """The torch wheel's include/ folder and torch's version, without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        raise BackendUnavailable(INSTALL_HINT)
    include = Path(spec.origin).resolve().parent / "include"
    if not (include / HEADER).is_file():
        raise BackendUnavailable(f"torch has no {HEADER.as_posix()} under {include} "
                                 "(a wheel without its C++ headers?): pip install rngcheck[torch]")
    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return include, version


class TorchBackend(HelperBackend):
    """PyTorch's at::Philox4_32 header, through rngcheck's compiled C++ helper."""

    name = "torch"

    def __init__(self, state: str = "library"):
        if state not in STATE_MODES:
            raise BackendSpecError(f"torch option state must be one of {', '.join(STATE_MODES)}, got {state!r}")
        self.state_mode = state
        include, self.torch_version = torch_include_dir()
        self.compiler = compiler_or_unavailable()
        self.header = include / HEADER
        self._load(build_helper(include, self.torch_version, self.compiler, folder="torch", source=SOURCE))

    def _spec_state(self) -> bool:
        return self.state_mode == "spec"

    def describe(self) -> dict[str, str]:
        return {
            "implementation": self.engine_name(),
            "version": f"torch {self.torch_version}",
            "torch": self.torch_version,
            "header": str(self.header),
            "compiler": self.compiler_version(),
            "helper": str(self.helper),
            "device": f"cpu ({platform.processor() or platform.machine()})",
            "output-state": ("the engine's get_offset() (words 0-1); words 2-3 as given" if self.state_mode == "library"
                             else "rngcheck.counter.advance (spec)"),
        }


def torch_spec_state() -> TorchBackend:
    """``torch`` with ``state=spec`` as a module:attr spec (before the entry point is registered:
    ``--backend rngcheck.backends.torch_backend:torch_spec_state``)."""
    return TorchBackend(state="spec")
