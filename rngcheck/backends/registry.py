"""How a backend is named on the command line, loaded, and listed.

A backend is named on the command line by:
  * a registered name, optionally with options: ``numpy``, ``opencl:platform=0,device=1``
    (entry-point group ``rngcheck.backends``);
  * ``module:attr`` or ``path/to/file.py:attr``, where attr is a Backend class, an
    instance, or a zero-argument factory;
  * ``exec:COMMAND``: a program in any language speaking the exec protocol.

A spec that names none of these is one line (BackendSpecError) that says what was probably meant:
  1. a file that exists and is not a .py file (a program, say ``./philox_exec``): ``exec:PATH``;
  2. a .py file without ``:attr``: ``file.py:NAME`` for each Backend class the file defines, found
     by reading it (ast: its top-level classes that define random_generator or derive from Backend
     or from one of those), never by importing it: a spec read from data must start nothing;
  3. a path (a .py file, or a name with a /) that does not exist: that it does not exist;
  4. anything else: the registered names and the forms of a spec.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BackendSpecError, BackendUnavailable, RngcheckError, one_line
from ..registry import Registry

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "rngcheck.backends"

# The option keys of each registered backend that name no program, module, file or library: a spec
# read from a data file (a journal's header, or any file rngcheck reads) is started only when its
# backend is listed here and each of its option keys is in the backend's set (``starts_no_code``).
# Not listed, so never started from a data file unless the user names the spec again: exec (a
# command), directml's lib and d3d12 (libraries), curand's library, onedpl's include (a header
# compiled into a helper), module:attr and file.py:attr specs, and any backend another package registers.
DATA_SAFE_OPTIONS: dict[str, frozenset[str]] = {
    "numpy": frozenset(), "randomgen": frozenset(), "mkl": frozenset(),
    "opencl": frozenset({"platform", "device", "counter_bits", "rounds", "window_bytes"}),
    "pyopencl": frozenset({"mode", "platform", "device"}),
    "tensorflow": frozenset({"device", "state", "jit_compile"}),
    "jax": frozenset({"state_words", "platform"}),
    "torch": frozenset({"state"}),
    "random123": frozenset({"mode"}),
    "curand": frozenset({"max_blocks"}),
    "directml": frozenset({"adapter"}),
    "xla": frozenset({"platform"}), "iree": frozenset(),
    "tinygrad": frozenset({"device", "realise"}), "keras": frozenset({"backend"}),
    "triton": frozenset(), "numba": frozenset({"mode"}), "mlx": frozenset(),
}


def starts_no_code(spec: str) -> bool:
    """Whether ``spec`` names no program, module, file or library (DATA_SAFE_OPTIONS): only then may
    a spec read from a data file be started without the user naming it again."""
    name, _, options = spec.strip().partition(":")
    safe = DATA_SAFE_OPTIONS.get(name)
    if safe is None or name not in _registered():
        return False
    for item in filter(None, options.split(",")):
        key, equals, _ = item.partition("=")
        if not equals or key.strip() not in safe:
            return False
    return True


@dataclass
class KnownBackend:
    name: str
    target: str
    available: bool
    reason: str
    describe: dict = field(default_factory=dict)    # what the backend says of itself, when available
    implements: list = field(default_factory=list)  # what it computes, in a few words each (``implements``)


def _load_entry_points() -> None:
    """The backends other packages (and rngcheck itself) register: entry points of ENTRY_POINT_GROUP, by
    name (a name two packages register is the first's); each is loaded only when it is used.
    importlib.metadata is imported here, not with this module: a command that names no backend
    (``rngcheck stats --input``) does not pay for it (issue 44: start-up)."""
    from importlib.metadata import entry_points

    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda found: found.name):
        if entry.name not in REGISTERED:
            REGISTERED.add(entry.name, entry)


# The registered backends (rngcheck.registry's one style; filled lazily from the entry points).
REGISTERED: Registry[EntryPoint] = Registry("backend", load=_load_entry_points, error=BackendSpecError)


def _registered() -> Registry[EntryPoint]:
    return REGISTERED


def _instantiate(obj, options: str, spec: str):
    try:
        return _construct(obj, options, spec)
    except RngcheckError:
        raise
    except Exception as error:  # the backend's constructor or factory failed: one line, no traceback
        raise BackendSpecError(f"creating backend {spec!r} failed: {one_line(error)}") from None


def _option_keys(cls) -> tuple[list[str], list[str]] | None:
    """(the option keys a backend class's default ``from_options`` (key=value,...) names in its
    message, every key it accepts): its constructor's named parameters (keyword-only ones are
    accepted, not listed: they are for Python callers); None when it parses its options itself."""
    from .contract import Backend

    if getattr(cls, "from_options", None) is None or \
            getattr(cls.from_options, "__func__", None) is not getattr(Backend.from_options, "__func__", None):
        return None
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return ([p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD],
            [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)])


def _check_option_keys(cls, options: str, spec: str) -> None:
    """An unknown option key is one line naming it and the keys the backend takes (not Python's TypeError)."""
    keys = _option_keys(cls)
    if keys is None:
        return
    listed, accepted = keys
    for item in filter(None, options.split(",")):
        key, equals, _ = item.partition("=")
        if equals and key.strip() not in accepted:
            takes = ", ".join(listed) if listed else "no options"
            raise BackendSpecError(f"backend {spec!r}: unknown option {key.strip()!r} (it takes: {takes})")


def _construct(obj, options: str, spec: str):
    if inspect.isclass(obj):
        if options:
            _check_option_keys(obj, options, spec)
            if hasattr(obj, "from_options"):
                return obj.from_options(options)
            raise BackendSpecError(f"backend {spec!r} takes no options")
        return obj()
    if callable(obj) and not hasattr(obj, "random_generator"):
        return obj()
    return obj


def _check_contract(backend, spec: str):
    if not callable(getattr(backend, "random_generator", None)):
        raise BackendSpecError(f"{spec!r} is not a backend: it has no random_generator method")
    if not getattr(backend, "name", None):
        backend.name = spec
    return backend


def _load_file_attr(path: str, attr: str, spec: str):
    file = Path(path)
    if not file.is_file():
        raise BackendSpecError(f"backend file {path!r} does not exist")
    module_name = "rngcheck_user_backend_" + file.stem
    module_spec = importlib.util.spec_from_file_location(module_name, file)
    if module_spec is None or module_spec.loader is None:
        raise BackendSpecError(f"backend file {path!r} cannot be imported (not a Python file?)")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as error:  # the user's file: report, do not crash
        raise BackendSpecError(f"importing {path!r} failed: {type(error).__name__}: {error}") from None
    if not hasattr(module, attr):
        raise BackendSpecError(f"{path!r} has no attribute {attr!r}")
    return getattr(module, attr)


SOURCE_LIMIT = 8 << 20   # a .py file read for rule 2 (bytes); a longer one is not read


def backend_classes(source: bytes) -> list[str]:
    """The top-level classes of Python ``source`` that look like backends (rule 2), in file order:
    each defines random_generator, or derives from ``Backend`` (any module's) or from one of these.
    Raises SyntaxError or ValueError for source that is not Python."""
    found: list[str] = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {base.id if isinstance(base, ast.Name) else base.attr
                 for base in node.bases if isinstance(base, (ast.Name, ast.Attribute))}
        defines = any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "random_generator"
                      for item in node.body)
        if defines or "Backend" in bases or bases & set(found):
            found.append(node.name)
    return found


