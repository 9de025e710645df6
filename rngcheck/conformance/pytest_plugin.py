"""pytest plugin: ``pytest --pyargs rngcheck.conformance --rngcheck-backend NAME``.

Inert unless --rngcheck-backend is given: it adds its options and nothing else. With a
backend, the test module rngcheck/conformance/test_conformance.py gets one test per case.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("rngcheck", "rngcheck conformance suite")
    group.addoption("--rngcheck-backend", action="append", default=[], metavar="NAME",
                    help="backend to test (registered name, module:attr or file.py:attr); repeatable")
    group.addoption("--rngcheck-profile", default="quick", choices=["quick", "full", "strict"],
                    help="conformance profile (default quick)")
    group.addoption("--rngcheck-seed", type=int, default=0, help="seed of the suite's random choices")


def pytest_generate_tests(metafunc):
    if "rngcheck_case" not in metafunc.fixturenames:
        return
    specs = metafunc.config.getoption("--rngcheck-backend")
    if not specs:
        return
    from .runner import RunOptions, select_cases

    for spec in specs:
        _load(spec)  # a bad backend spec is one usage error, not one error per case
    cases = select_cases(RunOptions(profile=metafunc.config.getoption("--rngcheck-profile")))
    params = [(spec, case) for spec in specs for case in cases]
    metafunc.parametrize("rngcheck_backend_spec, rngcheck_case", params,
                         ids=[f"{spec}:{case.id}" for spec, case in params])


_LOADED = {}


def _load(spec):
    """The backend, hosted as ``rngcheck run`` hosts it: the reference in-process, others in a worker."""
    from ..backends.hosting import hosted
    from ..errors import RngcheckError

    if spec not in _LOADED:
        try:
            _LOADED[spec] = hosted(spec)
        except RngcheckError as error:
            raise pytest.UsageError(f"--rngcheck-backend {spec}: {error}") from None
    return _LOADED[spec]


def pytest_sessionfinish(session, exitstatus):
    while _LOADED:
        _, backend = _LOADED.popitem()
        try:
            backend.close()
        except Exception:
            pass


@pytest.fixture
def rngcheck_backend(rngcheck_backend_spec):
    """The backend, loaded once per session per spec."""
    return _load(rngcheck_backend_spec)
