"""Native code: where rngcheck keeps what it builds, the one way anything in it compiles a C or C++
helper on first use, and the one switch between rngcheck's own compiled kernels and their numpy code.

The cache is ``$RNGCHECK_CACHE``, else ``$XDG_CACHE_HOME/rngcheck``, else ``~/.cache/rngcheck``;
each user of it has its own folder there (``torch``, ``onedpl``, ``random123``, ``directml``,
``stats``, ``philox``). A helper is built once under a name that carries a digest of what built it
(source, flags, library version), so a change to any of them builds a new one; it is compiled in a
scratch folder beside its target and moved in last, so a file in the cache is always complete. A
build that fails is :class:`~rngcheck.errors.BackendUnavailable` with one line: the compiler's first
error. The C and C++ sources are package data, each beside the code that builds it.

rngcheck's own kernels (:class:`Kernels`: the battery's loops, rngcheck.stats.kernels; the reference's
Philox stream, rngcheck.philox) are a speed-up only: each has numpy code that gives the same results,
and ``RNGCHECK_KERNELS`` chooses for all of them: ``auto`` (default: C where it builds), ``numpy``
(never build), ``c`` (C or an error saying why not).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from .errors import BackendUnavailable, RngcheckError

ENV_CACHE = "RNGCHECK_CACHE"
ENV_KERNELS = "RNGCHECK_KERNELS"
KERNEL_PATHS = ("auto", "numpy", "c")
BUILD_TIMEOUT = 300  # seconds


def cache_root() -> Path:
    """$RNGCHECK_CACHE, else $XDG_CACHE_HOME/rngcheck, else ~/.cache/rngcheck."""
    configured = os.environ.get(ENV_CACHE, "").strip()
    if configured:
        return Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "rngcheck"


def compiler(name: str, hint: str) -> str:
    """The path of the compiler ``name``, or BackendUnavailable(``hint``): how to install it."""
    found = shutil.which(name)
    if found is None:
        raise BackendUnavailable(hint)
    return found


def first_error(output: str) -> str:
    """A compiler's output in one line: its first line that says error, else its first line."""
    lines = [" ".join(line.split()) for line in output.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line), lines[0] if lines else "")


def build_once(target: Path, command: Callable[[Path], list[str]], *, what: str,
               explain: Callable[[str], str | None] = lambda output: None,
               finish: Callable[[Path], None] = lambda built: None, timeout: float = BUILD_TIMEOUT) -> Path:
    """``target``, built now unless it is there already.

    ``command(partial)``: the compiler's command line writing ``partial`` (in a scratch folder
    beside ``target``; other files it writes there are thrown away). ``finish(partial)``: called
    after a build, before ``partial`` becomes ``target`` (to leave notes beside it, say).
    ``explain(output)``: the one line for a failure it knows, or None. Any other failure is
    BackendUnavailable("``what``: the compiler's first error")."""
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as scratch:
            partial = Path(scratch) / target.name
            try:
                done = subprocess.run(command(partial), capture_output=True, text=True, timeout=timeout, check=False)
            except subprocess.TimeoutExpired:
                raise BackendUnavailable(f"{what}: no result in {timeout:g} s") from None
            if done.returncode != 0:
                output = done.stderr + done.stdout
                raise BackendUnavailable(explain(output) or f"{what}: "
                                         f"{first_error(output) or f'exit status {done.returncode}'}")
            finish(partial)
            os.replace(partial, target)  # last: a file in the cache is always complete
    except OSError as error:
        raise BackendUnavailable(f"{what}: cannot build in {target.parent}: {error}") from None
    return target


