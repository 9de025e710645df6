"""The ``onedpl`` backend: oneDPL's oneapi::dpl::philox4x32 (P2075) on the host, through
rngcheck's C++ helper compiled with g++ and no SYCL compiler.

oneDPL conforms: words and output state, for every state (both key paths: seed() + set_counter
when k1 = 0, the extractor otherwise), layout and chunking. Locally a missing onedpl-devel (or
g++) skips; with CI=true it fails (helpers.unavailable).

Its describe() and quick profile (with every state and layout, and unplaceable descriptions) are the
contract: tests/test_library_contract.py's TestOnedpl. Here: both key paths across every carry, the
standard's 10000th value, chunks through the engine's discard, and what is missing.
"""

from __future__ import annotations

import importlib.metadata
import random

import numpy as np
import pytest

from helpers import unavailable
from rngcheck import counter, reference
from rngcheck.backends import load
from rngcheck.backends.exec_backend import isolated
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.errors import BackendUnavailable
from rngcheck.results.statuses import BROKEN

SPEC = "rngcheck.backends.onedpl_backend:OneDPLBackend"


def onedpl_present():
    try:
        importlib.metadata.distribution("onedpl-devel")
    except importlib.metadata.PackageNotFoundError:
        unavailable("onedpl-devel is not installed")


@pytest.fixture(scope="module")
def in_process():
    onedpl_present()
    from rngcheck.backends.onedpl_backend import OneDPLBackend
    try:
        return OneDPLBackend()
    except BackendUnavailable as error:
        unavailable(str(error))


def test_chunks_use_the_engines_discard():
    onedpl_present()
    try:
        backend = isolated(SPEC, env={"RNGCHECK_PLACEMENT_CHUNK": "8"})
    except BackendUnavailable as error:
        unavailable(str(error))
    try:
        document = run([NamedBackend(SPEC, backend)],
                       RunOptions(profile="quick", select=["counter", "mapping", "state"]))
    finally:
        backend.close()
    assert not [r["case"] for r in document["results"] if r["required"] and r["status"] in BROKEN]


@pytest.mark.parametrize("k1", [0, 0x299F31D0], ids=["seed-and-set_counter", "extractor"])
def test_any_counter_and_skip_with_either_key_path(in_process, k1):
    """Words and the engine's state after a discard and a draw, across every carry."""
    rng = random.Random(k1)
    edges = [0, 1, (1 << 32) - 1, 1 << 32, (1 << 62) - 1]
    for _ in range(2000):
        c = rng.choice([rng.getrandbits(128), (1 << 128) - 1 - rng.choice(edges),
                        (rng.getrandbits(64) << 64) | ((1 << 64) - 1 - rng.choice(edges))])
        skip, n = rng.choice(edges + [rng.getrandbits(40)]), rng.randint(0, 9)
        state = counter.make_state(c, (rng.getrandbits(32), k1))
        words, after = in_process._draw(state, skip, n)
        start = counter.add_to_counter(state, skip)
        assert np.array_equal(words, reference.words(start, 0, n)), (hex(c), skip, n)
        assert np.array_equal(after, counter.advance(start, n)), (hex(c), skip, n)


def test_the_standards_10000th_value(in_process):
    """A default-constructed engine is key (20111115, 0), counter 0: its 10000th output is 1955073260
    ([rand.predef]); here it is element 9999 of one execution."""
    words, after = in_process._draw(counter.make_state(0, (20111115, 0)), 0, 10000)
    assert int(words[9999]) == 1955073260
    assert counter.counter_of(after) == 2500


def test_missing_onedpl_is_unavailable_with_install_hint(monkeypatch):
    from rngcheck.backends import onedpl_backend

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(onedpl_backend.importlib.metadata, "distribution", missing)
    with pytest.raises(BackendUnavailable) as error:
        load(SPEC)
    assert "pip install rngcheck[onedpl]" in str(error.value) and "\n" not in str(error.value)


def test_include_option_without_the_header_is_one_line(tmp_path):
    from rngcheck.backends.onedpl_backend import OneDPLBackend
    with pytest.raises(BackendUnavailable, match="no oneapi/dpl/internal/random_impl/philox_engine.h there"):
        OneDPLBackend(include=str(tmp_path))
