"""The ``random123`` backend: Random123's own Philox4x32-10 (D. E. Shaw Research, the algorithm's
authors), from its C++ headers, through a small shared library compiled on first use.

The source is ``rngcheck/backends/random123/rngcheck_random123.cpp`` (package data). It is
built with ``g++ -O2 -std=c++11 -shared -fPIC`` into ``<cache>/random123/`` (the cache is
``$RNGCHECK_CACHE``, default ``~/.cache/rngcheck``), under a name that carries the hash of the
source and the build command, so a changed source is rebuilt; it is loaded with ctypes.
Needs g++ and the headers (Debian: ``apt-get install g++ librandom123-dev``).

Two modes; both take the DirectML state as counter = words 0-3 (``ctr.v[0]`` = word 0, the
least significant) and key = words 4-5 (``key.v[0]`` = k0 = word 4):

``random123`` (``mode=raw``, the default): the raw counter-based API. Block after block,
    ``philox4x32(ctr, key)`` gives lanes 0, 1, 2, 3 (element i = lane i % 4), then
    ``ctr.incr()`` (Random123's 128-bit increment, carrying through all four words) moves to
    the next block. The output state is the library's counter after those ``incr()`` calls
    and the key, read back from the stream (not computed here).

``random123:mode=engine``: the convenience layer, mapped the way a user naively would:
    ``r123::Engine<r123::Philox4x32> e(key); e.setcounter(ctr, 0);`` then one ``e()`` per
    element in row-major order; the output state is ``e.getcounter().first`` and
    ``e.getkey()``. This is NOT the operator: ``Engine::operator()`` increments its counter
    *before* it computes a block, so its first block is ctr + 1, and it hands out each
    block's lanes from the last to the first (3, 2, 1, 0). Element i is therefore lane
    3 - i % 4 of Philox(ctr + 1 + floor(i/4)). Its counter after n words is ctr + ceil(n/4),
    which happens to be the operator's output state. The backend reports this as it is, so
    the conformance table shows the difference. (A partial last block's unused lanes stay in
    the engine, as ``getcounter().second``; DirectML has no notion of them.)

Generators (``generator_blocks``, the raw mode only: the engine is the operator mapped another way,
not another generator): every counter-based generator of the headers,
``philox{2,4}x{32,64}_R(R, ctr, key)`` (R up to 16), ``threefry2x{32,64}_R`` (R up to 32),
``threefry4x{32,64}_R`` (up to 72), and, when the build has AES-NI (``-maes`` on x86-64) and the CPU
has it, ``ars4x32_R`` (up to 10) and ``aesni4x32`` (10 rounds, ``aesni4x32keyinit`` of the key):
one call per counter row, ``ctr.v[i]`` = lane i and ``key.v[i]`` = key word i. A round count the
header does not take is not applicable.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import platform
import re
import subprocess
from pathlib import Path

import numpy as np

from .. import counter, native
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable
from . import Backend, placement

SOURCE = Path(__file__).resolve().parent / "random123" / "rngcheck_random123.cpp"
COMPILER = "g++"
FLAGS = ["-O2", "-std=c++11", "-shared", "-fPIC"] + (["-maes", "-msse4.1"] if platform.machine() in ("x86_64", "AMD64")
                                                     else [])   # ARS and AESNI (the CPU is asked again at run time)
ABI = 2
DEBIAN_PACKAGE = "librandom123-dev"
MODES = {"raw": 0, "engine": 1}
IMPLEMENTATIONS = {
    "raw": "Random123 philox4x32(ctr, key) with ctr.incr()",
    "engine": "Random123 r123::Engine<r123::Philox4x32> (setcounter(ctr, 0), key)",
}


def cache_dir() -> Path:
    return native.cache_root() / "random123"


def build_tag() -> str:
    """The hash that names a build: the source, the compiler's name and the flags."""
    digest = hashlib.sha256(SOURCE.read_bytes())
    digest.update(" ".join([COMPILER, *FLAGS, f"abi={ABI}"]).encode())
    return digest.hexdigest()[:16]


def build(directory: Path | None = None) -> Path:
    """The shared library, compiled into ``directory`` (default: the cache) unless already there
    (rngcheck.native.build_once), with a note of the header it was built from beside it."""
    directory = directory or cache_dir()
    library = directory / f"rngcheck_random123-{build_tag()}.so"
    if library.is_file():
        return library
    compiler = native.compiler(COMPILER, f"{COMPILER} is not installed (needed to build the Random123 bridge): "
                                         f"apt-get install g++ {DEBIAN_PACKAGE}")

    def command(partial: Path) -> list[str]:
        return [compiler, *FLAGS, "-o", str(partial), str(SOURCE), "-MD", "-MF", str(partial.parent / "deps.d")]

    def note_the_header(partial: Path) -> None:
        depfile = partial.parent / "deps.d"
        headers = [w for w in depfile.read_text().replace("\\\n", " ").split() if w.endswith("Random123/philox.h")]
        info = {"header": headers[0] if headers else "unknown", "command": [COMPILER, *FLAGS]}
        (partial.parent / "info.json").write_text(json.dumps(info))
        os.replace(partial.parent / "info.json", library.with_suffix(".json"))

    return native.build_once(library, command, what="building the Random123 bridge failed",
                             explain=_missing_headers, finish=note_the_header)


