"""The ``curand`` backend: NVIDIA cuRAND's host Philox4x32-10 generator, through ctypes.

``curandCreateGeneratorHost(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10)`` runs on the CPU: no GPU,
no driver, only ``libcurand.so.10`` from the ``nvidia-curand-cu12`` wheel (which needs no
other CUDA library). Measured mapping (cuRAND 10.3.10, docs/library-findings.md):

  * key = the 64-bit seed (``curandSetPseudoRandomGeneratorSeed``): k0 = its low half;
  * ``curandGenerate`` interleaves 65536 subsequences: output word p (counted from offset 0)
    is lane p % 4 of Philox(counter, seed) with b = p // 4 and counter words
    0-1 = b // 65536, word 2 = b % 65536 (the subsequence), word 3 = 0;
    ``curandSetGeneratorOffset(o)`` starts at word o of that sequence. The orderings
    DEFAULT, BEST and LEGACY give the same sequence; SEEDED and DYNAMIC are refused
    (CURAND_STATUS_OUT_OF_RANGE) by the host generator.

So the operator's state (x = words 0-1, z = word 2, word 3, key) is expressible only when
word 3 = 0, z < 65536 and the offsets 4 * (x' * 65536 + z) of the blocks used fit cuRAND's
64-bit offset (x + ceil(n/4) < 2^46); any other state raises NotApplicable with the reason. Consecutive blocks of the
operator (x, z), (x + 1, z), ... are 65536 blocks (262144 words) apart in cuRAND's output:
the backend sets the offset once, streams the words from the block of (x, z) to the last one
needed through ``curandGenerate`` and picks the four lanes of subsequence z out of every
262144 words (the words it returns are the library's; nothing is computed). That costs
262144 generated words per operator block, so tensors of more than ``max_blocks`` blocks
(default 16384, ~10 s here) raise NotApplicable, naming the cost; ``curand:max_blocks=N``
raises the cap.

Output state: cuRAND has no state readback; its whole state is (seed, offset), and a
generate of k words advances the offset by k (curand.h: the offset is absolute, and
successive calls continue the sequence). The backend reads the position the library
continues from the only way cuRAND allows: it draws the next 4 words from the same generator
and requires them to equal 4 words drawn by a second generator set with
``curandSetGeneratorOffset`` to the position the mapping predicts (else it raises: the
library's offset semantics are not the ones the mapping assumes). That verified position
is then converted back to the operator's state: the next unused block of subsequence z
(a partly used block is discarded, as DirectML discards it), key = the seed.

Device: ``device=host`` (the default) is the host generator above. ``device=gpu`` makes the same calls on a
device generator (``curandCreateGenerator``, output in GPU memory) through CuPy's cuRAND bindings
(cupy.cuda.curand, cupy-cuda12x/13x); cuRAND documents the host generator as giving the device generator's
sequence, which is what the same mapping then checks. Without CuPy or a CUDA device it is unavailable, with
the reason in one line. Not run on a GPU yet (issue 41: scripts/gpu-check.sh runs it).
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from collections.abc import Callable

import numpy as np

from .. import counter
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable
from . import Backend, placement

CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161
SUBSEQUENCES = 1 << 16                 # cuRAND's host Philox interleaves 65536 subsequences
STRIDE_WORDS = 4 * SUBSEQUENCES        # words between consecutive blocks of one subsequence
MAX_X = 1 << 46                        # 4 * (x * 65536 + z) < 2^64
STREAM_WORDS = 64 * STRIDE_WORDS       # words per curandGenerate call when streaming (64 MiB)
DEFAULT_MAX_BLOCKS = 16384
STATUS = {0: "SUCCESS", 100: "VERSION_MISMATCH", 101: "NOT_INITIALIZED", 102: "ALLOCATION_FAILED",
          103: "TYPE_ERROR", 104: "OUT_OF_RANGE", 105: "LENGTH_NOT_MULTIPLE", 106: "DOUBLE_PRECISION_REQUIRED",
          201: "LAUNCH_FAILURE", 202: "PREEXISTING_FAILURE", 203: "INITIALIZATION_FAILED",
          204: "ARCH_MISMATCH", 999: "INTERNAL_ERROR"}
INSTALL_HINT = "pip install rngcheck[curand]"
DEVICES = ("host", "gpu")


class CurandError(RuntimeError):
    """A cuRAND call returned a status other than CURAND_STATUS_SUCCESS."""


def find_library(path: str | None = None) -> str:
    """libcurand.so.10: ``path``, else RNGCHECK_CURAND_LIBRARY, else the nvidia-curand-cu12 wheel's."""
    path = path or os.environ.get("RNGCHECK_CURAND_LIBRARY")
    if path:
        return path
    try:
        import nvidia.curand
    except ImportError:
        raise BackendUnavailable(f"cuRAND is not installed: {INSTALL_HINT}") from None
    for folder in list(getattr(nvidia.curand, "__path__", [])):
        candidate = os.path.join(folder, "lib", "libcurand.so.10")
        if os.path.exists(candidate):
            return candidate
    raise BackendUnavailable(f"the nvidia-curand-cu12 package has no lib/libcurand.so.10: {INSTALL_HINT}")


