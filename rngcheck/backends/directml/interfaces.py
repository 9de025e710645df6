"""COM interfaces as data: base interface, IID, and the methods each declares, in vtable order.

A method's slot is its index in the concatenation of the declared-method lists from IUnknown
down to the interface. Sources (the order of declaration is the vtable order; COM interfaces
have no virtual destructors, so the Itanium C++ ABI on WSL lays the vtable out the same way):
  DirectML.h (DirectML 1.x): IDMLObject ... IDMLCommandRecorder, IDMLDevice1, and their IIDs.
  d3d12.h (Windows SDK / DirectX-Headers): ID3D12Object ... ID3D12Fence and their IIDs.
  dxgi.h, dxgi1_2.h, dxgi1_3.h, dxgi1_4.h: IDXGIObject ... IDXGIFactory4, IDXGIDevice's IID.
Only IIDs rngcheck passes to a QueryInterface-style call are listed (None otherwise).

SIGNATURES gives, for each method rngcheck calls (keyed by the interface that declares it),
the return type and the argument types after ``this``; a ctypes Structure as return type
means a structure returned by value (see rngcheck.backends.directml.com for the ABI rules).
EXPORTS gives the DLL entry points in the same form.
"""

from __future__ import annotations

from ctypes import c_uint32, c_uint64, c_void_p

from .structs import D3D12_CPU_DESCRIPTOR_HANDLE, D3D12_GPU_DESCRIPTOR_HANDLE, DML_BINDING_PROPERTIES, HRESULT

