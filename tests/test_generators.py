"""The generator axis (rngcheck.generators, philox.py, threefry.py) against Random123's known answers."""

from pathlib import Path

import numpy as np
import pytest

from helpers import unavailable
from rngcheck import generators, philox, threefry
from rngcheck.errors import RngcheckError, VectorFileError
from rngcheck.vectors import kat_not_implemented, kat_vectors, parse_kat

SHARED_KAT = Path(__file__).resolve().parents[2] / "shared" / "reference" / "random123_kat_vectors.txt"
KATS = kat_vectors()
# Random123's kat_vectors: the round counts it tests per generator.
ROUNDS = {"philox2x32": {7, 10}, "philox4x32": {7, 10}, "philox2x64": {7, 10}, "philox4x64": {7, 10},
          "threefry2x32": {13, 20, 32}, "threefry4x32": {13, 20, 72},
          "threefry2x64": {13, 20, 32}, "threefry4x64": {13, 20, 72}, "ars4x32": {10}, "aesni4x32": {10}}
LINES = {"ars4x32": 3, "aesni4x32": 4}  # the others: three lines per round count


def as_array(generator, words):
    return np.array([words], dtype=generator.dtype)


@pytest.mark.parametrize("vector", KATS, ids=lambda v: v.id)
def test_every_random123_line_is_exact_on_the_reference(vector):
    generator = generators.get(vector.generator)
    block = generator.blocks(as_array(generator, vector.counter), vector.key, vector.rounds)
    assert block.dtype == generator.dtype and block.shape == (1, generator.lanes)
    assert tuple(int(w) for w in block[0]) == vector.expected


def test_every_generator_has_all_its_random123_lines():
    counts = {name: sorted(v.rounds for v in KATS if v.generator == name) for name in generators.NAMES}
    assert counts == {name: sorted(list(rounds) * LINES.get(name, 3)) for name, rounds in ROUNDS.items()}
    assert len({v.id for v in KATS}) == len(KATS) == 67


def test_every_shared_line_is_either_a_vector_or_listed_as_not_implemented():
    if not SHARED_KAT.is_file():
        unavailable(f"{SHARED_KAT} is missing (shared/reference is not beside this checkout)")
    shared = [line for line in SHARED_KAT.read_text().splitlines() if line.strip() and not line.startswith("#")]
    kept = [v.line for v in KATS] + [n.line for n in kat_not_implemented()]
    assert sorted(kept) == sorted(shared)
    assert {n.line.split()[0] for n in kat_not_implemented()} == set(generators.NOT_IMPLEMENTED)
    assert all(n.reason for n in kat_not_implemented())


def test_blocks_of_many_counters_equal_one_block_at_a_time():
    rng = np.random.default_rng(28)
    for generator in generators.GENERATORS:
        info = np.iinfo(generator.dtype)
        counters = rng.integers(0, info.max, size=(37, generator.lanes), dtype=generator.dtype, endpoint=True)
        key = [int(w) for w in rng.integers(0, info.max, size=generator.key_words, dtype=generator.dtype)]
        whole = generator.blocks(counters, key)
        rows = np.concatenate([generator.blocks(counters[i:i + 1], key) for i in range(len(counters))])
        np.testing.assert_array_equal(whole, rows)
        assert len({tuple(row) for row in whole.tolist()}) == len(counters)  # a bijection: no collisions here


def test_the_general_philox_equals_the_directml_hot_path():
    rng = np.random.default_rng(4)
    counters = rng.integers(0, 1 << 32, size=(1000, 4), dtype=np.uint64).astype(np.uint32)
    for rounds in (0, 1, 7, 10):
        fast = philox.philox4x32(*(counters[:, i] for i in range(4)), 0xDEADBEEF, 0x12345678, rounds=rounds)
        np.testing.assert_array_equal(philox.philox(counters, (0xDEADBEEF, 0x12345678), rounds), fast)


@pytest.mark.parametrize("a", [0, 1, (1 << 32) - 1, 1 << 32, (1 << 64) - 1, 0x243F6A8885A308D3])
def test_mulhilo64_equals_python_integers(a):
    for m in (philox.PHILOX_M2X64_0, philox.PHILOX_M4X64_0, philox.PHILOX_M4X64_1, (1 << 64) - 1):
        high, low = philox.mulhilo64(np.array([a], dtype=np.uint64), m)
        assert (int(high[0]) << 64) | int(low[0]) == a * m


