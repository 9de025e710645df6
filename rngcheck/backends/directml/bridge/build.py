"""Set up real DirectML on Linux: fetch the pinned pieces, build vkd3d and the bridge.

    python -m rngcheck.backends.directml.bridge.build [--cache DIR] [--offline] [--jobs N]

Steps (each fetched file's sha256 is checked against chain.py's pin; every step is skipped
when its result is already in the cache, so a second run takes about a second):
  1. the torch-directml wheels, with ``pip download`` (no torch, no install); their
     ``libdirectml.so`` is unpacked to ``directml/VERSION/``;
  2. Debian's ``wine`` source package (its bundled vkd3d 1.14), with ``apt-get source
     --download-only`` through a private apt configuration that adds the release's deb-src
     on the mirror the machine already uses (the machine's own sources stay untouched);
  3. ``widl`` from Debian's ``wine64-tools``, unpacked with ``dpkg-deb -x``; it generates
     the COM headers (d3d12.h, dxgi.h, unknwn.h, ...) from Wine's .idl files;
  4. vkd3d compiled natively with gcc (bison and flex for its HLSL parsers) with
     ``-DVKD3D_SHADER_UNSUPPORTED_DXIL`` (DirectML's shaders are DXIL) and
     ``-DWINE_UNIX_LIB`` (Wine's windef.h then makes __stdcall empty: System V methods),
     linked with d3d12_bridge.c into ``bridge/libd3d12.so`` (version script
     d3d12_bridge.map), and dxcore_bridge.c into ``bridge/libdxcore.so``.
A missing piece is one line on stderr naming it (and how to get it), exit status 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import cache
from .cache import SetupError
from .chain import DIRECTML_BUILDS, VKD3D_VERSION, WHEEL_MEMBER, WIDL, WINE_SOURCE, DirectMLBuild, Layout

HERE = Path(__file__).resolve().parent
BRIDGE_SOURCES = ("bridge.h", "d3d12_bridge.c", "d3d12_bridge.map", "dxcore_bridge.c", "vkd3d_device.h")
TOOLS = {                       # command: the Debian package that provides it
    "gcc": "gcc",
    "bison": "bison",
    "flex": "flex",
    "dpkg-deb": "dpkg",
    "apt-get": "apt",
}
# The Wine .idl files whose generated headers vkd3d and the bridge include (found with gcc -M).
IDL_FILES = ("d3d12", "d3d12sdklayers", "d3d12shader", "d3dcommon", "dxgi", "dxgicommon", "dxgiformat",
             "dxgitype", "msxml", "oaidl", "objidl", "objidlbase", "ocidl", "oleidl", "propidl", "servprov",
             "unknwn", "urlmon", "wtypes")
VKD3D_DIRS = ("libs/vkd3d-common", "libs/vkd3d-shader", "libs/vkd3d")
PARSERS = ("hlsl", "preproc")      # libs/vkd3d-shader/NAME.y and NAME.l
DEFINES = ("-D_GNU_SOURCE", "-DWINE_UNIX_LIB", "-DWINE_NO_NAMELESS_EXTENSION")
VKD3D_DEFINES = ("-DVKD3D_SHADER_UNSUPPORTED_DXIL", "-DLIBVKD3D_SOURCE", "-DLIBVKD3D_SHADER_SOURCE",
                 "-DLIBVKD3D_UTILS_SOURCE")
# vkd3d's configure results for a Linux build with gcc (the bundled config.h is Wine's, for PE).
CONFIG_H = f"""\
#define PACKAGE_NAME "vkd3d"
#define PACKAGE_STRING "vkd3d {VKD3D_VERSION}"
#define PACKAGE_VERSION "{VKD3D_VERSION}"
#define SONAME_LIBVULKAN "libvulkan.so.1"
#define HAVE_BUILTIN_CLZ 1
#define HAVE_BUILTIN_ADD_OVERFLOW 1
#define HAVE_SYNC_ADD_AND_FETCH 1
#define HAVE_SYNC_BOOL_COMPARE_AND_SWAP 1
#define HAVE_ATOMIC_EXCHANGE_N 1
#define HAVE_DLFCN_H 1
#define HAVE_PTHREAD_H 1
#define HAVE_DECL_PROGRAM_INVOCATION_NAME 1
#define HAVE_GETTID 1
#define HAVE_PTHREAD_SETNAME_NP_2 1
"""
# Wine generates wine/vulkan.h from the Vulkan registry; natively, the system's header serves.
WINE_VULKAN_H = "#include <vulkan/vulkan.h>\n"


def say(message: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"directml setup: {message}", file=sys.stderr, flush=True)


def sha256_of(path: Path) -> str:
    return cache.sha256_of(path)


def verified(path: Path, sha256: str, what: str) -> Path:
    actual = sha256_of(path)
    if actual != sha256:
        raise SetupError(f"{what} ({path}) has sha256 {actual}, expected {sha256}: "
                         f"delete it and run the set-up again")
    return path


def run(command, what: str, cwd=None, env=None) -> str:
    """Run a command; a failure is a SetupError naming ``what`` and the command's last line."""
    try:
        done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    except OSError as error:
        raise SetupError(f"{what}: cannot run {command[0]} ({error.strerror})") from None
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if re.match(r"^(E:|ERROR|error|.*error:)", line)] or lines
        raise SetupError(f"{what} failed: {errors[-1] if errors else f'exit status {done.returncode}'}")
    return done.stdout


