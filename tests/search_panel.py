"""Broken implementations of kinds no named class models (issue 40): the chain's search must name each
with the exact step and parameters.

Like tests/panel.py and tests/generator_panel.py, this shares no code with rngcheck: Philox4x32 is
written again here, plainly, with knobs for what real implementations get wrong (the constants are
copied again from Random123's philox.h and threefry.h, and Skein 1.1's parity from its paper). Words
entries: (name, knobs, sizes, strides, expected id, expected parameters); generator entries: (name,
generator, knobs for tests/generator_panel.py's block functions, rounds, expected id, parameters).
"""

from __future__ import annotations

import math

import numpy as np

import generator_panel
from panel import KnobbedPhilox, _packed

MASK = 0xFFFFFFFF
M = (0xD2511F53, 0xCD9E8D57)
W = (0x9E3779B9, 0xBB67AE85)


def broken_blocks(counters: np.ndarray, key, *, multipliers=M, weyl=W, rounds=10, bump_first=False,
                  swap_halves=(False, False), key_into=(0, 1)) -> np.ndarray:
    """Philox4x32 over (m, 4) counter words with the knobs (defaults: correct); (m, 4) uint32."""
    x = [counters[:, i].astype(np.uint64) for i in range(4)]
    k = list(key)
    for r in range(rounds):
        if r or bump_first:
            k = [(k[0] + weyl[0]) & MASK, (k[1] + weyl[1]) & MASK]
        p0, p1 = x[0] * np.uint64(multipliers[0]), x[2] * np.uint64(multipliers[1])
        hi0, lo0 = p0 >> np.uint64(32), p0 & np.uint64(MASK)
        hi1, lo1 = p1 >> np.uint64(32), p1 & np.uint64(MASK)
        if swap_halves[0]:
            hi0, lo0 = lo0, hi0
        if swap_halves[1]:
            hi1, lo1 = lo1, hi1
        x = [hi1 ^ x[1] ^ np.uint64(k[key_into[0]]), lo1, hi0 ^ x[3] ^ np.uint64(k[key_into[1]]), lo0]
    return np.stack(x, axis=1).astype(np.uint32)


def broken_words(state, n: int, *, key_mask=(MASK, MASK), lanes_reversed=False, lane_order=None,
                 **knobs) -> np.ndarray:
    """Elements 0 .. n-1 of the operator with the knobs, in logical order."""
    s = [int(w) for w in np.asarray(state).reshape(-1)]
    value = sum(w << (32 * i) for i, w in enumerate(s[:4]))
    rows = [[((value + b) % (1 << 128)) >> (32 * i) & MASK for i in range(4)] for b in range(math.ceil(n / 4))]
    out = broken_blocks(np.array(rows, dtype=np.uint64).reshape(-1, 4), (s[4] & key_mask[0], s[5] & key_mask[1]),
                        **knobs)
    if lane_order is not None:
        out = np.stack([out[:, lane] for lane in lane_order], axis=1)
    return (out[:, ::-1] if lanes_reversed else out).reshape(-1)[:n]


class Broken(KnobbedPhilox):
    """The panel's backend with one of these faults (ignore_strides: strides ignored, packed row-major)."""

    def __init__(self, name, knobs, ignore_strides=False):
        super().__init__(name, ignore_strides=ignore_strides)
        self.fault = knobs

    def logical_words(self, state, n):
        return broken_words(state, n, **self.fault)


def extent_of(entry, state, sizes, strides=None) -> np.ndarray:
    """The tensor's extent after the broken backend of a WORDS entry ran (unwritten words 0)."""
    name, knobs, ignore = entry[:3]
    extent = sum((s - 1) * d for s, d in zip(sizes, strides or _packed(sizes))) + 1
    buffer = np.zeros(extent, dtype=np.uint32)
    Broken(name, knobs, ignore).random_generator(np.asarray(state, dtype=np.uint32), sizes, strides, buffer)
    return buffer


def _weyl(a, b):
    return {"weyl": [f"0x{a:08X}", f"0x{b:08X}"]}


def _mult(a, b):
    return {"multipliers": [f"0x{a:08X}", f"0x{b:08X}"]}


