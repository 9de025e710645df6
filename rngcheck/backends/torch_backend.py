"""The ``torch`` backend: PyTorch's at::Philox4_32 (ATen/core/PhiloxRNGEngine.h).

Eager PyTorch on the CPU has no Philox (its CPU generator is mt19937). The Philox engine that
PyTorch ships is the header-only ``at::Philox4_32``; the CPU code that TorchInductor
(``torch.compile``) generates calls it for ``torch.rand``, ``randn`` and ``randint``
(torch/csrc/inductor/cpp_prefix.h). This backend tests the header itself: rngcheck's own C++
helper (rngcheck/backends/torch/philox_helper.cpp) is compiled with g++ against the torch
wheel's include/ folder on first use, into ``cache_root()/torch`` (rebuilt when the source,
the flags or the torch version change), and called through ctypes. libtorch is never loaded
and ``import torch`` never runs.

Mapping (see docs/library-findings.md):
  * seed = k0 | k1 << 32 (state words 4, 5): the engine's key;
  * subsequence = words 2 | 3 << 32, offset = words 0 | 1 << 32 (in blocks): the engine's
    counter is then exactly the state's 128-bit counter;
  * the words are ``engine()``, one per call, lanes in order; a chunk after the first starts
    with the engine's own ``incr_n(first / 4)``;
  * output state (``state=library``, the default): what the engine can report after the draw,
    ``get_offset()`` as words 0-1, the subsequence it was given as words 2-3 (the engine
    keeps no accessor for them; its state, as PyTorch uses it, is seed, subsequence and a
    64-bit offset), the seed as the key. ``state=spec`` returns rngcheck.counter.advance
    instead, to check the words alone.

``HelperBackend`` and ``build_helper`` are shared with the ``onedpl`` backend
(rngcheck/backends/onedpl_backend.py), which builds the same helper source with
``-DRNGCHECK_ENGINE_ONEDPL``.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.metadata
import importlib.util
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .. import counter
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable
from . import Backend, placement

INSTALL_HINT = "torch is not installed: pip install rngcheck[torch] (torch==2.13.0, the CPU build)"
COMPILER_HINT = "g++ is not installed (this backend compiles a C++ helper): apt-get install g++"
SOURCE = Path(__file__).resolve().parent / "torch" / "philox_helper.cpp"
HEADER = Path("ATen") / "core" / "PhiloxRNGEngine.h"
CXXFLAGS = ("-O2", "-std=c++17", "-shared", "-fPIC", "-w")
STATE_MODES = ("library", "spec")
BUILD_TIMEOUT = 300

_u32p = ctypes.POINTER(ctypes.c_uint32)


def torch_include_dir() -> tuple[Path, str]:
    """The torch wheel's include/ folder and torch's version, without importing torch."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        raise BackendUnavailable(INSTALL_HINT)
    include = Path(spec.origin).resolve().parent / "include"
    if not (include / HEADER).is_file():
        raise BackendUnavailable(f"torch has no {HEADER.as_posix()} under {include} "
                                 "(a wheel without its C++ headers?): pip install rngcheck[torch]")
    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return include, version


def cache_folder(name: str = "torch") -> Path:
    from .directml.bridge.chain import cache_root
    return cache_root() / name


