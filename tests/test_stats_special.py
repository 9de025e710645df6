"""rngcheck.stats.special: the battery's special functions are scipy.special's own objects, found
in its compiled ufuncs without importing the package around them (issue 44: about 0.3 s of CPU),
and the package still imports whole, the same objects, after them or instead of them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

STATS = Path(__file__).resolve().parents[1] / "rngcheck" / "stats"


def _names_used() -> list[str]:
    """Every ``special.<name>`` (or ``getattr(special, "<name>")``) the battery's modules call
    (distributions.py imports SciPy itself)."""
    names = set()
    for path in STATS.rglob("*.py"):
        if path.name not in ("special.py", "distributions.py"):
            text = path.read_text()
            names.update(re.findall(r"\bspecial\.([A-Za-z_][A-Za-z0-9_]*)", text))
            names.update(re.findall(r"getattr\(special, \"([A-Za-z_][A-Za-z0-9_]*)\"", text))
    return sorted(names - {"py"})


def _fresh(code: str) -> list:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_every_function_the_battery_calls_is_scipy_s_own_without_the_package():
    """In a fresh process: each name the battery calls loads without scipy.special's __init__ (nor
    scipy.stats), and once the package is imported after them it is the very same object there;
    the package then works whole (a function that is not a ufunc, scipy.stats)."""
    names = _names_used()
    assert {"gammaincc", "erfc", "smirnov", "chdtrc", "_ufuncs"} <= set(names), names
    found = _fresh(f"""
        import json, sys
        from rngcheck.stats.special import special
        names = {names!r}
        values = {{name: getattr(special, name) for name in names}}
        light = ["scipy.special" in sys.modules, "scipy.special._ufuncs" in sys.modules, "scipy.stats" in sys.modules]
        import scipy.special, scipy.stats
        same = [name for name in names if name != "_ufuncs" and values[name] is getattr(scipy.special._ufuncs, name)
                and (name.startswith("_") or values[name] is getattr(scipy.special, name))]
        whole = [float(scipy.special.comb(10, 3)), float(scipy.stats.norm.sf(0.0))]
        print(json.dumps([light, same, values["_ufuncs"] is scipy.special._ufuncs, whole]))
    """)
    light, same, ufuncs_module, whole = found
    assert light == [False, True, False]
    assert same == [name for name in names if name != "_ufuncs"]
    assert ufuncs_module is True and whole == [120.0, 0.5]


def test_a_name_that_is_not_a_ufunc_imports_the_package():
    """``special.factorial2`` (Python code in scipy.special, not a ufunc) imports the package, as
    ``special`` did before it knew the ufuncs, and gives its function."""
    found = _fresh("""
        import json, sys
        from rngcheck.stats.special import special
        erfc = special.erfc
        before = "scipy.special" in sys.modules
        factorial2 = special.factorial2
        import scipy.special
        print(json.dumps([before, "scipy.special" in sys.modules, factorial2 is scipy.special.factorial2,
                          erfc is scipy.special.erfc]))
    """)
    assert found == [False, True, True, True]


def test_where_the_ufuncs_cannot_be_loaded_alone_the_package_is_imported_and_gives_the_same():
    """A SciPy whose compiled module does not load this way (here: its loading made to fail): the
    stand-in is taken out again, and each name comes from scipy.special, imported whole, with the
    same values."""
    found = _fresh("""
        import importlib, json, sys
        from rngcheck.stats import special as module
        real = importlib.import_module

        def failing(name, *args):
            if name == module.UFUNCS and "scipy.special" in sys.modules \\
                    and not hasattr(sys.modules["scipy.special"], "__file__"):
                raise ImportError("a layout this loading does not know")
            return real(name, *args)

        importlib.import_module = failing
        value = module.special.gammaincc(2.5, 1.5)
        importlib.import_module = real
        package = sys.modules.get("scipy.special")
        print(json.dumps([value, package is not None and hasattr(package, "__file__"),
                          module.special.gammaincc is package.gammaincc]))
    """)
    import scipy.special

    assert found == [float(scipy.special.gammaincc(2.5, 1.5)), True, True]
