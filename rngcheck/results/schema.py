"""The published formats: JSON Schema (draft 2020-12) files of the result document, the journal's
lines and the stats document, in rngcheck/results/schemas/. The tests validate what rngcheck
writes against them; ``validate`` is for anyone reading the documents (needs jsonschema).

    validate(document, "rngcheck-result")          # raises RngcheckError naming the first problem
    validate(line, "rngcheck-journal")             # one journal line
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import RngcheckError

SCHEMAS = Path(__file__).parent / "schemas"
NAMES = ("rngcheck-result", "rngcheck-journal", "rngcheck-stats")


def schema(name: str) -> dict[str, Any]:
    if name not in NAMES:
        raise RngcheckError(f"no schema {name!r} (one of {', '.join(NAMES)})")
    loaded: dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    return loaded


@cache   # one validator a schema per process: a journal's lines are checked one by one
def _validator(name: str) -> Any:  # a jsonschema.Draft202012Validator (jsonschema ships no types)
    import jsonschema
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (f"{other}.schema.json", Resource.from_contents(schema(other))) for other in NAMES)
    return jsonschema.Draft202012Validator(schema(name), registry=registry,
                                           format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def problems(value: object, name: str) -> list[str]:
    """Every way ``value`` breaks the schema, one line each ("at results/3/status: ...")."""
    out: list[str] = []
    for error in sorted(_validator(name).iter_errors(value), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "the top"
        out.append(f"at {where}: {error.message[:200]}")
    return out


def validate(value: object, name: str) -> None:
    found = problems(value, name)
    if found:
        raise RngcheckError(f"not a valid {name} document ({len(found)} problems), first {found[0]}")
