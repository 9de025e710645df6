"""Real DirectML (Microsoft's Linux build) on vkd3d and lavapipe: the backend, and the one-line
reason for each missing piece. CI sets the chain up (scripts/setup.sh), so there a missing
piece fails these tests; elsewhere they skip with the reason."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from helpers import unavailable
from library_cases import isolated_or_unavailable, quick_profile
from rngcheck import reference
from rngcheck.backends.directml.bridge import chain

BUILDS = [pytest.param(build, id=build.short) for build in chain.DIRECTML_BUILDS]
LAYOUT = chain.Layout.default()


def set_up_or_skip(build=chain.DEFAULT_BUILD):
    missing = [p for p in (LAYOUT.bridge / "libd3d12.so", LAYOUT.directml(build)) if not p.is_file()]
    if missing:
        unavailable(f"real DirectML is not set up ({missing[0]} is missing; "
                    f"python -m rngcheck.backends.directml.bridge.build)")


def rngcheck(*args, env=None, timeout=300):
    """rngcheck in a fresh process (one D3D12 and one DirectML per process)."""
    environment = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "rngcheck", *args], capture_output=True, text=True,
                          env=environment, timeout=timeout, stdin=subprocess.DEVNULL)


def one_line_error(done) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


@pytest.mark.parametrize("build", BUILDS)
def test_backend_describes_the_real_chain(build):
    set_up_or_skip(build)
    done = rngcheck("backends", "--json", f"directml:lib={build.short}")
    assert done.returncode == 0, done.stderr
    import json
    (known,) = json.loads(done.stdout)
    assert known["available"], known["reason"]
    info = known["describe"]
    assert info["platform"] == "vkd3d"
    assert info["DirectML version"] == build.version
    assert info["max feature level"] == build.feature_level
    assert "vkd3d-shader 1.14" in info["D3D12 implementation"]
    assert "llvmpipe" in info["adapter"] and "CPU" in info["adapter"]
    assert info["bridge adapters"].startswith("12 ")
    assert info["directml library"] == str(LAYOUT.directml(build))
    assert info["directml sha256"] == hashlib.sha256(LAYOUT.directml(build).read_bytes()).hexdigest()


@pytest.mark.parametrize("build", BUILDS)
def test_real_directml_computes_the_reference_words(build, tmp_path):
    """One execution, in this process for the default build and in a worker for the other."""
    set_up_or_skip(build)
    code = f"""