def test_threefry_defaults_are_the_standard_and_the_variants_differ():
    counters = np.array([[1, 2], [3, 4]], dtype=np.uint32)
    standard = threefry.threefry(counters, (5, 6), 20)
    same = threefry.threefry(counters, (5, 6), 20, rotations=threefry.ROTATIONS_2X32, parity=threefry.PARITY_32,
                             injection_period=4, initial_injection=True)
    np.testing.assert_array_equal(standard, same)
    variants = [dict(parity=0), dict(parity=threefry.PARITY_64), dict(injection_period=1), dict(injection_period=0),
                dict(initial_injection=False), dict(rotations=tuple((r[0] + 1,) for r in threefry.ROTATIONS_2X32))]
    for variant in variants:
        assert not np.array_equal(threefry.threefry(counters, (5, 6), 20, **variant), standard), variant


def test_an_unknown_generator_is_one_line_naming_the_known_ones():
    with pytest.raises(RngcheckError) as error:
        generators.get("mt19937")
    assert "\n" not in str(error.value) and "'mt19937'" in str(error.value) and "threefry2x32" in str(error.value)
    assert generators.get("ars4x32").key_words == 4 and generators.get("aesni4x32").default_rounds == 10


def test_the_generators_are_one_registry_in_table_order():
    assert generators.NAMES == generators.REGISTRY.names() == tuple(g.name for g in generators.GENERATORS)
    assert generators.NAMES[:2] == ("philox2x32", "philox4x32") and generators.NAMES[-1] == "aesni4x32"
    assert all(generators.get(g.name) is g for g in generators.GENERATORS)
    assert generators.PHILOX4X32 is generators.REGISTRY["philox4x32"] and generators.PHILOX4X32.label == "Philox4x32-10"


def test_blocks_refuse_the_wrong_shape_dtype_or_key():
    g = generators.get("threefry2x64")
    with pytest.raises(ValueError, match="shape"):
        g.blocks(np.zeros((3, 2), dtype=np.uint32), (0, 0))
    with pytest.raises(ValueError, match="key word"):
        g.blocks(np.zeros((3, 2), dtype=np.uint64), (0,))
    with pytest.raises(ValueError, match="64-bit"):
        g.blocks(np.zeros((3, 2), dtype=np.uint64), (0, 1 << 64))


def test_a_kat_file_with_an_unknown_generator_or_a_wide_word_is_refused_in_one_line():
    entry = {"generator": "threefry2x32", "rounds": 20, "counter": ["0x0", "0x0"], "key": ["0x0", "0x0"],
             "expected": ["0x0", "0x0"], "line": "", "source": ""}
    assert parse_kat({"vectors": [entry]})[0].key == (0, 0)
    with pytest.raises(VectorFileError, match="generator 'mt19937'"):
        parse_kat({"vectors": [{**entry, "generator": "mt19937"}]})
    with pytest.raises(VectorFileError, match="32-bit"):
        parse_kat({"vectors": [{**entry, "key": ["0x0", "0x100000000"]}]})
    with pytest.raises(VectorFileError, match="2 hex words"):
        parse_kat({"vectors": [{**entry, "counter": ["0x0"] * 4}]})


def test_philox4x32_keeps_its_case_ids():
    ids = sorted(f"kat/{v.id}" for v in kat_vectors(generator="philox4x32") if v.rounds == 10)
    assert ids == ["kat/philox4x32-10-00000000-00000000", "kat/philox4x32-10-243f6a88-a4093822",
                   "kat/philox4x32-10-ffffffff-ffffffff"]
    assert "philox4x64-10-243f6a8885a308d3-452821e638d01377" in {v.id for v in KATS}


