"""The ``onedpl`` backend: Intel oneDPL's ``oneapi::dpl::philox4x32`` on the host, without SYCL.

oneDPL (PyPI ``onedpl-devel``, headers only) implements P2075's ``philox_engine``, the engine
C++26 standardises as ``std::philox4x32``. Its public header ``<oneapi/dpl/random>`` needs a
SYCL compiler (``sycl_defs.h``: ``#error "Device execution policies are enabled, but
SYCL_LANGUAGE_VERSION/CL_SYCL_LANGUAGE_VERSION macros are not defined"``), but the engine's own
headers compile with g++ once two SYCL types are declared (rngcheck/backends/
philox_helper.cpp, built with ``-DRNGCHECK_ENGINE_ONEDPL`` into ``<cache>/onedpl``).

Mapping (see docs/library-findings.md and the helper):
  * ``seed(k0)`` sets K0 (K1 = 0); ``set_counter({w3, w2, w1, w0})`` the counter, most
    significant word first; a key with k1 != 0 goes in through the engine's extractor
    (``operator>>``, "K0 K1 X0 X1 X2 X3 i"), as oneDPL has no seed-sequence constructor;
  * chunks after the first start with ``discard(4 * first_block)``;
  * the output state is the engine's own K and X after the draw, read with ``operator<<``.
Options: ``include=PATH``, a folder holding ``oneapi/dpl/...`` (default: the installed
``onedpl-devel`` distribution's).
"""

from __future__ import annotations

import importlib.metadata
import platform
from pathlib import Path

from ..errors import BackendUnavailable
from .philox_helper import HelperBackend, build_helper, compiler_or_unavailable

INSTALL_HINT = "oneDPL is not installed: pip install rngcheck[onedpl] (onedpl-devel==2022.14.0, headers only)"
HEADER = Path("oneapi") / "dpl" / "internal" / "random_impl" / "philox_engine.h"


def onedpl_include_dir() -> tuple[Path, str]:
    """The include folder of the installed onedpl-devel and its version."""
    try:
        distribution = importlib.metadata.distribution("onedpl-devel")
    except importlib.metadata.PackageNotFoundError:
        raise BackendUnavailable(INSTALL_HINT) from None
    for file in distribution.files or ():
        if file.name == HEADER.name and file.as_posix().endswith(HEADER.as_posix()):
            header = Path(file.locate()).resolve()
            return header.parents[len(HEADER.parts) - 1], distribution.version
    raise BackendUnavailable(f"onedpl-devel {distribution.version} has no {HEADER.as_posix()}: {INSTALL_HINT}")


class OneDPLBackend(HelperBackend):
    """oneapi::dpl::philox4x32 through rngcheck's compiled C++ helper (host, g++, no SYCL)."""

    name = "onedpl"

    def __init__(self, include: str | None = None):
        if include:
            self.include = Path(include).expanduser().resolve()
            if not (self.include / HEADER).is_file():
                raise BackendUnavailable(f"onedpl option include={include}: no {HEADER.as_posix()} there")
            self.version = "unknown (include=PATH)"
        else:
            self.include, self.version = onedpl_include_dir()
        self.compiler = compiler_or_unavailable()
        self._load(build_helper(self.include, self.version, self.compiler,
                                defines=("-DRNGCHECK_ENGINE_ONEDPL",), folder="onedpl"))

    def describe(self) -> dict[str, str]:
        return {
            "implementation": self.engine_name(),
            "version": f"onedpl {self.version}",
            "onedpl": self.version,
            "header": str(self.include / HEADER),
            "compiler": self.compiler_version(),
            "helper": str(self.helper),
            "device": f"cpu ({platform.processor() or platform.machine()}), host code",
            "output-state": "the engine's K and X after the draw (operator<<)",
        }
