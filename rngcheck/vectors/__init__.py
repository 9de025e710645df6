"""Known-answer vectors: language-neutral JSON data files that drive every backend.

Files (regenerate with ``python -m rngcheck.vectors.generate``; a test proves the
committed files equal its output):
  random123_kat.json  the Random123 philox4x32 lines, verbatim, with their provenance.
  operator.json       DML_RANDOM_GENERATOR vectors: state in, sizes, strides, expected
                      words (explicit, or the sha256 of the little-endian words for large
                      tensors), expected state out.
Words are written as 8-digit hex strings ("0x0000abcd"); a state is 6 of them, word 0 first.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import VectorFileError
from ..jsonfile import read_json

FORMAT = "rngcheck-vectors"
FORMAT_VERSION = 1
KAT_FILE = "random123_kat.json"
OPERATOR_FILE = "operator.json"
FILES = (KAT_FILE, OPERATOR_FILE)


@dataclass(frozen=True)
class KatVector:
    """One Random123 line: Philox4x32-R(counter, key) = expected."""

    rounds: int
    counter: tuple[int, int, int, int]
    key: tuple[int, int]
    expected: tuple[int, int, int, int]
    line: str
    source: str


@dataclass(frozen=True)
class OperatorVector:
    """One execution of the operator with its expected result."""

    id: str
    description: str
    rule: str
    source: str
    state: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None
    feature_level: tuple[int, int]
    expected_words: tuple[int, ...] | None
    expected_sha256: str | None
    expected_state: tuple[int, ...]
    note: str = ""


def _word(value, where: str) -> int:
    try:
        word = int(value, 16) if isinstance(value, str) else None
    except ValueError:
        word = None
    if word is None or not 0 <= word <= 0xFFFFFFFF:
        raise VectorFileError(f"{where}: {value!r} is not a 32-bit hex word")
    return word


def _words(values, count: int | None, where: str) -> tuple[int, ...]:
    if not isinstance(values, list) or (count is not None and len(values) != count):
        raise VectorFileError(f"{where}: expected a list of {count if count is not None else 'some'} hex words")
    return tuple(_word(v, where) for v in values)


def _ints(values, where: str, allow_none=False):
    if values is None and allow_none:
        return None
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise VectorFileError(f"{where}: expected a list of integers")
    return tuple(values)


def read_document(path) -> dict:
    """A vectors file, parsed and its header checked (raises VectorFileError, one line)."""
    path = Path(path)
    document = read_json(path, VectorFileError, "vectors file")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise VectorFileError(f"{path.name}: not an rngcheck vectors file (format must be {FORMAT!r})")
    if document.get("format_version") != FORMAT_VERSION:
        raise VectorFileError(f"{path.name}: format_version {document.get('format_version')!r} "
                              f"is not supported (this rngcheck reads {FORMAT_VERSION})")
    if not isinstance(document.get("vectors"), list):
        raise VectorFileError(f"{path.name}: 'vectors' must be a list")
    return document


def _field(entry: dict, key: str, where: str):
    if key not in entry:
        raise VectorFileError(f"{where}: missing field {key!r}")
    return entry[key]


def parse_kat(document: dict, name: str = KAT_FILE) -> list[KatVector]:
    vectors = []
    for number, entry in enumerate(document["vectors"]):
        where = f"{name} vector {number}"
        if not isinstance(entry, dict):
            raise VectorFileError(f"{where}: not an object")
        rounds = _field(entry, "rounds", where)
        if not isinstance(rounds, int) or rounds < 0:
            raise VectorFileError(f"{where}: rounds must be a non-negative integer")
        vectors.append(KatVector(
            rounds=rounds,
            counter=_words(_field(entry, "counter", where), 4, where + " counter"),
            key=_words(_field(entry, "key", where), 2, where + " key"),
            expected=_words(_field(entry, "expected", where), 4, where + " expected"),
            line=str(_field(entry, "line", where)),
            source=str(_field(entry, "source", where)),
        ))
    return vectors


def parse_operator(document: dict, name: str = OPERATOR_FILE) -> list[OperatorVector]:
    vectors = []
    seen = set()
    for number, entry in enumerate(document["vectors"]):
        where = f"{name} vector {number}"
        if not isinstance(entry, dict):
            raise VectorFileError(f"{where}: not an object")
        vector_id = str(_field(entry, "id", where))
        where = f"{name} vector {vector_id!r}"
        if vector_id in seen:
            raise VectorFileError(f"{where}: duplicate id")
        seen.add(vector_id)
        expected = _field(entry, "expected", where)
        if not isinstance(expected, dict) or not ({"words", "sha256"} & expected.keys()):
            raise VectorFileError(f"{where}: expected needs 'words' or 'sha256'")
        level = str(_field(entry, "feature_level", where)).split(".")
        if len(level) != 2 or not all(p.isdigit() for p in level):
            raise VectorFileError(f"{where}: feature_level must look like '4.0'")
        sizes = _ints(_field(entry, "sizes", where), where + " sizes")
        words = _words(expected["words"], None, where + " words") if "words" in expected else None
        sha = expected.get("sha256")
        if sha is not None and (not isinstance(sha, str) or len(sha) != 64):
            raise VectorFileError(f"{where}: sha256 must be 64 hex digits")
        vectors.append(OperatorVector(
            id=vector_id,
            description=str(_field(entry, "description", where)),
            rule=str(_field(entry, "rule", where)),
            source=str(_field(entry, "source", where)),
            state=_words(_field(entry, "state", where), 6, where + " state"),
            sizes=sizes,
            strides=_ints(entry.get("strides"), where + " strides", allow_none=True),
            feature_level=(int(level[0]), int(level[1])),
            expected_words=words,
            expected_sha256=sha,
            expected_state=_words(_field(entry, "expected_state", where), 6, where + " expected_state"),
            note=str(entry.get("note", "")),
        ))
    return vectors


def data_path(name: str) -> Path:
    return Path(str(resources.files(__package__).joinpath(name)))


def kat_vectors(path=None) -> list[KatVector]:
    path = path or data_path(KAT_FILE)
    return parse_kat(read_document(path), Path(path).name)


def operator_vectors(path=None) -> list[OperatorVector]:
    path = path or data_path(OPERATOR_FILE)
    return parse_operator(read_document(path), Path(path).name)


def sha256_of_words(chunks) -> str:
    """sha256 of a stream of uint32 words in little-endian byte order (how large expectations are stored)."""
    import hashlib

    import numpy as np

    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(np.ascontiguousarray(chunk, dtype="<u4").tobytes())
    return digest.hexdigest()
