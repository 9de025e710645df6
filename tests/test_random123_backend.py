"""The ``random123`` backend (Random123's own headers, compiled with g++): what is its own.

``random123`` (raw ``philox4x32`` + ``incr()``) must agree bit for bit; ``random123:mode=engine``
(``r123::Engine<Philox4x32>``, mapped naively) must differ exactly as documented: element i is
lane 3 - i % 4 of block counter + 1 + floor(i/4) (lanes reversed, one block late), and its
counter after n words is the operator's output state. Both models against every state and
layout, chunks, a large tensor, feature level 3, unplaceable descriptions and the raw mode's
quick profile are the contract (tests/test_library_contract.py: TestRandom123Raw,
TestRandom123Engine). Here: the engine's failures as the suite reports them, its words
directly, the options, the build cache and what is missing.

Locally a missing g++ or librandom123-dev skips; with CI=true it fails (helpers.unavailable).
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from helpers import unavailable
from library_cases import KEY, SENTINEL, WorkerPool, words_results
from rngcheck import counter, layout, reference
from rngcheck.backends import random123_backend as r123
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.errors import BackendSpecError, BackendUnavailable

RAW = "rngcheck.backends.random123_backend:Random123Backend"
ENGINE = "rngcheck.backends.random123_backend:engine_backend"   # random123:mode=engine


@pytest.fixture(scope="module")
def workers():
    pool = WorkerPool()          # no g++ or no headers: the one-line reason, skipped locally
    yield pool
    pool.close()


def execute(backend, state, sizes, strides=None, extra=5):
    length = layout.required_elements(sizes, strides) + extra
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    new_state = backend.random_generator(state.copy(), sizes, strides, buffer)
    return buffer, np.asarray(new_state, dtype=np.uint32).reshape(-1)


# ---- the suite ---------------------------------------------------------------------------

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


def test_engine_words_are_the_reference_lanes_reversed_one_block_late(workers):
    state = counter.make_state((1 << 128) - 1, KEY)      # the late block wraps to counter 0
    buffer, new_state = execute(workers(ENGINE), state, (8,), extra=0)
    following = reference.words(counter.make_state(0, KEY), 0, 8)
    assert [int(w) for w in buffer] == [int(w) for w in following[[3, 2, 1, 0, 7, 6, 5, 4]]]
    assert not np.array_equal(buffer, reference.words(state, 0, 8))
    assert counter.counter_of(new_state) == 1          # C + ceil(8/4) mod 2^128: as the operator


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
    monkeypatch.setattr(shutil, "which", lambda name: None)  # rngcheck.native looks the compiler up
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
