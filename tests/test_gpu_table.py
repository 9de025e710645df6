"""scripts/gpu_table.py (issue 41): the README's GPU table comes from the kept GPU measurements only.

The measurement folders here are written by the tests into tmp_path from small hand-written documents
shaped like a real ``bash scripts/gpu-check.sh --dry-run``'s outputs (summary.json, found.json, run-<name>.json,
torch-grid.json); no run's outputs are committed under docs/measurements/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import gpu_table  # noqa: E402

SPEC = "jax:platform=cpu"


def result(case: str, status: str, diagnosis: str | None = None, backend: str = SPEC) -> dict:
    return {"backend": backend, "case": case, "status": status, "required": True, "seconds": 0.002,
            "message": "", "diagnosis": {"id": diagnosis, "summary": "", "alternatives": []} if diagnosis else None,
            "mismatches": [], "mismatch_count": 0, "observations": [], "output_sha256": None,
            "returned_state": None, "reproduce": None, "reproduce_command": None, "detail": "", "numbers": None}


def run_document(spec: str, results: list[dict]) -> dict:
    failed = sum(r["status"] == "failed" for r in results)
    counts = {"passed": sum(r["status"] == "passed" for r in results), "failed": failed,
              "n/a": sum(r["status"] == "n/a" for r in results)}
    verdict = "fail" if failed else "pass"
    return {"schema": "rngcheck-result", "schema_version": 2, "created": "2026-11-29T01:10:07+00:00",
            "command": ["run", "--backend", spec], "profile": "quick", "seed": 0, "select": [],
            "keyword": "kat or generator or property-repeat", "complete": True,
            "cases": [{"id": r["case"], "category": r["case"].split("/")[0]} for r in results],
            "backends": [{"name": spec, "spec": spec, "validates": False,
                          "describe": {"device": "cpu: cpu", "version": "jax 0.10.2"}, "summary": counts,
                          "verdict": verdict}],
            "results": results, "summary": {"verdict": verdict, "counts": counts, "required_failed": failed}}


def grid_document(equal_block: bool) -> dict:
    rows = []
    for n in (1000, 65536):
        rows.append({"seed": 0, "n": n, "offset_before": 0, "sms": 132, "first": [0.5],
                     "block": {"grid": 4, "equal": n if equal_block else 0, "first_difference": None,
                               "next_offset": 4, "predicted_first": [0.5]},
                     "block_unroll": {"grid": 1, "equal": 0, "first_difference": 0, "next_offset": 4,
                                      "predicted_first": [0.4]}})
    return {"schema": "rngcheck-torch-grid/1", "device": "cpu", "device_name": "cpu", "torch": "2.13.0+cpu",
            "sms": 132, "threads_per_sm": 2048, "stand_in": "torch's CPU generator", "rows": rows, "complete": True,
            "matches": {"block": equal_block, "block_unroll": False}}


def kept_run(root: Path, name: str, runs: dict[str, dict], dry_run: bool = True, equal_block: bool = False,
             gpu: dict | None = None) -> Path:
    """A measurement folder like gpu-check's $OUT: runs maps a result name to its document."""
    folder = root / name
    folder.mkdir(parents=True)
    found = {"python": "3.11.7", "platform": "linux", "versions": {"jax": "0.10.2"},
             "nvidia-smi": "NVIDIA H200, 570.86.15, 143771 MiB, 9.0" if gpu else "not found (no NVIDIA driver)",
             "gpu": gpu, "dry_run": dry_run}
    steps: list[dict] = [{"step": "deps", "status": "ok", "rc": 0, "seconds": 0.0, "command": "pip install"},
                         {"step": "torch-grid", "command": "python3 scripts/gpu_check.py --step torch-grid",
                          "limit_s": 20, "rc": 0, "seconds": 1.6, "status": "ok", "tail": ""}]
    for result_name, document in runs.items():
        spec = document["backends"][0]["spec"]
        verdict = document["backends"][0]["verdict"]
        steps.append({"step": f"run {result_name} ({spec})", "command": f"python3 -m rngcheck run --backend {spec}",
                      "limit_s": 20, "rc": int(verdict == "fail"), "seconds": 2.0,
                      "status": "findings" if verdict == "fail" else "ok", "tail": ""})
        (folder / f"run-{result_name}.json").write_text(json.dumps(document))
    steps.append({"step": "report", "command": "python3 -m rngcheck report", "limit_s": 30, "rc": 0, "seconds": 1.7,
                  "status": "ok", "tail": ""})
    summary = {"schema": "rngcheck-gpu-check/1", "dry_run": dry_run, "budget_s": 90, "seconds": 22.3, "found": found,
               "steps": steps, "measured_on_gpu": not dry_run and bool(gpu),
               "outputs": sorted(["found.json", "torch-grid.json", *(f"run-{n}.json" for n in runs)])}
    (folder / "summary.json").write_text(json.dumps(summary))
    (folder / "found.json").write_text(json.dumps(found))
    (folder / "torch-grid.json").write_text(json.dumps(grid_document(equal_block)))
    return folder


