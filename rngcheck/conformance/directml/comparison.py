"""What a backend produced beside what the operator should: words and output state of one call.

``rngcheck repro`` shows it to a vendor (rngcheck.conformance.repro renders it). It is bounded
whatever the tensor: the count of differing words is exact, their indices are kept up to
INDICES_KEPT, and the words themselves are read only for the rows (Philox blocks, LANES
words each) that are shown, chosen around the first differences (:meth:`WordComparison.windows`).
The expectation, the logical order and the scan come from rngcheck.conformance.directml.check.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ... import counter
from ...reference import LANES
from . import cases as C
from . import check

INDICES_KEPT = 1000  # differing element indices kept; the count is always exact
CONTEXT_ROWS = 1     # rows shown on each side of a differing row (when not every row is shown)


@dataclass(frozen=True)
class Window:
    """Consecutive rows: expected and actual words of elements first .. first+len-1 (logical order)."""

    first: int               # a multiple of LANES: the element index of its first row's first word
    expected: np.ndarray     # uint32
    actual: np.ndarray       # uint32

    @property
    def differing(self) -> np.ndarray:
        """Element indices (absolute) where the words differ."""
        return self.first + np.flatnonzero(self.expected != self.actual)


@dataclass
class WordComparison:
    """The tensor's words against the expectation: exact counts, words read on demand."""

    case: C.Case
    state: np.ndarray            # the input state the expectation is computed from
    tensor: np.ndarray           # the tensor's part of the buffer after the call
    differing_count: int
    differing_indices: list[int]  # ascending; the first INDICES_KEPT of them
    last_differing: int | None

    @property
    def element_count(self) -> int:
        return self.case.element_count

    @property
    def row_count(self) -> int:
        return counter.blocks_for(self.element_count)

    @property
    def indices_complete(self) -> bool:
        return len(self.differing_indices) == self.differing_count

    def rows(self, max_rows: int) -> list[int]:
        """The rows to show, ascending: all of them when they fit in ``max_rows``, else those
        around the first differences (or the first rows when nothing differs)."""
        if self.row_count <= max_rows:
            return list(range(self.row_count))
        if not self.differing_indices:
            return list(range(max_rows))
        chosen: set[int] = set()
        for index in self.differing_indices:
            row = index // LANES
            near = {r for r in range(row - CONTEXT_ROWS, row + CONTEXT_ROWS + 1) if 0 <= r < self.row_count}
            if chosen and len(chosen | near) > max_rows:
                break
            chosen |= near
        return sorted(chosen)[:max_rows]

    def windows(self, max_rows: int) -> list[Window]:
        """The rows of :meth:`rows`, joined into windows of consecutive rows, with their words."""
        windows, rows = [], self.rows(max_rows)
        start = 0
        for i in range(1, len(rows) + 1):
            if i == len(rows) or rows[i] != rows[i - 1] + 1:
                first = rows[start] * LANES
                count = min((rows[i - 1] + 1) * LANES, self.element_count) - first
                windows.append(Window(first, check.expected_words(self.case, self.state, first, count),
                                      check.actual_words(self.case, self.tensor, first, count)))
                start = i
        return windows


@dataclass(frozen=True)
class StateComparison:
    """The output state (counter words 0-3, key words 4-5) against the expectation."""

    expected: np.ndarray          # 6 uint32 words
    actual: np.ndarray | None     # 6 uint32 words, or None: see ``returned``
    returned: str                 # "" when ``actual`` is set, else what came back instead

    @property
    def differing(self) -> list[int]:
        """Word positions (0-5) that differ; all six when no state came back."""
        if self.actual is None:
            return list(range(counter.STATE_WORDS))
        return [int(i) for i in np.flatnonzero(self.expected != self.actual)]


@dataclass
class Comparison:
    words: WordComparison
    state: StateComparison | None  # None when the case describes no output state


def compare(case: C.Case, execution: check.Execution) -> Comparison:
    """The comparison of one call (``Outcome.execution``) of ``case`` against its expectation."""
    state = execution.state
    assert state is not None, "the calls compared are of EXECUTE cases, whose input is a state"
    case = replace(case, expected_sha256=None)  # compare words, not a digest
    count, last = 0, None
    kept: list[int] = []
    for first, _, _, wrong in check.compared_chunks(case, state, execution.tensor):
        if wrong.size:
            count += int(wrong.size)
            kept.extend(first + int(i) for i in wrong[:max(0, INDICES_KEPT - len(kept))])
            last = first + int(wrong[-1])
    words = WordComparison(case, state, execution.tensor, count, kept, last)
    return Comparison(words, _state_comparison(case, state, execution.returned))


def _state_comparison(case: C.Case, state: np.ndarray, returned) -> StateComparison | None:
    if not case.output_state:
        return None
    actual = None if returned is None else counter.as_state_words(returned)
    if actual is not None:
        return StateComparison(check.expected_state(case, state), actual, "")
    what = "no state" if returned is None else f"not 6 uint32 words: {str(returned)[:80]!r}"
    return StateComparison(check.expected_state(case, state), None, what)
