"""The chain's search (issue 40): broken implementations of kinds no named class models are caught and named
with the exact step and parameters (tests/search_panel.py), coincidental names are said as such, and where the
search ends the diagnosis says which step first differs."""

import numpy as np
import pytest

import search_panel
from rngcheck import counter, generators, reference
from rngcheck.conformance.directml import anatomy, diagnosis, search
from rngcheck.conformance.known_answers import diagnosis as generator_diagnosis

STATE = (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0)
PACKED = ((301,), None)
STRIDED = ((7, 9), (10, 1))   # padding between rows: a placement can be told from the spec's


def layout_of(entry):
    return STRIDED if entry[2] else PACKED


@pytest.mark.parametrize("entry", search_panel.WORDS, ids=[e[0] for e in search_panel.WORDS])
def test_a_broken_operator_no_named_class_models_is_named_by_its_step_and_parameters(entry):
    sizes, strides = layout_of(entry)
    extent = search_panel.extent_of(entry, STATE, sizes, strides)
    n = int(np.prod(sizes))
    assert not np.array_equal(extent[:n], reference.words(STATE, 0, n)), "the broken one is right: no test"
    # No named class models it: the variants, the layouts and the anatomy's families name nothing.
    assert diagnosis.diagnose_output(STATE, sizes, strides, extent, 0)["id"] == "unknown"
    first_wrong = 0
    assert anatomy.explain_words(STATE, sizes, strides, extent, first_wrong, 0)[1] is None
    found = search.diagnose_words(STATE, sizes, strides, extent)
    assert (found["id"], found["parameters"]) == (entry[3], entry[4]), found
    assert all(f"{step}: " in found["summary"] for step in found["step"].split(" + "))
    assert found["matches"][0] == {"id": entry[3], "parameters": entry[4]}


def test_the_spec_s_parameters_are_the_reference():
    for count in (1, 4, 301):
        assert np.array_equal(search.chain_words(np.array(STATE, dtype=np.uint32), count),
                              reference.words(STATE, 0, count))


def test_a_weyl_swap_names_the_constants_in_the_spec_s_words():
    entry = search_panel.WORDS[1]
    found = search.diagnose_words(STATE, *PACKED, search_panel.extent_of(entry, STATE, *PACKED))
    assert found["summary"] == "key schedule: the Weyl constants are swapped (k0 += 0xBB67AE85, k1 += 0x9E3779B9)"


@pytest.mark.parametrize("entry", search_panel.GENERATORS, ids=[e[0] for e in search_panel.GENERATORS])
def test_a_broken_block_function_no_variant_models_is_named_by_its_step_and_parameters(entry):
    name, generator_name, knobs, rounds, expected, parameters = entry
    g = generators.get(generator_name)
    rng = np.random.default_rng(40)
    top = (1 << g.word_bits) - 1
    counters = rng.integers(0, top, (1, g.lanes), dtype=g.dtype, endpoint=True)   # one block: a known answer's
    key = tuple(int(k) for k in rng.integers(0, top, g.key_words, dtype=g.dtype, endpoint=True))
    got = search_panel.generator_blocks(g.family, counters, key, rounds, g.word_bits, knobs)
    assert not np.array_equal(got, g.blocks(counters, key)), "the broken one is right: no test"
    assert not generator_diagnosis.matching_variants(g, g.default_rounds, counters, key, got)
    found = generator_diagnosis.diagnose(g, g.default_rounds, counters, key, got)
    assert (found["id"], found["parameters"]) == (expected, parameters), found
    assert found["step"]


def test_the_panel_has_at_least_15_broken_implementations_of_10_kinds_no_existing_model_names():
    from rngcheck.conformance.known_answers import search as block_search

    new = {"key-word-masked", "key-schedule-weyl", "key-schedule-bump-first", "round-multipliers",
           "round-product-halves", "round-key-xor", "two-steps", *block_search.IDS}
    assert new <= set(diagnosis.registered_ids()) | set(generator_diagnosis.registered_ids())
    entries = [e[3] for e in search_panel.WORDS] + [e[4] for e in search_panel.GENERATORS]
    assert len(entries) >= 15 and sum(id_ in new for id_ in entries) >= 10


# -- coincidental names (issue 40): a class read off one case that another fault reproduces there ----------

def test_a_counter_xored_instead_of_added_is_not_a_carry_lost_at_bit_1():
    state = counter.state_array((0x1235, 0, 0, 0, 7, 9))   # an odd counter, n = 4: an advance of 1
    xored = state.copy()
    xored[0] ^= 1
    assert diagnosis.diagnose_state(state, 4, xored)["id"] == "unknown-state"
    assert anatomy.explain_state(state, 4, xored)[1] is None   # was state-carry-boundary, "low 1 bits"
    carried = counter.add_to_counter(counter.state_array((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 5, 7, 9)), 2,
                                     counter_bits=96)
    found = anatomy.explain_state((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 5, 7, 9), 8, carried)[1]
    assert found["id"] == "state-carry-boundary" and found["parameters"] == {"bits": 96}


