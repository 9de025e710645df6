"""DirectML / D3D12 / DXGI bindings against the published headers: layouts, enum values, vtables, IIDs.

The expected numbers below are worked out by hand from the C declarations (DirectML.h,
d3d12.h, dxgi.h) with the x64 layout rules: every member at the next multiple of its own
alignment (UINT/enum 4, UINT64/SIZE_T/pointer 8, a nested structure its largest member's),
and the size rounded up to the structure's alignment. They are not read back from ctypes,
so a wrong field type or order in rngcheck.backends.directml.structs fails here.
"""

from __future__ import annotations

import ctypes

import pytest

from rngcheck.backends.directml import com
from rngcheck.backends.directml import interfaces as I
from rngcheck.backends.directml import structs as S

# (structure, size, alignment, {field: offset}) -- x64
LAYOUTS = [
    (S.DML_BUFFER_TENSOR_DESC, 48, 8, {"DataType": 0, "Flags": 4, "DimensionCount": 8, "Sizes": 16, "Strides": 24,
                                       "TotalTensorSizeInBytes": 32, "GuaranteedBaseOffsetAlignment": 40}),
    (S.DML_TENSOR_DESC, 16, 8, {"Type": 0, "Desc": 8}),
    (S.DML_OPERATOR_DESC, 16, 8, {"Type": 0, "Desc": 8}),
    (S.DML_RANDOM_GENERATOR_OPERATOR_DESC, 32, 8, {"InputStateTensor": 0, "OutputTensor": 8,
                                                   "OutputStateTensor": 16, "Type": 24}),
    (S.DML_BINDING_DESC, 16, 8, {"Type": 0, "Desc": 8}),
    (S.DML_BUFFER_BINDING, 24, 8, {"Buffer": 0, "Offset": 8, "SizeInBytes": 16}),
    (S.DML_BUFFER_ARRAY_BINDING, 16, 8, {"BindingCount": 0, "Bindings": 8}),
    (S.DML_BINDING_TABLE_DESC, 32, 8, {"Dispatchable": 0, "CPUDescriptorHandle": 8, "GPUDescriptorHandle": 16,
                                       "SizeInDescriptors": 24}),
    (S.DML_BINDING_PROPERTIES, 24, 8, {"RequiredDescriptorCount": 0, "TemporaryResourceSize": 8,
                                       "PersistentResourceSize": 16}),
    (S.DML_FEATURE_QUERY_FEATURE_LEVELS, 16, 8, {"RequestedFeatureLevelCount": 0, "RequestedFeatureLevels": 8}),
    (S.DML_FEATURE_DATA_FEATURE_LEVELS, 4, 4, {"MaxSupportedFeatureLevel": 0}),
    (S.D3D12_CPU_DESCRIPTOR_HANDLE, 8, 8, {"ptr": 0}),
    (S.D3D12_GPU_DESCRIPTOR_HANDLE, 8, 8, {"ptr": 0}),
    (S.D3D12_COMMAND_QUEUE_DESC, 16, 4, {"Type": 0, "Priority": 4, "Flags": 8, "NodeMask": 12}),
    (S.D3D12_DESCRIPTOR_HEAP_DESC, 16, 4, {"Type": 0, "NumDescriptors": 4, "Flags": 8, "NodeMask": 12}),
    (S.D3D12_HEAP_PROPERTIES, 20, 4, {"Type": 0, "CPUPageProperty": 4, "MemoryPoolPreference": 8,
                                      "CreationNodeMask": 12, "VisibleNodeMask": 16}),
    (S.DXGI_SAMPLE_DESC, 8, 4, {"Count": 0, "Quality": 4}),
    (S.D3D12_RESOURCE_DESC, 56, 8, {"Dimension": 0, "Alignment": 8, "Width": 16, "Height": 24,
                                    "DepthOrArraySize": 28, "MipLevels": 30, "Format": 32, "SampleDesc": 36,
                                    "Layout": 44, "Flags": 48}),
    (S.D3D12_RANGE, 16, 8, {"Begin": 0, "End": 8}),
    (S.D3D12_RESOURCE_TRANSITION_BARRIER, 24, 8, {"pResource": 0, "Subresource": 8, "StateBefore": 12,
                                                  "StateAfter": 16}),
    (S.D3D12_RESOURCE_UAV_BARRIER, 8, 8, {"pResource": 0}),
    (S.D3D12_RESOURCE_ALIASING_BARRIER, 16, 8, {"pResourceBefore": 0, "pResourceAfter": 8}),
    (S.D3D12_RESOURCE_BARRIER, 32, 8, {"Type": 0, "Flags": 4, "u": 8}),
    (S.LUID, 8, 4, {"LowPart": 0, "HighPart": 4}),
    (S.DXGI_ADAPTER_DESC1, 312, 8, {"Description": 0, "VendorId": 256, "DeviceId": 260, "SubSysId": 264,
                                    "Revision": 268, "DedicatedVideoMemory": 272, "DedicatedSystemMemory": 280,
                                    "SharedSystemMemory": 288, "AdapterLuid": 296, "Flags": 304}),
    (S.GUID, 16, 4, {"Data1": 0, "Data2": 4, "Data3": 6, "Data4": 8}),
]


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the layouts are x64's")
@pytest.mark.parametrize("struct, size, alignment, offsets", LAYOUTS, ids=[s[0].__name__ for s in LAYOUTS])
def test_layout(struct, size, alignment, offsets):
    assert ctypes.sizeof(struct) == size
    assert ctypes.alignment(struct) == alignment
    assert [name for name, *_ in struct._fields_] == list(offsets), "field order"
    for name, offset in offsets.items():
        assert getattr(struct, name).offset == offset, name


