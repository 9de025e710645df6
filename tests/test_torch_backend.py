"""The ``torch`` backend: PyTorch's at::Philox4_32 header through rngcheck's C++ helper.

What conforms (docs/library-findings.md): every output word, for every state, layout and
chunking, including the carries out of words 0, 1, 2 and the 2^128 wrap (the engine's incr()
and incr_n() carry through all four words). What differs: the state the engine can report,
seed, subsequence (words 2-3, as given) and get_offset() (words 0-1), drops the carry out of
word 1, so exactly the cases whose counter crosses 2^64 fail, each with the diagnosis
state-carry-64-bit and no wrong word.

The contract (every state and layout under that state model, the spec-state mode's quick
profile, describe(), unplaceable descriptions, the install hint) is tests/test_library_contract.py's
TestTorch and TestTorchSpecState; here is what is torch's own.

Locally a missing torch (or g++) skips; with CI=true it fails (helpers.require/unavailable).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from helpers import require, unavailable
from library_cases import WorkerPool, words_results
from rngcheck import counter, layout, reference
from rngcheck.backends.exec_backend import isolated
from rngcheck.conformance import axes
from rngcheck.conformance.directml import cases as C
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.errors import BackendUnavailable
from rngcheck.results.statuses import BROKEN

SPEC = "rngcheck.backends.torch_backend:TorchBackend"
SPEC_STATE = "rngcheck.backends.torch_backend:torch_spec_state"
LOW64 = (1 << 64) - 1
KEY = (0xDEADBEEF, 0xCAFEBABE)


def torch_present():
    require("torch", load=False)   # only looked up: the backend never imports torch


@pytest.fixture(scope="module")
def backends():
    """Backends by spec, each in its worker process as `rngcheck run` does."""
    pool = WorkerPool()

    def get(spec):
        torch_present()
        return pool(spec, timeout=600)

    yield get
    pool.close()


@pytest.fixture(scope="module")
def in_process():
    """The backend in this process, for the helper's own entry points."""
    torch_present()
    from rngcheck.backends.torch_backend import TorchBackend
    try:
        return TorchBackend()
    except BackendUnavailable as error:
        unavailable(str(error))


def crosses_2_64(case: C.Case) -> bool:
    """Whether the counter's low 64 bits overflow during the case (over all its chained
    executions): exactly where torch's reported state differs."""
    if case.procedure not in (C.EXECUTE, C.REPEAT, C.CHAIN, C.ALIAS) or case.output_state is False:
        return False
    pieces = case.chain if case.procedure == C.CHAIN else (case.sizes,)
    blocks = sum(counter.blocks_for(layout.element_count(sizes)) for sizes in pieces)
    return (counter.counter_of(case.state) & LOW64) + blocks > LOW64


def broken(results):
    return {r["case"]: r for r in results
            if r["required"] and r["status"] in BROKEN}


# ---- the quick profile ---------------------------------------------------------------------

def test_quick_profile_words_conform_state_drops_the_carry_out_of_word_1(backends):
    document = run([NamedBackend(SPEC, backends(SPEC))], RunOptions(profile="quick"))
    results = words_results(document, backends(SPEC))
    failed = broken(results)
    expected = {case.id for case in axes.cases_for("quick") if crosses_2_64(case)}
    random_cases = {case.id for case in axes.cases_for("quick") if case.procedure == C.PROPERTY}
    # the cases whose counter crosses 2^64, and only those (a random description may cross it too)
    assert set(failed) - random_cases == expected
    assert {"kat/philox4x32-10-ffffffff-ffffffff", "vectors/carry-word1", "vectors/carry-word2",
            "vectors/carry-wrap128", "counter/carry-word1-inside", "counter/carry-word3-wrap-between",
            "state/chain-carry"} <= expected
    for result in failed.values():
        assert result["status"] == "failed"
        assert result["diagnosis"]["id"] == "state-carry-64-bit", result["case"]
        assert result["mismatch_count"] == 0 and result["message"].startswith("output state"), result["case"]
    # everything else conforms: carries out of word 0, the 2^128 wrap of the words, layouts, ...
    assert document["summary"]["counts"]["error"] == document["summary"]["counts"]["crashed"] == 0
    assert {r["case"] for r in results if r["status"] == "n/a"} == {"validation/too-many-elements"}
    assert all(r["status"] in ("passed", "info", "n/a") for r in results if r["case"] not in failed)
    assert sum(r["status"] == "passed" for r in results) > 90


def test_chunked_words_use_the_engines_own_skip(backends):
    """Library calls of 8 elements: chunks after the first start with incr_n (carries included)."""
    torch_present()
    try:
        backend = isolated(SPEC_STATE, env={"RNGCHECK_PLACEMENT_CHUNK": "8"})
    except BackendUnavailable as error:
        unavailable(str(error))
    try:
        document = run([NamedBackend(SPEC_STATE, backend)], RunOptions(profile="quick", select=["counter", "mapping"]))
    finally:
        backend.close()
    assert not broken(document["results"])


# ---- the helper itself ---------------------------------------------------------------------

