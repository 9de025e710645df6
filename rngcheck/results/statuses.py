"""The one list of statuses a result can have, and what each means. Everything else imports it.

A case's status on one backend:
  passed    every check held
  failed    a check did not hold (wrong words, state, guards, contract)
  error     the backend raised, or broke the exec protocol (or rngcheck itself failed: diagnosed so)
  crashed   the backend's process died during the call
  timeout   the backend did not answer in time; its process was ended
  info      implementation-defined, or a non-validating backend's answer to an invalid description
  skipped   not applicable to this backend
  not-run   the backend stopped answering (too many fresh workers in a row hung or died) or the
            run's --deadline came first; the reason is the message

A result is a failure of the run only when it is required and broken (see ``effective``).
Comparing runs adds two labels that are never a result's own status:
  xfail     a failure an expected-failures file names (with its reason)
  xpass     a case an expected-failures file names that passed ("unexpected pass")
"""

from __future__ import annotations

PASSED, FAILED, ERROR, CRASHED, TIMEOUT, INFO, SKIPPED, NOT_RUN = (
    "passed", "failed", "error", "crashed", "timeout", "info", "skipped", "not-run")
STATUSES = (PASSED, FAILED, ERROR, CRASHED, TIMEOUT, INFO, SKIPPED, NOT_RUN)
BROKEN = (FAILED, ERROR, CRASHED, TIMEOUT, NOT_RUN)
XFAIL, XPASS = "xfail", "xpass"


def effective(status: object, required: object) -> str:
    """The status a result counts as: a broken result that is not required (implementation-defined,
    a non-validating backend) is info; an unknown status is error."""
    known = status if isinstance(status, str) and status in STATUSES else ERROR
    if known in BROKEN and required is False:
        return INFO
    return known


def is_failure(status: object, required: object) -> bool:
    """Whether the result fails the run: required and broken."""
    return bool(required) and status in BROKEN