def generated(capsys, *argv: str) -> tuple[int, str, str]:
    code = gpu_table.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_readmes_and_the_pages_blocks_are_the_generated_ones():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_table.py"), "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    _, body, _ = gpu_table.block(gpu_table.TABLE_PAGE)
    assert body == f"\n{gpu_table.table(gpu_table.MEASUREMENTS)}\n"
    _, body, _ = gpu_table.block(gpu_table.README)
    assert body == f"\n{gpu_table.summary(gpu_table.MEASUREMENTS)}\n"


def _pages(tmp_path, body="| stale | row |"):
    readme, page = tmp_path / "README.md", tmp_path / "gpu.md"
    for path in (readme, page):
        path.write_text(f"# x\n\n{gpu_table.START}\n{body}\n{gpu_table.END}\nafter\n")
    return readme, page


def test_check_fails_on_a_stale_block_and_write_mends_both(tmp_path, capsys):
    readme, page = _pages(tmp_path)
    empty = tmp_path / "measurements"
    where = ("--readme", str(readme), "--table-page", str(page), "--measurements", str(empty))
    code, _, err = generated(capsys, "--check", *where)
    assert code == 1 and "differs" in err and len(err.strip().splitlines()) == 1
    assert generated(capsys, "--write", *where)[0] == 0
    assert readme.read_text() == f"# x\n\n{gpu_table.START}\n{gpu_table.NOTHING_KEPT}\n{gpu_table.END}\nafter\n"
    assert page.read_text() == f"# x\n\n{gpu_table.START}\n{gpu_table.NOTHING_KEPT_HERE}\n{gpu_table.END}\nafter\n"
    assert generated(capsys, "--check", *where)[0] == 0
    page.write_text(page.read_text().replace(gpu_table.NOTHING_KEPT_HERE, "| a | stale | row |"))
    code, _, err = generated(capsys, "--check", *where)
    assert code == 1 and str(page) in err and str(readme) not in err


def test_the_readme_has_a_line_per_kept_run_and_the_page_the_table(tmp_path, capsys):
    root = tmp_path / "measurements"
    good = run_document("triton:device=gpu", [result("kat/a", "passed", backend="triton:device=gpu")])
    bad = run_document("jax:platform=gpu", [result("kat/b", "failed", "state-carry-64-bit", "jax:platform=gpu")])
    gpu = {"name": "NVIDIA H200", "sms": 132}
    kept_run(root, "2026-12-01-h200", {"jax": bad, "triton": good}, dry_run=False, equal_block=True, gpu=gpu)
    kept_run(root, "2026-12-02-h200", {"triton": good}, dry_run=False, gpu=gpu)
    readme, page = _pages(tmp_path)
    where = ("--readme", str(readme), "--table-page", str(page), "--measurements", str(root))
    assert generated(capsys, "--write", *where)[0] == 0
    _, lines, _ = gpu_table.block(readme)
    lines = lines.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("- NVIDIA H200, 132 SMs") and ", 2026-12-01: " in lines[0]
    assert "1 of 2 GPU paths conformant; 1 with named differences; PyTorch grid model matched torch.rand" in lines[0]
    assert "1 of 1 GPU paths conformant; PyTorch grid model differed from torch.rand" in lines[1]
    assert all(line.endswith("([table](docs/gpu.md#measured-on-gpus))") for line in lines)
    _, table, _ = gpu_table.block(page)
    assert table.strip().splitlines()[:2] == list(gpu_table.HEADER) and len(table.strip().splitlines()) == 2 + 5


