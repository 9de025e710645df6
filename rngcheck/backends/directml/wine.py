"""The Windows DirectML.dll under Wine, as an exec backend: a launcher for dml_exec.exe.

    rngcheck run --backend 'exec:python3 -m rngcheck.backends.directml.wine' --profile full
    rngcheck run --backend 'exec:python3 -m rngcheck.backends.directml.wine --dml /path/DirectML.dll'

It finds what ``python -m rngcheck.backends.directml.bridge.windows`` set up in the cache
(DirectML.dll 1.15.4, rngcheck_d3d12.dll, dml_exec.exe, the Wine prefix), sets Wine's
environment, starts an X display of its own (``on_a_display``: Wine's D3D12 needs one) and runs
``wine dml_exec.exe ...`` on it, in its process group, so the exec backend's time limit ends Wine and
Xvfb with it. Anything missing (Wine, Xvfb, the set-up, the DLL given) or an X server that does not
start is a HELO with the one-line reason and ``unavailable``: the backend is unavailable.

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
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .. import exec_protocol as P
from .. import lifetime
from . import releases
from .bridge.build import SetupError
from .bridge.chain import Layout
from .bridge.windows import DIRECTML_DLL, TOOLS, WindowsLayout, command, is_set_up, wine_env


def missing(layout: WindowsLayout, dll: Path | None) -> str | None:
    """Why the Wine route cannot run here, in one line, or None."""
    for tool in ("wine", "Xvfb"):
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


XVFB_START_LIMIT = 60.0   # seconds for Xvfb to say its display (it takes well under one; a loaded machine more)


def free_display(log) -> tuple[subprocess.Popen | None, str]:
    """(Xvfb, its display ":N") or (None, why not, one line). Xvfb chooses the display itself
    (``-displayfd``): it takes a display's lock file atomically and reclaims the lock of a server that
    is gone. ``xvfb-run -a`` did neither: it skipped any existing lock file, and between its search and
    its server's start another xvfb-run could take the same number (measured: every Wine backend ended
    by a time limit left its lock behind, 196 of them after a few runs here; the server that lost the
    race did not start, and CI's run of a crashing backend was refused as unavailable)."""
    read_end, write_end = os.pipe()
    try:
        server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-nolisten", "tcp", "-screen", "0",
                                   "640x480x24"], pass_fds=(write_end,), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=log, preexec_fn=lifetime.preexec(os.getpid()))
    except OSError as error:
        os.close(read_end)
        os.close(write_end)
        return None, f"cannot start Xvfb: {error.strerror}"
    os.close(write_end)
    said, deadline = b"", time.monotonic() + XVFB_START_LIMIT
    with os.fdopen(read_end, "rb", buffering=0) as reader:
        while not said.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([reader], [], [], left)[0]:
                end(server)
                return None, f"Xvfb did not say its display within {XVFB_START_LIMIT:g} s"
            chunk = reader.read(64)
            if not chunk:                              # it exited: its stderr's last line says why
                end(server)
                log.seek(0)
                lines = [line.strip() for line in log.read().decode(errors="replace").splitlines() if line.strip()]
                return None, "Xvfb did not start" + (f": {lines[-1][:200]}" if lines else "")
            said += chunk
    number = said.strip().decode(errors="replace")
    if not number.isdigit():
        end(server)
        return None, f"Xvfb said display {number[:40]!r}, not a number"
    return server, f":{number}"


def end(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def on_a_display(argv: list[str], env: dict) -> int:
    """``argv`` run on an X display of its own, its stdin and stdout the exec protocol's pipes; its
    exit status (a signal as 128 + its number). The exec backend ends the whole process group (this
    launcher, Wine and Xvfb) when a case hangs; after a normal end the server is stopped here.

    Wine's own processes (wineserver, services.exe, winedevice.exe, explorer.exe) serve every program
    on the prefix, not this backend alone: Wine is started without the run's mark
    (rngcheck.backends.lifetime), which they would inherit. With it, ending one backend killed the
    wineserver under every other Wine backend on the prefix (measured: a concurrent run's fresh worker
    exited before its handshake) and left its winedevice.exe behind (41 after a few runs here).
    dml_exec.exe stays in this process group, and dies with this launcher (PR_SET_PDEATHSIG)."""
    unmarked = {name: value for name, value in env.items() if name != lifetime.OWNER_VARIABLE}
    with tempfile.TemporaryFile(prefix="rngcheck-xvfb-") as log:
        server, display = free_display(log)
        if server is None:
            return unavailable(f"directml-wine: {display}")
        try:
            program = subprocess.Popen(argv, env={**unmarked, "DISPLAY": display},
                                       preexec_fn=lifetime.preexec(os.getpid()))
            code = program.wait()
        except OSError as error:
            return unavailable(f"directml-wine: cannot start {argv[0]}: {error.strerror}")
        finally:
            end(server)
    return code if code >= 0 else 128 - code


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
    return on_a_display(argv, env)


if __name__ == "__main__":
    sys.exit(main())
