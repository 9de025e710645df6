"""One results table: every result of every run, long form, as a pandas DataFrame.

    table(["a.json", "b.journal.jsonl"]) -> DataFrame, one row per (run, backend, case)

Columns (COLUMNS, in this order):
  run             the run's label: its file name without .json / .journal.jsonl, else "run N"
  created         when the run started (UTC ISO 8601, as the document says)
  rngcheck_version, schema_version, complete (False: a journal of an unfinished or interrupted run)
  backend         the backend's name in its run; spec: how it was loaded
  implementation, version, device   from the backend's describe() (version: its "version"; in a
                  document written before describe() had one, or from a backend that does not say
                  it, the first of OLD_VERSION_KEYS it has, as "key value")
  case, category
  status          the result's own status (rngcheck.results.statuses)
  effective       what it counts as (a broken result that is not required is info)
  required        whether a failure of the case fails the run
  diagnosis       the diagnosis id of a failure ("" when none)
  output_sha256   the digest of the output words ("" when none)
  seconds
  message         the first line of the verdict's message
  bound_ulps, worst_ulps   a numbers case's bound and its worst distance in ULPs (-1: a words case)

The HTML matrix, the agreement view, the terminal's category table, the markdown summary and
scripts/conformance_table.py are computed from this table; ``rngcheck export`` writes it
(CSV, or Parquet with pyarrow) and :func:`read_table` reads it back to the same table. In CSV a
text cell holding control, bidi or zero-width characters, or starting as a formula would
(``=``, ``+``, ``-``, ``@``, tab, CR), is written neutralised (:func:`csv_cell`) and reads back so.
Importing this module does not import pandas; calling :func:`table` does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RngcheckError
from ..jsonfile import atomic_write
from .records import ResultRecord
from .sources import Source, sources_of
from .statuses import effective
from .text import printable

if TYPE_CHECKING:
    import pandas as pd  # imported when a table is made, not with this module

OLD_VERSION_KEYS = ("tensorflow", "jax", "randomgen", "mkl_random", "random123", "nvidia-curand-cu12",
                    "pyopencl", "torch", "onedpl", "DirectML version", "driver version", "numpy", "rngcheck",
                    "exec-protocol")


@dataclass(frozen=True)
class Row:
    """One result of one run: the typed record behind a table row (JSON only at the file edge)."""

    run: str
    created: str
    rngcheck_version: str
    schema_version: int
    complete: bool
    backend: str
    spec: str
    implementation: str
    version: str
    device: str
    case: str
    category: str
    status: str
    effective: str
    required: bool
    diagnosis: str
    output_sha256: str
    seconds: float
    message: str
    bound_ulps: int = -1
    worst_ulps: int = -1


COLUMNS = tuple(f.name for f in fields(Row))
DTYPES = {**{c: "str" for c in COLUMNS}, "schema_version": "int64", "complete": "bool", "required": "bool",
          "seconds": "float64", "bound_ulps": "int64", "worst_ulps": "int64"}


def _str(value: object) -> str:
    return "" if value is None else str(value)


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0


def version_of(describe: dict[str, Any]) -> str:
    """The version a backend reports: its ``version``, else ``key value`` of the first of
    OLD_VERSION_KEYS it has (documents written before describe() had a version)."""
    if _str(describe.get("version")):
        return _str(describe["version"])
    return next((f"{k} {describe[k]}" for k in OLD_VERSION_KEYS if k in describe), "")


def run_labels(sources: list[Source]) -> list[str]:
    """A unique label per result source: its file's stem, else "run N" (numbered on collision)."""
    labels: list[str] = []
    taken: set[str] = set()
    for number, source in enumerate(sources, 1):
        name = Path(source.name).name if source.name and not source.name.startswith("document ") else ""
        for suffix in (".journal.jsonl", ".jsonl", ".json"):
            if name.endswith(suffix):
                name = name[:-len(suffix)]
                break
        label = name or f"run {number}"
        candidate, n = label, 2
        while candidate in taken:
            candidate, n = f"{label} ({n})", n + 1
        taken.add(candidate)
        labels.append(candidate)
    return labels


def rows(documents: Iterable[object]) -> list[Row]:
    """The typed rows of result documents (dicts, paths, journals or Sources; stats documents are ignored)."""
    return [row for row, _ in records(documents)]


