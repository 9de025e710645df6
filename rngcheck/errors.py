"""The errors rngcheck raises on purpose: each is one line for the user, never a traceback."""


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


class BackendUnavailable(RngcheckError):
    """The backend cannot run on this machine (library missing, no device, ...)."""


class BackendSpecError(RngcheckError):
    """A ``--backend`` value that names nothing loadable."""


class VectorFileError(RngcheckError):
    """A malformed known-answer vector file."""
