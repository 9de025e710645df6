"""Submission packages (rngcheck submission create / verify / scoreboard, issue 42): a package made from
real runs verifies, and each kind of tampering is refused with one line naming the file and the rule.

The runs: the test panel's correct Philox backend (tests/generator_backend_panel.py:RightPhilox, which
meets the four generator-philox lists) and its PhiloxNoBump (whose key is not bumped between rounds:
it fails them), each a real ``rngcheck run`` in its own process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from helpers import unavailable
from rngcheck.submission import package as P

TESTS = Path(__file__).parent
GOOD = f"{TESTS / 'generator_backend_panel.py'}:RightPhilox"
BROKEN = f"{TESTS / 'generator_backend_panel.py'}:PhiloxNoBump"
PHILOX_LISTS = {"generator-philox2x32", "generator-philox2x64", "generator-philox4x32", "generator-philox4x64"}


def rngcheck(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "rngcheck", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    made = {}
    for name, spec in (("good", GOOD), ("broken", BROKEN)):
        out = folder / f"{name}.json"
        done = rngcheck("run", "--backend", spec, "--case", "generator/philox*", "--quiet", "--json", out)
        assert out.is_file(), done.stderr
        made[name] = out
    return made


@pytest.fixture(autouse=True)
def tests_importable(monkeypatch):
    # verify's re-run starts `rngcheck run` on the package's backend spec: the panel imports its neighbours
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))


def create(runs, out, *extra, which="good"):
    return rngcheck("submission", "create", runs[which], "--out", out, "--product", "Panel Philox",
                    "--vendor", "rngcheck tests", *extra)


def verify(package, *extra):
    return rngcheck("submission", "verify", package, *extra)


def refusals(done) -> list[str]:
    return [line for line in done.stdout.splitlines() if ": REFUSED: " in line]


def refused(package: Path, **options) -> list[str]:
    """``submission verify PKG --rerun 0``'s refusal lines, in this process (as the command prints them)."""
    return [f"{package}: REFUSED: {line}" for line in P.verify(package, rerun=0, **options).refusals]


def rehash(package: Path) -> None:
    """The manifest made again over the files as they are: what a forger of an unsigned package does,
    so that only the deeper rules can catch the change."""
    files = {p.relative_to(package).as_posix(): p.read_bytes() for p in package.rglob("*")
             if p.is_file() and p.name not in (P.MANIFEST, P.SIGNATURE)}
    (package / P.MANIFEST).write_bytes(P.manifest_text(files))


def edit_json(path: Path, change) -> None:
    value = json.loads(path.read_text())
    change(value)
    path.write_text(json.dumps(value, indent=1) + "\n")


@pytest.fixture(scope="module")
def signed(runs, tmp_path_factory):
    """A signed package of the good run and its keys."""
    folder = tmp_path_factory.mktemp("signed")
    keys = folder / "key.pem", folder / "key.pub"
    done = rngcheck("submission", "keygen", "--private", keys[0], "--public", keys[1])
    assert done.returncode == 0, done.stderr
    assert oct(keys[0].stat().st_mode & 0o777) == "0o600"
    done = create(runs, folder / "pkg", "--sign", keys[0])
    assert done.returncode == 0, done.stdout + done.stderr
    return folder / "pkg", keys


def copy_of(package: Path, tmp_path: Path) -> Path:
    target = tmp_path / package.name
    shutil.copytree(package, target)
    return target


def test_a_package_of_a_passing_run_verifies_with_its_claims_met(signed):
    package, keys = signed
    layout = sorted(p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file())
    assert {P.MANIFEST, P.SIGNATURE, *P.FIXED} <= set(layout)
    assert {f"mustpass/{name}-0.1.0.txt" for name in PHILOX_LISTS} <= set(layout)
    assert any(p.startswith("documents/") for p in layout) and any(p.startswith("journals/") for p in layout)
    said = json.loads((package / P.STATEMENT).read_text())
    assert {c["list"] for c in said["claims"]} == PHILOX_LISTS and all(c["met"] for c in said["claims"])
    assert said["product"] == "Panel Philox" and said["signed"] is True
    identity = said["implementations"][0]
    assert identity["system"]["cpu"] is not None and identity["system"]["machine"]
    done = verify(package, "--key", keys[1])
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{package}: VERIFIED (4 claims, 0 not met)" in done.stdout
    assert "8 sampled cases pass again with the documents' output digests" in done.stdout   # rule 9 ran


