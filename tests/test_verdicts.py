"""Every verdict has one home (results/verdicts.py): its vocabularies and the one rule of a run's
verdict; no verdict is spelled anywhere else in the package."""

import ast
from pathlib import Path

import pytest

import rngcheck
from rngcheck.results import verdicts as V

PACKAGE = Path(rngcheck.__file__).parent
SPELLED = set(V.RUN_VERDICTS + V.STATS_VERDICTS + (V.NOT_APPLICABLE, V.COMPARE_OK, V.COMPARE_REGRESSED))
# A file another branch owns, still spelling the stats verdicts: it moves to the constants when that lands.
NOT_YET: set[str] = set()
# Dict keys that are a field's name, not a verdict: the page model's "incomplete" flag (a source had problems).
FIELDS = {"reports/model.py": {"incomplete"}}


@pytest.mark.parametrize("facts, verdict", [
    (dict(failed=0, ran=3), V.PASS),
    (dict(failed=1, ran=3), V.FAIL),
    (dict(failed=0, ran=0), V.NOTHING_RAN),                          # nothing ran: never a pass
    (dict(failed=0, ran=3, complete=False), V.INCOMPLETE),
    (dict(failed=2, ran=3, complete=False), V.INCOMPLETE),           # the document: resume it
    (dict(failed=2, ran=3, complete=False, failure_stands=True), V.FAIL),  # the page's column
    (dict(failed=0, ran=3, complete=False, failure_stands=True), V.INCOMPLETE),
    (dict(failed=1, ran=0), V.FAIL),
    (dict(failed=0, ran=0, complete=False), V.INCOMPLETE),
    (dict(failed=0, ran=3, backends=[V.PASS, V.NOTHING_RAN]), V.NOTHING_RAN),   # a backend tested nothing
    (dict(failed=1, ran=3, backends=[V.FAIL, V.NOTHING_RAN]), V.FAIL),
    (dict(failed=0, ran=3, stats=[V.STATS_PASS, V.STATS_SUSPECT]), V.PASS),
    (dict(failed=0, ran=3, stats=[V.STATS_PASS, V.STATS_FAIL]), V.FAIL),
    (dict(failed=0, ran=3, complete=False, stats=[V.STATS_FAIL]), V.FAIL),  # a stats failure stands
])
def test_run_verdict(facts, verdict):
    assert V.run_verdict(**facts) == verdict


@pytest.mark.parametrize("runs, stats, complete, verdict", [
    ([V.PASS, V.PASS], [V.STATS_PASS], True, V.STATS_PASS),
    ([V.PASS, V.FAIL], [V.STATS_PASS], True, V.STATS_FAIL),
    ([V.PASS], [V.STATS_FAIL], False, V.STATS_FAIL),
    ([V.INCOMPLETE], [], False, V.STATS_INCOMPLETE),
    ([V.PASS], [V.STATS_INCOMPLETE], True, V.STATS_INCOMPLETE),
    ([V.PASS], [V.STATS_SUSPECT], True, V.STATS_SUSPECT),
    ([], [], True, V.STATS_INCOMPLETE),
])
def test_report_verdict(runs, stats, complete, verdict):
    assert V.report_verdict(runs, stats, complete=complete) == verdict


def _field_names(tree, fields) -> set[int]:
    """The string nodes that name a field, not a verdict: a threshold (``thresholds["fail"]``,
    ``"thresholds": {"fail": ...}``, ``thresholds.get("fail")``) and the dict keys in ``fields``."""
    named = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            named.update(id(k) for k in node.keys if isinstance(k, ast.Constant) and k.value in fields)
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "thresholds" and isinstance(value, ast.Dict):
                    named.update(id(k) for k in value.keys)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "thresholds":
            named.update(id(a) for a in node.args[:1])
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "thresholds":
            named.add(id(node.slice))
    return named


def test_no_verdict_is_spelled_outside_verdicts_py():
    spelled = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where == "results/verdicts.py" or where in NOT_YET:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = _field_names(tree, FIELDS.get(where, set()))
        spelled += [f"{where}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and node.value in SPELLED and id(node) not in names]
    assert not spelled, "verdicts spelled outside results/verdicts.py:\n" + "\n".join(spelled)


def test_the_file_not_yet_moved_still_exists():
    assert all((PACKAGE / where).is_file() for where in NOT_YET)


def test_no_template_compares_a_verdict():
    """The report's templates lay out what the model says (a column's ``passed``, a compare page's
    ``regressed``): no verdict is spelled in them, and no verdict field is compared."""
    import re

    found = []
    for path in sorted((PACKAGE / "reports" / "templates").glob("*.j2")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = " ".join(re.findall(r"\{\{.*?\}\}|\{%.*?%\}", line))  # Jinja's expressions, not the HTML
            spelled = [v for v in SPELLED if re.search(rf"""(['"]){re.escape(v)}\1""", code)]
            compared = re.findall(r"verdict\s*(?:==|!=|\bin\b)|(?:==|!=)\s*\w+\.(?:first_)?verdict\b", code)
            found += [f"{path.name}:{number}: {what}" for what in spelled + compared]
    assert not found, "templates that compare verdicts:\n" + "\n".join(found)
