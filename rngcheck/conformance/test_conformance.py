"""The conformance suite as pytest tests (collected only with --rngcheck-backend; see pytest_plugin)."""

import pytest

from rngcheck.conformance import check, runner
from rngcheck.results.document import repro_command




def test_case(request, rngcheck_backend, rngcheck_case):
    seed = request.config.getoption("--rngcheck-seed")
    strict = request.config.getoption("--rngcheck-profile") == "strict"
    outcome = check.run_case(rngcheck_backend, rngcheck_case, strict=strict, seed=seed)
    required = runner.is_required(rngcheck_backend, rngcheck_case)
    if outcome.status == check.SKIPPED:
        pytest.skip(outcome.message)
    if required and outcome.status in check.BROKEN:
        lines = [outcome.message]
        if outcome.diagnosis:
            lines.append(f"diagnosis: {outcome.diagnosis['id']}: {outcome.diagnosis['summary']}")
        lines += [f"element {m['index']} {m['coordinates']} at offset {m['offset']}: expected {m['expected']}, "
                  f"got {m['actual']} (counter {m['philox_counter']}, lane {m['lane']})" for m in outcome.mismatches]
        command = repro_command(request.node.callspec.params["rngcheck_backend_spec"], outcome.reproduce)
        if command:
            lines.append(f"reproduce: {command}")
        pytest.fail("\n".join(lines), pytrace=False)


NO_BACKEND = ("rngcheck.conformance needs a backend: pytest --pyargs rngcheck.conformance "
              "--rngcheck-backend NAME")


@pytest.fixture
def rngcheck_case():
    pytest.fail(NO_BACKEND, pytrace=False)


@pytest.fixture
def rngcheck_backend_spec():
    pytest.fail(NO_BACKEND, pytrace=False)
