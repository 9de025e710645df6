"""The DirectML backend's whole call sequence, run against the fake DirectML/D3D12 layer.

tests/directml_fake.py stands where DirectML.dll, d3d12.dll and dxgi.dll stand
(entry points and COM vtables of ctypes callbacks), so everything the backend does except
reaching real DirectML runs here: the structures it builds, the pointers and slots it
calls, both ABIs' by-value structure returns, resource states, copies, bindings, fences.
No test here ever reaches real DirectML; see docs/directml.md.
"""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np
import pytest

from directml_fake import FakeDirectML  # tests/directml_fake.py
from rngcheck import NotApplicable, Rejected, counter, reference
from rngcheck.backends import load
from rngcheck.backends.directml import dispatch, loader
from rngcheck.backends.directml.backend import DirectMLBackend
from rngcheck.backends.directml.com import HResultError, InvalidArgument
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.description import FEATURE_LEVEL_3_0
from rngcheck.errors import BackendSpecError, BackendUnavailable
from rngcheck.results.document import BROKEN

STATE = counter.make_state(0x0123456789ABCDEF_FEDCBA9876543210, (0xDEADBEEF, 0x0BADF00D))

SET_UP = [
    ("export", "CreateDXGIFactory1"), ("IDXGIFactory4", "EnumAdapters1"), ("IDXGIAdapter1", "GetDesc1"),
    ("IDXGIAdapter1", "CheckInterfaceSupport"), ("export", "D3D12CreateDevice"),
    ("ID3D12Device", "CreateCommandQueue"), ("ID3D12Device", "CreateCommandAllocator"),
    ("ID3D12Device", "CreateCommandList"), ("ID3D12GraphicsCommandList", "Close"), ("ID3D12Device", "CreateFence"),
    ("export", "DMLCreateDevice1"), ("IDMLDevice", "CheckFeatureSupport"),
]
WAIT = [("ID3D12GraphicsCommandList", "Close"), ("ID3D12CommandQueue", "ExecuteCommandLists"),
        ("ID3D12CommandQueue", "Signal"), ("ID3D12Fence", "GetCompletedValue"),
        ("ID3D12Fence", "SetEventOnCompletion"), ("ID3D12Fence", "GetCompletedValue")]
BEGIN = [("ID3D12CommandAllocator", "Reset"), ("ID3D12GraphicsCommandList", "Reset"),
         ("ID3D12GraphicsCommandList", "SetDescriptorHeaps")]
EXECUTION = [
    ("IDMLDevice", "CreateOperator"), ("IDMLDevice", "CompileOperator"), ("IDMLDevice", "CreateOperatorInitializer"),
    ("IDMLOperatorInitializer", "GetBindingProperties"), ("IDMLCompiledOperator", "GetBindingProperties"),
    ("ID3D12Device", "CreateDescriptorHeap"), ("ID3D12DescriptorHeap", "GetCPUDescriptorHandleForHeapStart"),
    ("ID3D12DescriptorHeap", "GetGPUDescriptorHandleForHeapStart"), ("IDMLDevice", "CreateBindingTable"),
    ("IDMLDevice", "CreateCommandRecorder"),
    ("ID3D12Device", "CreateCommittedResource"), ("ID3D12Device", "CreateCommittedResource"),  # temporary, persistent
    ("IDMLBindingTable", "BindOutputs"),      # the persistent resource, as the initializer's output
    *BEGIN, ("IDMLCommandRecorder", "RecordDispatch"), *WAIT,
    *[("ID3D12Device", "CreateCommittedResource")] * 5,     # state in, output, state out, upload, readback
    ("ID3D12Resource", "Map"), ("ID3D12Resource", "Unmap"),
    ("IDMLBindingTable", "Reset"), ("IDMLBindingTable", "BindTemporaryResource"),
    ("IDMLBindingTable", "BindPersistentResource"), ("IDMLBindingTable", "BindInputs"),
    ("IDMLBindingTable", "BindOutputs"),
    *BEGIN, ("ID3D12GraphicsCommandList", "CopyBufferRegion"), ("ID3D12GraphicsCommandList", "CopyBufferRegion"),
    ("ID3D12GraphicsCommandList", "ResourceBarrier"), ("IDMLCommandRecorder", "RecordDispatch"),
    ("ID3D12GraphicsCommandList", "ResourceBarrier"), ("ID3D12GraphicsCommandList", "CopyBufferRegion"),
    ("ID3D12GraphicsCommandList", "CopyBufferRegion"),   # the input state read back (an in-place kernel shows)
    ("ID3D12GraphicsCommandList", "CopyBufferRegion"), *WAIT,
    ("ID3D12Resource", "Map"), ("ID3D12Resource", "Unmap"),
    *[("ID3D12Resource", "Release")] * 7, ("IDMLCommandRecorder", "Release"), ("IDMLBindingTable", "Release"),
    ("ID3D12DescriptorHeap", "Release"), ("IDMLOperatorInitializer", "Release"),
    ("IDMLCompiledOperator", "Release"), ("IDMLOperator", "Release"),
]


