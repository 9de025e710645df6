"""The ``tensorflow`` backend: TensorFlow's Philox kernels (the CPU ones by default).

Output words: ``tf.raw_ops.StatelessRandomUniformFullIntV2(shape=[n], key=[k0 | k1 << 32],
counter=[words 0-1 as one uint64, words 2-3 as one uint64], alg=1 (Philox), dtype=uint32)``,
which is how TensorFlow-DirectML maps a DirectML state onto TensorFlow's Philox
(tensorflow/core/lib/random/philox_random.h: key_[0] = low half, counter_[0] least
significant). Tensors over CHUNK_ELEMENTS are generated in chunks whose starting counter
is counter + first/4, computed with rngcheck's 128-bit add (within a chunk the counter
arithmetic is TensorFlow's).

Option ``jit_compile=1`` runs the same op XLA-compiled (TensorFlow's tf2xla kernel, built
on XLA's Philox) instead of the CPU kernel: a second implementation behind the same call.

Output state (option ``state``):
  * ``library`` (default): TensorFlow's own notion of the state after n outputs,
    ``tf.random.Generator.from_state([counter lo64, counter hi64, key], alg="philox")``
    then ``.skip(n)`` ("the state after skip(n) is the same as after drawing n values").
    TensorFlow advances the counter by 256 * n there, not ceil(n / 4): a documented
    difference (docs/library-findings.md).
  * ``spec``: rngcheck.counter.advance (counter + ceil(n/4)), to check the words alone.

Isolation (option ``isolate``, default 1): TensorFlow runs in a child process. The
tensorflow-cpu wheel loads its libraries with RTLD_GLOBAL, exporting its own LLVM; once it
is imported, pocl (the OpenCL backend's CPU driver, which uses the system's LLVM) fails to
build kernels ("unknown target CPU") or segfaults. In a child process TensorFlow cannot
break other backends of the same run. ``isolate=0`` imports TensorFlow in-process.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
from multiprocessing.connection import Connection

import numpy as np

from .. import counter
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable
from . import Backend, placement

PHILOX_ALG = 1  # tensorflow RNG_ALG_PHILOX
LOW64 = (1 << 64) - 1
STATE_MODES = ("library", "spec")
INSTALL_HINT = "tensorflow is not installed: pip install rngcheck[tensorflow]"
START_TIMEOUT_S = 600


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
        if jit_compile:  # the tf2xla kernel; shape is a compile-time constant input
            self.kernel = tf.function(self._stateless_kernel, jit_compile=True, autograph=False)
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
            "device": self.device_name,
        }

    def _stateless_kernel(self, shape, key, counter_words):
        tf = self.tf
        return tf.raw_ops.StatelessRandomUniformFullIntV2(
            shape=shape, key=key, counter=counter_words,
            alg=tf.constant(PHILOX_ALG, dtype=tf.int32), dtype=tf.uint32)

    def words(self, c: int, key: int, count: int) -> np.ndarray:
        tf = self.tf
        with tf.device(self.device):
            out = self.kernel(tf.constant([count], dtype=tf.int64), tf.constant([key], dtype=tf.uint64),
                              tf.constant([c & LOW64, c >> 64], dtype=tf.uint64))
        return out.numpy()

    def library_state(self, c: int, key: int, n: int) -> np.ndarray:
        """TensorFlow's state after n outputs: Generator.from_state(...).skip(n), as 6 words."""
        tf = self.tf
        words = np.array([c & LOW64, c >> 64, key], dtype=np.uint64).view(np.int64)
        with tf.device(self.device):
            generator = tf.random.Generator.from_state(tf.constant(words), alg="philox")
            generator.skip(n)
            after = generator.state.numpy()
        lo, hi, new_key = (int(w) for w in after.astype(np.int64).view(np.uint64))
        new_c = lo | (hi << 64)
        return np.array([(new_c >> (32 * i)) & 0xFFFFFFFF for i in range(4)]
                        + [new_key & 0xFFFFFFFF, new_key >> 32], dtype=np.uint32)