def cpu() -> str:
    """This machine's CPU as a compiler's -march=native sees it: model name and flags."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return platform.processor() or platform.machine()
    wanted = [line for line in text.splitlines() if line.startswith(("model name", "flags", "Features"))]
    return "\n".join(sorted(set(wanted))) or platform.machine()


def compiler_identity(cc: str) -> str:
    """A compiler as the cache tells builds apart: its program's real path, size and time of last
    change (an upgrade, or another compiler, changes them). Not ``cc --version``: that runs a
    process in every command (about 4 ms of wall time, 6 ms of CPU here; issue 44: start-up)."""
    real = os.path.realpath(cc)
    try:
        found = os.stat(real)
    except OSError:
        return real
    return f"{real} {found.st_size} {found.st_mtime_ns}"


class Kernels:
    """One of rngcheck's own C sources, compiled on first use, with numpy code as its fallback.

    ``active()`` is the loaded library, or None where the numpy code runs (RNGCHECK_KERNELS=numpy, a
    path forced by ``using``, or no library: no C compiler, a failed build; ``describe()`` says which
    and why). Built with ``$CC`` (else gcc) under ``<cache>/<folder>``; the file's name carries a
    digest of the source, the flags, the compiler (compiler_identity) and this machine's CPU, so a
    cache shared by unlike machines never runs code built for another CPU. ``signatures``: each
    function's argument types; ``returns``: the result type of those that return one (else void)."""

    def __init__(self, source: Path, flags: tuple[str, ...], folder: str, what: str,
                 signatures: Mapping[str, tuple], returns: Mapping[str, type] | None = None) -> None:
        self.source, self.flags, self.folder, self.what = source, flags, folder, what
        self.signatures, self.returns = dict(signatures), dict(returns or {})
        self._loaded: tuple[ctypes.CDLL | None, str] | None = None   # (the library or None, why not: one line)
        self._lock = threading.Lock()
        self._forced: str | None = None   # a path forced by using() (tests)

    def _compiler(self) -> str:
        name = os.environ.get("CC", "").strip() or "gcc"
        return compiler(name, f"no C compiler ({name}): numpy code runs in place of {self.what} "
                        "(apt-get install gcc, or set CC, for the compiled kernels)")

    def build(self) -> Path:
        """The library's path, built now unless the cache has it (BackendUnavailable if it cannot be
        built: no compiler, or the compiler's first error)."""
        cc = self._compiler()
        digest = hashlib.sha256("\0".join([self.source.read_text(), " ".join(self.flags), compiler_identity(cc),
                                           cpu(), platform.machine()]).encode()).hexdigest()[:16]
        target = cache_root() / self.folder / f"{self.source.stem}-{digest}.so"
        return build_once(target, lambda partial: [cc, *self.flags, "-o", str(partial), str(self.source), "-lm"],
                          what=self.what)

    def _load(self) -> tuple[ctypes.CDLL | None, str]:
        choice = os.environ.get(ENV_KERNELS, "auto").strip().lower() or "auto"
        if choice not in KERNEL_PATHS:
            raise RngcheckError(f"{ENV_KERNELS}={choice!r}: use auto, numpy or c")
        if choice == "numpy":
            return None, f"{ENV_KERNELS}=numpy"
        try:
            lib = ctypes.CDLL(str(self.build()))
        except (BackendUnavailable, OSError) as error:
            if choice == "c":
                raise RngcheckError(f"{ENV_KERNELS}=c: {self.what} cannot be had compiled: {error}") from None
            return None, str(error)
        for name, arguments in self.signatures.items():
            function = getattr(lib, name)
            function.argtypes = arguments
            function.restype = self.returns.get(name)
        return lib, ""

    def _library(self) -> tuple[ctypes.CDLL | None, str]:
        """(library or None, why not), loaded once (under a lock: threads may ask at once)."""
        loaded = self._loaded
        if loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = self._load()
                loaded = self._loaded
        return loaded

    def active(self) -> ctypes.CDLL | None:
        """The compiled library, or None where the numpy code runs (forced, or no library)."""
        if self._forced == "numpy":
            return None
        lib, why = self._library()
        if self._forced == "c" and lib is None:
            raise RngcheckError(f"{self.what} cannot be had compiled: {why}")
        return lib

    def describe(self) -> str:
        """Which path runs: "c" or "numpy (why)"."""
        if self._forced == "numpy":
            return "numpy (forced)"
        lib, why = self._library()
        return "c" if lib is not None else f"numpy ({why})"

    @contextlib.contextmanager
    def using(self, path: str) -> Iterator[None]:
        """Run the block on one path, "c" or "numpy" (tests compare them)."""
        if path not in ("c", "numpy"):
            raise ValueError(path)
        saved, self._forced = self._forced, path
        try:
            yield
        finally:
            self._forced = saved
