"""The conventions other than TensorFlow's (rngcheck.numbers: jax, pytorch, curand, mkl,
onnxruntime-dml): each rule on hand-made words, the range properties, and agreement with the
real libraries where they run here (JAX, cuRAND's host generator, MKL's VSL, PyTorch's CPU
integer transformations driven with known mt19937 words). A missing library skips locally and
fails in CI (helpers.require / unavailable).
"""

from __future__ import annotations

import ctypes
import json
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from helpers import require, unavailable
from rngcheck import counter, reference
from rngcheck.numbers import (
    BITS,
    INTEGERS,
    NORMAL,
    UNIFORM,
    NumbersError,
    Request,
    bound,
    convention_of,
    draw,
    floats,
    tolerance,
)
from rngcheck.numbers import curand as cu
from rngcheck.numbers import jax as jx
from rngcheck.numbers import mkl as mk
from rngcheck.numbers import onnxruntime as ort
from rngcheck.numbers import pytorch as pt

EDGE_WORDS = np.array([0, 1, 0x7FFFFF, 0x800000, 0x7FFFFFFF, 0x80000000, 0xFFFFFF7F, 0xFFFFFF80,
                       0xFFFFFFFF], dtype=np.uint32)
STATE = counter.make_state(0x0123456789ABCDEF | 42 << 64, 0xFEDCBA9876543210)


def within(dtype, expected, actual, bound_):
    comparison = tolerance.compare(dtype, np.asarray(expected), np.asarray(actual), bound_)
    assert comparison.within, (comparison.over, comparison.worst, comparison.histogram)
    return comparison


# ---------------------------------------------------------------------------------- registry
@pytest.mark.parametrize("name", ["jax", "pytorch", "curand", "mkl", "onnxruntime-dml"])
def test_registered_with_sources_and_bounds(name):
    convention = convention_of(name)
    assert convention.name == name and convention.title
    for kind, dtypes in convention.kinds.items():
        assert convention.sources[kind]
        for dtype in dtypes:
            low_high = dict(low=-7, high=1000) if kind == INTEGERS else {}
            request = Request(name, kind, dtype, 9, **low_high)
            values = draw(request, STATE)
            assert len(values) == 9
            assert bound(request).why


