"""Fault backends of the restart rule (tests/test_process_ends.py)."""

from __future__ import annotations

import os
import sys
import time

from rngcheck.errors import Rejected

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # loaded by file path in a worker
from faults import Correct  # noqa: E402


class AnswersOnceThenHangs(Correct):
    """Every worker answers its first call and hangs on the next (a driver that wedges after one
    dispatch): the old cap counted only workers that failed before their first answer."""

    name = "answers-once-then-hangs"

    def __init__(self):
        self.calls = 0

    def random_generator(self, state, sizes, strides, buffer, **kw):
        self.calls += 1
        if self.calls > 1:
            time.sleep(3600)
        return super().random_generator(state, sizes, strides, buffer, **kw)


class CrashesOnInvalid(Correct):
    """A correct backend that does not validate: an invalid description crashes its process (as an
    unchecked driver would); every valid one is answered right."""

    name = "crashes-on-invalid"
    validates = False

    def random_generator(self, state, sizes, strides, buffer, **kw):
        try:
            return super().random_generator(state, sizes, strides, buffer, **kw)
        except Rejected:
            os._exit(11)
