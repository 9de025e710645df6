"""Known-answer vectors: language-neutral JSON data files that drive every backend.

Files (regenerate with ``python -m rngcheck.vectors.generate``; a test proves the
committed files equal its output):
  random123_kat.json  Random123's known answers for every generator rngcheck implements
                      (rngcheck.generators), each with its line verbatim and its provenance, and
                      the lines it does not implement with the reason (not_implemented).
  operator.json       DML_RANDOM_GENERATOR vectors: state in, sizes, strides, expected
                      words (explicit, or the sha256 of the little-endian words for large
                      tensors), expected state out.
  tensorflow_guide.json  the numbers TensorFlow's guide prints, as programs of the Generator
                      model (rngcheck.numbers.tensorflow): hand-written from the source, each
                      with its provenance (format rngcheck-numbers-vectors).
  shipped_streams.json  words of Warp's and Taichi's generators from the real libraries (warp-lang,
                      taichi; format rngcheck-shipped-streams), recorded by
                      scripts/record_shipped_streams.py, not by generate.py; the power panel's
                      models are checked against them (tests/test_stats_shipped.py).
Words are written as 8-digit hex strings ("0x0000abcd"); a state is 6 of them, word 0 first.
A known answer's words are W-bit: 8 hex digits for 32-bit generators, 16 for 64-bit ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import VectorFileError
from ..generators import NAMES as GENERATOR_NAMES
from ..generators import get as get_generator
from ..jsonfile import read_json

FORMAT = "rngcheck-vectors"
FORMAT_VERSION = 1
KAT_FILE = "random123_kat.json"
OPERATOR_FILE = "operator.json"
FILES = (KAT_FILE, OPERATOR_FILE)
STABLEHLO_FILE = "stablehlo.json"       # StableHLO rng_bit_generator vectors (rngcheck.stablehlo)
NUMBERS_FORMAT = "rngcheck-numbers-vectors"
GUIDE_FILE = "tensorflow_guide.json"


@dataclass(frozen=True)
class KatVector:
    """One Random123 line: generator-R(counter, key) = expected, in W-bit words, word 0 first."""

    generator: str
    rounds: int
    counter: tuple[int, ...]
    key: tuple[int, ...]
    expected: tuple[int, ...]
    line: str
    source: str

    @property
    def id(self) -> str:
        """'<generator>-<rounds>-<counter word 0>-<key word 0>' (hex, W/4 digits): unique in the file."""
        digits = get_generator(self.generator).word_bits // 4
        return f"{self.generator}-{self.rounds}-{self.counter[0]:0{digits}x}-{self.key[0]:0{digits}x}"


@dataclass(frozen=True)
class NotImplementedKat:
    """A Random123 line rngcheck keeps but does not check, and why."""

    line: str
    reason: str


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


def _word(value, where: str, bits: int = 32) -> int:
    try:
        word = int(value, 16) if isinstance(value, str) else None
    except ValueError:
        word = None
    if word is None or not 0 <= word < (1 << bits):
        raise VectorFileError(f"{where}: {value!r} is not a {bits}-bit hex word")
    return word


def _words(values, count: int | None, where: str, bits: int = 32) -> tuple[int, ...]:
    if not isinstance(values, list) or (count is not None and len(values) != count):
        raise VectorFileError(f"{where}: expected a list of {count if count is not None else 'some'} hex words")
    return tuple(_word(v, where, bits) for v in values)


def _ints(values, where: str, allow_none=False):
    if values is None and allow_none:
        return None
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise VectorFileError(f"{where}: expected a list of integers")
    return tuple(values)


def read_document(path, file_format: str = FORMAT) -> dict:
    """A vectors file, parsed and its header checked (raises VectorFileError, one line)."""
    path = Path(path)
    document = read_json(path, VectorFileError, "vectors file")
    if not isinstance(document, dict) or document.get("format") != file_format:
        raise VectorFileError(f"{path.name}: not an rngcheck vectors file (format must be {file_format!r})")
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
        generator_name = _field(entry, "generator", where)
        if generator_name not in GENERATOR_NAMES:
            raise VectorFileError(f"{where}: generator {generator_name!r} is not one of {', '.join(GENERATOR_NAMES)}")
        generator = get_generator(generator_name)
        rounds = _field(entry, "rounds", where)
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 0:
            raise VectorFileError(f"{where}: rounds must be a non-negative integer")
        bits = generator.word_bits
        vectors.append(KatVector(
            generator=generator.name,
            rounds=rounds,
            counter=_words(_field(entry, "counter", where), generator.lanes, where + " counter", bits),
            key=_words(_field(entry, "key", where), generator.key_words, where + " key", bits),
            expected=_words(_field(entry, "expected", where), generator.lanes, where + " expected", bits),
            line=str(_field(entry, "line", where)),
            source=str(_field(entry, "source", where)),
        ))
    return vectors


def parse_not_implemented(document: dict, name: str = KAT_FILE) -> list[NotImplementedKat]:
    entries = document.get("not_implemented", [])
    if not isinstance(entries, list):
        raise VectorFileError(f"{name}: 'not_implemented' must be a list")
    lines = []
    for number, entry in enumerate(entries):
        where = f"{name} not_implemented {number}"
        if not isinstance(entry, dict):
            raise VectorFileError(f"{where}: not an object")
        lines.append(NotImplementedKat(str(_field(entry, "line", where)), str(_field(entry, "reason", where))))
    return lines


def _identified(document: dict, name: str):
    """(id, where, entry) of each vector that has an id of its own (one-line errors otherwise)."""
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
        yield vector_id, where, entry


def parse_operator(document: dict, name: str = OPERATOR_FILE) -> list[OperatorVector]:
    vectors = []
    for vector_id, where, entry in _identified(document, name):
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


@dataclass(frozen=True)
class StablehloVector:
    """One rng_bit_generator call (rngcheck.stablehlo) with its expected output and state."""

    id: str
    description: str
    source: str
    algorithm: str
    state: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: str
    expected: tuple[int, ...]
    new_state: tuple[int, ...]
    sha256: None = None


def _u64s(values, where: str) -> tuple[int, ...]:
    if not isinstance(values, list):
        raise VectorFileError(f"{where}: not a list")
    try:
        words = tuple(int(v, 16) for v in values)
    except (TypeError, ValueError):
        raise VectorFileError(f"{where}: not hex strings") from None
    if any(not 0 <= w < 1 << 64 for w in words):
        raise VectorFileError(f"{where}: a word out of 64-bit range")
    return words


def parse_stablehlo(document: dict, name: str = STABLEHLO_FILE) -> list[StablehloVector]:
    vectors = []
    for vector_id, where, entry in _identified(document, name):
        vectors.append(StablehloVector(
            id=vector_id, description=str(_field(entry, "description", where)),
            source=str(_field(entry, "source", where)), algorithm=str(_field(entry, "algorithm", where)),
            state=_u64s(_field(entry, "state", where), where + " state"),
            shape=_ints(_field(entry, "shape", where), where + " shape"), dtype=str(_field(entry, "dtype", where)),
            expected=_u64s(_field(entry, "expected", where), where + " expected"),
            new_state=_u64s(_field(entry, "expected_state", where), where + " expected_state")))
    return vectors


def stablehlo_vectors(path=None) -> list[StablehloVector]:
    path = path or data_path(STABLEHLO_FILE)
    return parse_stablehlo(read_document(path), Path(path).name)


def data_path(name: str) -> Path:
    return Path(str(resources.files(__package__).joinpath(name)))


def kat_vectors(path=None, generator: str | None = None) -> list[KatVector]:
    """The known answers (of one generator, if named) from random123_kat.json or ``path``."""
    path = path or data_path(KAT_FILE)
    vectors = parse_kat(read_document(path), Path(path).name)
    return [v for v in vectors if generator is None or v.generator == generator]


def kat_not_implemented(path=None) -> list[NotImplementedKat]:
    """The Random123 lines the vectors file keeps but rngcheck does not check, with the reason."""
    path = path or data_path(KAT_FILE)
    return parse_not_implemented(read_document(path), Path(path).name)


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


@dataclass(frozen=True)
class NumbersVector:
    """A program of the TensorFlow Generator model with the numbers its source printed."""

    id: str
    source: str
    steps: tuple


def _expect_floats(value, where: str, per_replica: int = 0):
    """A list of numbers (or nulls); for a replicated step, a list per replica (or null)."""
    if value is None:
        return None
    if per_replica:
        if not isinstance(value, list) or len(value) != per_replica:
            raise VectorFileError(f"{where}: expect must list {per_replica} replicas")
        return tuple(_expect_floats(v, where) for v in value)
    if not isinstance(value, list) or not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                                               for v in value):
        raise VectorFileError(f"{where}: expect must be a list of numbers")
    return tuple(None if v is None else float(v) for v in value)


def _step(entry, where: str):
    from ..numbers.tensorflow import STEP_OPS, Step

    if not isinstance(entry, dict) or entry.get("op") not in STEP_OPS:
        raise VectorFileError(f"{where}: a step is an object whose op is one of {', '.join(STEP_OPS)}")
    op = entry["op"]
    known = {"op", "generator", "seed", "shape", "count", "into", "replicas", "kind", "name", "expect"}
    unknown = sorted(set(entry) - known)
    if unknown:
        raise VectorFileError(f"{where}: unknown field(s) {', '.join(unknown)}")
    fields_ = {"op": op, "generator": str(entry.get("generator", "g"))}
    if op in ("from_seed", "reset_from_seed"):
        seed = _field(entry, "seed", where)
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise VectorFileError(f"{where}: seed must be a non-negative integer")
        fields_["seed"] = seed
    if op in ("normal", "replicated", "stateless"):
        fields_["shape"] = _ints(_field(entry, "shape", where), where + " shape")
        if any(size < 0 for size in fields_["shape"]):
            raise VectorFileError(f"{where}: shape sizes must be >= 0")
    if op == "replicated":
        replicas = _field(entry, "replicas", where)
        if not isinstance(replicas, int) or not 1 <= replicas <= 64:
            raise VectorFileError(f"{where}: replicas must be an integer in 1..64")
        fields_["replicas"] = replicas
    if op == "split":
        fields_["count"] = _field(entry, "count", where)
        into = _field(entry, "into", where)
        if not isinstance(into, list) or len(into) != fields_["count"] or not all(isinstance(n, str) for n in into):
            raise VectorFileError(f"{where}: into must name count generators")
        fields_["into"] = tuple(into)
    if op in ("save", "restore"):
        fields_["name"] = str(_field(entry, "name", where))
    if op == "stateless":
        seed = _ints(_field(entry, "seed", where), where + " seed")
        if len(seed) != 2:
            raise VectorFileError(f"{where}: a stateless seed is two integers")
        fields_["seed"] = seed
        fields_["kind"] = str(entry.get("kind", "normal"))
    if op == "state":
        fields_["expect"] = _ints(_field(entry, "expect", where), where + " expect")
    elif op in ("normal", "stateless", "replicated"):
        fields_["expect"] = _expect_floats(entry.get("expect"), where,
                                           fields_.get("replicas", 0) if op == "replicated" else 0)
    return Step(**fields_)


def parse_numbers(document: dict, name: str = GUIDE_FILE) -> list[NumbersVector]:
    vectors = []
    for vector_id, where, entry in _identified(document, name):
        steps = _field(entry, "steps", where)
        if not isinstance(steps, list) or not steps:
            raise VectorFileError(f"{where}: steps must be a non-empty list")
        vectors.append(NumbersVector(vector_id, str(_field(entry, "source", where)),
                                     tuple(_step(s, f"{where} step {i}") for i, s in enumerate(steps))))
    return vectors


def guide_vectors(path=None) -> list[NumbersVector]:
    """The TensorFlow guide's numbers (tensorflow_guide.json), parsed (VectorFileError, one line)."""
    path = Path(path or data_path(GUIDE_FILE))
    return parse_numbers(read_document(path, NUMBERS_FORMAT), path.name)
