"""The ``random123`` backend (Random123's own headers, compiled with g++) against the reference.

``random123`` (raw ``philox4x32`` + ``incr()``) must agree bit for bit. ``random123:mode=engine``
(``r123::Engine<Philox4x32>``, mapped naively) must differ exactly as documented: element i is
lane 3 - i % 4 of block counter + 1 + floor(i/4) (lanes reversed, one block late), and its
counter after n words is the operator's output state.

Locally a missing g++ or librandom123-dev skips; with CI=true it fails (helpers.unavailable).
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from helpers import unavailable
from library_cases import KEY, SENTINEL, STATES, WorkerPool, layouts, quick_profile, words_results
from rngcheck import counter, layout, reference
from rngcheck.backends import random123_backend as r123
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.errors import BackendSpecError, BackendUnavailable, Rejected

RAW = "rngcheck.backends.random123_backend:Random123Backend"
ENGINE = "rngcheck.backends.random123_backend:engine_backend"   # random123:mode=engine


# ---- the two models ----------------------------------------------------------------------

def spec_words(state, n):
    return reference.words(state, 0, n)


def engine_words(state, n):
    """r123::Engine from counter C: lane 3 - i % 4 of Philox(C + 1 + floor(i/4))."""
    late = counter.add_to_counter(state, 1)
    blocks = counter.blocks_for(n)
    return reference.words(late, 0, 4 * blocks).reshape(blocks, 4)[:, ::-1].reshape(-1)[:n]


MODELS = {"raw": (RAW, spec_words), "engine": (ENGINE, engine_words)}


@pytest.fixture(scope="module")
def workers():
    pool = WorkerPool()          # no g++ or no headers: the one-line reason, skipped locally
    yield pool
    pool.close()


@pytest.fixture(scope="module", params=sorted(MODELS))
def model(request, workers):
    spec, words = MODELS[request.param]
    return workers(spec), words


def execute(backend, state, sizes, strides=None, extra=5):
    length = layout.required_elements(sizes, strides) + extra
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    new_state = backend.random_generator(state.copy(), sizes, strides, buffer)
    return buffer, np.asarray(new_state, dtype=np.uint32).reshape(-1)


def expected_buffer(words, state, sizes, strides, length):
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    buffer[layout.physical_offsets(sizes, strides)] = words(state, layout.element_count(sizes))
    return buffer


# ---- the suite ---------------------------------------------------------------------------

def test_quick_profile_passes_raw(workers):
    results = quick_profile(RAW, workers(RAW))
    assert sum(r["status"] == "passed" for r in results) > 100


def test_quick_profile_shows_the_engine_difference(workers):
    """Every case that generates words fails on every element, and each word shown is the
    reference's lane 3 - L of block P + 1 (P, L: the block and lane it should have come from)."""
    document = run([NamedBackend(ENGINE, workers(ENGINE))], RunOptions(profile="quick"))
    results = words_results(document, workers(ENGINE))
    assert document["summary"]["verdict"] == "fail"
    assert not [r for r in results if r["status"] in ("error", "crashed", "timeout")]
    failed = [r for r in results if r["status"] == "failed"]
    categories = {c["id"]: c["category"] for c in document["cases"]}
    assert {categories[r["case"]] for r in failed} == {"kat", "vectors", "mapping", "counter", "key", "layout",
                                                      "state", "property", "scale"}
    generating = [r for r in results if categories[r["case"]] not in ("validation",)
                  and not r["case"].startswith("layout/alias-")]
    assert all(r["status"] == "failed" for r in generating), [r["case"] for r in generating if r["status"] != "failed"]
    assert all(r["required"] for r in failed)
    inputs = {c["id"]: c["inputs"] for c in document["cases"]}
    shown = 0
    for r in failed:   # every element differs (of the first execution that differs, for chains)
        differ = re.search(r"(\d+) of (\d+) elements differ", r["message"])
        if differ:
            assert differ[1] == differ[2], r["message"]
        else:
            assert r["message"].startswith("sha256 of the output"), r["message"]
            assert r["mismatch_count"] == layout.element_count(inputs[r["case"]]["sizes"]), r["case"]
        key = tuple(int(w, 16) for w in r["reproduce"]["state"].split(",")[4:6])
        for row in r["mismatches"]:
            block = counter.make_state(int(row["philox_counter"], 16) + 1, key)
            assert int(row["actual"], 16) == int(reference.words(block, 3 - row["lane"], 1)[0]), (r["case"], row)
            shown += 1
    assert shown > 400


# ---- words and state, directly -----------------------------------------------------------

@pytest.mark.parametrize("state", STATES, ids=lambda s: hex(counter.counter_of(s)))
def test_against_model(model, state):
    """n = 1..9 in five layouts: the reference (raw) or the engine model; the state is the
    operator's output state in both modes, read back from Random123."""
    backend, words = model
    for n in range(1, 10):
        for sizes, strides in layouts(n):
            buffer, new_state = execute(backend, state, sizes, strides)
            assert np.array_equal(buffer, expected_buffer(words, state, sizes, strides, buffer.size)), (n, sizes)
            assert np.array_equal(new_state, counter.advance(state, layout.element_count(sizes))), (n, sizes)


