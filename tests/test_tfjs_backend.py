"""TensorFlow.js (issue 43) behind the exec protocol (rngcheck/backends/tfjs/tfjs_exec.js) through the property
axis: its normal with seed 0 differs on every call (0 taken as "no seed") while its uniform with seed 0 repeats,
and randomUniformInt's range truncated toward zero never gives low: each caught and named. Locally a missing
node or npm install (scripts/setup.sh) skips; with CI=true it fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import unavailable
from rngcheck.backends.exec_backend import ExecBackend
from rngcheck.conformance import axes
from rngcheck.conformance.properties import cases as property_cases
from rngcheck.results.statuses import FAILED, PASSED

PROGRAM = Path(__file__).resolve().parents[1] / "rngcheck" / "backends" / "tfjs" / "tfjs_exec.js"


@pytest.fixture(scope="module")
def tfjs():
    if shutil.which("node") is None:
        unavailable("node is not installed")
    if not (PROGRAM.parent / "node_modules" / "@tensorflow" / "tfjs-core").is_dir():
        unavailable(f"tfjs is not installed: npm ci --prefix {PROGRAM.parent}")
    backend = ExecBackend(["node", str(PROGRAM)])
    yield backend
    backend.close()


def _run(backend, case_id):
    case = property_cases.by_id(case_id)
    assert case is not None
    return axes.run_case(backend, case)


def test_seed_zero_is_no_seed_for_its_normals_only(tfjs):
    normal = _run(tfjs, "properties/repeat/normal-seed-0")
    assert normal.status == FAILED and normal.diagnosis["id"] == "property-repeat"
    assert normal.diagnosis["parameters"]["seed"] == 0 and normal.diagnosis["parameters"]["index"] == 0
    assert _run(tfjs, "properties/repeat/seed-0").status == PASSED     # its uniform with seed 0 repeats


def test_random_uniform_int_never_gives_low(tfjs):
    outcome = _run(tfjs, "properties/integers/range-m5-5")
    assert outcome.status == FAILED and outcome.diagnosis["id"] == "property-range-missing"
    assert outcome.diagnosis["parameters"]["missing"] == [-5]
    assert outcome.repro_arguments == ["--property", "properties/integers/range-m5-5"]


def test_its_handshake_says_what_it_is(tfjs):
    described = tfjs.describe()
    assert described["tfjs-core"] == "4.22.0" and tfjs.conventions == ("tfjs",)
