"""The generator-level diagnosis names every broken block function of the panel (tests/generator_panel.py)."""

import numpy as np
import pytest

import generator_panel
from rngcheck import generators
from rngcheck.conformance import checks
from rngcheck.conformance.directml import diagnosis
from rngcheck.conformance.known_answers import diagnosis as generator_diagnosis
from rngcheck.conformance.known_answers.diagnosis import diagnose_blocks
from rngcheck.vectors import kat_vectors


def panel_counters(generator):
    """Random123's three counters (zero, all ones, pi) and a seeded random one, with a seeded key."""
    rng = np.random.default_rng(1123)
    top = (1 << generator.word_bits) - 1
    pi = [v.counter for v in kat_vectors(generator=generator.name)][2]
    rows = [[0] * generator.lanes, [top] * generator.lanes, list(pi),
            [int(v) for v in rng.integers(0, top, generator.lanes, dtype=generator.dtype, endpoint=True)]]
    key = [int(v) for v in rng.integers(0, top, generator.key_words, dtype=generator.dtype, endpoint=True)]
    return np.array(rows, dtype=generator.dtype), key


def cases():
    for generator in generators.GENERATORS:
        entries = generator_panel.PANEL + (generator_panel.PANEL_4_LANES if generator.lanes == 4 else [])
        for name, family, knobs, expected in entries:
            if family == generator.family:
                yield pytest.param(generator, name, knobs, expected, id=f"{generator.name}-{name}")


PANEL_FAMILIES = ("philox", "threefry")  # the panel writes these again (not ARS or AES)
PANEL_GENERATORS = [g for g in generators.GENERATORS if g.family in PANEL_FAMILIES]


@pytest.mark.parametrize("vector", [v for v in kat_vectors() if generators.get(v.generator).family in PANEL_FAMILIES],
                         ids=lambda v: v.id)
def test_the_panel_s_unbroken_block_functions_give_every_known_answer(vector):
    g = generators.get(vector.generator)
    got = generator_panel.blocks(g.family, [vector.counter], vector.key, vector.rounds, g.word_bits)
    assert tuple(int(w) for w in got[0]) == vector.expected
    assert diagnose_blocks(g, vector.rounds, [vector.counter], vector.key, got) is None


@pytest.mark.parametrize("generator, name, knobs, expected", list(cases()))
def test_each_broken_block_function_is_caught_and_named(generator, name, knobs, expected):
    counters, key = panel_counters(generator)
    rounds = generator.default_rounds
    got = generator_panel.blocks(generator.family, counters, key, rounds, generator.word_bits,
                                 **knobs(generator.word_bits, generator.lanes))
    assert not np.array_equal(got, generator.blocks(counters, key, rounds)), "the broken one is right: no test"
    assert diagnose_blocks(generator, rounds, counters, key, got) == expected


@pytest.mark.parametrize("generator", PANEL_GENERATORS, ids=lambda g: g.name)
def test_a_wrong_round_count_is_named_with_the_rounds_it_ran(generator):
    counters, key = panel_counters(generator)
    tried = (13, 20, 32, 72) if generator.family == "threefry" else (7, 6, 12)
    for wrong in tried:
        if wrong == generator.default_rounds:
            continue
        got = generator_panel.blocks(generator.family, counters, key, wrong, generator.word_bits)
        assert diagnose_blocks(generator, generator.default_rounds, counters, key, got) == checks.rounds_id(wrong)
    # and at a non-default count, the default is a wrong count too
    other = 13 if generator.family == "threefry" else 7
    got = generator_panel.blocks(generator.family, counters, key, generator.default_rounds, generator.word_bits)
    assert diagnose_blocks(generator, other, counters, key, got) == checks.rounds_id(generator.default_rounds)


def test_unknown_damage_is_not_named():
    g = generators.get("threefry2x32")
    counters, key = panel_counters(g)
    got = g.blocks(counters, key)
    got[1, 0] ^= np.uint32(1)
    assert diagnose_blocks(g, 20, counters, key, got) is None
    assert diagnose_blocks(g, 20, counters, key, got[:2]) is None  # wrong shape: nothing predicts it


def test_generator_ids_have_one_home_and_do_not_collide_with_the_operator_s():
    ids = [v.id for v in generator_diagnosis.VARIANTS]
    assert len(ids) == len(set(ids))
    operator_ids = {v.id for v in diagnosis.WORD_VARIANTS} | set(checks.CHECKS) | set(diagnosis.FAMILIES)
    assert not set(ids) & operator_ids
    named = {expected for _, _, _, expected in generator_panel.PANEL + generator_panel.PANEL_4_LANES}
    assert named <= set(generator_diagnosis.registered_ids())
    # every ThreeFry and Philox class has a broken implementation in the panel
    assert {v.id for v in generator_diagnosis.VARIANTS if v.families is not None} <= named


@pytest.mark.parametrize("name", ["threefry2x32", "threefry4x64", "philox2x64"])
def test_the_operator_diagnosis_takes_the_generator(name):
    """diagnosis.diagnose_output on an operator built on another generator: its words, its variants."""
    from rngcheck import reference

    g = generators.get(name)
    state = np.arange(1, g.state_words + 1, dtype=np.uint32) * np.uint32(0x01010101)
    n = 6 * g.words_per_block + 1
    right = reference.words(state, 0, n, generator=g)
    assert diagnosis.diagnose_output(state, (n,), None, right.copy(), 0, generator=g)["id"] == "unknown"
    wrong_rounds = g.wrong_rounds[0]
    fewer = reference.words(state, 0, n, rounds=wrong_rounds, generator=g)
    named = diagnosis.diagnose_output(state, (n,), None, fewer, 0, generator=g)["id"]
    assert named == checks.rounds_id(wrong_rounds)
    late = reference.words(state, g.words_per_block, n, generator=g)
    assert diagnosis.diagnose_output(state, (n,), None, late, 0, generator=g)["id"] == "counter-plus-one"


@pytest.mark.parametrize("name", ["ars4x32", "aesni4x32"])
def test_ars_and_aes_with_another_round_count_are_named(name):
    """No independent AES in the panel: the blocks come from rngcheck.aes at another count, and the
    known answers (tests/test_generators.py) pin rngcheck.aes itself."""
    g = generators.get(name)
    counters, key = panel_counters(g)
    wrong = g.wrong_rounds[0]
    got = g.blocks(counters, key, wrong)
    assert diagnose_blocks(g, g.default_rounds, counters, key, got) == checks.rounds_id(wrong)
    right = g.blocks(counters, key)
    assert diagnose_blocks(g, g.default_rounds, counters, key, right[:, ::-1]) == "block-lanes-reversed"