def check_tools(vulkan_include: Path, tools: dict = TOOLS) -> None:
    """Each command of ``tools`` (command: Debian package) on PATH, and the Vulkan headers."""
    missing = [f"{tool} (apt-get install {package})" for tool, package in tools.items() if not shutil.which(tool)]
    if not (vulkan_include / "vulkan" / "vulkan.h").is_file():
        missing.append(f"the Vulkan headers, {vulkan_include}/vulkan/vulkan.h (apt-get install libvulkan-dev)")
    if missing:
        raise SetupError("missing " + "; ".join(missing))


# -- 1. DirectML ----------------------------------------------------------------------------

def pip_wheel(downloads: Path, project: str, version: str, wheel: str, sha256: str, platform: str, python: str,
              offline: bool) -> Path:
    """A wheel of ``project`` for ``platform`` and CPython ``python``, fetched with pip download; checked.
    It is downloaded into a private folder under the wheel's lock and moved in only when its sha256 is
    the pin's: a wheel in ``downloads`` is always whole, and two set-ups at once fetch it once."""
    path = downloads / wheel
    if not path.exists():
        if offline:
            raise SetupError(f"{project} {version} ({wheel}) is not in {downloads} and --offline forbids fetching it")
        with cache.locked(downloads, wheel):
            if not path.exists():       # another set-up may have fetched it meanwhile
                download_wheel(downloads, project, version, wheel, sha256, platform, python)
    return verified(path, sha256, f"{project} {version} wheel")


def download_wheel(downloads: Path, project: str, version: str, wheel: str, sha256: str, platform: str,
                   python: str) -> None:
    with cache.private_folder(downloads, wheel) as scratch:
        run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
             "--only-binary=:all:", "--platform", platform, "--python-version", python,
             f"{project}=={version}", "-d", str(scratch)], f"pip download {project}=={version} (PyPI)")
        fetched = scratch / wheel
        if not fetched.exists():
            raise SetupError(f"pip download {project}=={version} did not give {wheel}")
        actual = sha256_of(fetched)
        if actual != sha256:
            raise SetupError(f"pip download {project}=={version} gave {wheel} with sha256 {actual}, expected "
                             f"{sha256} (the pin): it was not kept")
        os.replace(fetched, downloads / wheel)