INTERFACES: dict[str, tuple[str | None, str | None, tuple[str, ...]]] = {
    "IUnknown": (None, "00000000-0000-0000-c000-000000000046", ("QueryInterface", "AddRef", "Release")),

    # DirectML.h
    "IDMLObject": ("IUnknown", "c8263aac-9e0c-4a2d-9b8e-007521a3317c",
                   ("GetPrivateData", "SetPrivateData", "SetPrivateDataInterface", "SetName")),
    "IDMLDevice": ("IDMLObject", "6dbd6437-96fd-423f-a98c-ae5e7c2a573f",
                   ("CheckFeatureSupport", "CreateOperator", "CompileOperator", "CreateOperatorInitializer",
                    "CreateCommandRecorder", "CreateBindingTable", "Evict", "MakeResident",
                    "GetDeviceRemovedReason", "GetParentDevice")),
    "IDMLDevice1": ("IDMLDevice", "a0884f9a-d2be-4355-aa5d-5901281ad1d2", ("CompileGraph",)),
    "IDMLDeviceChild": ("IDMLObject", "27e83142-8165-49e3-974e-2fd66e4cb69d", ("GetDevice",)),
    "IDMLPageable": ("IDMLDeviceChild", "b1ab0825-4542-4a4b-8617-6dde6e8f6201", ()),
    "IDMLOperator": ("IDMLDeviceChild", "26caae7a-3081-4633-9581-226fbe57695d", ()),
    "IDMLDispatchable": ("IDMLPageable", "dcb821a8-1039-441e-9f1c-b1759c2f3cec", ("GetBindingProperties",)),
    "IDMLCompiledOperator": ("IDMLDispatchable", "6b15e56a-bf5c-4902-92d8-da3a650afea4", ()),
    "IDMLOperatorInitializer": ("IDMLDispatchable", "427c1113-435c-469c-8676-4d5dd072f813", ("Reset",)),
    "IDMLBindingTable": ("IDMLDeviceChild", "29c687dc-de74-4e3b-ab00-1168f2fc3cfc",
                         ("BindInputs", "BindOutputs", "BindTemporaryResource", "BindPersistentResource", "Reset")),
    "IDMLCommandRecorder": ("IDMLDeviceChild", "e6857a76-2e3e-4fdd-bff4-5d2ba10fb453", ("RecordDispatch",)),

    # d3d12.h
    "ID3D12Object": ("IUnknown", None, ("GetPrivateData", "SetPrivateData", "SetPrivateDataInterface", "SetName")),
    "ID3D12DeviceChild": ("ID3D12Object", None, ("GetDevice",)),
    "ID3D12Pageable": ("ID3D12DeviceChild", None, ()),
    "ID3D12Device": ("ID3D12Object", "189819f1-1db6-4b57-be54-1821339b85f7",
                     ("GetNodeCount", "CreateCommandQueue", "CreateCommandAllocator", "CreateGraphicsPipelineState",
                      "CreateComputePipelineState", "CreateCommandList", "CheckFeatureSupport",
                      "CreateDescriptorHeap", "GetDescriptorHandleIncrementSize", "CreateRootSignature",
                      "CreateConstantBufferView", "CreateShaderResourceView", "CreateUnorderedAccessView",
                      "CreateRenderTargetView", "CreateDepthStencilView", "CreateSampler", "CopyDescriptors",
                      "CopyDescriptorsSimple", "GetResourceAllocationInfo", "GetCustomHeapProperties",
                      "CreateCommittedResource", "CreateHeap", "CreatePlacedResource", "CreateReservedResource",
                      "CreateSharedHandle", "OpenSharedHandle", "OpenSharedHandleByName", "MakeResident", "Evict",
                      "CreateFence", "GetDeviceRemovedReason", "GetCopyableFootprints", "CreateQueryHeap",
                      "SetStablePowerState", "CreateCommandSignature", "GetResourceTiling", "GetAdapterLuid")),
    "ID3D12CommandQueue": ("ID3D12Pageable", "0ec870a6-5d7e-4c22-8cfc-5baae07616ed",
                           ("UpdateTileMappings", "CopyTileMappings", "ExecuteCommandLists", "SetMarker",
                            "BeginEvent", "EndEvent", "Signal", "Wait", "GetTimestampFrequency",
                            "GetClockCalibration", "GetDesc")),
    "ID3D12CommandAllocator": ("ID3D12Pageable", "6102dee4-af59-4b09-b999-b44d73f09b24", ("Reset",)),
    "ID3D12CommandList": ("ID3D12DeviceChild", None, ("GetType",)),
    "ID3D12GraphicsCommandList": ("ID3D12CommandList", "5b160d0f-ac1b-4185-8ba8-b3ae42a5a455",
                                  ("Close", "Reset", "ClearState", "DrawInstanced", "DrawIndexedInstanced",
                                   "Dispatch", "CopyBufferRegion", "CopyTextureRegion", "CopyResource",
                                   "CopyTiles", "ResolveSubresource", "IASetPrimitiveTopology", "RSSetViewports",
                                   "RSSetScissorRects", "OMSetBlendFactor", "OMSetStencilRef", "SetPipelineState",
                                   "ResourceBarrier", "ExecuteBundle", "SetDescriptorHeaps",
                                   "SetComputeRootSignature", "SetGraphicsRootSignature",
                                   "SetComputeRootDescriptorTable", "SetGraphicsRootDescriptorTable",
                                   "SetComputeRoot32BitConstant", "SetGraphicsRoot32BitConstant",
                                   "SetComputeRoot32BitConstants", "SetGraphicsRoot32BitConstants",
                                   "SetComputeRootConstantBufferView", "SetGraphicsRootConstantBufferView",
                                   "SetComputeRootShaderResourceView", "SetGraphicsRootShaderResourceView",
                                   "SetComputeRootUnorderedAccessView", "SetGraphicsRootUnorderedAccessView",
                                   "IASetIndexBuffer", "IASetVertexBuffers", "SOSetTargets", "OMSetRenderTargets",
                                   "ClearDepthStencilView", "ClearRenderTargetView", "ClearUnorderedAccessViewUint",
                                   "ClearUnorderedAccessViewFloat", "DiscardResource", "BeginQuery", "EndQuery",
                                   "ResolveQueryData", "SetPredication", "SetMarker", "BeginEvent", "EndEvent",
                                   "ExecuteIndirect")),
    "ID3D12Resource": ("ID3D12Pageable", "696442be-a72e-4059-bc79-5b5c98040fad",
                       ("Map", "Unmap", "GetDesc", "GetGPUVirtualAddress", "WriteToSubresource",
                        "ReadFromSubresource", "GetHeapProperties")),
    "ID3D12DescriptorHeap": ("ID3D12Pageable", "8efb471d-616c-4f49-90f7-127bb763fa51",
                             ("GetDesc", "GetCPUDescriptorHandleForHeapStart", "GetGPUDescriptorHandleForHeapStart")),
    "ID3D12Fence": ("ID3D12Pageable", "0a753dcf-c4d8-4b91-adf6-be5a60d95a76",
                    ("GetCompletedValue", "SetEventOnCompletion", "Signal")),

    # dxgi.h, dxgi1_2.h, dxgi1_3.h, dxgi1_4.h
    "IDXGIObject": ("IUnknown", None, ("SetPrivateData", "SetPrivateDataInterface", "GetPrivateData", "GetParent")),
    "IDXGIDevice": ("IDXGIObject", "54ec77fa-1377-44e6-8c32-88fd5f44c84c",
                    ("GetAdapter", "CreateSurface", "QueryResourceResidency", "SetGPUThreadPriority",
                     "GetGPUThreadPriority")),
    "IDXGIAdapter": ("IDXGIObject", "2411e7e1-12ac-4ccf-bd14-9798e8534dc0",
                     ("EnumOutputs", "GetDesc", "CheckInterfaceSupport")),
    "IDXGIAdapter1": ("IDXGIAdapter", "29038f61-3839-4626-91fd-086879011a05", ("GetDesc1",)),
    "IDXGIFactory": ("IDXGIObject", "7b7166ec-21c7-44ae-b21a-c9ae321ae369",
                     ("EnumAdapters", "MakeWindowAssociation", "GetWindowAssociation", "CreateSwapChain",
                      "CreateSoftwareAdapter")),
    "IDXGIFactory1": ("IDXGIFactory", "770aae78-f26f-4dba-a829-253c83d1b387", ("EnumAdapters1", "IsCurrent")),
    "IDXGIFactory2": ("IDXGIFactory1", "50c83a1c-e072-4c48-87b0-3630fa36a6d0",
                      ("IsWindowedStereoEnabled", "CreateSwapChainForHwnd", "CreateSwapChainForCoreWindow",
                       "GetSharedResourceAdapterLuid", "RegisterStereoStatusWindow", "RegisterStereoStatusEvent",
                       "UnregisterStereoStatus", "RegisterOcclusionStatusWindow", "RegisterOcclusionStatusEvent",
                       "UnregisterOcclusionStatus", "CreateSwapChainForComposition")),
    "IDXGIFactory3": ("IDXGIFactory2", None, ("GetCreationFlags",)),
    "IDXGIFactory4": ("IDXGIFactory3", "1bc6ea02-ef36-464f-bf0c-21ca39e5168a",
                      ("EnumAdapterByLuid", "EnumWarpAdapter")),
}