def test_one_changed_byte_in_any_file_is_refused_naming_it(signed, tmp_path):
    package, keys = signed
    for path in sorted(p for p in package.rglob("*") if p.is_file()):
        name = path.relative_to(package).as_posix()
        target = tmp_path / name.replace("/", "_")
        shutil.copytree(package, target)
        data = bytearray((target / name).read_bytes())
        data[len(data) // 2] ^= 0x01
        (target / name).write_bytes(bytes(data))
        lines = refused(target)
        assert lines, name
        if name == P.MANIFEST:
            assert any("signature does not verify" in line or P.MANIFEST in line for line in lines), lines
        elif name == P.SIGNATURE:
            assert any(P.SIGNATURE in line for line in lines), lines
        else:
            assert any(f"REFUSED: {name}: changed" in line for line in lines), (name, lines)


def test_a_file_added_or_removed_is_refused(signed, tmp_path):
    package, _ = signed
    added = copy_of(package, tmp_path / "added")
    (added / "documents" / "extra.json").write_text("{}")
    assert any("documents/extra.json: a file the manifest does not list" in line
               for line in refused(added))
    removed = copy_of(package, tmp_path / "removed")
    (removed / P.TERMINAL).unlink()
    assert any(f"{P.TERMINAL}: missing" in line for line in refused(removed))
    unsigned = copy_of(package, tmp_path / "unsigned")
    (unsigned / P.SIGNATURE).unlink()
    assert any("the statement says the package is signed" in line
               for line in refused(unsigned))


def test_a_wrong_signature_is_refused(signed, runs, tmp_path):
    package, keys = signed
    other = tmp_path / "other.pem", tmp_path / "other.pub"
    assert rngcheck("submission", "keygen", "--private", other[0], "--public", other[1]).returncode == 0
    lines = refused(package, trusted=other[1])
    assert any("not the trusted key" in line for line in lines), lines
    forged = copy_of(package, tmp_path / "forged")
    record = json.loads((forged / P.SIGNATURE).read_text())
    resigned = P.signing.sign(b"another manifest", other[0])
    record["signature"] = resigned["signature"]
    (forged / P.SIGNATURE).write_text(json.dumps(record))
    assert any("the signature does not verify" in line for line in refused(forged))
    plain = tmp_path / "plain"
    assert create(runs, plain).returncode == 0
    assert any(f"{P.SIGNATURE}: missing: --key" in line for line in refused(plain, trusted=keys[1]))


@pytest.fixture
def plain(runs, tmp_path):
    """An unsigned package of the good run (made in this process)."""
    package = tmp_path / "plain"
    made = P.create(package, [runs["good"]], product="Panel Philox", vendor="rngcheck tests")
    assert len(made.claims) == 4 and all(c.met for c in made.claims)
    return package


def test_a_summary_that_says_pass_over_a_failed_result_is_refused(plain):
    document = next((plain / "documents").glob("*.json"))

    def fail_one(value):
        value["results"][0]["status"] = "failed"     # the summary still says pass
    edit_json(document, fail_one)
    rehash(plain)
    lines = refused(plain)
    assert any("its summary's verdict says 'pass'; its results give 'fail'" in line for line in lines), lines
    assert any("says met; the results say" in line for line in lines), lines


def test_a_missing_must_pass_case_is_refused(plain):
    document = next((plain / "documents").glob("*.json"))
    journal = next((plain / "journals").glob("*.jsonl"))
    gone = "generator/philox4x32-10-243f6a88-a4093822"

    def drop(value):
        value["results"] = [r for r in value["results"] if r["case"] != gone]
        value["cases"] = [c for c in value["cases"] if c["id"] != gone]
    edit_json(document, drop)
    journal.unlink()   # the journal would still hold the result: the forger drops it and its line

    def no_journal(value):
        value["documents"][0]["journal"] = None
    edit_json(plain / P.STATEMENT, no_journal)
    import rngcheck.results.document as D
    edit_json(document, D.finish)   # a forger who also fixes the summaries
    shutil.rmtree(plain / "junit")
    (plain / "junit").mkdir()
    said = json.loads((plain / P.STATEMENT).read_text())
    (plain / said["documents"][0]["junit"]).write_bytes(P.junit_text(json.loads(document.read_text())))
    (plain / P.TERMINAL).write_text(P.terminal_text([json.loads(document.read_text())]))
    rehash(plain)
    lines = refused(plain)
    assert lines == [line for line in lines if "generator-philox4x32" in line], lines
    assert f"{gone} missing" in lines[0] and "says met" in lines[0]


def test_a_statement_whose_identity_differs_from_the_documents_is_refused(plain):
    def change(value):
        value["implementations"][0]["identity"]["implementation"] = "something else"
        value["implementations"][0]["system"]["cpu"] = "another CPU"
    edit_json(plain / P.STATEMENT, change)
    rehash(plain)
    lines = refused(plain)
    assert any("its implementation is something else, the document recorded" in line for line in lines), lines
    assert any("its cpu is another CPU" in line for line in lines), lines


def waivers_file(tmp_path, expires, case="generator/philox*-10-*", id_="W-1") -> Path:
    path = tmp_path / f"waivers-{id_}.json"
    path.write_text(json.dumps({"waivers": [{"id": id_, "case": case, "reason": "the key bump is fixed in 2.1",
                                             "approver": "A. Approver", "expires": expires}]}))
    return path


def test_a_failing_run_is_not_met_and_waivers_make_it_met_until_they_expire(runs, tmp_path):
    unmet = tmp_path / "unmet"
    done = create(runs, unmet, which="broken")
    assert done.returncode == 1 and "not met" in done.stdout, done.stdout + done.stderr
    assert verify(unmet, "--rerun", "0").returncode == 1
    assert verify(unmet, "--rerun", "0", "--allow-unmet").returncode == 0

    # PhiloxNoBump fails every 10-round block (7 rounds: the bump is not reached in its test vectors' form)
    soon = (date.today() + timedelta(days=1)).isoformat()
    waived = tmp_path / "waived"
    document = json.loads(runs["broken"].read_text())
    failing = sorted({r["case"] for r in document["results"] if r["status"] == "failed"})
    assert failing
    patterns = sorted({case.rsplit("-", 2)[0] + "-*" for case in failing})
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"waivers": [
        {"id": f"W-{i}", "case": pattern, "reason": "fixed in the next driver", "approver": "A. Approver",
         "expires": soon} for i, pattern in enumerate(patterns)]}))
    done = create(runs, waived, "--waivers", path, which="broken")
    assert done.returncode == 0, done.stdout + done.stderr
    said = json.loads((waived / P.STATEMENT).read_text())
    assert said["waivers_used"] == sorted(f"W-{i}" for i in range(len(patterns)))
    assert sorted(w["case"] for c in said["claims"] for w in c["waived"]) == failing
    assert verify(waived, "--rerun", "0").returncode == 0
    later = P.verify(waived, rerun=0, today=date.today() + timedelta(days=2))
    assert any("waiver W-0 expired on" in line for line in later.refusals), later.refusals

    expired = waivers_file(tmp_path, (date.today() - timedelta(days=1)).isoformat())
    done = create(runs, tmp_path / "never", "--waivers", expired, which="broken")
    assert done.returncode == 2 and "waiver W-1 expired on" in done.stderr and "Traceback" not in done.stderr
    stale = waivers_file(tmp_path, soon, case="layout/nothing-like-it*", id_="W-9")
    done = create(runs, tmp_path / "never", "--waivers", stale, which="broken")
    assert done.returncode == 2 and "waiver W-9" in done.stderr and "matches no must-pass case" in done.stderr
    assert not (tmp_path / "never").exists()