def test_incr_n_carries_through_all_four_words(in_process):
    """The engine's incr_n (the offset and the chunk skips) is a 128-bit add, for any 64-bit skip."""
    rng = random.Random(20)
    edges = [0, 1, 2, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, 0xFFFFFFFF00000001, 1 << 63, LOW64 - 1, LOW64]
    for _ in range(3000):
        c = rng.choice([rng.getrandbits(128), (rng.getrandbits(64) << 64) | rng.choice(edges),
                        ((1 << 128) - 1) - rng.choice(edges)])
        skip = rng.choice(edges + [rng.getrandbits(64), rng.getrandbits(33)])
        state = counter.make_state(c, (rng.getrandbits(32), rng.getrandbits(32)))
        words, _ = in_process._draw(state, skip, 6)
        assert np.array_equal(words, reference.words(counter.add_to_counter(state, skip), 0, 6)), (hex(c), hex(skip))


@pytest.mark.parametrize("start", [0, (1 << 32) - 1, LOW64 - 1, LOW64, (1 << 96) - 1, (1 << 128) - 2])
@pytest.mark.parametrize("n", [1, 4, 5, 9])
def test_library_state_is_the_64_bit_offset(in_process, start, n):
    state = counter.make_state(start, KEY)
    buffer = np.zeros(n, dtype=np.uint32)
    new_state = in_process.random_generator(state.copy(), (n,), None, buffer)
    assert np.array_equal(buffer, reference.words(state, 0, n))                 # the words carry
    assert np.array_equal(new_state, counter.advance(state, n, counter_bits=64))  # the state does not


def test_no_draw_reports_the_state_unchanged(in_process):
    state = counter.make_state(LOW64, KEY)
    assert np.array_equal(in_process._draw(state, 0, 0)[1], state)


# ---- building the helper -------------------------------------------------------------------

def test_helper_is_cached_and_rebuilt_when_its_source_changes(tmp_path, monkeypatch):
    torch_present()
    from rngcheck.backends import torch_backend
    monkeypatch.setenv("RNGCHECK_CACHE", str(tmp_path / "cache"))
    try:
        first = torch_backend.TorchBackend().helper
    except BackendUnavailable as error:
        unavailable(str(error))
    assert first.parent == tmp_path / "cache" / "torch"
    stamp = first.stat().st_mtime_ns
    assert torch_backend.TorchBackend().helper == first and first.stat().st_mtime_ns == stamp
    changed = tmp_path / "philox_helper.cpp"
    changed.write_text(torch_backend.SOURCE.read_text() + "\n// changed\n")
    monkeypatch.setattr(torch_backend, "SOURCE", changed)
    second = torch_backend.TorchBackend().helper
    assert second != first and second.is_file() and first.is_file()
    assert sorted(p.name for p in second.parent.iterdir()) == sorted([first.name, second.name])  # no leftovers


def test_a_helper_that_does_not_compile_is_one_line(tmp_path, monkeypatch):
    torch_present()
    from rngcheck.backends import torch_backend
    monkeypatch.setenv("RNGCHECK_CACHE", str(tmp_path / "cache"))
    broken_source = tmp_path / "philox_helper.cpp"
    broken_source.write_text("#include <ATen/core/PhiloxRNGEngine.h>\nthis is not C++;\n")
    monkeypatch.setattr(torch_backend, "SOURCE", broken_source)
    with pytest.raises(BackendUnavailable) as raised:
        torch_backend.TorchBackend()
    message = str(raised.value)
    assert "g++ could not build the torch helper" in message and "error" in message and "\n" not in message
    assert not list((tmp_path / "cache" / "torch").iterdir())


def test_missing_compiler_is_unavailable_with_install_hint(monkeypatch):
    torch_present()
    from rngcheck import native
    from rngcheck.backends import torch_backend
    monkeypatch.setattr(native.shutil, "which", lambda name: None)
    with pytest.raises(BackendUnavailable) as error:
        torch_backend.TorchBackend()
    assert "apt-get install g++" in str(error.value) and "\n" not in str(error.value)


def test_bad_option_is_a_spec_error():
    from rngcheck.backends.torch_backend import TorchBackend
    from rngcheck.errors import BackendSpecError
    with pytest.raises(BackendSpecError, match="state must be one of library, spec"):
        TorchBackend(state="nope")


# ---- torch.compile's CPU path (the finding in docs/library-findings.md) ----------------------

COMPILED = textwrap.dedent("""
    import numpy as np, torch
    n = 9
    f = torch.compile(lambda: torch.randint(0, 2**32, (n,)))
    torch.manual_seed(0)
    words = f().numpy()
    torch.manual_seed(0)
    seed = int(torch.randint(-2**63, 2**63 - 1, [1])[0])   # the seed the compiled graph draws
    print(seed & 0xFFFFFFFF, *words)
""")


def test_torch_compile_uses_lane_0_of_block_i_with_a_32_bit_key():
    """torch.compile on the CPU: element i = lane 0 of Philox((i, 0, 0, 0), (low 32 bits of a seed
    drawn from the CPU generator, 0)): one block per element, not the operator's mapping."""
    torch_present()
    done = subprocess.run([sys.executable, "-c", COMPILED], capture_output=True, text=True, timeout=900,
                          cwd=Path(__file__).parent.parent, env={**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "1"})
    if done.returncode != 0:
        unavailable(f"torch.compile does not run here: {done.stderr.strip().splitlines()[-1:]}")
    k0, *words = (int(v) for v in done.stdout.split())
    lane0 = [int(reference.words(counter.make_state(i, (k0, 0)), 0, 1)[0]) for i in range(9)]
    assert words == lane0
    assert words != [int(w) for w in reference.words(counter.make_state(0, (k0, 0)), 0, 9)]