def make(**options):
    abi = options.pop("abi", "sysv")
    fake = FakeDirectML(abi=abi, **{k: v for k, v in options.items() if k != "adapter"})
    backend = DirectMLBackend(options.get("adapter", "default"), exports=fake, abi=abi)
    return fake, backend


def call(backend, sizes, strides=None, *, extra=7, state=STATE, **kw):
    """Backend and reference on identical prefilled buffers (extent + guard words); returns both."""
    length = int(np.prod(sizes)) if strides is None else sum((s - 1) * t for s, t in zip(sizes, strides)) + 1
    fill = ((0xA5A5A5A5 + np.arange(length + extra, dtype=np.uint64) * 0x01000193) & 0xFFFFFFFF).astype(np.uint32)
    got, want = fill.copy(), fill.copy()
    got_state = backend.random_generator(state.copy(), sizes, strides, got, **kw)
    want_state = reference.random_generator(state.copy(), sizes, strides, want, **kw)
    return got, want, got_state, want_state


def test_call_sequence_set_up_and_one_execution():
    fake, backend = make()
    assert fake.calls == SET_UP
    got, want, got_state, want_state = call(backend, (3, 5), (1, 3))
    assert fake.calls[len(SET_UP):] == EXECUTION
    assert np.array_equal(got, want) and np.array_equal(got_state, want_state)
    assert fake.violations == []
    assert fake.executions == 1
    backend.close()
    assert fake.live() == [], "every COM object is released"


def test_bound_resources_and_descs():
    """What the fake decoded from memory: the three DML_BUFFER_TENSOR_DESCs, as built."""
    fake, backend = make()
    call(backend, (2, 3), (8, 2), extra=5)
    compiled = [o for o in fake.objects.values() if o.interface == "IDMLCompiledOperator"][-1]
    state, output, output_state = compiled.tensors
    assert (state.data_type, state.sizes, state.strides, state.total_bytes) == ("UINT32", (6,), None, 24)
    assert (output.data_type, output.sizes, output.strides) == ("UINT32", (2, 3), (8, 2))
    assert output.total_bytes == (8 + 2 * 2 + 1 + 5) * 4, "TotalTensorSizeInBytes is the whole caller buffer"
    assert (output_state.sizes, output_state.total_bytes) == ((6,), 24)
    assert [t.alignment for t in compiled.tensors] == [0, 0, 0]
    call(backend, (2, 3), None, extra=0, output_state=False)
    compiled = [o for o in fake.objects.values() if o.interface == "IDMLCompiledOperator"][-1]
    state, output, output_state = compiled.tensors
    assert output.strides is None, "packed row-major is described with Strides = NULL"
    assert output.total_bytes == 24 and output_state is None


def test_non_contiguous_caller_buffer():
    fake, backend = make()
    backing = np.full(26, 0x5A5A5A5A, dtype=np.uint32)
    view = backing[::2]
    want = view.copy()
    state = backend.random_generator(STATE.copy(), (3, 4), None, view)
    reference_state = reference.random_generator(STATE.copy(), (3, 4), None, want)
    assert np.array_equal(view, want) and np.array_equal(state, reference_state)
    assert np.all(backing[1::2] == 0x5A5A5A5A), "words between the view's elements untouched"


