"""The DirectML cache (rngcheck.backends.directml.bridge.cache, hardening round 4, item 6): what is loaded
is hashed, and two set-ups at once both succeed.

* An unpacked library's marker records its own sha256 and size, not only its wheel's; the library is
  checked against it before it is loaded or handed to Wine (size first, then the hash, once per process
  per file). A damaged one is unpacked again from its wheel when the wheel is good; else one line names
  the file and what to run, never a SIGBUS inside dlopen.
* Downloads and unpacks are written under a private temporary name in the same folder and moved into
  place, under a lock (flock on a lock file opened with O_NOFOLLOW): two processes unpacking or
  downloading the same release at once both succeed, and the work is done once.
* ``releases fetch --newest 0`` (or a negative N) is a usage error, not every release.

Every wheel here is a small fake one built by the test (a real one only where the real chain is set up,
copied from the cache into a temporary one): no test downloads anything."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import unavailable
from rngcheck.backends.directml import releases
from rngcheck.backends.directml.bridge import build, cache, chain
from rngcheck.backends.directml.bridge.build import SetupError
from rngcheck.backends.directml.bridge.chain import Layout
from rngcheck.errors import BackendUnavailable

ROOT = Path(__file__).resolve().parent.parent
MEMBER = "onnxruntime/capi/DirectML.dll"


def fake_wheel(folder: Path, release: releases.Release, payload: bytes) -> releases.Release:
    """A wheel named as ``release``'s holding ``payload`` as its member; the release pinned to it."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / release.wheel
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(release.member, payload)
        archive.writestr("onnxruntime/__init__.py", "")
    return replace(release, sha256=hashlib.sha256(wheel.read_bytes()).hexdigest())


@pytest.fixture
def fake(tmp_path):
    """(layout, release, payload): a Windows release pinned to a fake wheel in a temporary cache."""
    layout = Layout(tmp_path / "directml")
    payload = os.urandom(1 << 20)
    release = fake_wheel(layout.downloads, replace(releases.find("1.9.0", releases.WINDOWS), member=MEMBER), payload)
    return layout, release, payload


