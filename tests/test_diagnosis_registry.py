"""Every diagnosis id has one home (conformance/diagnosis.py): check.py writes registered ids only."""

import re
from pathlib import Path

import pytest

from rngcheck.conformance import check, diagnosis


def test_named_gives_the_registered_summary_or_the_case_s_own():
    assert diagnosis.named("contract") == {"id": "contract", "summary": diagnosis.CHECKS["contract"]}
    assert diagnosis.named("contract", "return None without an output state")["summary"] == \
        "return None without an output state"
    assert diagnosis.named("unknown", "x", alternatives=[])["alternatives"] == []
    with pytest.raises(KeyError, match="not registered"):
        diagnosis.named("contrakt")


def test_every_id_check_py_writes_is_registered_and_none_is_written_inline():
    source = Path(check.__file__).read_text()
    written = set(re.findall(r'named\("([^"]+)"', source))
    assert written and written <= set(diagnosis.CHECKS)
    assert '"id":' not in source  # no diagnosis dicts built by hand
    assert "looks like\")" not in source and ".split(\"; " not in source  # no message surgery to recover a field


def test_a_hidden_state_finding_rediagnoses_the_wrong_words_without_text_surgery():
    outcome = check.Outcome(check.FAILED, "")
    failed = check.WrongWords(outcome, "3 of 8 elements differ")
    failed.diagnosed(diagnosis.named("hidden-state"))
    assert outcome.message == "3 of 8 elements differ; looks like: hidden-state"
    assert outcome.diagnosis["id"] == "hidden-state"
