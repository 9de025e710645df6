"""The ``opencl`` backend against the reference model, bit for bit (issue 3).

Every case runs the backend and rngcheck.reference on identical prefilled buffers that are
longer than the tensor's extent (guard words at the tail) and compares whole buffers, so
padding, guards and the output state are checked together. Without an OpenCL device the
tests skip locally and fail in CI (CI=true), where PoCL must be present.
"""

from __future__ import annotations

import mmap
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import unavailable
from rngcheck import Rejected, counter, layout, philox, reference
from rngcheck.backends import opencl  # imports pyopencl only when a backend is made
from rngcheck.description import FEATURE_LEVEL_3_0
from rngcheck.errors import BackendSpecError, BackendUnavailable

GUARD = 16
FILL = 0xA5A5A5A5
KEY = (0x9E3779B9, 0x243F6A88)

# Random123 examples/kat_vectors, philox4x32 lines (also the project's shared/reference/
# random123_kat_vectors.txt, beside this checkout): counter words 0..3, key k0 k1, expected lanes 0..3.
KAT_LINES = """
philox4x32 7 00000000 00000000 00000000 00000000 00000000 00000000   5f6fb709 0d893f64 4f121f81 4f730a48
philox4x32 7 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   5207ddc2 45165e59 4d8ee751 8c52f662
philox4x32 7 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   4dfccaba 190a87f0 c47362ba b6b5242a
philox4x32 10 00000000 00000000 00000000 00000000 00000000 00000000   6627e8d5 e169c58d bc57ac4c 9b00dbd8
philox4x32 10 ffffffff ffffffff ffffffff ffffffff ffffffff ffffffff   408f276d 41c83b0e a20bc7c6 6d5451fd
philox4x32 10 243f6a88 85a308d3 13198a2e 03707344 a4093822 299f31d0   d16cfe09 94fdcceb 5001e420 24126ea1
"""
KATS = [(int(f[1]), [int(w, 16) for w in f[2:8]], [int(w, 16) for w in f[8:12]])
        for f in (line.split() for line in KAT_LINES.strip().splitlines())]
KAT_FILE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "random123_kat_vectors.txt"


def make_backend(**options):
    try:
        return opencl.OpenCLBackend(**options)
    except BackendUnavailable as error:
        unavailable(f"no OpenCL device: {error}")


@pytest.fixture(scope="module")
def backend():
    return make_backend()


def buffers(sizes, strides, guard=GUARD):
    """Two identical prefilled buffers: the tensor's extent plus guard words at the tail."""
    length = layout.required_elements(sizes, strides) + guard
    fill = (FILL + np.arange(length, dtype=np.uint64) * 0x01000193) & 0xFFFFFFFF
    return fill.astype(np.uint32), fill.astype(np.uint32)


def check(backend, state, sizes, strides=None, **kw):
    """Backend and reference on the same call: whole buffers and output states equal."""
    state = counter.state_array(state).reshape(np.shape(state))
    got, want = buffers(sizes, strides)
    before = state.copy()
    got_state = backend.random_generator(state, sizes, strides, got, **kw)
    want_state = reference.random_generator(state, sizes, strides, want, **kw)
    assert np.array_equal(state, before), "the input state was modified"
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{bad.size} words differ, first at offset {bad[0]}: "
                           f"{got[bad[0]]:#010x} != {want[bad[0]]:#010x}")
    if want_state is None:
        assert got_state is None
    else:
        assert np.array_equal(np.asarray(got_state, dtype=np.uint32), want_state)
    return got


def check_aliased(backend, state, sizes, strides):
    """Aliased elements may land in any order: compare only the words no element maps to,
    and the output state."""
    got, want = buffers(sizes, strides)
    got_state = backend.random_generator(state, sizes, strides, got)
    reference.random_generator(state, sizes, strides, want)
    untouched = ~layout.covered_mask(sizes, strides, got.size)
    assert np.array_equal(got[untouched], want[untouched])
    assert np.array_equal(got_state, counter.advance(state, layout.element_count(sizes)))


def check_any(backend, state, sizes, strides=None):
    (check_aliased if layout.aliases(sizes, strides) else check)(backend, state, sizes, strides)