def test_an_advance_of_two_blocks_per_four_elements_on_two_elements_is_said_to_be_indistinct():
    state = counter.state_array(STATE)
    twice = counter.add_to_counter(state, 2 * 1)     # 2 * ceil(n/4) with n = 2: also n, also ceil(n/4) + 1
    named = diagnosis.diagnose_state(state, 2, twice)
    assert named["id"] == "increment-n"
    assert "state-increment" in named["alternatives"]
    assert {"id": "state-increment", "parameters": {"rule": "2 * ceil(n/4)"}} in named["matches"]
    assert "too small a case" in named["indistinct"]
    assert "indistinct" not in diagnosis.diagnose_state(state, 10, counter.add_to_counter(state, 10))


def test_key_word_1_masked_to_16_bits_is_not_only_the_key_high_word_ignored_when_its_low_half_is_zero():
    state = (*STATE[:4], 0xA4093822, 0x299F0000)    # k1's low 16 bits are 0: masking it leaves 0
    entry = [e for e in search_panel.WORDS if e[0] == "key-word-1-masked-to-16-bits"][0]
    extent = search_panel.extent_of(entry, state, *PACKED)
    named = diagnosis.diagnose_output(state, *PACKED, extent, 0)
    assert named["id"] == "key-high-ignored" and named["alternatives"] == []   # the named class alone
    completed = search.complete(named, state, *PACKED, extent)
    assert completed["id"] == "key-high-ignored"
    assert {"id": "key-word-masked", "parameters": {"word": 5, "mask": "0x0000FFFF"}} in completed["matches"]
    assert "key-word-masked" in completed["alternatives"] and "k1" in completed["indistinct"]
    from rngcheck.results.text import anatomy_lines

    assert anatomy_lines(completed)[-1].startswith("indistinct: the same words on this case: state layout: key word 5")


# -- inference where the search ends --------------------------------------------------------------------

def test_where_nothing_matches_the_inference_says_the_counter_it_was_computed_at():
    extent = reference.words(STATE, 12, 301)   # the first block at counter + 3: not in the catalog
    found = search.diagnose_words(STATE, *PACKED, extent)
    assert found["id"] == "unknown"
    assert "another counter" in found["inference"] and "counter + 3" in found["inference"]
    assert found["search"]["pairs_tried"] == found["search"]["pairs"]


def test_where_nothing_matches_the_inference_says_the_lanes_or_the_function():
    right = reference.words(STATE, 0, 300).reshape(-1, 4)
    shuffled = right[:, [1, 0, 3, 2]].reshape(-1)
    assert "the lanes' order differs" in search.diagnose_words(STATE, (300,), None, shuffled)["inference"]
    damaged = right.reshape(-1) ^ np.uint32(0x80000001)
    assert "the key, the key schedule or the round function" in \
        search.diagnose_words(STATE, (300,), None, damaged)["inference"]


def test_the_search_stops_at_its_budget_and_says_what_it_did_not_try():
    damaged = reference.words(STATE, 0, 301) ^ np.uint32(1)
    found = search.diagnose_words(STATE, *PACKED, damaged, seconds=0.0)
    assert found["id"] == "unknown" and "not_tried" in found["search"]


def test_through_the_check_the_search_names_the_case():
    from rngcheck.conformance.directml import cases as C
    from rngcheck.conformance.directml.check import FAILED, run_case

    entry = search_panel.WORDS[0]
    case = C.Case(id="searched", category="searched", description="", rule="", source="", state=STATE,
                  sizes=(301,), strides=None)
    outcome = run_case(search_panel.Broken(entry[0], entry[1]), case)
    assert outcome.status == FAILED
    assert (outcome.diagnosis["id"], outcome.diagnosis["parameters"]) == (entry[3], entry[4])
    assert "anatomy" in outcome.diagnosis and outcome.message.endswith("looks like: round-multipliers")


def test_through_the_check_an_unmatched_case_carries_the_inference_in_its_anatomy():
    from panel import KnobbedPhilox
    from rngcheck.conformance.directml import cases as C
    from rngcheck.conformance.directml.check import run_case

    class FarBlocks(KnobbedPhilox):   # the first block at counter + 2^40: in no catalog, no block nearby
        def logical_words(self, state, n):
            return reference.words(state, 4 << 40, n)

    case = C.Case(id="far", category="far", description="", rule="", source="", state=STATE, sizes=(301,))
    outcome = run_case(FarBlocks(), case)
    assert outcome.diagnosis["id"] == "unknown"
    assert "counter + 1099511627776" in outcome.diagnosis["inference"]
    assert any("another counter" in line for line in outcome.diagnosis["anatomy"]["findings"])


