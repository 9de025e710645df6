"""The generator panel: deliberately broken generator backends the generator cases must catch and
name (tests/test_generator_backends.py).

It shares no code with rngcheck's spec modules: ThreeFry-2x32 is written again here, plainly, from
the Threefish description (Salmon et al., SC11, section 3.1; the rotation constants and the parity
constant of Skein's Threefish), with knobs that introduce one bug each. Default: correct.
"""

from __future__ import annotations

import numpy as np

from rngcheck.backends import Backend

MASK32 = 0xFFFFFFFF
ROTATIONS_2X32 = (13, 15, 26, 6, 17, 29, 16, 24)
PARITY_32 = 0x1BD11BDA


def threefry2x32(counter, key, rounds=20, *, rotations=ROTATIONS_2X32, parity=PARITY_32, injection_every=4):
    """One block of ThreeFry-2x32 with ``rounds`` rounds; ``injection_every`` 0: never a key injection."""
    schedule = (key[0], key[1], key[0] ^ key[1] ^ parity)
    x0, x1 = (counter[0] + schedule[0]) & MASK32, (counter[1] + schedule[1]) & MASK32
    injections = 0
    for r in range(rounds):
        x0 = (x0 + x1) & MASK32
        shift = rotations[r % len(rotations)]
        x1 = ((x1 << shift) | (x1 >> (32 - shift))) & MASK32
        x1 ^= x0
        if injection_every and (r + 1) % injection_every == 0:
            injections += 1
            x0 = (x0 + schedule[injections % 3]) & MASK32
            x1 = (x1 + schedule[(injections + 1) % 3] + injections) & MASK32
    return x0, x1


class KnobbedThreeFry(Backend):
    """threefry2x32 at any round count, with one knob per bug class (default: correct)."""

    generators = ("threefry2x32",)

    def __init__(self, name=None, **knobs):
        self.name = name or type(self).__name__
        self.knobs = knobs

    def describe(self):
        return {"version": f"generator panel {self.name}"}

    def generator_blocks(self, generator, rounds, counters, key):
        self.generator_request(generator, counters)
        return np.array([threefry2x32(row, key, int(rounds), **self.knobs) for row in counters.tolist()],
                        dtype=np.uint32).reshape(counters.shape)


class WrongRotation(KnobbedThreeFry):
    """The second rotation constant 16 instead of 15."""

    def __init__(self):
        super().__init__(rotations=(13, 16, 26, 6, 17, 29, 16, 24))


class NoKeyInjection(KnobbedThreeFry):
    """The key injected before the first round only."""

    def __init__(self):
        super().__init__(injection_every=0)


class WrongParity(KnobbedThreeFry):
    """Skein's 64-bit parity constant's high half instead of the 32-bit one."""

    def __init__(self):
        super().__init__(parity=0x1BD11BDA ^ 0xA9FC1A22)


class WrongShape(KnobbedThreeFry):
    """Right words, returned flat (a broken contract, not a wrong generator)."""

    def generator_blocks(self, generator, rounds, counters, key):
        return super().generator_blocks(generator, rounds, counters, key).reshape(-1)


class WritesCounters(KnobbedThreeFry):
    """Right words, computed in place in the counters it was given."""

    def generator_blocks(self, generator, rounds, counters, key):
        counters[:] = super().generator_blocks(generator, rounds, counters, key)
        return counters.copy()


# (backend class, what breaks): each must fail a generator case it claims, never pass one.
PANEL = [(WrongRotation, "rotation"), (NoKeyInjection, "key injection"), (WrongParity, "parity")]
