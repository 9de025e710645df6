"""The one list of statuses a result can have, and what each means. Everything else imports it.

A case's status on one backend:
  passed    every check held
  failed    a check did not hold (wrong words, state, guards, contract)
  error     the backend raised, or broke the exec protocol (or rngcheck itself failed: diagnosed so)
  crashed   the backend's process died during the call
  timeout   the backend did not answer in time; its process was ended
  info      implementation-defined, or a non-validating backend's answer to an invalid description
  n/a       not applicable: the case asks for what this backend does not implement (a layer, a
            convention, a generator or round count, validation); the reason is the message. Never a
            pass and never a failure (result schema version 2; version 1 wrote "skipped" with a
            message starting "not applicable", which a reader takes as n/a)
  skipped   could have run and did not: this machine lacks the memory, say; the reason is the message
  not-run   the backend stopped answering (too many fresh workers in a row hung or died), or the
            run's --deadline or --maxfail came first; the reason is the message

What ran: a result that is neither n/a, skipped nor not-run (RAN). A backend on which nothing ran
has its own verdict (rngcheck.results.verdicts.NOTHING_RAN), never a pass.

A result is a failure of the run only when it is required and broken (see ``effective``).
Comparing runs adds two labels that are never a result's own status:
  xfail     a failure an expected-failures file names (with its reason)
  xpass     a case an expected-failures file names that passed ("unexpected pass")
"""

from __future__ import annotations

PASSED, FAILED, ERROR, CRASHED, TIMEOUT, INFO, NOT_APPLICABLE, SKIPPED, NOT_RUN = (
    "passed", "failed", "error", "crashed", "timeout", "info", "n/a", "skipped", "not-run")
STATUSES = (PASSED, FAILED, ERROR, CRASHED, TIMEOUT, INFO, NOT_APPLICABLE, SKIPPED, NOT_RUN)
BROKEN = (FAILED, ERROR, CRASHED, TIMEOUT, NOT_RUN)
RAN = (PASSED, FAILED, ERROR, CRASHED, TIMEOUT, INFO)
NOT_APPLICABLE_PREFIX = "not applicable"   # how a version 1 document's skipped n/a result begins
XFAIL, XPASS = "xfail", "xpass"


def effective(status: object, required: object) -> str:
    """The status a result counts as: a broken result that is not required (implementation-defined,
    a non-validating backend) is info; an unknown status is error."""
    known = status if isinstance(status, str) and status in STATUSES else ERROR
    if known in BROKEN and required is False:
        return INFO
    return known


def read_status(status: object, message: object = "") -> str:
    """A document's status as this version says it: an unknown one is error; a version 1 "skipped"
    whose message says "not applicable" is n/a."""
    if not isinstance(status, str) or status not in STATUSES:
        return ERROR
    if status == SKIPPED and isinstance(message, str) and message.startswith(NOT_APPLICABLE_PREFIX):
        return NOT_APPLICABLE
    return status


def is_failure(status: object, required: object) -> bool:
    """Whether the result fails the run: required and broken."""
    return bool(required) and status in BROKEN