class Library:
    """The few cuRAND host-API entry points the backend calls, with their argument types."""

    # set in __init__ from the library (ctypes functions returning a curandStatus_t)
    curandCreateGeneratorHost: Callable[..., int]
    curandDestroyGenerator: Callable[..., int]
    curandSetPseudoRandomGeneratorSeed: Callable[..., int]
    curandSetGeneratorOffset: Callable[..., int]
    curandGenerate: Callable[..., int]
    curandGetVersion: Callable[..., int]
    curandGenerateUniform: Callable[..., int]
    curandGenerateNormal: Callable[..., int]

    def __init__(self, path: str):
        if sys.platform != "linux":
            raise BackendUnavailable("the curand backend loads libcurand.so (Linux only)")
        try:
            lib = ctypes.CDLL(path)
        except OSError as error:
            raise BackendUnavailable(f"cannot load {path}: {error} ({INSTALL_HINT})") from None
        self.path = path
        p, u64, size = ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t
        for name, argtypes in (("curandCreateGeneratorHost", [ctypes.POINTER(p), ctypes.c_int]),
                               ("curandDestroyGenerator", [p]),
                               ("curandSetPseudoRandomGeneratorSeed", [p, u64]),
                               ("curandSetGeneratorOffset", [p, u64]),
                               ("curandGenerate", [p, p, size]),
                               ("curandGetVersion", [ctypes.POINTER(ctypes.c_int)]),
                               ("curandGenerateUniform", [p, p, size]),
                               ("curandGenerateNormal", [p, p, size, ctypes.c_float, ctypes.c_float])):
            function = getattr(lib, name)
            function.argtypes, function.restype = argtypes, ctypes.c_int
            setattr(self, name, function)

    def check(self, status: int, call: str) -> None:
        if status != 0:
            raise CurandError(f"{call} returned CURAND_STATUS_{STATUS.get(status, status)} ({status})")

    def version(self) -> int:
        value = ctypes.c_int()
        self.check(self.curandGetVersion(ctypes.byref(value)), "curandGetVersion")
        return value.value


class Generator:
    """One host Philox generator: seed, offset, generate (and the uniform and normal calls)."""

    def __init__(self, lib: Library):
        self.lib = lib
        self.handle = ctypes.c_void_p()
        lib.check(lib.curandCreateGeneratorHost(ctypes.byref(self.handle), CURAND_RNG_PSEUDO_PHILOX4_32_10),
                  "curandCreateGeneratorHost(PHILOX4_32_10)")

    def start(self, seed: int, offset: int) -> None:
        self.lib.check(self.lib.curandSetPseudoRandomGeneratorSeed(self.handle, seed),
                       "curandSetPseudoRandomGeneratorSeed")
        self.lib.check(self.lib.curandSetGeneratorOffset(self.handle, offset), "curandSetGeneratorOffset")

    def generate(self, out: np.ndarray) -> np.ndarray:
        assert out.dtype == np.uint32 and out.flags.c_contiguous
        self.lib.check(self.lib.curandGenerate(self.handle, out.ctypes.data, out.size), "curandGenerate")
        return out

    def generate_uniform(self, out: np.ndarray) -> None:
        self.lib.check(self.lib.curandGenerateUniform(self.handle, out.ctypes.data, out.size), "curandGenerateUniform")

    def generate_normal(self, out: np.ndarray) -> None:
        self.lib.check(self.lib.curandGenerateNormal(self.handle, out.ctypes.data, out.size, 0.0, 1.0),
                       "curandGenerateNormal")

    def close(self) -> None:
        if self.handle:
            self.lib.curandDestroyGenerator(self.handle)
            self.handle = ctypes.c_void_p()