@pytest.mark.parametrize("abi", ["sysv", "msvc"])
@pytest.mark.parametrize("platform", ["windows", "wsl"])
def test_both_abis_and_platforms(abi, platform):
    fake, backend = make(abi=abi, platform=platform)
    got, want, got_state, want_state = call(backend, (4, 3, 2), (1, 4, 12))
    assert np.array_equal(got, want) and np.array_equal(got_state, want_state)
    got, want, got_state, want_state = call(backend, (5,), None, output_state=False)
    assert np.array_equal(got, want) and got_state is None
    assert fake.violations == []
    if platform == "wsl":
        assert ("export", "CreateDXGIFactory1") not in fake.calls
        assert backend.describe()["adapter"].startswith("default")
    backend.close()
    assert fake.live() == []


def test_synchronous_queue_skips_the_wait():
    fake, backend = make(asynchronous=False)
    got, want, *_ = call(backend, (9,))
    assert np.array_equal(got, want)
    assert ("ID3D12Fence", "SetEventOnCompletion") not in fake.calls


def test_feature_level_3_state_shape():
    fake, backend = make()
    state = STATE.reshape(1, 1, 1, 6)
    got, want, got_state, want_state = call(backend, (1, 2, 3, 4), state=state, feature_level=FEATURE_LEVEL_3_0)
    assert np.array_equal(got, want) and np.array_equal(got_state, want_state)
    compiled = [o for o in fake.objects.values() if o.interface == "IDMLCompiledOperator"][-1]
    assert compiled.tensors[0].sizes == (1, 1, 1, 6) and compiled.tensors[2].sizes == (1, 1, 1, 6)


def test_feature_level_3_rules_enforced_by_the_backend():
    """A newer DirectML accepts 2-D tensors; a 3.0 request must not, and never reaches CreateOperator."""
    fake, backend = make()
    before = len(fake.calls)
    with pytest.raises(Rejected) as refused:
        backend.random_generator(STATE.reshape(1, 1, 1, 6), (2, 4), None, np.zeros(8, np.uint32),
                                 feature_level=FEATURE_LEVEL_3_0)
    assert refused.value.rule == "rank"
    assert fake.calls[before:] == []


def test_device_at_feature_level_3_refuses_other_ranks():
    fake, backend = make(feature_level=(3, 1))
    assert backend.describe()["max feature level"] == "3.1"
    before = len(fake.calls)
    with pytest.raises(NotApplicable, match=r"feature level 4\.0; this DirectML's maximum is 3\.1"):
        backend.random_generator(STATE.copy(), (8,), None, np.zeros(8, np.uint32))   # FL 4.0: not asked
    assert fake.calls[before:] == []
    got, want, *_ = call(backend, (1, 1, 2, 4), state=STATE.reshape(1, 1, 1, 6), feature_level=FEATURE_LEVEL_3_0)
    assert np.array_equal(got, want)


def test_e_invalidarg_from_create_operator_is_rejected():
    fake, backend = make()
    with pytest.raises(Rejected) as refused:
        backend.random_generator(STATE.copy(), (2, 0, 4), None, np.zeros(8, np.uint32))
    assert isinstance(refused.value, InvalidArgument)
    assert "IDMLDevice::CreateOperator failed: E_INVALIDARG (0x80070057)" in str(refused.value)
    assert fake.calls[-1] == ("IDMLDevice", "CreateOperator")
    fake.fail[("IDMLDevice", "CompileOperator")] = 0x80070057
    with pytest.raises(Rejected):
        call(backend, (4,))
    assert fake.live() and fake.violations == []
    backend.close()
    assert fake.live() == []


def test_other_hresult_is_a_clear_error():
    fake, backend = make()
    fake.fail[("IDMLDevice", "CompileOperator")] = 0x887A0005
    with pytest.raises(HResultError) as failed:
        call(backend, (4,))
    assert not isinstance(failed.value, Rejected)
    assert str(failed.value) == "IDMLDevice::CompileOperator failed: DXGI_ERROR_DEVICE_REMOVED (0x887A0005)"
    assert failed.value.name == "DXGI_ERROR_DEVICE_REMOVED"


