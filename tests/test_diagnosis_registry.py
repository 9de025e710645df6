"""Every diagnosis id has one home: the shared check ids in rngcheck.conformance.checks, each axis's
model ids in its own diagnosis module, and one registry of them all (rngcheck.conformance.axes.DIAGNOSES);
checks write registered ids only, through ``named``."""

import re
from pathlib import Path

import pytest

from rngcheck.conformance import axes, checks
from rngcheck.conformance.directml import check

ROOT = Path(__file__).resolve().parents[1]


def test_named_gives_the_registered_summary_or_the_case_s_own():
    assert checks.named("contract") == {"id": "contract", "summary": checks.CHECKS["contract"]}
    assert checks.named("contract", "return None without an output state")["summary"] == \
        "return None without an output state"
    assert checks.named("unknown", "x", alternatives=[])["alternatives"] == []
    with pytest.raises(KeyError, match="not registered"):
        checks.named("contrakt")


def test_every_id_a_check_writes_is_registered_and_none_is_written_inline():
    folder = ROOT / "rngcheck" / "conformance"
    sources = [p for p in folder.rglob("*.py") if p.name in ("check.py", "property_search.py", "judging.py")]
    assert len(sources) >= 6   # one check per axis, the property search, the judging chain
    for path in sources:
        source = path.read_text()
        written = set(re.findall(r'named\("([^"]+)"', source))
        assert written <= set(checks.CHECKS), (path, written - set(checks.CHECKS))
        assert '"id":' not in source, path  # no diagnosis dicts built by hand
    source = Path(check.__file__).read_text()
    assert "looks like\")" not in source and ".split(\"; " not in source  # no message surgery to recover a field


def test_one_registry_holds_every_axis_s_ids_and_the_shared_ones():
    from rngcheck.conformance.conventions import diagnosis as numbers_diagnosis
    from rngcheck.conformance.directml import diagnosis
    from rngcheck.conformance.known_answers import diagnosis as generator_diagnosis
    from rngcheck.conformance.rng_bit_generator import diagnosis as rbg_diagnosis

    registered = set(axes.DIAGNOSES.names())
    assert set(checks.CHECKS) <= registered
    assert {v.id for v in diagnosis.WORD_VARIANTS} | set(diagnosis.FAMILIES) <= registered
    assert set(numbers_diagnosis.IDS) <= registered and "convention-jax" in registered
    assert {v.id for v in generator_diagnosis.VARIANTS} <= registered and checks.rounds_id(7) in registered
    assert set(rbg_diagnosis.DIVERGENCES) <= registered
    # the chain's search (issue 40): every id a change of its catalogs names, on both axes
    from rngcheck.conformance.directml import search
    from rngcheck.conformance.known_answers import search as block_search

    assert {c.id for c in search.CHANGES} | {"two-steps"} <= registered
    assert set(block_search.IDS) <= registered
    for name in ("philox4x64", "threefry4x32", "threefry2x64"):
        from rngcheck import generators

        g = generators.get(name)
        assert {c.id for c in block_search.changes_for(g, g.default_rounds)} <= registered
    with pytest.raises(Exception, match="unknown diagnosis 'no-such-id'"):
        axes.DIAGNOSES.get("no-such-id")


def test_a_hidden_state_finding_rediagnoses_the_wrong_words_without_text_surgery():
    outcome = check.Outcome(check.FAILED, "")
    failed = check.WrongWords(outcome, "3 of 8 elements differ")
    failed.diagnosed(checks.named("hidden-state"))
    assert outcome.message == "3 of 8 elements differ; looks like: hidden-state"
    assert outcome.diagnosis["id"] == "hidden-state"
