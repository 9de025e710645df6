"""The huge profile itself catches and names the two wrap classes (issue 29), at their real sizes.

Each test writes and checks a tensor of 5 to 8 GiB (about a minute each on 2 cores), so it runs
where the machine is given to it: in CI (CI=true, the test command on CI's 24 GiB machine, where it
may not skip) or with RNGCHECK_HUGE=1; elsewhere the whole suite's run skips it.
"""

from __future__ import annotations

import os

import pytest

from panel import WRAPS
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.results.statuses import FAILED
from rngcheck.results.verdicts import FAIL

ENABLED = os.environ.get("RNGCHECK_HUGE") == "1" or os.environ.get("CI") == "true"
# Under pytest-xdist (the test command's -n 2) both run on one worker, one after the other: two 8 GiB
# tensors at once would not fit CI's 24 GiB.
pytestmark = pytest.mark.xdist_group("huge-profile")


@pytest.fixture(autouse=True)
def _huge_machine():
    if not ENABLED:
        pytest.skip("the huge profile writes 5-8 GiB tensors: set RNGCHECK_HUGE=1 on a machine given to it")


@pytest.mark.parametrize("name, make, expected, case, phrase", WRAPS, ids=[w[0] for w in WRAPS])
def test_the_huge_profile_catches_and_names_the_wrap(name, make, expected, case, phrase):
    document = run([NamedBackend(name, make())], RunOptions(profile="huge", select=[case]))
    [result] = document["results"]
    assert result["status"] == FAILED, result["message"]
    assert result["diagnosis"]["id"] == expected, result["message"]
    assert phrase in result["diagnosis"]["summary"], result["diagnosis"]["summary"]
    assert result["mismatch_count"] > 0 and result["reproduce"]
    assert document["summary"]["verdict"] == FAIL
