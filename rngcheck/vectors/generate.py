"""Regenerate the vector files: ``python -m rngcheck.vectors.generate [--check] [--out DIR]``.

random123_kat.json comes from sources/random123_kat_vectors.txt (Random123's lines,
verbatim): every line of a generator in rngcheck.generators, and the others listed as not
implemented with the reason. operator.json is computed by the reference model, except where a vector says
its expectation is independent (the Random123 answers, the 324,855 example's state).
``--check`` exits 1 when the committed files differ from what this script writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from .. import counter, layout, reference
from ..generators import NOT_IMPLEMENTED, get
from . import FORMAT, FORMAT_VERSION, KAT_FILE, OPERATOR_FILE, STABLEHLO_FILE, data_path, sha256_of_words

SOURCE_FILE = "sources/random123_kat_vectors.txt"
RANDOM123_ALL = "Random123 examples/kat_vectors ({name} lines), via rngcheck/vectors/" + SOURCE_FILE
RANDOM123 = RANDOM123_ALL.format(name="philox4x32")
DML_PAGE = "DirectML DML_RANDOM_GENERATOR_OPERATOR_DESC, Remarks"
STRIDES_PAGE = "DirectML 'Using strides to express padding and memory layout'"
EXPLICIT_LIMIT = 64  # tensors up to this many elements list their words; larger ones a sha256
PI_KEY = (0xA4093822, 0x299F31D0)  # Random123's digits-of-pi key
HELLO_FROM_SEATTLE = 0x48656C6C_6F46726F_6D536561_74746C65
# C++26 std::philox4x32 (P2075R6, corrected by LWG 4134): its one required known answer.
CXX26_DRAFT = ("ISO C++ working draft (C++26), [rand.predef] philox4x32: 'Required behavior: The 10000th "
               "consecutive invocation of a default-constructed object of type philox4x32 produces the value "
               "1955073260' (P2075R6 as corrected by LWG 4134); default_seed = 20111115 ([rand.eng.philox])")
CXX26_DEFAULT_SEED = 20111115
CXX26_10000TH = 1955073260
CXX26_MAPPING = (
    "philox_engine's X_j is counter word j (Z = sum X_j * 2^(32j), X_0 least significant, as word 0 here; "
    "set_counter takes the words most significant first) and K_0 is k0 (state word 4). A default-constructed "
    "engine has X = 0, K = {default_seed, 0} and i = n - 1, so invocation j (1-based) returns Y_((j-1) mod 4) "
    "of Philox(K, Z = floor((j-1)/4)): the operator's element j - 1 from counter 0. The 10000th is element "
    "9999 = lane 3 of block 2499, i.e. element 3 of this 4-element tensor from counter 2499; the generator "
    "checks that the reference gives the standard's value there.")
ERRATA = ("The DirectML page prints 0x48656c6c'6f46726f'6d536561'746f776e (\"HelloFromSeatown\") "
          "as the result, which is the counter MINUS 324,855; the rule (add ceil(n/4) with carry) gives "
          "0x48656c6c'6f46726f'6d536561'7479615c, which rngcheck requires.")


def hex_words(words, bits: int = 32) -> list[str]:
    return [f"0x{int(w):0{bits // 4}x}" for w in words]


def random123_lines() -> list[str]:
    """The known-answer lines of the source file (comments and blank lines left out), verbatim."""
    lines = data_path(SOURCE_FILE).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def kat_document() -> dict:
    vectors, not_implemented = [], []
    for line in random123_lines():
        fields = line.split()
        name = fields[0]
        if name in NOT_IMPLEMENTED:
            not_implemented.append({"line": line, "reason": NOT_IMPLEMENTED[name]})
            continue
        generator = get(name)
        values = [int(v, 16) for v in fields[2:]]
        n, k, bits = generator.lanes, generator.key_words, generator.word_bits
        if len(values) != 2 * n + k:
            raise ValueError(f"{SOURCE_FILE}: {len(values)} words for {name} (expected {2 * n + k}): {line}")
        vectors.append({
            "generator": name,
            "rounds": int(fields[1]),
            "counter": hex_words(values[0:n], bits),
            "key": hex_words(values[n:n + k], bits),
            "expected": hex_words(values[n + k:], bits),
            "line": line,
            "source": RANDOM123_ALL.format(name=name),
        })
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "generator": "python -m rngcheck.vectors.generate", "vectors": vectors,
            "not_implemented": not_implemented}


def operator_vector(vector_id, description, rule, source, state, sizes, strides=None,
                    feature_level="4.0", expected_words=None, expected_state=None, note=""):
    """One operator vector; expectations default to the reference model's."""
    state = counter.state_array(state)
    n = layout.element_count(sizes)
    if expected_words is None:
        if n <= EXPLICIT_LIMIT:
            expected = {"words": hex_words(reference.words(state, 0, n))}
        else:
            expected = {"sha256": sha256_of_words(
                reference.words(state, first, count) for first, count in reference.chunks(n)), "count": n}
    else:
        expected = {"words": hex_words(expected_words)}
    entry = {
        "id": vector_id, "description": description, "rule": rule, "source": source,
        "state": hex_words(state), "sizes": list(sizes), "strides": None if strides is None else list(strides),
        "feature_level": feature_level, "expected": expected,
        "expected_state": hex_words(expected_state if expected_state is not None else counter.advance(state, n)),
    }
    if note:
        entry["note"] = note
    return entry


