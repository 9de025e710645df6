"""Record known-answer words of two shipped GPU-language generators from the real libraries
(issue #43): rngcheck/vectors/shipped_streams.json, which tests/test_stats_shipped.py checks the
numpy models of rngcheck.stats.weak_generators (warp_pcg*, taichi_xorshift128*) against.

    pip install warp-lang==1.19.0 taichi==1.7.4      # not in setup.sh or CI: run by hand
    PYTHONPATH=. python scripts/record_shipped_streams.py [--out FILE]

Warp (CPU device): a kernel over THREADS threads, each ``state = wp.rand_init(seed, tid)`` then
DRAWS times ``out[tid * DRAWS + k] = wp.randu(state)``, and the same with ``wp.randf`` (its
floats' bits). Taichi (ti.cpu, cpu_max_num_threads=1, so every draw uses thread 0's state):
a serialized loop of ti.random(ti.u32) after ti.init(random_seed=seed); thread i's state of
seed 0 is k = 0 * 1048391 + i, which thread 0 has under the seed s with s * 1048391 = i mod 2^32,
so thread i's first draws are recorded as thread 0's under that seed (as int32).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

WARP_SEEDS = (42, 7)
WARP_THREADS, WARP_DRAWS = 8, 32
TAICHI_SEEDS = (0, 1, 2)
TAICHI_DRAWS = 256
TAICHI_THREADS = tuple(range(16)) + tuple(range(512, 528))  # thread i and i + 512: same lowest bit
TAICHI_THREAD_DRAWS = 4
SEED_SCALE = 1048391  # taichi 1.7.4's LlvmRuntimeExecutor::materialize_runtime

OUT = os.path.join(os.path.dirname(__file__), "..", "rngcheck", "vectors", "shipped_streams.json")


def hexes(values):
    return [f"0x{int(v) & 0xFFFFFFFF:08x}" for v in values]


def record_warp() -> dict:
    import numpy as np
    import warp as wp

    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def draw_u(seed: int, draws: int, out: wp.array(dtype=wp.uint32)):  # type: ignore[valid-type]
        tid = wp.tid()
        state = wp.rand_init(seed, tid)
        for k in range(draws):
            out[tid * draws + k] = wp.randu(state)

    @wp.kernel
    def draw_f(seed: int, draws: int, out: wp.array(dtype=wp.float32)):  # type: ignore[valid-type]
        tid = wp.tid()
        state = wp.rand_init(seed, tid)
        for k in range(draws):
            out[tid * draws + k] = wp.randf(state)

    streams = []
    for seed in WARP_SEEDS:
        words = wp.zeros(WARP_THREADS * WARP_DRAWS, dtype=wp.uint32, device="cpu")
        floats = wp.zeros(WARP_THREADS * WARP_DRAWS, dtype=wp.float32, device="cpu")
        wp.launch(draw_u, dim=WARP_THREADS, inputs=[seed, WARP_DRAWS, words], device="cpu")
        wp.launch(draw_f, dim=WARP_THREADS, inputs=[seed, WARP_DRAWS, floats], device="cpu")
        streams.append({"seed": seed, "threads": WARP_THREADS, "draws_per_thread": WARP_DRAWS,
                        "randu": hexes(words.numpy()),
                        "randf_bits": hexes(floats.numpy().astype(np.float32).view(np.uint32))})
    return {"library": "warp-lang", "version": wp.config.version, "device": "cpu",
            "layout": "out[tid * draws_per_thread + k] = wp.randu(state) (k-th draw of thread tid), "
                      "state = wp.rand_init(seed, tid); randf_bits: the same with wp.randf, float32 bits",
            "streams": streams}


def _taichi_draws(ti, seed: int, count: int) -> list[int]:
    ti.init(arch=ti.cpu, random_seed=seed, cpu_max_num_threads=1, log_level=ti.ERROR)
    out = ti.field(ti.u32, shape=count)

    @ti.kernel
    def draw():
        ti.loop_config(serialize=True)
        for j in range(count):
            out[j] = ti.random(ti.u32)

    draw()
    return [int(v) for v in out.to_numpy()]


def record_taichi() -> dict:
    import taichi as ti

    inverse = pow(SEED_SCALE, -1, 1 << 32)
    streams = [{"seed": seed, "thread": 0, "words": hexes(_taichi_draws(ti, seed, TAICHI_DRAWS))}
               for seed in TAICHI_SEEDS]
    threads = []
    for i in TAICHI_THREADS:
        alias = (i * inverse) % (1 << 32)
        alias -= (1 << 32) if alias >= 1 << 31 else 0
        threads.append({"seed": 0, "thread": i, "recorded_as_seed": alias,
                        "words": hexes(_taichi_draws(ti, alias, TAICHI_THREAD_DRAWS))})
    return {"library": "taichi", "version": ti.__version__ if isinstance(ti.__version__, str)
            else ".".join(map(str, ti.__version__)), "arch": "cpu (cpu_max_num_threads=1)",
            "layout": "words: successive ti.random(ti.u32) in a serialized loop after ti.init(random_seed=seed); "
                      "threads: the first draws of thread i under seed 0, recorded as thread 0 under the seed "
                      "recorded_as_seed (recorded_as_seed * 1048391 = i mod 2^32)",
            "seed_scale": SEED_SCALE, "streams": streams, "threads": threads}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args(argv)
    document = {"format": "rngcheck-shipped-streams", "format_version": 1,
                "recorded_by": "scripts/record_shipped_streams.py",
                "warp": record_warp(), "taichi": record_taichi()}
    with open(args.out, "w") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")
    print(f"wrote {os.path.normpath(args.out)}: warp-lang {document['warp']['version']}, "
          f"taichi {document['taichi']['version']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
