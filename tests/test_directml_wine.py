"""The Windows DirectML.dll (1.15.4) through rngcheck/backends/directml/bridge/dml_exec.c under Wine, on
rngcheck's vkd3d D3D12 for Windows (rngcheck.backends.directml.bridge.windows): it passes the quick
profile, is diagnosed like any backend when it misbehaves, and is unavailable with one line when a
piece is missing. Set up with `python3 -m rngcheck.backends.directml.bridge.windows`; required in CI."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import unavailable
from rngcheck import reference
from rngcheck.backends.directml.bridge.chain import Layout
from rngcheck.backends.directml.bridge.windows import DIRECTML_DLL, WindowsLayout, is_set_up
from rngcheck.backends.exec_backend import ExecBackend
from rngcheck.conformance import axes
from rngcheck.conformance.known_answers.cases import GENERATOR
from rngcheck.errors import BackendUnavailable

LAUNCHER = [sys.executable, "-m", "rngcheck.backends.directml.wine"]
SPEC = "exec:" + " ".join(LAUNCHER)


@pytest.fixture(scope="module")
def wine_ready():
    if not is_set_up(WindowsLayout(Layout.default())):
        unavailable("DirectML.dll under Wine is not set up (python3 -m rngcheck.backends.directml.bridge.windows)")


def run(tmp_path, *args, spec=SPEC, env=None):
    """`rngcheck run` on the Wine backend: (exit code, the result document or None, stderr)."""
    out = tmp_path / "result.json"
    done = subprocess.run([sys.executable, "-m", "rngcheck", "run", "--backend", spec, "--json", str(out), "--quiet",
                           *args], capture_output=True, text=True, timeout=900, env=env)
    document = json.loads(out.read_text()) if out.exists() else None
    return done.returncode, document, done.stderr


def test_quick_profile_passes_under_wine(wine_ready, tmp_path):
    code, document, stderr = run(tmp_path, "--profile", "quick")
    assert code == 0, stderr
    backend = document["backends"][0]
    assert backend["verdict"] == "pass"
    assert backend["name"] == f"directml-windows:{DIRECTML_DLL.version}"
    described = backend["describe"]
    assert described["DirectML version"].startswith(DIRECTML_DLL.version)
    assert described["max feature level"] == DIRECTML_DLL.feature_level
    assert "wine" in described["platform"] and "rngcheck_d3d12.dll" in described["d3d12 library"]
    # the DLL's sha256 as dml_exec.exe computed it (Windows' BCrypt), the bytes a statement names
    loaded = Path(described["directml library"].replace("Z:", "", 1).replace("\\", "/"))
    assert described["directml sha256"] == hashlib.sha256(loaded.read_bytes()).hexdigest()
    numbers = {case["id"] for case in document["cases"]    # the axes that draw numbers (numbers, properties)
               if axes.of_category(case["category"]).method == "random_numbers"}
    # another operator's cases (rngcheck.conformance.axes) and the generators' known answers (single
    # blocks): DirectML runs none, so not applicable
    others = {case["id"] for case in document["cases"]
              if not axes.of_category(case["category"]).required or case["procedure"] == GENERATOR}
    assert others and {r["status"] for r in document["results"] if r["case"] in others} == {"n/a"}
    statuses = {result["status"] for result in document["results"] if result["case"] not in numbers | others}
    assert statuses <= {"passed", "info"}
    # The numbers layer: a words-only implementation is not applicable there, never passed.
    assert numbers and {r["status"] for r in document["results"] if r["case"] in numbers} == {"n/a"}
    # DirectML itself refused something (its validation ran, not only dml_exec's own checks).
    assert any(r["case"].startswith("validation/") and r["status"] == "passed" for r in document["results"])


def test_a_flipped_bit_is_caught_and_named(wine_ready, tmp_path):
    code, document, stderr = run(tmp_path, "--profile", "quick", "--case", "kat", spec=SPEC + " --fault flip")
    assert code == 1, stderr
    failed = [r for r in document["results"] if r["status"] == "failed"]
    assert failed and all(r["mismatch_count"] >= 1 and r["diagnosis"] for r in failed)


@pytest.mark.parametrize("fault, status", [("crash", "crashed"), ("hang", "timeout")])
def test_a_crash_or_hang_in_wine_ends_the_case_and_the_run_goes_on(wine_ready, tmp_path, fault, status):
    # the timeout must leave Wine's start-up room on a loaded machine (xdist's other worker busy): at 8 s a
    # crashing case was once timed out before it crashed, and a hanging one once ended another way; a crash
    # needs no short timeout (60 s), a hang is ended at 20 s
    code, document, stderr = run(tmp_path, "--profile", "quick", "--case", "kat", "--timeout",
                                 "60" if fault == "crash" else "20", spec=SPEC + f" --fault {fault}")
    assert code == 1, stderr
    results = document["results"]
    said = [(r["status"], r["message"][:120]) for r in results]
    assert len(results) == 3 and all(r["status"] == status for r in results), said   # every case ran


def wine_processes(prefix: Path) -> dict[int, bytes]:
    """The live processes of Wine on ``prefix`` (by their WINEPREFIX): pid and environment."""
    found = {}
    needle = f"WINEPREFIX={prefix}".encode()
    for entry in os.listdir("/proc"):
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes() if entry.isdigit() else b""
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found[int(entry)] = environ
    return found


def test_wine_s_own_processes_are_not_the_backend_s(wine_ready):
    """The wineserver and Wine's services serve every backend on the prefix: they do not carry a
    backend's mark (rngcheck.backends.lifetime), so ending one backend (a hang's kill included) leaves
    another's Wine running; the backend's own processes (the launcher, Xvfb, dml_exec.exe) all end."""
    from rngcheck.backends import lifetime

    prefix = WindowsLayout(Layout.default()).prefix
    first, second = ExecBackend(LAUNCHER, timeout=120), ExecBackend(LAUNCHER, timeout=120)
    try:
        mark = f"{lifetime.OWNER_VARIABLE}={first.child.owner}".encode()
        wine = wine_processes(prefix)
        servers = [pid for pid in wine if Path(f"/proc/{pid}/comm").read_text().startswith("wineserver")]
        assert servers, f"no wineserver for {prefix} among {sorted(wine)}"
        assert not [pid for pid, environ in wine.items() if mark in environ.split(b"\0")]
        assert lifetime.marked(first.child.owner)             # the launcher and Xvfb carry it
        first.child.kill()                                    # as a hang's time limit ends it
        assert lifetime.marked(first.child.owner) == []
        assert all(Path(f"/proc/{pid}").exists() for pid in servers)
        state, sizes, strides = np.arange(1, 7, dtype=np.uint32), (1, 1, 1, 8), (8, 8, 8, 1)
        got, expected = np.zeros(8, np.uint32), np.zeros(8, np.uint32)
        second.random_generator(state, sizes, strides, got)                  # the other still runs
        reference.random_generator(state, sizes, strides, expected)
        assert got.tolist() == expected.tolist()
    finally:
        first.close()
        second.close()


def test_an_x_server_that_does_not_start_is_one_line(tmp_path):
    """No free display (an Xvfb that fails): unavailable, with the server's last word."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "Xvfb").write_text("#!/bin/sh\necho '(EE) no free display, for this test' >&2\nexit 1\n")
    (bin_dir / "Xvfb").chmod(0o755)
    (bin_dir / "wine").symlink_to("/bin/true")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "-c", "import sys; from rngcheck.backends.directml import wine; "
                           "sys.exit(wine.on_a_display(['wine', 'x.exe'], {}))"], capture_output=True, env=env,
                          timeout=60)
    assert done.returncode == 1
    reason = json.loads(done.stdout[done.stdout.index(b"{"):])
    assert reason["unavailable"] and "\n" not in reason["error"]
    assert reason["error"] == "directml-wine: Xvfb did not start: (EE) no free display, for this test"