def test_bad_input_is_one_line(runs, tmp_path, plain):
    done = create(runs, plain)   # exists
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "exists" in done.stderr
    done = verify(tmp_path / "nowhere")
    assert done.returncode == 2 and "not a submission package" in done.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"waivers": [{"id": "W", "case": "x"}]}')
    done = create(runs, tmp_path / "p2", "--waivers", bad)
    assert done.returncode == 2 and "no reason, approver, expires" in done.stderr and "Traceback" not in done.stderr
    done = create(runs, tmp_path / "p3", "--list", "no-such-list")
    assert done.returncode == 2 and "no must-pass list 'no-such-list'" in done.stderr


def test_the_scoreboard_has_a_cell_per_claim_and_lists_refused_packages(runs, signed, tmp_path):
    good, _ = signed
    bad = tmp_path / "bad"
    assert create(runs, bad, which="broken").returncode == 1
    named = tmp_path / "named"
    done = rngcheck("submission", "create", runs["good"], "--out", named, "--product", "<script>alert(1)</script>",
                    "--vendor", "v")
    assert done.returncode == 0
    tampered = copy_of(good, tmp_path / "tampered")
    (tampered / P.TERMINAL).write_text("edited")
    page, table = tmp_path / "board" / "index.html", tmp_path / "board" / "board.json"
    done = rngcheck("submission", "scoreboard", good, bad, named, tampered, "--out", page, "--json", table)
    assert done.returncode == 0, done.stderr
    board = json.loads(table.read_text())
    assert len(board["rows"]) == 3 and set(board["columns"]) == {f"{n} 0.1.0" for n in PHILOX_LISTS}
    met = [row["claims"][c]["met"] for row in board["rows"] for c in board["columns"]]
    assert met.count(True) == 8 and met.count(False) == 4
    assert [r["package"] for r in board["refused"]] == [str(tampered)]
    text = page.read_text()
    assert "<script>alert" not in text and "&lt;script&gt;" in text
    links = set(re.findall(r'href="([^"]+)"', text))
    assert len(links) == 3   # one page per verified package, the refused one linked nowhere
    assert {(page.parent / link).resolve() for link in links} == {(p / P.REPORT).resolve() for p in (good, bad, named)}


