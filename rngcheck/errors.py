"""The errors rngcheck raises on purpose: each is one line for the user, never a traceback."""


def one_line(error: BaseException) -> str:
    """An exception as one line: ``Type: message`` (whitespace folded)."""
    text = " ".join(str(error).split())
    if isinstance(error, RemoteError):
        return text  # already "Type: message" from the backend's own process
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class RngcheckError(Exception):
    """An expected error: the CLI prints its message on one line and exits 2."""


class Rejected(Exception):
    """A backend refuses a description (as DirectML does with E_INVALIDARG).

    ``rule`` names the description rule that was broken, when the backend knows it
    (the reference always does; see :mod:`rngcheck.description`).
    """

    def __init__(self, message: str, rule: str | None = None):
        super().__init__(message)
        self.rule = rule


class NotApplicable(Exception):
    """A backend cannot express this description in its library's terms (cuRAND holds its
    subsequence in counter word 2, say): the case is reported as not applicable, with the
    reason, and is neither a pass nor a failure. A backend must never use it to hide a wrong
    answer it could have computed."""


class NotRunHere(Exception):
    """The case applies and could run, but not here and now: this machine lacks the memory for its
    buffer, say. The case is reported as skipped, with the reason (never n/a, never a pass)."""


class BackendUnavailable(RngcheckError):
    """The backend cannot run on this machine (library missing, no device, ...)."""


class BackendSpecError(RngcheckError):
    """A ``--backend`` value that names nothing loadable."""


class VectorFileError(RngcheckError):
    """A malformed known-answer vector file."""


class BackendProcessFailed(Exception):
    """A call failed in the backend's own process, which was ended; ``stderr_tail`` is the end of
    what that process wrote to stderr (bounded; see :mod:`rngcheck.backends.exec_backend`)."""

    def __init__(self, message: str, stderr_tail: str = ""):
        super().__init__(message)
        self.stderr_tail = stderr_tail

    def last_stderr_line(self) -> str:
        """The last non-empty line the process wrote to stderr ("" when it wrote nothing)."""
        lines = (self.stderr_tail or "").strip().splitlines()
        return lines[-1].strip() if lines else ""


class BackendCrashed(BackendProcessFailed):
    """The backend's process died during a call (signal or exit code, and its stderr's tail)."""


class BackendTimeout(BackendProcessFailed):
    """A call did not finish within the per-call time limit; the process was ended."""


class BackendProtocolError(BackendProcessFailed):
    """The backend's process broke the exec protocol (noise on stdout, a short message)."""


class RemoteError(RuntimeError):
    """An exception the backend raised in its own process, as the one line it reported."""


class BackendStopped(Exception):
    """The backend was given up: too many fresh workers in a row failed before answering a call.
    Its remaining cases are not run (status ``not-run``), with this as the reason."""