def _missing_headers(output: str) -> str | None:
    if re.search(r"Random123/\S+: No such file", output):
        return f"the Random123 headers are not installed: apt-get install {DEBIAN_PACKAGE}"
    return None


def _debian_version() -> str:
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", DEBIAN_PACKAGE],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


def _load(path: Path):
    lib = ctypes.CDLL(str(path))
    u32p = np.ctypeslib.ndpointer(dtype=np.uint32, flags="C_CONTIGUOUS")
    lib.rngcheck_random123_abi.restype = ctypes.c_int
    lib.rngcheck_random123_compiler.restype = ctypes.c_char_p
    lib.rngcheck_random123_rounds.restype = ctypes.c_int
    lib.rngcheck_random123_open.restype = ctypes.c_void_p
    lib.rngcheck_random123_open.argtypes = [ctypes.c_int, u32p, u32p]
    lib.rngcheck_random123_draw.restype = None
    lib.rngcheck_random123_draw.argtypes = [ctypes.c_void_p, u32p, ctypes.c_uint64]
    lib.rngcheck_random123_state.restype = None
    lib.rngcheck_random123_state.argtypes = [ctypes.c_void_p, u32p]
    lib.rngcheck_random123_close.restype = None
    lib.rngcheck_random123_close.argtypes = [ctypes.c_void_p]
    lib.rngcheck_random123_generator.restype = ctypes.c_char_p
    lib.rngcheck_random123_generator.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    lib.rngcheck_random123_blocks.restype = ctypes.c_int
    lib.rngcheck_random123_blocks.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_void_p, ctypes.c_uint64,
                                              ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p]
    if lib.rngcheck_random123_abi() != ABI:
        raise BackendUnavailable(f"{path} is not the Random123 bridge rngcheck expects (ABI {ABI})")
    return lib


def _generators(lib) -> dict[str, int]:
    """Each generator the bridge knows: its index, or -1 where this build or CPU lacks it."""
    found: dict[str, int] = {}
    available = ctypes.c_int(0)
    index = 0
    while (name := lib.rngcheck_random123_generator(index, ctypes.byref(available))) is not None:
        found[name.decode()] = index if available.value else -1
        index += 1
    return found


class Random123Backend(Backend):
    """Random123's Philox4x32-10, raw (``mode=raw``) or through r123::Engine (``mode=engine``)."""

    name = "random123"
    validates = False

    def __init__(self, mode: str = "raw"):
        if mode not in MODES:
            raise BackendSpecError(f"random123 option mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        self._path = build()
        self._lib = _load(self._path)
        self._generators = _generators(self._lib)

    @property
    def generators(self) -> tuple[str, ...]:
        """The headers' generators this build and CPU compute (see the module doc); none in engine mode."""
        if self.mode != "raw":
            return ()
        return tuple(name for name, index in self._generators.items() if index >= 0)

    def generator_blocks(self, generator, rounds, counters, key):
        """One block per row of ``counters``, by the header's ``<generator>_R(rounds, ctr, key)``."""
        lanes, bits = self.generator_request(generator, counters)
        counters = np.ascontiguousarray(counters)
        key_words = np.ascontiguousarray(np.asarray(key, dtype=counters.dtype))
        out = np.empty_like(counters)
        done = self._lib.rngcheck_random123_blocks(self._generators[generator], int(rounds),
                                                   counters.ctypes.data, counters.shape[0],
                                                   key_words.ctypes.data, key_words.size, out.ctypes.data)
        if done == -3:
            raise NotApplicable(f"Random123's {generator} takes a key of another length than {key_words.size} words")
        if done == -1:
            raise NotApplicable(f"Random123's {generator}_R takes no {rounds} rounds")
        if done != 0:
            raise NotApplicable(f"this build of Random123's headers or this CPU has no {generator}")
        return out

    def describe(self) -> dict[str, str]:
        try:
            info = json.loads(self._path.with_suffix(".json").read_text())
        except (OSError, ValueError):
            info = {}
        version = _debian_version()
        return {
            "implementation": IMPLEMENTATIONS[self.mode],
            "version": f"random123 {version}",
            "random123": version,
            "header": str(info.get("header", "unknown")),
            "rounds": str(self._lib.rngcheck_random123_rounds()),
            "compiler": f"g++ {self._lib.rngcheck_random123_compiler().decode(errors='replace')}",
            "device": f"cpu ({platform.processor() or platform.machine()})",
        }

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        state = placement.read_state(state)
        lib = self._lib
        stream = lib.rngcheck_random123_open(MODES[self.mode], counter.counter_words(state),
                                             counter.key_words(state))
        if not stream:
            raise MemoryError("rngcheck_random123_open failed")
        try:
            def produce(first, count):
                words = np.empty(count, dtype=np.uint32)
                lib.rngcheck_random123_draw(stream, words, count)
                return words

            placement.place(sizes, strides, buffer, produce)
            if not output_state:
                return None
            new_state = np.empty(6, dtype=np.uint32)
            lib.rngcheck_random123_state(stream, new_state)
            return new_state
        finally:
            lib.rngcheck_random123_close(stream)


def engine_backend() -> Random123Backend:
    """``random123:mode=engine`` as a zero-argument factory, for a ``module:attr`` spec
    (``rngcheck.backends.random123_backend:engine_backend``) where options cannot be given."""
    return Random123Backend(mode="engine")