def test_real_directml_packages_name_the_library_and_refuse_another_version_or_sha256(tmp_path):
    """Real DirectML (Microsoft's Linux build on vkd3d and lavapipe; CI sets it up): its claim of the directml
    list is met, its statement names the library's sha256, and a statement that names another version or
    sha256 than the document recorded is refused, each in its own line."""
    from rngcheck.backends.directml.bridge import chain

    layout = chain.Layout.default()
    if not (layout.bridge / "libd3d12.so").is_file() or not layout.directml(chain.DEFAULT_BUILD).is_file():
        unavailable("real DirectML is not set up (python -m rngcheck.backends.directml.bridge.build)")
    document = tmp_path / "directml.json"
    done = rngcheck("run", "--backend", f"directml:lib={chain.DEFAULT_BUILD.short}", "--quiet", "--json", document)
    assert done.returncode == 0, done.stderr
    package = tmp_path / "pkg"
    made = P.create(package, [document], product="DirectML on lavapipe", vendor="rngcheck tests", lists=["directml"])
    assert [(c.list_name, c.met) for c in made.claims] == [("directml", True)]
    said = json.loads((package / P.STATEMENT).read_text())
    identity = said["implementations"][0]["identity"]
    library = layout.directml(chain.DEFAULT_BUILD)
    assert identity["directml sha256"] == P.sha256(library.read_bytes())
    checked = P.verify(package, rerun=3)
    assert not checked.refusals and any("3 sampled cases pass again" in n for n in checked.notes), checked.notes

    def another(value):
        entry = value["implementations"][0]["identity"]
        entry["DirectML version"] = "1.15.4.0"
        entry["directml sha256"] = "0" * 64
    edit_json(package / P.STATEMENT, another)
    rehash(package)
    lines = refused(package)
    assert len(lines) == 2, lines
    assert "its DirectML version is 1.15.4.0, the document recorded " + chain.DEFAULT_BUILD.version in lines[0]
    assert f"its directml sha256 is {'0' * 64}, the document recorded {identity['directml sha256']}" in lines[1]


def test_a_hostile_package_is_refused_in_lines_not_a_traceback(plain, tmp_path):
    (plain / P.STATEMENT).write_text("[]")
    rehash(plain)
    checked = P.verify(plain, rerun=0)
    assert checked.refusals == [f"{P.STATEMENT}: not a conformance statement (a JSON object)"]
    assert not checked.claims
    traversal = tmp_path / "traversal"
    traversal.mkdir()
    (traversal / P.MANIFEST).write_text(f"{'0' * 64}  ../outside.txt\n{'1' * 64}  statement.json\n")
    lines = refused(traversal)
    assert any("MANIFEST.sha256:1: not '<sha256>  <path>'" in line for line in lines), lines
    assert any("statement.json: missing" in line for line in lines), lines
    linked = tmp_path / "linked"
    shutil.copytree(plain, linked)
    (linked / P.TERMINAL).unlink()
    (linked / P.TERMINAL).symlink_to("/etc/hostname")
    assert any(f"{P.TERMINAL}: a link" in line for line in refused(linked))
    done = rngcheck("submission", "verify", traversal)
    assert done.returncode == 1 and "Traceback" not in done.stderr and "REFUSED" in done.stdout


def test_the_lists_command_prints_the_published_lists(tmp_path):
    done = rngcheck("submission", "lists")
    assert done.returncode == 0 and "directml" in done.stdout and "118 cases" in done.stdout
    done = rngcheck("submission", "lists", "generator-philox4x32")
    assert done.returncode == 0 and "# list: generator-philox4x32" in done.stdout
    assert "generator/philox4x32-7-00000000-00000000  optional" in done.stdout


@pytest.mark.parametrize("field, value", [("lists", "directml"), ("lists", [1]), ("documents", {}), ("documents", []),
                                          ("claims", "all met"), ("implementations", [None])])
def test_a_statement_with_a_field_of_the_wrong_shape_is_refused(plain, field, value):
    def change(statement):
        statement[field] = value
    edit_json(plain / P.STATEMENT, change)
    rehash(plain)
    checked = P.verify(plain, rerun=0)
    assert checked.refusals and not any(c.met for c in checked.claims if field == "claims")


def test_a_list_copy_that_is_not_a_list_is_refused(plain):
    listed = next((plain / "mustpass").glob("*.txt"))
    listed.write_text("# list: x\nkat/a  surely\n")
    rehash(plain)
    assert any("a case id and at most one mark" in line for line in refused(plain))


def test_a_statement_that_leaves_out_a_claim_is_refused(plain):
    def drop(statement):
        statement["claims"] = [c for c in statement["claims"] if c["list"] != "generator-philox2x64"]
    edit_json(plain / P.STATEMENT, drop)
    rehash(plain)
    assert any("leaves out the claim of RightPhilox on generator-philox2x64 0.1.0" in line for line in refused(plain))
