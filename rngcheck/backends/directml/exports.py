"""What a platform layer hands the backend: the loaded libraries and what was loaded from where.

Made by rngcheck.backends.directml.loader (Windows, WSL) and .vkd3d (Linux on vkd3d); the
tests' fake layer (tests/directml_fake.py) provides the same surface.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

from ...errors import BackendUnavailable

ENV_DLL = "RNGCHECK_DIRECTML_DLL"


@dataclass
class Exports:
    """Loaded libraries: the address of each entry point, and what was loaded from where."""

    libraries: dict
    platform: str                     # "windows", "wsl" or "vkd3d" (see platform())
    paths: dict = field(default_factory=dict)
    directml_version: str = "unknown"
    details: dict = field(default_factory=dict)     # more for describe(): the D3D12 implementation, ...
    adapter: object = None            # a callable giving the adapter's description once a device exists

    def address(self, library: str, symbol: str) -> int:
        if library not in self.libraries:
            raise BackendUnavailable(f"{library} is not available on {self.platform}")
        try:
            function = getattr(self.libraries[library], symbol)
        except AttributeError:
            raise BackendUnavailable(f"{self.paths.get(library, library)} has no entry point {symbol} "
                                     f"(DirectML 1.4 or later is needed)") from None
        address = ctypes.cast(function, ctypes.c_void_p).value
        if address is None:
            raise BackendUnavailable(f"{self.paths.get(library, library)}: entry point {symbol} is a null pointer")
        return address

    @property
    def has_dxgi(self) -> bool:
        return "dxgi" in self.libraries
