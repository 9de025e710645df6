"""The pinned pieces of real DirectML on Linux, and where they live once set up.

DirectML has a Linux build: the one Microsoft made for WSL, shipped in the ``torch-directml``
wheels on PyPI as ``torch_directml/libdirectml.so``. It needs a D3D12 (``libd3d12.so``) and
DXCore (``libdxcore.so``). Without WSL's /dev/dxg, rngcheck gives it vkd3d (Wine's D3D12
over Vulkan), built with its DXIL front end from the copy bundled in Debian's ``wine``
source package, plus the bridge in this folder (d3d12_bridge.c, dxcore_bridge.c), on any
Vulkan device: Mesa's lavapipe where there is no GPU. ``build.py`` fetches and builds it all
into the cache; ``rngcheck.backends.directml.loader`` finds it there.

This module is the one home of the pins and of the layout under the cache (rngcheck.native's
cache root); it loads nothing native.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ....native import cache_root


@dataclass(frozen=True)
class DirectMLBuild:
    """One Linux build of DirectML, as a torch-directml wheel pins it."""

    version: str            # the torch-directml version, which names the build here
    python: str             # the wheel's CPython tag (the wheel is fetched for that Python)
    wheel: str              # the wheel's file name on PyPI
    sha256: str             # of the wheel
    feature_level: str      # the highest DML_FEATURE_LEVEL it reports (measured, for the docs)

    @property
    def short(self) -> str:
        """0.2.5.dev240914 -> 0.2.5"""
        return self.version.split(".dev")[0]


DIRECTML_BUILDS = (
    DirectMLBuild("0.2.5.dev240914", "3.11",
                  "torch_directml-0.2.5.dev240914-cp311-cp311-manylinux2010_x86_64.whl",
                  "6afb675585d30018c813e5ba203a3437073748919af8ab3e910092a0e0ec531f", "6.2"),
    DirectMLBuild("0.2.0.dev230426", "3.10",
                  "torch_directml-0.2.0.dev230426-cp310-cp310-manylinux2010_x86_64.whl",
                  "8976b6ae4c1b7bb6f770109106692cfc9ac9643808b0569ebee70e889bcfb8a7", "5.2"),
)
DEFAULT_BUILD = DIRECTML_BUILDS[0]
WHEEL_MEMBER = "torch_directml/libdirectml.so"


@dataclass(frozen=True)
class DebianSource:
    """A Debian source package fetched with ``apt-get source`` from a release's deb-src."""

    package: str
    version: str
    suite: str
    orig: str               # the upstream tarball's file name
    sha256: str             # of the upstream tarball (as the .dsc lists it)
    top: str                # its top-level folder


# vkd3d 1.14 as bundled in Wine 10.0 (libs/vkd3d; Wine's include/ has the .idl files and
# dxcore_interface.h). Debian packages no vkd3d newer than 1.2, which cannot read DXIL.
WINE_SOURCE = DebianSource("wine", "10.0~repack-6", "trixie", "wine_10.0~repack.orig.tar.xz",
                           "e87ff2971c9b2e79fc63341f044d7513e66f3c3782b49609746428caa87c6ee6", "wine-10.0")
VKD3D_VERSION = "1.14"


@dataclass(frozen=True)
class DebianBinary:
    package: str
    version: str
    sha256: str
    member: str             # the file used from it


# widl, Wine's IDL compiler, generates the D3D12 / DXGI / COM headers from Wine's .idl files.
# It needs only libc, so the package is unpacked, not installed (that would pull ~750 MB).
WIDL = DebianBinary("wine64-tools", "8.0~repack-4",
                    "0bccfe63a6b25d0fa4c517d7f2b47546eb371ca974e4823716f1176b406e08db", "usr/lib/wine/widl")


@dataclass(frozen=True)
class Layout:
    """Where the set-up puts each piece under one cache folder."""

    root: Path
    fetched: Path | None = None     # where fetched files go (default: root/downloads)

    @classmethod
    def default(cls) -> Layout:
        return cls(cache_root() / "directml")

    @property
    def downloads(self) -> Path:
        return self.fetched or self.root / "downloads"

    @property
    def bridge(self) -> Path:
        """libd3d12.so (vkd3d and the bridge) and libdxcore.so."""
        return self.root / "bridge"

    def directml(self, build: DirectMLBuild) -> Path:
        return self.root / "directml" / build.version / "libdirectml.so"

    @property
    def stamp(self) -> Path:
        return self.bridge / "stamp.json"


def find_build(name: str) -> DirectMLBuild | None:
    """A pinned build by version ('0.2.5.dev240914'), short version ('0.2.5') or 'latest'."""
    name = name.strip()
    if name in ("latest", "default"):
        return DEFAULT_BUILD
    for build in DIRECTML_BUILDS:
        if name in (build.version, build.short, f"torch-directml-{build.version}"):
            return build
    return None


def build_names() -> str:
    return ", ".join(f"{b.short} ({b.version})" for b in DIRECTML_BUILDS)
