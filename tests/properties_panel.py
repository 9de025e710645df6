"""A panel of deliberately broken number-drawing backends for the property axis (issue 43).

Each draws TensorFlow's convention from the reference (rngcheck.numbers.draw) and breaks one thing, written
plainly here as the libraries in docs/library-findings.md break it; each names the property case it
must fail and the diagnosis id it must get. CORRECT breaks nothing and must pass every property case.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from rngcheck import numbers
from rngcheck.backends import Backend
from rngcheck.numbers import jax as jax_numbers
from rngcheck.numbers import jax_keys


class Drawing(Backend):
    """TensorFlow's numbers from the reference, under the ``tensorflow`` convention."""

    name = "correct"
    conventions = ("tensorflow",)

    def random_numbers(self, request, state):
        parsed = self.numbers_request(request)
        return self.numbers(parsed, np.asarray(state, dtype=np.uint32).reshape(-1).copy())

    def numbers(self, request, state):
        return numbers.draw(request, state)


class SeedZeroUnseeded(Drawing):
    """Seed 0 taken as "no seed": an all-zero state draws from fresh entropy (tfjs's normal with seed: 0)."""

    name = "seed-zero-unseeded"

    def numbers(self, request, state):
        if not state.any():
            state = np.frombuffer(os.urandom(24), dtype=np.uint32).copy()
        return numbers.draw(request, state)


def _uniform(request, state, count=None):
    return numbers.draw(numbers.Request("tensorflow", "uniform", "float64", count or request.count), state)


class TruncatedRange(Drawing):
    """An integer range from a float uniform truncated toward zero (tfjs's randomUniformInt): low never
    comes out of [-5, 5), and 0 twice as often."""

    name = "truncated-range"

    def numbers(self, request, state):
        if request.kind != "integers":
            return numbers.draw(request, state)
        low, high = request.integer_range
        return np.trunc(low + _uniform(request, state) * (high - low)).astype(request.dtype)


class Float32Integers(Drawing):
    """Integers through a float32 uniform (tinygrad's randint): [0, 2^30) gives multiples of 64 only."""

    name = "float32-integers"

    def numbers(self, request, state):
        if request.kind != "integers":
            return numbers.draw(request, state)
        low, high = request.integer_range
        unit = (np.floor(_uniform(request, state) * 2.0 ** 24) * 2.0 ** -24).astype(np.float32)   # 24-bit float32
        return (np.float32(low) + np.floor(unit * np.float32(high - low))).astype(request.dtype)


class UniformReachesOne(Drawing):
    """A float32 uniform rounded to nearest through bfloat16 on its way: 1.0 once a number is above 1 - 2^-9
    (numba's float32 uniform reaches 1.0 too, rarer)."""

    name = "uniform-reaches-one"

    def numbers(self, request, state):
        drawn = numbers.draw(request, state)
        if request.kind == "uniform" and request.dtype == "float32":
            rounded = (drawn.view(np.uint32) + np.uint32(0x8000)) & np.uint32(0xFFFF0000)
            return rounded.view(np.float32)
        return drawn


class SeedPlusCounter(Drawing):
    """Seed and position summed into one key (Keras's torch backend): seed s's position 1 is seed s + 1's
    position 0."""

    name = "seed-plus-counter"

    def numbers(self, request, state):
        summed = state.copy()
        summed[4] = (int(state[4]) + int(state[0])) & 0xFFFFFFFF
        summed[0] = 0
        return numbers.draw(request, summed)


class HalvesRealisedLate(Drawing):
    """A draw made as two lazy halves, the first read after the second from the counter the second moved
    (tinygrad#16520): the second half repeats the first."""

    name = "halves-realised-late"

    def numbers(self, request, state):
        drawn = numbers.draw(request, state)
        half = request.count // 2
        drawn[half:2 * half] = drawn[:half]
        return drawn


class JaxKeyed(Drawing):
    """JAX's float32 uniforms from jax.random.key(seed)'s key data [0, seed] (rngcheck.numbers.jax_keys), naming
    JAX as its platform: rule 10 holds. The seed is key word 4; a position is not modelled (position 0 only)."""

    name = "jax-keyed"

    def describe(self):
        return {"platform_seeding": "jax"}

    def key(self, seed):
        return (0, seed)

    def numbers(self, request, state):
        if request.kind != "uniform" or request.dtype != "float32":
            return numbers.draw(request, state)
        words = jax_keys.words(self.key(int(state[4])), request.count)
        return jax_numbers.uniform_from_bits("float32", words)


class KeyedSeedFirst(JaxKeyed):
    """JAX keyed from [seed, 0], the seed in the key's first word (Keras 3 on JAX)."""

    name = "keyed-seed-first"

    def key(self, seed):
        return (seed, 0)


@dataclass(frozen=True)
class Broken:
    backend: type[Drawing]
    case: str            # the property case it must fail
    diagnosis: str       # the id it must get


PANEL = (
    Broken(SeedZeroUnseeded, "properties/repeat/seed-0", "property-repeat"),
    Broken(TruncatedRange, "properties/integers/range-m5-5", "property-range-missing"),
    Broken(Float32Integers, "properties/bits/range-0-2pow30", "property-bits-unreachable"),
    Broken(UniformReachesOne, "properties/interval/uniform-float32", "property-interval"),
    Broken(SeedPlusCounter, "properties/seeds/adjacent-1-2", "property-seeds-overlap"),
    Broken(HalvesRealisedLate, "properties/stream/seed-1", "property-stream-repeats"),
    Broken(KeyedSeedFirst, "properties/keying/seed-42", "property-keying"),
)
CORRECT = Drawing