def test_describe(backend):
    info = backend.describe()
    for key in ("platform", "device", "driver version", "OpenCL version", "compiler options", "build time"):
        assert info.get(key), key
    assert backend.name == "opencl" and backend.validates


@pytest.mark.parametrize("rounds, words, expected", KATS, ids=[f"r{r}-{w[0]:08x}" for r, w, _ in KATS])
def test_random123_known_answers(backend, rounds, words, expected):
    """A 4-element tensor is exactly one Philox block: the Random123 answers."""
    if rounds != 10:
        backend = make_backend(rounds=str(rounds))   # the 7-round lines check the rounds macro
    buffer = np.zeros(4 + GUARD, dtype=np.uint32)
    backend.random_generator(np.array(words, dtype=np.uint32), (4,), None, buffer)
    assert [int(w) for w in buffer[:4]] == expected
    assert not buffer[4:].any()


def test_known_answers_are_random123s():
    if not KAT_FILE.is_file():
        unavailable(f"{KAT_FILE} is missing (the project's copy of Random123's kat_vectors)")
    with open(KAT_FILE) as file:
        lines = {" ".join(line.split()) for line in file if line.startswith("philox4x32 ")}
    assert lines == {" ".join(line.split()) for line in KAT_LINES.strip().splitlines()}


@pytest.mark.parametrize("n", range(1, 10))
def test_small_packed(backend, n):
    check(backend, counter.make_state(7, KEY), (n,))


RANKED = [(3,), (2, 3), (3, 1, 5), (2, 3, 2, 2), (1, 2, 3, 1, 2), (2, 1, 2, 3, 1, 2),
          (1, 2, 1, 3, 2, 1, 2), (2, 1, 2, 1, 3, 1, 2, 2)]


def padded(sizes, pad=3):
    """Row-major strides with ``pad`` unused words after every innermost row."""
    strides, step = [], 1
    for d, size in enumerate(reversed(sizes)):
        strides.append(step)
        step = step * size + (pad if d == 0 else 0)
    return tuple(reversed(strides))


def permuted(sizes):
    """Packed column-major strides: the first dimension fastest."""
    return tuple(layout.packed_strides(sizes[::-1])[::-1])


@pytest.mark.parametrize("sizes", RANKED, ids=[f"rank{len(s)}" for s in RANKED])
@pytest.mark.parametrize("kind", ["packed", "padded", "permuted"])
def test_ranks_and_layouts(backend, sizes, kind):
    strides = {"packed": None, "padded": padded(sizes), "permuted": permuted(sizes)}[kind]
    check(backend, counter.make_state(0xFFFFFFF0, KEY), sizes, strides)


@pytest.mark.parametrize("sizes, strides", [
    ((50, 70), (80, 1)),                 # padded rows, several work-item groups per row
    ((7, 9, 11), (1, 7, 63)),            # column-major
    ((4, 5, 6), (2, 40, 400)),           # gaps in every dimension
    ((3, 33, 5), (200, 6, 1)),           # groups of 64 elements crossing rows
    ((6, 100), (1, 6)),                  # permuted, innermost stride > 1
])
def test_strided(backend, sizes, strides):
    check(backend, counter.make_state(2**40 + 3, KEY), sizes, strides)


@pytest.mark.parametrize("sizes, strides", [((4, 5), (0, 1)), ((4, 5), (5, 0)), ((3, 4, 5), (0, 0, 0)),
                                            ((6, 7), (3, 1))])
def test_aliasing_strides_run_and_keep_guards(backend, sizes, strides):
    check_aliased(backend, counter.make_state(11, KEY), sizes, strides)


CARRIES = {"word 0": 2**32 - 5, "word 1": 2**64 - 5, "word 2": 2**96 - 5, "2^128 wrap": 2**128 - 5}


@pytest.mark.parametrize("start", CARRIES.values(), ids=CARRIES.keys())
@pytest.mark.parametrize("sizes, strides", [((37,), None), ((5, 9), (12, 1)), ((9, 5), (1, 9))])
def test_counter_carries_inside_one_execution(backend, start, sizes, strides):
    """The block counter crosses a word boundary (or 2^128) between blocks of one call."""
    check(backend, counter.make_state(start, KEY), sizes, strides)