def test_through_the_run_a_broken_generator_backend_is_named_by_the_search_within_its_budget():
    from generator_backend_panel import PanelBackend
    from rngcheck.conformance.runner import NamedBackend, RunOptions, run

    class WeylSwapped(PanelBackend):
        family = "philox"

        def generator_blocks(self, generator, rounds, counters, key):
            lanes, bits = self.generator_request(generator, counters)
            return search_panel.generator_blocks("philox", counters, key, int(rounds), bits, {"weyl_order": (1, 0)})

    results = run([NamedBackend("weyl", WeylSwapped())], RunOptions(select=["generator/philox4x32-*"]))["results"]
    failed = [r for r in results if r["status"] == "failed"]
    assert failed and all(r["diagnosis"]["id"] == "philox-weyl" for r in failed), [r["diagnosis"] for r in failed]
    assert all(r["diagnosis"]["parameters"] == {"weyl": ["0xBB67AE85", "0x9E3779B9"]} for r in failed)


def test_a_change_another_class_names_alone_is_tried_in_pairs_only():
    """The key bumped before the first round is the anatomy's key-variant "the key bumped once": one name for
    one fault, whichever of the two looks first; with 7 rounds the pair is the search's."""
    state = np.array(STATE, dtype=np.uint32)
    bumped = search.chain_words(state, 301, {"bump_first": True})
    assert search.diagnose_words(STATE, *PACKED, bumped)["id"] == "unknown"
    assert anatomy.explain_words(STATE, *PACKED, bumped, 0, 0)[1]["id"] == "key-variant"
    both = search.diagnose_words(STATE, *PACKED, search.chain_words(state, 301, {"bump_first": True, "rounds": 7}))
    assert both["id"] == "two-steps" and [c["id"] for c in both["parameters"]["changes"]] == \
        ["key-schedule-bump-first", "rounds-7"]


@pytest.mark.parametrize("name", ["weyl-swapped", "product-halves-swapped-in-one-lane", "key-word-1-masked-to-16-bits",
                                  "rounds-7-and-weyl-swapped"])
def test_one_fault_is_one_id_with_the_same_parameters_on_every_state_and_layout(name):
    """What a cross-case check intersects: model parameters, never this case's observations."""
    from test_panel import LAYOUTS, STATES

    entry, = [e for e in search_panel.WORDS if e[0] == name]
    layouts = [LAYOUTS[0], LAYOUTS[2], LAYOUTS[5]]   # 3 elements; 3-D strided; 5003 elements strided
    from rngcheck import layout

    for state in STATES:
        for sizes, strides in layouts:
            extent = search_panel.extent_of(entry, state, sizes, strides)
            n = layout.element_count(sizes)
            if np.array_equal(extent[layout.physical_offsets(sizes, strides)], reference.words(state, 0, n)):
                continue   # the fault does not show here (key word 5 is 0 in one state: nothing to mask)
            found = search.diagnose_words(state, sizes, strides, extent)
            assert (found["id"], found["parameters"]) == (entry[3], entry[4]), (state, sizes, found)


@pytest.mark.parametrize("name", ["threefry2x32", "threefry4x32", "threefry2x64", "threefry4x64"])
def test_the_search_s_one_block_threefry_is_rngcheck_s(name):
    from rngcheck import threefry
    from rngcheck.conformance.known_answers import search as block_search

    g = generators.get(name)
    rng = np.random.default_rng(7)
    top = (1 << g.word_bits) - 1
    for trial in range(8):
        counters = rng.integers(0, top, (1, g.lanes), dtype=g.dtype, endpoint=True)
        key = tuple(int(k) for k in rng.integers(0, top, g.lanes, dtype=g.dtype, endpoint=True))
        table = tuple(tuple(int(v) for v in rng.integers(0, g.word_bits, g.lanes // 2)) for _ in range(8))
        parity, rounds = int(rng.integers(0, top, dtype=g.dtype, endpoint=True)), 13 + trial
        assert np.array_equal(block_search.blocks(g, counters, key, rounds, {"rotations": table, "parity": parity}),
                              threefry.threefry(counters, key, rounds, rotations=table, parity=parity))


def test_where_nothing_matches_the_inference_says_which_key_of_state_words_gives_the_words():
    state = np.array(STATE, dtype=np.uint32)
    one_word_late = np.array([*state[1:5], state[5], 0], dtype=np.uint32)   # the state read one word late
    found = search.diagnose_words(STATE, *PACKED, reference.words(one_word_late, 0, 301))
    assert found["id"] == "unknown"
    assert found["inference"].startswith("the words equal Philox4x32-10 with key (0x299F31D0, 0x00000000) = "
                                         "(state word 5, 0) at counters from (0x85A308D3, 0x13198A2E, 0x03707344, "
                                         "0xA4093822) (state words 1-4), 1 apart")
    one_block = search.diagnose_words(STATE, (4,), None, reference.words(STATE, 0, 4) ^ np.uint32(1))
    assert "another counter" not in one_block["inference"]   # one block says nothing of a counter's step
