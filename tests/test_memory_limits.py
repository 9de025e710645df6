"""A case that cannot fit this process's memory is skipped with the limit named, never an error blamed
on the backend or rngcheck (hardening round 4, item 4): the limits that apply are read
(rngcheck.sharedmem.memory_limits: MemAvailable, the address-space limit, the control group's)."""

from __future__ import annotations

import json
import subprocess
import sys

from rngcheck import sharedmem

LIMIT_KIB = 6_000_000   # ulimit -v: about 5.7 GiB of address space


def limited(*args, timeout=600):
    command = " ".join(["ulimit -v", str(LIMIT_KIB), ";", "exec", sys.executable, "-m", "rngcheck", *args])
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=timeout)


def test_the_address_space_limit_is_read_and_named():
    done = subprocess.run(["bash", "-c", f"ulimit -v {LIMIT_KIB}; exec {sys.executable} -c "
                           "'from rngcheck import sharedmem; print(sharedmem.memory_limits()); "
                           "print(sharedmem.shortfall(8 << 30))'"], capture_output=True, text=True)
    assert "RLIMIT_AS" in done.stdout and "(RLIMIT_AS)" in done.stdout.splitlines()[1]
    assert sharedmem.shortfall(1) is None


def test_huge_cases_under_an_address_space_limit_are_skipped_naming_it(tmp_path):
    target = tmp_path / "r.json"
    done = limited("run", "--profile", "huge", "--backend", "numpy", "--case", "scale/huge*", "--json", str(target))
    results = json.loads(target.read_text())["results"]
    assert results and {r["status"] for r in results} == {"skipped"}, done.stdout
    assert all("RLIMIT_AS" in r["message"] for r in results)
    assert done.returncode == 5 and "internal error" not in done.stdout


def test_a_numbers_repro_at_its_maximum_is_skipped_not_blamed_on_the_backend(tmp_path):
    done = limited("repro", "--backend", "numpy", "--state", "0,0,0,0,1,2", "--kind", "uniform", "--dtype",
                   "float64", "--count", "268435456")
    assert done.returncode == 5, done.stdout + done.stderr
    assert "skipped" in done.stdout and "RLIMIT_AS" in done.stdout
    assert "backend raised" not in done.stdout and "MemoryError" not in done.stdout + done.stderr


def test_an_rng_bit_generator_repro_past_the_limit_is_skipped(tmp_path):
    done = limited("repro", "--backend", "numpy", "--state", "1,2,3", "--algorithm", "PHILOX", "--sizes",
                   "536870912", "--dtype", "uint64")
    assert done.returncode == 5, done.stdout + done.stderr
    assert "RLIMIT_AS" in done.stdout and "backend raised" not in done.stdout
