"""The import graph is a stack (the developers' brief; docs/adding-an-operator.md): spec modules at the
bottom, then numbers/ and vectors/, then backends/ and results/, then conformance/ and stats/, then
reports/, then submission/ (it writes the reports into a package), the CLI on top. Nothing imports
upward and nothing imports in a circle (an import inside a function counts: it is an arrow all the
same). results/ and reports/ name no axis and import nothing from conformance/ or numbers/;
conformance/'s root (the harness) imports no axis but through the registry."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rngcheck"
# The floors, bottom up: a module may import its own floor and the floors below it.
FLOORS = {"numbers": 1, "vectors": 1, "backends": 2, "results": 2, "conformance": 3, "stats": 3,
          "reports": 4, "submission": 5, "cli": 6, "__main__": 6}
TOP_LEVEL_ABOVE_SPEC = {"arguments": 2}   # command-line values say them through results.text
AXES = ("directml", "conventions", "rng_bit_generator", "known_answers")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def floor_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1:
        return 0
    return FLOORS.get(parts[1], TOP_LEVEL_ABOVE_SPEC.get(parts[1], 0))


def imports() -> dict[str, set[str]]:
    """Module -> the rngcheck modules it imports (anywhere in it), each as the longest module name that exists."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                # a name that is a module is an arrow to it; any other name is an attribute of the stem
                targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in modules else stem for a in node.names]
            for target in targets:
                if not target.startswith("rngcheck"):
                    continue
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != module and target != "rngcheck":
                    graph[module].add(target)
    return graph


def test_nothing_imports_upward():
    upward = [f"{module} (floor {floor_of(module)}) imports {target} (floor {floor_of(target)})"
              for module, targets in imports().items() for target in targets if floor_of(target) > floor_of(module)]
    assert not upward, "\n".join(upward)


def test_no_circle():
    graph = imports()
    state: dict[str, int] = {}
    circles = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                circles.append(" -> ".join(path[path.index(target):] + [target]) if target in path else target)
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not circles, "\n".join(circles)


def test_results_and_reports_name_no_axis_and_import_neither_conformance_nor_numbers():
    for module, targets in imports().items():
        if module.split(".")[1:2] in (["results"], ["reports"]):
            bad = [t for t in targets if t.split(".")[1] in ("conformance", "numbers")]
            assert not bad, f"{module} imports {bad}"
    for folder in ("results", "reports"):
        for path in (PACKAGE / folder).rglob("*"):
            if path.suffix in (".py", ".j2"):
                text = path.read_text()
                for name in ("rng_bit_generator", "rng-bit-generator", "THREE_FRY", "known_answers", "feature_level"):
                    assert name not in text, f"{path} names {name}"


def test_the_harness_imports_an_axis_only_through_the_registry():
    """conformance/'s root is the harness: only axes.py (the registry) imports an axis's folder."""
    for module, targets in imports().items():
        parts = module.split(".")
        if parts[:2] != ["rngcheck", "conformance"] or len(parts) != 3 or parts[2] in ("axes", *AXES):
            continue
        into = [t for t in targets if t.split(".")[2:3] and t.split(".")[2] in AXES]
        assert not into, f"{module} imports {into}"


def test_an_axis_imports_no_other_axis_except_directml_s_shared_pi_state():
    """Each axis is a room of its own; the numbers cases draw from DirectML's pi state (one home)."""
    allowed = {("conventions", "directml")}
    for module, targets in imports().items():
        parts = module.split(".")
        if parts[:2] != ["rngcheck", "conformance"] or len(parts) < 3 or parts[2] not in AXES:
            continue
        for target in targets:
            other = target.split(".")[2:3]
            if other and other[0] in AXES and other[0] != parts[2]:
                assert (parts[2], other[0]) in allowed, f"{module} imports {target}"
