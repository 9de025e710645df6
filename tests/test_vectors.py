"""The vector files: equal to their generator's output, readable, and refused when malformed."""

import json

import numpy as np
import pytest

from helpers import require
from rngcheck import counter, vectors
from rngcheck.errors import VectorFileError
from rngcheck.vectors import generate


def test_committed_vector_files_equal_the_generator_output(tmp_path):
    assert generate.main(["--out", str(tmp_path)]) == 0
    for name in vectors.FILES:
        assert (tmp_path / name).read_text() == vectors.data_path(name).read_text(), name
    assert generate.main(["--check"]) == 0


def test_check_mode_notices_a_stale_file(tmp_path, capsys):
    generate.main(["--out", str(tmp_path)])
    (tmp_path / vectors.OPERATOR_FILE).write_text("{}")
    assert generate.main(["--check", "--out", str(tmp_path)]) == 1
    assert "out of date: operator.json" in capsys.readouterr().err


def test_operator_vectors_agree_with_randomgen():
    """An implementation rngcheck did not write reproduces every packed vector's words."""
    randomgen = require("randomgen")
    checked = 0
    for v in vectors.operator_vectors():
        if v.strides is not None or v.expected_words is None:
            continue
        ctr = counter.counter_of(v.state)
        key = v.state[4] | (v.state[5] << 32)
        bitgen = randomgen.Philox(counter=(ctr - 1) % (1 << 128), key=key, number=4, width=32)
        assert tuple(int(w) for w in bitgen.random_raw(len(v.expected_words)).astype(np.uint32)) == v.expected_words
        checked += 1
    assert checked >= 15


def test_the_errata_vector_carries_the_corrected_state_and_says_so():
    (v,) = [v for v in vectors.operator_vectors() if v.id == "dml-example-324855"]
    assert counter.counter_of(v.expected_state) == 0x48656C6C_6F46726F_6D536561_7479615C
    assert "MINUS" in v.note and "7479615c" in v.note


def write(tmp_path, document):
    path = tmp_path / "v.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


@pytest.mark.parametrize("mutate, message", [
    (lambda d: "{not json", "not valid JSON"),
    (lambda d: {**d, "format": "other"}, "not an rngcheck vectors file"),
    (lambda d: {**d, "format_version": 99}, "format_version 99"),
    (lambda d: {**d, "vectors": {}}, "'vectors' must be a list"),
    (lambda d: {**d, "vectors": [{**d["vectors"][0], "state": ["0x1"]}]}, "state"),
    (lambda d: {**d, "vectors": [{**d["vectors"][0], "state": ["zz"] * 6}]}, "not a 32-bit hex word"),
    (lambda d: {**d, "vectors": [{k: v for k, v in d["vectors"][0].items() if k != "sizes"}]}, "missing field 'sizes'"),
    (lambda d: {**d, "vectors": [d["vectors"][0], d["vectors"][0]]}, "duplicate id"),
    (lambda d: {**d, "vectors": [{**d["vectors"][0], "expected": {}}]}, "expected needs"),
])
def test_malformed_operator_files_give_one_line_errors(tmp_path, mutate, message):
    document = json.loads(vectors.data_path(vectors.OPERATOR_FILE).read_text())
    path = write(tmp_path, mutate(document))
    with pytest.raises(VectorFileError) as raised:
        vectors.operator_vectors(path)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(VectorFileError, match="cannot read vectors file"):
        vectors.kat_vectors(tmp_path / "nope.json")
