"""rngcheck.numbers.jax_keys against JAX itself (issue 43, the property axis's rule 10): a seed's key data with
and without 64-bit mode, a key's words in the partitionable layout and in the layout before JAX 0.5 (odd counts
padded with a 0 counter), split in the old layout, and the float32 uniforms of rngcheck.numbers.jax on those
words, bit for bit. JAX runs in a child process (its 64-bit mode is process-wide). Locally a missing jax skips;
with CI=true it fails."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from helpers import require
from rngcheck.numbers import jax as jax_numbers
from rngcheck.numbers import jax_keys

KEYS = ([42, 0], [0, 42], [7, 123456789], [0xFFFFFFFF, 1])
COUNTS = (1, 2, 7, 1000)
SEEDS = (0, 42, (1 << 40) + 5)

_CHILD = """
import json, sys
import jax, jax.numpy as jnp, numpy as np
keys, counts, seeds = json.loads(sys.argv[1])
out = {"bits": {}, "original": {}, "uniform": {}, "split": {}, "seed": {}, "seed64": {}}
for k in keys:
    key = jnp.array(k, dtype=jnp.uint32)
    for n in counts:
        name = f"{k[0]},{k[1]},{n}"
        out["bits"][name] = np.asarray(jax.random.bits(key, (n,), jnp.uint32)).tolist()
        out["uniform"][name] = np.asarray(jax.random.uniform(key, (n,), jnp.float32)).view(np.uint32).tolist()
        with jax.threefry_partitionable(False):
            out["original"][name] = np.asarray(jax.random.bits(key, (n,), jnp.uint32)).tolist()
    with jax.threefry_partitionable(False):
        out["split"][f"{k[0]},{k[1]}"] = np.asarray(jax.random.split(key)).tolist()
for s in seeds:
    out["seed"][str(s)] = np.asarray(jax.random.key_data(jax.random.key(s))).tolist()
jax.config.update("jax_enable_x64", True)
for s in seeds:
    out["seed64"][str(s)] = np.asarray(jax.random.key_data(jax.random.key(s))).tolist()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def measured():
    require("jax", load=False)
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([KEYS, COUNTS, SEEDS])], capture_output=True,
                          text=True, timeout=300, env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("key", KEYS, ids=[f"{k[0]}-{k[1]}" for k in KEYS])
def test_a_key_s_words_in_both_layouts_and_its_uniforms(measured, key):
    for n in COUNTS:
        name = f"{key[0]},{key[1]},{n}"
        words = jax_keys.words(key, n)
        assert words.tolist() == measured["bits"][name], name
        assert jax_keys.words(key, n, "original").tolist() == measured["original"][name], name
        uniform = jax_numbers.uniform_from_bits("float32", words)
        assert uniform.view(np.uint32).tolist() == measured["uniform"][name], name
    assert [list(half) for half in jax_keys.split(key)] == measured["split"][f"{key[0]},{key[1]}"]


def test_a_seed_s_key_data_with_and_without_64_bit_mode(measured):
    for seed in SEEDS:
        assert list(jax_keys.key_from_seed(seed)) == measured["seed"][str(seed)], seed
        assert list(jax_keys.key_from_seed(seed, x64=True)) == measured["seed64"][str(seed)], seed
    assert jax_keys.key_from_seed(42) == (0, 42)


def test_a_layout_that_is_not_jax_s_is_refused():
    with pytest.raises(ValueError, match="not 'sharded'"):
        jax_keys.words((0, 1), 4, "sharded")