def records(documents: Iterable[object]) -> list[tuple[Row, ResultRecord]]:
    """Each row of :func:`rows` with the result's whole record (its message, mismatches, numbers, ...):
    what a reader that shows more than the table's columns (the HTML page) reads a result from."""
    sources = [s for s in sources_of(documents) if s.kind == "result"]
    out: list[tuple[Row, ResultRecord]] = []
    for label, source in zip(run_labels(sources), sources):
        doc = source.doc
        categories = {_str(c.get("id")): _str(c.get("category"))
                      for c in _list(doc.get("cases")) if isinstance(c, dict)}
        backends = {_str(b.get("name")): b for b in _list(doc.get("backends")) if isinstance(b, dict)}
        for value in _list(doc.get("results")):
            if not isinstance(value, dict):
                continue
            result = ResultRecord.from_json(value)
            entry = backends.get(result.backend, {})
            describe = _dict(entry.get("describe"))
            category = categories.get(result.case) or (result.case.split("/")[0] if "/" in result.case else "?")
            out.append((Row(
                run=label, created=_str(doc.get("created")), rngcheck_version=_str(doc.get("rngcheck_version")),
                schema_version=_int(doc.get("schema_version")), complete=source.complete,
                backend=result.backend, spec=_str(entry.get("spec")) or result.backend,
                implementation=_str(describe.get("implementation")), version=version_of(describe),
                device=_str(describe.get("device") or describe.get("adapter")),
                case=result.case, category=category, status=result.status,
                effective=effective(result.status, result.required), required=result.required,
                diagnosis=result.diagnosis_id, output_sha256=_str(result.output_sha256), seconds=result.seconds,
                message=result.message.splitlines()[0] if result.message else "",
                **_numbers_columns(result.numbers)), result))
    return out


def _numbers_columns(value: object) -> dict[str, int]:
    """bound_ulps and worst_ulps of a numbers result (-1 for a words case)."""
    found = _dict(value)
    if not found:
        return {}
    return {"bound_ulps": _int(found.get("bound_ulps")), "worst_ulps": _int(_dict(found.get("worst")).get("ulps"))}


def frame(records: list[Row]) -> pd.DataFrame:
    import pandas as pd

    data = pd.DataFrame([astuple(r) for r in records], columns=list(COLUMNS))
    return data.astype(DTYPES)


def table(documents: Iterable[object]) -> pd.DataFrame:
    """The long-form results table (pandas.DataFrame) of result documents, paths or journals."""
    return frame(rows(documents))


def counts(data: pd.DataFrame, by: list[str], column: str = "effective") -> pd.DataFrame:
    """Counts of each status per group: a DataFrame indexed by ``by`` with one column per status."""
    from .statuses import STATUSES

    grouped = data.groupby(by + [column], sort=False).size().unstack(column, fill_value=0)
    return grouped.reindex(columns=list(STATUSES), fill_value=0)


# CSV injection (OWASP, "CSV Injection"): a cell a spreadsheet would read as a formula starts with
# one of these (the fullwidth forms too, which some spreadsheets fold); it is written with a
# single quote in front, so it shows as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def csv_cell(value: str) -> str:
    """A text cell as ``rngcheck export --csv`` writes it: control, bidi and zero-width characters
    escaped as ``text.printable`` shows them everywhere, then a cell that would start a formula
    prefixed with ``'``. Any other value is written as it is (and reads back equal)."""
    shown = printable(value)
    return "'" + shown if shown.startswith(FORMULA_STARTS) else shown


def write_csv(data: pd.DataFrame, path: str | Path) -> None:
    """The table as CSV, every text cell through :func:`csv_cell` (a backend names its results)."""
    safe = data.copy()
    for column, kind in DTYPES.items():
        if kind == "str":
            safe[column] = safe[column].map(csv_cell)
    atomic_write(path, safe.to_csv(index=False))


def write_parquet(data: pd.DataFrame, path: str | Path) -> None:
    import io

    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise RngcheckError("Parquet needs pyarrow: pip install 'rngcheck[parquet]' (or write --csv)") from None
    buffer = io.BytesIO()
    data.to_parquet(buffer, index=False)
    atomic_write(path, buffer.getvalue())


def read_table(path: str | Path) -> pd.DataFrame:
    """A table written by ``rngcheck export`` (CSV or Parquet, by its suffix), with the same dtypes."""
    import pandas as pd

    path = Path(path)
    try:
        if path.suffix == ".parquet":
            data = pd.read_parquet(path)
        else:
            data = pd.read_csv(path, dtype={c: str for c, t in DTYPES.items() if t == "str"},
                               keep_default_na=False, na_values={"seconds": ["nan", "NaN", ""]})
    except (OSError, ValueError) as error:
        raise RngcheckError(f"cannot read the results table {path}: {error}") from None
    for added in ("bound_ulps", "worst_ulps"):   # tables exported before the numbers layer
        if added not in data.columns:
            data[added] = -1
    missing = [c for c in COLUMNS if c not in data.columns]
    if missing:
        raise RngcheckError(f"{path}: not an rngcheck results table (no column {missing[0]!r})")
    try:
        return data[list(COLUMNS)].astype(DTYPES)
    except (TypeError, ValueError) as error:
        raise RngcheckError(f"{path}: a column of the results table has the wrong type ({error})") from None
