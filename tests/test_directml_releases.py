"""DirectML across its releases (rngcheck.backends.directml.releases): one table of every release, pinned
by wheel and sha256, sorted by version; a download or a hash that fails is refused in one line; both routes
select a release by its version; a description above a release's maximum feature level is not applicable,
never a failure. The real runs need the Linux and Wine set-ups (scripts/setup.sh) and are required in CI."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from helpers import unavailable
from rngcheck.backends.directml import releases
from rngcheck.backends.directml.bridge.build import SetupError
from rngcheck.backends.directml.bridge.chain import DIRECTML_BUILDS, Layout
from rngcheck.backends.directml.bridge.windows import DIRECTML_DLL, WindowsLayout, is_set_up
from rngcheck.errors import BackendUnavailable

ROOT = Path(__file__).resolve().parent.parent
WINDOWS = [r for r in releases.RELEASES if r.route == releases.WINDOWS]
LINUX = [r for r in releases.RELEASES if r.route == releases.LINUX]


def test_the_table_holds_every_release_of_the_issue_sorted_by_version_not_by_name():
    assert [r.directml for r in WINDOWS] == ["1.5.1", "1.8.0", "1.9.0", "1.9.1", "1.10.1", "1.12.0", "1.13.1",
                                             "1.14.1", "1.15.1", "1.15.2", "1.15.4"]
    assert sorted(["1.9.1", "1.10.1", "1.15.4", "1.5.1"], key=releases.version_key) == \
        ["1.5.1", "1.9.1", "1.10.1", "1.15.4"]                     # a name sort would put 1.10.1 first
    assert {r.label for r in LINUX} == {"linux-1.9.1", "linux-torch-0.2.0", "linux-torch-0.2.5"}
    for release in releases.RELEASES:
        assert re.fullmatch(r"[0-9a-f]{64}", release.sha256), release
        assert release.wheel.startswith(release.project.replace("-", "_") + "-" + release.project_version + "-")
        assert re.fullmatch(r"\d\.\d", release.feature_level), release       # measured, never a guess left
    assert len({r.label for r in releases.RELEASES}) == len(releases.RELEASES)


def test_one_home_the_wine_routes_default_and_the_torch_builds_come_from_the_table():
    assert DIRECTML_DLL is releases.NEWEST_WINDOWS and DIRECTML_DLL.directml == "1.15.4"
    torch = {r.project_version: r.sha256 for r in LINUX if r.torch}
    assert torch == {b.version: b.sha256 for b in DIRECTML_BUILDS}
    assert releases.find("1.12.0", releases.WINDOWS).project_version == "1.15.0"
    assert releases.find("1.9.1", releases.LINUX).project == "tensorflow-directml-plugin"
    assert releases.find("1.9.1", releases.WINDOWS).project == "onnxruntime-directml"
    assert releases.find("1.11.0", releases.WINDOWS) is None        # a wheel's version is not DirectML's


@pytest.mark.parametrize("newest", ["0", "-1", "x"])
def test_newest_zero_or_negative_is_a_usage_error_not_every_release(newest, capsys):
    """--newest 0 selected every release ([-0:]): fetch --newest 0 downloaded them all (hardening round 4, 15)."""
    with pytest.raises(SystemExit) as done:
        releases.main(["fetch", "--offline", "--newest", newest])
    assert done.value.code == 2
    assert "--newest" in capsys.readouterr().err
    with pytest.raises(ValueError):
        releases.selected(newest=0)


def test_selection_keeps_version_order_and_takes_the_newest_of_each_route():
    newest = releases.selected(newest=2)
    assert [r.label for r in newest] == ["windows-1.15.2", "windows-1.15.4", "linux-torch-0.2.0", "linux-torch-0.2.5"]
    assert [r.directml for r in releases.selected(only=["1.15.4", "1.5.1"], route="windows")] == ["1.5.1", "1.15.4"]
    with pytest.raises(SystemExit, match="no release '2.0'"):
        releases.selected(only=["2.0"])


def test_a_wheel_whose_hash_differs_or_that_cannot_be_fetched_is_refused_in_one_line(tmp_path):
    layout = Layout(tmp_path / "directml")
    release = releases.find("1.9.0", releases.WINDOWS)
    layout.downloads.mkdir(parents=True)
    (layout.downloads / release.wheel).write_bytes(b"not the wheel")
    with pytest.raises(SetupError) as wrong:
        releases.ensure(release, layout, offline=True)
    message = str(wrong.value)
    assert "\n" not in message and release.sha256 in message and "has sha256" in message
    assert not release.path(layout).exists()
    (layout.downloads / release.wheel).unlink()
    with pytest.raises(SetupError, match="--offline forbids fetching it"):
        releases.ensure(release, layout, offline=True)
    missing = replace(release, project_version="0.0.0")     # PyPI has no such wheel: pip's failure, one line
    with pytest.raises(SetupError) as absent:
        releases.ensure(missing, layout)
    assert "\n" not in str(absent.value) and "onnxruntime-directml==0.0.0" in str(absent.value)


def test_the_linux_route_names_the_releases_when_lib_is_unknown(monkeypatch, tmp_path):
    from rngcheck.backends.directml import vkd3d
    with pytest.raises(BackendUnavailable, match=r"releases: 1\.9\.1, 0\.2\.0, 0\.2\.5"):
        vkd3d.directml_path("9.9.9")
    monkeypatch.setenv("RNGCHECK_CACHE", str(tmp_path))       # an empty cache, a corrupt wheel in it
    release = releases.find("1.9.1", releases.LINUX)
    downloads = Layout.default().downloads
    downloads.mkdir(parents=True)
    (downloads / release.wheel).write_bytes(b"corrupt")
    with pytest.raises(BackendUnavailable) as refused:
        vkd3d.directml_path("1.9.1")
    assert "\n" not in str(refused.value) and "tensorflow-directml-plugin" in str(refused.value)


def test_the_matrix_script_is_valid_bash_and_lists_the_releases_in_order():
    assert subprocess.run(["bash", "-n", str(ROOT / "scripts" / "directml_matrix.sh")]).returncode == 0
    listed = subprocess.run([sys.executable, "-m", "rngcheck.backends.directml.releases", "specs"],
                            capture_output=True, text=True, check=True, cwd=ROOT).stdout.splitlines()
    assert [line.split("\t")[0] for line in listed] == [r.label for r in releases.RELEASES]
    assert listed[0].split("\t")[2] == "exec:python3 -m rngcheck.backends.directml.wine --release 1.5.1"


# -- real runs ------------------------------------------------------------------------------------

def run(tmp_path, spec, *args):
    out = tmp_path / "result.json"
    done = subprocess.run([sys.executable, "-m", "rngcheck", "run", "--backend", spec, "--json", str(out),
                           "--quiet", *args], capture_output=True, text=True, timeout=900, cwd=ROOT)
    return done.returncode, json.loads(out.read_text()) if out.exists() else None, done.stderr


def statuses(document):
    return {r["status"] for r in document["results"]}


@pytest.fixture(scope="module")
def wine_ready():
    if not (shutil.which("wine") and is_set_up(WindowsLayout(Layout.default()))):
        unavailable("DirectML.dll under Wine is not set up (python3 -m rngcheck.backends.directml.bridge.windows)")


def test_the_wine_route_refuses_an_unknown_release_in_one_line(wine_ready):
    done = subprocess.run([sys.executable, "-m", "rngcheck", "run", "--backend",
                           "exec:python3 -m rngcheck.backends.directml.wine --release 2.0.0", "--quiet"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "--release 2.0.0: no such Windows DirectML release (known: 1.5.1, 1.8.0" in done.stderr


def test_a_release_below_feature_level_4_is_not_applicable_for_fl4_descriptions(wine_ready, tmp_path):
    """DirectML 1.5.1 (FL 3.1) is never asked for a 1-D (FL 4.0) description: not applicable, with both levels."""
    code, document, stderr = run(tmp_path, "exec:python3 -m rngcheck.backends.directml.wine --release 1.5.1 "
                                           "--name directml-windows", "--profile", "quick", "--case", "kat")
    assert document is not None, stderr
    backend = document["backends"][0]
    assert backend["name"] == "directml-windows"
    assert backend["describe"]["max feature level"] == "3.1"
    assert backend["describe"]["DirectML version"].startswith("1.5.1")
    results = document["results"]
    assert results and statuses(document) == {"n/a"}
    assert all("needs DirectML feature level 4.0; this DirectML's maximum is 3.1" in r["message"] for r in results)


def test_a_windows_release_runs_by_version(wine_ready, tmp_path):
    code, document, stderr = run(tmp_path, "exec:python3 -m rngcheck.backends.directml.wine --release 1.9.0",
                                 "--profile", "quick", "--case", "kat")
    assert code == 0, stderr
    described = document["backends"][0]["describe"]
    assert described["DirectML version"] == "1.9.0.0" and described["max feature level"] == "5.0"
    assert statuses(document) == {"passed"}


def test_the_linux_plugin_build_runs_by_version(tmp_path):
    if not Layout.default().stamp.is_file():
        unavailable("the Linux DirectML bridge is not set up (python3 -m rngcheck.backends.directml.bridge.build)")
    code, document, stderr = run(tmp_path, "directml:lib=1.9.1,name=directml-linux", "--profile", "quick")
    assert code == 0, stderr
    backend = document["backends"][0]
    assert backend["name"] == "directml-linux" and backend["verdict"] == "pass"
    assert backend["describe"]["max feature level"] == "5.0"
    assert "tensorflow-directml-plugin" in backend["describe"]["DirectML version"]


def test_the_matrix_lines_the_linux_builds_up_in_version_order_for_compare_and_history(tmp_path):
    """scripts/directml_matrix.sh on the Linux route: one document per build in version order, each compared
    with the one before, and one report whose History view shows the builds under one backend, newest first."""
    if not Layout.default().stamp.is_file():
        unavailable("the Linux DirectML bridge is not set up (python3 -m rngcheck.backends.directml.bridge.build)")
    out = tmp_path / "matrix"
    done = subprocess.run(["bash", str(ROOT / "scripts" / "directml_matrix.sh"), "--route", "linux", "--out", str(out),
                           "--jobs", "3", "--", "--case", "kat"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    documents = sorted(p.name for p in out.glob("[0-9][0-9]-*.json"))
    assert documents == ["01-linux-1.9.1-fl5.0.json", "02-linux-torch-0.2.0-fl5.2.json",
                         "03-linux-torch-0.2.5-fl6.2.json"]
    assert done.stdout.count("rngcheck compare: OK: 0 regressions") == 2
    for name in documents:
        document = json.loads((out / name).read_text())
        assert document["backends"][0]["name"] == "directml-linux"
    history = (out / "releases.html").read_text()
    history = history[history.index('<section id="trend">'):]
    assert "directml-linux: 3 runs" in history
    rows = [history.index(stem) for stem in ("03-linux-torch-0.2.5-fl6.2", "02-linux-torch-0.2.0-fl5.2",
                                             "01-linux-1.9.1-fl5.0")]
    assert rows == sorted(rows)                                     # newest release first
    # the three ran at once, and what each said is still in version order
    said = [line for line in done.stdout.splitlines() if "rngcheck run exit" in line]
    assert [line.split(":")[1].split()[0] for line in said] == ["linux-1.9.1", "linux-torch-0.2.0", "linux-torch-0.2.5"]


def test_the_matrix_refuses_a_number_of_jobs_that_is_not_one_or_more():
    for jobs in ("0", "two", ""):
        done = subprocess.run(["bash", str(ROOT / "scripts" / "directml_matrix.sh"), "--jobs", jobs],
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--jobs" in done.stderr, done.stderr
