"""Broken generator *backends* for the generator cases (tests/test_generator_backends.py): each computes
its blocks with tests/generator_panel.py's block functions (ThreeFry and Philox written again there,
sharing no code with rngcheck) with one bug knob, behind the backend contract's ``generator_blocks``,
so that the suite's verdict and diagnosis are what is tested, in-process and through the worker.
"""

from __future__ import annotations

import numpy as np

import generator_panel
from rngcheck.backends import Backend


class PanelBackend(Backend):
    """Every generator of one family at any round count, from the panel's block function with
    ``knobs(w, n)`` (default: none, correct)."""

    family = "threefry"
    knobs = staticmethod(lambda w, n: {})

    def __init__(self):
        self.name = type(self).__name__
        self.generators = tuple(f"{self.family}{n}x{w}" for n in (2, 4) for w in (32, 64))

    def describe(self):
        return {"version": f"generator panel {self.name}"}

    def generator_blocks(self, generator, rounds, counters, key):
        lanes, bits = self.generator_request(generator, counters)
        return generator_panel.blocks(self.family, counters, key, int(rounds), bits, **self.knobs(bits, lanes))


class RightThreeFry(PanelBackend):
    """The panel's ThreeFry without a knob: it must pass every line."""


class RightPhilox(PanelBackend):
    family = "philox"


def broken(name: str) -> type[PanelBackend]:
    """The backend of the panel entry ``name`` (generator_panel.PANEL)."""
    for entry_name, family, knobs, _ in generator_panel.PANEL + generator_panel.PANEL_4_LANES:
        if entry_name == name:
            return type(name, (PanelBackend,), {"family": family, "knobs": staticmethod(knobs)})
    raise KeyError(name)


def expected_id(name: str) -> str:
    return next(i for n, _, _, i in generator_panel.PANEL + generator_panel.PANEL_4_LANES if n == name)


# For a file spec (``tests/generator_backend_panel.py:RotationsPlusOne``): the worker loads it by name.
RotationsPlusOne = broken("RotationsPlusOne")
PhiloxNoBump = broken("PhiloxNoBump")   # tests/test_submission.py: a run that fails the generator-philox lists


class WrongShape(RightThreeFry):
    """Right words, returned flat (a broken contract, not a wrong generator)."""

    def generator_blocks(self, generator, rounds, counters, key):
        return super().generator_blocks(generator, rounds, counters, key).reshape(-1)


class WritesCounters(RightThreeFry):
    """Right words, computed in place in the counters it was given."""

    def generator_blocks(self, generator, rounds, counters, key):
        counters[:] = super().generator_blocks(generator, rounds, counters, key)
        return np.array(counters)
