"""The prepared device check of issue 41: one run of rngcheck's GPU code paths on a lent GPU machine.

Run it through ``bash scripts/gpu-check.sh [--dry-run]`` (docs/gpu.md). Every step runs in its own process under a
time limit cut from one budget (450 s, under the lent machine's 10 minutes a command); a failing or timed-out
step is recorded in ``$OUT/summary.json`` and the run goes on. Outputs, all under ``$OUT`` (default ./gpu-out):

  found.json         what the machine has: GPU name, driver, SM count, threads per SM, library versions
  deps.json          rngcheck's runtime dependencies found missing and what was installed from gpu-wheels/
  run-<name>.json    a result document (rngcheck run --json) per backend, with its journal
  torch-grid.json    the model rngcheck.numbers.pytorch_cuda against torch.rand on the device
  report.html        the HTML report of every result document (rngcheck report)
  summary.json       the steps: command, exit status, seconds, status; dry_run; the budget
  gpu-check.log      everything the steps printed

``--dry-run`` runs the same steps on the CPU stand-ins of the same backends (JAX on its CPU platform, Triton's
interpreter, numba's CPU functions, cuRAND's host generator, torch's CPU generator for the grid step) with a
smaller case selection, so that CI proves the flow in about a minute. Only the standard library is imported
before the dependency step has run.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGET_S = 450          # the whole check: under 8 minutes
DRY_BUDGET_S = 90
RUN_LIMIT_S = 65        # a backend's conformance run on the GPU (five of them)
WHEELS = ROOT / "gpu-wheels"
IMPORT_NAMES = {"Jinja2": "jinja2"}
VERSIONS = ("torch", "jax", "jaxlib", "jax-cuda13-plugin", "jax-cuda12-plugin", "cupy-cuda13x", "cupy-cuda12x",
            "triton", "numba", "numba-cuda", "nvidia-curand", "nvidia-curand-cu12", "numpy", "scipy", "jsonschema")
# (result name, backend spec on the GPU, its CPU stand-in for --dry-run)
BACKENDS = (("jax", "jax:platform=gpu", "jax:platform=cpu"),
            ("jax-u64x3", "jax:platform=gpu,state_words=3", "jax:platform=cpu,state_words=3"),
            ("triton", "triton:device=gpu", "triton"),
            ("numba", "numba:mode=cuda", "numba:mode=cpu"),
            ("curand", "curand:device=gpu", "curand"))
DRY_CASES = "kat or generator or property-repeat"      # the dry run's -k: a few cases a backend
GRID_SIZES = (1000, 65536, 270_000, 270_337, 540_677, 1 << 20, 3_000_001)   # H100: one wave = 270336
DRY_GRID_SIZES = (1000, 65536)
GRID_SEEDS = (0, 20260413)


class Check:
    """The steps, their budget and their record."""

    def __init__(self, out: Path, dry_run: bool, budget: float):
        self.out, self.dry_run, self.budget = out, dry_run, budget
        self.started = time.monotonic()
        self.steps: list[dict] = []
        self.log = (out / "gpu-check.log").open("a", encoding="utf-8")
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), self.env.get("PYTHONPATH", "")]))

    def say(self, text: str) -> None:
        print(text, flush=True)
        self.log.write(text + "\n")
        self.log.flush()

    def left(self) -> float:
        return self.budget - (time.monotonic() - self.started)

    def step(self, name: str, command: list[str], limit: float, outputs: tuple[Path, ...] = ()) -> dict:
        """Run one step under min(limit, what is left); record it, whatever happens. Status: ok (exit 0),
        findings (exit 1 with its ``outputs`` written: rngcheck's verdict is fail, which is a result), failed,
        timeout or skipped."""
        allowed = int(min(limit, self.left() - 5))
        record: dict = {"step": name, "command": " ".join(command), "limit_s": allowed}
        if allowed < 5:
            record.update(status="skipped", reason="the check's time budget is spent", rc=None, seconds=0.0)
            self.steps.append(record)
            self.say(f"[gpu-check] {name}: skipped (budget spent)")
            return record
        self.say(f"[gpu-check] {name}: {record['command']} (limit {allowed} s)")
        began = time.monotonic()
        try:
            done = subprocess.run(["timeout", "-k", "5", str(allowed), *command], cwd=ROOT, env=self.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
            rc, output = done.returncode, done.stdout
        except OSError as error:
            rc, output = 127, f"{type(error).__name__}: {error}"
        seconds = round(time.monotonic() - began, 2)
        status = ("timeout" if rc in (124, 137) else "ok" if rc == 0
                  else "findings" if rc == 1 and outputs and all(p.is_file() for p in outputs) else "failed")
        record.update(rc=rc, seconds=seconds, status=status, tail=output[-2000:])
        self.log.write(output)
        self.say(f"[gpu-check] {name}: {status} (rc {rc}, {seconds} s)")
        self.steps.append(record)
        return record

    def finish(self, found: dict) -> None:
        summary = {"schema": "rngcheck-gpu-check/1", "dry_run": self.dry_run, "budget_s": self.budget,
                   "seconds": round(time.monotonic() - self.started, 2), "found": found, "steps": self.steps,
                   "measured_on_gpu": not self.dry_run and bool(found.get("gpu")),
                   "outputs": sorted(p.name for p in self.out.iterdir())}
        (self.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        failed = [s["step"] for s in self.steps if s["status"] not in ("ok", "findings")]
        self.say(f"[gpu-check] done in {summary['seconds']} s; steps not ok: {', '.join(failed) or 'none'}")
        self.log.close()


def version_of(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def found(timeout: int = 90) -> dict:
    """What the machine has: nvidia-smi's line, torch's device properties, the packages' versions."""
    facts: dict = {"python": sys.version.split()[0], "platform": sys.platform,
                   "versions": {p: v for p in VERSIONS if (v := version_of(p))}}
    if shutil.which("nvidia-smi"):
        try:
            smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap",
                                  "--format=csv,noheader"], capture_output=True, text=True, timeout=timeout)
            facts["nvidia-smi"] = (smi.stdout or smi.stderr).strip()
        except (OSError, subprocess.SubprocessError) as error:
            facts["nvidia-smi"] = f"failed: {error}"
    else:
        facts["nvidia-smi"] = "not found (no NVIDIA driver)"
    probe = ("import json, torch\n"
             "p = torch.cuda.get_device_properties(0) if torch.cuda.is_available() else None\n"
             "print(json.dumps(None if p is None else {'name': p.name, 'sms': p.multi_processor_count,"
             " 'threads_per_sm': getattr(p, 'max_threads_per_multi_processor', None),"
             " 'capability': f'{p.major}.{p.minor}', 'memory_bytes': p.total_memory,"
             " 'cuda': torch.version.cuda}))\n")
    if importlib.util.find_spec("torch") is not None:
        try:
            done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=timeout)
            facts["gpu"] = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
            if done.returncode:
                facts["gpu_probe_error"] = done.stderr.strip()[-500:]
        except (OSError, subprocess.SubprocessError, ValueError, IndexError) as error:
            facts["gpu"], facts["gpu_probe_error"] = None, str(error)
    else:
        facts["gpu"], facts["gpu_probe_error"] = None, "torch is not installed"
    return facts


