"""The ``mkl`` backend (Intel oneMKL's VSL_BRNG_PHILOX4X32X10 through mkl_random): what is its own.

MKL agrees with DML_RANDOM_GENERATOR bit for bit (docs/library-findings.md); the contract every
library backend states (words and state from every state and layout, chunks, a large tensor,
feature level 3, unplaceable descriptions, the quick profile, the install hint) is
tests/test_library_contract.py's TestMkl. Here: the 2^128 wrap inside one MKL call, a fresh
stream per execution, and the stream layout the backend reads MKL's state from.

MKL runs in worker processes, as `rngcheck run` runs it: its OpenMP/TBB runtimes never enter
the test process. Locally a missing mkl_random skips; with CI=true it fails (helpers.unavailable).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from helpers import require
from library_cases import KEY, SENTINEL, STATES, isolated_or_unavailable
from rngcheck import counter, layout, reference

SPEC = "rngcheck.backends.mkl_backend:MklBackend"


def worker(env=None):
    require("mkl_random", load=False)
    return isolated_or_unavailable(SPEC, env=env)


@pytest.fixture(scope="module")
def mkl():
    backend = worker()
    yield backend
    backend.close()


def execute(backend, state, sizes, strides=None, extra=5):
    length = layout.required_elements(sizes, strides) + extra
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    new_state = backend.random_generator(state.copy(), sizes, strides, buffer)
    return buffer, np.asarray(new_state, dtype=np.uint32).reshape(-1)


def mkl_python(code: str) -> dict:
    """Run ``code`` (which prints one JSON line) in a fresh Python with mkl_random."""
    require("mkl_random", load=False)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_4099_elements_across_the_2_128_wrap(mkl):
    """1025 blocks from counter 2^128 - 2: the wrap in the middle of one MKL call, and a partial last block."""
    state = counter.make_state((1 << 128) - 2, KEY)
    buffer, new_state = execute(mkl, state, (4099,), extra=0)
    assert np.array_equal(buffer, reference.words(state, 0, 4099))
    assert counter.counter_of(new_state) == 1023   # 2^128 - 2 + 1025 mod 2^128


def test_fresh_stream_per_execution_and_input_state_untouched(mkl):
    """A partial block's lanes stay in MKL's stream; the next execution must not see them."""
    state = STATES[0].copy()
    first, _ = execute(mkl, state, (5,), extra=0)
    second, _ = execute(mkl, state, (5,), extra=0)
    assert np.array_equal(first, second) and np.array_equal(first, reference.words(STATES[0], 0, 5))
    assert np.array_equal(state, STATES[0])


# ---- the library's own behaviour, stated directly ------------------------------------------

def test_mkl_seed_order_stream_layout_and_buffered_lanes():
    """What the backend relies on, straight from mkl_random: seed = [k0, k1, w0..w3]; the saved
    stream holds the key at byte 20 and the next block's counter at byte 28; a partial block's
    lanes are kept (5 words then 3 words continue the same block)."""
    got = mkl_python("""
        import json, numpy as np, mkl_random
        s = mkl_random.MKLRandomState(seed=[0xDEADBEEF, 0xCAFEBABE, 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF],
                                      brng="PHILOX4X32X10")
        a = s.randint(0, 2**32, size=5, dtype=np.uint32)
        saved = s.get_state(legacy=False)["state"]["mkl_stream"]
        b = s.randint(0, 2**32, size=3, dtype=np.uint32)
        print(json.dumps({"words": [int(w) for w in np.concatenate([a, b])],
                          "stream": [int(w) for w in np.frombuffer(saved, "<u4", count=7, offset=20)]}))
    """)
    state = counter.make_state((1 << 128) - 2, KEY)
    assert got["words"] == [int(w) for w in reference.words(state, 0, 8)]
    assert got["stream"] == [*KEY, 0, 0, 0, 0, 3]   # key, counter 2^128 - 2 + 2 (wrapped), 3 lanes kept


def test_stream_state_parses_mkls_saved_stream():
    from rngcheck.backends.mkl_backend import stream_state

    words = [0x11111111, 0x22222222, 0x33333333, 0x44444444, 0x55555555, 0x66666666]
    saved = b"\x02RNG" + bytes(16) + np.array(words[4:] + words[:4] + [0] * 5, "<u4").tobytes() + bytes(4)
    assert len(saved) == 68
    assert [int(w) for w in stream_state(saved)] == words
    with pytest.raises(RuntimeError, match="unrecognised MKL Philox stream"):
        stream_state(saved[:-4])


def test_unknown_stream_layout_makes_the_backend_unavailable():
    got = mkl_python("""
        import json
        from rngcheck.backends import mkl_backend
        from rngcheck.errors import BackendUnavailable
        mkl_backend.KEY_OFFSET = 24
        try:
            mkl_backend.MklBackend()
            print(json.dumps({"error": None}))
        except BackendUnavailable as error:
            print(json.dumps({"error": str(error)}))
    """)
    assert got["error"] and "unknown layout" in got["error"] and "\n" not in got["error"]


