"""The judging chain: whatever a check raises, or the backend it calls does, becomes one Outcome.

Every axis's case is judged here (rngcheck.conformance.axes.run_case dispatches to the axis's
procedure). In order:

1. The procedure's own outcome, or the first failed expectation it raised (CaseFailed).
2. A refusal (Rejected) of a valid call: failed, diagnosed as the case says (``Case.refused``).
3. Not applicable (the backend does not implement what the case asks): n/a, with why; a case that
   applies but cannot run here (NotRunHere: the memory) is skipped, with why.
4. The backend's own exception (BackendRaised): error, with the last frames of its traceback.
5. A backend process that crashed, hung, stopped or broke the exec protocol: crashed, timeout,
   not-run, error.
6. Anything else is a bug in rngcheck itself: error, said so, and the run goes on.
   Before any of it: a case whose check would hold more memory than this process can allocate
   (Case.memory_needed against rngcheck.sharedmem's limits: MemAvailable, the address-space limit,
   the control group's) is skipped with the limit named, and so is a call that runs out of memory in
   this process (a MemoryError through call_backend): the machine's, not the backend's, fault.
7. A broken outcome records the call that reruns it (``Outcome.reproduced_by``, else the case):
   the document's ``reproduce`` and the ``rngcheck repro`` arguments of its command line.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable

from .. import sharedmem
from ..errors import (
    BackendCrashed,
    BackendProtocolError,
    BackendStopped,
    BackendTimeout,
    NotApplicable,
    NotRunHere,
    Rejected,
    one_line,
)
from ..results.statuses import BROKEN, CRASHED, ERROR, FAILED, NOT_APPLICABLE, NOT_RUN, SKIPPED, TIMEOUT
from .case import Case
from .checks import named
from .outcome import BackendRaised, CaseFailed, Outcome

MEMORY_MARGIN = 256 << 20   # bytes kept free beside what a case's check holds (Case.memory_needed)


def judged(case: Case, procedure: Callable[[], Outcome]) -> Outcome:
    """``procedure()``'s outcome for ``case`` (rules 1-7), whatever the backend it calls does."""
    try:
        fits(case)
        outcome = procedure()
    except CaseFailed as failed:
        outcome = failed.outcome
    except Rejected as error:
        outcome = _rejected_valid(case, error)
    except NotApplicable as error:
        outcome = Outcome(NOT_APPLICABLE, f"not applicable: {' '.join(str(error).split())}")
    except NotRunHere as error:
        outcome = Outcome(SKIPPED, f"skipped: {' '.join(str(error).split())}")
    except BackendRaised as raised:
        outcome = Outcome(ERROR, f"backend raised {raised}",
                          detail="".join(traceback.format_exception(raised.error)[-6:]))
    except BackendCrashed as crash:
        outcome = Outcome(CRASHED, f"backend crashed: {crash}", detail=crash.stderr_tail,
                          diagnosis=named("crashed"))
    except BackendTimeout as hang:
        outcome = Outcome(TIMEOUT, f"backend hung: {hang}", detail=hang.stderr_tail,
                          diagnosis=named("timeout"))
    except BackendStopped as stopped:
        outcome = Outcome(NOT_RUN, f"not run: {stopped}",
                          diagnosis=named("stopped"))
    except BackendProtocolError as broken:
        outcome = Outcome(ERROR, f"backend broke the exec protocol: {broken}", detail=broken.stderr_tail,
                          diagnosis=named("protocol"))
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:  # a bug in rngcheck itself: say so, keep going
        outcome = Outcome(ERROR, f"internal error in rngcheck (not the backend's fault): {one_line(error)}",
                          diagnosis=named("rngcheck-internal-error"),
                          detail="".join(traceback.format_exception(error)[-8:]))
    return reproduced(case, outcome)


def fits(case: Case) -> None:
    """NotRunHere when the case's check does not fit this process's memory now (rule 6)."""
    needed = case.memory_needed()
    why = sharedmem.shortfall(needed, MEMORY_MARGIN) if needed else None
    if why is not None:
        raise NotRunHere(f"not run on this machine: {why}")


def reproduced(case: Case, outcome: Outcome) -> Outcome:
    """Rule 7: a broken outcome's reproduction, from the call that reruns it."""
    if outcome.status in BROKEN and outcome.reproduce is None:
        call = outcome.reproduced_by if outcome.reproduced_by is not None else case
        outcome.reproduce = call.reproduction()
        outcome.repro_arguments = call.repro_arguments() if outcome.reproduce is not None else None
    return outcome


def _rejected_valid(case: Case, error: Rejected) -> Outcome:
    id_, summary = case.refused()
    return Outcome(FAILED, f"rejected a valid description: {one_line(error)}", diagnosis=named(id_, summary))