def unpack_member(target: Path, sha256: str, fetch, repair: str | None = None) -> Path:
    """``target``, unpacked from the wheel ``fetch()`` gives (a (wheel, member) pair) unless the wheel
    of ``sha256`` already gave it and it is still the file that unpacking recorded (its size and
    sha256, cache.problem). A library that is not is unpacked again, under the library's lock; when
    its wheel cannot give it again, SetupError names the file, why, and ``repair`` (what to run)."""
    if cache.problem(target, sha256) is None:
        return target
    with cache.locked(target.parent, target.name):
        wrong = cache.problem(target, sha256)   # another process may have unpacked it meanwhile
        if wrong is None:
            return target
        try:
            wheel, member = fetch()
        except SetupError as error:
            if wrong == "is missing" or repair is None:
                raise
            raise SetupError(f"{target} {wrong} and cannot be unpacked again: {error}; run: {repair}") from None
        cache.unpack(wheel, member, target, sha256)
    return target


def fetch_wheel(layout: Layout, build: DirectMLBuild, offline: bool) -> Path:
    return pip_wheel(layout.downloads, "torch-directml", build.version, build.wheel, build.sha256,
                     "manylinux2014_x86_64", build.python, offline)


def unpack_directml(layout: Layout, build: DirectMLBuild, offline: bool) -> Path:
    return unpack_member(layout.directml(build), build.sha256,
                         lambda: (fetch_wheel(layout, build, offline), WHEEL_MEMBER),
                         "python -m rngcheck.backends.directml.bridge.build")


# -- 2. vkd3d's sources ----------------------------------------------------------------------

def debian_mirror() -> str:
    """The Debian mirror the machine's own apt sources name (deb822 or one-line form)."""
    candidates = [Path("/etc/apt/sources.list")] + sorted(Path("/etc/apt/sources.list.d").glob("*"))
    for path in candidates:
        try:
            text = path.read_text()
        except OSError:
            continue
        for uri in re.findall(r"(?:^URIs:\s*|^deb(?:-src)?\s+(?:\[[^\]]*\]\s+)?)(\S+)", text, re.M):
            if uri.rstrip("/").endswith("/debian"):
                return uri.rstrip("/")
    return "http://deb.debian.org/debian"


def private_apt(layout: Layout) -> list[str]:
    """apt options for a private configuration with only the release's deb-src."""
    folder = layout.downloads / "apt"
    (folder / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
    signed = f"[signed-by={keyring}] " if Path(keyring).exists() else ""
    (folder / "sources.list").write_text(f"deb-src {signed}{debian_mirror()} {WINE_SOURCE.suite} main\n")
    options = ["-o", f"Dir::Etc::sourcelist={folder / 'sources.list'}", "-o", "Dir::Etc::sourceparts=-",
               "-o", f"Dir::State::Lists={folder / 'lists'}", "-o", "APT::Get::List-Cleanup=0"]
    if os.geteuid() == 0:       # root: download as root rather than warn about the _apt sandbox
        options += ["-o", "APT::Sandbox::User=root"]
    return options


def fetch_wine_source(layout: Layout, offline: bool) -> Path:
    source = WINE_SOURCE
    orig = layout.downloads / source.orig
    if not orig.exists():
        what = f"Debian's {source.package} {source.version} source ({source.suite} deb-src)"
        if offline:
            raise SetupError(f"{what} is not in {layout.downloads} and --offline forbids fetching it")
        with cache.locked(layout.downloads, source.orig):
            if not orig.exists():       # another set-up may have fetched it meanwhile
                download_wine_source(layout, what)
    return verified(orig, source.sha256, f"Debian's {source.package} {source.version} source")


def download_wine_source(layout: Layout, what: str) -> None:
    """apt-get source into a private folder; its files move into the downloads, the checked tarball last."""
    source = WINE_SOURCE
    options = private_apt(layout)
    run(["apt-get", *options, "-qq", "update"], f"apt-get update for {what}")
    with cache.private_folder(layout.downloads, source.orig) as scratch:
        run(["apt-get", *options, "-qq", "source", "--download-only", f"{source.package}={source.version}"],
            f"apt-get source {what}", cwd=scratch)
        if not (scratch / source.orig).exists():
            raise SetupError(f"apt-get source did not give {source.orig}")
        verified(scratch / source.orig, source.sha256, f"Debian's {source.package} {source.version} source "
                                                       f"as downloaded")
        for fetched in sorted(scratch.iterdir(), key=lambda p: p.name == source.orig):
            if fetched.is_file():
                os.replace(fetched, layout.downloads / fetched.name)


def unpack_sources(layout: Layout, work: Path, offline: bool) -> Path:
    """libs/vkd3d and include/ of the Wine source, under work/; returns wine-10.0/."""
    orig = fetch_wine_source(layout, offline)
    prefixes = (f"{WINE_SOURCE.top}/libs/vkd3d/", f"{WINE_SOURCE.top}/include/")
    with tarfile.open(orig, "r:xz") as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(prefixes) and (m.isfile() or m.isdir())]
        if hasattr(tarfile, "data_filter"):
            archive.extractall(work, members=members, filter="data")
        else:                   # Python < 3.10.12: the names were checked by the prefixes above
            archive.extractall(work, members=members)
    return work / WINE_SOURCE.top