def _serve(fd: int, device: str, jit_compile: bool) -> None:
    """The child process: build _TensorFlow, then answer (method, args) requests until closed."""
    conn = Connection(fd)
    try:
        engine = _TensorFlow(device, jit_compile)
    except BackendUnavailable as error:
        conn.send(("unavailable", str(error)))
        return
    conn.send(("ready", None))
    while True:
        try:
            method, args = conn.recv()
        except EOFError:
            return
        if method == "close":
            return
        try:
            conn.send(("ok", getattr(engine, method)(*args)))
        except Exception as error:  # report to the parent, keep serving
            conn.send(("error", f"{type(error).__name__}: {error}"))


class _Worker:
    """A child process running _TensorFlow; same methods, called over a socket."""

    def __init__(self, device: str, jit_compile: bool):
        parent, child = socket.socketpair()
        self._log = tempfile.TemporaryFile()
        code = ("import sys; from rngcheck.backends.tensorflow_backend import _serve; "
                "_serve(int(sys.argv[1]), sys.argv[2], sys.argv[3] == '1')")
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        self._process = subprocess.Popen(
            [sys.executable, "-c", code, str(child.fileno()), device, "1" if jit_compile else "0"],
            pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
            env=env)
        child.close()
        self._conn = Connection(parent.detach())
        if not self._conn.poll(START_TIMEOUT_S):
            self.close()
            raise BackendUnavailable(f"tensorflow worker did not start within {START_TIMEOUT_S} s")
        status, detail = self._receive()
        if status == "unavailable":
            self.close()
            raise BackendUnavailable(detail)
        self.describe_cache = self.call("describe")

    def _receive(self):
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            raise RuntimeError(f"the tensorflow worker process died: {self._log_tail()}") from None

    def _log_tail(self) -> str:
        self._process.poll()
        self._log.seek(0)
        tail = self._log.read().decode(errors="replace").strip().splitlines()[-5:]
        return f"exit code {self._process.returncode}; " + " | ".join(tail)

    def call(self, method: str, *args):
        self._conn.send((method, args))
        status, result = self._receive()
        if status == "error":
            raise RuntimeError(f"tensorflow worker: {result}")
        return result

    def close(self) -> None:
        if self._process.poll() is None:
            try:
                self._conn.send(("close", ()))
                self._process.wait(timeout=10)
            except Exception:
                self._process.kill()
                self._process.wait()
        self._conn.close()
        self._log.close()


class TensorFlowBackend(Backend):
    """TensorFlow's stateless Philox (StatelessRandomUniformFullIntV2) and Generator state."""

    name = "tensorflow"
    validates = False

    def __init__(self, device: str = "/CPU:0", state: str = "library", jit_compile: str = "0",
                 isolate: str = "1"):
        for option, value in (("jit_compile", jit_compile), ("isolate", isolate)):
            if str(value) not in ("0", "1"):
                raise BackendSpecError(f"tensorflow option {option} must be 0 or 1, got {value!r}")
        if state not in STATE_MODES:
            raise BackendSpecError(f"tensorflow option state must be one of {', '.join(STATE_MODES)}, "
                                   f"got {state!r}")
        if importlib.util.find_spec("tensorflow") is None:
            raise BackendUnavailable(INSTALL_HINT)
        self.state_mode = state
        self.isolated = str(isolate) == "1" and os.name == "posix"
        jit = str(jit_compile) == "1"
        self._worker = None
        if self.isolated:
            self._worker = _Worker(device, jit)
            self._describe = self._worker.describe_cache
            self._call = self._worker.call
        else:
            engine = _TensorFlow(device, jit)
            self._describe = engine.describe()
            self._call = lambda method, *args: getattr(engine, method)(*args)

    def describe(self) -> dict[str, str]:
        return {
            **self._describe,
            "output-state": ("tf.random.Generator.skip(n)" if self.state_mode == "library"
                             else "rngcheck.counter.advance (spec)"),
            "process": "child process (isolate=1)" if self.isolated else "in-process",
        }

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        state = placement.read_state(state)
        c = counter.counter_of(state)
        k0, k1 = counter.key_of(state)
        key = k0 | (k1 << 32)

        def produce(first, count):
            start = counter.counter_of(counter.add_to_counter(state, first // 4))
            return self._call("words", start, key, count)

        n = placement.place(sizes, strides, buffer, produce)
        if not output_state:
            return None
        if self.state_mode == "spec":
            return counter.advance(state, n)
        return self._call("library_state", c, key, n)