def test_field_widths():
    """Members whose width matters beyond their offset (a UINT64 declared as UINT would still fit)."""
    widths = {(S.DML_BUFFER_TENSOR_DESC, "TotalTensorSizeInBytes"): 8, (S.DML_BUFFER_BINDING, "Offset"): 8,
              (S.DML_BUFFER_BINDING, "SizeInBytes"): 8, (S.DML_BINDING_PROPERTIES, "TemporaryResourceSize"): 8,
              (S.D3D12_RESOURCE_DESC, "Width"): 8, (S.D3D12_RESOURCE_DESC, "Height"): 4,
              (S.D3D12_RESOURCE_DESC, "DepthOrArraySize"): 2, (S.D3D12_RESOURCE_DESC, "MipLevels"): 2,
              (S.DXGI_ADAPTER_DESC1, "Description"): 256, (S.DML_BUFFER_TENSOR_DESC, "DimensionCount"): 4}
    for (struct, name), width in widths.items():
        assert getattr(struct, name).size == width, f"{struct.__name__}.{name}"


def test_barrier_union_members_overlap():
    barrier = S.D3D12_RESOURCE_BARRIER()
    barrier.Transition.pResource = 0x1234
    assert barrier.UAV.pResource == 0x1234 and barrier.Aliasing.pResourceBefore == 0x1234


# DirectML.h enum values (DML_OPERATOR_RANDOM_GENERATOR: counted through the #if blocks,
# DML_OPERATOR_SCATTER aliasing SCATTER_ELEMENTS without taking a value; Windows metadata says 132).
ENUMS = {
    "DML_TENSOR_DATA_TYPE_UINT32": (S.DML_TENSOR_DATA_TYPE["UINT32"], 3),
    "DML_TENSOR_DATA_TYPE_INT32": (S.DML_TENSOR_DATA_TYPE["INT32"], 6),
    "DML_TENSOR_DATA_TYPE_FLOAT32": (S.DML_TENSOR_DATA_TYPE["FLOAT32"], 1),
    "DML_TENSOR_DATA_TYPE_INT64": (S.DML_TENSOR_DATA_TYPE["INT64"], 11),
    "DML_TENSOR_TYPE_BUFFER": (S.DML_TENSOR_TYPE_BUFFER, 1),
    "DML_TENSOR_FLAG_OWNED_BY_DML": (S.DML_TENSOR_FLAG_OWNED_BY_DML, 1),
    "DML_OPERATOR_RANDOM_GENERATOR": (S.DML_OPERATOR_RANDOM_GENERATOR, 132),
    "DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10": (S.DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10, 0),
    "DML_FEATURE_LEVEL_3_0": (S.DML_FEATURE_LEVEL[(3, 0)], 0x3000),
    "DML_FEATURE_LEVEL_4_0": (S.DML_FEATURE_LEVEL[(4, 0)], 0x4000),
    "DML_FEATURE_LEVEL_6_4": (S.DML_FEATURE_LEVEL[(6, 4)], 0x6400),
    "DML_FEATURE_FEATURE_LEVELS": (S.DML_FEATURE_FEATURE_LEVELS, 1),
    "DML_BINDING_TYPE_NONE": (S.DML_BINDING_TYPE_NONE, 0),
    "DML_BINDING_TYPE_BUFFER": (S.DML_BINDING_TYPE_BUFFER, 1),
    "DML_BINDING_TYPE_BUFFER_ARRAY": (S.DML_BINDING_TYPE_BUFFER_ARRAY, 2),
    "DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE": (S.DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE, 4),
    "DML_CREATE_DEVICE_FLAG_DEBUG": (S.DML_CREATE_DEVICE_FLAG_DEBUG, 1),
    "DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT": (S.DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT, 16),
    "DML_TENSOR_DIMENSION_COUNT_MAX1": (S.DML_TENSOR_DIMENSION_COUNT_MAX1, 8),
    "D3D_FEATURE_LEVEL_11_0": (S.D3D_FEATURE_LEVEL_11_0, 0xB000),
    "D3D12_HEAP_TYPE_DEFAULT": (S.D3D12_HEAP_TYPE_DEFAULT, 1),
    "D3D12_HEAP_TYPE_UPLOAD": (S.D3D12_HEAP_TYPE_UPLOAD, 2),
    "D3D12_HEAP_TYPE_READBACK": (S.D3D12_HEAP_TYPE_READBACK, 3),
    "D3D12_RESOURCE_DIMENSION_BUFFER": (S.D3D12_RESOURCE_DIMENSION_BUFFER, 1),
    "D3D12_TEXTURE_LAYOUT_ROW_MAJOR": (S.D3D12_TEXTURE_LAYOUT_ROW_MAJOR, 1),
    "D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS": (S.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS, 4),
    "D3D12_RESOURCE_STATE_UNORDERED_ACCESS": (S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, 0x8),
    "D3D12_RESOURCE_STATE_COPY_DEST": (S.D3D12_RESOURCE_STATE_COPY_DEST, 0x400),
    "D3D12_RESOURCE_STATE_COPY_SOURCE": (S.D3D12_RESOURCE_STATE_COPY_SOURCE, 0x800),
    "D3D12_RESOURCE_STATE_GENERIC_READ": (S.D3D12_RESOURCE_STATE_GENERIC_READ, 0xAC3),
    "D3D12_RESOURCE_BARRIER_TYPE_UAV": (S.D3D12_RESOURCE_BARRIER_TYPE_UAV, 2),
    "D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE": (S.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE, 1),
}