def cupy_curand():
    """(cupy, cupy.cuda.curand) with a CUDA device, else BackendUnavailable naming what is missing."""
    try:
        import cupy
        from cupy.cuda import curand
    except ImportError as error:
        raise BackendUnavailable(f"curand: device=gpu needs CuPy (pip install cupy-cuda13x): {error}") from None
    try:
        devices = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # cupy raises CUDARuntimeError (no driver, no device)
        raise BackendUnavailable(f"curand: device=gpu: no CUDA device ({type(error).__name__}: {error})") from None
    if devices < 1:
        raise BackendUnavailable("curand: device=gpu: no CUDA device (cupy sees 0 devices)")
    return cupy, curand


class DeviceGenerator:
    """One device Philox generator (curandCreateGenerator) through CuPy: Generator's calls, output copied
    back to the host."""

    def __init__(self):
        self.cupy, self.curand = cupy_curand()
        self.handle = self.curand.createGenerator(CURAND_RNG_PSEUDO_PHILOX4_32_10)

    def start(self, seed: int, offset: int) -> None:
        self.curand.setPseudoRandomGeneratorSeed(self.handle, seed)
        self.curand.setGeneratorOffset(self.handle, offset)

    def _call(self, call: str, out: np.ndarray, *arguments) -> np.ndarray:
        device = self.cupy.empty(out.size, dtype=out.dtype)
        getattr(self.curand, call)(self.handle, device.data.ptr, out.size, *arguments)
        out[...] = device.get()
        return out

    def generate(self, out: np.ndarray) -> np.ndarray:
        assert out.dtype == np.uint32 and out.flags.c_contiguous
        return self._call("generate", out)

    def generate_uniform(self, out: np.ndarray) -> None:
        self._call("generateUniform", out)

    def generate_normal(self, out: np.ndarray) -> None:
        self._call("generateNormal", out, 0.0, 1.0)

    def close(self) -> None:
        if self.handle:
            self.curand.destroyGenerator(self.handle)
            self.handle = 0


def words_spanned(n: int) -> int:
    """cuRAND words from a subsequence's first block to the n-th word of that subsequence (its
    blocks are STRIDE_WORDS apart): where the generator stands after the draw."""
    blocks = counter.blocks_for(n)
    return (blocks - 1) * STRIDE_WORDS + (n - 4 * (blocks - 1))


def expressible(state, n: int, max_blocks: int) -> tuple[int, int]:
    """(x, z) of a state cuRAND's host generator can express for n elements, else NotApplicable."""
    words = [int(w) for w in state]
    if words[3]:
        raise NotApplicable(f"counter word 3 = {words[3]:#x}: cuRAND's host Philox generator keeps "
                            f"counter word 3 at 0")
    if words[2] >= SUBSEQUENCES:
        raise NotApplicable(f"counter word 2 = {words[2]:#x}: cuRAND's host Philox generator keeps its "
                            f"subsequence (0..65535) in counter word 2")
    x, _ = counter.counter_halves(state)                  # words 0-1
    blocks = counter.blocks_for(n)
    if x + blocks >= MAX_X:
        raise NotApplicable(f"counter words 0-1 = {x:#x} (+ {blocks} blocks) reach 2^46: cuRAND's offset of "
                            f"those words, 4 * (words 0-1 * 65536 + word 2), does not fit its 64 bits "
                            f"(curandSetGeneratorOffset)")
    if blocks > max_blocks:
        raise NotApplicable(f"{n} elements = {blocks} Philox blocks of one cuRAND subsequence, which "
                            f"cuRAND interleaves 65536 blocks apart: {(blocks - 1) * STRIDE_WORDS + 4} words "
                            f"to generate, over the cost cap max_blocks={max_blocks} (curand:max_blocks=N)")
    return x, words[2]