def python_block_words(generator, value, key, rounds=None):
    """One block of an operator stream, computed from Python integers: the counter value split into
    W-bit lanes, the output lanes split into 32-bit words (low half first)."""
    w = generator.word_bits
    lanes = [(value >> (w * i)) & ((1 << w) - 1) for i in range(generator.lanes)]
    block = generator.blocks(np.array([lanes], dtype=generator.dtype), key, rounds)[0]
    return [(int(lane) >> (32 * j)) & 0xFFFFFFFF for lane in block for j in range(w // 32)]


@pytest.mark.parametrize("generator", generators.GENERATORS, ids=lambda g: g.name)
def test_reference_words_follow_the_operator_rule_for_every_generator_across_the_counter_carries(generator):
    from rngcheck import reference

    top = 1 << generator.counter_bits
    key = [(0x0123456789ABCDEF * (i + 3)) & ((1 << generator.word_bits) - 1) for i in range(generator.key_words)]
    key32 = [(k >> (32 * j)) & 0xFFFFFFFF for k in key for j in range(generator.word_bits // 32)]
    per = generator.words_per_block
    for start in (0, (1 << 32) - 2, (1 << 64) - 2, top - 3, top // 2 - 1):
        state = [(start >> (32 * i)) & 0xFFFFFFFF for i in range(generator.counter_bits // 32)] + key32
        got = reference.words(np.array(state, dtype=np.uint32), 3, 5 * per, generator=generator)
        expected = [word for j in range(7) for word in python_block_words(generator, (start + j) % top, key)]
        np.testing.assert_array_equal(got, np.array(expected[3:3 + 5 * per], dtype=np.uint32))
    if generator is generators.PHILOX4X32:  # the default is Philox4x32-10, as before
        np.testing.assert_array_equal(reference.words(np.array(state, dtype=np.uint32), 0, 8),
                                      reference.words(np.array(state, dtype=np.uint32), 0, 8, generator=generator))


def test_the_generic_stream_equals_the_directml_hot_path():
    g = generators.PHILOX4X32
    for start in (0, (1 << 32) - 3, (1 << 64) - 3, (1 << 96) - 3, (1 << 128) - 3):
        state = [(start >> (32 * i)) & 0xFFFFFFFF for i in range(4)] + [0xA4093822, 0x299F31D0]
        fast = g.stream(np.array(state, dtype=np.uint32), 1, 9)
        generic = generators._stream(g, np.array(state, dtype=np.uint32), 1, 9, 10, None)
        np.testing.assert_array_equal(fast, generic)


@pytest.mark.parametrize("lanes, rounds", [(2, 4), (2, 20), (4, 8), (4, 20)])
def test_the_power_panel_s_threefry_is_the_block_by_block_generator(lanes, rounds):
    """rngcheck.stats.weak_generators.threefry_source against the panel's own ThreeFry on Python ints."""
    import generator_panel
    from rngcheck.stats import weak_generators

    key = 0x1234 | (0xABCDEF01 << 32)
    key_words = [(key >> (32 * i)) & 0xFFFFFFFF for i in range(lanes)]
    start = (1 << 32 * lanes) - 3  # across the counter's wrap
    counters = [[((start + b) % (1 << 32 * lanes) >> (32 * i)) & 0xFFFFFFFF for i in range(lanes)] for b in range(9)]
    want = generator_panel.blocks("threefry", counters, key_words, rounds, 32).reshape(-1)
    source = weak_generators.threefry_source(lanes, key, rounds, counter_start=start)
    np.testing.assert_array_equal(source.read(want.size), want)
    np.testing.assert_array_equal(source.at(5).read(11), want[5:16])


def test_aes_is_fips_197_appendix_b_and_c1():
    """FIPS-197's own examples (appendix A.1: the last round key of its key expansion; appendix C.1,
    also a Random123 line) and the S-box's first entries (figure 7)."""
    from rngcheck import aes

    assert [int(b) for b in aes.SBOX[:4]] == [0x63, 0x7C, 0x77, 0x7B] and int(aes.SBOX[0x53]) == 0xED
    key = [int.from_bytes(bytes.fromhex(h), "little") for h in ("2b7e1516", "28aed2a6", "abf71588", "09cf4f3c")]
    assert bytes(aes.expand_key(key)[10]).hex() == "d014f9a8c9ee2589e13f0cc8b6630ca6"
    plain = np.frombuffer(bytes.fromhex("00112233445566778899aabbccddeeff"), dtype="<u4").reshape(1, 4)
    key = [int(w) for w in np.frombuffer(bytes.fromhex("000102030405060708090a0b0c0d0e0f"), dtype="<u4")]
    assert aes.aes4x32(plain.astype(np.uint32), key).astype("<u4").tobytes().hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"
