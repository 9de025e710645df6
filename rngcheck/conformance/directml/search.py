"""The operator as a chain of named steps, searched when no named class matches (issue 40).

DirectML's rule 2 (rngcheck.reference) written as steps whose parameters are data (``SPEC``):

1. state layout: which state words make the counter (``significance``, least significant first),
   the order its words are fed to the rounds (``fed``), which words are the key (``key_order``) and
   how much of each is used (``key_mask``);
2. counter increment: the first block's offset (``first_block``), the bits the block index carries
   within (``carry_bits``), a block per element (``per_element``);
3. key schedule: the Weyl constants (``weyl``) and whether the key is bumped before the first round
   too (``bump_first``);
4. round function: the multipliers (``multipliers``), which products' high and low halves are
   exchanged (``halves``), which key word is xored into which lane (``key_xor``);
5. rounds (``rounds``);
6. lanes' order: each block's lanes permuted (``lanes``: reversed; in pairs, the lane orders the anatomy
   names alone), handed out lane-major (``hand_out``);
7. placement: where element i is written (``placement``: a layout variant of diagnosis.py).

CHANGES is the catalog (rngcheck.conformance.chain.Change): what implementations really do at each
step. An existing id is a named point of the catalog (``key-words-swapped``, ``carry-32-bit``,
``rounds-7``, ...); the new ones are diagnosis.FAMILIES'. ``diagnose_words`` runs the search of
rngcheck.conformance.chain on the first diagnosis.PREFIX elements (the whole case for at most that
many), and when nothing matches says where the replayed chain first differs (``inference``).
The output state's rule is diagnosis.diagnose_state's (its own, cheaper search).
"""

from __future__ import annotations

import numpy as np

from ... import counter, layout, reference
from ...generators import PHILOX4X32, PHILOX_WRONG_ROUNDS
from .. import chain
from ..chain import Change, hexed
from ..checks import rounds_id
from . import diagnosis as named_classes

M32 = 0xFFFFFFFF
PROBE = 64  # elements compared first (most candidates differ there); a match is then checked whole
SPEC: dict = {
    "significance": (0, 1, 2, 3), "fed": (0, 1, 2, 3), "key_order": (4, 5), "key_mask": (M32, M32),
    "first_block": 0, "carry_bits": 128, "per_element": False,
    "weyl": chain.WEYL_32, "bump_first": False,
    "multipliers": chain.PHILOX_4X32, "halves": (False, False), "key_xor": (0, 1),
    "rounds": 10, "lanes": (0, 1, 2, 3), "hand_out": "block-major", "placement": "spec",
}
STEPS = ("state layout", "counter increment", "key schedule", "round function", "rounds", "lanes' order",
         "placement")


# -- the chain -------------------------------------------------------------------------------------

def _counters(state: np.ndarray, blocks: int, k: dict) -> list[np.ndarray]:
    """Steps 1-2: the four counter words fed to the rounds for blocks 0 .. blocks-1 (uint64 arrays)."""
    words = [int(w) for w in state]
    value = sum(words[w] << (32 * i) for i, w in enumerate(k["significance"]))
    field = (1 << k["carry_bits"]) - 1
    high = value & ~field & ((1 << 128) - 1)
    values = [high | ((value + k["first_block"] + b) & field) for b in range(blocks)]
    limbs = [np.array([(v >> (32 * i)) & M32 for v in values], dtype=np.uint64) for i in range(4)]
    return [limbs[i] for i in k["fed"]]


def _rounds(x: list[np.ndarray], key: tuple[int, int], k: dict) -> np.ndarray:
    """Steps 3-5: the rounds on counter words x under ``key``, as (blocks, 4) uint32."""
    m0, m1 = (np.uint64(m) for m in k["multipliers"])
    w0, w1 = k["weyl"]
    k0, k1 = key
    into = k["key_xor"]
    shift, low = np.uint64(32), np.uint64(M32)
    for r in range(k["rounds"]):
        if r or k["bump_first"]:
            k0, k1 = (k0 + w0) & M32, (k1 + w1) & M32
        p0, p1 = x[0] * m0, x[2] * m1
        hi0, lo0, hi1, lo1 = p0 >> shift, p0 & low, p1 >> shift, p1 & low
        if k["halves"][0]:
            hi0, lo0 = lo0, hi0
        if k["halves"][1]:
            hi1, lo1 = lo1, hi1
        keys = (np.uint64(k0), np.uint64(k1))
        x = [hi1 ^ x[1] ^ keys[into[0]], lo1, hi0 ^ x[3] ^ keys[into[1]], lo0]
    return np.stack(x, axis=1).astype(np.uint32)


