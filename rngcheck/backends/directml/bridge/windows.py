"""Set up the Windows DirectML.dll under Wine: fetch the pinned pieces, cross-build, make a prefix.

    python -m rngcheck.backends.directml.bridge.windows [--cache DIR] [--offline] [--jobs N]

The DirectML that Windows users run is DirectML.dll; the ``onnxruntime-directml`` wheel pinned
below holds DirectML 1.15.4 (feature level 6.4). rngcheck drives it with a native Windows
program, dml_exec.c (beside this file, package data), that speaks the exec protocol. On Linux that program
runs under Wine on a D3D12 made here: Wine 8.0's own d3d12.dll skips DXIL, so vkd3d 1.14 (the copy
bundled in Debian's wine source package, the same one build.py builds natively) is cross-built for
Windows with mingw-w64, with its DXIL front end, into ``rngcheck_d3d12.dll`` (d3d12_windows.c).

Steps (fetched files are checked against their sha256 pins; a finished set-up is stamped, and a
second run with nothing changed takes about a second):
  1. the onnxruntime-directml win_amd64 wheel, with ``pip download``; its DirectML.dll is unpacked;
  2. Debian's wine source and widl, exactly as build.py fetches them (chain.py's pins);
  3. vkd3d compiled with x86_64-w64-mingw32-gcc (bison and flex for its HLSL parsers), against the
     COM headers widl generates from Wine's .idl files and mingw-w64's own Windows headers,
     ``-DVKD3D_SHADER_UNSUPPORTED_DXIL`` and no ``WINE_UNIX_LIB`` (a Windows build has the Microsoft
     x64 convention natively), linked with d3d12_windows.c into rngcheck_d3d12.dll;
  4. dml_exec.exe compiled with mingw-w64;
  5. a Wine prefix inside the cache (wineboot once, quietly), with HKCU\\Software\\Wine\\Direct3D
     renderer=vulkan set through ``wine reg add``.
``command()`` gives the exec command that runs the program there (see rngcheck.backends.directml.wine).
A missing piece is one line on stderr naming it (and how to get it), exit status 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..releases import NEWEST_WINDOWS, ensure
from . import cache
from .build import (
    IDL_FILES,
    PARSERS,
    VKD3D_DIRS,
    SetupError,
    check_tools,
    compile_all,
    fetch_widl,
    layout_of,
    report,
    run,
    say,
    set_up_parser,
    unpack_sources,
)
from .chain import VKD3D_VERSION, WIDL, WINE_SOURCE, Layout

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "dml_exec.c"


# The DirectML.dll the set-up unpacks and the route runs by default: the newest release of the table
# (rngcheck.backends.directml.releases, the one home of every release's wheel and sha256).
DIRECTML_DLL = NEWEST_WINDOWS
MINGW = "x86_64-w64-mingw32-gcc"
TOOLS = {                       # command: the Debian package that provides it
    MINGW: "gcc-mingw-w64-x86-64",
    "wine": "wine wine64",
    "wineboot": "wine",
    "wineserver": "wine",
    "Xvfb": "xvfb",
    "bison": "bison",
    "flex": "flex",
    "dpkg-deb": "dpkg",
    "apt-get": "apt",
}
# Wine's widl emits mingw-style nameless unions and structs; vkd3d names them u, s (Wine's style).
NAMELESS = (["-D__C89_NAMELESS=", "-D__C89_NAMELESSUNIONNAME=u", "-D__C89_NAMELESSSTRUCTNAME=s"]
            + [f"-D__C89_NAMELESSUNIONNAME{i}=u{i}" for i in range(1, 9)]
            + [f"-D__C89_NAMELESSSTRUCTNAME{i}=s{i}" for i in range(1, 6)])
# vkd3d defines NONAMELESSUNION in its private headers, after a few of its files have included
# a C header (and so mingw-w64's _mingw.h, which reads it once); defined up front, every file
# sees mingw-w64's headers in one form (d3dx9math.inl's matrices through .u included).
DEFINES = ("-DNONAMELESSUNION", "-DVKD3D_SHADER_UNSUPPORTED_DXIL", "-DLIBVKD3D_SOURCE", "-DLIBVKD3D_SHADER_SOURCE",
           "-DLIBVKD3D_UTILS_SOURCE")
WINE_VULKAN_H = "#include <vulkan/vulkan.h>\n"
VULKAN_HEADERS = ("vulkan", "vk_video")     # copied from the host's libvulkan-dev into the build
# The prefix: quiet, no Mono or Gecko installer, no debugger left waiting on a crashed program.
WINE_ENV = {"WINEDEBUG": "-all", "WINEDLLOVERRIDES": "mscoree,mshtml=;winedbg.exe=d"}


@dataclass(frozen=True)
class WindowsLayout:
    """Where the Wine route's pieces live: CACHE/directml/windows/."""

    base: Layout

    @property
    def root(self) -> Path:
        return self.base.root / "windows"

    @property
    def dll(self) -> Path:
        return DIRECTML_DLL.path(self.base)

    @property
    def d3d12(self) -> Path:
        return self.root / "rngcheck_d3d12.dll"

    @property
    def program(self) -> Path:
        return self.root / "dml_exec.exe"

    @property
    def prefix(self) -> Path:
        return self.root / "prefix"

    @property
    def stamp(self) -> Path:
        return self.root / "stamp.json"