P, U32, U64, VOID = c_void_p, c_uint32, c_uint64, None

SIGNATURES: dict[tuple[str, str], tuple[object, tuple]] = {
    ("IUnknown", "QueryInterface"): (HRESULT, (P, P)),
    ("IUnknown", "AddRef"): (U32, ()),
    ("IUnknown", "Release"): (U32, ()),
    ("IDXGIFactory1", "EnumAdapters1"): (HRESULT, (U32, P)),
    ("IDXGIFactory4", "EnumWarpAdapter"): (HRESULT, (P, P)),
    ("IDXGIAdapter", "CheckInterfaceSupport"): (HRESULT, (P, P)),
    ("IDXGIAdapter1", "GetDesc1"): (HRESULT, (P,)),
    ("ID3D12Device", "CreateCommandQueue"): (HRESULT, (P, P, P)),
    ("ID3D12Device", "CreateCommandAllocator"): (HRESULT, (U32, P, P)),
    ("ID3D12Device", "CreateCommandList"): (HRESULT, (U32, U32, P, P, P, P)),
    ("ID3D12Device", "CreateDescriptorHeap"): (HRESULT, (P, P, P)),
    ("ID3D12Device", "CreateCommittedResource"): (HRESULT, (P, U32, P, U32, P, P, P)),
    ("ID3D12Device", "CreateFence"): (HRESULT, (U64, U32, P, P)),
    ("ID3D12Device", "GetDeviceRemovedReason"): (HRESULT, ()),
    ("ID3D12CommandQueue", "ExecuteCommandLists"): (VOID, (U32, P)),
    ("ID3D12CommandQueue", "Signal"): (HRESULT, (P, U64)),
    ("ID3D12CommandAllocator", "Reset"): (HRESULT, ()),
    ("ID3D12GraphicsCommandList", "Close"): (HRESULT, ()),
    ("ID3D12GraphicsCommandList", "Reset"): (HRESULT, (P, P)),
    ("ID3D12GraphicsCommandList", "CopyBufferRegion"): (VOID, (P, U64, P, U64, U64)),
    ("ID3D12GraphicsCommandList", "ResourceBarrier"): (VOID, (U32, P)),
    ("ID3D12GraphicsCommandList", "SetDescriptorHeaps"): (VOID, (U32, P)),
    ("ID3D12Resource", "Map"): (HRESULT, (U32, P, P)),
    ("ID3D12Resource", "Unmap"): (VOID, (U32, P)),
    ("ID3D12DescriptorHeap", "GetCPUDescriptorHandleForHeapStart"): (D3D12_CPU_DESCRIPTOR_HANDLE, ()),
    ("ID3D12DescriptorHeap", "GetGPUDescriptorHandleForHeapStart"): (D3D12_GPU_DESCRIPTOR_HANDLE, ()),
    ("ID3D12Fence", "GetCompletedValue"): (U64, ()),
    ("ID3D12Fence", "SetEventOnCompletion"): (HRESULT, (U64, P)),
    ("IDMLDevice", "CheckFeatureSupport"): (HRESULT, (U32, U32, P, U32, P)),
    ("IDMLDevice", "CreateOperator"): (HRESULT, (P, P, P)),
    ("IDMLDevice", "CompileOperator"): (HRESULT, (P, U32, P, P)),
    ("IDMLDevice", "CreateOperatorInitializer"): (HRESULT, (U32, P, P, P)),
    ("IDMLDevice", "CreateCommandRecorder"): (HRESULT, (P, P)),
    ("IDMLDevice", "CreateBindingTable"): (HRESULT, (P, P, P)),
    ("IDMLDevice", "GetDeviceRemovedReason"): (HRESULT, ()),
    ("IDMLDispatchable", "GetBindingProperties"): (DML_BINDING_PROPERTIES, ()),
    ("IDMLBindingTable", "BindInputs"): (VOID, (U32, P)),
    ("IDMLBindingTable", "BindOutputs"): (VOID, (U32, P)),
    ("IDMLBindingTable", "BindTemporaryResource"): (VOID, (P,)),
    ("IDMLBindingTable", "BindPersistentResource"): (VOID, (P,)),
    ("IDMLBindingTable", "Reset"): (HRESULT, (P,)),
    ("IDMLCommandRecorder", "RecordDispatch"): (VOID, (P, P, P)),
}

