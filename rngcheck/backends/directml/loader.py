"""Finding DirectML and Direct3D 12 on this machine, or saying in one line why they are absent.

Windows: DirectML.dll (the Microsoft.AI.DirectML redistributable named by the environment
variable RNGCHECK_DIRECTML_DLL, a file or the directory holding it; else the DLL search
path, which finds System32's DirectML.dll on Windows 10 1903 and later), d3d12.dll and
dxgi.dll from the system.
WSL2: /dev/dxg (the paravirtualised GPU), libd3d12.so (in /usr/lib/wsl/lib, the WSL
graphics driver directory) and libdirectml.so (RNGCHECK_DIRECTML_DLL, else the loader path).
DXGI does not exist there: the device is D3D12CreateDevice's default adapter.
Linux without /dev/dxg: the same libdirectml.so (a pinned torch-directml build) on rngcheck's
vkd3d bridge and any Vulkan device (rngcheck.backends.directml.vkd3d).
Anywhere else, and for a 32-bit Python, :func:`load` raises BackendUnavailable.
Importing this module never loads anything.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable
from pathlib import Path

from ...errors import BackendUnavailable
from .exports import ENV_DLL, Exports

WSL_DRIVER_DIR = Path("/usr/lib/wsl/lib")
DXG_DEVICE = Path("/dev/dxg")


def unavailable_reason() -> str | None:
    """Why DirectML cannot be loaded here without trying, or None if it may be.

    On Linux without /dev/dxg the answer is None too: the vkd3d bridge may be set up, and
    :func:`load` says which piece is missing if not.
    """
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return "the DirectML backend needs a 64-bit Python"
    if sys.platform == "win32" or sys.platform.startswith("linux"):
        return None
    return f"DirectML needs Windows, WSL2 or Linux with Vulkan (this is {sys.platform})"


def platform() -> str:
    """windows; wsl (Microsoft's libd3d12.so over /dev/dxg); vkd3d (rngcheck's bridge)."""
    if sys.platform == "win32":
        return "windows"
    return "wsl" if DXG_DEVICE.exists() else "vkd3d"


def _directml_candidates(default_name: str, lib: str | None = None) -> list[str]:
    configured = (lib or os.environ.get(ENV_DLL, "")).strip()
    if configured:
        path = Path(configured).resolve()   # absolute: a bare name would be searched on the system's path
        return [str(path / default_name) if path.is_dir() else str(path)]
    return [default_name]


def _open(loader, candidates, what):
    errors = []
    for candidate in candidates:
        try:
            return loader(candidate), candidate
        except OSError as error:
            errors.append(f"{candidate}: {error}")
    raise BackendUnavailable(f"cannot load {what} ({'; '.join(errors)})")


def _windll() -> Callable[[str], ctypes.CDLL]:
    """ctypes.WinDLL, which exists only on Windows (elsewhere: the AttributeError ctypes gives)."""
    if sys.platform != "win32":
        raise AttributeError("module 'ctypes' has no attribute 'WinDLL'")
    return ctypes.WinDLL


def windows_file_version(path: str) -> str:
    """The file version (a.b.c.d) of a DLL, from its VS_FIXEDFILEINFO (version.dll)."""
    try:
        version = _windll()("version.dll")
        size = version.GetFileVersionInfoSizeW(path, None)
        if not size:
            return "unknown"
        data = ctypes.create_string_buffer(size)
        if not version.GetFileVersionInfoW(path, 0, size, data):
            return "unknown"
        pointer, length = ctypes.c_void_p(), ctypes.c_uint()
        if not version.VerQueryValueW(data, "\\", ctypes.byref(pointer), ctypes.byref(length)):
            return "unknown"
        if not pointer.value:
            return "unknown"
        words = (ctypes.c_uint32 * 13).from_address(pointer.value)   # VS_FIXEDFILEINFO
        ms, ls = words[2], words[3]                                    # dwFileVersionMS, dwFileVersionLS
        return f"{ms >> 16}.{ms & 0xFFFF}.{ls >> 16}.{ls & 0xFFFF}"
    except (OSError, AttributeError, ValueError):
        return "unknown"


def _loaded_path(library) -> str:
    """The full path Windows loaded a DLL from (GetModuleFileNameW)."""
    try:
        buffer = ctypes.create_unicode_buffer(32768)
        kernel32 = _windll()("kernel32")
        kernel32.GetModuleFileNameW.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p, ctypes.c_uint32]
        if kernel32.GetModuleFileNameW(library._handle, buffer, len(buffer)):
            return buffer.value
    except (OSError, AttributeError):
        pass
    return getattr(library, "_name", "?")


def load(lib: str | None = None, d3d12: str | None = None) -> Exports:
    """The DirectML, D3D12 (and on Windows DXGI) libraries, or BackendUnavailable with the reason.

    ``lib``: the DirectML library (a path, or on Linux a pinned build's version such as
    ``0.2.5``); default RNGCHECK_DIRECTML_DLL, else the platform's default. ``d3d12``: on
    Linux without /dev/dxg, the folder of the vkd3d bridge (default: the set-up's cache).
    """
    reason = unavailable_reason()
    if reason:
        raise BackendUnavailable(reason)
    where = platform()
    if where == "windows":
        win = _windll()
        d3d12_dll, _ = _open(win, ["d3d12.dll"], "d3d12.dll (Direct3D 12)")
        dxgi, _ = _open(win, ["dxgi.dll"], "dxgi.dll")
        directml, _ = _open(win, _directml_candidates("DirectML.dll", lib),
                            f"DirectML.dll (set {ENV_DLL} to the Microsoft.AI.DirectML package's bin\\x64-win)")
        path = _loaded_path(directml)
        return Exports({"d3d12": d3d12_dll, "dxgi": dxgi, "directml": directml}, "windows",
                       {"d3d12": _loaded_path(d3d12_dll), "dxgi": _loaded_path(dxgi), "directml": path},
                       windows_file_version(path))
    if where == "vkd3d":
        from . import vkd3d
        return vkd3d.load(lib, d3d12)
    mode = os.RTLD_GLOBAL if hasattr(os, "RTLD_GLOBAL") else 0
    d3d12_lib, d3d12_path = _open(lambda p: ctypes.CDLL(p, mode=mode),
                                  [str(WSL_DRIVER_DIR / "libd3d12.so"), "libd3d12.so"], "libd3d12.so (WSL)")
    directml, dml_path = _open(lambda p: ctypes.CDLL(p, mode=mode), _directml_candidates("libdirectml.so", lib),
                               f"libdirectml.so (set {ENV_DLL} to the Microsoft.AI.DirectML package's "
                               f"bin/x64-linux/libdirectml.so)")
    return Exports({"d3d12": d3d12_lib, "directml": directml}, "wsl", {"d3d12": d3d12_path, "directml": dml_path},
                   _version_from_path(dml_path))


def _version_from_path(path: str) -> str:
    """The NuGet package version in a path such as .../microsoft.ai.directml/1.15.4/bin/..."""
    parts = Path(path).parts
    for index, part in enumerate(parts[:-1]):
        if part.lower().startswith("microsoft.ai.directml"):
            tail = part[len("microsoft.ai.directml"):].lstrip(".")
            return tail or parts[index + 1]
    return "unknown"
