"""pytest plugin: ``pytest --pyargs rngcheck.conformance --rngcheck-backend NAME``.

Inert unless --rngcheck-backend is given: it adds its options and nothing else. With a
backend, the test module rngcheck/conformance/test_conformance.py gets one test per case.
"""

from __future__ import annotations

import pytest

from ..backends.hosting import seconds_argument


def pytest_addoption(parser):
    group = parser.getgroup("rngcheck", "rngcheck conformance suite")
    group.addoption("--rngcheck-backend", action="append", default=[], metavar="NAME",
                    help="backend to test (registered name, module:attr or file.py:attr); repeatable")
    group.addoption("--rngcheck-profile", default="quick", choices=["quick", "full", "strict"],
                    help="conformance profile (default quick)")
    group.addoption("--rngcheck-seed", type=int, default=0, help="seed of the suite's random choices")
    group.addoption("--rngcheck-timeout", type=seconds_argument, default=120.0, metavar="SECONDS",
                    help="time limit of one backend call; a hung backend is ended (default 120)")




def pytest_configure(config):
    """Load the backends before collection: a bad spec is one usage line, not a collection error."""
    for spec in config.getoption("--rngcheck-backend", default=[]) or []:
        _load(spec, config.getoption("--rngcheck-timeout", default=120.0))


def pytest_generate_tests(metafunc):
    if "rngcheck_case" not in metafunc.fixturenames:
        return
    specs = metafunc.config.getoption("--rngcheck-backend")
    if not specs:
        return
    from .runner import RunOptions, select_cases

    cases = select_cases(RunOptions(profile=metafunc.config.getoption("--rngcheck-profile")))
    params = [(spec, case) for spec in specs for case in cases]
    metafunc.parametrize("rngcheck_backend_spec, rngcheck_case", params,
                         ids=[f"{spec}:{case.id}" for spec, case in params])


_LOADED = {}


def _load(spec, timeout: float = 120.0):
    """The backend, hosted as ``rngcheck run`` hosts it: the reference in-process, others in a worker."""
    from ..backends.hosting import hosted
    from ..errors import RngcheckError

    if spec not in _LOADED:
        try:
            _LOADED[spec] = hosted(spec, timeout=timeout)
        except RngcheckError as error:
            raise pytest.UsageError(f"--rngcheck-backend {spec}: {' '.join(str(error).split())}") from None
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
