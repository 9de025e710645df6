"""The fake DirectML/D3D12 layer against real DirectML: the same calls, the same results.

tests/directml_fake.py stands in for DirectML in tests/test_directml_fake.py. Here
the backend runs the same script (SCRIPT: device set-up, a few executions, descriptions
DirectML must refuse, close) over the fake and over real DirectML (Microsoft's Linux build
on vkd3d and lavapipe, both pinned builds), recording every COM method and export it calls
(Com.call / Com.export) and every result, and the two records are compared.

The real side runs in a child process, one per build (this file run as a script prints its
record as JSON). Loading both libdirectml.so builds into one process does run, but is not a
faithful run of the second: both are loaded RTLD_GLOBAL (DirectML finds libd3d12.so that way),
both export ~2050 symbols (libc++ internals, zstd) and neither is linked -Bsymbolic, so
LD_DEBUG=bindings shows ~1300 of the second build's symbol bindings resolved into the first.

Differences between fake and real found by trying, each asserted explicitly below:
  * the fake's default platform is Windows: set-up goes through DXGI first (a prefix);
  * the fake's default binding properties ask for a temporary and a persistent resource, so
    the backend creates and binds two more buffers; real DirectML (both builds, this device)
    asks for none;
  * a fence wait calls SetEventOnCompletion only when the fence has not completed yet:
    always on the (asynchronous) fake, depending on timing on real DirectML;
  * real DirectML refuses aliasing outputs (strides mapping two elements to one word) with
    E_INVALIDARG at CreateOperator: an undocumented rule this test found; the fake now
    refuses them too.
"""

from __future__ import annotations

import collections
import contextlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from directml_fake import FakeDirectML  # tests/directml_fake.py
from helpers import unavailable
from rngcheck import Rejected, counter, layout, reference
from rngcheck.backends.directml.backend import DirectMLBackend
from rngcheck.backends.directml.bridge import chain
from rngcheck.backends.directml.com import Com, InvalidArgument
from rngcheck.description import FEATURE_LEVEL_3_0, FEATURE_LEVEL_4_0
from rngcheck.errors import BackendUnavailable

REPO = Path(__file__).resolve().parent.parent
STATE = counter.make_state(0x0123456789ABCDEF_FEDCBA9876543210, (0xDEADBEEF, 0x0BADF00D))
WRAP = counter.make_state((1 << 128) - 2, (7, 9))      # the counter wraps around 2^128 mid-tensor
GUARD = 7                                                # words past the extent, never to be written

# What the backend runs, in this order, on one backend. Executions DirectML must accept:
EXECUTIONS = {
    "packed": dict(sizes=(3, 5)),
    "padded-strided": dict(sizes=(3, 5), strides=(8, 1), state=WRAP),
    "permuted-padded": dict(sizes=(4, 3, 2), strides=(1, 5, 16)),
    "output-state-omitted": dict(sizes=(7,), output_state=False),
    "feature-level-3": dict(sizes=(1, 2, 3, 4), state_shape=(1, 1, 1, 6), feature_level=FEATURE_LEVEL_3_0),
}
# ... and descriptions it must refuse (rngcheck.description.RULES; the conformance suite's validation cases).
REJECTIONS = {
    "stride-count": dict(sizes=(3, 5), strides=(1,)),              # refused by the backend itself
    "state-mismatch": dict(sizes=(2, 4), output_state=(1, 6)),     # OutputStateTensor sizes != input's
    "state-sizes-2x6": dict(sizes=(2, 4), state_shape=(2, 6)),
    "size-zero": dict(sizes=(2, 0, 4)),
    "rank-9": dict(sizes=(1, 1, 1, 1, 1, 1, 1, 2, 4)),
    "buffer-too-small": dict(sizes=(2, 3), strides=(5, 1), buffer=7),   # DMLCalcBufferTensorSize: 8 words
    "output-float32": dict(sizes=(2, 4), output_dtype="float32"),
    "alias-broadcast": dict(sizes=(1, 1, 3, 4), strides=(0, 0, 0, 1)),
    "alias-overlap": dict(sizes=(1, 1, 3, 4), strides=(12, 12, 2, 1)),
}
SCRIPT = {**EXECUTIONS, **REJECTIONS}
ALIASING = {"alias-broadcast", "alias-overlap"}

BUILDS = [pytest.param(build, id=build.short) for build in chain.DIRECTML_BUILDS]
CREATE_OPERATOR = [["IDMLDevice", "CreateOperator"]]
WAIT_EVENT = ["ID3D12Fence", "SetEventOnCompletion"]


# -- recording and the script (run identically on both sides) ----------------------------------

