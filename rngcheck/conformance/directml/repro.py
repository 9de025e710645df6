"""``rngcheck repro`` of one DirectML description: expected and actual words and output state.

The terminal text (:func:`text`, at most TERMINAL_ROWS rows of words whatever the tensor) and
the JSON document of ``rngcheck repro --json FILE`` (:func:`document`), schema "rngcheck-repro",
version 1 (fields added later are optional):
  schema, schema_version, rngcheck_version, created, command (argv), reproduce (command line),
  description {state, sizes, strides, feature_level, output_state (as a result document's case
               inputs), element_count},
  backend {name, spec, validates, describe, summary, verdict}   (as in a result document),
  verdict "pass" | "fail",
  result {status, message, diagnosis (with its anatomy: the result schema), mismatches, ...}
                                                                (a result document's result),
  words {element_count, differing_count, differing_indices (ascending, at most 1000),
         differing_indices_complete, last_differing, complete (the windows hold every element),
         max_rows, windows [{first, expected [int], actual [int]}]} | null (no call completed),
  output_state {expected [6 int], actual [6 int] | null, returned (what came back instead of
                a state, else ""), differing [word positions 0-5]} | null (no output state).
Rows are Philox blocks: words first+4j .. first+4j+3 of a window; every word is a uint32 as int.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from ... import arguments, layout
from ...counter import COUNTER_WORDS, STATE_WORDS, as_state_words  # state words 0-3 are the counter, 4-5 the key
from ...description import Description, validate
from ...errors import Rejected, RngcheckError
from ...jsonfile import write_json
from ...reference import LANES
from ...results import verdicts
from ...results.statuses import RAN
from ..axis import Repro
from ..outcome import Outcome
from . import cases as C
from .comparison import Comparison, StateComparison, WordComparison, compare

SCHEMA = "rngcheck-repro"
SCHEMA_VERSION = 1
TERMINAL_ROWS = 16    # rows of words printed at most (64 words)
JSON_ROWS = 1 << 14   # rows of words written at most (65,536 words)
MARK = "*"
MAX_EXTENT = 1 << 28  # words (1 GiB): a reproduction is a small case
REPRO_ID = "repro/command-line"


ALIASING_NOTE = ("aliasing output: the words at shared offsets are implementation-defined; the input state, "
                 "guards and returned state are still checked")


def feature_level(text: str) -> tuple[int, int]:
    """``--feature-level``'s value: "4.0" is (4, 0); RngcheckError (one line) for anything else."""
    try:
        major, minor = (int(p) for p in text.split("."))
    except ValueError:
        raise RngcheckError(f"--feature-level {text!r} is not like 4.0") from None
    return major, minor


def state(words: tuple[int, ...], text: str) -> tuple[int, ...]:
    """``--state``'s words (``text``: as given), each a uint32; RngcheckError (one line) otherwise."""
    if as_state_words(words) is None:
        raise RngcheckError(f"--state: every word must be in 0..0xffffffff, got {text!r}")
    return words


def settle_aliasing(result_document: dict) -> str:
    """The verdict of a reproduction whose output aliases (elements share offsets): the words
    there are implementation-defined (info), so nothing needs to pass; a required result that
    broke (input state, guards, returned state) fails it. Written into the document, and returned."""
    summary = result_document["summary"]
    ran = sum(summary["counts"].get(status, 0) for status in RAN)
    summary["verdict"] = verdicts.run_verdict(failed=summary["required_failed"], ran=ran,
                                              complete=result_document["complete"])
    return str(summary["verdict"])