def fetch_widl(layout: Layout, work: Path, offline: bool) -> Path:
    deb = layout.downloads / f"{WIDL.package}_{WIDL.version}_amd64.deb"
    if not deb.exists():
        if offline:
            raise SetupError(f"{WIDL.package} {WIDL.version} (for widl) is not in {layout.downloads} "
                             f"and --offline forbids fetching it")
        with cache.locked(layout.downloads, deb.name):
            if not deb.exists():        # another set-up may have fetched it meanwhile
                download_widl(deb)
    verified(deb, WIDL.sha256, f"{WIDL.package} {WIDL.version}")
    run(["dpkg-deb", "-x", str(deb), str(work / "widl")], f"dpkg-deb -x {deb.name}")
    widl = work / "widl" / WIDL.member
    if not widl.is_file():
        raise SetupError(f"{deb.name} has no {WIDL.member}")
    return widl


def download_widl(deb: Path) -> None:
    """apt-get download into a private folder; the .deb moves into the downloads once checked."""
    command = ["apt-get", "-qq", "download", f"{WIDL.package}={WIDL.version}"]
    with cache.private_folder(deb.parent, deb.name) as scratch:
        try:
            run(command, f"apt-get download {WIDL.package}={WIDL.version}", cwd=scratch)
        except SetupError:
            if os.geteuid() != 0:
                raise
            run(["apt-get", "-qq", "update"], "apt-get update")     # package lists absent or stale
            run(command, f"apt-get download {WIDL.package}={WIDL.version}", cwd=scratch)
        if not (scratch / deb.name).exists():
            raise SetupError(f"apt-get download {WIDL.package}={WIDL.version} did not give {deb.name}")
        verified(scratch / deb.name, WIDL.sha256, f"{WIDL.package} {WIDL.version} as downloaded")
        os.replace(scratch / deb.name, deb)


# -- 4. the build ----------------------------------------------------------------------------

def stamp_of(layout: Layout, dxil: bool) -> dict:
    """Everything the build depends on: a changed input rebuilds."""
    digest = hashlib.sha256()
    for name in BRIDGE_SOURCES:
        digest.update((HERE / name).read_bytes())
    digest.update(CONFIG_H.encode() + WINE_VULKAN_H.encode() + repr((DEFINES, VKD3D_DEFINES, IDL_FILES)).encode())
    return {"wine": WINE_SOURCE.version, "orig": WINE_SOURCE.sha256, "widl": WIDL.sha256, "dxil": dxil,
            "bridge": digest.hexdigest()}


