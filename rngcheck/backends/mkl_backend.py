"""The ``mkl`` backend: Intel oneMKL's VSL_BRNG_PHILOX4X32X10 through ``mkl_random``.

Mapping (see docs/library-findings.md):
  * ``mkl_random.MKLRandomState(seed=[w4, w5, w0, w1, w2, w3], brng='PHILOX4X32X10')``:
    MKL initialises Philox4x32-10 from six 32-bit seed words as key = seed[0] | seed[1] << 32
    and 128-bit counter = seed[2] | seed[3] << 32 | seed[4] << 64 | seed[5] << 96, so the
    DirectML state is passed with its key words first. The first block MKL computes is the
    counter itself (no pre-increment, unlike randomgen);
  * the words are MKL's raw 32-bit outputs, ``randint(0, 2**32, dtype=np.uint32)`` (one word
    per value, lanes in order), drawn chunk after chunk from one stream per execution. MKL
    keeps the unused lanes of a partial block for the next call, so every execution builds
    a fresh stream;
  * the output state is read back from MKL's own stream after the draw
    (``get_state(legacy=False)``: MKL's saved stream, ``vslSaveStreamM``): its key and its
    counter, which MKL keeps as the counter of the next block to compute, i.e. the DirectML
    output counter. The buffered lanes of a partial last block are ignored (DirectML has no
    notion of them). A difference in MKL's counter arithmetic therefore shows in the output
    state.

The saved stream's layout is MKL's and is not documented. The constructor checks it on a
stream whose seed words are known (magic ``\\x02RNG``, 68 bytes, key at byte 20, counter at
byte 28) and makes the backend unavailable, with the reason, if it differs.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import platform
import re

import numpy as np

from .. import counter
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendUnavailable
from . import Backend, placement

BRNG = "PHILOX4X32X10"
INSTALL_HINT = "pip install rngcheck[mkl]"

# MKL's saved Philox4x32-10 stream (mkl_random 1.5.0 / MKL 2026.2, measured): bytes 0-3 the
# magic, 20-27 the key (k0, k1), 28-43 the counter of the next block (word 0 first),
# 44-47 the number of buffered lanes, 48-63 the buffered block.
STREAM_MAGIC = b"\x02RNG"
STREAM_SIZE = 68
KEY_OFFSET = 20
COUNTER_OFFSET = 28


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def mkl_version() -> str:
    """The version of the MKL runtime mkl_random loaded (mkl_get_version_string), else the
    ``mkl`` wheel's version."""
    for soname in ("libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so", "mkl_rt.2.dll", "mkl_rt.dll"):
        try:
            library = ctypes.CDLL(soname)
            text = ctypes.create_string_buffer(256)
            library.mkl_get_version_string(text, len(text))
        except (OSError, AttributeError):
            continue
        found = re.search(r"Version (\S+?)-Product Build (\d+)", text.value.decode(errors="replace"))
        if found:
            return f"{found[1]} (build {found[2]})"
    return _package_version("mkl")


def seed_words(state) -> list[int]:
    """The mkl_random seed of a DirectML state: key words first, then the counter words."""
    return [int(w) for w in (*counter.key_words(state), *counter.counter_words(state))]


def stream_state(saved: bytes) -> np.ndarray:
    """The 6-word DirectML state held in MKL's saved Philox stream (see STREAM_SIZE)."""
    if len(saved) != STREAM_SIZE or not saved.startswith(STREAM_MAGIC):
        raise RuntimeError(f"unrecognised MKL Philox stream ({len(saved)} bytes, starts {saved[:4]!r})")
    key = np.frombuffer(saved, dtype="<u4", count=2, offset=KEY_OFFSET)
    counter_words = np.frombuffer(saved, dtype="<u4", count=4, offset=COUNTER_OFFSET)
    return counter.state_from_words(counter_words, key)


class MklBackend(Backend):
    """mkl_random.MKLRandomState(brng='PHILOX4X32X10') on the CPU (Intel oneMKL's VSL).

    Numbers (``conventions = ("mkl",)``, rngcheck.numbers.mkl), each request on a fresh stream of
    the state: float64 ``uniform(low, high, n)`` ([0, 1) unless ranged), float64 normals
    ``standard_normal(n, method='BoxMuller')`` and uint32 bits (``randint``, the words). mkl_random
    draws doubles only: float32 is not applicable.
    """

    name = "mkl"
    validates = False
    conventions = ("mkl",)

    def __init__(self):
        try:
            import mkl_random
        except ImportError:
            raise BackendUnavailable(f"mkl_random is not installed: {INSTALL_HINT}") from None
        self._mkl_random = mkl_random
        self._check_stream_layout()

    def _check_stream_layout(self):
        known = np.array([0x03030303, 0x04040404, 0x05050505, 0x06060606, 0x01010101, 0x02020202],
                         dtype=np.uint32)
        try:
            saved = self._stream(known).get_state(legacy=False)["state"]["mkl_stream"]
            ok = np.array_equal(stream_state(saved), known)
        except Exception as error:  # an mkl_random whose API differs: unavailable, with the reason
            raise BackendUnavailable(f"mkl_random {self._version()} cannot save a {BRNG} stream "
                                     f"as expected: {type(error).__name__}: {error}") from None
        if not ok:
            raise BackendUnavailable(f"mkl_random {self._version()} saves {BRNG} streams in an unknown "
                                     "layout (key expected at byte 20, counter at byte 28)")

    def _version(self) -> str:
        return getattr(self._mkl_random, "__version__", None) or _package_version("mkl_random")

    def describe(self) -> dict[str, str]:
        return {
            "implementation": f"mkl_random.MKLRandomState(brng='{BRNG}')",
            "version": f"mkl_random {self._version()}",
            "mkl_random": self._version(),
            "mkl": mkl_version(),
            "numpy": np.__version__,
            "device": f"cpu ({platform.processor() or platform.machine()})",
        }

    def _stream(self, state):
        return self._mkl_random.MKLRandomState(seed=seed_words(state), brng=BRNG)

    def random_numbers(self, request: dict, state):
        """The mkl convention's float64 uniforms and normals and uint32 bits; see the class doc."""
        from .. import numbers
        from ..errors import NotApplicable

        parsed = self.numbers_request(request)
        if parsed.dtype == "float32":
            raise NotApplicable("mkl_random draws float64 only (vdRng*); float32 (vsRng*) is not exposed")
        stream = self._stream(placement.read_state(state))
        if parsed.kind == numbers.BITS:
            return stream.randint(0, 1 << 32, size=parsed.count, dtype=np.uint32)
        if parsed.kind == numbers.NORMAL:
            return np.asarray(stream.standard_normal(size=parsed.count, method="BoxMuller"), dtype=np.float64)
        low, high = parsed.uniform_range
        return np.asarray(stream.uniform(float(low), float(high), size=parsed.count), dtype=np.float64)

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        state = placement.read_state(state)
        stream = self._stream(state)   # fresh per execution: MKL keeps a partial block's lanes
        placement.place(sizes, strides, buffer,
                        lambda first, count: stream.randint(0, 1 << 32, size=count, dtype=np.uint32))
        if not output_state:
            return None
        return stream_state(stream.get_state(legacy=False)["state"]["mkl_stream"])