def cxx26_vector() -> dict:
    """std::philox4x32's 10000th output as an operator vector (see CXX26_MAPPING); its one word
    that the standard fixes is checked here against the reference, independently."""
    state = counter.make_state(2499, (CXX26_DEFAULT_SEED, 0))
    words = reference.words(state, 0, 4)
    if int(words[3]) != CXX26_10000TH:
        raise AssertionError(f"the reference gives {int(words[3])} for std::philox4x32's 10000th output, "
                             f"the standard {CXX26_10000TH}")
    return operator_vector(
        "cxx26-philox4x32-10000th",
        "C++26 std::philox4x32: the 10000th output of a default-constructed engine (1955073260 = 0x74880cec) "
        "is element 3 from counter 2499, key (20111115, 0)",
        "element i is lane i mod 4 of Philox4x32-10(counter + floor(i/4), key)", CXX26_DRAFT,
        state, (4,), note=CXX26_MAPPING)


def operator_document() -> dict:
    vectors = []
    key = PI_KEY
    # The Random123 answers through the operator: a 4-element tensor is one Philox block.
    for line in data_path(SOURCE_FILE).read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if not line.startswith("philox4x32 ") or fields[1] != "10":
            continue
        values = [int(v, 16) for v in fields[2:]]
        vectors.append(operator_vector(
            f"kat-{values[0]:08x}-{values[4]:08x}",
            f"Random123 Philox4x32-10 answer for counter {' '.join(fields[2:6])}, key {' '.join(fields[6:8])}",
            "element i is lane i mod 4 of Philox4x32-10(counter + floor(i/4), key)", RANDOM123,
            values[0:6], (4,), expected_words=values[6:10]))
    # The page's own example, with the corrected counter (independent of the reference).
    seattle = counter.make_state(HELLO_FROM_SEATTLE, key)
    vectors.append(operator_vector(
        "dml-example-324855", "the DirectML page's example: 3x3x20x7219 from 'HelloFromSeattle' advances by 324,855",
        "the counter is incremented by ceil(outputSize / 4)", DML_PAGE,
        seattle, (3, 3, 20, 7219), feature_level="3.0",
        expected_state=counter.make_state(HELLO_FROM_SEATTLE + 324_855, key), note=ERRATA))
    base = counter.make_state(0x0123456789ABCDEF_FEDCBA9876543210, key)
    for n in range(1, 10):
        vectors.append(operator_vector(
            f"elements-{n}", f"{n} element(s), packed 1-D", "lane i mod 4 of block floor(i/4); counter += ceil(n/4)",
            DML_PAGE, base, (n,)))
    carries = {"word0": (1 << 32) - 2, "word1": (1 << 64) - 2, "word2": (1 << 96) - 2, "wrap128": (1 << 128) - 2}
    for name, start in carries.items():
        vectors.append(operator_vector(
            f"carry-{name}", f"16 elements whose blocks straddle the carry out of {name}",
            "counter + block index is a 128-bit add with carry, mod 2^128", DML_PAGE,
            counter.make_state(start, key), (16,)))
    layouts = [
        ("padded-rows", "2x3 with row stride 5 (the strides page's padding example)", (2, 3), (5, 1)),
        ("column-major", "2x3 stored column-major (strides 1, 2)", (2, 3), (1, 2)),
        ("nhwc", "NCHW 1x3x2x2 stored as NHWC", (1, 3, 2, 2), (12, 1, 6, 3)),
        ("rank8", "8-D tensor 2x1x2x1x2x1x2x3", (2, 1, 2, 1, 2, 1, 2, 3), None),
        ("nchw-explicit", "1x1x3x5 with explicit packed strides", (1, 1, 3, 5), (15, 15, 5, 1)),
    ]
    for name, description, sizes, strides in layouts:
        vectors.append(operator_vector(
            f"layout-{name}", description, "element i is written at offset sum(coordinate_d * stride_d)",
            STRIDES_PAGE, base, sizes, strides, feature_level="4.0" if len(sizes) != 4 else "3.0"))
    vectors.append(operator_vector(
        "large-permuted", "2^16 elements, 3-D, permuted and padded strides (sha256)",
        "element i is written at offset sum(coordinate_d * stride_d)", STRIDES_PAGE,
        base, (16, 64, 64), (1, 17 * 64, 17)))
    vectors.append(cxx26_vector())
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "generator": "python -m rngcheck.vectors.generate",
            "errata": ERRATA, "vectors": vectors}


