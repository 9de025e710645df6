"""The ``tensorflow`` backend: TensorFlow's Philox kernels (the CPU ones by default).

Output words: ``tf.raw_ops.StatelessRandomUniformFullIntV2(shape=[n], key=[k0 | k1 << 32],
counter=[words 0-1 as one uint64, words 2-3 as one uint64], alg=1 (Philox), dtype=uint32)``
(rngcheck.counter rules 2 and 3: ``key_value``, ``counter_halves``),
which is how TensorFlow-DirectML maps a DirectML state onto TensorFlow's Philox
(tensorflow/core/lib/random/philox_random.h: key_[0] = low half, counter_[0] least
significant). Tensors over placement.CHUNK_ELEMENTS are generated in chunks whose starting
counter is counter + first/4, computed with rngcheck's 128-bit add (counter.add_to_counter;
within a chunk the counter arithmetic is TensorFlow's).

Option ``jit_compile=1`` runs the same op XLA-compiled (TensorFlow's tf2xla kernel, built
on XLA's Philox) instead of the CPU kernel: a second implementation behind the same call.

Output state (option ``state``):
  * ``library`` (default): TensorFlow's own notion of the state after n outputs,
    ``tf.random.Generator.from_state([counter lo64, counter hi64, key], alg="philox")``
    then ``.skip(n)`` ("the state after skip(n) is the same as after drawing n values").
    TensorFlow advances the counter by 256 * n there, not ceil(n / 4): a documented
    difference (docs/library-findings.md).
  * ``spec``: rngcheck.counter.advance (counter + ceil(n/4)), to check the words alone.

Numbers (``conventions = ("tensorflow",)``, ``random_numbers``; rngcheck.numbers.tensorflow):
one TensorFlow op per request, on the state's key and counter mapped as above:
  * uniform: ``tf.raw_ops.StatelessRandomUniformV2``; with low/high, then
    ``rnd * (high - low) + low`` with low and high converted to the dtype, every step in the
    dtype, as ``tf.random.stateless_uniform`` computes it;
  * normal, truncated_normal: ``StatelessRandomNormalV2``, ``StatelessTruncatedNormalV2``;
  * integers: ``StatelessRandomUniformIntV2`` (minval = low, maxval = high);
  * bits: ``StatelessRandomUniformFullIntV2``;
all with ``alg=1`` (Philox). A request with a ``seed`` goes through TensorFlow's own seed path
instead (``tf.random.stateless_uniform`` / ``stateless_normal`` / ``stateless_truncated_normal``
with ``seed=[a, b]``, ``alg="philox"``: StatelessRandomGetKeyCounter scrambles the seed), and the
state is ignored. With ``jit_compile=1`` the same graph is XLA-compiled (tf2xla's kernels,
tensorflow/compiler/tf2xla/kernels/stateless_random_ops_v2.cc). Measured with TensorFlow 2.21, they
draw the same words, integers, bits and float16 uniforms as the CPU kernels, but float32/float64
uniforms from the words' *high* bits (word >> 9; the 64-bit pair >> 12), bfloat16 as that float32
truncated, and normals from those uniforms: not TensorFlow's CPU numbers
(tests/test_tensorflow_numbers.py pins it). A request is one call:
more than MAX_NUMBERS numbers is not applicable (the answer is one array in memory, and one
exec-protocol message). bfloat16 comes back as its bits (uint16).

Generators (``generator_blocks``): ``philox4x32`` at 10 rounds, one block per counter from the same
op and mapping as the words (the CPU kernel, or tf2xla's with ``jit_compile=1``), and ``threefry2x32``
at 20 rounds, TensorFlow's other algorithm (``alg=2``, RNG_ALG_THREEFRY), which runs only on XLA
devices: the op always XLA-compiled (``jit_compile=True``) on the backend's device. tf2xla forms the
state u64[2] {key, counter} of XLA's ThreeFry (xla/hlo/builder/lib/prng.cc ThreeFryBitGenerator), whose
block i is threefry2x32 of (counter + i) split into (low, high) 32-bit words, keyed by the 64-bit key
split the same way. So block (x0, x1) keyed (k0, k1) is the op with ``key = [k0 | k1 << 32]``,
``counter = [x0 | x1 << 32]`` and ``shape = [2]``: output element j is lane j (checked on the
Random123 known answers). Other round counts are not applicable (TensorFlow fixes them).

Keep TensorFlow out of a process that runs OpenCL: the tensorflow-cpu wheel loads its
libraries with RTLD_GLOBAL, exporting its own LLVM; once it is imported, pocl (the OpenCL
backend's CPU driver, which uses the system's LLVM) fails to build kernels ("unknown target
CPU") or segfaults. ``rngcheck run`` hosts every backend but the reference in its own worker
process (rngcheck.backends.exec_backend.isolated), which is what keeps them apart.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np

from .. import counter, numbers
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable
from ..numbers.tensorflow import as_int64
from . import Backend, placement

PHILOX_ALG = 1  # tensorflow RNG_ALG_PHILOX
THREEFRY_ALG = 2  # tensorflow RNG_ALG_THREEFRY (XLA devices only)
GENERATOR_ROUNDS = {"philox4x32": 10, "threefry2x32": 20}
MAX_NUMBERS = 1 << 22  # numbers per request: one op, one array, one protocol message (32 MiB of int64)
STATE_MODES = ("library", "spec")
INSTALL_HINT = "tensorflow is not installed: pip install rngcheck[tensorflow]"


class _TensorFlow:
    """TensorFlow itself, in whichever process imports it."""

    def __init__(self, device: str, jit_compile: bool):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's start-up chatter
        try:
            import tensorflow as tf
        except ImportError:
            raise BackendUnavailable(INSTALL_HINT) from None
        self.tf = tf
        self.device = device
        self.jit_compile = jit_compile
        self.kernel = self._stateless_kernel
        self.numbers_kernel = self._numbers_kernel
        self.seeded_kernel = self._seeded_kernel
        # ThreeFry runs only on XLA devices: always compiled (traced on its first call)
        self.threefry_kernel = tf.function(self._threefry_kernel, jit_compile=True, autograph=False)
        if jit_compile:  # the tf2xla kernel; shape is a compile-time constant input
            self.kernel = tf.function(self._stateless_kernel, jit_compile=True, autograph=False)
            self.numbers_kernel = tf.function(self._numbers_kernel, jit_compile=True, autograph=False)
            self.seeded_kernel = tf.function(self._seeded_kernel, jit_compile=True, autograph=False)
        try:
            with tf.device(device):
                self.device_name = tf.constant(0).device or device
        except (RuntimeError, ValueError) as error:
            raise BackendUnavailable(f"tensorflow device {device!r} is unavailable: {error}") from None

    def describe(self) -> dict[str, str]:
        return {
            "implementation": "tf.raw_ops.StatelessRandomUniformFullIntV2 (alg=Philox)"
                              + (", XLA-compiled (jit_compile=True)" if self.jit_compile else ""),
            "tensorflow": self.tf.__version__,
            "version": f"tensorflow {self.tf.__version__}",
            "device": self.device_name,
        }

    def _stateless_kernel(self, shape, key, counter_words):
        tf = self.tf
        return tf.raw_ops.StatelessRandomUniformFullIntV2(
            shape=shape, key=key, counter=counter_words,
            alg=tf.constant(PHILOX_ALG, dtype=tf.int32), dtype=tf.uint32)

    def words(self, state: np.ndarray, count: int) -> np.ndarray:
        """``count`` words from the block of ``state``'s counter on (TensorFlow's counter arithmetic)."""
        tf = self.tf
        with tf.device(self.device):
            out = self.kernel(tf.constant([count], dtype=tf.int64),
                              tf.constant([counter.key_value(state)], dtype=tf.uint64),
                              tf.constant(counter.counter_halves(state), dtype=tf.uint64))
        return out.numpy()

    def _threefry_kernel(self, key, counter_words):
        tf = self.tf
        return tf.raw_ops.StatelessRandomUniformFullIntV2(
            shape=tf.constant([2], dtype=tf.int64), key=key, counter=counter_words,
            alg=tf.constant(THREEFRY_ALG, dtype=tf.int32), dtype=tf.uint32)

    def blocks(self, generator: str, counters: np.ndarray, key) -> np.ndarray:
        """One block per row of ``counters`` (see the module doc)."""
        tf = self.tf
        out = np.empty_like(counters)
        key_value = sum(int(k) << (32 * i) for i, k in enumerate(key))
        with tf.device(self.device):
            for row, words in enumerate(counters):
                if generator == "threefry2x32":
                    answer = self.threefry_kernel(tf.constant([key_value], dtype=tf.uint64),
                                    tf.constant([int(words[0]) | int(words[1]) << 32], dtype=tf.uint64))
                else:
                    state = counter.state_from_words([int(w) for w in words], [int(k) for k in key])
                    answer = self.kernel(tf.constant([4], dtype=tf.int64),
                                         tf.constant([counter.key_value(state)], dtype=tf.uint64),
                                         tf.constant(counter.counter_halves(state), dtype=tf.uint64))
                out[row] = answer.numpy()
        return out

    def _numbers_kernel(self, kind, dtype, shape, key, counter_words, low, high):
        """One stateless V2 op on an explicit key and counter (``low``/``high``: tensors or None)."""
        tf, raw = self.tf, self.tf.raw_ops
        alg = tf.constant(PHILOX_ALG, dtype=tf.int32)
        common = {"shape": shape, "key": key, "counter": counter_words, "alg": alg}
        if kind == numbers.BITS:
            return raw.StatelessRandomUniformFullIntV2(**common, dtype=dtype)
        if kind == numbers.INTEGERS:
            return raw.StatelessRandomUniformIntV2(**common, minval=low, maxval=high)
        if kind == numbers.NORMAL:
            return raw.StatelessRandomNormalV2(**common, dtype=dtype)
        if kind == numbers.TRUNCATED_NORMAL:
            return raw.StatelessTruncatedNormalV2(**common, dtype=dtype)
        rnd = raw.StatelessRandomUniformV2(**common, dtype=dtype)
        if low is None:
            return rnd
        return rnd * (high - low) + low  # stateless_random_ops.py: add(rnd * (maxval - minval), minval)

    def _seeded_kernel(self, kind, dtype, shape, seed, low, high):
        """TensorFlow's stateless API with ``seed=[a, b]``: its own seed scrambling (GetKeyCounter)."""
        tf = self.tf
        if kind == numbers.NORMAL:
            return tf.random.stateless_normal(shape, seed, dtype=dtype, alg="philox")
        if kind == numbers.TRUNCATED_NORMAL:
            return tf.random.stateless_truncated_normal(shape, seed, dtype=dtype, alg="philox")
        if low is None and kind == numbers.UNIFORM:  # the defaults [0, 1)
            return tf.random.stateless_uniform(shape, seed, dtype=dtype, alg="philox")
        return tf.random.stateless_uniform(shape, seed, minval=low, maxval=high, dtype=dtype, alg="philox")

    def numbers(self, request: numbers.Request, state) -> np.ndarray:
        """The request's numbers from TensorFlow (bfloat16 as its bits in uint16)."""
        tf = self.tf
        dtype = tf.as_dtype(request.dtype)
        ranged = request.low is not None
        with tf.device(self.device):
            shape = tf.constant([request.count], dtype=tf.int64)
            low = tf.constant(request.low, dtype=dtype) if ranged else None
            high = tf.constant(request.high, dtype=dtype) if ranged else None
            if request.seed is not None:
                seed = tf.constant([as_int64(s) for s in request.seed], dtype=tf.int64)
                out = self.seeded_kernel(request.kind, dtype, shape, seed, low, high)
            else:
                out = self.numbers_kernel(request.kind, dtype, shape,
                                          tf.constant([counter.key_value(state)], dtype=tf.uint64),
                                          tf.constant(counter.counter_halves(state), dtype=tf.uint64), low, high)
        out = out.numpy()
        return out.view(np.uint16) if request.dtype == "bfloat16" else out

    def library_state(self, state: np.ndarray, n: int) -> np.ndarray:
        """TensorFlow's state after n outputs: Generator.from_state(...).skip(n), as 6 words."""
        tf = self.tf
        words = np.array([*counter.counter_halves(state), counter.key_value(state)], dtype=np.uint64).view(np.int64)
        with tf.device(self.device):
            generator = tf.random.Generator.from_state(tf.constant(words), alg="philox")
            generator.skip(n)
            after = generator.state.numpy()
        low, high, key = (int(w) for w in after.astype(np.int64).view(np.uint64))
        return counter.make_state(counter.counter_from_halves(low, high), key)


