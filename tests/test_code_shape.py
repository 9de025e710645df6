"""The shape of the code (issue 39): no function in rngcheck/ over 80 lines and no class over 20 methods,
unless its docstring says why ("over 80 lines", "over 20 methods"); a longer one is cut into named steps."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rngcheck"
LINES, METHODS = 80, 20


def shapes():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            yield path.relative_to(PACKAGE.parent), node


def test_no_function_over_80_lines_unless_its_docstring_says_why():
    long = [f"{path}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path, node in shapes() if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > LINES
            and f"over {LINES} lines" not in (ast.get_docstring(node) or "")]
    assert not long, long


def test_no_class_over_20_methods_unless_its_docstring_says_why():
    big = [f"{path}:{node.lineno} {node.name}" for path, node in shapes() if isinstance(node, ast.ClassDef)
           and sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in node.body) > METHODS
           and f"over {METHODS} methods" not in (ast.get_docstring(node) or "").lower()]
    assert not big, big