def test_e_invalidarg_after_creation_is_not_a_rejection():
    fake, backend = make()
    fake.fail[("ID3D12Device", "CreateCommittedResource")] = 0x80070057
    with pytest.raises(HResultError) as failed:
        call(backend, (4,))
    assert not isinstance(failed.value, Rejected)
    assert "ID3D12Device::CreateCommittedResource failed: E_INVALIDARG" in str(failed.value)


def test_device_removed_during_execution():
    fake, backend = make()
    fake.removed_reason = 0x887A0006
    with pytest.raises(HResultError, match=r"removed.*DXGI_ERROR_DEVICE_HUNG \(0x887A0006\)"):
        call(backend, (4,))


def test_adapters():
    fake, backend = make(adapter="warp")
    info = backend.describe()
    assert info["adapter"] == "Microsoft Basic Render Driver (software)"
    assert (info["vendor id"], info["device id"]) == ("0x1414", "0x008C")
    assert info["driver version"] == "31.0.101.4255" and info["DirectML version"] == "1.15.4 (fake)"
    assert ("IDXGIFactory4", "EnumWarpAdapter") in fake.calls
    assert make(adapter="1")[1].describe()["adapter"].startswith("Microsoft Basic Render Driver")
    assert make(adapter="0")[1].describe()["adapter"] == "Fake DirectML GPU"
    with pytest.raises(BackendUnavailable, match="no DXGI adapter 5"):
        make(adapter="5")
    with pytest.raises(BackendUnavailable, match="WSL"):
        make(adapter="warp", platform="wsl")
    with pytest.raises(BackendSpecError):
        make(adapter="fastest")


def test_feature_level_query_on_an_older_directml():
    """A DirectML that refuses levels newer than it knows: the query is narrowed until it answers."""
    fake, backend = make(feature_level=(4, 1), known_levels=(5, 0))
    assert backend.feature_level == (4, 1)
    queries = fake.calls.count(("IDMLDevice", "CheckFeatureSupport"))
    assert queries == 1 + 7     # 6.4, 6.3, 6.2, 6.1, 6.0, 5.2, 5.1 dropped one by one
    fake.violations.clear()     # the refused queries are recorded as misuse; expected here


def test_dml_device_below_3_0_is_unavailable():
    with pytest.raises(BackendUnavailable, match="DMLCreateDevice1 failed: .*DXGI_ERROR_UNSUPPORTED"):
        make(feature_level=(2, 1))


def test_conformance_full_profile_through_the_fake():
    fake, backend = make()
    document = run([NamedBackend("directml-fake", backend)], RunOptions(profile="full"))
    statuses = collections.Counter(r["status"] for r in document["results"])
    bad = [(r["case"], r["message"]) for r in document["results"] if r["required"] and r["status"] in BROKEN]
    assert bad == []
    assert statuses["passed"] >= 119
    rejected = [r for r in document["results"] if r["case"].startswith("validation/")]
    assert rejected and all(r["status"] == "passed" for r in rejected)
    assert fake.violations == []
    backend.close()
    assert fake.live() == []


def test_conformance_quick_profile_msvc_abi():
    fake, backend = make(abi="msvc", platform="wsl")
    document = run([NamedBackend("directml-fake", backend)], RunOptions(profile="quick"))
    assert [r["case"] for r in document["results"] if r["required"] and r["status"] in BROKEN] == []
    assert fake.violations == []


def _broken_descs(monkeypatch, transform):
    original = dispatch.buffer_tensor_desc

    def broken(data_type, sizes, strides, total_bytes):
        if len(sizes) > 1 and tuple(sizes)[-1] != 6:    # the OutputTensor only
            sizes, strides = transform(tuple(sizes), strides)
        return original(data_type, sizes, strides, total_bytes)

    monkeypatch.setattr(dispatch, "buffer_tensor_desc", broken)