def unavailable_reason(*arguments, env=None) -> str:
    with pytest.raises(BackendUnavailable) as caught:
        ExecBackend([*LAUNCHER, *arguments], timeout=60, env=env)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def test_unavailable_without_the_set_up(tmp_path):
    env = {**os.environ, "RNGCHECK_CACHE": str(tmp_path)}
    assert "is not set up" in unavailable_reason(env=env)
    assert "bridge.windows" in unavailable_reason(env=env)      # says how to set it up


def test_unavailable_without_wine_or_xvfb(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}                  # neither wine nor Xvfb on it
    assert "is not installed (apt-get install" in unavailable_reason(env=env)


def test_unavailable_without_the_dll(wine_ready, tmp_path):
    assert "no such file" in unavailable_reason("--dml", str(tmp_path / "DirectML.dll"))


def test_a_file_that_is_not_a_dll_is_named(wine_ready, tmp_path):
    fake = tmp_path / "DirectML.dll"
    fake.write_bytes(b"not a DLL")
    message = unavailable_reason("--dml", str(fake))
    assert "cannot load" in message and "DirectML.dll" in message


# -- the set-up (rngcheck.backends.directml.bridge.windows) ----------------------------------------

def set_up_failure(*arguments) -> str:
    done = subprocess.run([sys.executable, "-m", "rngcheck.backends.directml.bridge.windows", *arguments],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("directml windows setup: ") and "Traceback" not in done.stderr
    return lines[0]


def test_set_up_offline_without_the_wheel_names_it(tmp_path):
    line = set_up_failure("--cache", str(tmp_path), "--offline")
    assert DIRECTML_DLL.wheel in line and "--offline forbids" in line


def test_set_up_names_each_missing_tool(tmp_path, monkeypatch):
    from rngcheck.backends.directml.bridge import build, windows
    monkeypatch.setattr(build.shutil, "which", lambda tool: None if tool in ("wine", "Xvfb") else "/bin/true")
    with pytest.raises(build.SetupError) as raised:
        windows.set_up(WindowsLayout(Layout(tmp_path)), offline=True, quiet=True)
    message = str(raised.value)
    assert "wine (apt-get install wine wine64)" in message and "Xvfb (apt-get install xvfb)" in message


def test_a_changed_input_means_not_set_up(tmp_path):
    layout = WindowsLayout(Layout(tmp_path))
    for path in (layout.d3d12, layout.program, layout.dll, layout.prefix / "system.reg"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    from rngcheck.backends.directml.bridge.windows import stamp_of
    stamp = stamp_of()
    layout.stamp.write_text(json.dumps(stamp))
    assert is_set_up(layout)
    layout.stamp.write_text(json.dumps({**stamp, "sources": "0" * 64}))     # d3d12_windows.c or dml_exec.c changed
    assert not is_set_up(layout)