class TensorFlowBackend(Backend):
    """TensorFlow's stateless Philox (StatelessRandomUniformFullIntV2) and Generator state."""

    name = "tensorflow"
    validates = False
    conventions = ("tensorflow",)
    generators = tuple(GENERATOR_ROUNDS)

    def __init__(self, device: str = "/CPU:0", state: str = "library", jit_compile: str = "0"):
        if str(jit_compile) not in ("0", "1"):
            raise BackendSpecError(f"tensorflow option jit_compile must be 0 or 1, got {jit_compile!r}")
        if state not in STATE_MODES:
            raise BackendSpecError(f"tensorflow option state must be one of {', '.join(STATE_MODES)}, "
                                   f"got {state!r}")
        if importlib.util.find_spec("tensorflow") is None:
            raise BackendUnavailable(INSTALL_HINT)
        self.state_mode = state
        self.engine = _TensorFlow(device, str(jit_compile) == "1")

    def describe(self) -> dict[str, str]:
        return {
            **self.engine.describe(),
            "output-state": ("tf.random.Generator.skip(n)" if self.state_mode == "library"
                             else "rngcheck.counter.advance (spec)"),
        }

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        state = placement.read_state(state)
        n = placement.place(sizes, strides, buffer,  # a chunk starts on a block boundary: block first / 4
                            lambda first, count: self.engine.words(counter.add_to_counter(state, first // 4), count))
        if not output_state:
            return None
        if self.state_mode == "spec":
            return counter.advance(state, n)
        return self.engine.library_state(state, n)

    def random_numbers(self, request: dict, state):
        """rngcheck.numbers under TensorFlow's convention; see the module doc."""
        parsed = self.numbers_request(request)
        if parsed.count > MAX_NUMBERS:
            raise NotApplicable(f"{parsed.count} numbers in one request: the tensorflow backend draws at most "
                                f"{MAX_NUMBERS} per call")
        state = None if parsed.seed is not None else placement.read_state(state)
        return self.engine.numbers(parsed, state)

    def generator_blocks(self, generator, rounds, counters, key):
        """philox4x32-10 and threefry2x32-20 blocks (see the module doc)."""
        lanes, _ = self.generator_request(generator, counters)
        if int(rounds) != GENERATOR_ROUNDS[generator]:
            raise NotApplicable(f"TensorFlow's {generator} has {GENERATOR_ROUNDS[generator]} rounds, not {rounds}")
        if len(key) != (2 if generator == "threefry2x32" else lanes // 2):
            raise NotApplicable(f"{generator} takes another key than {len(key)} words")
        return self.engine.blocks(generator, np.asarray(counters, dtype=np.uint32), key)