@pytest.mark.parametrize("name", sorted(ENUMS))
def test_enum_value(name):
    actual, published = ENUMS[name]
    assert actual == published


def test_every_feature_level_is_0xab00():
    for (major, minor), value in S.DML_FEATURE_LEVEL.items():
        assert value == (major << 12) | (minor << 8)
        assert S.feature_level_tuple(value) == (major, minor)


def test_data_type_enum_is_declaration_order():
    order = ["UNKNOWN", "FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8", "INT32", "INT16", "INT8", "FLOAT64",
             "UINT64", "INT64", "UINT4", "INT4"]
    assert [S.DML_TENSOR_DATA_TYPE[name] for name in order] == list(range(len(order)))


# Vtable slots, counted by hand from the published declarations
# (IUnknown 0-2; IDMLObject / ID3D12Object / IDXGIObject 3-6; and so on).
SLOTS = {
    ("IUnknown", "Release"): 2,
    ("IDMLDevice", "CheckFeatureSupport"): 7, ("IDMLDevice", "CreateOperator"): 8,
    ("IDMLDevice", "CompileOperator"): 9, ("IDMLDevice", "CreateOperatorInitializer"): 10,
    ("IDMLDevice", "CreateCommandRecorder"): 11, ("IDMLDevice", "CreateBindingTable"): 12,
    ("IDMLDevice", "GetDeviceRemovedReason"): 15, ("IDMLDevice1", "CompileGraph"): 17,
    ("IDMLCompiledOperator", "GetBindingProperties"): 8, ("IDMLOperatorInitializer", "GetBindingProperties"): 8,
    ("IDMLOperatorInitializer", "Reset"): 9,
    ("IDMLBindingTable", "BindInputs"): 8, ("IDMLBindingTable", "BindOutputs"): 9,
    ("IDMLBindingTable", "BindTemporaryResource"): 10, ("IDMLBindingTable", "BindPersistentResource"): 11,
    ("IDMLBindingTable", "Reset"): 12, ("IDMLCommandRecorder", "RecordDispatch"): 8,
    ("ID3D12Device", "CreateCommandQueue"): 8, ("ID3D12Device", "CreateCommandAllocator"): 9,
    ("ID3D12Device", "CreateCommandList"): 12, ("ID3D12Device", "CreateDescriptorHeap"): 14,
    ("ID3D12Device", "CreateCommittedResource"): 27, ("ID3D12Device", "CreateFence"): 36,
    ("ID3D12Device", "GetDeviceRemovedReason"): 37, ("ID3D12Device", "GetAdapterLuid"): 43,
    ("ID3D12CommandQueue", "ExecuteCommandLists"): 10, ("ID3D12CommandQueue", "Signal"): 14,
    ("ID3D12CommandAllocator", "Reset"): 8,
    ("ID3D12GraphicsCommandList", "Close"): 9, ("ID3D12GraphicsCommandList", "Reset"): 10,
    ("ID3D12GraphicsCommandList", "CopyBufferRegion"): 15, ("ID3D12GraphicsCommandList", "ResourceBarrier"): 26,
    ("ID3D12GraphicsCommandList", "SetDescriptorHeaps"): 28, ("ID3D12GraphicsCommandList", "ExecuteIndirect"): 59,
    ("ID3D12Resource", "Map"): 8, ("ID3D12Resource", "Unmap"): 9,
    ("ID3D12DescriptorHeap", "GetCPUDescriptorHandleForHeapStart"): 9,
    ("ID3D12DescriptorHeap", "GetGPUDescriptorHandleForHeapStart"): 10,
    ("ID3D12Fence", "GetCompletedValue"): 8, ("ID3D12Fence", "SetEventOnCompletion"): 9,
    ("IDXGIAdapter", "CheckInterfaceSupport"): 9, ("IDXGIAdapter1", "GetDesc1"): 10,
    ("IDXGIFactory1", "EnumAdapters1"): 12, ("IDXGIFactory4", "EnumAdapters1"): 12,
    ("IDXGIFactory4", "EnumWarpAdapter"): 27,
}


