"""What the library-backend tests share: states that cross every counter carry, layouts of
every kind, one execution on a prefilled buffer, and the buffer the operator would leave."""

from __future__ import annotations

import numpy as np

from rngcheck import counter, layout
from rngcheck.results.statuses import BROKEN, NOT_APPLICABLE
from rngcheck.results.verdicts import PASS

SENTINEL = 0xA5A5A5A5
KEY = (0xDEADBEEF, 0xCAFEBABE)
COUNTERS = [
    0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210,
    0,
    (1 << 32) - 2,   # carry word 0 -> 1 within n <= 9
    (1 << 64) - 2,   # carry word 1 -> 2
    (1 << 96) - 2,   # carry word 2 -> 3
    (1 << 128) - 2,  # 2^128 wrap
    (1 << 128) - 1,  # wrap on the first block
]
STATES = [counter.make_state(c, KEY) for c in COUNTERS] + [
    counter.make_state((1 << 64) - 1, (0, 0)),
    counter.make_state((1 << 128) - 2, (0xFFFFFFFF, 0xFFFFFFFF)),
]


def layouts(n):
    return [
        ((n,), None),
        ((1, n), (0, 2)),                    # a gap after every element
        ((2, n), (1, 2)),                    # column-major
        ((n, 1, 1), (5, 7, 1)),              # rank 3 with padding
        ((1,) * 7 + (n,), (9,) * 7 + (3,)),  # rank 8
    ]


def run_one(backend, state, sizes, strides, extra=5):
    """(the buffer after one execution on a SENTINEL-filled buffer, the returned state)."""
    buffer = np.full(layout.required_elements(sizes, strides) + extra, SENTINEL, dtype=np.uint32)
    new_state = backend.random_generator(state.copy(), sizes, strides, buffer)
    return buffer, new_state


def placed(words, sizes, strides, length):
    """A SENTINEL-filled buffer of ``length`` holding ``words`` at the layout's offsets."""
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    buffer[layout.physical_offsets(sizes, strides)] = words
    return buffer


def isolated_or_unavailable(spec: str, **options):
    """``spec`` in its own worker, as `rngcheck run` hosts it; unavailable: skip locally, fail in CI."""
    from helpers import unavailable
    from rngcheck.backends.exec_backend import isolated
    from rngcheck.errors import BackendUnavailable

    try:
        return isolated(spec, **options)
    except BackendUnavailable as error:   # the backend's own one-line reason
        unavailable(str(error))


class WorkerPool:
    """Workers by spec (and environment), started once and closed together: a module fixture's body."""

    def __init__(self):
        self.built = {}

    def __call__(self, spec: str, env=None, **options):
        key = (spec, tuple(sorted((env or {}).items())))
        if key not in self.built:
            self.built[key] = isolated_or_unavailable(spec, **({"env": env} if env else {}), **options)
        return self.built[key]

    def close(self):
        for backend in self.built.values():
            backend.close()


def quick_profile(spec: str, backend) -> list[dict]:
    """The quick profile's results on ``backend``, after asserting that no required case broke
    and the verdict is pass."""
    return quick_run(spec, backend)[1]


def quick_run(spec: str, backend) -> tuple[dict, list[dict]]:
    """The quick profile's document and its words results on ``backend``, after asserting that no
    required case broke (statuses.BROKEN: not-run included) and the verdict is pass."""
    from rngcheck.conformance.runner import NamedBackend, RunOptions, run

    document = run([NamedBackend(spec, backend)], RunOptions(profile="quick"))
    results = words_results(document, backend)
    broken = [r for r in results if r["required"] and r["status"] in BROKEN]
    assert not broken, broken[:3]
    assert document["summary"]["verdict"] == PASS
    return document, results


