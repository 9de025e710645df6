"""Named divergences of rng_bit_generator: the variants other implementations run.

StableHLO leaves the variant implementation-defined (rngcheck.stablehlo), so an output other than
XLA's is not "wrong": it is a *divergence*, and rngcheck names which one by running models of the
known variants on the same call and reporting the smallest set of them that predicts the output
(state and elements) exactly. The ids and their summaries live here only (one home).

Sources of the variants: IREE's lowering (iree-org/iree compiler/plugins/input/StableHLO,
StablehloToLinalgRandom.cpp: "TODO(#14859): Properly handle 128-bit storage keys"), measured with
iree-base-compiler/-runtime 3.13.0 on the llvm-cpu target (docs/adding-an-operator.md).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ... import counter, reference, stablehlo

DIVERGENCES = {
    "key-in-counter-high": "PHILOX with a u64[3] state: the counter's high 64 bits are the key (state[0]), as "
                           "XLA does for a u64[2] state, not state[2]",
    "counter-64-no-carry": "PHILOX: the block counter is 64 bits: state[1] + b wraps mod 2^64 without carrying "
                           "into the counter's high half",
    "third-state-word-ignored": "PHILOX with a u64[3] state: state[2] is passed through to the output state "
                                "unchanged",
}
DIAGNOSED_ELEMENTS = 4096   # the prefix of the output a variant is compared on (bounded work)


def divergence(ids: tuple[str, ...]) -> dict:
    """A diagnosis naming registered divergences (KeyError for an id not in DIVERGENCES)."""
    for id_ in ids:
        if id_ not in DIVERGENCES:
            raise KeyError(f"divergence id {id_!r} is not registered in rng_bit_generator.diagnosis.DIVERGENCES")
    return {"id": "+".join(ids), "summary": "; ".join(DIVERGENCES[i] for i in ids), "divergences": list(ids),
            "implementation_defined": True}


def _philox_variant(call: stablehlo.Call, count: int, flags: frozenset) -> tuple[tuple[int, ...], np.ndarray]:
    """(new state, first ``count`` elements) of PHILOX under the divergences ``flags``."""
    key = call.state[0]
    three = len(call.state) == 3
    low = call.state[1]
    high = call.state[2] if three and "key-in-counter-high" not in flags else key
    per_word = 2 if call.bits == 64 else 1
    words32 = per_word * count
    blocks_needed = -(-words32 // 4)
    k = (key & 0xFFFFFFFF, key >> 32)
    if "counter-64-no-carry" in flags:
        before_wrap = (1 << 64) - low
        first_run = min(blocks_needed, before_wrap)
        stream = [reference.words(counter.make_state((high << 64) | low, k), 0, 4 * first_run)]
        if blocks_needed > first_run:
            stream.append(reference.words(counter.make_state(high << 64, k), 0, 4 * (blocks_needed - first_run)))
        words = np.concatenate(stream)[:words32]
    else:
        words = reference.words(counter.make_state((high << 64) | low, k), 0, words32)
    if call.bits == 64:
        pairs = words.astype(np.uint64)
        elements = pairs[0::2] | (pairs[1::2] << np.uint64(32))
    else:
        elements = words.astype(call.unsigned)
    used = stablehlo.philox_blocks(call)
    if "counter-64-no-carry" in flags:
        advanced = (high << 64) | ((low + used) % (1 << 64))
    else:
        advanced = (((high << 64) | low) + used) % (1 << 128)
    if not three:
        return (key, advanced & ((1 << 64) - 1)), elements
    new_high = call.state[2] if "third-state-word-ignored" in flags else advanced >> 64
    return (key, advanced & ((1 << 64) - 1), new_high), elements


def diagnose(call: stablehlo.Call, state: np.ndarray, output: np.ndarray) -> dict | None:
    """The smallest set of divergences that predicts ``state`` and ``output`` (the backend's, as the
    unsigned bits of its elements), or None when none does."""
    if call.resolved != stablehlo.PHILOX:
        return None
    count = min(call.element_count, DIAGNOSED_ELEMENTS)
    actual_state = tuple(int(w) for w in np.asarray(state).reshape(-1))
    actual = np.asarray(output).reshape(-1)[:count]
    ids = tuple(DIVERGENCES)
    for size in range(1, len(ids) + 1):
        for chosen in combinations(ids, size):
            predicted_state, predicted = _philox_variant(call, count, frozenset(chosen))
            if predicted_state == actual_state and np.array_equal(predicted, actual):
                reference_state = tuple(int(w) for w in stablehlo.new_state(call))
                same = reference_state == predicted_state and np.array_equal(stablehlo.words(call, 0, count),
                                                                             predicted)
                if not same:
                    return divergence(chosen)
    return None


def registered_ids() -> dict[str, str]:
    """Every id this axis's diagnosis gives: each divergence alone (a set of them is joined by "+")."""
    return dict(DIVERGENCES)

