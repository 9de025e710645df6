"""The generator backends (issue #28): every backend that computes generator blocks passes every
Random123 known answer it claims, through the worker process as ``rngcheck run`` hosts it (the exec
protocol's GENB/BLKS); what it cannot compute is not applicable, never a pass; broken generator
backends (tests/generator_backend_panel.py, on tests/generator_panel.py's block functions) are caught
and named. With CI=true a missing library fails.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import generator_backend_panel as panel
import generator_panel
from helpers import isolated_backend
from rngcheck import generators
from rngcheck.backends import exec_protocol as P
from rngcheck.backends.contract import generator_shape
from rngcheck.backends.reference import NumpyBackend
from rngcheck.conformance.directml import cases as C
from rngcheck.conformance.known_answers import cases as KA
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.errors import NotApplicable
from rngcheck.results.statuses import FAILED, NOT_APPLICABLE, PASSED
from rngcheck.vectors import kat_vectors

PANEL_FILE = Path(__file__).resolve().parent / "generator_backend_panel.py"
ALL_LINES = Counter(v.generator for v in kat_vectors())
AES_BASED = {"ars4x32", "aesni4x32"}   # Random123 computes them with AES-NI only


def generator_results(backend, spec="backend"):
    """{case id: (status, message)} of every generator case on ``backend``."""
    document = run([NamedBackend(spec, backend)], RunOptions(select=["generator"]))
    return {r["case"]: (r["status"], r["message"]) for r in document["results"]}


def passed_per_generator(results) -> Counter:
    return Counter(case.split("/")[1].split("-")[0] for case, (status, _) in results.items() if status == PASSED)


def assert_only_passed_or_not_applicable(results):
    broken = {case: found for case, found in results.items()
              if found[0] not in (PASSED, NOT_APPLICABLE)
              or (found[0] == NOT_APPLICABLE and "not applicable" not in found[1])}
    assert not broken, broken


def default_rounds_lines(names) -> Counter:
    return Counter(v.generator for v in kat_vectors() if v.generator in names
                   and v.rounds == generators.get(v.generator).default_rounds)


# ---- the cases ----------------------------------------------------------------------------

def test_every_known_answer_is_one_generator_case_and_the_kat_cases_stay():
    cases = KA.generator_cases()
    assert len(cases) == sum(ALL_LINES.values()) and set(ALL_LINES) == set(generators.NAMES)
    assert all(c.id.startswith("generator/") and c.procedure == KA.GENERATOR for c in cases)
    assert [c.id for c in C.kat_cases()] == ["kat/philox4x32-10-00000000-00000000",
                                              "kat/philox4x32-10-ffffffff-ffffffff",
                                              "kat/philox4x32-10-243f6a88-a4093822"]
    assert all(c.procedure == C.EXECUTE for c in C.kat_cases())


# ---- the real implementations --------------------------------------------------------------

def test_reference_passes_every_line():
    results = generator_results(NumpyBackend(), "numpy")
    assert passed_per_generator(results) == ALL_LINES


@pytest.mark.parametrize("spec, modules, expected", [
    ("random123", (), "all"),
    ("randomgen", ("randomgen",), "default-rounds"),
    ("jax", ("jax",), {"threefry2x32": 3}),
    ("tensorflow:jit_compile=1", ("tensorflow",), {"threefry2x32": 3, "philox4x32": 3}),
    ("tensorflow", ("tensorflow",), {"threefry2x32": 3, "philox4x32": 3}),
])
def test_library_passes_every_line_it_claims_through_its_worker(spec, modules, expected):
    backend = isolated_backend(spec, *modules)
    try:
        results = generator_results(backend, spec)
        claimed = backend.generators
    finally:
        backend.close()
    assert_only_passed_or_not_applicable(results)
    if expected == "all":   # every line; the AES-based ones where the CPU has AES-NI (else not applicable)
        expected = {name: n for name, n in ALL_LINES.items() if name in claimed}
        assert set(ALL_LINES) - set(claimed) <= AES_BASED
    elif expected == "default-rounds":
        expected = default_rounds_lines(claimed)
        assert set(claimed) == set(generators.NAMES) - {"ars4x32"}   # randomgen: Philox, ThreeFry, AESCounter
    assert passed_per_generator(results) == Counter(expected)
    assert set(expected) <= set(claimed)


def test_random123_ars_at_every_round_count_and_aesni_at_ten_equal_the_reference():
    """Random123's AES-based generators (AES-NI) against rngcheck's numpy AES (rngcheck.aes), beyond the
    known answers' 10 rounds: ARS at 1 to 10 rounds; AESNI only at its 10 (aesni4x32_R takes no other)."""
    backend = isolated_backend("random123")
    reference = NumpyBackend()
    counters = np.array([[1, 2, 3, 4], [0xFFFFFFFF, 0, 5, 6]], dtype=np.uint32)
    key = (9, 8, 7, 0xFFFFFFFF)
    try:
        if not AES_BASED <= set(backend.generators):
            unavailable_here = "this CPU has no AES-NI: Random123's ARS and AESNI are not applicable"
            assert not AES_BASED & set(backend.generators), unavailable_here
            pytest.skip(unavailable_here)
        for rounds in (1, 5, 10):
            assert np.array_equal(backend.generator_blocks("ars4x32", rounds, counters, key),
                                  reference.generator_blocks("ars4x32", rounds, counters, key)), rounds
        assert np.array_equal(backend.generator_blocks("aesni4x32", 10, counters, key),
                              reference.generator_blocks("aesni4x32", 10, counters, key))
        with pytest.raises(NotApplicable, match="takes no 9 rounds"):
            backend.generator_blocks("aesni4x32", 9, counters, key)
    finally:
        backend.close()