def damage(path: Path, how: str) -> None:
    if how == "truncated":
        with open(path, "r+b") as handle:
            handle.truncate(path.stat().st_size // 2)
        return
    before = path.stat()                    # one byte changed, size and times kept (as cp -p or rsync -a copy)
    with open(path, "r+b") as handle:
        handle.seek(1000)
        byte = handle.read(1)
        handle.seek(1000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


# -- the marker: the library's own sha256 -------------------------------------------------------

def test_the_marker_records_the_unpacked_librarys_own_sha256_and_size(fake):
    layout, release, payload = fake
    target = releases.ensure(release, layout, offline=True)
    assert target == release.path(layout) and target.read_bytes() == payload
    record = json.loads(cache.marker_of(target).read_text())
    assert record == {"wheel": release.sha256, "member": MEMBER, "sha256": hashlib.sha256(payload).hexdigest(),
                      "size": len(payload)}
    assert sorted(p.name for p in target.parent.iterdir()) == [".DirectML.dll.lock", "DirectML.dll",
                                                               "DirectML.sha256"]   # no .part left


@pytest.mark.parametrize("how", ["truncated", "one byte changed, times kept"])
def test_a_damaged_library_is_unpacked_again_from_its_good_wheel(fake, how):
    layout, release, payload = fake
    target = releases.ensure(release, layout, offline=True)
    damage(target, how)
    assert cache.problem(target, release.sha256).startswith("is damaged")
    assert releases.checked(release, layout).read_bytes() == payload           # before it is loaded
    damage(target, how)
    assert releases.ensure(release, layout, offline=True).read_bytes() == payload     # releases fetch


@pytest.mark.parametrize("how", ["truncated", "one byte changed, times kept"])
def test_a_damaged_library_without_a_good_wheel_is_one_line_naming_it_and_what_to_run(fake, how):
    layout, release, payload = fake
    target = releases.ensure(release, layout, offline=True)
    damage(target, how)
    wheel = layout.downloads / release.wheel
    wheel.unlink()
    with pytest.raises(SetupError) as missing:
        releases.checked(release, layout)
    message = str(missing.value)
    assert "\n" not in message and message.startswith(f"{target} is damaged (")
    assert f"its wheel {wheel} is not in the cache" in message
    assert message.endswith(f"run: python3 -m rngcheck.backends.directml.releases fetch {release.label}")
    wheel.write_bytes(b"not the wheel")
    with pytest.raises(SetupError) as bad:
        releases.checked(release, layout)
    assert "\n" not in str(bad.value) and str(bad.value).startswith(f"{target} is damaged (")
    assert "its wheel" in str(bad.value) and "has sha256" in str(bad.value)
    assert target.read_bytes() != payload                   # nothing was written over it from a bad wheel


@pytest.mark.parametrize("marker, why", [
    ("{wheel}\n", "older rngcheck"),                     # what an older rngcheck wrote: the wheel's sha256 alone
    ("\x00garbage", "has a damaged marker"),
    ('{{"wheel": "{other}", "sha256": "{other}", "size": 1}}', "another wheel"),
    (None, "has no marker"),                              # an unpacking that did not finish
])
def test_a_library_its_marker_does_not_vouch_for_is_unpacked_again_and_recorded(fake, marker, why):
    layout, release, payload = fake
    target = release.path(layout)
    target.parent.mkdir(parents=True)
    target.write_bytes(payload[: len(payload) // 2])                        # truncated, and trusted before
    if marker is not None:
        cache.marker_of(target).write_text(marker.format(wheel=release.sha256, other="0" * 64))
    assert why in cache.problem(target, release.sha256)
    assert releases.checked(release, layout).read_bytes() == payload
    assert json.loads(cache.marker_of(target).read_text())["sha256"] == hashlib.sha256(payload).hexdigest()


def test_the_library_is_hashed_once_per_process_and_again_when_the_file_changes(fake, monkeypatch):
    layout, release, payload = fake
    target = releases.ensure(release, layout, offline=True)
    hashes = []

    class Counting:
        @staticmethod
        def sha256(*data):
            hashes.append(1)
            return hashlib.sha256(*data)
    monkeypatch.setattr(cache, "hashlib", Counting)
    for _ in range(3):
        releases.checked(release, layout)
    assert hashes == []                                     # this process unpacked it: its hash is known
    monkeypatch.setattr(cache, "_HASHED", {})               # a new process (a worker)
    for _ in range(3):
        releases.checked(release, layout)
    assert len(hashes) == 1
    damage(target, "one byte changed, times kept")          # written since: its ctime moved
    assert releases.checked(release, layout).read_bytes() == payload
    assert len(hashes) == 4                                 # the check, the wheel's, the unpacking's own
    releases.checked(release, layout)
    assert len(hashes) == 4


# -- where the library is used: the Linux backend and the Wine route ------------------------------

def test_the_linux_backend_checks_a_pinned_build_before_loading_it(tmp_path, monkeypatch):
    """directml:lib=0.2.5 (and the default build) go through the check: a damaged library without its
    wheel is BackendUnavailable in one line naming the file and the command; with the wheel, repaired."""
    from rngcheck.backends.directml import vkd3d

    monkeypatch.setenv("RNGCHECK_CACHE", str(tmp_path))
    build_ = chain.DEFAULT_BUILD
    layout = Layout.default()
    payload = os.urandom(1 << 16)
    release = fake_wheel(layout.downloads, releases.of_build(build_), payload)
    monkeypatch.setattr(releases, "of_build", lambda b: release)
    target = releases.ensure(release, offline=True)
    assert target == layout.directml(build_)
    damage(target, "truncated")
    assert vkd3d.directml_path("0.2.5") == (target, build_.version) and target.read_bytes() == payload
    damage(target, "truncated")
    (layout.downloads / release.wheel).unlink()
    with pytest.raises(BackendUnavailable) as refused:
        vkd3d.directml_path(None)
    message = str(refused.value)
    assert "\n" not in message and f"{target} is damaged" in message
    assert "releases fetch linux-torch-0.2.5" in message
    monkeypatch.setattr(releases, "RELEASES", tuple(release if r.label == release.label else r
                                                    for r in releases.RELEASES))
    with pytest.raises(BackendUnavailable, match="is damaged"):               # lib=PATH of the cache's file
        vkd3d.directml_path(str(target))


def fake_wine_route(tmp_path: Path, payload: bytes):
    """A Wine route's cache that is_set_up accepts (fake files), an Xvfb that says display 7, and a wine
    that shows how it was run."""
    from rngcheck.backends.directml.bridge import windows

    layout = windows.WindowsLayout(Layout(tmp_path / "cache"))
    for path in (layout.d3d12, layout.program, layout.prefix / "system.reg", layout.dll):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"fake")
    layout.stamp.write_text(json.dumps(windows.stamp_of()))
    layout.dll.write_bytes(payload)
    record = {"wheel": windows.DIRECTML_DLL.sha256, "member": windows.DIRECTML_DLL.member,
              "sha256": hashlib.sha256(payload).hexdigest(), "size": len(payload)}
    cache.marker_of(layout.dll).write_text(json.dumps(record))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "Xvfb").write_text(f"#!{sys.executable}\nimport os, sys, time\n"
                                  "os.write(int(sys.argv[sys.argv.index('-displayfd') + 1]), b'7\\n')\n"
                                  "time.sleep(60)\n")
    (bin_dir / "wine").write_text('#!/bin/sh\necho "wine $* on DISPLAY=$DISPLAY"\n')
    for tool in ("Xvfb", "wine"):
        (bin_dir / tool).chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    return layout, env


def wine_route(layout, env, *args):
    return subprocess.run([sys.executable, "-m", "rngcheck.backends.directml.wine", "--cache", str(layout.base.root),
                           *args], capture_output=True, env=env, timeout=60, cwd=ROOT)


def test_the_wine_route_hands_wine_only_a_checked_dll(tmp_path):
    payload = os.urandom(1 << 16)
    layout, env = fake_wine_route(tmp_path, payload)
    ran = wine_route(layout, env)
    said = ran.stdout.decode()
    assert ran.returncode == 0 and f"--dml {layout.dll} " in said and "on DISPLAY=:7" in said  # intact: run
    damage(layout.dll, "truncated")
    refused = wine_route(layout, env)
    assert refused.returncode == 1 and b"DISPLAY=" not in refused.stdout                  # never handed to Wine
    reason = json.loads(refused.stdout[refused.stdout.index(b"{"):])
    assert reason["unavailable"] and "\n" not in reason["error"]
    assert f"{layout.dll} is damaged" in reason["error"]
    assert "releases fetch windows-1.15.4" in reason["error"]
    other = releases.find("1.9.0", releases.WINDOWS).path(layout.base)       # --dml naming the cache's file
    other.parent.mkdir(parents=True)
    shutil.copy(layout.dll, other)
    shutil.copy(cache.marker_of(layout.dll), cache.marker_of(other))
    refused = wine_route(layout, env, "--dml", str(other))
    assert refused.returncode == 1 and b"DirectML 1.9.0: " in refused.stdout and b"DISPLAY=" not in refused.stdout


def test_a_truncated_library_is_one_line_not_a_sigbus_on_the_real_chain(tmp_path):
    """The real libdirectml.so truncated in a copy of the cache: `rngcheck run` says so in one line and
    the command to run (it died with SIGBUS inside dlopen); with its wheel there, it is unpacked again."""
    layout = Layout.default()
    build_ = chain.DEFAULT_BUILD
    library, wheel = layout.directml(build_), layout.downloads / build_.wheel
    if not ((layout.bridge / "libd3d12.so").is_file() and library.is_file() and wheel.is_file()):
        unavailable("real DirectML is not set up (python -m rngcheck.backends.directml.bridge.build)")
    copy = Layout(tmp_path / "directml")
    shutil.copytree(layout.bridge, copy.bridge)
    target = copy.directml(build_)
    target.parent.mkdir(parents=True)
    data = library.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    record = {"wheel": build_.sha256, "member": chain.WHEEL_MEMBER, "sha256": hashlib.sha256(data).hexdigest(),
              "size": len(data)}
    cache.marker_of(target).write_text(json.dumps(record))
    env = dict(os.environ, RNGCHECK_CACHE=str(tmp_path))

    def run():
        return subprocess.run([sys.executable, "-m", "rngcheck", "run", "--backend", "directml", "--case", "kat"],
                              capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    done = run()
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{target} is damaged ({len(data) // 2} bytes" in lines[0] and "SIGBUS" not in done.stderr
    assert "releases fetch linux-torch-0.2.5" in lines[0]
    copy.downloads.mkdir(parents=True)
    shutil.copy(wheel, copy.downloads / wheel.name)
    done = run()
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == data


# -- two set-ups at once ----------------------------------------------------------------------------

UNPACK = r"""
import sys, time, zipfile
from dataclasses import replace
from pathlib import Path
from rngcheck.backends.directml import releases
from rngcheck.backends.directml.bridge.chain import Layout
root, go, sha, member = sys.argv[1:5]
slow = zipfile.ZipExtFile.read
def read(self, n=-1):            # a slow disk: each read of the member takes 20 ms
    time.sleep(0.02)
    return slow(self, n)
zipfile.ZipExtFile.read = read
release = replace(releases.find("1.9.0", releases.WINDOWS), sha256=sha, member=member)
while not Path(go).exists():
    time.sleep(0.001)
print(releases.ensure(release, Layout(Path(root)), offline=True))
"""


def at_once(script: str, args: list[str], go: Path, count: int = 2) -> list[subprocess.CompletedProcess]:
    """``count`` processes of ``script`` started together (each waits for ``go`` to exist)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    children = [subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=env) for _ in range(count)]
    time.sleep(1.5)                             # both imported and waiting
    go.touch()
    done = []
    for child in children:
        out, err = child.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(child.args, child.returncode, out, err))
    return done


def test_two_processes_unpacking_one_release_at_once_both_succeed(fake, tmp_path):
    layout, release, payload = fake
    done = at_once(UNPACK, [str(layout.root), str(tmp_path / "go"), release.sha256, MEMBER], tmp_path / "go")
    for child in done:
        assert child.returncode == 0 and "Traceback" not in child.stderr, child.stderr
        assert child.stdout.strip() == str(release.path(layout))
    target = release.path(layout)
    assert target.read_bytes() == payload and cache.problem(target, release.sha256) is None
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".part")]


DOWNLOAD = r"""
import sys, time
from dataclasses import replace
from pathlib import Path
from rngcheck.backends.directml import releases
from rngcheck.backends.directml.bridge import build
from rngcheck.backends.directml.bridge.chain import Layout
root, go, sha, source, log = sys.argv[1:6]
release = replace(releases.find("1.9.0", releases.WINDOWS), sha256=sha, member="onnxruntime/capi/DirectML.dll")
data = Path(source).read_bytes()
def pip_download(command, what, cwd=None, env=None):    # pip download, slowly, into its -d folder
    with open(log, "a") as note:
        note.write(what + "\n")
    with open(Path(command[command.index("-d") + 1]) / release.wheel, "wb") as wheel:
        for start in range(0, len(data), 1 << 16):
            wheel.write(data[start:start + (1 << 16)])
            wheel.flush()
            time.sleep(0.01)
    return ""
build.run = pip_download
while not Path(go).exists():
    time.sleep(0.001)
print(releases.ensure(release, Layout(Path(root))))
"""


def test_two_processes_downloading_one_wheel_at_once_both_succeed_and_download_it_once(fake, tmp_path):
    layout, release, payload = fake
    source = tmp_path / "pypi.whl"
    (layout.downloads / release.wheel).rename(source)
    log = tmp_path / "downloads.log"
    done = at_once(DOWNLOAD, [str(layout.root), str(tmp_path / "go"), release.sha256, str(source), str(log)],
                   tmp_path / "go")
    for child in done:
        assert child.returncode == 0 and "Traceback" not in child.stderr, child.stderr
    assert log.read_text().count("pip download") == 1
    assert (layout.downloads / release.wheel).read_bytes() == source.read_bytes()
    assert release.path(layout).read_bytes() == payload
    assert sorted(p.name for p in layout.downloads.iterdir()) == [f".{release.wheel}.lock", release.wheel]


def test_a_download_whose_hash_differs_is_not_kept(fake, monkeypatch):
    layout, release, payload = fake
    (layout.downloads / release.wheel).unlink()

    def pip_download(command, what, cwd=None, env=None):
        (Path(command[command.index("-d") + 1]) / release.wheel).write_bytes(b"something else")
        return ""
    monkeypatch.setattr(build, "run", pip_download)
    with pytest.raises(SetupError) as refused:
        releases.ensure(release, layout)
    message = str(refused.value)
    assert "\n" not in message and f"sha256 {hashlib.sha256(b'something else').hexdigest()}" in message
    assert release.sha256 in message and "not kept" in message
    assert sorted(p.name for p in layout.downloads.iterdir()) == [f".{release.wheel}.lock"]


def test_two_bridge_set_ups_at_once_build_once(tmp_path, monkeypatch):
    """The second set-up waits on the first's lock, then finds the bridge built (and its stamp whole)."""
    layout = Layout(tmp_path / "directml")
    built = []

    def fake_build(layout, offline, workers, vulkan_include, dxil, quiet):
        built.append(threading.get_ident())
        staging = tmp_path / f"staging-{len(built)}"
        staging.mkdir()
        for name in ("libd3d12.so", "libdxcore.so"):
            (staging / name).write_bytes(b"built")
        time.sleep(0.5)
        build.install_bridge(layout, staging, dxil)
    monkeypatch.setattr(build, "check_tools", lambda *args: None)
    monkeypatch.setattr(build, "build_bridge", fake_build)
    errors = []

    def set_up():
        try:
            build.set_up(layout, builds=(), quiet=True)
        except Exception as error:      # noqa: BLE001 - the test reports it
            errors.append(error)
    threads = [threading.Thread(target=set_up) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and len(built) == 1
    assert build.bridge_is_built(layout)
    assert sorted(p.name for p in layout.bridge.iterdir()) == ["libd3d12.so", "libdxcore.so", "stamp.json"]


# -- the lock file and the private names --------------------------------------------------------------

def test_a_planted_lock_file_is_refused_never_followed(fake, tmp_path):
    layout, release, payload = fake
    folder = release.path(layout).parent
    folder.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (folder / ".DirectML.dll.lock").symlink_to(victim)
    with pytest.raises(SetupError) as planted:
        releases.ensure(release, layout, offline=True)
    assert "\n" not in str(planted.value) and "is not a regular file" in str(planted.value)
    assert victim.read_text() == "keep me" and not release.path(layout).exists()
    (folder / ".DirectML.dll.lock").unlink()
    os.mkfifo(folder / ".DirectML.dll.lock")                # never a hang on a pipe
    with pytest.raises(SetupError, match="is not a regular file"):
        releases.ensure(release, layout, offline=True)


def test_a_failed_unpack_leaves_the_old_library_and_no_temporary_file(fake):
    layout, release, payload = fake
    target = releases.ensure(release, layout, offline=True)
    damage(target, "truncated")
    damaged = target.read_bytes()
    wrong = replace(release, member="onnxruntime/capi/absent.dll")
    with pytest.raises(SetupError, match="has no onnxruntime/capi/absent.dll"):
        releases.ensure(wrong, layout, offline=True)
    assert target.read_bytes() == damaged
    assert sorted(p.name for p in target.parent.iterdir()) == [".DirectML.dll.lock", "DirectML.dll",
                                                               "DirectML.sha256"]


# -- releases fetch --newest ---------------------------------------------------------------------------

@pytest.mark.parametrize("newest", ["0", "-1"])
def test_newest_below_one_is_a_usage_error_not_every_release(tmp_path, newest):
    env = dict(os.environ, RNGCHECK_CACHE=str(tmp_path))
    for action in (["specs"], ["fetch", "--offline"]):
        done = subprocess.run([sys.executable, "-m", "rngcheck.backends.directml.releases", *action,
                               f"--newest={newest}"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
        assert done.returncode == 2 and done.stdout == "", done.stdout
        assert "--newest" in done.stderr and "N must be 1 or more" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())                                     # nothing fetched
    with pytest.raises(ValueError, match="newest must be 1 or more"):
        releases.selected(newest=int(newest))
    assert [r.label for r in releases.selected(newest=1)] == ["windows-1.15.4", "linux-torch-0.2.5"]