def test_engine_words_are_the_reference_lanes_reversed_one_block_late(workers):
    state = counter.make_state((1 << 128) - 1, KEY)      # the late block wraps to counter 0
    buffer, new_state = execute(workers(ENGINE), state, (8,), extra=0)
    following = reference.words(counter.make_state(0, KEY), 0, 8)
    assert [int(w) for w in buffer] == [int(w) for w in following[[3, 2, 1, 0, 7, 6, 5, 4]]]
    assert not np.array_equal(buffer, reference.words(state, 0, 8))
    assert counter.counter_of(new_state) == 1          # C + ceil(8/4) mod 2^128: as the operator


@pytest.mark.parametrize("state", [STATES[0], STATES[3], STATES[5]], ids=["plain", "carry64", "wrap"])
def test_chunk_boundaries(model, state, workers, request):
    """Several library calls per execution (chunks of 8 elements) continue one stream."""
    _, words = model
    backend = workers(MODELS[request.node.callspec.params["model"]][0], env={"RNGCHECK_PLACEMENT_CHUNK": "8"})
    for n in (7, 8, 9, 17, 30):
        for sizes, strides in ((n,), None), ((n, 1), (2, 1)):
            buffer, new_state = execute(backend, state, sizes, strides)
            assert np.array_equal(buffer, expected_buffer(words, state, sizes, strides, buffer.size)), (n, sizes)
            assert np.array_equal(new_state, counter.advance(state, n)), n


def test_large_tensor_across_the_wrap(model):
    backend, words = model
    state = STATES[5]
    buffer, new_state = execute(backend, state, (7, 14286, 1), extra=3)
    assert np.array_equal(buffer, expected_buffer(words, state, (7, 14286, 1), None, buffer.size))
    assert np.array_equal(new_state, counter.advance(state, 100002))


def test_feature_level_3_state_no_output_state_and_input_untouched(model):
    backend, words = model
    state = STATES[0].reshape(1, 1, 1, 6).copy()
    buffer = np.full(10, SENTINEL, dtype=np.uint32)
    assert backend.random_generator(state, (1, 1, 2, 3), None, buffer,
                                    output_state=False, feature_level=(3, 0)) is None
    assert np.array_equal(buffer, expected_buffer(words, STATES[0], (1, 1, 2, 3), None, 10))
    assert np.array_equal(state.reshape(-1), STATES[0])


@pytest.mark.parametrize("sizes, strides, length", [
    ((4, 4), (4,), 16),
    ((4, 4), (4, -1), 16),
    ((4, 4), None, 15),
])
def test_unplaceable_description_is_rejected(model, sizes, strides, length):
    backend, _ = model
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    with pytest.raises(Rejected):
        backend.random_generator(STATES[0].copy(), sizes, strides, buffer)
    assert np.all(buffer == SENTINEL)


def test_describe(model):
    backend, _ = model
    info = backend.describe()
    assert info["device"].startswith("cpu") and info["rounds"] == "10"
    assert info["random123"] and info["compiler"].startswith("g++")
    assert "Random123" in info["implementation"]


# ---- options, the build cache, and what is missing -------------------------------------------

def built_or_skip(tmp_path):
    try:
        return r123.build(tmp_path)
    except BackendUnavailable as error:
        unavailable(str(error))


def test_options(tmp_path, monkeypatch):
    monkeypatch.setenv("RNGCHECK_CACHE", str(tmp_path))
    with pytest.raises(BackendSpecError, match="mode must be one of raw, engine"):
        r123.Random123Backend(mode="reversed")      # refused before anything is built
    try:
        backend = r123.Random123Backend.from_options("mode=engine")
    except BackendUnavailable as error:
        unavailable(str(error))
    assert backend.mode == "engine" and r123.engine_backend().mode == "engine"


def test_built_once_then_rebuilt_when_the_source_changes(tmp_path, monkeypatch):
    first = built_or_skip(tmp_path)
    stamp = first.stat().st_mtime_ns
    assert r123.build(tmp_path) == first and first.stat().st_mtime_ns == stamp     # cached
    changed = tmp_path / "src" / "rngcheck_random123.cpp"
    changed.parent.mkdir()
    changed.write_text(r123.SOURCE.read_text() + "\n// changed\n")
    monkeypatch.setattr(r123, "SOURCE", changed)
    second = r123.build(tmp_path)
    assert second != first and second.is_file()
    assert sorted(p.name for p in tmp_path.glob("*.so")) == sorted([first.name, second.name])
    assert not list(tmp_path.glob(".build-*"))     # no leftovers


def test_cache_folder_is_under_the_rngcheck_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RNGCHECK_CACHE", str(tmp_path))
    assert r123.cache_dir() == tmp_path / "random123"
    library = built_or_skip(r123.cache_dir())
    assert library.parent == tmp_path / "random123"


def test_missing_compiler_names_the_packages(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)  # rngcheck.backends.native looks the compiler up
    with pytest.raises(BackendUnavailable) as error:
        r123.build(tmp_path)
    message = str(error.value)
    assert "g++ is not installed" in message and "librandom123-dev" in message and "\n" not in message


def test_missing_header_names_the_debian_package(tmp_path, monkeypatch):
    if shutil.which("g++") is None:
        unavailable("g++ is not installed")
    source = tmp_path / "missing.cpp"
    source.write_text("#include <Random123/no_such_header.h>\n")
    monkeypatch.setattr(r123, "SOURCE", source)
    with pytest.raises(BackendUnavailable) as error:
        r123.build(tmp_path / "cache")
    message = str(error.value)
    assert message == "the Random123 headers are not installed: apt-get install librandom123-dev"