# DLL entry points: (library, symbol) -> (return type, argument types).
EXPORTS: dict[tuple[str, str], tuple[object, tuple]] = {
    ("dxgi", "CreateDXGIFactory1"): (HRESULT, (P, P)),                 # (REFIID, void**)
    # (IUnknown* adapter, D3D_FEATURE_LEVEL minimum, REFIID, void**)
    ("d3d12", "D3D12CreateDevice"): (HRESULT, (P, U32, P, P)),
    # (ID3D12Device*, DML_CREATE_DEVICE_FLAGS, DML_FEATURE_LEVEL minimum, REFIID, void**)
    ("directml", "DMLCreateDevice1"): (HRESULT, (P, U32, U32, P, P)),
}


def methods(interface: str) -> list[str]:
    """Every method of ``interface`` in vtable order, inherited ones first."""
    base, _, declared = INTERFACES[interface]
    return (methods(base) if base else []) + list(declared)


def declaring(interface: str, method: str) -> str:
    """The interface (``interface`` or one of its bases) that declares ``method`` last."""
    chain = []
    name: str | None = interface
    while name:
        chain.append(name)
        name = INTERFACES[name][0]
    for declared in chain:
        if method in INTERFACES[declared][2]:
            return declared
    raise KeyError(f"{interface} has no method {method}")


def slot(interface: str, method: str) -> int:
    """The vtable index of ``method`` called through ``interface``."""
    owner = declaring(interface, method)
    base = INTERFACES[owner][0]
    index = INTERFACES[owner][2].index(method)
    return len(methods(base)) + index if base else index


def signature(interface: str, method: str):
    return SIGNATURES[(declaring(interface, method), method)]


def iid(interface: str) -> str:
    value = INTERFACES[interface][1]
    if value is None:
        raise KeyError(f"no IID recorded for {interface}")
    return value