def wine_env(layout: WindowsLayout) -> dict:
    return {"WINEPREFIX": str(layout.prefix), **WINE_ENV}


def command(layout: WindowsLayout, dll: Path | None = None, adapter: str = "default") -> list[str]:
    """The command running dml_exec.exe under Wine (environment: wine_env(layout), and an X display:
    rngcheck.backends.directml.wine gives it one of its own)."""
    return ["wine", str(layout.program), "--dml", str(dll or layout.dll), "--d3d12", str(layout.d3d12),
            "--adapter", adapter]


# -- 1. DirectML.dll --------------------------------------------------------------------------

def unpack_dll(layout: WindowsLayout, offline: bool) -> Path:
    return ensure(DIRECTML_DLL, layout.base, offline)


# -- 3, 4. the builds ---------------------------------------------------------------------------

def stamp_of() -> dict:
    """Everything the builds and the prefix depend on: a changed input rebuilds."""
    digest = hashlib.sha256()
    for path in (HERE / "d3d12_windows.c", HERE / "vkd3d_device.h", PROGRAM):
        try:
            digest.update(path.read_bytes())
        except OSError as error:   # an installation without the package's data files
            raise SetupError(f"{path}: a source of the Wine route is missing or unreadable "
                                f"({error.strerror}); reinstall rngcheck") from None
    digest.update(repr((NAMELESS, DEFINES, IDL_FILES, WINE_VULKAN_H, WINE_ENV)).encode())
    return {"wine": WINE_SOURCE.version, "orig": WINE_SOURCE.sha256, "widl": WIDL.sha256,
            "directml": DIRECTML_DLL.sha256, "sources": digest.hexdigest()}


def is_set_up(layout: WindowsLayout) -> bool:
    try:
        stamp = json.loads(layout.stamp.read_text())
        expected = stamp_of()
    except (OSError, ValueError, SetupError):   # the set-up says which source is missing
        return False
    return (stamp == expected and layout.d3d12.is_file() and layout.program.is_file()
            and (layout.prefix / "system.reg").is_file() and layout.dll.is_file())


def build_d3d12(layout: WindowsLayout, offline: bool, workers: int, vulkan_include: Path, quiet: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="rngcheck-vkd3d-windows-") as temporary:
        work = Path(temporary)
        say(f"unpacking vkd3d {VKD3D_VERSION} from Debian's wine {WINE_SOURCE.version}", quiet)
        wine = unpack_sources(layout.base, work, offline)
        widl = fetch_widl(layout.base, work, offline)
        include, vkd3d = wine / "include", wine / "libs" / "vkd3d"
        generated = work / "generated"
        (generated / "wine").mkdir(parents=True)
        for name in IDL_FILES:
            if name.startswith(("d3d", "dxgi")):   # the rest: mingw-w64's own headers
                run([str(widl), "-m64", f"-I{include}", "-h", "-o", str(generated / f"{name}.h"),
                     str(include / f"{name}.idl")], f"widl {name}.idl")
        for name in ("list.h", "rbtree.h"):
            shutil.copy2(include / "wine" / name, generated / "wine" / name)
        (generated / "wine" / "vulkan.h").write_text(WINE_VULKAN_H)
        for name in VULKAN_HEADERS:     # not -I/usr/include: that would mix glibc's headers in
            if (vulkan_include / name).is_dir():
                shutil.copytree(vulkan_include / name, generated / name)
        shader = vkd3d / "libs" / "vkd3d-shader"
        for name in PARSERS:
            run(["bison", "-d", "-o", str(generated / f"{name}.tab.c"), str(shader / f"{name}.y")], f"bison {name}.y")
            run(["flex", "-o", str(generated / f"{name}.yy.c"), str(shader / f"{name}.l")], f"flex {name}.l")
        # vkd3d's own config.h in the bundle is Wine's PE one (SONAME_LIBVULKAN "vulkan-1.dll").
        includes = [f"-I{generated}", f"-I{vkd3d}", f"-I{vkd3d / 'include'}", f"-I{vkd3d / 'include' / 'private'}",
                    f"-I{vkd3d / 'libs' / 'vkd3d'}", f"-I{shader}"]
        flags = ["-O2", "-w", *NAMELESS, *DEFINES, *includes, f"-I{HERE}"]
        sources = sorted(p for d in VKD3D_DIRS for p in (vkd3d / d).glob("*.c"))
        sources += [generated / f"{name}{kind}.c" for name in PARSERS for kind in (".tab", ".yy")]
        objects = work / "objects"
        objects.mkdir()
        jobs = [[MINGW, *flags, "-c", str(s), "-o", str(objects / f"{i:02d}-{s.stem}.o")]
                for i, s in enumerate(sources)]
        version = f"rngcheck d3d12, vkd3d {VKD3D_VERSION} from Debian wine {WINE_SOURCE.version}, mingw-w64"
        jobs.append([MINGW, *flags, f'-DRNGCHECK_BRIDGE_VERSION="{version}"', "-c", str(HERE / "d3d12_windows.c"),
                     "-o", str(work / "d3d12_windows.o")])
        say(f"compiling {len(jobs)} files with {MINGW} ({workers} at a time)", quiet)
        compile_all(jobs, workers)
        staging = work / "rngcheck_d3d12.dll"
        run([MINGW, "-shared", "-o", str(staging), str(work / "d3d12_windows.o"),
             *sorted(str(p) for p in objects.glob("*.o")), "-static-libgcc", "-Wl,--exclude-all-symbols"],
            "linking rngcheck_d3d12.dll")
        cache.install(staging, layout.d3d12)