def bridge_is_built(layout: Layout, dxil: bool = True) -> bool:
    try:
        stamp = json.loads(layout.stamp.read_text())
    except (OSError, ValueError):
        return False
    return (stamp == stamp_of(layout, dxil) and (layout.bridge / "libd3d12.so").is_file()
            and (layout.bridge / "libdxcore.so").is_file())


def compile_all(jobs: list[list[str]], workers: int) -> None:
    def one(command):
        run(command, f"gcc {Path(command[-3]).name}")
    with ThreadPoolExecutor(max(1, workers)) as pool:
        for future in [pool.submit(one, command) for command in jobs]:
            future.result()


def build_bridge(layout: Layout, offline: bool, workers: int, vulkan_include: Path, dxil: bool,
                 quiet: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="rngcheck-vkd3d-") as temporary:
        work = Path(temporary)
        say(f"unpacking vkd3d {VKD3D_VERSION} from Debian's wine {WINE_SOURCE.version}", quiet)
        wine = unpack_sources(layout, work, offline)
        widl = fetch_widl(layout, work, offline)
        include, vkd3d = wine / "include", wine / "libs" / "vkd3d"
        generated = work / "generated"
        (generated / "wine").mkdir(parents=True)
        (generated / "config.h").write_text(CONFIG_H)
        (generated / "wine" / "vulkan.h").write_text(WINE_VULKAN_H)
        for name in IDL_FILES:
            run([str(widl), "-m64", f"-I{include}", "-h", "-o", str(generated / f"{name}.h"),
                 str(include / f"{name}.idl")], f"widl {name}.idl")
        shader = vkd3d / "libs" / "vkd3d-shader"
        for name in PARSERS:
            run(["bison", "-d", "-o", str(generated / f"{name}.tab.c"), str(shader / f"{name}.y")], f"bison {name}.y")
            run(["flex", "-o", str(generated / f"{name}.yy.c"), str(shader / f"{name}.l")], f"flex {name}.l")
        includes = [f"-I{generated}", f"-I{vkd3d / 'include'}", f"-I{vkd3d / 'include' / 'private'}",
                    f"-I{vkd3d / 'libs' / 'vkd3d'}", f"-I{shader}", f"-I{include}", f"-I{vulkan_include}"]
        flags = ["-O2", "-fPIC", "-fvisibility=hidden", "-w", *DEFINES, *includes]
        vkd3d_flags = [*flags, *(VKD3D_DEFINES if dxil else VKD3D_DEFINES[1:])]
        sources = sorted(p for d in VKD3D_DIRS for p in (vkd3d / d).glob("*.c"))
        sources += [generated / f"{name}{kind}.c" for name in PARSERS for kind in (".tab", ".yy")]
        objects = work / "objects"
        objects.mkdir()
        jobs = [["gcc", *vkd3d_flags, "-c", str(s), "-o", str(objects / f"{i:02d}-{s.stem}.o")]
                for i, s in enumerate(sources)]
        bridge_version = f"rngcheck bridge, vkd3d {VKD3D_VERSION} from Debian wine {WINE_SOURCE.version}"
        bridge_flags = [*flags, f'-DRNGCHECK_BRIDGE_VERSION="{bridge_version}"', f"-I{HERE}"]
        for name in ("d3d12_bridge", "dxcore_bridge"):
            jobs.append(["gcc", *bridge_flags, "-c", str(HERE / f"{name}.c"), "-o", str(work / f"{name}.o")])
        say(f"compiling {len(jobs)} files with gcc ({workers} at a time)", quiet)
        compile_all(jobs, workers)
        output = layout.bridge
        output.mkdir(parents=True, exist_ok=True)
        staging = work / "out"
        staging.mkdir()
        vkd3d_objects = sorted(str(p) for p in objects.glob("*.o"))
        run(["gcc", "-shared", "-o", str(staging / "libd3d12.so"), "-Wl,-soname,libd3d12.so",
             f"-Wl,--version-script={HERE / 'd3d12_bridge.map'}", str(work / "d3d12_bridge.o"), *vkd3d_objects,
             "-lpthread", "-ldl", "-lm"], "linking libd3d12.so")
        run(["gcc", "-shared", "-o", str(staging / "libdxcore.so"), "-Wl,-soname,libdxcore.so",
             str(work / "dxcore_bridge.o"), f"-L{staging}", "-ld3d12", "-Wl,-rpath,$ORIGIN"],
            "linking libdxcore.so")
        install_bridge(layout, staging, dxil)