def test_large_packed_tensor(backend):
    """2^26 elements (256 MiB): one launch of the packed kernel."""
    n = 1 << 26
    state = counter.make_state(2**64 - 2**20, KEY)
    got = np.full(n + GUARD, FILL, dtype=np.uint32)
    got_state = backend.random_generator(state, (n,), None, got)
    want = np.full(n + GUARD, FILL, dtype=np.uint32)
    want_state = reference.random_generator(state, (n,), None, want)
    assert np.array_equal(got, want) and np.array_equal(got_state, want_state)


@pytest.mark.parametrize("sizes, strides", [
    ((1001,), None),                     # packed, in 4-aligned windows
    ((20, 30), (33, 1)),                 # padded rows, windows not 4-aligned in elements
    ((20, 30), (1, 20)),                 # column-major: windows of rows
    ((3, 40), (1, 3)),                   # one row spans more than a window: split again
    ((4, 6, 30), (1, 4, 24)),
    ((5, 7, 3), (0, 3, 1)),              # stride 0
])
def test_windows(sizes, strides):
    """Launches over several windows of the buffer (64-word windows force the split)."""
    check_any(make_backend(window_bytes="256"), counter.make_state(2**32 - 40, KEY), sizes, strides)


def test_offsets_beyond_32_bits(backend):
    """Strides put elements past 2^32 words (16 GiB): 64-bit offsets all the way.

    The buffer is an anonymous mapping without reserve: only the pages touched are ever
    allocated, and they read as zero.
    """
    sizes, strides = (3, 5), (2**32 + 7, 1)
    length = layout.required_elements(sizes, strides) + GUARD
    try:
        no_reserve = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform == "linux" else 0)
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | no_reserve
        got = np.frombuffer(mmap.mmap(-1, length * 4, flags=flags), dtype=np.uint32)
    except (OSError, MemoryError, OverflowError) as error:
        pytest.skip(f"cannot map a 16 GiB buffer here: {error}")
    state = counter.make_state(2**96 - 2, KEY)
    got_state = backend.random_generator(state, sizes, strides, got)
    offsets = layout.physical_offsets(sizes, strides)
    assert offsets[-1] > 2**32
    assert np.array_equal(got[offsets], reference.words(state, 0, 15))
    written = np.zeros(length, dtype=bool)
    written[offsets] = True
    for row in offsets[::5]:   # the rows, the words around them, and the guards
        window = slice(row - 8, row + 13)
        assert not got[window][~written[window]].any()
    assert not got[-GUARD:].any()
    assert np.array_equal(got_state, counter.advance(state, 15))


def test_output_state_options(backend):
    state = counter.make_state(2**128 - 1, KEY)
    check(backend, state, (10,), output_state=False)
    assert backend.random_generator(state, (10,), None, np.zeros(10, np.uint32), output_state=False) is None
    check(backend, state.reshape(1, 6), (10,), output_state=(1, 6))
    check(backend, state.reshape(1, 1, 1, 6), (2, 3, 4, 5), feature_level=FEATURE_LEVEL_3_0)


def test_non_contiguous_buffer(backend):
    state = counter.make_state(3, KEY)
    got = np.zeros(64, np.uint32)
    want = np.zeros(64, np.uint32)
    backend.random_generator(state, (4, 5), None, got[::2])
    reference.random_generator(state, (4, 5), None, want[::2])
    assert np.array_equal(got, want)


@pytest.mark.parametrize("call", [
    dict(sizes=(3,) * 9),                                          # rank 9
    dict(sizes=(2, 0, 3)),                                         # a size of 0
    dict(sizes=(8,), buffer=np.zeros(7, np.uint32)),               # buffer too small
    dict(sizes=(2, 3), strides=(1,)),                              # one stride per dimension
    dict(sizes=(2, 3), strides=(-1, 1)),                           # negative stride
    dict(state=np.zeros(5, np.uint32)),                            # a state is 6 words
    dict(output_state=(1, 1, 6)),                                  # state tensors differ
    dict(buffer=np.zeros(64, np.int32)),                           # UINT32 only
    dict(sizes=(2, 3, 4), feature_level=FEATURE_LEVEL_3_0),        # 3.0: 4-D only
    dict(sizes=(1 << 16, 1 << 16), buffer=np.zeros(8, np.uint32)),  # 2^32 elements
])
def test_invalid_descriptions_are_rejected(backend, call):
    call = {"state": np.zeros(6, np.uint32), "sizes": (4,), "strides": None,
            "buffer": np.zeros(64, np.uint32), **call}
    before = call["buffer"].copy()
    kwargs = {k: call.pop(k) for k in ("output_state", "feature_level") if k in call}
    with pytest.raises(Rejected):
        backend.random_generator(call["state"], call["sizes"], call["strides"], call["buffer"], **kwargs)
    assert np.array_equal(call["buffer"], before)


