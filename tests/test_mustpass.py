"""The must-pass lists (rngcheck.submission.mustpass): published lists never change without a new
rngcheck version, every case they name exists, and the rule of what counts."""

from __future__ import annotations

import hashlib

import pytest

from rngcheck import __version__
from rngcheck.conformance import axes
from rngcheck.errors import RngcheckError
from rngcheck.submission import mustpass


def test_every_published_list_is_the_file_its_digest_froze():
    recorded = mustpass.published()
    assert recorded, "no must-pass list is published"
    on_disk = {p.relative_to(mustpass.ROOT).as_posix() for p in mustpass.ROOT.glob("*/*.txt")}
    assert on_disk == set(recorded), ("a list file without a recorded digest, or a digest without its file: "
                                      "publish lists with scripts/mustpass.py under a new version")
    for key, digest in recorded.items():
        actual = hashlib.sha256((mustpass.ROOT / key).read_bytes()).hexdigest()
        assert actual == digest, (f"the published must-pass list {key} changed: a published list never changes; "
                                  f"raise rngcheck's version and publish the new lists (scripts/mustpass.py publish)")


def test_this_version_publishes_lists_and_each_names_its_version():
    assert __version__ in mustpass.versions()
    for name in mustpass.names(__version__):
        must = mustpass.load(name, __version__)
        assert (must.name, must.version) == (name, __version__)
        assert mustpass.parse(must.text(), name) == must   # the text is the list, nothing lost


def test_every_case_of_this_versions_lists_exists_in_every_profile_it_names():
    cases = {case.id: case for case in axes.all_cases()}
    for name in mustpass.names(__version__):
        must = mustpass.load(name, __version__)
        gone = [c for c in must.cases if c not in cases]
        assert not gone, f"{name}: names cases the suite no longer has: {gone[:5]}"
        named = {p.strip() for p in must.profiles.split(",")}
        assert named in ({*mustpass.PROFILES}, {*mustpass.FULL_SIZE}), must.profiles
        partial = [c for c in must.cases if not named <= set(cases[c].profiles)]
        assert not partial, f"{name}: cases some profile does not run: {partial[:5]}"


def test_a_changed_list_is_refused_when_loaded(tmp_path, monkeypatch):
    root = tmp_path / "mustpass"
    (root / "0.1.0").mkdir(parents=True)
    source = mustpass.ROOT / "0.1.0" / "directml.txt"
    (root / "0.1.0" / "directml.txt").write_text(source.read_text().replace("kat/", "kat-", 1))
    (root / "published.json").write_text(mustpass.PUBLISHED.read_text())
    monkeypatch.setattr(mustpass, "ROOT", root)
    monkeypatch.setattr(mustpass, "PUBLISHED", root / "published.json")
    with pytest.raises(RngcheckError, match="missing or changed"):
        mustpass.load("directml", "0.1.0")


def test_the_rule_of_what_counts():
    must = mustpass.MustPassList("x", "1", "", "quick", ("a", "b", "c"),
                                 {"b": mustpass.IMPLEMENTATION_DEFINED, "c": mustpass.OPTIONAL})
    assert must.counts("a", "passed") and must.counts("b", "passed") and must.counts("c", "passed")
    assert not must.counts("a", "info") and must.counts("b", "info") and not must.counts("c", "info")
    assert not must.counts("a", "n/a") and not must.counts("b", "n/a") and must.counts("c", "n/a")
    for status in ("failed", "error", "crashed", "timeout", "skipped", "not-run", None):
        assert not any(must.counts(case, status) for case in "abc")


@pytest.mark.parametrize("text, words", [
    ("# list: x\n# version: 1\n# profiles: quick\na  sometimes\n", "at most one mark"),
    ("# list: x\n# version: 1\n# profiles: quick\na\na\n", "listed twice"),
    ("# list: x\n# profiles: quick\na\n", "no '# version:' line"),
    ("# list: x\n# version: 1\n# profiles: quick\n# cases: 3\na\n", "says 3 cases"),
])
def test_a_malformed_list_is_one_line(text, words):
    with pytest.raises(RngcheckError, match=words):
        mustpass.parse(text, "given.txt")


def test_the_directml_list_marks_the_aliasing_cases_implementation_defined():
    must = mustpass.load("directml")
    marked = {c for c, mark in must.marks.items() if mark == mustpass.IMPLEMENTATION_DEFINED}
    assert marked and all(c.startswith("layout/alias") for c in marked)
    assert not any(mark == mustpass.OPTIONAL for mark in must.marks.values())