class CurandBackend(Backend):
    """cuRAND's host Philox4x32-10 generator (curandCreateGeneratorHost), on the CPU.

    Numbers (``conventions = ("curand",)``, rngcheck.numbers.curand): ``curandGenerateUniform``
    and ``curandGenerateNormal`` (mean 0, stddev 1) in float32, on the same mapping as the words:
    from the offset of the state's (x, z), every 262144th block's four lanes are the operator's
    stream order (element p of either call comes from word p of ``curandGenerate``; a normal pairs
    lanes (0, 1) and (2, 3) of one block, so the picked lanes keep their pairs). The float64 calls
    lay four doubles on two blocks of one subsequence, subsequence after subsequence, a layout not
    mapped here: float64 is not applicable. ``bits`` (uint32) are ``curandGenerate``'s words.
    """

    name = "curand"
    validates = False
    conventions = ("curand",)
    generator: Generator | DeviceGenerator
    checker: Generator | DeviceGenerator

    def __init__(self, max_blocks=DEFAULT_MAX_BLOCKS, library=None, device="host"):
        if device not in DEVICES:
            raise BackendSpecError(f"curand: device must be one of {', '.join(DEVICES)}, got {device!r}")
        self.device = device
        try:
            self.max_blocks = int(max_blocks)
        except ValueError:
            raise BackendSpecError(f"curand: max_blocks must be an integer, got {max_blocks!r}") from None
        if self.max_blocks < 1:
            raise BackendSpecError(f"curand: max_blocks must be at least 1, got {max_blocks!r}")
        self._scratch = None
        if device == "gpu":
            self.generator = DeviceGenerator()
            self.checker = DeviceGenerator()     # a second generator: reads the position back
            return
        self.lib = Library(find_library(library))
        self.generator = Generator(self.lib)
        self.checker = Generator(self.lib)     # a second generator: reads the position back

    def describe(self) -> dict[str, str]:
        if isinstance(self.generator, DeviceGenerator):
            cupy, curand = self.generator.cupy, self.generator.curand
            version = curand.getVersion()
            properties = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
            name = properties["name"]
            return {
                "implementation": "cuRAND device generator curandCreateGenerator(CURAND_RNG_PSEUDO_PHILOX4_32_10) "
                                  "through cupy.cuda.curand, curandGenerate",
                "version": f"cuRAND {version} (cupy {cupy.__version__})",
                "curand": f"{version // 1000}.{version % 1000 // 100}.{version % 100} (curandGetVersion {version})",
                "cupy": cupy.__version__,
                "device": f"gpu ({name.decode() if isinstance(name, bytes) else name})",
                "max_blocks": str(self.max_blocks),
            }
        version = self.lib.version()
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as package_version
        try:
            wheel = package_version("nvidia-curand-cu12")
        except PackageNotFoundError:
            wheel = "not installed as a package (library given by path)"
        return {
            "implementation": "cuRAND host generator curandCreateGeneratorHost(CURAND_RNG_PSEUDO_PHILOX4_32_10), "
                              "curandGenerate",
            "version": f"nvidia-curand-cu12 {wheel}",
            "curand": f"{version // 1000}.{version % 1000 // 100}.{version % 100} (curandGetVersion {version})",
            "nvidia-curand-cu12": wheel,
            "library": self.lib.path,
            "device": f"host CPU ({platform.processor() or platform.machine()}), no GPU",
            "max_blocks": str(self.max_blocks),
        }

    def close(self) -> None:
        self.generator.close()
        self.checker.close()
        self._scratch = None

    def _buffer(self, size: int) -> np.ndarray:
        if self._scratch is None or self._scratch.size < size:
            self._scratch = None
            self._scratch = np.empty(size, dtype=np.uint32)
        return self._scratch[:size]

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        state = placement.read_state(state)
        n = placement.checked_element_count(sizes, strides, buffer)
        x, z = expressible(state, n, self.max_blocks)
        seed = counter.key_value(state)
        offset = 4 * (x * SUBSEQUENCES + z)
        words = self._draw(seed, offset, n)
        placement.place(sizes, strides, buffer, lambda first, count: words[first:first + count])
        if not output_state:
            return None
        position = offset + words_spanned(n)
        self._check_position(seed, position)
        return self._state_at(position, z, seed)

    def _draw(self, seed: int, offset: int, n: int) -> np.ndarray:
        """The n words of subsequence z from cuRAND: lanes of every 262144th block from ``offset``."""
        blocks = counter.blocks_for(n)
        total = words_spanned(n)
        words = np.empty(4 * blocks, dtype=np.uint32)
        self.generator.start(seed, offset)
        done = 0
        for start in range(0, total, STREAM_WORDS):
            count = min(STREAM_WORDS, total - start)
            chunk = self.generator.generate(self._buffer(count))
            for j in range(start // STRIDE_WORDS, -(-(start + count) // STRIDE_WORDS)):
                lanes = chunk[j * STRIDE_WORDS - start: j * STRIDE_WORDS - start + 4]
                words[4 * j:4 * j + lanes.size] = lanes
                done += lanes.size
        assert done == n, (done, n)
        return words[:n]

    def random_numbers(self, request: dict, state):
        """float32 uniform and normal numbers of the curand convention; see the class doc."""
        from .. import numbers

        parsed = self.numbers_request(request)
        if parsed.kind not in (numbers.UNIFORM, numbers.NORMAL, numbers.BITS) or parsed.dtype == "float64":
            raise NotApplicable(f"{parsed.kind} {parsed.dtype}: the curand backend draws float32 uniforms and "
                                "normals and uint32 bits (cuRAND's float64 layout is not mapped)")
        if parsed.count == 0:
            return np.empty(0, dtype=np.uint32 if parsed.kind == numbers.BITS else np.float32)
        state = placement.read_state(state)
        x, z = expressible(state, parsed.count, self.max_blocks)
        offset = 4 * (x * SUBSEQUENCES + z)
        if parsed.kind == numbers.BITS:                  # curandGenerate: the words themselves
            return self._draw(counter.key_value(state), offset, parsed.count).copy()
        total = words_spanned(parsed.count)
        total += total % 2                    # curandGenerateNormal takes an even count
        out = np.empty(total, dtype=np.float32)
        self.generator.start(counter.key_value(state), offset)
        if parsed.kind == numbers.UNIFORM:
            self.generator.generate_uniform(out)
        else:
            self.generator.generate_normal(out)
        blocks = counter.blocks_for(parsed.count)
        picked = (np.arange(blocks)[:, None] * STRIDE_WORDS + np.arange(4)[None, :]).reshape(-1)[:parsed.count]
        return out[picked]

    def _check_position(self, seed: int, position: int) -> None:
        """The generator continues at ``position``: its next 4 words equal a fresh generator's there."""
        following = self.generator.generate(np.empty(4, dtype=np.uint32))
        self.checker.start(seed, position)
        there = self.checker.generate(np.empty(4, dtype=np.uint32))
        if not np.array_equal(following, there):
            raise CurandError(f"cuRAND did not continue at offset {position} after the draw: its next words "
                              f"{[hex(w) for w in following]} are not those at that offset "
                              f"{[hex(w) for w in there]}")

    @staticmethod
    def _state_at(position: int, z: int, seed: int) -> np.ndarray:
        """The operator's state for cuRAND position ``position``: subsequence z's next unused block."""
        block = -(-position // 4)                                  # a partly used block is discarded
        block += (z - block) % SUBSEQUENCES                       # the next block of subsequence z
        x = block // SUBSEQUENCES
        return counter.make_state(counter.counter_from_halves(x, z), seed)
