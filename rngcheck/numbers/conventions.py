"""Every convention module, imported once so that each registers itself (rngcheck.numbers.CONVENTIONS)."""

from . import tensorflow  # noqa: F401