def test_the_registry_loads_the_convention_modules_itself_in_its_own_order():
    """rngcheck.registry rule 2: nothing depends on which convention module was imported first
    (importing one registers nothing); the first read imports them all, and lists them by name."""
    program = textwrap.dedent("""
        import sys
        import rngcheck.numbers.pytorch  # a convention module imported first registers nothing
        from rngcheck import numbers
        assert "rngcheck.numbers.curand" in sys.modules and "rngcheck.numbers.onnxruntime" not in sys.modules
        print(",".join(numbers.CONVENTIONS))
        assert "rngcheck.numbers.onnxruntime" in sys.modules
        assert numbers.convention_of("pytorch") is rngcheck.numbers.pytorch.PYTORCH
        try:
            numbers.convention_of("tensorflw")
        except numbers.NumbersError as error:
            print(error)
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    names, error = done.stdout.splitlines()
    assert names == "curand,jax,mkl,onnxruntime-cpu,onnxruntime-dml,pytorch,tensorflow"
    assert error == f"unknown convention 'tensorflw' (known: {names.replace(',', ', ')})"


# ---------------------------------------------------------------------------------- cuRAND
def test_curand_uniform_float_on_edge_words():
    u = cu.uniform_float(EDGE_WORDS)
    assert u[0] == np.float32(2.0 ** -33)                 # never 0
    assert u[1] == np.float32(2.0 ** -32 + 2.0 ** -33)
    assert u[6] == np.float32(1.0) - np.float32(2.0 ** -24)
    assert u[7] == 1.0 and u[8] == 1.0                     # (0, 1]: the top words round to 1
    assert (u > 0).all() and (u <= 1).all()


def test_curand_uniform_double_on_edge_words():
    assert cu.uniform_double([0], [0])[0] == 2.0 ** -54
    top = cu.uniform_double([0xFFFFFFFF], [0xFFFFFFFF])[0]
    # z = 0xffffffff ^ (0xffffffff << 21): bits 21-31 cancel
    z = 0xFFFFFFFF ^ (0xFFFFFFFF << 21)
    assert top == z * 2.0 ** -53 + 2.0 ** -54 and 0 < top <= 1


def test_curand_normal_pairs_sine_first():
    x, y = np.array([0x40000000], np.uint32), np.array([0x40000000], np.uint32)   # v near pi/2
    values = cu.normal_from_words("float32", np.array([x[0], y[0]], np.uint32))
    s = math.sqrt(-2 * math.log(0.25 + 2.0 ** -33))
    assert abs(values[0] - s) < 1e-5 and abs(values[1]) < 1e-5      # sin(pi/2) first, cos second


def test_curand_normal_of_the_extreme_words_is_finite():
    values = cu.normal_from_words("float32", np.array([0, 0, 0xFFFFFFFF, 0], np.uint32))
    assert np.isfinite(values).all()
    assert abs(values[1] - math.sqrt(-2 * math.log(2.0 ** -33))) < 1e-5      # u = 2^-33, v ~ 0: cos ~ 1
    assert values[2] == 0 and values[3] == 0                                  # u = 1: log 1 = 0
    doubles = cu.normal_from_words("float64", np.zeros(4, np.uint32))
    assert np.isfinite(doubles).all() and doubles[1] > 8                      # u = 2^-54: r = 8.65


@pytest.mark.parametrize("name", ["curand", "onnxruntime-dml"])
def test_no_uniform_range_where_the_library_has_none(name):
    ranged = Request(name, UNIFORM, "float32", 4, low=0.0, high=2.0)
    assert not convention_of(name).supports(ranged)
    assert convention_of(name).supports(Request(name, UNIFORM, "float32", 4))
    with pytest.raises(NumbersError):
        draw(ranged, STATE)


@pytest.fixture(scope="module")
def curand_lib():
    require("nvidia.curand", load=False)
    from rngcheck.backends import curand_backend as cb
    from rngcheck.errors import BackendUnavailable
    try:
        lib = cb.Library(cb.find_library())
    except BackendUnavailable as error:
        unavailable(f"libcurand unavailable: {error}")
    raw = ctypes.CDLL(lib.path)
    p, size = ctypes.c_void_p, ctypes.c_size_t
    for name, types in (("curandGenerateUniform", [p, p, size]), ("curandGenerateUniformDouble", [p, p, size]),
                        ("curandGenerateNormal", [p, p, size, ctypes.c_float, ctypes.c_float]),
                        ("curandGenerateNormalDouble", [p, p, size, ctypes.c_double, ctypes.c_double])):
        function = getattr(raw, name)
        function.argtypes, function.restype = types, ctypes.c_int

    def generate(kind, n, seed, offset=0):
        generator = cb.Generator(lib)
        try:
            generator.start(seed, offset)
            if kind == "words":
                return generator.generate(np.empty(n, np.uint32))
            dtype = np.float64 if kind.endswith("double") else np.float32
            out = np.empty(n, dtype)
            args = (0.0, 1.0) if kind.startswith("normal") else ()
            name = {"uniform": "curandGenerateUniform", "uniform_double": "curandGenerateUniformDouble",
                    "normal": "curandGenerateNormal", "normal_double": "curandGenerateNormalDouble"}[kind]
            lib.check(getattr(raw, name)(generator.handle, out.ctypes.data, n, *args), name)
            return out
        finally:
            generator.close()
    return generate


SEED = 0x1234_5678_9ABC


def subsequence_words(seed, subsequence, count):
    """Words 0..count-1 of cuRAND subsequence ``subsequence``: counter (block, subsequence), key = seed."""
    return reference.words(counter.make_state(subsequence << 64, seed), 0, count)


def test_curand_uniform_float_bit_exact(curand_lib):
    n = 1 << 18
    words = curand_lib("words", n, SEED)
    assert np.array_equal(cu.uniform_float(words), curand_lib("uniform", n, SEED))


def test_curand_uniform_reaches_one_on_a_top_word(curand_lib):
    # word 17112265 of subsequence 0 for SEED is 0xffffff84 (found offline with rngcheck.reference):
    # block 4278066, lane 1; cuRAND's host layout puts block x of subsequence 0 at word 4 * x * 65536
    block, lane = divmod(17112265, 4)
    words = curand_lib("words", 4, SEED, 4 * block * 65536)
    assert words[lane] == 0xFFFFFF84 and np.array_equal(words, subsequence_words(SEED, 0, 4 * block + 4)[-4:])
    uniform = curand_lib("uniform", 4, SEED, 4 * block * 65536)
    assert uniform[lane] == 1.0 and np.array_equal(uniform, cu.uniform_float(words))


def test_curand_normal_float_within_bound(curand_lib):
    n = 1 << 18
    words = curand_lib("words", n, SEED)
    got = curand_lib("normal", n, SEED)
    expected = cu.normal_from_words("float32", words)
    within("float32", expected, got, bound(Request("curand", NORMAL, "float32", n)))
    # the pairing and order are the rule's: swapping sine and cosine fails
    swapped = expected.reshape(-1, 2)[:, ::-1].reshape(-1)
    assert not tolerance.compare("float32", swapped, got, bound(Request("curand", NORMAL, "float32", n))).within


def test_curand_doubles_bit_exact_and_within_bound(curand_lib):
    threads = 4096                                   # double element 4t + j: blocks 0-1 of subsequence t
    words = np.stack([subsequence_words(SEED, t, 8) for t in range(threads)])
    stream_words = words.reshape(-1)                 # per thread, its 8 words in order
    per_thread_uniform = np.concatenate([cu.uniform_double(w[0::2], w[1::2]) for w in words])
    assert np.array_equal(per_thread_uniform, curand_lib("uniform_double", 4 * threads, SEED))
    assert stream_words.size == 8 * threads
    expected = np.concatenate([cu.normal_from_words("float64", w) for w in words])
    within("float64", expected, curand_lib("normal_double", 4 * threads, SEED),
           bound(Request("curand", NORMAL, "float64", 4)))


# ---------------------------------------------------------------------------------- MKL
def test_mkl_uniform_on_edge_words():
    u = mk.uniform("float32", EDGE_WORDS)
    assert u[0] == 0.5 and u[5] == 0.0                   # 0x80000000 is int32 min: 0
    assert u[4] == 1.0                                    # the top 191 words give 1.0: STD reaches b
    assert mk.uniform("float32", [0x7FFFFF41])[0] == 1.0 and mk.uniform("float32", [0x7FFFFF40])[0] < 1.0
    d = mk.uniform("float64", EDGE_WORDS)
    assert d[4] == 1.0 - 2.0 ** -32 and d[5] == 0.0 and (d < 1).all() and (d >= 0).all()


def test_mkl_box_muller_on_the_zero_uniform():
    # 0x80000000 is int32 min: u1 = 0 and the radius is infinite; 0x40000000: u2 = 0.75, sin = -1
    words = np.array([0x80000000, 0x40000000], np.uint32)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert mk.box_muller("float64", words)[0] == -np.inf
        assert mk.box_muller("float32", words)[0] == -np.inf


def test_mkl_box_muller_variants():
    words = reference.words(STATE, 0, 64)
    one = mk.box_muller("float64", words)
    two = mk.box_muller2("float64", words)
    assert np.array_equal(one, two[0::2])                # BOXMULLER is BOXMULLER2's sine half
    # ICDF: word 0 is u = 0.5, the median; 0x80000000 (int32 min) is u = 0, minus infinity
    assert mk.icdf("float64", np.array([0, 0x80000000], np.uint32)).tolist() == [0.0, -np.inf]


MKL_SCRIPT = textwrap.dedent("""
    import ctypes, json, sys
    import numpy as np
    request = json.loads(sys.argv[1])
    lib = ctypes.CDLL(request["library"])
    p, i = ctypes.c_void_p, ctypes.c_int
    lib.vslNewStreamEx.argtypes = [ctypes.POINTER(p), i, i, ctypes.POINTER(ctypes.c_uint32)]
    lib.vslDeleteStream.argtypes = [ctypes.POINTER(p)]
    lib.viRngUniformBits32.argtypes = [i, p, i, p]
    for name, real in (("vsRngUniform", ctypes.c_float), ("vdRngUniform", ctypes.c_double),
                       ("vsRngGaussian", ctypes.c_float), ("vdRngGaussian", ctypes.c_double)):
        getattr(lib, name).argtypes = [i, p, i, p, real, real]
    out = {}
    for key, (function, method, n, a, b) in request["draws"].items():
        stream = p()
        seed = (ctypes.c_uint32 * 6)(*request["top_seed" if key.startswith("top") else "seed"])
        assert lib.vslNewStreamEx(ctypes.byref(stream), 16 << 20, 6, seed) == 0
        dtype = np.uint32 if function.startswith("vi") else np.float64 if function.startswith("vd") else np.float32
        values = np.empty(n, dtype)
        args = (method, stream, n, values.ctypes.data) + (() if function.startswith("vi") else (a, b))
        assert getattr(lib, function)(*args) == 0, function
        lib.vslDeleteStream(ctypes.byref(stream))
        np.save(request["folder"] + "/" + key + ".npy", values)
""")


@pytest.fixture(scope="module")
def mkl_draws(tmp_path_factory):
    """MKL's outputs on the operator's stream for STATE, drawn in a child process (MKL's runtime
    stays out of the test process, as tests/test_mkl_backend.py keeps it)."""
    require("mkl_random", load=False)
    from rngcheck.backends.mkl_backend import seed_words
    library = None
    for soname in ("libmkl_rt.so.3", "libmkl_rt.so.2", "libmkl_rt.so"):
        try:
            ctypes.CDLL(soname)
            library = soname
            break
        except OSError:
            continue
    if library is None:
        unavailable("libmkl_rt is not loadable")
    folder = tmp_path_factory.mktemp("mkl")
    n = 1 << 16
    top = counter.advance(STATE, 4111624)        # word 4111626 of STATE's stream is 0x7fffffed (found offline)
    draws = {"top_words": ("viRngUniformBits32", 0, 4, 0, 0), "top_su": ("vsRngUniform", 0, 4, 0.0, 1.0),
             "words": ("viRngUniformBits32", 0, 2 * n, 0, 0), "su": ("vsRngUniform", 0, n, 0.0, 1.0),
             "du": ("vdRngUniform", 0, n, 0.0, 1.0), "su_range": ("vsRngUniform", 0, n, -3.0, 5.0),
             "du_range": ("vdRngUniform", 0, n, -3.0, 5.0), "sg": ("vsRngGaussian", 0, n, 0.0, 1.0),
             "dg": ("vdRngGaussian", 0, n, 0.0, 1.0), "dg2": ("vdRngGaussian", 1, n, 0.0, 1.0),
             "sg2": ("vsRngGaussian", 1, n, 0.0, 1.0), "dicdf": ("vdRngGaussian", 2, n, 0.0, 1.0)}
    request = {"library": library, "seed": seed_words(STATE), "top_seed": seed_words(top), "folder": str(folder),
               "draws": draws}
    done = subprocess.run([sys.executable, "-c", MKL_SCRIPT, json.dumps(request)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return {key: np.load(folder / f"{key}.npy") for key in draws}


def test_mkl_words_are_the_stream(mkl_draws):
    assert np.array_equal(mkl_draws["words"], reference.words(STATE, 0, mkl_draws["words"].size))


def test_mkl_uniform_bit_exact(mkl_draws):
    n = mkl_draws["su"].size
    assert np.array_equal(draw(Request("mkl", UNIFORM, "float32", n), STATE), mkl_draws["su"])
    assert np.array_equal(draw(Request("mkl", UNIFORM, "float64", n), STATE), mkl_draws["du"])
    for dtype, key in (("float32", "su_range"), ("float64", "du_range")):
        request = Request("mkl", UNIFORM, dtype, n, low=-3.0, high=5.0)
        comparison = within(dtype, draw(request, STATE), mkl_draws[key], bound(request))
        assert comparison.worst == 0                      # bit-exact for this range, as documented


def test_mkl_uniform_reaches_one_on_a_top_word(mkl_draws):
    words = mkl_draws["top_words"]
    assert words[2] == 0x7FFFFFED
    assert mkl_draws["top_su"][2] == 1.0                  # the STD method's [0, 1) contains 1.0
    assert np.array_equal(mk.uniform("float32", words), mkl_draws["top_su"])


def test_mkl_gaussian_within_bound(mkl_draws):
    n = mkl_draws["sg"].size
    words = mkl_draws["words"]
    for dtype, key in (("float32", "sg"), ("float64", "dg")):
        request = Request("mkl", NORMAL, dtype, n)
        within(dtype, draw(request, STATE), mkl_draws[key], bound(request))
    for dtype, key in (("float32", "sg2"), ("float64", "dg2")):
        within(dtype, mk.box_muller2(dtype, words[:n]), mkl_draws[key], bound(Request("mkl", NORMAL, dtype, n)))
    # BOXMULLER is not BOXMULLER2: comparing the wrong method fails
    assert not tolerance.compare("float64", mk.box_muller2("float64", words[:n]), mkl_draws["dg"],
                                 bound(Request("mkl", NORMAL, "float64", n))).within


def test_mkl_icdf_absolute_error(mkl_draws):
    n = mkl_draws["dicdf"].size
    error = np.abs(mk.icdf("float64", mkl_draws["words"][:n]) - mkl_draws["dicdf"])
    assert error.max() < 1e-8                             # measured 8.2e-9
    assert error.max() > 0                                # not bit-exact: why ICDF is not the convention's normal


# ---------------------------------------------------------------------------------- JAX
def test_jax_uniform_on_edge_words():
    u = jx.uniform_from_bits("float32", EDGE_WORDS)
    assert u[0] == 0.0 and u[8] == np.float32(1.0) - np.float32(2.0 ** -23)
    assert u[1] == 0.0                               # the low 9 bits are not used: JAX takes the high 23
    assert u[2] == np.float32(0x3FFF * 2.0 ** -23)   # 0x7fffff >> 9
    assert u[3] == np.float32(2.0 ** -9)             # 0x800000 >> 9 = 2^14
    assert (u < 1).all()
    bits64 = jx.bits_from_words(64, np.array([0xFFFFFFFF, 0xFFFFFFFF], np.uint32))
    assert jx.uniform_from_bits("float64", bits64)[0] == 1.0 - 2.0 ** -52
    assert jx.uniform_from_bits("float16", np.array([0xFFFF], np.uint16))[0] == np.float16(1) - np.float16(2 ** -10)
    assert floats.bfloat16_to_float32(jx.uniform_from_bits("bfloat16", np.array([0xFF], np.uint8)))[0] == 1 - 2 ** -7


def test_jax_normal_on_the_extreme_bits():
    values = jx.normal_from_bits("float32", np.array([0, 0xFFFFFFFF, 0x80000000], np.uint32))
    assert np.isfinite(values).all()
    assert -5.5 < values[0] < -5.3                   # u = nextafter(-1, 0): the most negative
    assert 5.0 < values[1] < 5.3                     # u = 1 - 2^-22
    # 0x80000000: x = 0.5, u = 2 x + low = 2^-24 (low is -1 + 2^-24): JAX never gives an exact 0 there
    assert abs(values[2] - 2.0 ** -24 * math.sqrt(math.pi / 2)) < 1e-13


def test_jax_randint_edge_cases():
    higher = np.array([0, 0xFFFFFFFF, 5], np.uint32)
    lower = np.array([0, 0xFFFFFFFF, 7], np.uint32)
    values = jx.randint_from_bits("int32", higher, lower, -3, 7)     # span 10: m = (65536 % 10)^2 % 10 = 6
    assert values.tolist() == [-3, -3 + ((5 * 6 + 5) % 10), -3 + ((5 * 6 + 7) % 10)]
    # span 2^32 - 1: m = (2^16)^2 wraps to 0 in uint32, so only the lower bits count
    assert jx.randint_from_bits("uint32", [9], [123], 0, (1 << 32) - 1)[0] == 123


JAX_CHILD = """
import os, sys
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np
import jax, jax.numpy as jnp
out = {}
for dtype, width in (("float32", 32), ("float16", 16), ("bfloat16", 8)):
    key = jax.random.key(2026)
    n = 1 << 16
    out[f"uniform-bits-{dtype}"] = np.asarray(
        jax.random.bits(key, (n,), {8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32}[width]))
    got = np.asarray(jax.random.uniform(key, (n,), getattr(jnp, dtype)))
    ranged = np.asarray(jax.random.uniform(key, (n,), getattr(jnp, dtype), -2.0, 3.0))
    out[f"uniform-{dtype}"] = got.view(np.uint16) if dtype == "bfloat16" else got
    out[f"ranged-{dtype}"] = ranged.view(np.uint16) if dtype == "bfloat16" else ranged
for dtype, width in (("float32", 32), ("float16", 16), ("bfloat16", 16)):
    width = int(sys.argv[2 + ("float32", "float16", "bfloat16").index(dtype)])
    key = jax.random.key(7)
    n = 1 << 18
    out[f"normal-bits-{dtype}"] = np.asarray(
        jax.random.bits(key, (n,), {8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32}[width]))
    got = np.asarray(jax.random.normal(key, (n,), getattr(jnp, dtype)))
    out[f"normal-{dtype}"] = got.view(np.uint16) if dtype == "bfloat16" else got
n = 1 << 16
with jax.enable_x64(True):
    key = jax.random.key(11)
    out["f64-bits"] = np.asarray(jax.random.bits(key, (n,), jnp.uint64))
    out["f64-uniform"] = np.asarray(jax.random.uniform(key, (n,), jnp.float64))
    out["f64-normal"] = np.asarray(jax.random.normal(key, (n,), jnp.float64))
    out["f64-ranged"] = np.asarray(jax.random.uniform(key, (n,), jnp.float64, -2.0, 3.0))
    k1, k2 = jax.random.split(jax.random.key(12))
    out["i64-higher"] = np.asarray(jax.random.bits(k1, (4096,), jnp.uint64))
    out["i64-lower"] = np.asarray(jax.random.bits(k2, (4096,), jnp.uint64))
    for i, (lo, hi) in enumerate(((-5, 1 << 40), (-(1 << 63), (1 << 63) - 1), (0, 3))):
        out[f"i64-randint-{i}"] = np.asarray(jax.random.randint(jax.random.key(12), (4096,), lo, hi, jnp.int64))
key = jax.random.key(3)
k1, k2 = jax.random.split(key)
out["i32-higher"] = np.asarray(jax.random.bits(k1, (4096,), jnp.uint32))
out["i32-lower"] = np.asarray(jax.random.bits(k2, (4096,), jnp.uint32))
for i, (lo, hi) in enumerate(I32_RANGES):
    out[f"i32-randint-{i}"] = np.asarray(jax.random.randint(key, (4096,), lo, hi, jnp.int32))
np.savez(sys.argv[1], **out)
"""
I32_RANGES = ((0, 10), (-1000, 123457), (-(1 << 31), (1 << 31) - 1), (5, 6), (0, 65536), (0, 65537))
F64_RANGES = ((-5, 1 << 40), (-(1 << 63), (1 << 63) - 1), (0, 3))


@pytest.fixture(scope="module")
def jax_draws(tmp_path_factory):
    """JAX's bits and numbers, drawn once in a child process: JAX starts threads, and this process
    forks later (the statistics' workers), which a multithreaded JAX must not be in."""
    require("jax", load=False)
    path = tmp_path_factory.mktemp("jax") / "draws.npz"
    script = JAX_CHILD.replace("I32_RANGES", repr(I32_RANGES))
    widths = [str(jx.WIDTHS[d][0]) for d in ("float32", "float16", "bfloat16")]
    done = subprocess.run([sys.executable, "-c", script, str(path), *widths], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    with np.load(path) as data:
        return {name: data[name] for name in data.files}


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_jax_uniform_bit_exact(jax_draws, dtype):
    bits = jax_draws[f"uniform-bits-{dtype}"]
    assert np.array_equal(jx.uniform_from_bits(dtype, bits), jax_draws[f"uniform-{dtype}"])
    within(dtype, jx.scaled(dtype, jx.uniform_from_bits(dtype, bits), -2.0, 3.0), jax_draws[f"ranged-{dtype}"],
           bound(Request("jax", UNIFORM, dtype, 1, low=-2.0, high=3.0)))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_jax_normal_within_bound(jax_draws, dtype):
    bits, got = jax_draws[f"normal-bits-{dtype}"], jax_draws[f"normal-{dtype}"]
    n = bits.size
    width = jx.WIDTHS[dtype][0]
    request = Request("jax", NORMAL, dtype, n)
    within(dtype, jx.normal_from_bits(dtype, bits), got, bound(request))
    # a wrong conversion (TensorFlow's low-bit mantissa) is far outside the bound
    shift = np.uint64(width // 4)                     # the low bits moved up: a different mantissa
    low_bits = jx.normal_from_bits(dtype, (bits.astype(np.uint64) << shift).astype(bits.dtype))
    assert tolerance.compare(dtype, low_bits, got, bound(request)).over > n // 2


def test_jax_float64_within_bound(jax_draws):
    bits = jax_draws["f64-bits"]
    n = bits.size
    assert np.array_equal(jx.uniform_from_bits("float64", bits), jax_draws["f64-uniform"])
    assert np.array_equal(jx.scaled("float64", jx.uniform_from_bits("float64", bits), -2.0, 3.0),
                          jax_draws["f64-ranged"])
    higher, lower = jax_draws["i64-higher"], jax_draws["i64-lower"]
    for i, (low, high) in enumerate(F64_RANGES):
        got = jax_draws[f"i64-randint-{i}"]
        assert np.array_equal(jx.randint_from_bits("int64", higher, lower, low, high), got), (low, high)
    within("float64", jx.normal_from_bits("float64", bits), jax_draws["f64-normal"],
           bound(Request("jax", NORMAL, "float64", n)))


def test_jax_randint_matches(jax_draws):
    higher, lower = jax_draws["i32-higher"], jax_draws["i32-lower"]
    for i, (low, high) in enumerate(I32_RANGES):
        got = jax_draws[f"i32-randint-{i}"]
        assert np.array_equal(jx.randint_from_bits("int32", higher, lower, low, high), got), (low, high)
        if high - low > 1 << 16:                     # the multiplier squares to 0: only ``lower`` counts
            assert np.array_equal(low + (lower.astype(np.int64) % (high - low)), got)


def test_jax_bits_are_the_words():
    words = reference.words(STATE, 0, 8)
    assert np.array_equal(draw(Request("jax", BITS, "uint32", 8), STATE), words)
    wide = draw(Request("jax", BITS, "uint64", 4), STATE)
    assert int(wide[0]) == int(words[0]) << 32 | int(words[1])


# ---------------------------------------------------------------------------------- PyTorch
def test_pytorch_uniform_reverses_the_top():
    assert pt.uniform("float32", np.array([0xFFFFFFFF, 0xFFFFFF80, 0], np.uint32)).tolist() == \
        [0.0, 0.0, np.float32(2.0 ** -33)]
    half = pt.uniform("float16", np.array([0xFFFFFFFF, 0xFFF00000], np.uint32))
    assert half[0] == 0 and half[1] == 0                 # r rounds to 1 in float16, then becomes 0
    values = draw(Request("pytorch", UNIFORM, "float32", 4096), STATE)
    assert (values >= 0).all() and (values < 1).all()
    ranged = pt.uniform("float32", np.array([0xFFFFFFFF], np.uint32), -2.0, 3.0)
    assert ranged[0] == -2.0


def test_pytorch_integer_rules_on_edge_words():
    words = np.array([0xFFFFFFFF, 1, 7, 0], np.uint32)
    assert pt.integers("int32", words, -5, 5).tolist() == [(0xFFFFFFFF % 10) - 5, -4, 2, -5]
    wide = pt.integers("int64", words, 0, 1 << 28)        # 2^28: 64 bits per element, word 2i high
    assert wide.tolist() == [((0xFFFFFFFF << 32) | 1) % (1 << 28), (7 << 32) % (1 << 28)]
    assert pt.words_for_integers(0, (1 << 28) - 1) == 1 and pt.words_for_integers(0, 1 << 28) == 2
    full = draw(Request("pytorch", BITS, "int64", 2), STATE)
    w = reference.words(STATE, 0, 4)
    assert int(full[0]) & ((1 << 64) - 1) == int(w[0]) << 32 | int(w[1])


def mt19937_words(seed, count):
    generator = np.random.MT19937()
    generator._legacy_seeding(seed)                      # init_genrand(seed), as torch.manual_seed
    return generator.random_raw(count).astype(np.uint32)


@pytest.mark.parametrize("low,high,dtype", [(0, 1000, "int32"), (-5, (1 << 28) - 6, "int64"),
                                            (-5, (1 << 28) - 5, "int64"), (-(1 << 40), 1 << 40, "int64"),
                                            (-(1 << 31), (1 << 31) - 1, "int32")])
def test_pytorch_integers_match_the_cpu_generator(low, high, dtype):
    torch = require("torch")
    seed, n = 12345, 512
    generator = torch.Generator().manual_seed(seed)
    got = torch.randint(low, high, (n,), generator=generator, dtype=getattr(torch, dtype)).numpy()
    words = mt19937_words(seed, 2 * n)[:n * pt.words_for_integers(low, high)]
    assert np.array_equal(pt.integers(dtype, words, low, high), got)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int16", "uint8", "bool", "float32", "float64"])
def test_pytorch_unbounded_random_matches_the_cpu_generator(dtype):
    torch = require("torch")
    generator = torch.Generator().manual_seed(5)
    got = torch.empty(256, dtype=getattr(torch, dtype)).random_(generator=generator).numpy()
    wide = pt.UNBOUNDED[dtype][1]
    expected = pt.unbounded(dtype, mt19937_words(5, 512)[:256 * (2 if wide else 1)])
    assert np.array_equal(expected, got.astype(np.uint64))


def test_pytorch_full_range_matches_the_cpu_generator():
    torch = require("torch")
    generator = torch.Generator().manual_seed(99)
    got = torch.empty(256, dtype=torch.int64).random_(-(1 << 63), None, generator=generator).numpy()
    assert np.array_equal(pt.uint64_pairs(mt19937_words(99, 512)).view(np.int64), got)


# ---------------------------------------------------------------------------------- ONNX Runtime DML
def test_onnxruntime_uniform_on_edge_words():
    u = ort.uniform(EDGE_WORDS)
    assert u[0] == 0.0 and u[3] == 0.0                    # 0x800000 has no low 23 bits
    assert u[2] == np.float32(1.0) - np.float32(2.0 ** -23) and u[8] == u[2]
    assert (u < 1).all()


def test_onnxruntime_normal_clip_and_order():
    values = draw(Request("onnxruntime-dml", NORMAL, "float32", 3), STATE)
    words = reference.words(STATE, 0, 4)
    sin, cos = ort.box_muller(words[0::2], words[1::2])
    assert values.tolist() == [sin[0], cos[0], sin[1]]     # odd count: the pair is made and cut
    clipped, _ = ort.box_muller(np.array([0], np.uint32), np.array([0x200000], np.uint32))
    assert np.isfinite(clipped[0]) and abs(clipped[0] - math.sqrt(-2 * math.log(np.float32(1e-7)))
                                           * math.sin(2 * math.pi * 0.25)) < 1e-4


def test_onnxruntime_differs_from_tensorflow_only_in_the_angle():
    from rngcheck.numbers import tensorflow as tf
    words = reference.words(STATE, 0, 1 << 16)
    v = tf.uint32_to_float(words[1::2])
    dml_angle = ort.TWO_PI_FLOAT * v                                   # float 2 pi, float product
    tf_angle = (2.0 * math.pi * v.astype(np.float64)).astype(np.float32)  # double product, rounded
    d = floats.ulp_distance(floats.FLOAT32, dml_angle, tf_angle)
    assert d.max() <= 1 and (d == 1).any()
    same = d == 0                                                      # equal angles: equal normals
    ours = interleave_pairs(*ort.box_muller(words[0::2], words[1::2])).reshape(-1, 2)[same]
    theirs = tf.normal_from_words("float32", words).reshape(-1, 2)[same]
    assert np.array_equal(ours, theirs)


def interleave_pairs(first, second):
    out = np.empty(first.size * 2, first.dtype)
    out[0::2], out[1::2] = first, second
    return out
