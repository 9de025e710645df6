"""The ``numpy`` backend: the reference model itself, behind the backend contract."""

from __future__ import annotations

import platform

import numpy as np

from .. import __version__, reference
from ..description import FEATURE_LEVEL_4_0
from ..errors import NotApplicable
from . import Backend


class NumpyBackend(Backend):
    """rngcheck's reference (rngcheck.reference), run on the CPU with numpy."""

    name = "numpy"
    validates = True
    fork_safe = True  # numpy on the CPU: no device, no threads, nothing a fork breaks

    def describe(self) -> dict[str, str]:
        return {
            "implementation": "rngcheck reference model (numpy)",
            "device": platform.processor() or platform.machine(),
            "rngcheck": __version__,
            "numpy": np.__version__,
            "version": f"numpy {np.__version__}",
        }

    @property
    def conventions(self) -> tuple[str, ...]:
        """Every convention: the reference implements them all (rngcheck.numbers)."""
        from .. import numbers

        return tuple(sorted(numbers.CONVENTIONS))

    operators = ("stablehlo",)

    def rng_bit_generator(self, algorithm, state, shape, dtype):
        from .. import stablehlo

        return stablehlo.rng_bit_generator(algorithm, state, shape, dtype)

    def random_numbers(self, request: dict, state):
        from .. import numbers

        return numbers.draw(numbers.Request.from_dict(request), state)

    @property
    def generators(self) -> tuple[str, ...]:
        """Every generator of rngcheck.generators, at any round count."""
        from .. import generators

        return generators.NAMES

    def generator_blocks(self, generator, rounds, counters, key):
        from .. import generators

        self.generator_request(generator, counters)
        try:
            return generators.get(generator).blocks(counters, tuple(key), int(rounds))
        except ValueError as error:
            raise NotApplicable(f"not a {generator} block the reference computes: {error}") from None

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        return reference.random_generator(state, sizes, strides, buffer,
                                          output_state=output_state, feature_level=feature_level)