def words_case(state: tuple[int, ...], sizes: tuple[int, ...], strides: tuple[int, ...] | None,
               feature_level: tuple[int, int]) -> C.Case:
    """The case ``rngcheck repro`` runs for a description (RngcheckError, one line, for one that no
    implementation may accept or that is too large to reproduce). Aliasing strides make it an
    ALIAS case: what shared offsets hold is implementation-defined."""
    case = C.Case(id=REPRO_ID, category="repro", description="from the command line",
                  rule=C.RULE_MAPPING, source=C.DML_PAGE, state=state, sizes=sizes, strides=strides,
                  feature_level=feature_level)
    try:  # the buffer repro allocates is the tensor's extent: no buffer-size rejection of a made-up buffer
        extent = layout.required_elements(case.sizes, strides)
    except (ValueError, TypeError, OverflowError):
        extent = 1 << 62
    try:
        validate(Description(state_sizes=case.shape_of_state(), output_sizes=case.sizes,
                             output_strides=strides, output_state_sizes=case.shape_of_state(),
                             buffer_elements=max(extent, 1), feature_level=feature_level))
    except Rejected as error:
        raise RngcheckError(f"impossible description: {error}") from None
    if extent > MAX_EXTENT:
        raise RngcheckError(f"the tensor's extent is {extent:.3g} words; repro handles up to {MAX_EXTENT} "
                            f"(use rngcheck run for the scale cases)")
    if is_aliasing(case):  # two elements share an offset
        case = replace(case, procedure=C.ALIAS, rule=C.RULE_ALIASING, source=C.STRIDES_PAGE,
                       description="aliasing output (elements share offsets): implementation-defined")
    return case


def is_aliasing(case: C.Case) -> bool:
    return case.strides is not None and layout.aliases(case.sizes, case.strides)


def _cell(word, differs: bool) -> str:
    return f"{int(word):08x}" + (MARK if differs else " ")


def _row_text(label: str, width: int, expected, actual) -> str:
    """One Philox block: expected words, then actual words with the differing ones marked."""
    left = " ".join(f"{int(w):08x}" for w in expected).ljust(LANES * 9 - 1)
    right = " ".join(_cell(a, int(a) != int(e)) for e, a in zip(expected, actual)).rstrip()
    return f"  {label:>{width}}  {left}  {right}"


def words_text(words: WordComparison, max_rows: int = TERMINAL_ROWS) -> list[str]:
    n, differ = words.element_count, words.differing_count
    windows = words.windows(max_rows)
    width = max(len("element"), len(str(max(0, n - 1))))
    legend = f"; {MARK} marks a word that differs" if differ else ""
    lines = [f"words (hex, logical order; a row is one Philox block of {LANES} words{legend}):",
             f"  {'element':>{width}}  {'expected':<{LANES * 9 - 1}}  actual"]
    shown_rows, shown_differ, next_row = 0, 0, 0
    for window in windows:
        row = window.first // LANES
        if row > next_row:
            lines.append(_gap(width, row - next_row))
        for start in range(0, window.expected.size, LANES):
            lines.append(_row_text(str(window.first + start), width, window.expected[start:start + LANES],
                                   window.actual[start:start + LANES]))
            shown_rows += 1
        shown_differ += int(window.differing.size)
        next_row = row + -(-window.expected.size // LANES)
    if next_row < words.row_count:
        lines.append(_gap(width, words.row_count - next_row))
    if not differ:
        lines.append(f"  all {n} words as expected" + ("" if shown_rows == words.row_count else
                                                         f" ({shown_rows} of {words.row_count} rows shown)"))
        return lines
    where = (f"element {words.differing_indices[0]}" if differ == 1 else
             f"first at element {words.differing_indices[0]}, last at element {words.last_differing}")
    lines.append(f"  {differ} of {n} word{'s' if n != 1 else ''} differ: {where}")
    if shown_rows < words.row_count:
        lines.append(f"  shown: {shown_rows} of {words.row_count} rows, with {shown_differ} of the {differ} "
                     f"differing words")
    return lines


def _gap(width: int, rows: int) -> str:
    return f"  {'...':>{width}}  ({rows} row{'s' if rows != 1 else ''} not shown)"


def state_text(state: StateComparison) -> list[str]:
    differing = set(state.differing)
    legend = f"; {MARK} marks a word that differs" if differing and state.actual is not None else ""
    lines = [f"output state (hex; counter words 0-{COUNTER_WORDS - 1}, key words {COUNTER_WORDS}-"
             f"{STATE_WORDS - 1}{legend}):",
             "  expected  " + _state_cells(state.expected, set())]
    if state.actual is None:
        lines.append(f"  actual    ({state.returned})")
    else:
        lines.append("  actual    " + _state_cells(state.actual, differing))
    if not differing:
        lines.append("  as expected")
    elif state.actual is not None:
        lines.append(f"  {len(differing)} of {STATE_WORDS} words differ (word{'s' if len(differing) > 1 else ''} "
                     f"{', '.join(map(str, sorted(differing)))})")
    return lines


def _state_cells(words, differing: set[int]) -> str:
    cells = [_cell(w, i in differing) for i, w in enumerate(words)]
    return (" ".join(cells[:COUNTER_WORDS]) + "  " + " ".join(cells[COUNTER_WORDS:])).rstrip()


def text(comparison: Comparison | None, max_rows: int = TERMINAL_ROWS) -> str:
    """The words and the output state, expected beside actual (bounded by ``max_rows`` rows)."""
    if comparison is None:
        return "words: none to show (the backend's call did not complete)"
    lines = words_text(comparison.words, max_rows)
    if comparison.state is not None:
        lines += state_text(comparison.state)
    return "\n".join(lines)


# -- the JSON document (the file edge) ------------------------------------------------------------

def words_entry(words: WordComparison, max_rows: int = JSON_ROWS) -> dict:
    windows = words.windows(max_rows)
    return {
        "element_count": words.element_count,
        "differing_count": words.differing_count,
        "differing_indices": list(words.differing_indices),
        "differing_indices_complete": words.indices_complete,
        "last_differing": words.last_differing,
        "complete": sum(w.expected.size for w in windows) == words.element_count,
        "max_rows": max_rows,
        "windows": [{"first": w.first, "expected": w.expected.tolist(), "actual": w.actual.tolist()}
                    for w in windows],
    }


def state_entry(state: StateComparison) -> dict:
    return {"expected": state.expected.tolist(), "actual": None if state.actual is None else state.actual.tolist(),
            "returned": state.returned, "differing": state.differing}


def document(result_document: dict, case, comparison: Comparison | None, max_rows: int = JSON_ROWS) -> dict:
    """The repro document of a finished one-case, one-backend result document and its comparison."""
    (backend,), (result,) = result_document["backends"], result_document["results"]
    inputs = case.inputs()
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "rngcheck_version": result_document["rngcheck_version"],
        "created": result_document["created"], "command": result_document["command"],
        "reproduce": result_document["reproduce"],
        "description": {**inputs, "element_count": case.element_count},
        "backend": backend, "verdict": result_document["summary"]["verdict"], "result": result,
        "words": None if comparison is None else words_entry(comparison.words, max_rows),
        "output_state": None if comparison is None or comparison.state is None else state_entry(comparison.state),
    }


