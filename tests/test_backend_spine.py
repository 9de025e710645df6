"""The backends' spine: the package hands on the contract and the registry; one native-helper
module; every C/C++ source the backends compile ships as package data; the version a backend
says is the results table's."""

import ast
import fnmatch
from pathlib import Path

import tomllib

import rngcheck
from rngcheck import native
from rngcheck.results.tables import version_of

PACKAGE = Path(rngcheck.__file__).parent


def test_the_package_hands_on_the_contract_and_the_registry():
    import rngcheck.backends as backends
    from rngcheck.backends import contract, registry

    assert backends.Backend is contract.Backend and backends.KnownBackend is registry.KnownBackend
    assert backends.load is registry.load and backends.known_backends is registry.known_backends
    assert backends.ENTRY_POINT_GROUP == registry.ENTRY_POINT_GROUP == "rngcheck.backends"
    assert {"Backend", "BackendUnavailable", "Rejected", "load", "known_backends", "ENTRY_POINT_GROUP"} \
        <= set(backends.__all__) and all(hasattr(backends, name) for name in backends.__all__)


def test_the_package_imports_the_contract_and_the_registry_at_their_first_use():
    """rngcheck.backends hands its names on lazily (PEP 562): every name of __all__ is either the
    package's own or has a home module, an unknown name is an AttributeError, and a submodule
    imported alone (the stats battery's backends.lifetime) does not bring the contract, the
    registry or the numbers layer."""
    import subprocess
    import sys

    import rngcheck.backends as backends

    assert set(backends.__all__) == set(backends._HOMES) | {"BackendUnavailable", "Rejected"}
    assert set(backends.__all__) <= set(dir(backends))
    try:
        backends.Bakcend  # noqa: B018  (a typo: no such name)
    except AttributeError as error:
        assert "Bakcend" in str(error)
    else:
        raise AssertionError("an unknown name was found")
    probe = ("import sys; import rngcheck.backends.lifetime; "
             "print(sorted(m for m in ('rngcheck.backends.contract', 'rngcheck.backends.registry', "
             "'rngcheck.numbers') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_every_native_source_is_package_data():
    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]
    sources = [p for p in PACKAGE.rglob("*") if p.suffix in (".c", ".cpp", ".h", ".map")
               and "node_modules" not in p.parts]   # npm's installs for TensorFlow.js (setup.sh), not our sources
    assert any(p.name == "dml_exec.c" for p in sources)
    for path in sources:
        owners = [(package, globs) for package, globs in patterns.items()
                  if path.is_relative_to(PACKAGE.parent / package.replace(".", "/"))]
        assert any(fnmatch.fnmatch(path.relative_to(PACKAGE.parent / package.replace(".", "/")).as_posix(), glob)
                   for package, globs in owners for glob in globs), path


def test_no_backend_reaches_into_another_backend_s_folder():
    """A backend module imports the shared modules (contract, registry, native, philox_helper,
    placement, ...), never another backend's module or folder."""
    folder = PACKAGE / "backends"
    backends = {p.stem for p in folder.glob("*_backend.py")}
    backend_folders = {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"}
    for path in folder.glob("*_backend.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module] if node.module else [a.name for a in node.names]
                tops = {name.split(".")[0] for name in names}
                assert not tops & ((backends - {path.stem}) | backend_folders), (path.name, node.module)


def test_a_failed_build_is_its_first_error_in_one_line():
    output = "x.cpp: In function 'f':\nx.cpp:2:1: error:   'y'   was not declared\nx.cpp:3: error: more\n"
    assert native.first_error(output) == "x.cpp:2:1: error: 'y' was not declared"
    assert native.first_error("ld: cannot find -lfoo\n") == "ld: cannot find -lfoo"
    assert native.first_error("") == ""


def test_the_cache_root(monkeypatch, tmp_path):
    monkeypatch.setenv(native.ENV_CACHE, str(tmp_path))
    assert native.cache_root() == tmp_path
    monkeypatch.delenv(native.ENV_CACHE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert native.cache_root() == tmp_path / "xdg" / "rngcheck"


def test_the_table_reads_a_backend_s_version_and_old_documents_still():
    assert version_of({"version": "mine 1.2", "numpy": "2.0"}) == "mine 1.2"
    assert version_of({"implementation": "x", "torch": "2.13.0+cpu", "numpy": "2.0"}) == "torch 2.13.0+cpu"
    assert version_of({"device": "cpu"}) == ""


def test_backends_says_what_each_implements_as_it_probes():
    """``rngcheck backends`` prints each backend as it is probed, and what it implements in a few words."""
    import subprocess
    import sys

    from rngcheck.backends.registry import known_backends

    seen = []
    found = known_backends(["numpy", "nosuchbackend"], on_probe=lambda k: seen.append(k.name))
    assert seen == ["numpy", "nosuchbackend"] == [k.name for k in found]
    numpy, missing = found
    assert numpy.implements[0] == "the DirectML operator"
    assert any(i.startswith("numbers: ") and "tensorflow" in i for i in numpy.implements)
    assert any(i.startswith("generator blocks: ") for i in numpy.implements)
    assert "StableHLO rng_bit_generator" in numpy.implements
    assert not missing.available and missing.implements == []
    done = subprocess.run([sys.executable, "-m", "rngcheck", "backends", "numpy"], capture_output=True, text=True)
    assert "implements the DirectML operator; numbers: " in done.stdout