def test_random123_takes_every_round_count_its_header_takes_and_refuses_others():
    backend = isolated_backend("random123")
    reference = NumpyBackend()
    counters = np.array([[1, 2, 3, 4], [0xFFFFFFFF, 0, 7, 9]], dtype=np.uint64)
    try:
        for rounds in (1, 5, 16):
            assert np.array_equal(backend.generator_blocks("philox4x64", rounds, counters, (5, 6)),
                                  reference.generator_blocks("philox4x64", rounds, counters, (5, 6)))
        for rounds in (1, 21, 72):
            assert np.array_equal(backend.generator_blocks("threefry4x64", rounds, counters, (5, 6, 7, 8)),
                                  reference.generator_blocks("threefry4x64", rounds, counters, (5, 6, 7, 8)))
        with pytest.raises(NotApplicable, match="takes no 17 rounds"):
            backend.generator_blocks("philox4x64", 17, counters, (5, 6))
        with pytest.raises(NotApplicable, match="takes no 33 rounds"):
            backend.generator_blocks("threefry2x64", 33, counters[:, :2], (5, 6))
        with pytest.raises(NotApplicable, match="key"):
            backend.generator_blocks("threefry2x64", 20, counters[:, :2], (5,))
    finally:
        backend.close()


def test_randomgen_blocks_of_many_counters_equal_the_reference():
    """Several blocks in one call, counters crossing 2^(N*W) (randomgen starts one block early)."""
    backend = isolated_backend("randomgen", "randomgen")
    reference = NumpyBackend()
    try:
        assert set(backend.generators) == set(generators.NAMES) - {"ars4x32"}
        for name in backend.generators:
            g = generators.get(name)
            top = (1 << g.word_bits) - 1
            counters = np.array([[0] * g.lanes, [top] * g.lanes, [1] + [top] * (g.lanes - 1)], dtype=g.dtype)
            key = tuple(range(3, 3 + g.key_words))
            rounds = g.default_rounds
            assert np.array_equal(backend.generator_blocks(name, rounds, counters, key),
                                  reference.generator_blocks(name, rounds, counters, key)), name
    finally:
        backend.close()


# ---- not applicable is never a pass ------------------------------------------------------------

def test_a_backend_without_generators_is_not_applicable_for_every_case():
    class WordsOnly(panel.RightThreeFry):
        def __init__(self):
            super().__init__()
            self.generators = ()

    results = generator_results(WordsOnly())
    assert {status for status, _ in results.values()} == {NOT_APPLICABLE}
    assert all("computes no" in message for _, message in results.values())


def test_a_round_count_the_backend_refuses_is_not_applicable():
    class TwentyOnly(panel.RightThreeFry):
        def generator_blocks(self, generator, rounds, counters, key):
            if rounds != 20:
                raise NotApplicable(f"only 20 rounds, not {rounds}")
            return super().generator_blocks(generator, rounds, counters, key)

    results = generator_results(TwentyOnly())
    threefry_lines = sum(n for name, n in ALL_LINES.items() if name.startswith("threefry"))
    assert passed_per_generator(results) == {name: 3 for name in ALL_LINES if name.startswith("threefry")}
    assert sum(status == NOT_APPLICABLE and "only 20 rounds" in message
               for status, message in results.values()) == threefry_lines - 12