def write(repro_document: dict, path) -> None:
    write_json(path, repro_document)


# -- the axis's repro (rngcheck.conformance.axis.Repro) -------------------------------------------

def _arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--strides", help="e.g. 12,4,1 (default: packed)")
    group.add_argument("--feature-level", help="e.g. 3.0 (default 4.0)")


def _claims(args: argparse.Namespace) -> list[str]:
    return [flag for flag, value in (("--strides", args.strides), ("--feature-level", args.feature_level))
            if value is not None]


def _case(args: argparse.Namespace) -> C.Case:
    level = feature_level(args.feature_level or "4.0")
    strides = tuple(arguments.words(args.strides, None, "--strides")) if args.strides else None
    words = state(tuple(arguments.words(args.state, 6, "--state")), args.state)
    if not args.sizes:
        raise RngcheckError("repro needs --sizes (words), --kind (numbers) or --algorithm (rng_bit_generator)")
    if args.dtype is not None and args.dtype != "uint32":
        raise RngcheckError(f"--dtype {args.dtype}: the DirectML operator's words are uint32 (--kind draws numbers)")
    return words_case(words, tuple(arguments.words(args.sizes, None, "--sizes")), strides, level)


def _look(case: C.Case, outcome: Outcome) -> Comparison | None:
    if outcome.execution is None or is_aliasing(case):
        return None
    return compare(case, outcome.execution)


def _show(case: C.Case, looked: Comparison | None) -> list[str]:
    if is_aliasing(case):
        return [ALIASING_NOTE]
    return text(looked).splitlines()


def _settle(result_document: dict, case: C.Case) -> None:
    if is_aliasing(case):  # implementation-defined (info) is not a failure here: nothing needs to pass
        settle_aliasing(result_document)


def _write(path: str, result_document: dict, case: C.Case, looked: Comparison | None) -> None:
    write(document(result_document, case, looked), path)


REPRO = Repro(arguments=_arguments, claims=_claims, case=_case, look=_look, show=_show, settle=_settle,
              write=_write)