@pytest.mark.parametrize("variant", ["strides-dropped", "sizes-reversed", "strides-reversed"])
def test_wrong_desc_building_is_caught(monkeypatch, variant):
    transform = {
        "strides-dropped": lambda sizes, strides: (sizes, None),
        "sizes-reversed": lambda sizes, strides: (sizes[::-1], None if strides is None else strides[::-1]),
        "strides-reversed": lambda sizes, strides: (sizes, None if strides is None else strides[::-1]),
    }[variant]
    _broken_descs(monkeypatch, transform)
    fake, backend = make()
    document = run([NamedBackend("broken", backend)], RunOptions(profile="quick", select=["layout", "mapping"]))
    failed = [r for r in document["results"] if r["required"] and r["status"] in BROKEN]
    assert failed, f"{variant}: the suite did not notice"
    assert all(r["status"] == "failed" for r in failed)


def test_unavailable_without_the_chain_with_a_one_line_reason(tmp_path, monkeypatch):
    """Linux without /dev/dxg and with nothing set up: the missing piece is named."""
    import sys
    if sys.platform == "win32" or Path("/dev/dxg").exists():
        pytest.skip("Windows or WSL2: DirectML may be available from the system")
    monkeypatch.setenv("RNGCHECK_CACHE", str(tmp_path))
    monkeypatch.delenv("RNGCHECK_D3D12_BRIDGE", raising=False)
    with pytest.raises(BackendUnavailable) as raised:
        load("rngcheck.backends.directml.backend:DirectMLBackend")
    message = str(raised.value)
    assert "\n" not in message and "vkd3d (D3D12 over Vulkan) is not set up" in message
    assert loader.platform() == "vkd3d"


def test_unavailable_reason_per_platform(monkeypatch):
    monkeypatch.setattr(loader.sys, "platform", "darwin")
    assert "Windows, WSL2 or Linux with Vulkan" in loader.unavailable_reason()
    monkeypatch.setattr(loader.sys, "platform", "win32")
    assert loader.unavailable_reason() is None
    assert loader.platform() == "windows"
    monkeypatch.setattr(loader.sys, "platform", "linux")
    assert loader.unavailable_reason() is None
    monkeypatch.setattr(loader, "DXG_DEVICE", Path("/nonexistent/dxg"))
    assert loader.platform() == "vkd3d"


def test_directml_version_from_a_nuget_path():
    assert loader._version_from_path("/x/microsoft.ai.directml/1.15.4/bin/x64-linux/libdirectml.so") == "1.15.4"
    assert loader._version_from_path("C:/p/Microsoft.AI.DirectML.1.15.4/bin/x64-win/DirectML.dll") == "1.15.4"
    assert loader._version_from_path("/usr/lib/libdirectml.so") == "unknown"


def test_calc_buffer_tensor_size():
    assert dispatch.calc_buffer_tensor_size("UINT32", (1, 1, 1, 6), None) == 24
    assert dispatch.calc_buffer_tensor_size("UINT32", (2, 3), (5, 1)) == 32
    assert dispatch.calc_buffer_tensor_size("UINT16", (3,), None) == 8      # 6 bytes, rounded up to 4
    assert dispatch.calc_buffer_tensor_size("UINT32", (4, 4), (0, 0)) == 4


def test_an_in_place_kernel_is_caught_as_input_state_modified():
    """A driver that binds one buffer for both state tensors writes the advanced state over the input:
    the input state is read back from the device, and the case fails as input-state-modified."""
    from rngcheck.conformance import axes
    from rngcheck.conformance.directml import check

    case = next(c for c in axes.cases_for("quick") if c.id == "mapping/elements-7")
    fake, backend = make(in_place_state=True)
    outcome = check.run_case(backend, case)
    assert outcome.status == "failed" and outcome.diagnosis["id"] == "input-state-modified", outcome.message
    fake, honest = make()
    assert check.run_case(honest, case).status == "passed"
    assert fake.violations == []


@pytest.mark.parametrize("spec", ["directml:exports=fake", "directml:abi=arm64"])
def test_a_spec_cannot_name_the_python_only_options(spec):
    """exports= (the native layer, a Python object) and abi= outside msvc/sysv are refused as spec
    text in one line, before anything is loaded."""
    from rngcheck.errors import BackendSpecError
    with pytest.raises(BackendSpecError, match="the options are adapter, lib, d3d12 and name"):
        load(spec)
