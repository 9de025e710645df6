"""The DirectML set-up step (rngcheck.backends.directml.bridge.build): each piece that cannot
be had is one line naming it, exit status 1, and a complete cache is not rebuilt."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import unavailable
from rngcheck.backends.directml.bridge import build, chain

LAYOUT = chain.Layout.default()
MODULE = "rngcheck.backends.directml.bridge.build"


def set_up(*args, env=None, timeout=600):
    environment = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", MODULE, *args], capture_output=True, text=True,
                          env=environment, timeout=timeout, stdin=subprocess.DEVNULL)


def failure(done) -> str:
    assert done.returncode == 1, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("directml setup: ")
    return lines[0]


def downloads_or_skip() -> Path:
    needed = [LAYOUT.downloads / b.wheel for b in chain.DIRECTML_BUILDS] + [LAYOUT.downloads / chain.WINE_SOURCE.orig]
    missing = [p for p in needed if not p.is_file()]
    if missing:
        unavailable(f"the DirectML set-up's downloads are missing ({missing[0]})")
    return LAYOUT.downloads


def test_offline_without_the_wheel_names_it(tmp_path):
    line = failure(set_up("--cache", str(tmp_path), "--offline"))
    assert f"torch-directml {chain.DEFAULT_BUILD.version}" in line and "--offline" in line


def test_a_corrupted_download_is_named_with_both_hashes(tmp_path):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    (downloads / chain.DEFAULT_BUILD.wheel).write_bytes(b"not the wheel")
    line = failure(set_up("--cache", str(tmp_path), "--offline"))
    assert "has sha256" in line and chain.DEFAULT_BUILD.sha256 in line and "delete it" in line


def test_missing_build_tools_are_named(tmp_path):
    """With only the wheels and sources at hand and a PATH without bison and flex."""
    downloads = downloads_or_skip()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("gcc", "dpkg-deb", "apt-get"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    line = failure(set_up("--cache", str(tmp_path / "cache"), "--downloads", str(downloads), "--offline",
                          env={"PATH": str(bin_dir)}))
    assert "missing bison (apt-get install bison); flex (apt-get install flex)" in line


def test_missing_vulkan_headers_are_named(tmp_path):
    downloads = downloads_or_skip()
    line = failure(set_up("--cache", str(tmp_path / "cache"), "--downloads", str(downloads), "--offline",
                          "--vulkan-include", str(tmp_path)))
    assert "Vulkan headers" in line and "libvulkan-dev" in line


def test_a_wheel_pypi_does_not_have_is_named(tmp_path):
    """pip's own complaint, cut to its last line (this asks PyPI)."""
    missing = chain.DirectMLBuild("0.0.0.dev1", "3.11", "torch_directml-0.0.0.dev1.whl", "0" * 64, "0.0")
    with pytest.raises(build.SetupError) as raised:
        build.fetch_wheel(chain.Layout(tmp_path), missing, offline=False)
    message = str(raised.value)
    assert "\n" not in message and "pip download torch-directml==0.0.0.dev1" in message and "failed" in message


def test_a_source_package_debian_does_not_have_is_named(tmp_path, monkeypatch):
    """apt-get's own complaint (this asks the Debian mirror)."""
    if not shutil.which("apt-get"):
        unavailable("apt-get is missing")
    monkeypatch.setattr(build, "WINE_SOURCE", chain.DebianSource(
        "wine", "0.0~nonexistent-1", chain.WINE_SOURCE.suite, "wine_0.0.orig.tar.xz", "0" * 64, "wine-0.0"))
    with pytest.raises(build.SetupError) as raised:
        build.fetch_wine_source(chain.Layout(tmp_path), offline=False)
    message = str(raised.value)
    assert "\n" not in message and "wine 0.0~nonexistent-1" in message and "failed" in message


def test_a_complete_cache_is_not_rebuilt():
    """The set-up CI ran: a second run checks the stamp and builds nothing."""
    downloads_or_skip()
    if not build.bridge_is_built(LAYOUT):
        unavailable(f"the bridge is not built in {LAYOUT.bridge}")
    before = {p.name: p.stat().st_mtime_ns for p in LAYOUT.bridge.iterdir()}
    done = set_up("--offline")
    assert done.returncode == 0, done.stderr
    assert "are built" in done.stderr and "compiling" not in done.stderr
    assert {p.name: p.stat().st_mtime_ns for p in LAYOUT.bridge.iterdir()} == before


def test_the_stamp_follows_the_bridge_sources(tmp_path, monkeypatch):
    """A changed bridge source (or build flag) means a rebuild: the stamp differs."""
    layout = chain.Layout(tmp_path)
    original = build.stamp_of(layout, True)
    assert build.stamp_of(layout, False) != original
    fake_here = tmp_path / "here"
    fake_here.mkdir()
    for name in build.BRIDGE_SOURCES:
        (fake_here / name).write_bytes((build.HERE / name).read_bytes())
    monkeypatch.setattr(build, "HERE", fake_here)
    assert build.stamp_of(layout, True) == original
    (fake_here / "dxcore_bridge.c").write_text("/* changed */")
    assert build.stamp_of(layout, True) != original


def test_build_names_resolve():
    assert chain.find_build("0.2.5") is chain.DIRECTML_BUILDS[0]
    assert chain.find_build("0.2.0.dev230426") is chain.DIRECTML_BUILDS[1]
    assert chain.find_build("latest") is chain.DEFAULT_BUILD
    assert chain.find_build("1.15.4") is None


def test_a_missing_wine_route_source_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    """An installation without the bridge's C sources (a wheel without its package data): the Wine
    route's set-up says which file is missing in one line and exits 1; is_set_up says False."""
    from rngcheck.backends.directml.bridge import windows

    missing = tmp_path / "dml_exec.c"
    monkeypatch.setattr(windows, "PROGRAM", missing)
    layout = windows.WindowsLayout(windows.layout_of(windows.set_up_parser("t", "t").parse_args(
        ["--cache", str(tmp_path / "cache"), "--quiet"])))
    assert windows.is_set_up(layout) is False
    assert windows.main(["--cache", str(tmp_path / "cache"), "--quiet", "--offline"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(missing) in err[0] and "missing" in err[0], err