def stablehlo_document() -> dict:
    """stablehlo.json: one rng_bit_generator call per algorithm, state size and width, computed by
    rngcheck.stablehlo (XLA's variant), with small shapes so that every element is listed."""
    from .. import stablehlo as S

    key, low, high = 0x299F31D0_A4093822, 0x13198A2E_243F6A88, 0x03707344_85A308D3
    calls = [(S.PHILOX, (key, low, high), (9,), "uint32"), (S.PHILOX, (key, low), (9,), "uint32"),
             (S.PHILOX, (key, low, high), (5,), "uint64"), (S.PHILOX, (key, low), (2, 3), "uint8"),
             (S.PHILOX, (key, (1 << 64) - 2, high), (3, 3), "uint32"),
             (S.PHILOX, (key, (1 << 64) - 2), (3, 3), "uint32"),
             (S.THREE_FRY, (key, low), (9,), "uint32"), (S.THREE_FRY, (key, low), (3, 4), "uint16"),
             (S.THREE_FRY, (key, low), (3, 5), "uint32"), (S.THREE_FRY, (key, (1 << 64) - 2), (5,), "uint64"),
             (S.DEFAULT, (key, low, high), (6,), "uint32")]
    vectors = []
    for algorithm, state, shape, dtype in calls:
        state_array = np.array(state, dtype=np.uint64)
        new, output = S.rng_bit_generator(algorithm, state_array, shape, dtype)
        call = S.validate(algorithm, state_array, shape, dtype)
        bits = output.reshape(-1).view(call.unsigned)
        name = f"{algorithm.lower().replace('_', '')}-u64x{len(state)}-{dtype}-{'x'.join(map(str, shape))}"
        if state[1] == (1 << 64) - 2:
            name += "-wrap64"
        vectors.append({"id": name, "description": f"{call.text()}", "source": S.SOURCE, "algorithm": algorithm,
                        "state": [f"0x{w:016x}" for w in state], "shape": list(shape), "dtype": dtype,
                        "expected": [f"0x{int(w):x}" for w in bits],
                        "expected_state": [f"0x{int(w):016x}" for w in new]})
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "description": "StableHLO rng_bit_generator calls with XLA's answers (rngcheck.stablehlo)",
            "vectors": vectors}


def render(document: dict) -> str:
    return json.dumps(document, indent=1) + "\n"


def documents() -> dict[str, str]:
    return {KAT_FILE: render(kat_document()), OPERATOR_FILE: render(operator_document()),
            STABLEHLO_FILE: render(stablehlo_document())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rngcheck.vectors.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    parser.add_argument("--out", type=Path, help="directory to write to (default: the package's own)")
    args = parser.parse_args(argv)
    stale = []
    for name, text in documents().items():
        target = (args.out / name) if args.out else data_path(name)
        if args.check:
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target}")
    if stale:
        print(f"out of date: {', '.join(stale)} (run python -m rngcheck.vectors.generate)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
