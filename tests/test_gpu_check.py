"""scripts/gpu-check.sh --dry-run (issue 41): the prepared device check's flow on CPU stand-ins writes every
output under $OUT and says what it ran. The GPU run itself happens only on a lent machine (docs/gpu.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import gpu_check  # noqa: E402


def test_the_dry_run_writes_its_outputs_and_says_what_it_ran(tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, OUT=str(out))
    done = subprocess.run(["bash", "scripts/gpu-check.sh", "--dry-run"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stdout.splitlines()[:5]
    assert "DRY RUN" in first[0] and first[1].startswith("[gpu-check] GPU: ") and "versions:" in first[3]
    for name in ("found.json", "deps.json", "summary.json", "gpu-check.log"):
        assert (out / name).is_file(), name
    if list(out.glob("run-*.json")):          # a machine without any of the backends gets no report
        assert (out / "report.html").is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dry_run"] is True and summary["measured_on_gpu"] is False
    steps = {step["step"]: step for step in summary["steps"]}
    assert "deps" in steps and "torch-grid" in steps and "report" in steps
    runs = [step for name, step in steps.items() if name.startswith("run ")]
    assert len(runs) == len(gpu_check.BACKENDS)
    for name, _, cpu_spec in gpu_check.BACKENDS:
        step = steps[f"run {name} ({cpu_spec})"]
        modules = {"jax": "jax", "jax-u64x3": "jax", "triton": "triton", "numba": "numba", "curand": "numpy"}
        if importlib.util.find_spec(modules[name]) is None:
            continue
        assert step["status"] in ("ok", "findings"), step
        document = json.loads((out / f"run-{name}.json").read_text())
        backend = document["backends"][0]
        assert backend["spec"] == cpu_spec == step["result"]["backend"]
        device = str(backend["describe"].get("device", "")).lower()
        assert not device.startswith("gpu")   # the GPU paths say "gpu (NAME)"
        assert sum(backend["summary"].values()) > 0
    if importlib.util.find_spec("torch") is None:
        assert steps["torch-grid"]["status"] == "failed"
        return
    grid = json.loads((out / "torch-grid.json").read_text())
    assert grid["device"] == "cpu" and grid["stand_in"] and grid["complete"]
    assert len(grid["rows"]) == len(gpu_check.GRID_SEEDS) * len(gpu_check.DRY_GRID_SIZES)
    assert "DRY RUN" in (out / "gpu-check.log").read_text()
    assert summary["seconds"] < summary["budget_s"]


def test_runtime_dependencies_are_read_from_pyproject():
    names = gpu_check.runtime_dependencies()
    assert "jsonschema" in names and "numpy" in names and "Jinja2" in names


def test_a_missing_dependency_without_wheels_is_named(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(gpu_check.importlib.util, "find_spec",
                        lambda name: None if name == "jsonschema" else real(name))
    record = gpu_check.deps(tmp_path, tmp_path / "no-wheels")
    assert record["missing"] == ["jsonschema"] and "jsonschema" in record["error"]


@pytest.mark.skipif(importlib.util.find_spec("pip") is None, reason="pip is not installed")
def test_a_missing_dependency_is_installed_from_the_wheels_folder(tmp_path, monkeypatch):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    package = tmp_path / "src"
    (package / "rngcheck_fake_dep").mkdir(parents=True)
    (package / "rngcheck_fake_dep" / "__init__.py").write_text("VALUE = 1\n")
    (package / "pyproject.toml").write_text('[project]\nname = "rngcheck-fake-dep"\nversion = "1.0"\n'
                                            '[build-system]\nrequires = ["setuptools"]\n'
                                            'build-backend = "setuptools.build_meta"\n')
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(wheels), str(package)], capture_output=True, text=True, timeout=300)
    if built.returncode:
        pytest.skip(f"no wheel could be built here: {built.stderr[-300:]}")
    monkeypatch.setattr(gpu_check, "runtime_dependencies", lambda: ["numpy", "rngcheck-fake-dep"])
    monkeypatch.setattr(gpu_check, "IMPORT_NAMES", {"rngcheck-fake-dep": "rngcheck_fake_dep"})
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    record = gpu_check.deps(tmp_path, wheels)
    assert record["missing"] == ["rngcheck-fake-dep"] and record["installed"] == ["rngcheck-fake-dep"], record
    assert (Path(record["target"]) / "rngcheck_fake_dep" / "__init__.py").is_file()
