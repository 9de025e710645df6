"""rngcheck's C++ helper (philox_helper.cpp, beside this file): a header-only library's Philox
engine behind ctypes, shared by the ``torch`` backend (PyTorch's at::Philox4_32) and the
``onedpl`` backend (oneDPL's philox4x32, ``-DRNGCHECK_ENGINE_ONEDPL``).

``build_helper`` compiles it with g++ against a library's include folder on first use, into
``<cache>/<folder>`` (rngcheck.native); ``HelperBackend`` draws through it.
"""

from __future__ import annotations

import ctypes
import hashlib
import subprocess
from pathlib import Path

import numpy as np

from .. import counter, native
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendUnavailable
from . import Backend, placement

SOURCE = Path(__file__).resolve().with_suffix(".cpp")
CXXFLAGS = ("-O2", "-std=c++17", "-shared", "-fPIC", "-w")
COMPILER_HINT = "g++ is not installed (this backend compiles a C++ helper): apt-get install g++"

_u32p = ctypes.POINTER(ctypes.c_uint32)


def compiler_or_unavailable() -> str:
    return native.compiler("g++", COMPILER_HINT)


def build_helper(include: Path, library_version: str, compiler: str, *, defines=(), folder: str,
                 source: Path = SOURCE) -> Path:
    """The compiled helper, from the cache or built now (rngcheck.native.build_once).

    Its file name carries a hash of the source, the flags, the include folder and the library's
    version, so a change to any of them builds a new one."""
    flags = (*CXXFLAGS, *defines)
    digest = hashlib.sha256(b"\0".join([source.read_bytes(), library_version.encode(), str(include).encode(),
                                        " ".join(flags).encode()])).hexdigest()[:16]
    return native.build_once(native.cache_root() / folder / f"philox_helper-{digest}.so",
                             lambda partial: [compiler, *flags, f"-I{include}", str(source), "-o", str(partial)],
                             what=f"g++ could not build the {folder} helper against {include}")


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