def _unknown(spec: str, registered) -> BackendSpecError:
    """The error for a spec that is no registered name and has no ``:`` (rules 1 to 4)."""
    said = f"unknown backend {spec!r}"
    path = Path(spec)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):   # a name too long to be a file's, say
        is_file = False
    if spec.endswith(".py"):
        if not is_file:
            return BackendSpecError(f"{said}: the file {spec!r} does not exist")
        try:
            with open(path, "rb") as file:
                source = file.read(SOURCE_LIMIT + 1)
            if len(source) > SOURCE_LIMIT:
                raise ValueError("too long to read")
            classes = backend_classes(source)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as error:
            return BackendSpecError(f"{said}: {spec} cannot be read as Python ({one_line(error)}); a Python "
                                    f"backend is named {spec}:ATTR")
        if not classes:
            return BackendSpecError(f"{said}: {spec} defines no Backend class (one with a random_generator "
                                    f"method); name the backend in it as {spec}:ATTR")
        named = [f"{spec}:{name}" for name in classes]
        listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " or " + named[-1]
        return BackendSpecError(f"{said}; did you mean {listed}?")
    if is_file:
        return BackendSpecError(f"{said}; did you mean exec:{shlex.quote(spec)} (a program speaking the exec "
                                f"protocol)?")
    if "/" in spec or os.sep in spec:
        return BackendSpecError(f"{said}: {spec!r} does not exist (a program is exec:PATH, a Python file "
                                f"file.py:ATTR)")
    names = ", ".join(sorted(registered)) or "none"
    return BackendSpecError(f"{said} (registered: {names}; or use exec:COMMAND, module:attr or file.py:attr)")


