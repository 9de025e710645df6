"""What a check says of one case, and how it stops: the Outcome (a Verdict with the call it was made
on), CaseFailed (the first failed expectation) and BackendRaised (the backend's own exception).
Every axis's check uses them; rngcheck.conformance.judging turns whatever a check raises into an Outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import sharedmem
from ..errors import BackendProcessFailed, BackendStopped, NotApplicable, NotRunHere, Rejected, one_line
from ..results.records import Verdict


@dataclass
class Outcome(Verdict):
    """The verdict (rngcheck.results.records.Verdict: status, message, diagnosis, mismatches, ...)."""

    # The backend's call the verdict was made on (EXECUTE cases): what ``rngcheck repro`` shows
    # beside the expectation (rngcheck.conformance.directml.comparison). Never in the result document.
    execution: Any = field(default=None, repr=False, compare=False)   # rngcheck.conformance.directml.check.Execution
    # A numbers case: the numbers the backend drew and the expectation, as held per
    # rngcheck.numbers.floats rule 1 (``rngcheck repro`` shows them). Never in the result document.
    values: tuple | None = field(default=None, repr=False, compare=False)
    # The call that reruns this outcome (a rngcheck.conformance.case.Case): the case itself unless the
    # check found a smaller one (a property case's shrunk description). Never in the result document;
    # rngcheck.conformance.judging writes its reproduction and repro arguments into the verdict.
    reproduced_by: Any = field(default=None, repr=False, compare=False)


class BackendRaised(Exception):
    """The backend's own exception (other than Rejected), kept apart from rngcheck's own bugs."""

    def __init__(self, error: BaseException):
        super().__init__(one_line(error))
        self.error = error


# What a backend call lets through as it is: the description refused, not applicable, and the end of a
# backend process (crash, hang, protocol break: their own outcomes). Anything else it raises is its own.
PASSED_THROUGH = (Rejected, NotApplicable, BackendProcessFailed, BackendStopped)


def call_backend(backend, method: str, *args, **kwargs):
    """``backend.method(*args, **kwargs)``, one of the contract's methods: what PASSED_THROUGH names
    passes through, a MemoryError in this process is the machine's (NotRunHere: skipped), any other
    exception (a missing method's included) becomes BackendRaised."""
    try:
        return getattr(backend, method)(*args, **kwargs)
    except PASSED_THROUGH:
        raise
    except MemoryError:   # in this process: the machine's limit, not the backend's answer
        raise NotRunHere(f"not run on this machine: {method} ran out of memory in rngcheck's process "
                         f"(rngcheck.sharedmem.memory_limits: {sharedmem.memory_limits()})") from None
    except Exception as error:
        raise BackendRaised(error) from error


class CaseFailed(Exception):
    """Raised inside a check to stop at the first failed expectation."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome.message)
        self.outcome = outcome