import numpy as np, sys
from rngcheck.backends import load
b = load('directml:lib={build.short}')
state = np.array([0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 7, 9], dtype=np.uint32)
buf = np.full(3 * 8 + 4, 0xFEEDFACE, dtype=np.uint32)
out = b.random_generator(state, (3, 5), (8, 1), buf)
np.save(sys.argv[1], np.concatenate([buf, out]))
b.close()
"""
    target = tmp_path / "words.npy"
    done = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = np.load(target)
    buffer, state_out = got[:-6], got[-6:]
    state = np.array([0xFFFFFFFF] * 4 + [7, 9], dtype=np.uint32)
    expected = reference.words(state, 0, 15).reshape(3, 5)
    assert np.array_equal(buffer[:24].reshape(3, 8)[:, :5], expected)       # across the 2^128 wrap
    assert np.all(buffer[:24].reshape(3, 8)[:, 5:] == 0xFEEDFACE)           # padding preserved
    assert np.all(buffer[24:] == 0xFEEDFACE)                                # past the extent untouched
    assert list(state_out) == [3, 0, 0, 0, 7, 9]                            # ceil(15/4) = 4, wrapped


@pytest.mark.parametrize("build", BUILDS)
def test_quick_profile_passes_on_real_directml(build):
    set_up_or_skip(build)
    spec = f"directml:lib={build.short}"
    backend = isolated_or_unavailable(spec, timeout=300)   # the run's own isolation: a worker
    try:
        results = quick_profile(spec, backend)
    finally:
        backend.close()
    assert sum(r["status"] == "passed" for r in results) > 100
    aliasing = {r["case"]: r for r in results if r["case"].startswith("layout/alias-")}
    assert aliasing and all("refused the aliasing output" in r["message"] for r in aliasing.values())


# -- each missing piece: one line, exit 2 ----------------------------------------------------

def test_missing_vkd3d_is_named(tmp_path):
    line = one_line_error(rngcheck("run", "--backend", "directml", "--case", "kat",
                                   env={"RNGCHECK_CACHE": str(tmp_path)}))
    assert "vkd3d (D3D12 over Vulkan) is not set up" in line and "bridge.build" in line


def test_missing_directml_library_is_named(tmp_path):
    set_up_or_skip()
    line = one_line_error(rngcheck("run", "--backend", f"directml:d3d12={LAYOUT.bridge}", "--case", "kat",
                                   env={"RNGCHECK_CACHE": str(tmp_path)}))
    assert f"DirectML {chain.DEFAULT_BUILD.version} (torch-directml) is not set up" in line


def test_unknown_build_is_named():
    set_up_or_skip()
    line = one_line_error(rngcheck("run", "--backend", "directml:lib=9.9", "--case", "kat"))
    assert "lib=9.9 is neither a file nor a pinned DirectML build" in line and "0.2.5" in line


def test_no_vulkan_device_is_named():
    set_up_or_skip()
    line = one_line_error(rngcheck("run", "--backend", "directml", "--case", "kat",
                                   env={"VK_ICD_FILENAMES": "/nonexistent/icd.json",
                                        "VK_DRIVER_FILES": "/nonexistent/icd.json"}))
    assert "Vulkan" in line and "mesa-vulkan-drivers" in line


def test_a_d3d12_that_is_not_the_bridge_is_named(tmp_path):
    """The wheel's own libd3d12.so is an empty stub (WSL's real one lives in /usr/lib/wsl)."""
    set_up_or_skip()
    import zipfile
    wheel = LAYOUT.downloads / chain.DEFAULT_BUILD.wheel
    if not wheel.is_file():
        unavailable(f"{wheel} is missing")
    with zipfile.ZipFile(wheel) as archive:
        (tmp_path / "libd3d12.so").write_bytes(archive.read("torch_directml/libd3d12.so"))
    line = one_line_error(rngcheck("run", "--backend", f"directml:d3d12={tmp_path}", "--case", "kat"))
    assert "is not rngcheck's vkd3d bridge" in line


def test_vkd3d_without_dxil_is_named(tmp_path):
    """vkd3d built without VKD3D_SHADER_UNSUPPORTED_DXIL (as Debian's own vkd3d is) is refused."""
    set_up_or_skip()
    if not shutil.which("bison") or not (LAYOUT.downloads / chain.WINE_SOURCE.orig).is_file():
        unavailable("the DirectML set-up's downloads or bison are missing")
    cache = tmp_path / "no-dxil"
    done = subprocess.run([sys.executable, "-m", "rngcheck.backends.directml.bridge.build", "--cache", str(cache),
                           "--downloads", str(LAYOUT.downloads), "--offline", "--without-dxil", "--quiet"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    line = one_line_error(rngcheck("run", "--backend", f"directml:d3d12={cache / 'bridge'}", "--case", "kat"))
    assert "cannot read DXIL" in line and "VKD3D_SHADER_UNSUPPORTED_DXIL" in line


def test_statistical_smoke_tier_through_real_directml(tmp_path):
    set_up_or_skip()
    target = tmp_path / "stats.json"
    done = rngcheck("stats", "--backend", "directml", "--tier", "smoke", "--json", str(target))
    assert done.returncode == 0, done.stderr[-2000:]
    import json
    document = json.loads(target.read_text())
    assert document["verdict"] == "PASS" and document["tier"] == "smoke"
    assert document["counts"]["PASS"] > 50


def test_a_crash_inside_directml_marks_the_cases_crashed_and_the_run_goes_on(tmp_path):
    """The bridge's fault switch aborts inside IDMLDevice::CompileOperator: every case of the
    crashing backend is `crashed` (SIGABRT, with its stderr), the next backend still runs."""
    set_up_or_skip()
    import json
    target = tmp_path / "crash.json"
    done = rngcheck("run", "--backend", "directml", "--backend", "numpy", "--case", "kat", "--json", str(target),
                    env={"RNGCHECK_BRIDGE_FAULT": "abort"})
    assert done.returncode == 1, done.stderr
    results = json.loads(target.read_text())["results"]
    crashed = [r for r in results if r["backend"] == "directml"]
    assert crashed and all(r["status"] == "crashed" and "SIGABRT" in r["message"] for r in crashed)
    assert any("aborting inside DirectML" in r["detail"] for r in crashed)
    assert all(r["status"] == "passed" for r in results if r["backend"] == "numpy")


def test_lib_takes_a_path(tmp_path):
    """lib=PATH loads that file; a copy in a folder named after a pinned build keeps its name."""
    set_up_or_skip()
    import json
    build = chain.DIRECTML_BUILDS[-1]
    copy = tmp_path / build.version / "libdirectml.so"
    copy.parent.mkdir()
    shutil.copy2(LAYOUT.directml(build), copy)
    other = tmp_path / "mine" / "libdirectml.so"
    other.parent.mkdir()
    shutil.copy2(LAYOUT.directml(build), other)
    done = rngcheck("backends", "--json", f"directml:lib={copy}", f"directml:lib={other}")
    assert done.returncode == 0, done.stderr
    named, unnamed = json.loads(done.stdout)
    assert named["describe"]["directml library"] == str(copy)
    assert named["describe"]["DirectML version"] == build.version
    assert named["describe"]["max feature level"] == build.feature_level
    assert unnamed["describe"]["DirectML version"] == "unknown"
    line = one_line_error(rngcheck("run", "--backend", f"directml:lib={tmp_path}/absent.so", "--case", "kat"))
    assert "no DirectML library at" in line
