"""A panel of deliberately broken block functions: the generator-level diagnosis must name each one.

Like tests/panel.py, the panel shares no code with rngcheck: ThreeFry and Philox are written
again here, one block at a time on Python integers, with knobs that introduce one bug each
(the constants are copied again from Random123's threefry.h and philox.h). To add a broken
implementation, add an entry to PANEL: (name, family, knobs, expected diagnosis id).
"""

from __future__ import annotations

import numpy as np

R_2X32 = [13, 15, 26, 6, 17, 29, 16, 24]
R_4X32 = [(10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20)]
R_2X64 = [16, 42, 12, 31, 16, 32, 24, 21]
R_4X64 = [(14, 16), (52, 57), (23, 40), (5, 37), (25, 33), (46, 12), (58, 22), (32, 32)]
TABLES = {(2, 32): [(r,) for r in R_2X32], (4, 32): R_4X32, (2, 64): [(r,) for r in R_2X64], (4, 64): R_4X64}
PARITY = {32: 0x1BD11BDA, 64: 0x1BD11BDAA9FC1A22}


def threefry_block(x, key, rounds, w, *, table=None, rotation_delta=0, row_offset=0, swap_pairs=False,
                   parity=None, period=4, first_injection=True, add_count=True, lanes_reversed=False):
    """One ThreeFry Nxw block of Python ints, with the bug knobs (defaults: correct)."""
    n, mask = len(x), (1 << w) - 1
    table = table or TABLES[n, w]
    ks = list(key) + [PARITY[w] if parity is None else parity]
    for k in key:
        ks[n] ^= k
    ks[n] &= mask
    x = [(xi + ks[i]) & mask if first_injection else xi for i, xi in enumerate(x)]

    def rotl(v, r):
        r %= w
        return ((v << r) | (v >> (w - r))) & mask if r else v

    s = 0
    for r in range(rounds):
        row = [a + rotation_delta for a in table[(r + row_offset) % 8]]
        if swap_pairs:
            row = row[::-1]
        if n == 2:
            x[0] = (x[0] + x[1]) & mask
            x[1] = rotl(x[1], row[0]) ^ x[0]
        else:
            a, b = (1, 3) if r % 2 == 0 else (3, 1)
            x[0] = (x[0] + x[a]) & mask
            x[a] = rotl(x[a], row[0]) ^ x[0]
            x[2] = (x[2] + x[b]) & mask
            x[b] = rotl(x[b], row[1]) ^ x[2]
        if period and (r + 1) % period == 0:
            s += 1
            x = [(xi + ks[(s + i) % (n + 1)]) & mask for i, xi in enumerate(x)]
            if add_count:
                x[n - 1] = (x[n - 1] + s) & mask
    return x[::-1] if lanes_reversed else x


PHILOX_M = {(2, 32): [0xD256D193], (4, 32): [0xD2511F53, 0xCD9E8D57],
            (2, 64): [0xD2B74407B1CE6E93], (4, 64): [0xD2E7470EE14C6C93, 0xCA5A826395121157]}
PHILOX_W = {32: [0x9E3779B9, 0xBB67AE85], 64: [0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B]}


def philox_block(x, key, rounds, w, *, bump=True, swap_multipliers=False, weyl_bits=None, key_reversed=False,
                 multipliers=None, weyl=None, bump_first=False):
    """One Philox block; each knob one fault (multipliers, weyl: other constants; bump_first: the key
    bumped before the first round too)."""
    n, mask = len(x), (1 << w) - 1
    m = multipliers or (PHILOX_M[n, w][::-1] if swap_multipliers else PHILOX_M[n, w])
    weyl = weyl or [c & mask for c in PHILOX_W[weyl_bits or w]]
    k = list(key[::-1] if key_reversed else key)
    x = list(x)
    for r in range(rounds):
        if bump and (r or bump_first):
            k = [(ki + wi) & mask for ki, wi in zip(k, weyl)]
        if n == 2:
            p = x[0] * m[0]
            x = [(p >> w) ^ k[0] ^ x[1], p & mask]
        else:
            p0, p1 = x[0] * m[0], x[2] * m[1]
            x = [(p1 >> w) ^ x[1] ^ k[0], p1 & mask, (p0 >> w) ^ x[3] ^ k[1], p0 & mask]
    return x


def blocks(family, counters, key, rounds, w, **knobs):
    """The panel's blocks for each counter row, as the W-bit numpy dtype."""
    function = threefry_block if family == "threefry" else philox_block
    rows = [function([int(c) for c in row], [int(k) for k in key], rounds, w, **knobs) for row in counters]
    return np.array(rows, dtype=np.uint32 if w == 32 else np.uint64)


# (name, family, knobs (w is the generator's word size), expected id)
PANEL = [
    ("OtherWidthRotations", "threefry", lambda w, n: dict(table=TABLES[n, 96 - w]), "threefry-rotations-other-width"),
    ("RotationsPlusOne", "threefry", lambda w, n: dict(rotation_delta=1), "threefry-rotations-plus-one"),
    ("RotationsMinusOne", "threefry", lambda w, n: dict(rotation_delta=-1), "threefry-rotations-minus-one"),
    ("RotationRowOneLate", "threefry", lambda w, n: dict(row_offset=1), "threefry-rotations-one-round-late"),
    ("NoKeyInjection", "threefry", lambda w, n: dict(period=0), "threefry-key-injection-missing"),
    ("InjectionEveryRound", "threefry", lambda w, n: dict(period=1), "threefry-key-injection-every-round"),
    ("KeyIgnored", "threefry", lambda w, n: dict(period=0, first_injection=False), "threefry-key-ignored"),
    ("NoFirstInjection", "threefry", lambda w, n: dict(first_injection=False), "threefry-first-injection-missing"),
    ("NoInjectionCount", "threefry", lambda w, n: dict(add_count=False), "threefry-injection-count-missing"),
    ("ParityZero", "threefry", lambda w, n: dict(parity=0), "threefry-parity-zero"),
    ("ParityOtherWidth", "threefry", lambda w, n: dict(parity=PARITY[96 - w] & ((1 << w) - 1)),
     "threefry-parity-other-width"),
    ("LanesReversed", "threefry", lambda w, n: dict(lanes_reversed=True), "block-lanes-reversed"),
    ("PhiloxNoBump", "philox", lambda w, n: dict(bump=False), "philox-key-not-bumped"),
    ("PhiloxWeylOtherWidth", "philox", lambda w, n: dict(weyl_bits=96 - w), "philox-weyl-other-width"),
]
# Only for 4-lane generators (Philox2xW has a single key word).
PANEL_4_LANES = [
    ("PhiloxKeyReversed", "philox", lambda w, n: dict(key_reversed=True), "block-key-words-reversed"),
    ("RotationPairsSwapped", "threefry", lambda w, n: dict(swap_pairs=True), "threefry-rotation-pairs-swapped"),
    ("PhiloxMultipliersSwapped", "philox", lambda w, n: dict(swap_multipliers=True), "philox-multipliers-swapped"),
]