ROUNDS_7 = {"id": "rounds-7", "step": "rounds", "parameters": {"rounds": 7}}
WEYL_SWAPPED = {"id": "key-schedule-weyl", "step": "key schedule", "parameters": _weyl(W[1], W[0])}
# (name, knobs, strides ignored, expected id, expected parameters)
WORDS = [
    ("multipliers-swapped", dict(multipliers=M[::-1]), False, "round-multipliers", _mult(M[1], M[0])),
    ("weyl-swapped", dict(weyl=W[::-1]), False, "key-schedule-weyl", _weyl(W[1], W[0])),
    ("m0-of-philox2x32", dict(multipliers=(0xD256D193, M[1])), False, "round-multipliers", _mult(0xD256D193, M[1])),
    ("m1-high-half-of-philox4x64", dict(multipliers=(M[0], 0xCA5A8263)), False, "round-multipliers",
     _mult(M[0], 0xCA5A8263)),
    ("m0-low-half-of-philox4x64", dict(multipliers=(0xE14C6C93, M[1])), False, "round-multipliers",
     _mult(0xE14C6C93, M[1])),
    ("product-halves-swapped-in-one-lane", dict(swap_halves=(False, True)), False, "round-product-halves",
     {"exchanged": [1]}),
    ("key-word-1-masked-to-16-bits", dict(key_mask=(MASK, 0xFFFF)), False, "key-word-masked",
     {"word": 5, "mask": "0x0000FFFF"}),
    ("weyl-w1-low-half-of-64-bit", dict(weyl=(W[0], 0x84CAA73B)), False, "key-schedule-weyl", _weyl(W[0], 0x84CAA73B)),
    ("weyl-w0-missing", dict(weyl=(0, W[1])), False, "key-schedule-weyl", _weyl(0, W[1])),
    ("key-xor-exchanged", dict(key_into=(1, 0)), False, "round-key-xor", {"key_xor": ["k1", "k0"]}),
    ("rounds-7-and-weyl-swapped", dict(rounds=7, weyl=W[::-1]), False, "two-steps",
     {"changes": [WEYL_SWAPPED, ROUNDS_7]}),
    ("weyl-swapped-and-lanes-reversed", dict(weyl=W[::-1], lanes_reversed=True), False, "two-steps",
     {"changes": [WEYL_SWAPPED, {"id": "lanes-reversed", "step": "lanes' order",
                                 "parameters": {"lanes": [3, 2, 1, 0]}}]}),
    ("m0-of-philox2x32-and-lane-pairs-swapped", dict(multipliers=(0xD256D193, M[1]), lane_order=(1, 0, 3, 2)), False,
     "two-steps", {"changes": [{"id": "round-multipliers", "step": "round function",
                                "parameters": _mult(0xD256D193, M[1])},
                               {"id": "lane-permutation", "step": "lanes' order",
                                "parameters": {"lanes": [1, 0, 3, 2]}}]}),
    ("multipliers-swapped-and-strides-ignored", dict(multipliers=M[::-1]), True, "two-steps",
     {"changes": [{"id": "round-multipliers", "step": "round function", "parameters": _mult(M[1], M[0])},
                  {"id": "strides-ignored", "step": "placement", "parameters": {"placement": "strides-ignored"}}]}),
]

P13 = 0x1BD11BDAA9FC1A22
# (name, generator, knobs of generator_panel's block functions, rounds run, expected id, parameters)
GENERATORS = [
    ("philox4x32-weyl-swapped", "philox4x32", dict(weyl_order=(1, 0)), 10, "philox-weyl", _weyl(W[1], W[0])),
    ("philox4x32-key-bumped-before-first-round", "philox4x32", dict(bump_first=True), 10, "philox-key-bump-first",
     {"bump": "before every round"}),
    ("philox4x32-m0-of-philox2x32", "philox4x32", dict(multipliers=[0xD256D193, M[1]]), 10, "philox-multipliers",
     _mult(0xD256D193, M[1])),
    ("philox2x64-m0-of-philox4x64", "philox2x64", dict(multipliers=[0xD2E7470EE14C6C93]), 10, "philox-multipliers",
     {"multipliers": ["0xD2E7470EE14C6C93"]}),
    ("philox4x64-w1-missing", "philox4x64", dict(weyl=[0x9E3779B97F4A7C15, 0]), 10, "philox-weyl",
     {"weyl": ["0x9E3779B97F4A7C15", "0x0000000000000000"]}),
    ("threefry2x32-one-rotation-wrong", "threefry2x32", dict(table=[(r,) for r in (13, 15, 26, 7, 17, 29, 16, 24)]),
     20, "threefry-rotation", {"round": 3, "position": 0, "rotation": 7}),
    ("threefry4x32-one-rotation-wrong", "threefry4x32",
     dict(table=[(10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 12), (25, 10), (18, 20)]), 20,
     "threefry-rotation", {"round": 5, "position": 1, "rotation": 12}),
    ("threefry4x64-parity-of-skein-1.1", "threefry4x64", dict(parity=0x5555555555555555), 20, "threefry-parity",
     {"parity": "0x5555555555555555"}),
    ("threefry2x64-13-rounds-and-parity-zero", "threefry2x64", dict(parity=0), 13, "two-steps",
     {"changes": [{"id": "threefry-parity", "step": "key schedule", "parameters": {"parity": "0x0000000000000000"}},
                  {"id": "rounds-13", "step": "rounds", "parameters": {"rounds": 13}}]}),
]


def generator_blocks(family: str, counters, key, rounds: int, w: int, knobs: dict) -> np.ndarray:
    """tests/generator_panel.py's block functions, with the knobs they lack added here (Philox's multipliers,
    Weyl constants and order, a bump before the first round)."""
    if family == "threefry":
        return generator_panel.blocks(family, counters, key, rounds, w, **knobs)
    rows = [_philox_row([int(c) for c in row], [int(k) for k in key], rounds, w, **knobs) for row in counters]
    return np.array(rows, dtype=np.uint32 if w == 32 else np.uint64)


def _philox_row(x, key, rounds, w, *, multipliers=None, weyl=None, weyl_order=(0, 1), bump_first=False):
    bumps = weyl or [generator_panel.PHILOX_W[w][i] for i in weyl_order]
    return generator_panel.philox_block(x, key, rounds, w, multipliers=multipliers, weyl=bumps, bump_first=bump_first)