@contextlib.contextmanager
def recording():
    """Com.call and Com.export wrapped to append [interface, method] / [library, symbol].

    Patched on the class for the duration: the backend's ``com`` object is made inside
    DirectMLBackend.__init__, which also makes the set-up calls. GetBindingProperties
    results are kept too, in ``properties``.
    """
    record = {"calls": [], "properties": []}
    call, export = Com.call, Com.export

    def recorded_call(self, this, interface, method, *args):
        record["calls"].append([interface, method])
        result = call(self, this, interface, method, *args)
        if method == "GetBindingProperties":
            record["properties"].append([interface, result.RequiredDescriptorCount,
                                         result.TemporaryResourceSize, result.PersistentResourceSize])
        return result

    def recorded_export(self, library, symbol, *args):
        record["calls"].append([library, symbol])
        return export(self, library, symbol, *args)

    Com.call, Com.export = recorded_call, recorded_export
    try:
        yield record
    finally:
        Com.call, Com.export = call, export


def prefilled(spec) -> np.ndarray:
    """The caller's buffer: the extent plus GUARD words (or ``buffer`` words), a distinct pattern."""
    length = spec.get("buffer")
    if length is None:
        length = layout.required_elements(spec["sizes"], spec.get("strides")) + GUARD
        if 0 in spec["sizes"]:
            length = 8 + GUARD
    return ((0xA5A5A5A5 + np.arange(length, dtype=np.uint64) * 0x01000193) & 0xFFFFFFFF).astype(np.uint32)


def input_state(spec) -> np.ndarray:
    return np.resize(spec.get("state", STATE), spec.get("state_shape", (6,))).astype(np.uint32)


def run_one(backend, spec) -> dict:
    """One random_generator call: its outcome, the whole buffer afterwards, the state returned."""
    state = input_state(spec)
    buffer = prefilled(spec)
    view = buffer.view(spec.get("output_dtype", "uint32"))
    result = {"outcome": "ok"}
    try:
        returned = backend.random_generator(state, spec["sizes"], spec.get("strides"), view,
                                            output_state=spec.get("output_state", True),
                                            feature_level=spec.get("feature_level", FEATURE_LEVEL_4_0))
        result["state"] = None if returned is None else [int(w) for w in returned]
    except Rejected as error:
        result.update(outcome="rejected", error=type(error).__name__, rule=error.rule, message=str(error))
    result["buffer"] = [int(w) for w in buffer]
    result["input state after"] = [int(w) for w in state.reshape(-1)]
    return result


def run_script(make_backend) -> dict:
    """Set-up, every SCRIPT entry, close: the calls of each phase and each execution's results."""
    out = {}
    with recording() as record:
        backend = make_backend()
        out["set-up"] = list(record["calls"])
        out["feature level"] = list(backend.feature_level)
        out["DirectML version"] = backend.exports.directml_version
        out["platform"] = backend.exports.platform
        out["executions"] = {}
        for name, spec in SCRIPT.items():
            record["calls"].clear()
            record["properties"].clear()
            result = run_one(backend, spec)
            result["calls"] = list(record["calls"])
            result["properties"] = list(record["properties"])
            out["executions"][name] = result
        record["calls"].clear()
        backend.close()
        out["close"] = list(record["calls"])
    return out


def main(lib: str) -> None:
    """The real side (this file as a script): the record of real DirectML ``lib``, as JSON on stdout."""
    try:
        record = run_script(lambda: DirectMLBackend(lib=lib))
    except BackendUnavailable as error:
        record = {"unavailable": str(error)}
    print(json.dumps(record))


# -- both sides -----------------------------------------------------------------------------------

_REAL: dict[str, dict] = {}


