"""Anatomy of a wrong answer: where the wrong values come from, how their bits differ, and the
structured family (with its parameters) that reproduces them, when one does.

The diagnosis (rngcheck.conformance.directml.diagnosis) names a wrong answer when one of its models
predicts it exactly. The anatomy explains any wrong answer, named or not, from the outside:

- **Provenance.** For each wrong element (the first EXAMINED of a window of WINDOW elements that
  starts just before the first wrong one), where its value occurs in the reference: its own block
  at another lane, a block up to NEAR_BLOCKS away (which offset, which lane), another element of
  the first HEAD elements or of the window (a displacement d; d = -2^k from element 2^k on is an
  index that wraps at 2^k), the same counter under another key (KEY_VARIANTS), another round count
  (ROUNDS), the counter words in another order, the counter less 2^B (a carry lost at bit B), or
  nowhere near. Summarised as one finding, not one line per element.
- **Bits.** Which bit positions differ and how often, whether each wrong word is a byte
  permutation or a rotation of its right word, bits stuck in the wrong words, and whether the
  differences are dense (another function or other inputs: ~16 of 32 bits) or sparse (a fault
  in a few bits).
- **State.** The returned state's difference from the expected one, word by word (mod 2^32,
  signed), the counter's advance against ceil(n/4), and the family that gives it.
- **Families.** When no named class matched: a lane permutation or shuffle (per block, or by
  block position), a byte order, a carry that stops at bit B, a round count, an index wrap at
  2^k, a constant displacement, another key, the counter words in another order; for the state,
  a carry at bit B or another increment rule. Each is verified on the whole window before it
  names the case (diagnosis.FAMILIES has the ids).

Budget: the anatomy runs on the first failing words cases of a backend (a Budget per backend,
given by the runner): at most CASES_PER_BACKEND of them, and none once the anatomies have taken
SECONDS_PER_BACKEND in all. Per case its work is bounded by construction (at most WINDOW
elements, EXAMINED wrong ones, about 80 candidate Philox computations on the wrong blocks, in 4
batches: a few ms on one core), and a stage
that would start after SECONDS_PER_CASE (0.5 s) is skipped (the anatomy says which). It never
changes a verdict (a status), only explains it.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import permutations
from typing import Any

import numpy as np

from ... import counter, layout, philox, reference
from .. import chain
from .diagnosis import family

WINDOW = 4096           # elements examined, from just before the first wrong one
EXAMINED = 1024         # wrong elements whose provenance is looked up
NEAR_BLOCKS = 16        # blocks either side of an element searched for its value
HEAD = 4096             # the first elements of the tensor, searched too (an index that wraps)
CASES_PER_BACKEND = 256   # failing cases of a backend given an anatomy (its first ones) ...
SECONDS_PER_BACKEND = 20.0  # ... while their anatomies have taken less than this in all
SECONDS_PER_CASE = 0.5    # a stage that would start later is skipped
SEARCH_SECONDS_PER_BACKEND = 20.0  # the chain's search (directml.search) on a backend's unnamed cases, in all
COMPLETIONS_PER_BACKEND = 32  # named cases whose alternatives the chain's single changes complete (its first ones)
ROUNDS = tuple(r for r in range(0, 33) if r != philox.DEFAULT_ROUNDS)
CARRY_BITS = tuple(range(8, 128, 8))   # a carry lost at bit B: the counter less 2^B
DENSE_BITS = 8.0        # mean differing bits per wrong word from which the difference is dense
SPARSE_BITS = 4.0
WORD = 32
M32 = 0xFFFFFFFF

def _order4(order) -> tuple[int, int, int, int]:
    a, b, c, d = (int(x) for x in order)
    return a, b, c, d


BYTE_ORDERS = [p for p in permutations(range(4)) if p != (0, 1, 2, 3)]
ORDER_NAMES = {(3, 2, 1, 0): "byte-swapped (the other endianness)", (2, 3, 0, 1): "half-words swapped",
               (1, 0, 3, 2): "bytes swapped within each half-word"}


# -- the budget ------------------------------------------------------------------------------------

@dataclass
class Budget:
    """How many more failing cases of one backend get an anatomy, the time for each, and in all."""

    cases: int = CASES_PER_BACKEND
    seconds: float = SECONDS_PER_CASE
    total: float = SECONDS_PER_BACKEND
    search: float = SEARCH_SECONDS_PER_BACKEND
    completions: int = COMPLETIONS_PER_BACKEND

    def take(self) -> Clock | None:
        if self.cases <= 0 or self.total <= 0:
            return None
        self.cases -= 1
        return Clock(time.perf_counter() + min(self.seconds, self.total), self.seconds, budget=self)


@dataclass
class Clock:
    ends: float
    seconds: float
    skipped: list[str] = field(default_factory=list)
    budget: Budget | None = None

    def spent(self, seconds: float) -> None:
        if self.budget is not None:
            self.budget.total -= seconds

    def allows(self, stage: str) -> bool:
        if time.perf_counter() < self.ends:
            return True
        self.skipped.append(stage)
        return False


def off() -> Budget:
    """No anatomy (the property case's search: only its final failure is explained)."""
    return Budget(cases=0, search=0.0, completions=0)


_ACTIVE: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("rngcheck_anatomy_budget", default=None)


@contextlib.contextmanager
def using(budget: Budget | None) -> Iterator[Budget]:
    """The budget the checks inside draw on (a fresh one when None: a single case, as in repro)."""
    with chain.budget_in_force(_ACTIVE, budget, Budget) as in_force:
        yield in_force


def current() -> Budget | None:
    """The budget in force (None outside a run_case)."""
    return _ACTIVE.get()


def search_seconds(per_case: float) -> float | None:
    """The time the chain's search may take on this case (None: the backend's search time is spent)."""
    budget = _ACTIVE.get()
    left = budget.search if budget is not None else per_case
    return min(per_case, left) if left > 0 else None


def take_completion() -> bool:
    """Whether this named case's alternatives may still be completed by the chain's single changes."""
    budget = _ACTIVE.get()
    if budget is None:
        return True
    budget.completions -= 1
    return budget.completions >= 0


def search_spent(seconds: float) -> None:
    budget = _ACTIVE.get()
    if budget is not None:
        budget.search -= seconds


def _clock() -> Clock | None:
    budget = _ACTIVE.get()
    return (budget if budget is not None else Budget(cases=1)).take()


# -- small helpers ---------------------------------------------------------------------------------

def _hex(value) -> str:
    return f"0x{int(value) & M32:08x}"


def _signed(value: int, bits: int) -> int:
    value %= 1 << bits
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _amount(value: int) -> str:
    """A counter difference: decimal when small, else a signed hex number."""
    return str(value) if abs(value) < 1 << 20 else f"{'-' if value < 0 else ''}0x{abs(value):x}"


def _ordinal(k: int) -> str:
    return {1: "next", -1: "previous"}.get(k, f"{k:+d}")


def _bytes_permuted(words: np.ndarray, order) -> np.ndarray:
    """Each word with byte j taken from byte order[j] (order (3,2,1,0): byte-swapped)."""
    b = words.astype("<u4").view(np.uint8).reshape(-1, 4)
    return b[:, list(order)].copy().view("<u4").reshape(-1).astype(np.uint32)


def _rotl(words: np.ndarray, r: int) -> np.ndarray:
    w = words.astype(np.uint64)
    return (((w << np.uint64(r)) | (w >> np.uint64(WORD - r))) & np.uint64(M32)).astype(np.uint32)


def _bit_matrix(words: np.ndarray) -> np.ndarray:
    """(n, 32) bits, column b is bit b (least significant first)."""
    return ((words.astype(np.uint32)[:, None] >> np.arange(WORD, dtype=np.uint32)) & 1).astype(np.uint8)


def _bit_ranges(bits) -> str:
    bits = sorted(int(b) for b in bits)
    runs: list[list[int]] = []
    for b in bits:
        if runs and b == runs[-1][1] + 1:
            runs[-1][1] = b
        else:
            runs.append([b, b])
    return ", ".join(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in runs)


def _block_set_text(blocks: np.ndarray, window_blocks: np.ndarray) -> tuple[str, dict]:
    """Which blocks (a set within the window's blocks) as a rule: every block, every q-th, from b on."""
    every = [int(b) for b in window_blocks]
    chosen = set(int(b) for b in blocks) & set(every) or set(int(b) for b in blocks)  # whole blocks speak
    if chosen == set(every):
        return "in every block", {"blocks": "all"}
    for period in (2, 3, 4, 8, 16, 32, 64):
        residues = sorted({b % period for b in chosen})
        if len(residues) < period and {b for b in every if b % period in residues} == chosen and \
                len(chosen) >= 2:
            which = ", ".join(map(str, residues))
            return (f"in every {period}th block (blocks {which} mod {period})" if len(residues) == 1 else
                    f"in blocks {which} mod {period}"), {"blocks": {"period": period, "residues": residues}}
    first = min(chosen)
    if chosen == {b for b in every if b >= first} and first > every[0] and len(chosen) >= 2:
        return f"from block {first} on", {"blocks": {"from": first}}
    listed = sorted(chosen)
    more = f", ... ({len(listed)} blocks)" if len(listed) > 6 else ""
    return f"in block{'s' if len(listed) > 1 else ''} {', '.join(map(str, listed[:6]))}{more}", {"blocks": listed[:64]}


# -- reference pieces ------------------------------------------------------------------------------

def _blocks_at(state, blocks: np.ndarray, *, key=None, rounds=philox.DEFAULT_ROUNDS,
               counters: Callable | None = None) -> np.ndarray:
    """(len(blocks), 4) Philox words of the given block numbers (>= 0), optionally with another key,
    round count, or a transformation of the counter words."""
    ctr = counter.counters_at(state, blocks.astype(np.uint64))
    if counters is not None:
        ctr = counters(ctr)
    k0, k1 = key if key is not None else counter.key_of(state)
    return philox.philox4x32(*ctr, k0, k1, rounds=rounds)


def _key_variants(state) -> list[tuple[str, tuple[int, int]]]:
    k0, k1 = counter.key_of(state)
    c = [int(w) for w in counter.counter_words(state)]
    found = [("(k1, k0): the key words swapped", (k1, k0)), ("(k0, 0)", (k0, 0)), ("(0, k1)", (0, k1)),
             ("(0, 0)", (0, 0)), ("(k0 + 1, k1)", ((k0 + 1) & M32, k1)), ("(k0 - 1, k1)", ((k0 - 1) & M32, k1)),
             ("(k0, k1 + 1)", (k0, (k1 + 1) & M32)), ("(k0, k1 - 1)", (k0, (k1 - 1) & M32)),
             ("(k0, k0)", (k0, k0)), ("(k1, k1)", (k1, k1)), ("(c0, c1): counter words 0-1", (c[0], c[1])),
             ("(c2, c3): counter words 2-3", (c[2], c[3])),
             ("the key bumped once (k0 + W0, k1 + W1)", ((k0 + philox.PHILOX_W0) & M32, (k1 + philox.PHILOX_W1) & M32))]
    key = (k0, k1)
    return [(name, k) for name, k in found if k != key]


def _counter_orders() -> list[tuple[str, tuple[int, ...]]]:
    return [(f"counter words fed to Philox as (c{p[0]}, c{p[1]}, c{p[2]}, c{p[3]})", p)
            for p in permutations(range(4)) if p != (0, 1, 2, 3)]


# -- provenance ------------------------------------------------------------------------------------

@dataclass
class Wrong:
    """The examined wrong elements of the window and what was found for each."""

    index: np.ndarray            # logical element indices
    value: np.ndarray            # what the backend wrote
    right: np.ndarray            # what the reference says
    kind: list[str]
    detail: list[tuple]
    end: int = 1 << 62          # one past the window's last element


def _provenance(state, wrong: Wrong, unwritten: int, padding: int | None, clock: Clock) -> None:
    i, v = wrong.index, wrong.value
    n_wrong = i.size
    block = i // 4
    lane = i % 4
    # 1. not written / padding.
    for at in np.flatnonzero(v == np.uint32(unwritten)):
        wrong.kind[at], wrong.detail[at] = "unwritten", ()
    if padding is not None:
        for at in np.flatnonzero((v == np.uint32(padding)) & np.array([k == "" for k in wrong.kind])):
            wrong.kind[at], wrong.detail[at] = "unwritten", ()
    todo = np.array([k == "" for k in wrong.kind])
    # 2. the same or a nearby block (any lane), nearest first.
    first_block = max(int(block.min()) - NEAR_BLOCKS, -(1 << 40))
    last_block = int(block.max()) + NEAR_BLOCKS
    local = reference.words(state, first_block * 4, (last_block - first_block + 1) * 4).reshape(-1, 4)
    offsets = sorted(range(-NEAR_BLOCKS, NEAR_BLOCKS + 1), key=lambda k: (abs(k), k < 0))
    rows = block - first_block
    for k in offsets:
        if not todo.any():
            break
        candidates = local[rows + k]                      # (w, 4)
        hit = (candidates == v[:, None]) & todo[:, None]
        if k == 0:
            hit[np.arange(n_wrong), lane] = False         # its own lane is the right word: not wrong
        for at in np.flatnonzero(hit.any(axis=1)):
            source = int(np.argmax(hit[at]))
            wrong.kind[at] = "same-block" if k == 0 else "near-block"
            wrong.detail[at] = (k, source)
        todo &= ~hit.any(axis=1)
    # 3. another element: the tensor's first HEAD elements and the window (a displacement).
    if todo.any() and clock.allows("other elements"):
        head = reference.words(state, 0, HEAD)
        order = np.argsort(head, kind="stable")
        sorted_head = head[order]
        at_list = np.flatnonzero(todo)
        pos = np.searchsorted(sorted_head, v[at_list])
        found = (pos < sorted_head.size) & (sorted_head[np.minimum(pos, sorted_head.size - 1)] == v[at_list])
        for at, p, ok in zip(at_list, pos, found):
            if ok:
                j = int(order[p])
                wrong.kind[at], wrong.detail[at] = "elsewhere", (j - int(i[at]),)
                todo[at] = False
    # 4. the same counter under another key, with another round count, with its words in another
    # order, or less 2^B (a lost carry): each family of candidates computed in one batch.
    if todo.any() and int(block[todo].min()) >= 0:
        for kind, compute in (("other-key", _other_keys), ("other-rounds", _other_rounds),
                              ("other-counter", _other_orders), ("lost-carry", _lost_carries)):
            if not todo.any() or not clock.allows(f"{kind} search"):
                break
            at_list = np.flatnonzero(todo)
            blocks, inverse = np.unique(block[at_list], return_inverse=True)
            names, candidates = compute(state, blocks)          # (variants, blocks, 4)
            hit = candidates[:, inverse, :] == v[at_list][None, :, None]
            matched = hit.any(axis=2)                           # (variants, elements)
            for column in np.flatnonzero(matched.any(axis=0)):
                variant = int(np.argmax(matched[:, column]))
                at = at_list[column]
                wrong.kind[at], wrong.detail[at] = kind, (names[variant], int(np.argmax(hit[variant, column])))
                todo[at] = False
    for at in np.flatnonzero(todo):
        wrong.kind[at], wrong.detail[at] = "nowhere", ()


def _batch(state, blocks: np.ndarray, counters: list, keys: list) -> np.ndarray:
    """(variants, blocks, 4) Philox words of each variant's counter words and key, in one call."""
    c = [np.concatenate([np.asarray(v[w], dtype=np.uint64) for v in counters]) for w in range(4)]
    k: list[Any] = [np.concatenate([np.full(blocks.size, key[w], dtype=np.uint64) for key in keys]) for w in range(2)]
    return philox.philox4x32(c[0], c[1], c[2], c[3], k[0], k[1]).reshape(len(counters), blocks.size, 4)


def _other_keys(state, blocks: np.ndarray) -> tuple[list[str], np.ndarray]:
    variants = _key_variants(state)
    ctr = counter.counters_at(state, blocks.astype(np.uint64))
    return [n for n, _ in variants], _batch(state, blocks, [ctr] * len(variants), [k for _, k in variants])


def _other_orders(state, blocks: np.ndarray) -> tuple[list[str], np.ndarray]:
    orders = _counter_orders()
    ctr = counter.counters_at(state, blocks.astype(np.uint64))
    key = counter.key_of(state)
    return [n for n, _ in orders], _batch(state, blocks, [[ctr[k] for k in o] for _, o in orders], [key] * len(orders))


def _lost_carries(state, blocks: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Block b keyed by counter + b - 2^B (mod 2^128): the carry out of bit B-1 lost."""
    base, key = counter.counter_of(state), counter.key_of(state)
    shifted = [counter.make_state((base - (1 << bits)) % (1 << 128), key) for bits in CARRY_BITS]
    ctrs = [counter.counters_at(s, blocks.astype(np.uint64)) for s in shifted]
    return [str(b) for b in CARRY_BITS], _batch(state, blocks, ctrs, [key] * len(CARRY_BITS))


def _other_rounds(state, blocks: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Philox4x32-R for each R in ROUNDS: one round at a time (round r uses the key bumped r times)."""
    ctr = counter.counters_at(state, blocks.astype(np.uint64))
    k0, k1 = counter.key_of(state)
    x = np.stack(ctr, axis=1).astype(np.uint32)   # 0 rounds
    found = {0: x}
    for r in range(1, max(ROUNDS) + 1):
        x = philox.philox4x32(x[:, 0], x[:, 1], x[:, 2], x[:, 3], k0, k1, rounds=1)
        found[r] = x
        k0, k1 = (k0 + philox.PHILOX_W0) & M32, (k1 + philox.PHILOX_W1) & M32
    return [str(r) for r in ROUNDS], np.stack([found[r] for r in ROUNDS])


KIND_TEXT = {
    "unwritten": "hold what the buffer held before the call (never written)",
    "same-block": "are words of their own block at another lane",
    "near-block": "are words of a nearby block",
    "elsewhere": "are other elements' words",
    "other-key": "are the words of the same counter under another key",
    "other-rounds": "are the words of the same counter and key with another round count",
    "other-counter": "are the words of the counter with its words in another order",
    "lost-carry": "are the words of the counter less 2^B (a carry lost at bit B)",
    "nowhere": "match nothing searched",
}


def _provenance_summary(wrong: Wrong, window_blocks: np.ndarray) -> dict:
    counts = Counter(wrong.kind)
    total = len(wrong.kind)
    groups: list[dict[str, Any]] = []
    for kind, count in counts.most_common():
        details = Counter(d for k, d in zip(wrong.kind, wrong.detail) if k == kind)
        groups.append({"kind": kind, "count": count, "text": _kind_text(kind, details, wrong, window_blocks)})
    top = groups[0]
    lead = f"{top['count']} of {total} wrong elements {KIND_TEXT[top['kind']]}"
    finding = f"{lead}: {top['text']}" if top["text"] else lead
    if len(groups) > 1:
        finding += "; " + "; ".join(f"{g['count']} {KIND_TEXT[g['kind']]}" for g in groups[1:3])
    return {"finding": finding, "counts": dict(counts), "groups": groups}


def _kind_text(kind: str, details: Counter, wrong: Wrong, window_blocks: np.ndarray) -> str:
    if kind in ("other-key", "other-counter", "other-rounds", "lost-carry"):
        details = Counter(d[:1] for d in details.elements())
    (detail, count), = details.most_common(1)
    share = "" if count == sum(details.values()) else f" (the most common: {count})"
    if kind in ("same-block", "near-block"):
        return _lane_map_text(wrong, window_blocks) or ""
    if kind == "elsewhere":
        d = detail[0]
        power = (-d).bit_length() - 1 if d < 0 and (-d) & (-d - 1) == 0 else None
        if power is not None and power >= 2:
            at = wrong.index[[k == kind and w == detail for k, w in zip(wrong.kind, wrong.detail)]]
            return (f"element i holds element i - 2^{power}{share} (from element {int(at.min())}): "
                    f"an element index that wraps at 2^{power}")
        return f"element i holds element i {'+' if d > 0 else '-'} {abs(d)}{share}"
    if kind in ("other-key", "other-counter"):
        return f"{detail[0]}{share}"
    if kind == "other-rounds":
        return f"Philox4x32-{detail[0]}{share}"
    if kind == "lost-carry":
        return f"B = {detail[0]}{share}"
    return ""


def _lane_maps(wrong: Wrong) -> dict[int, tuple]:
    """Per wrong block: lane l's source (block offset, lane), for the blocks whose wrong elements
    are all found in their own or a nearby block (lanes not wrong are (0, l))."""
    maps: dict[int, list] = {}
    bad: set[int] = set()
    for i, kind, detail in zip(wrong.index.tolist(), wrong.kind, wrong.detail):
        b, lane = divmod(int(i), 4)
        if kind not in ("same-block", "near-block"):
            bad.add(b)
            continue
        maps.setdefault(b, [(0, k) for k in range(4)])[lane] = detail
    found = {b: tuple(m) for b, m in maps.items() if b not in bad}
    # A block cut by the window's or the tensor's end takes a whole block's map that agrees on its lanes.
    end = wrong.end
    whole = {m for b, m in found.items() if 4 * b + 3 < end}
    for b, m in found.items():
        present = [lane for lane in range(4) if 4 * b + lane < end]
        if len(present) < 4:
            fits = [w for w in whole if all(w[lane] == m[lane] for lane in present)]
            found[b] = fits[0] if fits else tuple(m[lane] if lane in present else None for lane in range(4))
    return found


def _lane_map_text(wrong: Wrong, window_blocks: np.ndarray) -> str | None:
    maps = _lane_maps(wrong)
    if not maps:
        return None
    groups = Counter(maps.values())
    parts = []
    for lane_map, _ in groups.most_common(2):
        blocks = np.array(sorted(b for b, m in maps.items() if m == lane_map))
        where, _ = _block_set_text(blocks, window_blocks)
        parts.append(f"{_lane_map_words(lane_map)} {where}")
    more = f"; and {len(groups) - 2} other lane maps" if len(groups) > 2 else ""
    return "; ".join(parts) + more


def _lane_map_words(lane_map: tuple) -> str:
    if None in lane_map:  # a block cut by the end: its present lanes
        lanes = [lane for lane, m in enumerate(lane_map) if m is not None]
        return (f"lanes {tuple(lanes)} hold " +
                ", ".join(f"lane {s} of the {_ordinal(k)} block" if k else f"lane {s}"
                          for k, s in (lane_map[lane] for lane in lanes)))
    if all(k == 0 for k, _ in lane_map):
        order = tuple(s for _, s in lane_map)
        if sorted(order) == [0, 1, 2, 3]:
            return f"lanes permuted: lanes (0, 1, 2, 3) hold lanes {order}"
        return f"lanes (0, 1, 2, 3) hold lanes {order} of their block"
    moved = [f"lane {lane} holds lane {s} of the {_ordinal(k)} block" if k else f"lane {lane} holds lane {s}"
             for lane, (k, s) in enumerate(lane_map) if (k, s) != (0, lane)]
    return ", ".join(moved)


# -- bits ------------------------------------------------------------------------------------------

def _bits(right: np.ndarray, value: np.ndarray) -> dict:
    x = right ^ value
    bits = _bit_matrix(x)
    per_position = bits.sum(axis=0)
    mean = float(bits.sum(axis=1).mean()) if x.size else 0.0
    differing = np.flatnonzero(per_position)
    n = int(x.size)
    texts = []
    byte_order = next((list(p) for p in BYTE_ORDERS if np.array_equal(_bytes_permuted(right, p), value)), None)
    rotation = next((r for r in range(1, WORD) if np.array_equal(_rotl(right, r), value)), None)
    if byte_order is not None:
        name = ORDER_NAMES.get(_order4(byte_order), "")
        texts.append(f"each wrong word is its right word with its bytes in order {tuple(byte_order)}"
                     + (f": {name}" if name else ""))
    elif rotation is not None:
        texts.append(f"each wrong word is its right word rotated left by {rotation} bits")
    if differing.size == 1:
        b = int(differing[0])
        values = set(((value >> np.uint32(b)) & 1).tolist())
        how = f"; the wrong words' bit {b} is always {values.pop()} (stuck)" if len(values) == 1 and n > 1 else \
            " (flipped)"
        texts.append(f"only bit {b} differs, in each of the {n} wrong words{how}")
    elif differing.size and not texts:
        span = _bit_ranges(differing)
        stuck = []
        held = [np.flatnonzero(np.all(_bit_matrix(value) == level, axis=0) & (per_position > 0)) for level in (0, 1)]
        if n > 1 and sum(h.size for h in held) == differing.size:  # the difference is exactly bits held
            stuck = [f"bits {_bit_ranges(h)} always {level} in the wrong words"
                     for level, h in enumerate(held) if h.size]
        if differing.max() < 16 or differing.min() >= 16 or differing.max() // 8 == differing.min() // 8:
            texts.append(f"differences confined to bits {span}")
        texts.extend(stuck)
    density = "dense" if mean >= DENSE_BITS else "sparse" if mean <= SPARSE_BITS else "moderate"
    why = {"dense": "another function or other inputs", "sparse": "a fault in a few bits, not another function",
           "moderate": ""}[density]
    texts.append(f"{density}: {mean:.1f} of 32 bits differ per wrong word on average" + (f" ({why})" if why else ""))
    return {"finding": "; ".join(texts), "positions": per_position.astype(int).tolist(), "mean_bits": round(mean, 2),
            "density": density, "byte_order": byte_order, "rotation": rotation, "words": n}


# -- families --------------------------------------------------------------------------------------

def _window_words(state, first: int, count: int, **kw) -> np.ndarray:
    return reference.words(state, first, count, **kw)


def _families(state, first: int, actual: np.ndarray, expected: np.ndarray, wrong: Wrong,
              window_blocks: np.ndarray, clock: Clock) -> dict | None:
    """The first structured family that reproduces the whole window, as a diagnosis."""
    count = actual.size
    kinds = Counter(wrong.kind)
    top = kinds.most_common(1)[0][0] if kinds else ""
    # A lane permutation or shuffle: every wrong element from its own or a nearby block.
    if set(kinds) <= {"same-block", "near-block"}:
        maps = _lane_maps(wrong)
        if maps and len(Counter(maps.values())) <= 4:
            groups = Counter(maps.values())
            described, parameters = [], []
            for lane_map, _ in groups.most_common():
                blocks = np.array(sorted(b for b, m in maps.items() if m == lane_map))
                where, rule = _block_set_text(blocks, window_blocks)
                described.append(f"{_lane_map_words(lane_map)} {where}")
                parameters.append({"lanes": [None if m is None else list(m) for m in lane_map], **rule})
            if not np.array_equal(_lane_prediction(state, first, count, parameters), actual):
                # The rule said of the blocks does not hold past them: say the blocks themselves.
                for group, (lane_map, _) in zip(parameters, groups.most_common()):
                    group["blocks"] = sorted(b for b, m in maps.items() if m == lane_map)[:64]
                described = [f"{_lane_map_words(m)} in block{'s' if len(g['blocks']) > 1 else ''} "
                             f"{', '.join(map(str, g['blocks'][:6]))}"
                             f"{', ...' if len(g['blocks']) > 6 else ''}"
                             for g, (m, _) in zip(parameters, groups.most_common())]
                if not np.array_equal(_lane_prediction(state, first, count, parameters), actual):
                    return None
            shuffle = any(x[0] for m in groups for x in m if x is not None)
            return family("lane-shuffle" if shuffle else "lane-permutation", "; ".join(described),
                          maps=parameters)
    if top == "other-rounds" and kinds[top] == len(wrong.kind):
        rounds = int(Counter(d[0] for d in wrong.detail).most_common(1)[0][0])
        if np.array_equal(_window_words(state, first, count, rounds=rounds), actual):
            return family("round-count", f"Philox4x32-{rounds}: {rounds} rounds instead of 10", rounds=rounds)
    if top == "other-key" and kinds[top] == len(wrong.kind):
        name = Counter(d[0] for d in wrong.detail).most_common(1)[0][0]
        key = dict(_key_variants(state))[name]
        blocks = np.arange(first // 4, (first + count - 1) // 4 + 1)
        words = _blocks_at(state, blocks, key=key).reshape(-1)[first % 4:first % 4 + count]
        if np.array_equal(words, actual):
            return family("key-variant", f"the right counter under the key {name} = "
                          f"({_hex(key[0])}, {_hex(key[1])})", key=name, key_words=[_hex(key[0]), _hex(key[1])])
    if top == "other-counter" and kinds[top] == len(wrong.kind):
        name = Counter(d[0] for d in wrong.detail).most_common(1)[0][0]
        fed = dict(_counter_orders())[name]
        blocks = np.arange(first // 4, (first + count - 1) // 4 + 1)
        words = _blocks_at(state, blocks, counters=lambda c: [c[k] for k in fed]).reshape(-1)
        if np.array_equal(words[first % 4:first % 4 + count], actual):
            return family("counter-word-order", name, order=list(fed))
    if top == "lost-carry" and clock.allows("carry family"):
        found = _carry_family(state, first, actual)
        if found is not None:
            return found
    if top == "elsewhere" and kinds[top] == len(wrong.kind):
        d = int(Counter(x[0] for x in wrong.detail).most_common(1)[0][0])
        if d < 0 and (-d) & (-d - 1) == 0:
            k = (-d).bit_length() - 1
            index = np.arange(first, first + count, dtype=np.uint64) % np.uint64(1 << k)
            words = _blocks_at(state, index // np.uint64(4))[np.arange(count), (index % np.uint64(4)).astype(np.int64)]
            if np.array_equal(words, actual):
                return family("index-wrap", f"element i holds element i mod 2^{k}: an element index that wraps "
                              f"at 2^{k} (from element {1 << k} on the output repeats elements 0, 1, ...)", bits=k)
        if first + d >= 0 and np.array_equal(_window_words(state, first + d, count), actual):
            in_blocks = f", {abs(d) // 4} blocks" if d % 4 == 0 else ""
            return family("displacement", f"element i holds element i {'+' if d > 0 else '-'} {abs(d)} "
                          f"(the output shifted by {abs(d)} elements{in_blocks})", displacement=d)
    order: list[int] | None = _bits(expected, actual)["byte_order"] if not np.array_equal(expected, actual) else None
    if order is not None and np.array_equal(_bytes_permuted(expected, order), actual):
        name = ORDER_NAMES.get(_order4(order), "")
        return family("byte-order", f"every word stored with its bytes in order {tuple(order)}"
                      + (f" ({name})" if name else ""), order=order)
    return None


def _in_rule(b: int, rule) -> bool:
    if rule == "all":
        return True
    if isinstance(rule, dict):
        return b % rule["period"] in rule["residues"] if "period" in rule else b >= rule["from"]
    return b in rule


def _lane_prediction(state, first: int, count: int, parameters: list[dict]) -> np.ndarray:
    """The window's words with each block's lanes taken as its lane map (the first whose rule holds) says."""
    lo, hi = first // 4, (first + count - 1) // 4
    base = max(0, lo - NEAR_BLOCKS)
    local = reference.words(state, base * 4, (hi + NEAR_BLOCKS - base + 1) * 4).reshape(-1, 4)
    out = local[lo - base:hi - base + 1].copy()
    for b in range(lo, hi + 1):
        for group in parameters:
            if _in_rule(b, group["blocks"]):
                out[b - lo] = [local[b - base, lane] if m is None else local[b - base + m[0], m[1]]
                               if b - base + m[0] >= 0 else 0 for lane, m in enumerate(group["lanes"])]
                break
    return out.reshape(-1)[first % 4:first % 4 + count]


def _carry_family(state, first: int, actual: np.ndarray) -> dict | None:
    """The counter + block index carried only within its low B bits (B not 32, 64: those are named)."""
    count = actual.size
    blocks = np.arange(first // 4, (first + count - 1) // 4 + 1)
    base = counter.counter_of(state)
    key = counter.key_of(state)
    for bits in range(1, 128):
        if bits in (32, 64):
            continue
        mask = (1 << bits) - 1
        low = base & mask
        if low + int(blocks[-1]) <= mask:
            continue  # no carry out of bit B on this window: the same as the spec
        ctr = [(base & ~mask) | ((low + int(b)) & mask) for b in blocks.tolist()]
        words = np.array([[(c >> (32 * w)) & M32 for w in range(4)] for c in ctr], dtype=np.uint64)
        out = philox.philox4x32(words[:, 0], words[:, 1], words[:, 2], words[:, 3], *key).reshape(-1)
        if np.array_equal(out[first % 4:first % 4 + count], actual):
            return family("carry-boundary", f"counter + block index carried only within its low {bits} bits "
                          f"(the carry out of bit {bits - 1} lost)", bits=bits)
    return None


# -- the words anatomy -----------------------------------------------------------------------------

def _guarded(explain: Callable[..., tuple[dict | None, dict | None]]) -> Callable[..., tuple[dict | None, dict | None]]:
    """An anatomy never changes a verdict: a bug of its own is said in its findings, not raised."""
    def guarded(*args, **kwargs):
        try:
            return explain(*args, **kwargs)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as error:  # rngcheck's own bug: said, the verdict kept
            said = f"anatomy not computed: internal error in rngcheck ({type(error).__name__}: {error})"
            return {"findings": [said[:300]], "error": said[:1000]}, None
    return guarded


@_guarded
def explain_words(state, sizes, strides, tensor: np.ndarray, first_wrong: int, unwritten: int,
                  padding: int | None = None, *, named: bool = False) -> tuple[dict | None, dict | None]:
    """(anatomy, family diagnosis or None) of a wrong output, or (None, None) past the budget.

    ``tensor``: the tensor's extent after the call; ``first_wrong``: the first wrong element's
    logical index; ``named``: a named class already matched (no family is searched then).
    """
    clock = _clock()
    if clock is None:
        return None, None
    start = time.perf_counter()
    state = counter.state_array(state)
    n = layout.element_count(sizes)
    first = max(0, (first_wrong // 4 - 4) * 4)
    count = min(n - first, WINDOW)
    offsets = layout.physical_offsets(sizes, strides, first, count)
    actual = tensor[offsets]
    expected = reference.words(state, first, count)
    at = np.flatnonzero(actual != expected)
    if not at.size:
        return None, None
    examined = at[:EXAMINED]
    wrong = Wrong(first + examined, actual[examined], expected[examined], [""] * examined.size,
                  [()] * examined.size, first + count)
    # The blocks a rule about blocks speaks of: those wholly inside the window.
    window_blocks = np.arange(-(-first // 4), (first + count) // 4)
    _provenance(state, wrong, unwritten, padding, clock)
    anatomy: dict[str, Any] = {
        "window": {"first": int(first), "count": int(count)},
        "wrong": int(at.size), "examined": int(examined.size),
        "provenance": _provenance_summary(wrong, window_blocks),
        "bits": _bits(wrong.right, wrong.value),
    }
    found = None
    if not named and clock.allows("families"):
        found = _families(state, first, actual, expected, wrong, window_blocks, clock)
    anatomy["findings"] = [f"provenance: {anatomy['provenance']['finding']}", f"bits: {anatomy['bits']['finding']}"]
    anatomy["seconds"] = round(time.perf_counter() - start, 4)
    clock.spent(anatomy["seconds"])
    anatomy["budget_seconds"] = clock.seconds
    if clock.skipped:
        anatomy["skipped"] = clock.skipped
        anatomy["findings"].append(f"not searched (past the {clock.seconds:g} s budget): {', '.join(clock.skipped)}")
    return anatomy, found


# -- the state anatomy -----------------------------------------------------------------------------

@_guarded
def explain_state(state, element_count: int, actual, *, named: bool = False) -> tuple[dict | None, dict | None]:
    """(anatomy, family diagnosis or None) of a wrong returned state (cheap: no budget needed)."""
    state = counter.state_array(state)
    actual = np.asarray(actual, dtype=np.uint32).reshape(-1)
    expected = counter.advance(state, element_count)
    differences = [_signed(int(a) - int(e), 32) for a, e in zip(actual, expected)]
    expected_delta = counter.blocks_for(element_count)
    delta = _signed(counter.counter_of(actual) - counter.counter_of(state), 128)
    off = _signed(counter.counter_of(actual) - counter.counter_of(expected), 128)
    texts = [f"counter advanced by {_amount(delta)} (expected ceil(n/4) = {expected_delta} for n = {element_count})"]
    if off and abs(off) & (abs(off) - 1) == 0 and abs(off) > 1:
        texts.append(f"the counter is 2^{abs(off).bit_length() - 1} {'less' if off < 0 else 'more'} than expected "
                     f"(a carry {'into' if off < 0 else 'out of'} bit {abs(off).bit_length() - 1} "
                     f"{'lost' if off < 0 else 'added'})")
    changed_key = [w for w in (4, 5) if differences[w]]
    if changed_key:
        texts.append(f"key word{'s' if len(changed_key) > 1 else ''} {', '.join(map(str, changed_key))} changed "
                     f"by {', '.join(f'{differences[w]:+d}' for w in changed_key)}")
    wrong_words = [w for w in range(6) if differences[w]]
    texts.append("words differing (actual - expected, mod 2^32): " +
                 ", ".join(f"word {w}: {differences[w]:+d}" for w in wrong_words))
    anatomy = {"state": {"word_differences": differences, "counter_advance": str(delta),
                         "expected_advance": expected_delta, "finding": "; ".join(texts)},
               "findings": [f"state: {'; '.join(texts)}"]}
    found = None
    if not named and not changed_key:
        found = _state_family(state, element_count, actual, delta)
    return anatomy, found


def _state_family(state, n: int, actual: np.ndarray, delta: int) -> dict | None:
    right = counter.blocks_for(n)
    for bits in range(right.bit_length() + 1, 128):
        # A window no wider than the advance itself holds too little of it to tell a lost carry from another
        # advance (issue 40: an xor for an add looked like "carried within its low 1 bits").
        if bits not in (32, 64) and np.array_equal(counter.add_to_counter(state, right, counter_bits=bits), actual):
            return family("state-carry-boundary", f"output counter carried only within its low {bits} bits "
                          f"(the carry out of bit {bits - 1} lost)", bits=bits)
    if delta <= 0 or not np.array_equal(counter.add_to_counter(state, delta), actual):
        return None
    rules = [(f"{k}n", k * n) for k in range(2, 1025)] + [(f"ceil(n/4) {k:+d}", right + k) for k in range(-8, 9) if k]
    rules += [(f"ceil(n/{q})", -(-n // q)) for q in (2, 8, 16, 32)] + [(f"{k} * ceil(n/4)", k * right)
                                                                          for k in range(2, 65)]
    for rule, value in rules:
        if value == delta:
            return family("state-increment", f"counter advanced by {rule} instead of ceil(n/4) (here {delta} "
                          f"instead of {right})", rule=rule, advance=delta)
    return None