# ---- the panel -------------------------------------------------------------------------------

@pytest.mark.parametrize("right", [panel.RightThreeFry, panel.RightPhilox])
def test_the_panel_without_a_knob_passes_every_line_of_its_family(right):
    """The panel's own blocks are right: what a knob breaks is the only thing wrong with a broken one."""
    expected = Counter({name: n for name, n in ALL_LINES.items() if name.startswith(right.family)})
    assert passed_per_generator(generator_results(right())) == expected


PANEL_NAMES = [entry[0] for entry in generator_panel.PANEL + generator_panel.PANEL_4_LANES]


@pytest.mark.parametrize("name", PANEL_NAMES)
def test_a_broken_generator_backend_is_caught_and_named(name):
    """The broken backend fails known answers, each failure named (never unknown), as the panel says on
    some of them (others may name a bug that predicts the same block there, such as fewer rounds). A line
    it passes is one the bug cannot show on (an all-zero key for a key-injection bug; one key word for a
    key-order bug): its answer there is the known answer."""
    results = run([NamedBackend(name, panel.broken(name)())], RunOptions(select=["generator"]))["results"]
    mine = [r for r in results if r["status"] == FAILED]
    assert {r["status"] for r in results} <= {FAILED, PASSED, NOT_APPLICABLE}
    named_as_expected = [r for r in mine if r["diagnosis"]["id"] == panel.expected_id(name)
                         or panel.expected_id(name) in r["diagnosis"].get("alternatives", [])]
    assert named_as_expected, {r["case"]: r["diagnosis"]["id"] for r in mine}
    for r in mine:
        assert "differ from Random123's known answer" in r["message"] and "looks like:" in r["message"]
        assert r["diagnosis"]["id"] != "unknown", (r["case"], r["message"])


def test_a_broken_generator_backend_is_caught_through_the_worker():
    """The same verdict and name when the broken backend runs in its worker process (GENB/BLKS)."""
    import os

    from rngcheck.backends.exec_backend import isolated

    path = os.pathsep.join(filter(None, [str(PANEL_FILE.parent), os.environ.get("PYTHONPATH")]))
    backend = isolated(f"{PANEL_FILE}:RotationsPlusOne", env={"PYTHONPATH": path})   # it imports generator_panel
    try:
        assert set(backend.generators) == {"threefry2x32", "threefry4x32", "threefry2x64", "threefry4x64"}
        document = run([NamedBackend("RotationsPlusOne", backend)], RunOptions(select=["generator"]))
    finally:
        backend.close()
    threefry_lines = sum(n for name, n in ALL_LINES.items() if name.startswith("threefry"))
    failed = [r for r in document["results"] if r["status"] == FAILED]
    assert len(failed) == threefry_lines
    assert {r["diagnosis"]["id"] for r in failed} == {"threefry-rotations-plus-one"}


@pytest.mark.parametrize("broken", [panel.WrongShape, panel.WritesCounters])
def test_a_broken_contract_fails_as_contract(broken):
    document = run([NamedBackend("b", broken())], RunOptions(select=["generator/threefry2x32-*"]))
    assert {r["status"] for r in document["results"]} == {FAILED}
    assert {r["diagnosis"]["id"] for r in document["results"]} == {"contract"}


# ---- the exec protocol -------------------------------------------------------------------------

def test_a_child_that_advertises_no_generators_is_never_sent_a_genb():
    from rngcheck.backends.exec_backend import isolated

    backend = isolated(f"{Path(__file__).resolve().parent / 'faults.py'}:Correct")
    sent = []
    send = backend.child.send
    backend.child.send = lambda data, deadline: (sent.append(bytes(data[:4])), send(data, deadline))[1]
    try:
        assert backend.generators == ()
        with pytest.raises(NotApplicable, match="computes no threefry2x32 blocks"):
            backend.generator_blocks("threefry2x32", 20, np.zeros((1, 2), dtype=np.uint32), (0, 0))
        assert sent == []
    finally:
        backend.close()