def test_a_dry_run_is_refused_by_default_and_shown_with_include_dry_run(tmp_path, capsys):
    root = tmp_path / "measurements"
    kept_run(root, "2026-11-29-dry", {"jax": run_document(SPEC, [result("kat/a", "passed")])})
    code, out, _ = generated(capsys, "--measurements", str(root))
    assert code == 0 and out.strip() == gpu_table.NOTHING_KEPT_HERE and "dry run" not in out
    code, out, _ = generated(capsys, "--measurements", str(root), "--include-dry-run")
    lines = out.strip().splitlines()
    assert code == 0 and lines[:2] == list(gpu_table.HEADER) and len(lines) == 4   # the grid row and jax's
    assert all(line.startswith("| CPU stand-in (dry run) | 2026-11-29 | ") for line in lines[2:])
    readme = tmp_path / "README.md"
    readme.write_text(f"{gpu_table.START}\n{gpu_table.END}\n")
    try:
        gpu_table.main(["--write", "--include-dry-run", "--readme", str(readme), "--table-page", str(readme),
                        "--measurements", str(root)])
    except SystemExit as stop:
        assert stop.code == 2
    else:
        raise AssertionError("--write --include-dry-run must be refused")
    assert readme.read_text() == f"{gpu_table.START}\n{gpu_table.END}\n"


def test_measured_on_gpu_false_is_refused_even_without_dry_run(tmp_path, capsys):
    root = tmp_path / "measurements"
    kept_run(root, "2026-11-29-nogpu", {"jax": run_document(SPEC, [result("kat/a", "passed")])}, dry_run=False)
    assert generated(capsys, "--measurements", str(root))[1].strip() == gpu_table.NOTHING_KEPT_HERE


def test_a_gpu_run_shows_device_date_differences_and_conformance(tmp_path, capsys):
    root = tmp_path / "measurements"
    failing = run_document("jax:platform=gpu", [result("kat/a", "passed", backend="jax:platform=gpu"),
                                                result("kat/b", "failed", "state-carry-64-bit", "jax:platform=gpu"),
                                                result("kat/c", "failed", "state-carry-64-bit", "jax:platform=gpu"),
                                                result("kat/d", "failed", "key-as-counter-high", "jax:platform=gpu")])
    good = run_document("triton:device=gpu", [result("kat/a", "passed", backend="triton:device=gpu"),
                                              result("kat/b", "n/a", backend="triton:device=gpu")])
    gpu = {"name": "NVIDIA H200", "sms": 132, "threads_per_sm": 2048, "capability": "9.0", "cuda": "12.8"}
    kept_run(root, "2026-12-01-h200", {"jax": failing, "triton": good}, dry_run=False, equal_block=True, gpu=gpu)
    code, out, _ = generated(capsys, "--measurements", str(root))
    rows = {line.split(" | ")[2]: line for line in out.strip().splitlines()[2:]}
    assert code == 0
    assert all(line.startswith("| NVIDIA H200, 132 SMs, driver 570.86.15 | 2026-12-01 | ") for line in rows.values())
    assert "3 failing: key-as-counter-high; state-carry-64-bit ×2 (1 passed)" in rows["jax:platform=gpu"]
    assert "conformant" not in rows["jax:platform=gpu"]
    assert "| conformant (1 passed) |" in rows["triton:device=gpu"]
    assert "rngcheck run --backend triton:device=gpu --profile quick" in rows["triton:device=gpu"]
    grid = next(line for path, line in rows.items() if path.startswith("PyTorch CUDA grid"))
    assert "model matched torch.rand at 2 sizes (grid rule block)" in grid