def chain_words(state: np.ndarray, count: int, knobs: dict | None = None) -> np.ndarray:
    """Elements 0 .. count-1 in logical order, by the chain with ``knobs`` changed (the spec's: reference.words)."""
    k = {**SPEC, **(knobs or {})}
    blocks = count if k["per_element"] else counter.blocks_for(count)
    words = [int(w) for w in state]
    key = tuple(words[w] & mask for w, mask in zip(k["key_order"], k["key_mask"]))
    out = _rounds(_counters(state, blocks, k), (key[0], key[1]), k)
    if tuple(k["lanes"]) != (0, 1, 2, 3):
        out = out[:, list(k["lanes"])]   # output lane j holds the round function's lane lanes[j]
    i = np.arange(count)
    if k["per_element"]:
        return out[i, i % 4]
    if k["hand_out"] == "lane-major":
        return out[i % blocks, i // blocks]
    return out.reshape(-1)[:count]


# -- the catalog -----------------------------------------------------------------------------------

def _state_layout() -> list[Change]:
    step = STEPS[0]
    changes = [
        Change("key-words-swapped", step, "the key words swapped (word 5 used as k0)", {"key_words": [5, 4]},
               {"key_order": (5, 4)}),
        Change("key-high-ignored", step, "only the low key word used (k1 taken as 0)",
               {"word": 5, "mask": hexed(0)}, {"key_mask": (M32, 0)}),
        Change("counter-words-reversed", step, "counter words in reverse order (word 3 least significant), fed "
               "in state order", {"significance": [3, 2, 1, 0], "fed": [3, 2, 1, 0]},
               {"significance": (3, 2, 1, 0), "fed": (3, 2, 1, 0)}),
        Change("counter-words-msb-first", step, "counter words taken most significant first (set_counter order)",
               {"significance": [3, 2, 1, 0], "fed": [0, 1, 2, 3]}, {"significance": (3, 2, 1, 0)}),
    ]
    for word, position in ((4, 0), (5, 1)):
        for mask in (0xFFFF, 0xFFFF0000, 0) if word == 4 else (0xFFFF, 0xFFFF0000):
            masks = tuple(mask if p == position else M32 for p in range(2))
            what = "taken as 0" if mask == 0 else f"masked to {hexed(mask)} (16 bits kept)"
            # k0 taken as 0 alone is the anatomy's key-variant (0, k1): in pairs only.
            changes.append(Change("key-word-masked", step, f"key word {word} (k{position}) {what}",
                                  {"word": word, "mask": hexed(mask)}, {"key_mask": masks}, alone=mask != 0))
    return changes


def _counter_increment() -> list[Change]:
    step = STEPS[1]
    changes = [Change("counter-plus-one", step, "first block at counter + 1 instead of counter",
                      {"first_block": 1}, {"first_block": 1}),
               Change("block-per-element", step, "counter advanced per element (counter + i) instead of per 4",
                      {"per_element": True}, {"per_element": True})]
    for bits in (32, 64, 96):
        id_ = {32: "carry-32-bit", 64: "carry-64-bit"}.get(bits, "carry-boundary")
        changes.append(Change(id_, step, f"counter + block index carried only within its low {bits} bits",
                              {"bits": bits}, {"carry_bits": bits}))
    return changes


def _key_schedule() -> list[Change]:
    step = STEPS[2]
    w0, w1 = chain.WEYL_32
    catalog = chain.weyl_catalog(32)
    pairs = [((w1, w0), f"the Weyl constants are swapped (k0 += {hexed(w1)}, k1 += {hexed(w0)})"),
             ((0, 0), "the key is not bumped between rounds (Weyl constants 0)")]
    for position in (0, 1):
        for value, source in catalog.items():
            if value != chain.WEYL_32[position]:
                weyl = (value, w1) if position == 0 else (w0, value)
                pairs.append((weyl, f"k{position} += {hexed(value)} ({source}) instead of "
                                    f"{hexed(chain.WEYL_32[position])}"))
    changes = [Change("key-schedule-weyl", step, text, {"weyl": [hexed(v) for v in weyl]}, {"weyl": weyl})
               for weyl, text in pairs]
    # Alone it is the anatomy's key-variant "the key bumped once" (one name for one fault): in pairs only.
    changes.append(Change("key-schedule-bump-first", step, "the key bumped before the first round too (round r "
                          "uses k + (r + 1) * W instead of k + r * W)", {"bump": "before every round"},
                          {"bump_first": True}, alone=False))
    return changes


def _round_function() -> list[Change]:
    step = STEPS[3]
    m0, m1 = chain.PHILOX_4X32
    found = [((m1, m0), f"the multipliers are swapped (M0 = {hexed(m1)} on x0, M1 = {hexed(m0)} on x2)")]
    for position in (0, 1):
        for value, source in chain.multiplier_catalog(32).items():
            if value != chain.PHILOX_4X32[position]:
                pair = (value, m1) if position == 0 else (m0, value)
                found.append((pair, f"M{position} = {hexed(value)} ({source}) instead of "
                                    f"{hexed(chain.PHILOX_4X32[position])}"))
    changes = [Change("round-multipliers", step, text, {"multipliers": [hexed(v) for v in pair]},
                      {"multipliers": pair}) for pair, text in found]
    for halves, text in (((True, False), "M0 * x0's halves exchanged (its low half xored into lane 2, its "
                                         "high half to lane 3)"),
                         ((False, True), "M1 * x2's halves exchanged (its low half xored into lane 0, its "
                                         "high half to lane 1)"),
                         ((True, True), "both products' high and low halves exchanged")):
        changes.append(Change("round-product-halves", step, text,
                              {"exchanged": [p for p, h in enumerate(halves) if h]}, {"halves": halves}))
    changes.append(Change("round-key-xor", step, "k1 xored into lane 0 and k0 into lane 2 (the key words "
                          "exchanged in the round)", {"key_xor": ["k1", "k0"]}, {"key_xor": (1, 0)}))
    return changes


def _rounds_changes() -> list[Change]:
    named = [Change(rounds_id(r), STEPS[4], f"{r} rounds instead of 10", {"rounds": r}, {"rounds": r})
             for r in PHILOX4X32.wrong_rounds]
    others = [r for r in range(0, 21) if r != 10 and r not in PHILOX_WRONG_ROUNDS]
    return named + [Change("round-count", STEPS[4], f"{r} rounds instead of 10", {"rounds": r}, {"rounds": r})
                    for r in others]


def _lanes_and_placement() -> list[Change]:
    # Other lane orders alone are the anatomy's lane-permutation (its parameters): in pairs only.
    others = [Change("lane-permutation", STEPS[5], f"each block's lanes in order {', '.join(map(str, p))}",
                     {"lanes": list(p)}, {"lanes": p}, alone=False)
              for p in ((1, 0, 3, 2), (2, 3, 0, 1), (1, 2, 3, 0), (3, 0, 1, 2))]
    lanes = [Change("lanes-reversed", STEPS[5], "the four lanes of each block in reverse order",
                    {"lanes": [3, 2, 1, 0]}, {"lanes": (3, 2, 1, 0)}), *others,
             Change("lane-major", STEPS[5], "lanes handed out lane-major (element i from block i mod m)",
                    {"hand_out": "lane-major"}, {"hand_out": "lane-major"})]
    placed = [Change(v.id, STEPS[6], v.summary, {"placement": v.id}, {"placement": v.id})
              for v in named_classes.LAYOUT_VARIANTS]
    return lanes + placed


CHANGES: tuple[Change, ...] = (*_state_layout(), *_counter_increment(), *_key_schedule(), *_round_function(),
                               *_rounds_changes(), *_lanes_and_placement())


# -- the search ------------------------------------------------------------------------------------

def _placements(sizes, strides, count: int, extent: np.ndarray) -> dict[str, np.ndarray]:
    """The words the backend left at each placement's offsets of elements 0 .. count-1 (where it fits)."""
    placed = {"spec": layout.physical_offsets(sizes, strides, 0, count)}
    if layout.element_count(sizes) <= named_classes.DIAGNOSIS_LIMIT:
        for variant in named_classes.LAYOUT_VARIANTS:
            placed[variant.id] = np.asarray(variant.predict(sizes, strides))[:count]
    return {name: extent[at] for name, at in placed.items() if at.size == count and at.max(initial=-1) < extent.size
            and (name == "spec" or not np.array_equal(at, placed["spec"]))}


def _reproducer(state: np.ndarray, observed: dict[str, np.ndarray], right: np.ndarray):
    """reproduces(knobs): the chain's words equal what the backend left at that placement (rule 3)."""
    count = right.size
    probe = min(count, PROBE)

    def reproduces(knobs: dict) -> bool:
        seen = observed.get(knobs.get("placement", "spec"))
        if seen is None or not np.array_equal(chain_words(state, probe, knobs), seen[:probe]):
            return False
        words = chain_words(state, count, knobs) if count > probe else seen
        if knobs.get("placement", "spec") == "spec" and np.array_equal(words, right):
            return False  # the spec's words on this case: nothing to tell
        return np.array_equal(words, seen)
    return reproduces


def diagnose_words(state, sizes, strides, extent: np.ndarray, *, seconds: float = chain.SECONDS) -> dict:
    """The chain's single changes, then pairs, that reproduce the case; else "unknown" with ``inference``."""
    state = counter.state_array(state)
    n = layout.element_count(sizes)
    count = min(n, named_classes.PREFIX)
    if layout.aliases(sizes, strides) or count == 0:
        return {"id": "unknown", "summary": "the output matches no known bug class", "alternatives": []}
    observed = _placements(sizes, strides, count, extent)
    right = reference.words(state, 0, count)
    found = chain.search(CHANGES, _reproducer(state, observed, right), seconds)
    named = chain.diagnosis(found)
    if named is not None:
        return named
    unknown = {"id": "unknown", "summary": "the output matches no known bug class and no change of one or two "
               "steps of the chain", "alternatives": [], "search": chain.cost(found)}
    return {**unknown, "inference": infer(state, observed["spec"], right)}


POINT_IDS = frozenset(c.id for c in CHANGES)


def complete(named: dict, state, sizes, strides, extent: np.ndarray) -> dict:
    """A named class that is a point of the chain, with every single change that reproduces the case too
    (``alternatives``, ``matches`` with their parameters; ``indistinct`` when another class's does: the case
    is too small to tell them apart). Cheap: the catalog's single changes on a probe."""
    if named.get("id") not in POINT_IDS or layout.aliases(sizes, strides):
        return named
    state = counter.state_array(state)
    count = min(layout.element_count(sizes), named_classes.PREFIX)
    observed = _placements(sizes, strides, count, extent)
    reproduces = _reproducer(state, observed, reference.words(state, 0, count))
    hits = [c for c in CHANGES if c.alone and reproduces(c.knobs)]
    others = [c for c in hits if c.id != named["id"]]
    if not others:
        return named
    listed = list(dict.fromkeys([*named.get("alternatives", []), *(c.id for c in others)]))
    return {**named, "alternatives": listed, "matches": [{"id": c.id, "parameters": c.parameters} for c in hits],
            "indistinct": "the same words on this case: " + "; ".join(f"{c.step}: {c.summary}" for c in others)}


# -- inference where the search ends ---------------------------------------------------------------

def _inverse_rounds(y: np.ndarray, key: tuple[int, int], rounds: int = 10) -> np.ndarray:
    """Philox4x32-R run backwards under ``key``: the counters (blocks, 4) that give blocks ``y``."""
    m0, m1 = (np.uint64(m) for m in chain.PHILOX_4X32)
    inv0, inv1 = (np.uint64(pow(int(m), -1, 1 << 32)) for m in (m0, m1))
    shift, low = np.uint64(32), np.uint64(M32)
    w0, w1 = chain.WEYL_32
    x = [y[:, lane].astype(np.uint64) for lane in range(4)]
    for r in reversed(range(rounds)):
        k0, k1 = (key[0] + r * w0) & M32, (key[1] + r * w1) & M32
        x2 = (x[1] * inv1) & low
        x0 = (x[3] * inv0) & low
        x1 = x[0] ^ ((x2 * m1) >> shift) ^ np.uint64(k0)
        x3 = x[2] ^ ((x0 * m0) >> shift) ^ np.uint64(k1)
        x = [x0, x1, x2, x3]
    return np.stack(x, axis=1).astype(np.uint32)


def _counter_value(row) -> int:
    return sum(int(w) << (32 * i) for i, w in enumerate(row))


def _consecutive(values: list[int]) -> int | None:
    """The step between the counters of consecutive blocks when it is one small step (2 blocks at least)."""
    steps = {(b - a) % (1 << 128) for a, b in zip(values, values[1:])}
    return steps.pop() if len(values) >= 2 and len(steps) == 1 and max(steps) < 1 << 20 else None


def _counter_text(value: int, base: int) -> str:
    offset = (value - base) % (1 << 128)
    return f"counter + {offset}" if offset < 1 << 64 else f"counter - {(1 << 128) - offset}" \
        if (1 << 128) - offset < 1 << 64 else "unrelated to the state's counter"


def _other_key(state: np.ndarray, seen_blocks: np.ndarray) -> str | None:
    """A key made of state words (or 0) under which the blocks are Philox4x32-10 of consecutive counters."""
    words = [int(w) for w in state] + [0]
    names = [f"state word {i}" for i in range(6)] + ["0"]
    spec = counter.key_of(state)
    for i, j in ((i, j) for i in range(7) for j in range(7)):
        key = (words[i], words[j])
        if key == tuple(spec):
            continue
        recovered = _inverse_rounds(seen_blocks, key)
        values = [_counter_value(row) for row in recovered]
        step = _consecutive(values)
        if step is not None:
            shown = ", ".join(hexed(int(w)) for w in recovered[0])
            window = [k for k in range(3) if [int(w) for w in recovered[0]] == words[k:k + 4]]
            where = f"state words {window[0]}-{window[0] + 3}" if window else \
                _counter_text(values[0], counter.counter_of(state))
            return (f"the words equal Philox4x32-10 with key ({hexed(key[0])}, {hexed(key[1])}) = ({names[i]}, "
                    f"{names[j]}) at counters from ({shown}) ({where}), {step} apart: the state layout differs "
                    f"(which words are the counter and the key)")
    return None


def infer(state: np.ndarray, seen: np.ndarray, right: np.ndarray) -> str:
    """Where the replayed chain first differs, in one line (bounded: a pass over the compared words, Philox
    run backwards under the state's key and under 48 keys made of state words, on at most 64 blocks)."""
    whole = min(seen.size // 4 * 4, 256)
    if whole and np.array_equal(np.sort(seen[:whole].reshape(-1, 4), axis=1), np.sort(right[:whole].reshape(-1, 4),
                                                                                        axis=1)):
        return "each block holds the spec's four words: the lanes match after the round function, the lanes' " \
               "order differs"
    if np.array_equal(np.sort(seen), np.sort(right)):
        return "every word is one of the spec's words: the words match, the placement (or the lanes' order) differs"
    if not whole:
        return "fewer than 4 elements: no block to replay"
    seen_blocks = seen[:whole].reshape(-1, 4)
    blocks = _inverse_rounds(seen_blocks, counter.key_of(state))
    values = [_counter_value(row) for row in blocks]
    base = counter.counter_of(state)
    shown = ", ".join(hexed(int(w)) for w in blocks[0])
    step = _consecutive(values)
    if step is not None:
        return (f"the words equal Philox4x32-10 under the state's key with another counter: block 0 at "
                f"({shown}) = {_counter_text(values[0], base)}, blocks {step} apart "
                f"(the state layout or the counter increment differs)")
    near = sum(abs(v - base) < 1 << 32 for v in values)
    if near > len(values) // 2:
        return (f"the words equal Philox4x32-10 under the state's key at counters near the state's ({near} of "
                f"{len(values)} blocks within 2^32; block 0 at ({shown})): the counter increment differs")
    return _other_key(state, seen_blocks) or (
        "no counter under the state's key or a key of state words gives these words (Philox4x32-10 run backwards "
        "gives counters unrelated to the state's): the key, the key schedule or the round function differs")
