"""The conformance suite as pytest tests (collected only with --rngcheck-backend; see pytest_plugin).

A case's outcome is said as ``rngcheck run`` says it (rngcheck.results.text): a failure's text
is the JUnit failure text of the same result, and the result's properties (status, diagnosis,
first mismatch, reproduce command) go to the test's ``user_properties``, which
``pytest --junitxml`` writes as the test case's ``<property>`` elements. An outcome that does
not fail the test (info: implementation-defined, or a non-validating backend's answer) is a
report section, "Captured rngcheck call" (``pytest -rP`` shows it).
"""

import pytest

from rngcheck.conformance import axes, runner
from rngcheck.results import document as D
from rngcheck.results.statuses import NOT_APPLICABLE, PASSED, SKIPPED
from rngcheck.results.text import failure_lines, printable, properties


def test_case(request, rngcheck_backend, rngcheck_backend_spec, rngcheck_case):
    seed = request.config.getoption("--rngcheck-seed")
    strict = request.config.getoption("--rngcheck-profile") == "strict"
    outcome = axes.run_case(rngcheck_backend, rngcheck_case, strict=strict, seed=seed)
    required = runner.is_required(rngcheck_backend, rngcheck_case)
    result = D.result_entry(rngcheck_backend_spec, rngcheck_case, outcome, required, 0.0, rngcheck_backend_spec)
    request.node.user_properties.extend(properties(result))
    if outcome.status in (NOT_APPLICABLE, SKIPPED):   # the reason says which: "not applicable: ...", "skipped: ..."
        pytest.skip(outcome.message)
    said = "\n".join(map(printable, failure_lines(result, D.case_entry(rngcheck_case))))
    if D.is_failure(result):
        pytest.fail(said, pytrace=False)
    if outcome.status != PASSED:   # info: the test passes; -rP shows what was found
        request.node.add_report_section("call", "rngcheck", said)


NO_BACKEND = ("rngcheck.conformance needs a backend: pytest --pyargs rngcheck.conformance "
              "--rngcheck-backend NAME")


@pytest.fixture
def rngcheck_case():
    pytest.fail(NO_BACKEND, pytrace=False)


@pytest.fixture
def rngcheck_backend_spec():
    pytest.fail(NO_BACKEND, pytrace=False)
