"""A submission package: ``rngcheck submission create`` makes one, ``rngcheck submission verify`` checks it.

The layout (fixed; rule 1 of verify: no file missing, no file more):

    MANIFEST.sha256              "<sha256>  <path>" for every other file but SIGNATURE.json, sorted by path
    SIGNATURE.json               only when signed (signing.py): Ed25519 over MANIFEST.sha256's bytes
    statement.json               the conformance statement (statement.py)
    waivers.json                 the waivers given (waivers.py), {"waivers": []} without any
    environment.json             the machine that made the package and rngcheck's version there
    terminal.txt                 each document's terminal summary, as ``rngcheck run`` prints it
    report.html                  the page of all the documents (``rngcheck report``)
    console.log                  only with ``--log FILE``: the run's own console output
    documents/NN-NAME.json       the result documents, numbered in the order given
    journals/NN-NAME.journal.jsonl   each document's journal, where one lies beside it
    junit/NN-NAME.xml            each document's JUnit XML
    mustpass/LIST-VERSION.txt    each claimed must-pass list, as published

Verification (each refusal one line, "PATH: what is wrong"):
1. the layout and the manifest: every file listed with its sha256, nothing more, nothing less;
2. the signature when there is one (and there must be one when ``--key`` names a trusted key);
3. every document and journal line against its JSON Schema;
4. every verdict decided again from the results (rngcheck.results.document.finish), never read from a
   summary; a journal's results equal its document's; JUnit and the terminal summary equal what the
   documents give today;
5. each list equal to rngcheck's published list of its version;
6. the waivers: well formed, none expired today, each covering a must-pass case, the statement naming
   those used;
7. every claim decided again (claims.py) and equal to the statement's, and none of claims.py rule 2's
   left out;
8. the statement's identity of each implementation (DirectML's version, sha256, feature level, adapter,
   vendor and device id, driver version; a library's version; the OS, CPU) equal to what its document
   recorded;
9. where a backend's spec is available on the verifying machine, a sample of its passed cases run again
   (same profile and seed) must pass again with the documents' output digests (where the axis records one:
   DirectML's words; elsewhere a pass is the reference's exact output already).
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import RngcheckError
from ..jsonfile import parse_json
from ..results import document as D
from ..results import journal as J
from ..results import statuses
from ..results.text import printable
from . import claims as C
from . import mustpass, signing, statement
from . import waivers as W

MANIFEST, SIGNATURE = "MANIFEST.sha256", "SIGNATURE.json"
STATEMENT, WAIVERS, ENVIRONMENT = "statement.json", "waivers.json", "environment.json"
TERMINAL, REPORT, CONSOLE = "terminal.txt", "report.html", "console.log"
FIXED = (STATEMENT, WAIVERS, ENVIRONMENT, TERMINAL, REPORT)
RERUN_SAMPLE = 8


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stem(number: int, path: Path) -> str:
    name = path.name
    for suffix in (".journal.jsonl", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:80] or "document"
    return f"{number:02d}-{safe}"


def terminal_text(documents: list[dict[str, Any]]) -> str:
    from ..reports import terminal

    return "\n\n".join(terminal.summary(d) for d in documents) + "\n"


def junit_text(document: dict[str, Any]) -> bytes:
    from ..reports import junit

    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "junit.xml"
        junit.write(document, path)
        return path.read_bytes()


def manifest_text(files: dict[str, bytes]) -> bytes:
    return "".join(f"{sha256(files[p])}  {p}\n" for p in sorted(files)).encode()


# -- create ------------------------------------------------------------------------------------------------

@dataclass
class Created:
    path: Path
    claims: list[C.Claim]


def create(out: Path, sources: list[Path], *, product: str, vendor: str, contact: str = "",
           lists: list[str] | None = None, waivers_file: Path | None = None, log: Path | None = None,
           key: Path | None = None, today: date | None = None) -> Created:
    """A package at ``out`` (which must not exist) from the result documents or journals ``sources``."""
    today = today or datetime.now(timezone.utc).date()
    if out.exists():
        raise RngcheckError(f"{out} exists: a package is made in a new folder")
    if not sources:
        raise RngcheckError("submission create: no result document given")
    files: dict[str, bytes] = {}
    documents: list[tuple[str, dict[str, Any]]] = []
    entries = []
    for number, source in enumerate(sources, 1):
        document = D.load(source)
        problems = D.result_problems(document, str(source))
        if problems or not document.get("complete", True):
            why = "; ".join(problems) or "interrupted, or past its deadline"
            raise RngcheckError(f"{source}: an unfinished run ({why}): finish it (rngcheck run --resume) before "
                                f"claiming anything from it")
        stem = _stem(number, source)
        name = f"documents/{stem}.json"
        files[name] = (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode()
        journal = J.journal_path_for(source) if not J.is_journal(source) else source
        journal_name = f"journals/{stem}.journal.jsonl" if journal.is_file() else None
        if journal_name:
            files[journal_name] = journal.read_bytes()
        junit_name = f"junit/{stem}.xml"
        files[junit_name] = junit_text(document)
        documents.append((name, document))
        entries.append({"file": name, "journal": journal_name, "junit": junit_name,
                        "source": source.name, "created": document.get("created"), "profile": document.get("profile"),
                        "seed": document.get("seed"), "reproduce": document.get("reproduce")})
    chosen = [mustpass.load(name) for name in lists] if lists else mustpass.newest()
    waivers = W.read(waivers_file) if waivers_file else []
    where = str(waivers_file) if waivers_file else WAIVERS
    problems = W.expired(waivers, today, where)
    made = C.claims_of(documents, chosen, waivers, asked=bool(lists))
    problems += C.unused_waivers(made, chosen, waivers, where)
    if problems:
        raise RngcheckError("; ".join(problems))
    claimed = {(c.list_name, c.version) for c in made}
    used_lists = [m for m in chosen if (m.name, m.version) in claimed]
    for must in used_lists:
        files[f"mustpass/{must.name}-{must.version}.txt"] = must.text().encode()
    files[WAIVERS] = (json.dumps({"waivers": [w.to_json() for w in waivers]}, indent=1) + "\n").encode()
    files[ENVIRONMENT] = (json.dumps(environment(), indent=1) + "\n").encode()
    files[TERMINAL] = terminal_text([d for _, d in documents]).encode()
    files[REPORT] = report_html([d for _, d in documents])
    if log is not None:
        try:
            files[CONSOLE] = log.read_bytes()
        except OSError as error:
            raise RngcheckError(f"{log}: cannot read the console log ({error.strerror or error})") from None
    said = statement.build(documents, entries, made, used_lists, waivers, product=product, vendor=vendor,
                           contact=contact, today=today, console=CONSOLE if log is not None else None,
                           signed=key is not None)
    files[STATEMENT] = (json.dumps(said, indent=1, ensure_ascii=False) + "\n").encode()
    manifest = manifest_text(files)
    signature = signing.sign(manifest, key) if key is not None else None
    work = out.with_name(out.name + ".partial")
    if work.exists():
        shutil.rmtree(work)
    try:
        for name, data in files.items():
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (work / MANIFEST).write_bytes(manifest)
        if signature is not None:
            (work / SIGNATURE).write_text(json.dumps(signature, indent=1) + "\n")
        work.rename(out)
    except OSError as error:
        shutil.rmtree(work, ignore_errors=True)
        raise RngcheckError(f"cannot write the package {out}: {error.strerror or error}") from None
    return Created(out, made)


def report_html(documents: list[dict[str, Any]]) -> bytes:
    from ..reports import html

    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / REPORT
        html.write(documents, path)
        return path.read_bytes()


def environment() -> dict[str, Any]:
    import platform

    return {"rngcheck_version": __version__, "python": sys.version.split()[0], "platform": platform.platform(),
            "machine": platform.machine(), "cpu": D.cpu_name(), "packages": D.package_versions(),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds")}


# -- verify ------------------------------------------------------------------------------------------------

@dataclass
class Verified:
    refusals: list[str] = field(default_factory=list)
    claims: list[C.Claim] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def verify(package: Path, *, trusted: Path | None = None, rerun: int = RERUN_SAMPLE,
           today: date | None = None) -> Verified:
    """Rules 1-9; RngcheckError only when ``package`` is not a folder at all."""
    today = today or datetime.now(timezone.utc).date()
    if not package.is_dir():
        raise RngcheckError(f"{package}: not a submission package (no such folder)")
    out = Verified()
    files = _layout(package, trusted, out)
    said = _json(files, STATEMENT, out)
    if said is not None and not isinstance(said, dict):
        out.refusals.append(f"{STATEMENT}: not a conformance statement (a JSON object)")
    if not isinstance(said, dict):
        return out
    documents = _documents(package, files, said, out)
    lists = _lists(files, said, out)
    waivers = _waivers(files, said, today, out)
    if documents is None or lists is None or waivers is None:
        return out
    try:
        decided = C.claims_of(documents, lists, waivers, asked=True)
    except RngcheckError as error:
        out.refusals.append(f"documents: {error}")
        return out
    given = said.get("claims")
    if not isinstance(given, list) or not all(isinstance(c, dict) for c in given):
        out.refusals.append(f"{STATEMENT}: claims: a list of claim objects expected")
        return out
    stated: dict[tuple[Any, ...], Any] = {(c.get("backend"), c.get("list"), c.get("version")): c for c in given}
    owed = {(c.backend, c.list_name, c.version) for c in C.claims_of(documents, lists, waivers)}
    for left in sorted(owed - set(stated), key=str):   # rule 7: a backend claims each list it ran a case of
        out.refusals.append(f"{STATEMENT}: it leaves out the claim of {printable(str(left[0]))} on {left[1]} "
                            f"{left[2]} (the backend ran cases of that list)")
    for claim in decided:
        key: tuple[Any, ...] = (claim.backend, claim.list_name, claim.version)
        if key not in stated:
            continue   # a list claimed for some backends only: only the stated claims are checked
        said_claim = stated.pop(key)
        if said_claim != claim.to_json():
            said_met = "met" if said_claim.get("met") else "not met"
            out.refusals.append(f"{STATEMENT}: the claim of {printable(claim.backend)} on {claim.list_name} "
                                f"{claim.version} says {said_met}; the results say: {claim.line()}")
        out.claims.append(claim)
    for key in stated:
        out.refusals.append(f"{STATEMENT}: a claim of {printable(str(key[0]))} on {key[1]} {key[2]}: that list is "
                            f"not in the package or that backend has no results")
    out.refusals += C.unused_waivers(out.claims, lists, waivers, WAIVERS)
    used = sorted({w["waiver"] for c in out.claims for w in c.waived})
    if sorted(said.get("waivers_used", [])) != used:
        out.refusals.append(f"{STATEMENT}: waivers_used says {said.get('waivers_used')}, the claims use {used}")
    out.refusals += statement.identity_problems(said, documents, STATEMENT)
    if rerun and not out.refusals:
        _rerun(documents, said, rerun, out)
    return out


def _layout(package: Path, trusted: Path | None, out: Verified) -> dict[str, bytes]:
    """Rules 1-2: the files the manifest vouches for (path -> bytes)."""
    on_disk = sorted(p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file() or p.is_symlink())
    if MANIFEST not in on_disk:
        out.refusals.append(f"{MANIFEST}: missing (the package's list of files and their sha256)")
        return {}
    manifest = (package / MANIFEST).read_bytes()
    listed: dict[str, str] = {}
    for number, line in enumerate(manifest.decode("utf-8", "replace").splitlines(), 1):
        digest, _, path = line.partition("  ")
        if len(digest) != 64 or not path or path in listed or path in (MANIFEST, SIGNATURE) or ".." in path.split("/"):
            out.refusals.append(f"{MANIFEST}:{number}: not '<sha256>  <path>' of a package file")
            continue
        listed[path] = digest
    if SIGNATURE in on_disk:
        record = _parse((package / SIGNATURE).read_bytes(), SIGNATURE, out)
        out.refusals += signing.check(manifest, record, trusted, SIGNATURE)
    elif trusted is not None:
        out.refusals.append(f"{SIGNATURE}: missing: --key asks for a package signed by {trusted}")
    files: dict[str, bytes] = {}
    for path in on_disk:
        if path in (MANIFEST, SIGNATURE):
            continue
        if (package / path).is_symlink():
            out.refusals.append(f"{path}: a link (a package holds plain files only)")
        elif path not in listed:
            out.refusals.append(f"{path}: a file the manifest does not list (added after the package was made)")
        else:
            data = (package / path).read_bytes()
            if sha256(data) != listed[path]:
                out.refusals.append(f"{path}: changed: its sha256 is not the manifest's")
            files[path] = data
    for path in sorted(set(listed) - set(on_disk)):
        out.refusals.append(f"{path}: missing (the manifest lists it)")
    return files


def _parse(data: bytes, where: str, out: Verified) -> Any:
    try:
        return parse_json(data, where, what="package file")
    except RngcheckError as error:
        out.refusals.append(str(error))
        return None


def _json(files: dict[str, bytes], name: str, out: Verified) -> Any:
    if name not in files:
        if not any(r.startswith(name) for r in out.refusals):
            out.refusals.append(f"{name}: missing")
        return None
    return _parse(files[name], name, out)


def _documents(package: Path, files: dict[str, bytes], said: dict[str, Any],
               out: Verified) -> list[tuple[str, dict[str, Any]]] | None:
    """Rules 1 (the layout the statement gives), 3 and 4."""
    from ..results import schema

    given = said.get("documents")
    entries = [e for e in given if isinstance(e, dict)] if isinstance(given, list) else []
    if not entries or len(entries) != len(given or []):
        out.refusals.append(f"{STATEMENT}: documents: a non-empty list of objects expected")
        return None
    expected = set(FIXED) | {str(e.get(k)) for e in entries for k in ("file", "junit", "journal") if e.get(k)}
    lists = said.get("lists")
    expected |= {str(m.get("file")) for m in (lists if isinstance(lists, list) else []) if isinstance(m, dict)}
    expected |= {CONSOLE} if said.get("console_log") else set()
    for path in sorted(set(files) - expected):
        out.refusals.append(f"{path}: not part of the package's layout (the statement names no such file)")
    for path in sorted(expected - set(files)):
        if not any(r.startswith(path + ":") for r in out.refusals):
            out.refusals.append(f"{path}: missing (the statement names it)")
    if bool(said.get("signed")) != (package / SIGNATURE).is_file():
        said_signed = "signed" if said.get("signed") else "not signed"
        out.refusals.append(f"{SIGNATURE}: the statement says the package is {said_signed}")
    documents = []
    for entry in entries:
        name = str(entry.get("file"))
        document = _json(files, name, out) if name in files else None
        if not isinstance(document, dict):
            return None
        found = schema.problems(document, "rngcheck-result")
        if found:
            out.refusals.append(f"{name}: not a valid result document: {found[0]} ({len(found)} problems)")
            return None
        _verdicts(name, document, out)
        junit = str(entry.get("junit"))
        if junit in files and files[junit] != junit_text(document):
            out.refusals.append(f"{junit}: not the JUnit XML its document gives")
        journal = entry.get("journal")
        if journal and str(journal) in files:
            _journal(str(journal), files[str(journal)], document, out)
        documents.append((name, document))
    if TERMINAL in files and files[TERMINAL] != terminal_text([d for _, d in documents]).encode():
        out.refusals.append(f"{TERMINAL}: not the terminal summary its documents give")
    return documents


def _verdicts(name: str, document: dict[str, Any], out: Verified) -> None:
    """Rule 4: every verdict and count decided again from the results."""
    again = D.finish(copy.deepcopy(document))
    said, decided = document.get("summary", {}), again["summary"]
    for key in ("verdict", "counts", "required_failed"):
        if said.get(key) != decided.get(key):
            out.refusals.append(f"{name}: its summary's {key} says {said.get(key)!r}; its results give "
                                f"{decided.get(key)!r}")
    for stated, backend in zip(document.get("backends", []), again["backends"]):
        for key in ("verdict", "summary"):
            if stated.get(key) != backend.get(key):
                out.refusals.append(f"{name}: backend {printable(backend['name'])}'s {key} says {stated.get(key)!r}; "
                                    f"its results give {backend.get(key)!r}")


def _journal(name: str, data: bytes, document: dict[str, Any], out: Verified) -> None:
    from ..results import schema

    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "run.journal.jsonl"
        path.write_bytes(data)
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            record = _parse(line.encode(), f"{name}:{number}", out) if line.strip() else None
            found = schema.problems(record, "rngcheck-journal") if record is not None else []
            if found:
                out.refusals.append(f"{name}:{number}: not a valid journal line: {found[0]}")
                return
        try:
            rebuilt, _ = J.read(path)
        except RngcheckError as error:   # said of the package's file, not of the copy read here
            out.refusals.append(f"{name}: {str(error).replace(str(path) + ': ', '').replace(str(path), name)}")
            return
    key = ("backend", "case", "status", "output_sha256")
    if [[r.get(k) for k in key] for r in rebuilt["results"]] != [[r.get(k) for k in key] for r in document["results"]]:
        out.refusals.append(f"{name}: its results are not its document's")


def _lists(files: dict[str, bytes], said: dict[str, Any], out: Verified) -> list[mustpass.MustPassList] | None:
    """Rule 5."""
    lists = []
    entries = said.get("lists")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        out.refusals.append(f"{STATEMENT}: lists: a list of {{list, version, file}} objects expected")
        return None
    for entry in entries:
        name = str(entry.get("file"))
        if name not in files:
            return None   # said by the layout's rule
        try:
            copied = mustpass.parse(files[name].decode("utf-8", "replace"), name)
        except RngcheckError as error:
            out.refusals.append(str(error))
            return None
        try:
            published = mustpass.load(copied.name, copied.version)
        except RngcheckError as error:
            out.refusals.append(f"{name}: {error} (verify with the rngcheck that published version {copied.version})")
            return None
        if published.text() != copied.text():
            out.refusals.append(f"{name}: not the published must-pass list {copied.name} {copied.version}")
            return None
        lists.append(published)
    return lists


def _waivers(files: dict[str, bytes], said: dict[str, Any], today: date, out: Verified) -> list[W.Waiver] | None:
    """Rule 6 (its unused and used parts: after the claims)."""
    value = _json(files, WAIVERS, out)
    if value is None:
        return None
    try:
        waivers = W.parse(value, WAIVERS)
    except RngcheckError as error:
        out.refusals.append(str(error))
        return None
    out.refusals += W.expired(waivers, today, WAIVERS)
    return waivers


def _rerun(documents: list[tuple[str, dict[str, Any]]], said: dict[str, Any], sample: int, out: Verified) -> None:
    """Rule 9: a seeded sample (the seed: the statement's sha256) of each backend's passed cases with an
    output digest, run again where its spec is available here."""
    chooser = random.Random(sha256(json.dumps(said, sort_keys=True).encode()))
    for name, document in documents:
        for backend in document.get("backends", []):
            spec = str(backend.get("spec"))
            done = [r for r in document["results"] if r.get("backend") == backend.get("name")
                    and r.get("status") == statuses.PASSED]
            if not done:
                continue
            chosen = chooser.sample(done, min(sample, len(done)))
            again = _run_again(spec, [r["case"] for r in chosen], document)
            if isinstance(again, str):
                out.notes.append(f"re-run: {printable(spec)}: {again}")
                continue
            differ = [r["case"] for r in chosen if again.get(r["case"]) != (statuses.PASSED, r.get("output_sha256"))]
            if differ:
                out.refusals.append(f"{name}: re-run here, {printable(spec)} gave other outputs for {len(differ)} of "
                                    f"{len(chosen)} sampled cases ({', '.join(differ[:3])}): these results are not "
                                    f"what this backend computes")
            else:
                out.notes.append(f"re-run: {printable(spec)}: {len(chosen)} sampled cases pass again with the "
                                 f"documents' output digests")


def _run_again(spec: str, cases: list[str], document: dict[str, Any]) -> dict[str, tuple[Any, Any]] | str:
    """case -> (status, output digest) of ``cases`` run again on ``spec``, or why they could not be."""
    with tempfile.TemporaryDirectory() as work:
        target = Path(work) / "again.json"
        command = [sys.executable, "-m", "rngcheck", "run", "--backend", spec, "--profile",
                   str(document.get("profile", "full")), "--seed", str(document.get("seed", 0)), "--quiet",
                   "--json", str(target)] + [word for case in cases for word in ("--case", case)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if not target.is_file():
            reason = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            return f"not available here ({reason[:200]}): not re-run"
        again = json.loads(target.read_text())
    return {r["case"]: (r.get("status"), r.get("output_sha256")) for r in again["results"]}