def real(build) -> dict:
    """Real DirectML's record for ``build``, from a child process (once per build)."""
    layout_ = chain.Layout.default()
    missing = [p for p in (layout_.bridge / "libd3d12.so", layout_.directml(build)) if not p.is_file()]
    if missing:
        unavailable(f"real DirectML {build.short} is not set up ({missing[0]} is missing; "
                    f"python -m rngcheck.backends.directml.bridge.build)")
    if build.short not in _REAL:
        done = subprocess.run([sys.executable, __file__, build.short], capture_output=True, text=True,
                              cwd=REPO, timeout=600, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr[-3000:]
        _REAL[build.short] = json.loads(done.stdout.strip().splitlines()[-1])
    record = _REAL[build.short]
    if "unavailable" in record:
        unavailable(f"real DirectML {build.short} is unavailable: {record['unavailable']}")
    return record


def fake_record(record_of_real=None, **options) -> tuple[dict, FakeDirectML]:
    """The fake's record: configured like the real device (platform, feature level, binding
    properties) when ``record_of_real`` is given, else with the fake's defaults."""
    if record_of_real is not None:
        initializer, compiled = real_properties(record_of_real)
        options = dict(platform="vkd3d", feature_level=tuple(record_of_real["feature level"]),
                       initializer_properties=initializer, operator_properties=compiled, **options)
    fake = FakeDirectML(abi="sysv", **options)
    record = run_script(lambda: DirectMLBackend(exports=fake, abi="sysv"))
    assert fake.violations == [], fake.violations
    assert fake.live() == [], "every COM object is released"
    return record, fake


def real_properties(record) -> tuple[tuple, tuple]:
    """(initializer, compiled operator) binding properties, the same for every execution."""
    seen = {tuple(map(tuple, r["properties"])) for r in record["executions"].values() if r["outcome"] == "ok"}
    assert len(seen) == 1, f"binding properties differ between descriptions: {seen}"
    (initializer, compiled), = seen
    assert initializer[0] == "IDMLOperatorInitializer" and compiled[0] == "IDMLCompiledOperator"
    return tuple(initializer[1:]), tuple(compiled[1:])


def without_wait_events(calls):
    """The calls without ID3D12Fence::SetEventOnCompletion, checking each one removed sits where
    dispatch puts it: between a fence's two GetCompletedValue calls after a Signal."""
    kept = []
    for index, item in enumerate(calls):
        if item == WAIT_EVENT:
            assert calls[index - 2:index] == [["ID3D12CommandQueue", "Signal"], ["ID3D12Fence", "GetCompletedValue"]]
            assert calls[index + 1] == ["ID3D12Fence", "GetCompletedValue"]
            continue
        kept.append(item)
    return kept


def is_subsequence(short, long) -> bool:
    remaining = iter(long)
    return all(any(item == other for other in remaining) for item in short)


@pytest.fixture(scope="module")
def fakes():
    """name -> lazily made fake records (the default fake, and one per real build)."""
    cache = {}

    def get(key, record_of_real=None):
        if key not in cache:
            cache[key] = fake_record(record_of_real)[0]
        return cache[key]
    return get


# -- the tests --------------------------------------------------------------------------------------

@pytest.mark.parametrize("build", BUILDS)
def test_set_up_and_close_calls(build, fakes):
    actual = real(build)
    assert actual["platform"] == "vkd3d" and actual["DirectML version"] == build.version
    major, minor = actual["feature level"]
    assert f"{int(major)}.{int(minor)}" == build.feature_level
    like_real = fakes(build.short, actual)
    assert like_real["feature level"] == actual["feature level"]
    assert like_real["set-up"] == actual["set-up"]
    assert actual["set-up"][0] == ["d3d12", "D3D12CreateDevice"]
    assert actual["set-up"].count(["IDMLDevice", "CheckFeatureSupport"]) == 1, \
        "this build answers a query naming feature levels newer than its own in one go"
    assert like_real["close"] == actual["close"]
    # The fake's default platform is Windows: DXGI picks the adapter first; the rest is the same.
    default = fakes("default")
    dxgi = [["dxgi", "CreateDXGIFactory1"], ["IDXGIFactory1", "EnumAdapters1"], ["IDXGIAdapter1", "GetDesc1"],
            ["IDXGIAdapter", "CheckInterfaceSupport"]]
    assert default["set-up"] == dxgi + actual["set-up"]
    assert default["close"] == actual["close"] + [["IUnknown", "Release"]] * 2   # the adapter, the factory


@pytest.mark.parametrize("name", list(EXECUTIONS))
@pytest.mark.parametrize("build", BUILDS)
def test_execution_calls(build, name, fakes):
    actual = real(build)["executions"][name]
    assert actual["outcome"] == "ok", actual
    like_real = fakes(build.short, real(build))["executions"][name]
    # The wait's SetEventOnCompletion comes and goes with timing on real DirectML; the
    # asynchronous fake always needs it (one per wait: the initializer's and the operator's).
    assert like_real["calls"].count(WAIT_EVENT) == 2
    assert actual["calls"].count(WAIT_EVENT) <= 2
    assert without_wait_events(like_real["calls"]) == without_wait_events(actual["calls"])
    # With its default binding properties (a temporary and a persistent resource, which real
    # DirectML does not ask for here) the fake makes the backend create two more buffers, bind
    # the persistent one as the initializer's output and both to the operator, and release them.
    default = without_wait_events(fakes("default")["executions"][name]["calls"])
    expected = without_wait_events(actual["calls"])
    assert is_subsequence(expected, default)
    extra = collections.Counter(map(tuple, default)) - collections.Counter(map(tuple, expected))
    assert extra == collections.Counter({
        ("ID3D12Device", "CreateCommittedResource"): 2, ("IUnknown", "Release"): 2,
        ("IDMLBindingTable", "BindOutputs"): 1, ("IDMLBindingTable", "BindTemporaryResource"): 1,
        ("IDMLBindingTable", "BindPersistentResource"): 1})


@pytest.mark.parametrize("name", list(EXECUTIONS))
@pytest.mark.parametrize("build", BUILDS)
def test_execution_results(build, name, fakes):
    spec = EXECUTIONS[name]
    actual = real(build)["executions"][name]
    records = {"real": actual, "fake like real": fakes(build.short, real(build))["executions"][name],
               "default fake": fakes("default")["executions"][name]}
    fill = prefilled(spec)
    want = fill.copy()
    want_state = reference.random_generator(input_state(spec), spec["sizes"], spec.get("strides"), want,
                                            output_state=spec.get("output_state", True),
                                            feature_level=spec.get("feature_level", FEATURE_LEVEL_4_0))
    untouched = ~layout.covered_mask(spec["sizes"], spec.get("strides"), fill.size)
    assert untouched[-GUARD:].all() and (untouched.sum() > GUARD) == ("strides" in spec)
    for side, record in records.items():
        assert record["outcome"] == "ok", (side, record)
        got = np.array(record["buffer"], dtype=np.uint32)
        assert np.array_equal(got, want), f"{side}: output words differ from rngcheck.reference"
        assert np.array_equal(got[untouched], fill[untouched]), f"{side}: padding or guard words written"
        if want_state is None:
            assert record["state"] is None, side
        else:
            assert record["state"] == [int(w) for w in want_state], f"{side}: returned state"
        assert record["input state after"] == [int(w) for w in input_state(spec).reshape(-1)], side
    assert records["real"]["buffer"] == records["fake like real"]["buffer"] == records["default fake"]["buffer"]
    assert records["real"]["state"] == records["fake like real"]["state"]


@pytest.mark.parametrize("build", BUILDS)
def test_binding_properties(build, fakes):
    """What real DirectML asks for (both builds, on vkd3d / lavapipe) and what the fake reports."""
    actual = real(build)
    initializer, compiled = real_properties(actual)
    # The compiled operator's descriptors: one per tensor (input state, output, output state) —
    # also when the output state is omitted. The fake reports the same count.
    assert compiled[0] == 3
    default_fake = FakeDirectML()
    assert default_fake.operator_properties[0] == compiled[0]
    # Known differences: the default fake asks for temporary (1024 bytes) and persistent (256)
    # resources and one initializer descriptor, so the fake tests exercise those bindings; real
    # DirectML asks for none of them for this operator.
    assert (initializer, compiled) == ((0, 0, 0), (3, 0, 0))
    assert default_fake.initializer_properties == (1, 0, 0)
    assert default_fake.operator_properties == (3, 1024, 256)
    # The heap the backend makes is max(initializer, operator, 1) descriptors: 3 either way.
    assert max(initializer[0], compiled[0], 1) == max(default_fake.initializer_properties[0],
                                                      default_fake.operator_properties[0], 1)
    recorded = fakes("default")["executions"]["packed"]["properties"]
    assert recorded == [["IDMLOperatorInitializer", 1, 0, 0], ["IDMLCompiledOperator", 3, 1024, 256]]


@pytest.mark.parametrize("name", list(REJECTIONS))
@pytest.mark.parametrize("build", BUILDS)
def test_rejections(build, name, fakes):
    spec = REJECTIONS[name]
    actual = real(build)["executions"][name]
    fill = [int(w) for w in prefilled(spec)]
    assert actual["outcome"] == "rejected", f"real DirectML {build.short} accepted {name}"
    assert actual["buffer"] == fill
    if name == "stride-count":
        # Not expressible in a DML_BUFFER_TENSOR_DESC: the backend refuses it before any call.
        assert actual["error"] == "Rejected" and actual["rule"] == "stride-count" and actual["calls"] == []
    else:
        assert actual["error"] == InvalidArgument.__name__ and actual["calls"] == CREATE_OPERATOR
        assert actual["message"] == "IDMLDevice::CreateOperator failed: E_INVALIDARG (0x80070057)"
    for side, record in (("fake like real", fakes(build.short, real(build))["executions"][name]),
                         ("default fake", fakes("default")["executions"][name])):
        assert record["outcome"] == "rejected", f"{side} accepted {name}, which real DirectML refuses"
        for key in ("error", "rule", "message", "calls", "buffer", "input state after"):
            assert record[key] == actual[key], (side, key)


if __name__ == "__main__":
    main(sys.argv[1])