def test_a_handshake_with_generators_that_are_not_a_list_is_refused(tmp_path):
    import sys

    from rngcheck.backends.exec_backend import ExecBackend
    from rngcheck.errors import BackendUnavailable

    child = tmp_path / "child.py"
    child.write_text("import json, os, struct, sys\n"
                     "body = json.dumps({'protocol': 1, 'name': 'x', 'validates': False, 'describe': {}, "
                     "'generators': 'threefry2x32'}).encode()\n"
                     "os.write(1, b'HELO' + struct.pack('<I', len(body)) + body)\nsys.stdin.buffer.read()\n")
    with pytest.raises(BackendUnavailable, match="generators is not a list of names"):
        ExecBackend([sys.executable, str(child)], timeout=60)


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_genb_and_blks_round_trip(dtype):
    counters = np.array([[1, 2, 3, 4], [np.iinfo(dtype).max, 0, 5, 6]], dtype=dtype)
    key = (np.iinfo(dtype).max, 7)
    name, rounds, back, back_key = P.decode_generate(P.encode_generate("philox4x64", 13, counters, key))
    assert (name, rounds, back_key) == ("philox4x64", 13, key)
    assert back.dtype == counters.dtype and np.array_equal(back, counters)
    blocks = P.decode_blocks(P.encode_blocks(counters))
    assert blocks.dtype == counters.dtype and np.array_equal(blocks, counters)


def test_a_short_or_garbled_blks_is_a_protocol_error():
    payload = P.encode_blocks(np.zeros((2, 4), dtype=np.uint64))
    with pytest.raises(P.ProtocolError, match="carries"):
        P.decode_blocks(payload[:-1])
    with pytest.raises(P.ProtocolError, match="word_bits"):
        P.decode_blocks(P.BLOCKS_HEAD.pack(16, 4, 2) + payload[P.BLOCKS_HEAD.size:])
    with pytest.raises(P.ProtocolError, match="not a JSON object"):
        P.decode_generate(b"\x02\x00\x00\x00{}")


def test_generator_names_read_as_lanes_and_width():
    assert generator_shape("threefry4x64") == (4, 64) and generator_shape("philox2x32") == (2, 32)
    for bad in ("philox", "philox4x16", "4x32", "philoxx32"):
        with pytest.raises(NotApplicable):
            generator_shape(bad)


# ---- the table ---------------------------------------------------------------------------------

def test_the_generator_table_shows_passes_not_applicable_failures_and_no_row_for_none():
    import importlib.util

    script_path = Path(__file__).resolve().parents[1] / "scripts" / "conformance_table.py"
    spec = importlib.util.spec_from_file_location("conformance_table", script_path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    class WordsOnly(panel.RightThreeFry):
        def __init__(self):
            super().__init__()
            self.generators = ()

    class TwentyOnly(panel.RightThreeFry):
        def generator_blocks(self, generator, rounds, counters, key):
            if rounds != 20:
                raise NotApplicable(f"only 20 rounds, not {rounds}")
            return super().generator_blocks(generator, rounds, counters, key)

    documents = [run([NamedBackend(name, backend)], RunOptions(select=["generator"]))
                 for name, backend in (("numpy", NumpyBackend()), ("twenty", TwentyOnly()), ("none", WordsOnly()),
                                       ("plus-one", panel.broken("RotationsPlusOne")()))]
    lines = script.generator_table(documents).splitlines()
    assert lines[0].split(" | ")[2:-1] == list(generators.NAMES)
    rows = {line.split(" | ")[0].strip("| `"): line.split(" | ")[2:] for line in lines[2:]}
    assert set(rows) == {"numpy", "twenty", "plus-one"}    # a backend that computes no generator has no row
    assert rows["numpy"] == [f"{ALL_LINES[name]} pass" for name in generators.NAMES] + ["PASS |"]
    assert rows["twenty"][:4] == ["–"] * 4 and rows["twenty"][4] == "3 pass, 6 n/a"
    assert rows["plus-one"][4].startswith("9 fail: threefry-rotations-plus-one") and rows["plus-one"][-1] == "FAIL |"


def test_a_table_row_shows_a_backend_s_control_characters_and_splits_no_cell():
    """A backend's version or cell text reaches the docs' tables through one row builder: a terminal escape
    or newline is shown, not obeyed, and a "|" cannot add a column."""
    import importlib.util

    script_path = Path(__file__).resolve().parents[1] / "scripts" / "conformance_table.py"
    spec = importlib.util.spec_from_file_location("conformance_table", script_path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.table_row(["v1\x1b[31m", "a\nb|c", 3]) == "| v1\\x1b[31m | a\\x0ab/c | 3 |"
