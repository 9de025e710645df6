"""Results as data: the result document, the journal, the statuses, the results table, and the
text of an outcome (text: the one mismatch line, failure text and properties every report uses).

Below conformance (which writes results) and reports (which read them); neither of those
imports the other. Heavy parts (pandas) are imported only when the table is asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def table(documents: Iterable[object]) -> pd.DataFrame:
    """The long-form results table of result documents, paths or journals: a pandas DataFrame
    (columns: rngcheck.results.tables.COLUMNS)."""
    from .tables import table as _table

    return _table(documents)