# -- the broken variants: the panel must see them fail -------------------------------------

def broken_words(state, n, counter_bits):
    """What a kernel whose counter add stops at ``counter_bits`` writes (rngcheck.counter's model)."""
    blocks = philox.philox4x32(*counter.block_counters(state, 0, counter.blocks_for(n),
                                                         counter_bits=counter_bits), *counter.key_of(state))
    return blocks.reshape(-1)[:n]


@pytest.mark.parametrize("counter_bits", ["32", "64"])
@pytest.mark.parametrize("sizes, strides", [((64,), None), ((8, 8), (1, 8))])
def test_broken_counter_add_is_caught(counter_bits, sizes, strides):
    """A kernel built with a 32- or 64-bit counter add differs from the reference across a
    carry, and equals the model of exactly that bug (so the diagnosis can name it)."""
    broken = make_backend(counter_bits=counter_bits)
    assert broken.name != "opencl"
    state = counter.make_state(2 ** int(counter_bits) - 3, KEY)
    n = layout.element_count(sizes)
    got, want = buffers(sizes, strides)
    got_state = broken.random_generator(state, sizes, strides, got)
    want_state = reference.random_generator(state, sizes, strides, want)
    assert not np.array_equal(got, want)
    assert not np.array_equal(got_state, want_state)
    offsets = layout.physical_offsets(sizes, strides)
    assert np.array_equal(got[offsets], broken_words(state, n, int(counter_bits)))
    # Without a carry in the execution the bug is invisible: the suite needs carry cases.
    check(broken, counter.make_state(100, KEY), sizes, strides)


def test_build_failure_shows_the_log(backend, monkeypatch):
    monkeypatch.setattr(opencl, "SOURCE", opencl.SOURCE + "\n__kernel void oops(void) { undeclared_name = 1; }\n")
    with pytest.raises(opencl.OpenCLBuildError, match="undeclared_name"):
        opencl.OpenCLBackend()


def test_device_choice(backend, monkeypatch):
    from rngcheck.backends import load
    monkeypatch.delenv("PYOPENCL_CTX", raising=False)
    first = load("opencl:platform=0,device=0").device
    assert load("opencl").device == first
    monkeypatch.setenv("PYOPENCL_CTX", "0:0")
    assert opencl.OpenCLBackend().device == first   # pyopencl's choice, never a prompt


def test_bad_options(backend):
    with pytest.raises(BackendSpecError):
        opencl.OpenCLBackend.from_options("platform=first")
    with pytest.raises(BackendSpecError):
        opencl.OpenCLBackend.from_options("colour=blue")
    with pytest.raises((BackendUnavailable, BackendSpecError)):
        opencl.OpenCLBackend.from_options("platform=99")


@st.composite
def layouts(draw):
    """Random rank 1..8 tensors: sizes, and strides packed, padded, permuted or arbitrary."""
    rank = draw(st.integers(1, 8))
    sizes = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    kind = draw(st.sampled_from(["packed", "padded", "permuted", "any"]))
    if kind == "any":
        strides = tuple(draw(st.lists(st.integers(0, 40), min_size=rank, max_size=rank)))
    else:
        strides = {"packed": None, "padded": padded(sizes, draw(st.integers(0, 5))),
                   "permuted": permuted(sizes)}[kind]
    return sizes, strides


@settings(max_examples=80, deadline=None)
@given(layout_=layouts(), start=st.integers(0, 2**128 - 1) | st.sampled_from(list(CARRIES.values())),
       key=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)), windowed=st.booleans())
def test_random_layouts(backend, layout_, start, key, windowed):
    sizes, strides = layout_
    if windowed:
        backend = make_backend(window_bytes="256")
    check_any(backend, counter.make_state(start, key), sizes, strides)
