"""The conformance statement (``statement.json`` of a package): who claims what, of which implementation,
on which device, against which must-pass lists. Filled from the run; the person adds the rest.

Schema "rngcheck-statement", version 1:
  schema, schema_version, product, vendor, contact (given by the person: ``--product``, ``--vendor``,
  ``--contact``), date (UTC, YYYY-MM-DD: the day the claim is made; waivers are checked against it at
  creation), rngcheck_version,
  implementations [{backend, spec, document, identity{...}, system{platform, machine, cpu, python}}]:
      ``identity`` is the backend's ``describe`` as its document recorded it (DirectML: its version,
      ``directml sha256``, max feature level, adapter, vendor id, device id, driver version, the D3D12
      route; a library: its version and build), ``system`` the document's environment,
  documents [{file, journal, junit, source, created, profile, seed, reproduce}],
  lists [{list, version, file}], claims [claims.Claim.to_json()], waivers_used [ids],
  console_log (a file name or null), signed (whether SIGNATURE.json signs the package).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from .. import __version__
from ..results.text import printable
from .claims import Claim
from .mustpass import MustPassList
from .waivers import Waiver

SCHEMA, SCHEMA_VERSION = "rngcheck-statement", 1
SYSTEM = ("platform", "machine", "cpu", "python")
# The identity a reader looks for first, named in a refusal in these words (any other describe key is
# compared too).
IDENTITY = ("DirectML version", "directml sha256", "max feature level", "adapter", "vendor id", "device id",
            "driver version", "version")


def system_of(document: dict[str, Any]) -> dict[str, str]:
    environment = document.get("environment") or {}
    return {key: str(environment.get(key, "")) for key in SYSTEM}


def build(documents: list[tuple[str, dict[str, Any]]], entries: list[dict[str, Any]], claims: list[Claim],
          lists: list[MustPassList], waivers: list[Waiver], *, product: str, vendor: str, contact: str,
          today: date, console: str | None, signed: bool) -> dict[str, Any]:
    implementations = []
    for name, document in documents:
        for backend in document.get("backends", []):
            implementations.append({"backend": backend.get("name"), "spec": backend.get("spec"), "document": name,
                                    "identity": dict(backend.get("describe") or {}), "system": system_of(document)})
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "product": product, "vendor": vendor,
            "contact": contact, "date": today.isoformat(), "rngcheck_version": __version__,
            "implementations": implementations, "documents": entries,
            "lists": [{"list": m.name, "version": m.version, "file": f"mustpass/{m.name}-{m.version}.txt"}
                      for m in lists],
            "claims": [c.to_json() for c in claims],
            "waivers_used": sorted({w["waiver"] for c in claims for w in c.waived}),
            "waivers_given": [w.id for w in waivers], "console_log": console, "signed": signed}


def identity_problems(said: dict[str, Any], documents: list[tuple[str, dict[str, Any]]], where: str) -> list[str]:
    """Verification rule 8: one line per identity field of the statement that is not what the documents
    recorded, and per implementation the statement names that no document has (or leaves out)."""
    recorded = {(name, str(b.get("name"))): (dict(b.get("describe") or {}), system_of(document))
                for name, document in documents for b in document.get("backends", [])}
    problems, seen = [], set()
    for entry in said.get("implementations", []):
        if not isinstance(entry, dict):
            problems.append(f"{where}: implementations: an entry that is not an object")
            continue
        key = (str(entry.get("document")), str(entry.get("backend")))
        seen.add(key)
        label = f"{where}: {printable(key[1])}"
        if key not in recorded:
            problems.append(f"{label}: {key[0]} has no such backend")
            continue
        describe, system = recorded[key]
        given = entry.get("identity")
        identity: dict[str, Any] = given if isinstance(given, dict) else {}
        fields = [k for k in IDENTITY if k in describe or k in identity]
        fields += sorted((set(describe) | set(identity)) - set(fields))
        for field in fields:
            if identity.get(field) != describe.get(field):
                problems.append(f"{label}: its {field} is {printable(str(identity.get(field)))}, the document recorded "
                                f"{printable(str(describe.get(field)))}")
        given = entry.get("system")
        stated: dict[str, Any] = given if isinstance(given, dict) else {}
        for field in SYSTEM:
            if stated.get(field) != system.get(field):
                problems.append(f"{label}: its {field} is {printable(str(stated.get(field)))}, the document recorded "
                                f"{printable(str(system.get(field)))}")
    for key in sorted(set(recorded) - seen):
        problems.append(f"{where}: {printable(key[1])} of {key[0]}: the statement does not name it")
    if said.get("schema") != SCHEMA or said.get("schema_version") != SCHEMA_VERSION:
        problems.append(f"{where}: not a {SCHEMA} version {SCHEMA_VERSION} statement")
    return problems
