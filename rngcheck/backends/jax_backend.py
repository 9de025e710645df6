"""The ``jax`` backend: XLA's RngBitGenerator with its Philox algorithm, through JAX.

XLA's Philox (xla/hlo/builder/lib/prng.cc, PhiloxRngBit32) is Philox4x32-10 with a 64-bit
key and a 128-bit counter, block j keyed by counter + j (128-bit add), lanes in order, and
the new counter = counter + ceil(n/4). What differs is the *state* JAX lets you pass
(xla/service/rng_bit_generator_expander.cc; docs/library-findings.md):

  * ``state_words=2`` (default) -- the public API, ``jax.lax.rng_bit_generator(key,
    (n,), uint32, RNG_PHILOX)``, takes a u32[4] = u64[2] state {key, counter_lo}. We pass
    [k0, k1, word 0, word 1]. XLA reverses a 2-word state to form the 128-bit counter,
    so the counter's high 64 bits are the KEY, not state words 2-3 (which cannot be
    passed at all); and the returned state keeps only the low 64 bits of the advanced
    counter (the carry out of word 1 is dropped). The output state we return is the
    library's: [word 0', word 1'] from JAX, words 2-3 as given, key from JAX.
  * ``state_words=3`` -- XLA's full Philox state u64[3] {key, counter_lo, counter_hi},
    which the HLO op accepts but ``jax.lax.rng_bit_generator`` refuses; reached through a
    small private primitive lowered to ``stablehlo.rng_bit_generator``. Output state from
    XLA's returned u64[3].

Large tensors are generated in chunks, each started from the state XLA returned for the
previous chunk (so chunking follows the library's own state semantics). 64-bit JAX is
not needed: states travel as uint32 words and are bitcast inside the computation.

Generators (``generator_blocks``, either state size): ``threefry2x32`` at 20 rounds, the rounds JAX
fixes, from JAX's own primitive ``jax.extend.random.threefry2x32_p`` (the hash behind every default
``jax.random`` key), bound to (k0, k1, x0, x1) with the key broadcast over the blocks: lane j of block
b is output j's element b. Other round counts are not applicable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import counter
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable
from . import Backend, placement

STATE_WORDS = ("2", "3")
_PRIMITIVE: dict[str, Any] = {}  # the u64[3] primitive, built once per process


def _philox_u64x3():
    """A jitted f(state u32[6] = [k0, k1, c0, c1, c2, c3], n) -> (new state u32[6], u32[n])."""
    if "fn" in _PRIMITIVE:
        return _PRIMITIVE["fn"]
    import jax
    from jax import core as jax_core
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import hlo
    from jax.extend.core import Primitive
    from jax.interpreters import mlir

    primitive = Primitive("rngcheck_philox_u64x3")
    primitive.multiple_results = True

    def abstract_eval(state, *, n):
        return (jax_core.ShapedArray((6,), np.uint32), jax_core.ShapedArray((n,), np.uint32))

    def lowering(ctx, state, *, n):
        u32 = ir.IntegerType.get_unsigned(32)
        u64 = ir.IntegerType.get_unsigned(64)
        state64 = hlo.bitcast_convert(ir.RankedTensorType.get([3], u64),
                                      hlo.reshape(ir.RankedTensorType.get([3, 2], u32), state))
        new_state, bits = hlo.RngBitGeneratorOp(
            ir.RankedTensorType.get([3], u64), ir.RankedTensorType.get([n], u32),
            hlo.RngAlgorithmAttr.get("PHILOX"), state64).results
        new_state = hlo.reshape(ir.RankedTensorType.get([6], u32),
                                hlo.bitcast_convert(ir.RankedTensorType.get([3, 2], u32), new_state))
        return [new_state, bits]

    fn = jax.jit(lambda state, n: primitive.bind(state, n=n), static_argnums=1)
    primitive.def_abstract_eval(abstract_eval)
    primitive.def_impl(lambda state, *, n: fn(state, n))
    mlir.register_lowering(primitive, lowering)
    _PRIMITIVE["fn"] = fn
    return fn


class JaxBackend(Backend):
    """jax.lax.rng_bit_generator(..., algorithm=RNG_PHILOX) (XLA), on the CPU by default.

    Numbers: the backend claims the ``jax`` convention so that each numbers case says why it is not
    applicable (never silently "draws no jax numbers"): jax.random's uniform/normal/randint read the
    bits of a JAX key, and no 6-word state maps onto one (the default impl, threefry2x32, is another
    generator; impl='philox4x32' hashes the seed into a two-word key and draws its own blocks). The
    convention's conversions are checked against jax.random itself on its own bits
    (tests/test_numbers_conventions.py).
    """

    name = "jax"
    validates = False
    conventions = ("jax",)
    generators = ("threefry2x32",)
    THREEFRY_ROUNDS = 20   # jax/_src/prng.py _threefry2x32_lowering: five groups of four rounds

    def __init__(self, state_words: str = "2", platform: str = "cpu"):
        state_words = str(state_words)
        if state_words not in STATE_WORDS:
            raise BackendSpecError(f"jax option state_words must be 2 or 3, got {state_words!r}")
        try:
            import jax
            import jax.numpy as jnp
        except ImportError:
            raise BackendUnavailable("jax is not installed: pip install rngcheck[jax]") from None
        self._jax, self._jnp = jax, jnp
        self.state_words = state_words
        try:
            self._device = jax.devices(platform)[0]
        except RuntimeError as error:
            raise BackendUnavailable(f"jax platform {platform!r} is unavailable: {error}") from None
        if state_words == "3":
            try:
                _philox_u64x3()
            except Exception as error:  # private JAX internals moved: say so, do not crash
                raise BackendUnavailable(f"jax {jax.__version__}: the u64[3] Philox state is not "
                                         f"reachable ({type(error).__name__}: {error})") from None

    def describe(self) -> dict[str, str]:
        import jaxlib
        api = ("jax.lax.rng_bit_generator, state u64[2] = {key, counter low}" if self.state_words == "2"
               else "stablehlo.rng_bit_generator, state u64[3] = {key, counter low, counter high}")
        return {
            "implementation": f"XLA RngBitGenerator PHILOX ({api})",
            "version": f"jax {self._jax.__version__}",
            "jax": self._jax.__version__,
            "jaxlib": jaxlib.__version__,
            "device": f"{self._device.platform}: {self._device.device_kind}",
        }

    def _put(self, words):
        return self._jax.device_put(np.asarray(words, dtype=np.uint32), self._device)

    def random_numbers(self, request: dict, state):
        raise NotApplicable("jax.random draws from a JAX key, onto which no state maps: threefry2x32 (the "
                            "default) is not Philox, and impl='philox4x32' hashes the seed into its key")

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        state = placement.read_state(state)
        key, counter_words = counter.key_words(state), counter.counter_words(state)
        if self.state_words == "2":
            # u32[4] = u64[2] {key, counter_lo}; counter words 2-3 cannot be passed.
            library_state = [self._put([*key, *counter_words[:2]])]

            def produce(first, count):
                new_state, bits = self._jax.lax.rng_bit_generator(
                    library_state[0], (count,), dtype=self._jnp.uint32,
                    algorithm=self._jax.lax.RandomAlgorithm.RNG_PHILOX)
                library_state[0] = new_state
                return np.asarray(bits)
        else:
            fn = _philox_u64x3()
            library_state = [self._put([*key, *counter_words])]

            def produce(first, count):
                new_state, bits = fn(library_state[0], count)
                library_state[0] = new_state
                return np.asarray(bits)

        placement.place(sizes, strides, buffer, produce)
        if not output_state:
            return None
        words = np.asarray(library_state[0]).astype(np.uint32)  # [k0, k1, c0, c1 (, c2, c3)]
        if self.state_words == "2":  # words 2-3 are not part of XLA's state: as given
            return counter.state_from_words([*words[2:4], *counter_words[2:]], words[:2])
        return counter.state_from_words(words[2:6], words[:2])

    def generator_blocks(self, generator, rounds, counters, key):
        """threefry2x32-20 blocks from jax.extend.random.threefry2x32_p (see the module doc)."""
        self.generator_request(generator, counters)
        if int(rounds) != self.THREEFRY_ROUNDS:
            raise NotApplicable(f"JAX's threefry2x32 has {self.THREEFRY_ROUNDS} rounds, not {rounds}")
        if len(key) != 2:
            raise NotApplicable(f"threefry2x32 takes a key of 2 words, not {len(key)}")
        from jax.extend.random import threefry2x32_p

        counters = np.asarray(counters, dtype=np.uint32)
        blocks = counters.shape[0]
        k0, k1 = (self._put(np.full(blocks, int(k), dtype=np.uint32)) for k in key)
        y0, y1 = threefry2x32_p.bind(k0, k1, self._put(counters[:, 0]), self._put(counters[:, 1]))
        return np.stack([np.asarray(y0), np.asarray(y1)], axis=1).astype(np.uint32)