def build_program(layout: WindowsLayout) -> None:
    with tempfile.TemporaryDirectory(prefix="rngcheck-dml-exec-") as temporary:
        built = Path(temporary) / layout.program.name
        run([MINGW, "-O2", "-Wall", "-o", str(built), str(PROGRAM), "-lversion", "-lbcrypt"], f"{MINGW} dml_exec.c")
        cache.install(built, layout.program)


# -- 5. the prefix --------------------------------------------------------------------------------

def make_prefix(layout: WindowsLayout, quiet: bool) -> None:
    env = {**os.environ, **wine_env(layout)}
    if not (layout.prefix / "system.reg").is_file():
        say(f"creating the Wine prefix {layout.prefix}", quiet)
        layout.prefix.mkdir(parents=True, exist_ok=True)
        run(["wineboot", "--init"], "wineboot --init (creating the Wine prefix)", env=env)
    run(["wine", "reg", "add", r"HKCU\Software\Wine\Direct3D", "/v", "renderer", "/d", "vulkan", "/f"],
        r"wine reg add HKCU\Software\Wine\Direct3D renderer=vulkan", env=env)
    run(["wineserver", "-w"], "wineserver -w (writing the prefix's registry)", env=env)


def set_up(layout: WindowsLayout, *, offline: bool = False, workers: int = 2,
           vulkan_include: Path = Path("/usr/include"), quiet: bool = False) -> dict:
    """Make every piece present; returns what is where. Raises SetupError."""
    stamp = stamp_of()   # first: a missing source of the route is said before anything is fetched
    if not is_set_up(layout):
        check_tools(vulkan_include, TOOLS)
        with cache.locked(layout.base.root, "windows"):     # a second set-up at once waits, then finds it done
            if not is_set_up(layout):
                unpack_dll(layout, offline)
                build_d3d12(layout, offline, workers, vulkan_include, quiet)
                build_program(layout)
                make_prefix(layout, quiet)
                text = (json.dumps(stamp, indent=1) + "\n").encode()
                cache.write_bytes(layout.stamp, text)
    else:
        say(f"DirectML.dll {DIRECTML_DLL.version}, rngcheck_d3d12.dll, dml_exec.exe and the Wine prefix "
            f"are set up ({layout.root})", quiet)
    return {f"DirectML.dll {DIRECTML_DLL.version}": str(layout.dll), "D3D12 (vkd3d for Windows)": str(layout.d3d12),
            "exec program": str(layout.program), "Wine prefix": str(layout.prefix)}


def main(argv=None) -> int:
    parser = set_up_parser("python -m rngcheck.backends.directml.bridge.windows",
                           "Fetch DirectML.dll and build what runs it under Wine "
                           "(vkd3d for Windows, dml_exec.exe, a Wine prefix).")
    args = parser.parse_args(argv)
    return report("directml windows setup", lambda: set_up(WindowsLayout(layout_of(args)), offline=args.offline,
                                                           workers=args.jobs, vulkan_include=args.vulkan_include,
                                                           quiet=args.quiet), args.quiet)


if __name__ == "__main__":
    sys.exit(main())