def build_helper(include: Path, library_version: str, compiler: str, *, defines=(), folder: str = "torch") -> Path:
    """The compiled helper, from the cache or built now (atomically: no half-written file).

    Its file name carries a hash of the source, the flags, the include folder and the library's
    version, so a change to any of them builds a new one."""
    source = SOURCE.read_bytes()
    flags = (*CXXFLAGS, *defines)
    digest = hashlib.sha256(b"\0".join([source, library_version.encode(), str(include).encode(),
                                        " ".join(flags).encode()])).hexdigest()[:16]
    target_folder = cache_folder(folder)
    target = target_folder / f"philox_helper-{digest}.so"
    if target.is_file():
        return target
    target_folder.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=target_folder)
    os.close(fd)
    try:
        done = subprocess.run([compiler, *flags, f"-I{include}", str(SOURCE), "-o", temporary],
                              capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        if done.returncode != 0:
            lines = done.stderr.splitlines()
            first = next((line for line in lines if "error" in line), lines[0] if lines else "")
            raise BackendUnavailable(f"g++ could not build the {folder} helper against {include}: "
                                     f"{first.strip() or f'exit status {done.returncode}'}")
        os.replace(temporary, target)
    except subprocess.TimeoutExpired:
        raise BackendUnavailable(f"g++ took more than {BUILD_TIMEOUT} s to build the {folder} helper") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target


def compiler_or_unavailable() -> str:
    compiler = shutil.which("g++")
    if compiler is None:
        raise BackendUnavailable(COMPILER_HINT)
    return compiler


class HelperBackend(Backend):
    """A library engine behind rngcheck's compiled C++ helper (philox_helper.cpp): draws words
    chunk by chunk, each chunk skipping with the library's own skip, and keeps the state the
    library reports after the last one."""

    validates = False
    helper: Path
    compiler: str

    def _load(self, helper: Path):
        try:
            lib = ctypes.CDLL(str(helper))
        except OSError as error:
            raise BackendUnavailable(f"cannot load the {self.name} helper {helper}: {error}") from None
        lib.rngcheck_engine.restype = ctypes.c_char_p
        lib.rngcheck_engine.argtypes = []
        lib.rngcheck_philox_words.restype = None
        lib.rngcheck_philox_words.argtypes = [_u32p, ctypes.c_uint64, ctypes.c_uint64, _u32p, _u32p]
        self.helper = helper
        self._lib = lib

    def compiler_version(self) -> str:
        try:
            return subprocess.run([self.compiler, "--version"], capture_output=True, text=True,
                                  timeout=30).stdout.splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return self.compiler

    def engine_name(self) -> str:
        return self._lib.rngcheck_engine().decode()

    def _draw(self, state: np.ndarray, skip_blocks: int, count: int):
        state = np.ascontiguousarray(state, dtype=np.uint32)
        out = np.empty(count, dtype=np.uint32)
        after = np.zeros(6, dtype=np.uint32)
        self._lib.rngcheck_philox_words(state.ctypes.data_as(_u32p), skip_blocks, count,
                                        out.ctypes.data_as(_u32p), after.ctypes.data_as(_u32p))
        return out, after

    def _spec_state(self) -> bool:
        return False

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        state = np.ascontiguousarray(placement.read_state(state), dtype=np.uint32)
        library_state = []

        def produce(first, count):
            words, after = self._draw(state, first // 4, count)  # chunks start on a block boundary
            library_state[:] = [after]
            return words

        n = placement.place(sizes, strides, buffer, produce)
        if not output_state:
            return None
        if self._spec_state():
            return counter.advance(state, n)
        if not library_state:  # nothing drawn
            library_state.append(self._draw(state, 0, 0)[1])
        return library_state[0]


class TorchBackend(HelperBackend):
    """PyTorch's at::Philox4_32 header, through rngcheck's compiled C++ helper."""

    name = "torch"

    def __init__(self, state: str = "library"):
        if state not in STATE_MODES:
            raise BackendSpecError(f"torch option state must be one of {', '.join(STATE_MODES)}, got {state!r}")
        self.state_mode = state
        include, self.torch_version = torch_include_dir()
        self.compiler = compiler_or_unavailable()
        self.header = include / HEADER
        self._load(build_helper(include, self.torch_version, self.compiler))

    def _spec_state(self) -> bool:
        return self.state_mode == "spec"

    def describe(self) -> dict[str, str]:
        return {
            "implementation": self.engine_name(),
            "torch": self.torch_version,
            "header": str(self.header),
            "compiler": self.compiler_version(),
            "helper": str(self.helper),
            "device": f"cpu ({platform.processor() or platform.machine()})",
            "output-state": ("the engine's get_offset() (words 0-1); words 2-3 as given" if self.state_mode == "library"
                             else "rngcheck.counter.advance (spec)"),
        }


def torch_spec_state() -> TorchBackend:
    """``torch`` with ``state=spec`` as a module:attr spec (before the entry point is registered:
    ``--backend rngcheck.backends.torch_backend:torch_spec_state``)."""
    return TorchBackend(state="spec")