def load(spec: str):
    """The backend a command-line spec names, instantiated (raises BackendSpecError / BackendUnavailable)."""
    spec = spec.strip()
    if not spec:
        raise BackendSpecError("empty backend name")
    head, sep, rest = spec.partition(":")
    registered = _registered()
    if head in registered:
        try:
            obj = registered[head].load()
        except ImportError as error:
            raise BackendUnavailable(f"backend {head!r} is unavailable: {error}") from None
        return _check_contract(_instantiate(obj, rest, spec), spec)
    if not sep:
        raise _unknown(spec, registered)
    path, _, attr = spec.rpartition(":")
    if path.endswith(".py") or "/" in path:
        obj = _load_file_attr(path, attr, spec)
    else:
        try:
            module = importlib.import_module(path)
        except ImportError as error:
            raise BackendSpecError(f"cannot import module {path!r}: {error}") from None
        if not hasattr(module, attr):
            raise BackendSpecError(f"module {path!r} has no attribute {attr!r}")
        obj = getattr(module, attr)
    return _check_contract(_instantiate(obj, "", spec), spec)


def implements(backend) -> list[str]:
    """What a loaded backend computes, in a few words each: the DirectML operator (every backend), the
    numbers conventions it draws, the generators whose blocks it computes, the other operators it runs."""
    found = ["the DirectML operator"]
    conventions = list(getattr(backend, "conventions", ()) or ())
    if conventions:
        found.append("numbers: " + ", ".join(conventions))
    generators = list(getattr(backend, "generators", ()) or ())
    if generators:
        found.append(f"generator blocks: {', '.join(generators[:4])}" + (f" (+{len(generators) - 4})"
                                                                          if len(generators) > 4 else ""))
    found += [{"stablehlo": "StableHLO rng_bit_generator"}.get(str(name), str(name))
              for name in getattr(backend, "operators", ()) or ()]
    return found


def known_backends(specs=None, on_probe=None) -> list[KnownBackend]:
    """Every registered backend (or each of ``specs``, options included), tried in its own worker
    process: available or not, with the reason, its describe() and what it implements.
    ``on_probe(known)``: called with each one, in order, as soon as it and those before it are known
    (``rngcheck backends`` prints as it probes).

    (A worker per backend: TensorFlow and OpenCL, for one, cannot share a process.)
    """
    registered = _registered()
    if specs:
        names = [spec.partition(":")[0] for spec in specs]
        return _probe_all([(spec, registered[name].value if name in registered else spec)
                           for spec, name in zip(specs, names)], on_probe)
    known, probes = {}, []
    for name, ep in sorted(registered.items()):
        try:
            target = ep.load()
        except Exception as error:
            known[name] = KnownBackend(name, ep.value, False, f"cannot import {ep.value}: {error}")
            continue
        usage = getattr(target, "usage", None)
        if usage:  # needs options to exist at all (exec:COMMAND)
            known[name] = KnownBackend(name, ep.value, True, usage)
            continue
        probes.append((name, ep.value))
    order = sorted([*known, *(name for name, _ in probes)])
    said: list[str] = []

    def arrived(found: KnownBackend) -> None:   # in name order: each once those before it are known
        known[found.name] = found
        while len(said) < len(order) and order[len(said)] in known:
            said.append(order[len(said)])
            if on_probe is not None:
                on_probe(known[said[-1]])

    for name in list(known):
        arrived(known[name])
    _probe_all(probes, arrived)
    return [known[name] for name in order]


def _probe_all(probes: list[tuple[str, str]], on_probe=None) -> list[KnownBackend]:
    """_probe on each (spec, target), as many workers at once as there are CPUs; results in order,
    each also given to ``on_probe`` as it is known (in order). Each probe starts and closes its worker
    in one pool thread (a child's PR_SET_PDEATHSIG follows the thread that started it, and the thread
    outlives the child)."""
    from concurrent.futures import ThreadPoolExecutor

    found = []
    with ThreadPoolExecutor(max_workers=max(1, min(len(probes), os.cpu_count() or 1))) as pool:
        for known in pool.map(lambda probe: _probe(*probe), probes):
            found.append(known)
            if on_probe is not None:
                on_probe(known)
    return found


def _probe(spec: str, target: str) -> KnownBackend:
    from .exec_backend import isolated

    try:
        backend = isolated(spec)
    except Exception as error:  # listing must not die with one broken backend
        return KnownBackend(spec, target, False, str(error) or type(error).__name__)
    try:
        described = {str(k): str(v) for k, v in backend.describe().items()}
        computes = implements(backend)
    except Exception as error:
        described = {"describe() failed": str(error) or type(error).__name__}
        computes = []
    finally:
        backend.close()
    return KnownBackend(spec, target, True, "", described, computes)
