"""The platform layer for Linux without /dev/dxg: Microsoft's WSL build of DirectML on vkd3d.

What it loads, in this order, each missing piece named in one line (BackendUnavailable):
  1. ``libd3d12.so`` of rngcheck's bridge (vkd3d 1.14 and d3d12_bridge.c; the set-up's cache,
     or the ``d3d12=`` option), with RTLD_GLOBAL so that DirectML's DT_NEEDED finds it; it
     must be the bridge (its ``rngcheck_bridge_*`` entry points) and read DXIL;
  2. a Vulkan device, asked of the Vulkan loader before any D3D12 call (lavapipe where there is
     no GPU; VK_ICD_FILENAMES / VK_DRIVER_FILES choose a driver, VKD3D_VULKAN_DEVICE a device);
  3. the bridge's ``libdxcore.so``, then ``libdirectml.so``: a pinned torch-directml build by
     version (``lib=0.2.5``), or any file (``lib=PATH``), else RNGCHECK_DIRECTML_DLL, else the
     newest pinned build.
A process holds one D3D12 and one DirectML: rngcheck runs each backend in its own worker, so one
run can compare builds (``--backend directml:lib=0.2.5 --backend directml:lib=0.2.0``).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from ...errors import BackendUnavailable
from . import releases
from .bridge import chain
from .bridge.build import SetupError
from .exports import ENV_DLL, Exports

SETUP_HINT = "run `python -m rngcheck.backends.directml.bridge.build` (scripts/setup.sh does)"
ENV_BRIDGE = "RNGCHECK_D3D12_BRIDGE"


class BridgeAdapter(ctypes.Structure):
    """struct rngcheck_bridge_adapter (bridge.h)."""

    _fields_ = [("valid", ctypes.c_int32), ("vendor_id", ctypes.c_uint32), ("device_id", ctypes.c_uint32),
                ("driver_version", ctypes.c_uint32), ("api_version", ctypes.c_uint32),
                ("device_type", ctypes.c_uint32), ("luid_low", ctypes.c_uint32), ("luid_high", ctypes.c_int32),
                ("dedicated_memory", ctypes.c_uint64), ("name", ctypes.c_char * 256)]


VK_DEVICE_TYPES = {0: "other", 1: "integrated GPU", 2: "discrete GPU", 3: "virtual GPU", 4: "CPU"}


def vulkan_version(value: int) -> str:
    """VK_API_VERSION_MAJOR/MINOR/PATCH."""
    return f"{(value >> 22) & 0x7F}.{(value >> 12) & 0x3FF}.{value & 0xFFF}"


def bridge_folder(d3d12: str | None) -> Path:
    configured = (d3d12 or os.environ.get(ENV_BRIDGE, "")).strip()
    if configured:
        path = Path(configured).expanduser()
        return path.parent if path.is_file() else path
    return chain.Layout.default().bridge


def directml_path(lib: str | None) -> tuple[Path, str]:
    """(the libdirectml.so to load, its version name or 'unknown')."""
    configured = (lib or os.environ.get(ENV_DLL, "")).strip()
    if configured:
        build = chain.find_build(configured)
        release = releases.find(configured, releases.LINUX) if build is None else None
        if release is not None:
            try:
                return releases.ensure(release), f"{release.directml} ({release.project} {release.project_version})"
            except SetupError as error:
                raise BackendUnavailable(f"DirectML {release.directml} ({release.project}): {error}") from None
        if build is None:
            path = Path(configured).expanduser()
            if path.is_dir():
                path = path / "libdirectml.so"
            if "/" not in configured and not path.exists():
                raise BackendUnavailable(f"lib={configured} is neither a file nor a pinned DirectML build "
                                         f"({chain.build_names()}; releases: {releases.names(releases.LINUX)})")
            if not path.is_file():
                raise BackendUnavailable(f"no DirectML library at {path}")
            pinned = chain.find_build(path.parent.name)      # a copy the set-up unpacked
            cached = releases.in_cache(path)
            if cached is not None:      # the cache's own file: checked as a pinned build's is
                checked(cached, f"DirectML {cached.directml} ({cached.project})")
            # absolute: a bare name (lib=x.so) would make the loader search the system's library path
            return path.resolve(), pinned.version if pinned else "unknown"
    else:
        build = chain.DEFAULT_BUILD
    path = chain.Layout.default().directml(build)
    if not path.is_file():
        raise BackendUnavailable(f"DirectML {build.version} (torch-directml) is not set up: no {path}; {SETUP_HINT}")
    return checked(releases.of_build(build), f"DirectML {build.version} (torch-directml)"), build.version


def checked(release: releases.Release, what: str) -> Path:
    """The cache's library of ``release``, the file its unpacking recorded (never a damaged one: a
    truncated library dies with SIGBUS inside dlopen); BackendUnavailable naming it otherwise."""
    try:
        return releases.checked(release)
    except SetupError as error:
        raise BackendUnavailable(f"{what}: {error}") from None


def _cdll(path: Path, what: str):
    try:
        return ctypes.CDLL(str(path), mode=os.RTLD_GLOBAL)
    except OSError as error:
        raise BackendUnavailable(f"cannot load {what} {path}: {error}") from None


def _function(library, name, restype, argtypes=()):
    function = getattr(library, name)
    function.restype, function.argtypes = restype, list(argtypes)
    return function


def load(lib: str | None = None, d3d12: str | None = None) -> Exports:
    folder = bridge_folder(d3d12)
    d3d12_path, dxcore_path = folder / "libd3d12.so", folder / "libdxcore.so"
    if not d3d12_path.is_file():
        raise BackendUnavailable(f"vkd3d (D3D12 over Vulkan) is not set up: no {d3d12_path}; {SETUP_HINT}")
    d3d12_lib = _cdll(d3d12_path, "D3D12 (vkd3d bridge)")
    try:
        dxil = _function(d3d12_lib, "rngcheck_bridge_dxil", ctypes.c_int)
        probe = _function(d3d12_lib, "rngcheck_bridge_probe_vulkan", ctypes.c_int,
                          (ctypes.c_char_p, ctypes.c_size_t))
        vkd3d_version = _function(d3d12_lib, "rngcheck_bridge_vkd3d_version", ctypes.c_char_p)
        bridge_version = _function(d3d12_lib, "rngcheck_bridge_version", ctypes.c_char_p)
        adapter = _function(d3d12_lib, "rngcheck_bridge_adapter", ctypes.c_int, (ctypes.POINTER(BridgeAdapter),))
        installed = _function(d3d12_lib, "rngcheck_bridge_adapters_installed", ctypes.c_int)
    except AttributeError as error:
        raise BackendUnavailable(f"{d3d12_path} is not rngcheck's vkd3d bridge ({error}); {SETUP_HINT}") from None
    if not dxil():
        raise BackendUnavailable(f"vkd3d in {d3d12_path} cannot read DXIL (built without "
                                 f"VKD3D_SHADER_UNSUPPORTED_DXIL), and DirectML's shaders are DXIL; {SETUP_HINT}")
    name = ctypes.create_string_buffer(256)
    devices = probe(name, len(name))
    if devices == -1:
        raise BackendUnavailable("no Vulkan loader (libvulkan.so.1): apt-get install libvulkan1")
    if devices == -2:
        raise BackendUnavailable("the Vulkan loader cannot create an instance (no usable Vulkan driver): "
                                 "apt-get install mesa-vulkan-drivers for lavapipe, a CPU device")
    if devices == 0:
        raise BackendUnavailable("no Vulkan device: install a Vulkan driver (apt-get install mesa-vulkan-drivers "
                                 "for lavapipe, a CPU device), or check VK_ICD_FILENAMES / VK_DRIVER_FILES")
    if not dxcore_path.is_file():
        raise BackendUnavailable(f"DXCore (bridge) is not set up: no {dxcore_path}; {SETUP_HINT}")
    dxcore = _cdll(dxcore_path, "DXCore (bridge)")
    dml_path, version = directml_path(lib)
    directml = _cdll(dml_path, "DirectML")

    def describe_adapter() -> dict[str, str]:
        info = BridgeAdapter()
        if not adapter(ctypes.byref(info)):
            return {}
        return {
            "adapter": f"{info.name.decode(errors='replace')} (Vulkan {VK_DEVICE_TYPES.get(info.device_type, '?')})",
            "vendor id": f"0x{info.vendor_id:04X}",
            "device id": f"0x{info.device_id:04X}",
            "driver version": str(info.driver_version),
            "Vulkan API": vulkan_version(info.api_version),
            "bridge adapters": f"{installed()} System V adapters in vkd3d's vtables",
        }

    details = {
        "D3D12 implementation": f"{vkd3d_version().decode()} over Vulkan ({bridge_version().decode()})",
        "Vulkan device": name.value.decode(errors="replace"),
    }
    return Exports({"d3d12": d3d12_lib, "directml": directml, "dxcore": dxcore}, "vkd3d",
                   {"d3d12": str(d3d12_path), "dxcore": str(dxcore_path), "directml": str(dml_path)},
                   version, details, describe_adapter)