@pytest.mark.parametrize("interface, method", sorted(SLOTS))
def test_vtable_slot(interface, method):
    assert I.slot(interface, method) == SLOTS[(interface, method)]


def test_every_called_method_has_a_slot_and_signature():
    for interface, method in I.SIGNATURES:
        assert method in I.INTERFACES[interface][2], (interface, method)
        assert I.slot(interface, method) >= 0


IIDS = {
    "IDMLDevice": "6dbd6437-96fd-423f-a98c-ae5e7c2a573f", "IDMLOperator": "26caae7a-3081-4633-9581-226fbe57695d",
    "IDMLCompiledOperator": "6b15e56a-bf5c-4902-92d8-da3a650afea4",
    "IDMLOperatorInitializer": "427c1113-435c-469c-8676-4d5dd072f813",
    "IDMLBindingTable": "29c687dc-de74-4e3b-ab00-1168f2fc3cfc",
    "IDMLCommandRecorder": "e6857a76-2e3e-4fdd-bff4-5d2ba10fb453",
    "ID3D12Device": "189819f1-1db6-4b57-be54-1821339b85f7",
    "ID3D12CommandQueue": "0ec870a6-5d7e-4c22-8cfc-5baae07616ed",
    "ID3D12CommandAllocator": "6102dee4-af59-4b09-b999-b44d73f09b24",
    "ID3D12GraphicsCommandList": "5b160d0f-ac1b-4185-8ba8-b3ae42a5a455",
    "ID3D12Resource": "696442be-a72e-4059-bc79-5b5c98040fad",
    "ID3D12DescriptorHeap": "8efb471d-616c-4f49-90f7-127bb763fa51",
    "ID3D12Fence": "0a753dcf-c4d8-4b91-adf6-be5a60d95a76",
    "IDXGIFactory4": "1bc6ea02-ef36-464f-bf0c-21ca39e5168a", "IDXGIAdapter1": "29038f61-3839-4626-91fd-086879011a05",
    "IDXGIDevice": "54ec77fa-1377-44e6-8c32-88fd5f44c84c",
}


@pytest.mark.parametrize("interface", sorted(IIDS))
def test_iid(interface):
    assert I.iid(interface) == IIDS[interface]


def test_guid_memory_layout():
    """Data1-3 little-endian integers, Data4 bytes in order (IID_ID3D12Device)."""
    guid = S.GUID.parse("189819f1-1db6-4b57-be54-1821339b85f7")
    assert bytes(guid) == bytes.fromhex("f1199818b61d574bbe541821339b85f7")
    assert str(guid) == "189819f1-1db6-4b57-be54-1821339b85f7"


def test_struct_return_lowering():
    """By-value structure returns: hidden pointer after this (msvc), in RAX or hidden pointer first (sysv)."""
    P = ctypes.c_void_p
    assert com.lower(S.DML_BINDING_PROPERTIES, (), "msvc") == (P, (P, P), "after-this")
    assert com.lower(S.DML_BINDING_PROPERTIES, (), "sysv") == (P, (P, P), "before-this")
    assert com.lower(S.D3D12_CPU_DESCRIPTOR_HANDLE, (), "msvc") == (P, (P, P), "after-this")
    assert com.lower(S.D3D12_GPU_DESCRIPTOR_HANDLE, (), "sysv") == (ctypes.c_uint64, (P,), "register")
    assert com.lower(S.HRESULT, (ctypes.c_uint32,), "sysv") == (S.HRESULT, (P, ctypes.c_uint32), None)


def test_hresult_names():
    assert com.hresult_name(0x80070057) == "E_INVALIDARG (0x80070057)"
    assert com.hresult_name(com.as_signed(0x887A0005)) == "DXGI_ERROR_DEVICE_REMOVED (0x887A0005)"
    assert com.hresult_name(0x12345678) == "HRESULT 0x12345678"
