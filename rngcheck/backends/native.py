"""Native helpers: where rngcheck keeps what it builds, and the one way a backend compiles its
C or C++ helper on first use.

The cache is ``$RNGCHECK_CACHE``, else ``$XDG_CACHE_HOME/rngcheck``, else ``~/.cache/rngcheck``;
each user of it has its own folder there (``torch``, ``onedpl``, ``random123``, ``directml``).
A helper is built once under a name that carries a digest of what built it (source, flags,
library version), so a change to any of them builds a new one; it is compiled in a scratch
folder beside its target and moved in last, so a file in the cache is always complete. A build
that fails is :class:`~rngcheck.errors.BackendUnavailable` with one line: the compiler's first
error. The C and C++ sources are package data, each beside the code that builds it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..errors import BackendUnavailable

ENV_CACHE = "RNGCHECK_CACHE"
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
