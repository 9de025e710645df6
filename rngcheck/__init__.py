"""rngcheck: conformance and statistical tests for random-number-generator implementations.

First target: DirectML's DML_RANDOM_GENERATOR operator (Philox 4x32-10).
"""

from .errors import NotApplicable, Rejected, RngcheckError

__version__ = "0.1.0"
__all__ = ["NotApplicable", "Rejected", "RngcheckError", "__version__"]