def test_a_step_that_did_not_run_says_so_and_a_grid_mismatch_names_its_sizes(tmp_path, capsys):
    root = tmp_path / "measurements"
    nothing = run_document("curand:device=gpu", [result("kat/a", "n/a", backend="curand:device=gpu")])
    nothing["backends"][0]["verdict"] = nothing["summary"]["verdict"] = "nothing-ran"
    folder = kept_run(root, "2026-12-01-h200", {"curand": nothing}, dry_run=False,
                      gpu={"name": "NVIDIA H200", "sms": 132})
    summary = json.loads((folder / "summary.json").read_text())
    summary["steps"].append({"step": "run numba (numba:mode=cuda)", "command": "x", "limit_s": 65, "rc": None,
                             "seconds": 65.0, "status": "timeout", "tail": ""})
    (folder / "summary.json").write_text(json.dumps(summary))
    out = generated(capsys, "--measurements", str(root))[1]
    assert "| numba:mode=cuda | failed to run: timeout | bash scripts/gpu-check.sh |" in out
    assert "| curand:device=gpu | not conformant: verdict nothing-ran (0 passed) |" in out
    assert "grid rule block at n = 1000, 65536; grid rule block_unroll at n = 1000, 65536" in out


def test_text_from_a_backend_is_escaped(tmp_path, capsys):
    root = tmp_path / "measurements"
    spec = "evil|spec`<script>alert(1)</script>\n| forged | row |"
    kept_run(root, "2026-12-01-h200", {"evil": run_document(spec, [result("kat/a", "passed", backend=spec)])},
             dry_run=False, gpu={"name": "GPU<b>|x</b>", "sms": 1})
    out = generated(capsys, "--measurements", str(root))[1]
    lines = out.strip().splitlines()
    assert len(lines) == 4                                  # header, rule, grid row, the backend's row: no forged row
    row = lines[3]
    assert "<script>" not in out and "<b>" not in out and "\n| forged" not in out
    assert "&lt;script&gt;" in row and "evil\\|spec\\`" in row and "GPU&lt;b&gt;\\|x" in row
    assert row.replace("\\|", "").count("|") == 6           # five cells: six unescaped pipes


def test_a_malformed_summary_is_one_line_naming_the_file_and_exit_2(tmp_path):
    root = tmp_path / "measurements"
    folder = kept_run(root, "2026-12-01-h200", {}, dry_run=False, gpu={"name": "NVIDIA H200", "sms": 132})
    (folder / "summary.json").write_text('{"schema": "rngcheck-gpu-check/1", "dry_run": fal')
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_table.py"), "--measurements", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert str(folder / "summary.json") in done.stderr and "not JSON" in done.stderr


def test_a_missing_run_document_and_a_wrong_field_are_named(tmp_path, capsys):
    root = tmp_path / "measurements"
    folder = kept_run(root, "2026-12-01-h200", {"jax": run_document(SPEC, [result("kat/a", "passed")])},
                      dry_run=False, gpu={"name": "NVIDIA H200", "sms": 132})
    (folder / "run-jax.json").unlink()
    code, out, err = generated(capsys, "--measurements", str(root))
    assert code == 2 and out == "" and f"{folder / 'run-jax.json'}: missing" in err
    summary = json.loads((folder / "summary.json").read_text())
    summary["dry_run"] = "no"
    (folder / "summary.json").write_text(json.dumps(summary))
    code, _, err = generated(capsys, "--measurements", str(root))
    assert code == 2 and "summary.json: 'dry_run' is missing or not bool" in err
