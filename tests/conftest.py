"""pytest fixtures and hooks for rngcheck's own tests (none are needed today).

Helpers the tests import (unavailable, require, ...) live in tests/helpers.py; tests/ is on
sys.path through ``pythonpath = ["tests"]`` in pyproject.toml, not through this file.
"""
