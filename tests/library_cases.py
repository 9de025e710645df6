"""What the library-backend tests share: states that cross every counter carry, layouts of
every kind, one execution on a prefilled buffer, and the buffer the operator would leave."""

from __future__ import annotations

import numpy as np

from rngcheck import counter, layout

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
BROKEN = ("failed", "error", "crashed", "timeout")


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
    from rngcheck.conformance.runner import NamedBackend, RunOptions, run

    document = run([NamedBackend(spec, backend)], RunOptions(profile="quick"))
    results = words_results(document, backend)
    broken = [r for r in results if r["required"] and r["status"] in BROKEN]
    assert not broken, broken[:3]
    assert document["summary"]["verdict"] == "pass"
    return results


def words_results(document, backend) -> list[dict]:
    """The results of the words cases. The numbers cases (rngcheck.conformance.numbers) of a backend
    that draws no numbers must all be not applicable; they are left out."""
    numbers = {case["id"] for case in document["cases"] if case["procedure"] == "numbers"}
    if not getattr(backend, "conventions", ()):
        assert numbers and all(r["status"] == "skipped" and "draws no" in r["message"]
                               for r in document["results"] if r["case"] in numbers)
    return [r for r in document["results"] if r["case"] not in numbers]