def runtime_dependencies() -> list[str]:
    """The names in pyproject.toml's [project] dependencies (no TOML parser: Python 3.10 has none)."""
    text = (ROOT / "pyproject.toml").read_text()
    block = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    names = re.findall(r'"([A-Za-z0-9_.-]+)', block.group(1)) if block else []
    return names


def deps(out: Path, wheels: Path) -> dict:
    """Which runtime dependencies are missing; install those from ``wheels`` (a folder of .whl files) into a
    folder put on PYTHONPATH. Returns the record (and the folder, when something was installed)."""
    missing = [n for n in runtime_dependencies() if importlib.util.find_spec(IMPORT_NAMES.get(n, n.lower())) is None]
    record: dict = {"dependencies": runtime_dependencies(), "missing": missing, "wheels": str(wheels),
                    "wheel_files": sorted(p.name for p in wheels.glob("*.whl")) if wheels.is_dir() else []}
    if not missing:
        record["installed"] = []
        return record
    if not record["wheel_files"]:
        record["error"] = f"missing {', '.join(missing)} and no wheels in {wheels} (docs/gpu.md: pip download)"
        return record
    target = Path(os.environ.get("TMPDIR", "/tmp")) / "rngcheck-gpu-deps"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--find-links",
                           str(wheels), "--target", str(target), *missing], capture_output=True, text=True)
    record.update(installed=missing if done.returncode == 0 else [], target=str(target), pip_rc=done.returncode,
                  pip_output=(done.stdout + done.stderr)[-2000:])
    return record


