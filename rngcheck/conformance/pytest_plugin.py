"""pytest plugin: ``pytest --pyargs rngcheck.conformance --rngcheck-backend NAME``.

Inert unless --rngcheck-backend is given: it adds its options and nothing else. With a
backend, the test module rngcheck/conformance/test_conformance.py gets one test per case, the
report header names each backend with its ``describe()`` (and the profile and seed), and a
``--junitxml`` file carries each backend's ``describe()`` as global properties and each case's
outcome as the test case's properties (rngcheck.results.text.properties). The loaded backends
live on ``config.stash`` for the session and are closed at its end.
"""

from __future__ import annotations

import pytest

from ..backends.hosting import seconds_argument

BACKENDS = pytest.StashKey[dict]()    # spec -> the hosted backend, for one session
DESCRIBED = pytest.StashKey[dict]()   # spec -> its describe() (rngcheck.conformance.runner.safe_describe)


def pytest_addoption(parser):
    group = parser.getgroup("rngcheck", "rngcheck conformance suite")
    group.addoption("--rngcheck-backend", action="append", default=[], metavar="NAME",
                    help="backend to test (registered name, module:attr or file.py:attr); repeatable")
    group.addoption("--rngcheck-profile", default="quick", choices=["quick", "full", "strict", "huge"],
                    help="conformance profile (default quick)")
    group.addoption("--rngcheck-seed", type=int, default=0, help="seed of the suite's random choices")
    group.addoption("--rngcheck-timeout", type=seconds_argument, default=120.0, metavar="SECONDS",
                    help="time limit of one backend call; a hung backend is ended (default 120)")




def pytest_configure(config):
    """Load the backends before collection: a bad spec is one usage line, not a collection error."""
    specs = config.getoption("--rngcheck-backend", default=[]) or []
    if not specs:
        return
    config.stash[BACKENDS], config.stash[DESCRIBED] = {}, {}
    for spec in specs:
        _load(config, spec)


def pytest_report_header(config):
    """The profile and seed, and each backend with its describe() (as the hypothesis plugin names its
    profile)."""
    if BACKENDS not in config.stash:
        return None
    from ..results.text import printable

    lines = [f"rngcheck: profile {config.getoption('--rngcheck-profile')}, "
             f"seed {config.getoption('--rngcheck-seed')}"]
    for spec, described in config.stash[DESCRIBED].items():
        told = ", ".join(f"{key}={value}" for key, value in described.items()) or "describe() said nothing"
        lines.append(printable(f"rngcheck backend {spec}: {told}"))
    return lines


def pytest_sessionstart(session):
    """Each backend's describe() as global properties of a --junitxml file (``rngcheck run --junit``
    gives them as its backend suite's properties)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pytest's JUnit writer moved: the report header still names the backends
        return
    xml = session.config.stash.get(xml_key, None)
    if xml is None or DESCRIBED not in session.config.stash:
        return
    for spec, described in session.config.stash[DESCRIBED].items():
        for key, value in described.items():
            xml.add_global_property(f"rngcheck.backend.{spec}.{key}", value)


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


def _load(config, spec):
    """The backend, hosted as ``rngcheck run`` hosts it: the reference in-process, others in a worker."""
    from ..backends.hosting import hosted
    from ..errors import RngcheckError
    from .runner import safe_describe

    loaded = config.stash[BACKENDS]
    if spec not in loaded:
        try:
            loaded[spec] = hosted(spec, timeout=config.getoption("--rngcheck-timeout"))
        except RngcheckError as error:
            raise pytest.UsageError(f"--rngcheck-backend {spec}: {' '.join(str(error).split())}") from None
        config.stash[DESCRIBED][spec] = safe_describe(loaded[spec])
    return loaded[spec]


def pytest_unconfigure(config):
    """Close the backends (their workers end), also after a later spec was a usage error."""
    loaded = config.stash.get(BACKENDS, {})
    while loaded:
        _, backend = loaded.popitem()
        try:
            backend.close()
        except Exception:
            pass


@pytest.fixture
def rngcheck_backend(request, rngcheck_backend_spec):
    """The backend, loaded once per session per spec."""
    return _load(request.config, rngcheck_backend_spec)