def words_results(document, backend) -> list[dict]:
    """The results of the words cases. The cases of the axes that draw numbers (random_numbers: the
    numbers conventions and the properties) of a backend that draws no numbers, and the generator cases
    (rngcheck.conformance.generator_kat) of one that computes no generator blocks, must all be not
    applicable; both are left out."""
    from rngcheck.conformance.axes import of_category

    numbers = {case["id"] for case in document["cases"]
               if case["procedure"] == "numbers" or of_category(case["category"]).method == "random_numbers"}
    blocks = {case["id"] for case in document["cases"] if case["procedure"] == "generator"}
    if not getattr(backend, "conventions", ()):
        assert numbers and all(r["status"] == NOT_APPLICABLE and "draws no" in r["message"]
                               for r in document["results"] if r["case"] in numbers)
    if not getattr(backend, "generators", ()):
        assert blocks and all(r["status"] == NOT_APPLICABLE and "computes no" in r["message"]
                              for r in document["results"] if r["case"] in blocks)
    # Another operator's cases (rngcheck.conformance.axes): not applicable on a backend that does not
    # run it, left out like the numbers cases.
    others = {case["id"]: of_category(case["category"]) for case in document["cases"]
              if not of_category(case["category"]).required}
    assert all(r["status"] == NOT_APPLICABLE and "runs no" in r["message"] for r in document["results"]
               if r["case"] in others and not others[r["case"]].runs(backend))
    return [r for r in document["results"] if r["case"] not in numbers | blocks and r["case"] not in others]


# ---- the documented models of the generators that differ (docs/library-findings.md) ------------

def x_z(x, z=0, w3=0):
    """A counter of cuRAND's form: x (words 0-1), subsequence z (word 2), word 3."""
    return x | (z << 64) | (w3 << 96)


CURAND_STATES = [   # the states cuRAND can express (word 3 = 0, word 2 < 65536, x + blocks < 2^46)
    counter.make_state(0, KEY),
    counter.make_state(x_z(0x0123_4567, 0x1234), KEY),
    counter.make_state(x_z((1 << 32) - 2, 7), KEY),           # carry word 0 -> 1 inside the tensor
    counter.make_state(x_z((1 << 46) - 40, 0xFFFF), KEY),      # top of the reachable range
    counter.make_state(x_z(5, 0xFFFF), (0, 0)),
    counter.make_state(x_z(5, 3), (0xFFFFFFFF, 0xFFFFFFFF)),
]


def random123_engine_words(state, n):
    """r123::Engine from counter C: lane 3 - i % 4 of Philox(C + 1 + floor(i/4))."""
    from rngcheck import reference

    late = counter.add_to_counter(state, 1)
    blocks = counter.blocks_for(n)
    return reference.words(late, 0, 4 * blocks).reshape(blocks, 4)[:, ::-1].reshape(-1)[:n]


MASK96 = (1 << 96) - 1
INT32_MAX = (1 << 31) - 1


def pyopencl_global_size(backend, n):
    from pyopencl.array import _splay
    return _splay(backend.device, n)[0][0]


def pyopencl_generator_words(backend, state, n):
    """PhiloxGenerator's float64 fill, as words: element i (block b = i // 4) is lane i % 4 of
    Philox(counter + 2 * (b // G) with the carry stopping at word 2, key = (b % G, k1))."""
    from rngcheck import reference

    G = pyopencl_global_size(backend, n)
    c = counter.counter_of(state)
    k1 = int(state[5])
    out = np.empty(n, dtype=np.uint32)
    for b in range(-(-n // 4)):
        ctr = (c & ~MASK96) | (((c & MASK96) + 2 * (b // G)) & MASK96)
        block = reference.words(counter.make_state(ctr, (b % G, k1)), 0, 4)
        out[4 * b:4 * b + 4] = block[:n - 4 * b]
    return out


def _signed(word):
    return word - (1 << 32) if word >= 1 << 31 else word


def pyopencl_generator_state(state, n):
    """pyopencl's host update (clrandom.Random123GeneratorBase._fill): counter word 0 (as int32)
    += 2n, carried into words 1 and 2 by divmod with 2^31 - 1; word 3 untouched; k0 as given."""
    c = [_signed(int(w)) for w in state[:4]]
    c[0] += 2 * n
    carry, c[0] = divmod(c[0], INT32_MAX)
    if carry:
        c[1] += carry
        carry, c[1] = divmod(c[1], INT32_MAX)
        c[2] += carry
    return np.array([w & 0xFFFFFFFF for w in c] + [int(state[4]), int(state[5])], dtype=np.uint32)