def install_bridge(layout: Layout, staging: Path, dxil: bool) -> None:
    """The two libraries built in ``staging``, each written whole into the cache, then the stamp."""
    for name in ("libd3d12.so", "libdxcore.so"):
        cache.install(staging / name, layout.bridge / name)
    stamp = (json.dumps(stamp_of(layout, dxil), indent=1) + "\n").encode()
    cache.write_bytes(layout.stamp, stamp)


def set_up(layout: Layout, *, offline: bool = False, workers: int = 2, vulkan_include: Path = Path("/usr/include"),
           builds=DIRECTML_BUILDS, dxil: bool = True, quiet: bool = False) -> dict:
    """Make every piece present in ``layout``; returns what is where. Raises SetupError."""
    done = {}
    for build in builds:
        done[f"DirectML {build.version}"] = str(unpack_directml(layout, build, offline))
    if bridge_is_built(layout, dxil):
        say(f"vkd3d {VKD3D_VERSION} and the bridge are built ({layout.bridge})", quiet)
    else:
        check_tools(vulkan_include)
        with cache.locked(layout.root, "bridge"):      # a second set-up at once waits, then finds it built
            if bridge_is_built(layout, dxil):
                say(f"vkd3d {VKD3D_VERSION} and the bridge were built meanwhile ({layout.bridge})", quiet)
            else:
                build_bridge(layout, offline, workers, vulkan_include, dxil, quiet)
    done["D3D12 (vkd3d bridge)"] = str(layout.bridge / "libd3d12.so")
    done["DXCore (bridge)"] = str(layout.bridge / "libdxcore.so")
    return done


def set_up_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The options every set-up command takes (this one and windows.py)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--cache", type=Path, help="cache folder (default: $RNGCHECK_CACHE/directml, "
                                                   "else ~/.cache/rngcheck/directml)")
    parser.add_argument("--downloads", type=Path, help="folder of fetched files (default: CACHE/downloads)")
    parser.add_argument("--offline", action="store_true", help="use only what is in the cache; fetch nothing")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compilations")
    parser.add_argument("--vulkan-include", type=Path, default=Path("/usr/include"),
                        help="the folder holding vulkan/vulkan.h")
    parser.add_argument("--quiet", action="store_true")
    return parser


def layout_of(args) -> Layout:
    layout = Layout(args.cache) if args.cache else Layout.default()
    return Layout(layout.root, args.downloads) if args.downloads else layout


def report(who: str, set_up_call, quiet: bool) -> int:
    """Run a set-up: what is where on stderr and 0, or its one-line error and 1."""
    try:
        done = set_up_call()
    except SetupError as error:
        print(f"{who}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{who}: interrupted", file=sys.stderr)
        return 130
    for what, where in done.items():
        say(f"{what}: {where}", quiet)
    return 0


def main(argv=None) -> int:
    parser = set_up_parser("python -m rngcheck.backends.directml.bridge.build",
                           "Fetch and build real DirectML on Linux (vkd3d + lavapipe).")
    parser.add_argument("--without-dxil", action="store_true",
                        help="build vkd3d without its DXIL front end (to test that rngcheck notices)")
    args = parser.parse_args(argv)
    return report("directml setup", lambda: set_up(layout_of(args), offline=args.offline, workers=args.jobs,
                                                   vulkan_include=args.vulkan_include, dxil=not args.without_dxil,
                                                   quiet=args.quiet), args.quiet)


if __name__ == "__main__":
    sys.exit(main())