def result_of(document: Path) -> dict:
    """What a result document says it ran: the backend, its device, the verdict and the counts."""
    try:
        backend = json.loads(document.read_text())["backends"][0]
    except (OSError, ValueError, KeyError, IndexError) as error:
        return {"error": f"unreadable result document: {error}"}
    counts = {k: v for k, v in backend.get("summary", {}).items() if v}
    return {"backend": backend.get("spec"), "device": backend.get("describe", {}).get("device"),
            "version": backend.get("describe", {}).get("version"), "verdict": backend.get("verdict"),
            "counts": counts}


def torch_grid(out: Path, dry_run: bool) -> int:
    """torch.rand on the device against rngcheck.numbers.pytorch_cuda, both grid rules, several sizes; the
    generator's offset after each call against the model's. Writes torch-grid.json. Exit 0 when it ran."""
    import numpy as np
    import torch

    from rngcheck.numbers import pytorch_cuda as model

    if dry_run:
        device = "cpu"
        sms, threads = 132, model.MAX_THREADS_PER_SM     # H100 SXM's figures: the model's side only
        stand_in = "torch's CPU generator (mt19937): a stand-in that is not expected to match the model"
    else:
        device = "cuda"
        properties = torch.cuda.get_device_properties(0)
        sms = properties.multi_processor_count
        threads = getattr(properties, "max_threads_per_multi_processor", None) or model.MAX_THREADS_PER_SM
        stand_in = None
    rows: list[dict] = []
    document = {"schema": "rngcheck-torch-grid/1", "device": device,
                "device_name": torch.cuda.get_device_name() if device == "cuda" else "cpu",
                "torch": torch.__version__, "sms": sms, "threads_per_sm": threads, "stand_in": stand_in,
                "model": "rngcheck.numbers.pytorch_cuda (unverified until a GPU run matches)", "rows": rows,
                "complete": False}
    for seed in GRID_SEEDS:
        torch.manual_seed(seed)
        offset = 0
        for n in DRY_GRID_SIZES if dry_run else GRID_SIZES:
            got = torch.rand(n, device=device).cpu().numpy()
            row: dict = {"seed": seed, "n": n, "offset_before": offset, "sms": sms, "first": got[:4].tolist()}
            for rule in model.GRID_RULES:
                predicted, next_offset = model.rand(n, seed, sms, offset=offset, max_threads_per_sm=threads,
                                                    grid_rule=rule)
                equal = predicted == got
                row[rule] = {"grid": model.execution_policy(n, sms, max_threads_per_sm=threads, grid_rule=rule).grid,
                             "equal": int(equal.sum()), "first_difference": int(np.argmin(equal)) if not equal.all()
                             else None, "next_offset": next_offset, "predicted_first": predicted[:4].tolist()}
            if device == "cuda":   # CUDA generator state: seed (8 bytes), offset (8 bytes), little-endian
                state = torch.cuda.get_rng_state().numpy()
                if state.size == 16:
                    row["offset_after"] = int(state[8:16].view(np.uint64)[0])
                else:
                    row["state_bytes"] = int(state.size)   # another layout: record it, read nothing from it
            rule_offsets = {row[rule]["next_offset"] for rule in model.GRID_RULES}
            offset = row.get("offset_after", min(rule_offsets))
            rows.append(row)
            document["matches"] = {rule: all(r[rule]["equal"] == r["n"] for r in rows) for rule in model.GRID_RULES}
            (out / "torch-grid.json").write_text(json.dumps(document, indent=1) + "\n")   # a timeout keeps the rows
            matched = [rule for rule in model.GRID_RULES if row[rule]["equal"] == n]
            print(f"torch-grid seed {seed} n {n}: matches {', '.join(matched) or 'no rule'}", flush=True)
    document["complete"] = True
    (out / "torch-grid.json").write_text(json.dumps(document, indent=1) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="the same flow on CPU stand-ins (CI)")
    parser.add_argument("--budget", type=float, help="seconds for the whole check (default 450; dry run 90)")
    parser.add_argument("--step", choices=("torch-grid",), help=argparse.SUPPRESS)   # one step, in its process
    args = parser.parse_args(argv)
    out = Path(os.environ.get("OUT") or ROOT / "gpu-out").resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.step == "torch-grid":
        return torch_grid(out, args.dry_run)
    check = Check(out, args.dry_run, args.budget or (DRY_BUDGET_S if args.dry_run else BUDGET_S))
    facts = found()
    facts["dry_run"] = args.dry_run
    (out / "found.json").write_text(json.dumps(facts, indent=1) + "\n")
    gpu = facts.get("gpu") or {}
    check.say(f"[gpu-check] {'DRY RUN on CPU stand-ins' if args.dry_run else 'GPU run'}; output in {out}")
    check.say(f"[gpu-check] GPU: {gpu.get('name', 'none')}, SMs {gpu.get('sms', '-')}, threads/SM "
              f"{gpu.get('threads_per_sm', '-')}, capability {gpu.get('capability', '-')}, CUDA {gpu.get('cuda', '-')}")
    check.say(f"[gpu-check] nvidia-smi: {facts['nvidia-smi']}")
    check.say("[gpu-check] versions: " + ", ".join(f"{k} {v}" for k, v in facts["versions"].items()))

    record = deps(out, WHEELS)
    (out / "deps.json").write_text(json.dumps(record, indent=1) + "\n")
    check.steps.append({"step": "deps", "status": "ok" if "error" not in record and record.get("pip_rc", 0) == 0
                        else "failed", "rc": record.get("pip_rc", 0), "seconds": 0.0,
                        "command": f"pip install --no-index --find-links {WHEELS} (missing: {record['missing']})"})
    check.say(f"[gpu-check] deps: missing {record['missing'] or 'none'}; installed {record.get('installed')}")
    if record.get("target"):
        check.env["PYTHONPATH"] = os.pathsep.join([record["target"], check.env["PYTHONPATH"]])

    python = sys.executable
    check.step("torch-grid", [python, str(Path(__file__).resolve()), "--step", "torch-grid",
                              *(["--dry-run"] if args.dry_run else [])], limit=20 if args.dry_run else 90,
               outputs=(out / "torch-grid.json",))
    documents = []
    for name, gpu_spec, cpu_spec in BACKENDS:
        spec = cpu_spec if args.dry_run else gpu_spec
        document = out / f"run-{name}.json"
        limit = 20 if args.dry_run else RUN_LIMIT_S
        deadline = max(5, int(min(limit, check.left() - 5) * 0.8))   # a document with not-run cases, not a kill
        command = [python, "-m", "rngcheck", "run", "--backend", spec, "--profile", "quick", "--json", str(document),
                   "--quiet", "--timeout", "60", "--deadline", str(deadline)]
        if args.dry_run:
            command += ["-k", DRY_CASES]
        record = check.step(f"run {name} ({spec})", command, limit=limit, outputs=(document,))
        if document.is_file():
            documents.append(str(document))
            record["result"] = result_of(document)
            check.say(f"[gpu-check] {name}: {record['result']}")

    if documents:
        check.step("report", [python, "-m", "rngcheck", "report", *documents, "--html", str(out / "report.html"),
                              "--summary", str(out / "report.md")], limit=30, outputs=(out / "report.html",))
    else:
        check.steps.append({"step": "report", "status": "skipped", "reason": "no result document", "rc": None,
                            "seconds": 0.0, "command": ""})
    check.finish(facts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
