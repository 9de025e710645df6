"""The Windows DirectML.dll under Wine, as an exec backend: a launcher for dml_exec.exe.

    rngcheck run --backend 'exec:python3 -m rngcheck.backends.directml.wine' --profile full
    rngcheck run --backend 'exec:python3 -m rngcheck.backends.directml.wine --dml /path/DirectML.dll'

It finds what ``python -m rngcheck.backends.directml.bridge.windows`` set up in the cache
(DirectML.dll 1.15.4, rngcheck_d3d12.dll, dml_exec.exe, the Wine prefix), sets Wine's
environment, and replaces itself with ``xvfb-run -a wine dml_exec.exe ...``, so the exec backend's
time limit ends Wine and Xvfb with it (one process group). Anything missing (Wine, Xvfb, the set-up,
the DLL given) is a HELO with the one-line reason and ``unavailable``: the backend is unavailable.

Options: ``--dml PATH`` another DirectML.dll (a vendor's build); ``--release VERSION`` a DirectML
release of rngcheck.backends.directml.releases' table (``--release 1.12.0``: its wheel is downloaded
from PyPI, checked and unpacked into the cache once; a failed download or hash is ``unavailable`` with
the one-line reason); ``--name NAME`` the backend's name in reports (default
``directml-windows:VERSION``; the release matrix gives every release one name, so that the reports'
History view and ``rngcheck compare`` line the releases up); ``--adapter default|warp|N``;
``--cache DIR`` the set-up's cache folder (default: $RNGCHECK_CACHE/directml); ``--fault
crash|hang|flip`` (rngcheck's own tests) makes dml_exec.exe misbehave on every call.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from .. import exec_protocol as P
from . import releases
from .bridge.build import SetupError
from .bridge.chain import Layout
from .bridge.windows import DIRECTML_DLL, TOOLS, WindowsLayout, command, is_set_up, wine_env


def missing(layout: WindowsLayout, dll: Path | None) -> str | None:
    """Why the Wine route cannot run here, in one line, or None."""
    for tool in ("wine", "xvfb-run"):
        if not shutil.which(tool):
            return f"{tool} is not installed (apt-get install {TOOLS[tool]})"
    if not is_set_up(layout):
        return (f"DirectML.dll {DIRECTML_DLL.version} under Wine is not set up in {layout.root} "
                f"(run: python3 -m rngcheck.backends.directml.bridge.windows)")
    if dll is not None and not dll.is_file():
        return f"--dml {dll}: no such file"
    return None


def release_dll(layout: WindowsLayout, version: str, dll: Path | None) -> tuple[str | None, Path | None]:
    """(why not, None) or (None, the release's DirectML.dll, fetched into the cache once)."""
    if dll is not None:
        return "--dml and --release name two DirectML.dll: give one", None
    release = releases.find(version, releases.WINDOWS)
    if release is None:
        return (f"--release {version}: no such Windows DirectML release "
                f"(known: {releases.names(releases.WINDOWS)})"), None
    try:
        return None, releases.ensure(release, layout.base)
    except SetupError as error:
        return f"DirectML {release.directml}: {error}", None


def cached_dll(layout: WindowsLayout, dll: Path | None) -> tuple[str | None, Path | None]:
    """(why not, None) or (None, the DirectML.dll to hand to Wine): the set-up's default, or ``--dml``'s
    file; one the cache unpacked is first checked against the sha256 its unpacking recorded."""
    release = DIRECTML_DLL if dll is None else releases.in_cache(dll, layout.base)
    if release is None:
        return None, dll
    try:
        return None, releases.checked(release, layout.base)
    except SetupError as error:
        return f"DirectML {release.directml}: {error}", None


def unavailable(reason: str) -> int:
    body = {"protocol": P.PROTOCOL_VERSION, "error": reason, "unavailable": True}
    sys.stdout.buffer.write(P.frame(P.HELLO, json.dumps(body).encode()))
    sys.stdout.buffer.flush()
    return 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m rngcheck.backends.directml.wine",
                                     description="Run DirectML.dll through dml_exec.exe under Wine (exec protocol).")
    parser.add_argument("--dml", type=Path, help=f"the DirectML.dll (default: the pinned {DIRECTML_DLL.version})")
    parser.add_argument("--release", metavar="VERSION",
                        help=f"a DirectML release from PyPI ({releases.names(releases.WINDOWS)})")
    parser.add_argument("--name", help="the backend's name in reports")
    parser.add_argument("--adapter", default="default", help="default, warp or a DXGI adapter index")
    parser.add_argument("--cache", type=Path, help="the set-up's cache folder")
    parser.add_argument("--fault", choices=("crash", "hang", "flip"), help=argparse.SUPPRESS)  # rngcheck's tests
    args = parser.parse_args(argv)
    layout = WindowsLayout(Layout(args.cache) if args.cache else Layout.default())
    dll = args.dml.resolve() if args.dml else None
    reason = missing(layout, dll)
    if reason is None:
        reason, dll = release_dll(layout, args.release, dll) if args.release else cached_dll(layout, dll)
    if reason:
        return unavailable(f"directml-wine: {reason}")
    argv = command(layout, dll, args.adapter) + (["--name", args.name] if args.name else [])
    argv += ["--fault", args.fault] if args.fault else []
    env = {**os.environ, **wine_env(layout)}
    sys.stdout.flush()
    os.execvpe(argv[0], argv, env)
    return 1     # not reached


if __name__ == "__main__":
    sys.exit(main())
