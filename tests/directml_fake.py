"""A fake DirectML + Direct3D 12 + DXGI, at the level of entry points and COM vtables.

Test support code (tests/, not shipped in the rngcheck package): tests/test_directml_fake.py
runs the DirectML backend over it, tests/test_directml_fake_vs_real.py holds it to real
DirectML.

It stands where DirectML.dll, d3d12.dll and dxgi.dll stand: ``FakeDirectML`` provides the
addresses of ``CreateDXGIFactory1``, ``D3D12CreateDevice`` and ``DMLCreateDevice1`` (ctypes
callbacks), and every object they hand out is real memory whose first word points to a
vtable of callbacks laid out by rngcheck.backends.directml.interfaces. So the backend's own
code runs unchanged over it: the structures it builds in memory, the pointers it passes,
the slot numbers, the ABI lowering of by-value structure returns (either ABI), the
resource states, copies and bindings.

What the fake does:
  * records every call, in order, in ``calls`` as (interface, method) (exports as ("export", name));
  * records misuse it can detect in ``violations`` (an unimplemented slot was called, a
    barrier whose StateBefore is not the resource's state, a copy or binding out of range,
    a dispatch with a missing or too small binding, a fence waited on that can never
    complete, a Map of a default-heap buffer, ...); tests require it to stay empty;
  * refuses a DML_RANDOM_GENERATOR description with E_INVALIDARG where DirectML's documented
    rules (as rngcheck.description states them, at the fake device's feature level) refuse
    it, and where real DirectML was seen to refuse it (an output whose elements alias: both
    Linux builds, tests/test_directml_fake_vs_real.py), decoding the C structures it was
    given, never the Python call;
  * on ExecuteCommandLists, performs the recorded copies and barriers, and for a dispatch of
    the compiled operator runs rngcheck.reference on the bytes of the bound buffers, as the
    tensor descriptions it was given describe them. A backend that builds its descriptions
    or bindings wrongly therefore produces wrong words, and the conformance suite says so.
It is no model of DirectML's performance, alignment preferences or undocumented checks.
"""

from __future__ import annotations

import ctypes
from ctypes import addressof, c_int32, c_uint32, c_uint64, c_void_p, sizeof

import numpy as np

from rngcheck import layout, reference
from rngcheck.backends.directml import interfaces as I
from rngcheck.backends.directml import structs as S
from rngcheck.backends.directml.com import NAMED, as_signed, lower
from rngcheck.description import Description, validate
from rngcheck.errors import Rejected

E_INVALIDARG = as_signed(NAMED["E_INVALIDARG"])
E_NOINTERFACE = as_signed(NAMED["E_NOINTERFACE"])
E_NOTIMPL = as_signed(NAMED["E_NOTIMPL"])
E_POINTER = as_signed(NAMED["E_POINTER"])
E_FAIL = as_signed(NAMED["E_FAIL"])
DXGI_ERROR_NOT_FOUND = as_signed(NAMED["DXGI_ERROR_NOT_FOUND"])
DXGI_ERROR_UNSUPPORTED = as_signed(NAMED["DXGI_ERROR_UNSUPPORTED"])
DESCRIPTOR_SIZE = 32
NUMPY_NAMES = {value: name for name, value in S.NUMPY_DATA_TYPES.items()}


def read(cls, address):
    """A copy of the ``cls`` structure at ``address``."""
    if not address:
        raise FakeError(f"null {cls.__name__} pointer")
    return cls.from_buffer_copy(ctypes.string_at(address, sizeof(cls)))


def read_uints(address, count):
    return [] if count == 0 else list((c_uint32 * count).from_address(address))


class FakeError(Exception):
    """A misuse the fake detected; the call returns E_INVALIDARG (or E_FAIL) and it is recorded."""


class Obj:
    """One fake COM object."""

    def __init__(self, interface, **state):
        self.interface = interface
        self.refs = 1
        self.memory = (c_void_p * 2)()
        self.__dict__.update(state)

    @property
    def address(self):
        return addressof(self.memory)


class Tensor:
    """A decoded DML_BUFFER_TENSOR_DESC."""

    def __init__(self, buffer: S.DML_BUFFER_TENSOR_DESC):
        self.data_type = S.DATA_TYPE_NAMES.get(buffer.DataType, f"#{buffer.DataType}")
        self.flags = buffer.Flags
        count = buffer.DimensionCount
        sizes_address = ctypes.cast(buffer.Sizes, c_void_p).value
        strides_address = ctypes.cast(buffer.Strides, c_void_p).value
        if count and not sizes_address:
            raise FakeError("DML_BUFFER_TENSOR_DESC.Sizes is null")
        self.sizes = tuple(read_uints(sizes_address, count)) if count else ()
        self.strides = tuple(read_uints(strides_address, count)) if strides_address else None
        self.total_bytes = buffer.TotalTensorSizeInBytes
        self.alignment = buffer.GuaranteedBaseOffsetAlignment

    @property
    def numpy_name(self):
        return NUMPY_NAMES.get(self.data_type, self.data_type.lower())

    @property
    def element_bytes(self):
        return S.DATA_TYPE_BYTES.get(self.data_type, 4)


def decode_tensor(address):
    if not address:
        return None
    desc = read(S.DML_TENSOR_DESC, address)
    if desc.Type != S.DML_TENSOR_TYPE_BUFFER:
        raise Rejected(f"DML_TENSOR_DESC.Type {desc.Type} is not DML_TENSOR_TYPE_BUFFER")
    return Tensor(read(S.DML_BUFFER_TENSOR_DESC, desc.Desc))


class FakeDirectML:
    """Entry points and objects of a fake DirectML device; pass as ``exports`` to DirectMLBackend."""

    def __init__(self, *, abi: str = "sysv", platform: str = "windows", feature_level=(6, 4),
                 adapters=(("Fake DirectML GPU", 0x1414, 0x0001, 0),
                           ("Microsoft Basic Render Driver", 0x1414, 0x008C, S.DXGI_ADAPTER_FLAG_SOFTWARE)),
                 warp_index: int = 1, operator_properties=(3, 1024, 256), initializer_properties=(1, 0, 0),
                 driver_version=(31, 0, 101, 4255), directml_version="1.15.4 (fake)", asynchronous: bool = True,
                 known_levels=None, in_place_state: bool = False):
        self.abi = abi
        self.in_place_state = in_place_state  # a broken driver: the advanced state is written over the input
        self.asynchronous = asynchronous    # work runs only when a fence wait needs it, as on a GPU
        self.removed_reason = None          # an HRESULT: the device is removed at the next wait
        self.known_levels = known_levels    # an older DirectML: refuses queries about newer levels
        self.platform = platform
        self.level = tuple(feature_level)
        self.adapters = list(adapters)
        self.warp_index = warp_index
        self.operator_properties = operator_properties
        self.initializer_properties = initializer_properties
        self.driver_version = driver_version
        self.directml_version = directml_version
        self.libraries = {"d3d12": "fake", "directml": "fake"}
        if platform == "windows":
            self.libraries["dxgi"] = "fake"
        self.paths = {name: f"<fake {name}>" for name in self.libraries}
        self.calls: list[tuple[str, str]] = []
        self.violations: list[str] = []
        self.fail: dict[tuple[str, str], int] = {}     # (interface, method) -> HRESULT to return
        self.objects: dict[int, Obj] = {}
        self.executions = 0
        self._vtables = {}
        self._callbacks = []
        self._exports = {}
        self._heaps = 0

    # -- the Exports protocol (rngcheck.backends.directml.exports.Exports) -----------------

    @property
    def has_dxgi(self):
        return "dxgi" in self.libraries

    def address(self, library, symbol):
        restype, argtypes = I.EXPORTS[(library, symbol)]
        if library not in self.libraries:
            raise FakeError(f"{library} is absent on {self.platform}")
        if symbol not in self._exports:
            implementation = getattr(self, f"export_{symbol}")

            def entry(*args, _symbol=symbol, _implementation=implementation):
                self.calls.append(("export", _symbol))
                return self._guard(lambda: _implementation(*args))

            callback = ctypes.CFUNCTYPE(restype, *argtypes)(entry)
            self._exports[symbol] = callback
        return ctypes.cast(self._exports[symbol], c_void_p).value

    # -- objects and vtables --------------------------------------------------------------

    def live(self):
        """Objects not yet released to a reference count of zero."""
        return [o for o in self.objects.values() if o.refs > 0]

    def method_names(self):
        return [method for _, method in self.calls]

    def _new(self, interface, **state) -> Obj:
        obj = Obj(interface, **state)
        obj.memory[0] = self._vtable(interface)
        self.objects[obj.address] = obj
        return obj

    def _out(self, ppv, obj: Obj):
        if not ppv:
            raise FakeError("null output pointer")
        c_void_p.from_address(ppv).value = obj.address
        return 0

    def _get(self, address, *kinds) -> Obj:
        obj = self.objects.get(address or 0)
        if obj is None:
            raise FakeError(f"0x{address or 0:x} is not an object of this fake")
        if obj.refs <= 0:
            raise FakeError(f"{obj.interface} at 0x{address:x} used after its last Release")
        if kinds and obj.interface not in kinds:
            raise FakeError(f"expected {'/'.join(kinds)}, got {obj.interface}")
        return obj

    def _check_riid(self, riid, *interfaces):
        given = str(read(S.GUID, riid))
        if given not in {I.iid(name) for name in interfaces}:
            raise FakeError(f"riid {given} is not {'/'.join(interfaces)}")

    def _guard(self, function):
        try:
            result = function()
            return 0 if result is None else result
        except Rejected:
            return E_INVALIDARG
        except FakeError as error:
            self.violations.append(str(error))
            return E_INVALIDARG
        except Exception as error:   # a bug in the fake itself must not pass silently
            self.violations.append(f"fake raised {type(error).__name__}: {error}")
            return E_FAIL

    def _vtable(self, interface):
        if interface not in self._vtables:
            names = I.methods(interface)
            table = (c_void_p * len(names))()
            for index, method in enumerate(names):
                table[index] = self._method_callback(interface, method)
            self._vtables[interface] = table
        return addressof(self._vtables[interface])

    def _method_callback(self, interface, method):
        owner = I.declaring(interface, method)
        implementation = getattr(self, f"{owner}_{method}", None)
        if implementation is None or (owner, method) not in I.SIGNATURES:
            def unimplemented(this, _name=f"{interface}::{method}"):
                self.calls.append((interface, method))
                self.violations.append(f"unimplemented {_name} called")
                return E_NOTIMPL
            callback = ctypes.CFUNCTYPE(c_int32, c_void_p)(unimplemented)
            self._callbacks.append(callback)
            return ctypes.cast(callback, c_void_p).value
        restype, argtypes = I.SIGNATURES[(owner, method)]
        c_restype, c_argtypes, how = lower(restype, argtypes, self.abi)

        def entry(*args):
            if how == "before-this":
                ret, this, rest = args[0], args[1], args[2:]
            elif how == "after-this":
                this, ret, rest = args[0], args[1], args[2:]
            else:
                this, ret, rest = args[0], None, args[1:]
            self.calls.append((interface, method))
            failure = self.fail.get((interface, method)) or self.fail.get((owner, method))
            if failure is not None:
                return as_signed(failure)
            if restype is S.HRESULT:
                return self._guard(lambda: implementation(self._get(this), *rest))
            try:
                value = implementation(self._get(this), *rest)
            except (FakeError, Rejected) as error:
                self.violations.append(f"{interface}::{method}: {error}")
                value = restype() if how else 0
            if how is None:
                return value
            if how == "register":
                return int.from_bytes(bytes(value), "little")
            ctypes.memmove(ret, addressof(value), sizeof(value))
            return ret

        callback = ctypes.CFUNCTYPE(c_restype, *c_argtypes)(entry)
        self._callbacks.append(callback)
        return ctypes.cast(callback, c_void_p).value

    # -- exports ---------------------------------------------------------------------------

    def export_CreateDXGIFactory1(self, riid, ppv):
        self._check_riid(riid, "IDXGIFactory1", "IDXGIFactory4")
        return self._out(ppv, self._new("IDXGIFactory4"))

    def export_D3D12CreateDevice(self, adapter, minimum_level, riid, ppv):
        self._check_riid(riid, "ID3D12Device")
        if adapter:
            index = self._get(adapter, "IDXGIAdapter1").index
        else:
            index = 0
        if minimum_level > 0xC200:
            return DXGI_ERROR_UNSUPPORTED
        return self._out(ppv, self._new("ID3D12Device", adapter=index))

    def export_DMLCreateDevice1(self, device, flags, minimum_level, riid, ppv):
        self._get(device, "ID3D12Device")
        self._check_riid(riid, "IDMLDevice")
        if flags not in (S.DML_CREATE_DEVICE_FLAG_NONE, S.DML_CREATE_DEVICE_FLAG_DEBUG):
            raise FakeError(f"DML_CREATE_DEVICE_FLAGS {flags}")
        if S.feature_level_tuple(minimum_level) > self.level:
            return DXGI_ERROR_UNSUPPORTED
        return self._out(ppv, self._new("IDMLDevice", d3d12=device))

    # -- IUnknown ----------------------------------------------------------------------------

    def IUnknown_QueryInterface(self, obj, riid, ppv):
        wanted = str(read(S.GUID, riid))
        name = obj.interface
        while name:
            if I.INTERFACES[name][1] == wanted:
                obj.refs += 1
                return self._out(ppv, obj)
            name = I.INTERFACES[name][0]
        return E_NOINTERFACE

    def IUnknown_AddRef(self, obj):
        obj.refs += 1
        return obj.refs

    def IUnknown_Release(self, obj):
        obj.refs -= 1
        return obj.refs

    # -- DXGI --------------------------------------------------------------------------------

    def _adapter(self, index):
        return self._new("IDXGIAdapter1", index=index)

    def IDXGIFactory1_EnumAdapters1(self, obj, index, ppv):
        if index >= len(self.adapters):
            return DXGI_ERROR_NOT_FOUND
        return self._out(ppv, self._adapter(index))

    def IDXGIFactory4_EnumWarpAdapter(self, obj, riid, ppv):
        self._check_riid(riid, "IDXGIAdapter", "IDXGIAdapter1")
        return self._out(ppv, self._adapter(self.warp_index))

    def IDXGIAdapter1_GetDesc1(self, obj, desc_address):
        name, vendor, device, flags = self.adapters[obj.index]
        desc = S.DXGI_ADAPTER_DESC1()
        S.set_adapter_name(desc, name)
        desc.VendorId, desc.DeviceId, desc.Flags = vendor, device, flags
        ctypes.memmove(desc_address, addressof(desc), sizeof(desc))

    def IDXGIAdapter_CheckInterfaceSupport(self, obj, guid, version_address):
        self._check_riid(guid, "IDXGIDevice")
        a, b, c, d = self.driver_version
        c_uint64.from_address(version_address).value = (a << 48) | (b << 32) | (c << 16) | d

    # -- ID3D12Device ------------------------------------------------------------------------

    def ID3D12Device_CreateCommandQueue(self, obj, desc, riid, ppv):
        queue_desc = read(S.D3D12_COMMAND_QUEUE_DESC, desc)
        if queue_desc.Type not in (S.D3D12_COMMAND_LIST_TYPE_DIRECT, S.D3D12_COMMAND_LIST_TYPE_COMPUTE):
            raise FakeError(f"command queue type {queue_desc.Type}")
        self._check_riid(riid, "ID3D12CommandQueue")
        return self._out(ppv, self._new("ID3D12CommandQueue", type=queue_desc.Type))

    def ID3D12Device_CreateCommandAllocator(self, obj, kind, riid, ppv):
        self._check_riid(riid, "ID3D12CommandAllocator")
        return self._out(ppv, self._new("ID3D12CommandAllocator", type=kind))

    def ID3D12Device_CreateCommandList(self, obj, node_mask, kind, allocator, pipeline, riid, ppv):
        self._get(allocator, "ID3D12CommandAllocator")
        self._check_riid(riid, "ID3D12GraphicsCommandList")
        return self._out(ppv, self._new("ID3D12GraphicsCommandList", type=kind, open=True, commands=[], heaps=()))

    def ID3D12Device_CreateDescriptorHeap(self, obj, desc, riid, ppv):
        heap_desc = read(S.D3D12_DESCRIPTOR_HEAP_DESC, desc)
        if heap_desc.Type != S.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV or not heap_desc.NumDescriptors:
            raise FakeError(f"descriptor heap type {heap_desc.Type}, {heap_desc.NumDescriptors} descriptors")
        self._check_riid(riid, "ID3D12DescriptorHeap")
        self._heaps += 1
        return self._out(ppv, self._new("ID3D12DescriptorHeap", count=heap_desc.NumDescriptors,
                                        visible=bool(heap_desc.Flags & S.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE),
                                        cpu=0x10_0000 * self._heaps, gpu=0x7F00_0000_0000 + 0x10_0000 * self._heaps))

    def ID3D12Device_CreateCommittedResource(self, obj, properties, heap_flags, desc, state, clear, riid, ppv):
        heap = read(S.D3D12_HEAP_PROPERTIES, properties)
        resource = read(S.D3D12_RESOURCE_DESC, desc)
        self._check_riid(riid, "ID3D12Resource")
        if (resource.Dimension != S.D3D12_RESOURCE_DIMENSION_BUFFER or resource.Height != 1
                or resource.DepthOrArraySize != 1 or resource.MipLevels != 1 or resource.Format != S.DXGI_FORMAT_UNKNOWN
                or resource.SampleDesc.Count != 1 or resource.Layout != S.D3D12_TEXTURE_LAYOUT_ROW_MAJOR
                or resource.Width == 0):
            raise FakeError("CreateCommittedResource: not a valid buffer description")
        if heap.Type not in (S.D3D12_HEAP_TYPE_DEFAULT, S.D3D12_HEAP_TYPE_UPLOAD, S.D3D12_HEAP_TYPE_READBACK):
            raise FakeError(f"heap type {heap.Type}")
        required = {S.D3D12_HEAP_TYPE_UPLOAD: S.D3D12_RESOURCE_STATE_GENERIC_READ,
                    S.D3D12_HEAP_TYPE_READBACK: S.D3D12_RESOURCE_STATE_COPY_DEST}.get(heap.Type)
        if required is not None and state != required:
            raise FakeError(f"a heap of type {heap.Type} must start in state 0x{required:x}, not 0x{state:x}")
        if resource.Flags & S.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS and heap.Type != S.D3D12_HEAP_TYPE_DEFAULT:
            raise FakeError("ALLOW_UNORDERED_ACCESS on an upload/readback heap")
        if clear:
            raise FakeError("an optimized clear value for a buffer")
        fill = np.frombuffer(np.uint32(0xCDCDCDCD).tobytes() * (-(-resource.Width // 4)), dtype=np.uint8)
        return self._out(ppv, self._new("ID3D12Resource", heap=heap.Type, width=resource.Width,
                                        flags=resource.Flags, state=state, data=fill[:resource.Width].copy(),
                                        mapped=0))

    def ID3D12Device_CreateFence(self, obj, initial, flags, riid, ppv):
        self._check_riid(riid, "ID3D12Fence")
        return self._out(ppv, self._new("ID3D12Fence", value=initial))

    def ID3D12Device_GetDeviceRemovedReason(self, obj):
        return 0 if self.removed_reason is None else as_signed(self.removed_reason)

    # -- queue, allocator, list, fence, heap, resource ---------------------------------------

    def ID3D12CommandAllocator_Reset(self, obj):
        pass

    def ID3D12GraphicsCommandList_Close(self, obj):
        if not obj.open:
            raise FakeError("Close of a closed command list")
        obj.open = False

    def ID3D12GraphicsCommandList_Reset(self, obj, allocator, pipeline):
        self._get(allocator, "ID3D12CommandAllocator")
        if obj.open:
            raise FakeError("Reset of an open command list")
        obj.open, obj.commands, obj.heaps = True, [], ()

    def _record(self, obj, command):
        if not obj.open:
            raise FakeError(f"{command[0]} recorded on a closed command list")
        obj.commands.append(command)

    def ID3D12GraphicsCommandList_SetDescriptorHeaps(self, obj, count, heaps):
        pointers = [c_void_p.from_address(heaps + 8 * i).value for i in range(count)]
        self._record(obj, ("heaps", tuple(self._get(p, "ID3D12DescriptorHeap") for p in pointers)))

    def ID3D12GraphicsCommandList_CopyBufferRegion(self, obj, dst, dst_offset, src, src_offset, size):
        self._record(obj, ("copy", self._get(dst, "ID3D12Resource"), dst_offset,
                           self._get(src, "ID3D12Resource"), src_offset, size))

    def ID3D12GraphicsCommandList_ResourceBarrier(self, obj, count, barriers):
        items = []
        for i in range(count):
            barrier = read(S.D3D12_RESOURCE_BARRIER, barriers + i * sizeof(S.D3D12_RESOURCE_BARRIER))
            if barrier.Type == S.D3D12_RESOURCE_BARRIER_TYPE_UAV:
                items.append(("uav", self._get(barrier.UAV.pResource) if barrier.UAV.pResource else None))
            elif barrier.Type == S.D3D12_RESOURCE_BARRIER_TYPE_TRANSITION:
                t = barrier.Transition
                items.append(("transition", self._get(t.pResource, "ID3D12Resource"), t.StateBefore, t.StateAfter))
            else:
                raise FakeError(f"barrier type {barrier.Type}")
        self._record(obj, ("barrier", items))

    def ID3D12CommandQueue_ExecuteCommandLists(self, obj, count, lists):
        for i in range(count):
            command_list = self._get(c_void_p.from_address(lists + 8 * i).value, "ID3D12GraphicsCommandList")
            if command_list.open:
                raise FakeError("ExecuteCommandLists of an open command list")
            obj.__dict__.setdefault("pending", []).append(("run", list(command_list.commands)))
        if not self.asynchronous:
            self._drain(obj)

    def ID3D12CommandQueue_Signal(self, obj, fence, value):
        obj.__dict__.setdefault("pending", []).append(("signal", self._get(fence, "ID3D12Fence"), value))
        obj.__dict__.setdefault("fences", set()).add(fence)
        if not self.asynchronous:
            self._drain(obj)

    def _drain(self, queue, until=None):
        """Run the queue's pending work in order (up to the signal of ``until`` = (fence, value))."""
        pending = queue.__dict__.get("pending", [])
        while pending:
            item = pending.pop(0)
            if item[0] == "run":
                self._execute_commands(item[1])
            else:
                _, fence, value = item
                fence.value = value
                if until and fence is until[0] and value >= until[1]:
                    return

    def ID3D12Fence_GetCompletedValue(self, obj):
        return obj.value

    def ID3D12Fence_SetEventOnCompletion(self, obj, value, event):
        if event:
            raise FakeError("SetEventOnCompletion with an event handle (the fake only blocks on NULL)")
        for queue in [o for o in self.objects.values() if o.interface == "ID3D12CommandQueue"]:
            if obj.value < value and obj.address in queue.__dict__.get("fences", ()):
                self._drain(queue, (obj, value))
        if self.removed_reason is not None:
            obj.value = 0xFFFFFFFFFFFFFFFF
        if obj.value < value:
            raise FakeError(f"waiting for fence value {value}, which is never signalled (at {obj.value})")

    def ID3D12DescriptorHeap_GetCPUDescriptorHandleForHeapStart(self, obj):
        return S.D3D12_CPU_DESCRIPTOR_HANDLE(obj.cpu)

    def ID3D12DescriptorHeap_GetGPUDescriptorHandleForHeapStart(self, obj):
        if not obj.visible:
            raise FakeError("GPU handle of a heap that is not shader visible")
        return S.D3D12_GPU_DESCRIPTOR_HANDLE(obj.gpu)

    def ID3D12Resource_Map(self, obj, subresource, read_range, ppv):
        if obj.heap == S.D3D12_HEAP_TYPE_DEFAULT:
            raise FakeError("Map of a default-heap buffer")
        if subresource != 0:
            raise FakeError(f"Map of subresource {subresource}")
        obj.mapped += 1
        c_void_p.from_address(ppv).value = obj.data.ctypes.data

    def ID3D12Resource_Unmap(self, obj, subresource, written_range):
        if obj.mapped <= 0:
            raise FakeError("Unmap of a buffer that is not mapped")
        obj.mapped -= 1

    # -- IDMLDevice ----------------------------------------------------------------------------

    def IDMLDevice_CheckFeatureSupport(self, obj, feature, query_size, query, data_size, data):
        if feature != S.DML_FEATURE_FEATURE_LEVELS:
            raise FakeError(f"CheckFeatureSupport feature {feature}")
        if (query_size != sizeof(S.DML_FEATURE_QUERY_FEATURE_LEVELS)
                or data_size != sizeof(S.DML_FEATURE_DATA_FEATURE_LEVELS)):
            raise FakeError("CheckFeatureSupport: wrong structure sizes")
        request = read(S.DML_FEATURE_QUERY_FEATURE_LEVELS, query)
        levels = read_uints(ctypes.cast(request.RequestedFeatureLevels, c_void_p).value,
                            request.RequestedFeatureLevelCount)
        if self.known_levels is not None and any(S.feature_level_tuple(level) > self.known_levels for level in levels):
            raise FakeError("CheckFeatureSupport: a feature level this (older) DirectML does not know")
        supported = [level for level in levels if S.feature_level_tuple(level) <= self.level]
        if not supported:
            raise FakeError("no requested feature level is supported")
        c_uint32.from_address(data).value = max(supported)

    def IDMLDevice_CreateOperator(self, obj, desc, riid, ppv):
        self._check_riid(riid, "IDMLOperator")
        operator = read(S.DML_OPERATOR_DESC, desc)
        if operator.Type != S.DML_OPERATOR_RANDOM_GENERATOR:
            raise Rejected(f"operator type {operator.Type}")
        random = read(S.DML_RANDOM_GENERATOR_OPERATOR_DESC, operator.Desc)
        if random.Type != S.DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10:
            raise Rejected(f"generator type {random.Type}")
        address = lambda p: ctypes.cast(p, c_void_p).value  # noqa: E731
        tensors = [decode_tensor(address(random.InputStateTensor)), decode_tensor(address(random.OutputTensor)),
                   decode_tensor(address(random.OutputStateTensor))]
        self._validate(*tensors)
        return self._out(ppv, self._new("IDMLOperator", tensors=tensors))

    def _validate(self, state, output, output_state):
        """DirectML's documented rules for this operator, on the decoded descriptions."""
        if state is None or output is None:
            raise Rejected("InputStateTensor and OutputTensor are required")
        for tensor in filter(None, (state, output, output_state)):
            if tensor.flags != S.DML_TENSOR_FLAG_NONE:
                raise Rejected("tensor flags")
            if tensor.alignment and (tensor.alignment & (tensor.alignment - 1)
                                     or tensor.alignment < S.DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT):
                raise Rejected("GuaranteedBaseOffsetAlignment")
            if tensor.total_bytes % 4:
                raise Rejected("TotalTensorSizeInBytes is not a multiple of 4")
            if tensor.sizes and 0 not in tensor.sizes and tensor.data_type in S.DATA_TYPE_BYTES:
                needed = layout.required_bytes(tensor.sizes, tensor.strides, tensor.element_bytes)
                if tensor.total_bytes < needed and tensor is not output:
                    raise Rejected("TotalTensorSizeInBytes below DMLCalcBufferTensorSize")
        validate(Description(
            state_sizes=state.sizes, output_sizes=output.sizes, output_strides=output.strides,
            output_state_sizes=output_state.sizes if output_state else None,
            buffer_elements=output.total_bytes // output.element_bytes, feature_level=self.level,
            state_dtype=state.numpy_name, output_dtype=output.numpy_name))
        if output_state is not None and output_state.data_type != state.data_type:
            raise Rejected("data-type: OutputStateTensor differs from InputStateTensor")
        if layout.aliases(output.sizes, output.strides):     # observed on real DirectML, not documented
            raise Rejected("OutputTensor elements alias (stride 0 or overlapping)")

    def IDMLDevice_CompileOperator(self, obj, operator, flags, riid, ppv):
        op = self._get(operator, "IDMLOperator")
        self._check_riid(riid, "IDMLCompiledOperator")
        return self._out(ppv, self._new("IDMLCompiledOperator", tensors=op.tensors, flags=flags,
                                        properties=self.operator_properties, initialized=False))

    def IDMLDevice_CreateOperatorInitializer(self, obj, count, operators, riid, ppv):
        self._check_riid(riid, "IDMLOperatorInitializer")
        compiled = [self._get(c_void_p.from_address(operators + 8 * i).value, "IDMLCompiledOperator")
                    for i in range(count)]
        return self._out(ppv, self._new("IDMLOperatorInitializer", operators=compiled,
                                        properties=self.initializer_properties))

    def IDMLDevice_CreateCommandRecorder(self, obj, riid, ppv):
        self._check_riid(riid, "IDMLCommandRecorder")
        return self._out(ppv, self._new("IDMLCommandRecorder"))

    def IDMLDevice_CreateBindingTable(self, obj, desc, riid, ppv):
        self._check_riid(riid, "IDMLBindingTable")
        table = self._new("IDMLBindingTable")
        self._reset_table(table, desc)
        return self._out(ppv, table)

    def IDMLDevice_GetDeviceRemovedReason(self, obj):
        return 0

    def IDMLDispatchable_GetBindingProperties(self, obj):
        count, temporary, persistent = obj.properties
        return S.DML_BINDING_PROPERTIES(count, temporary, persistent)

    # -- IDMLBindingTable, IDMLCommandRecorder ---------------------------------------------------

    def _reset_table(self, table, desc):
        if not desc:
            raise FakeError("binding table description is null")
        d = read(S.DML_BINDING_TABLE_DESC, desc)
        dispatchable = self._get(d.Dispatchable, "IDMLCompiledOperator", "IDMLOperatorInitializer")
        heaps = [o for o in self.objects.values() if o.interface == "ID3D12DescriptorHeap" and o.refs > 0]
        heap = next((h for h in heaps if h.cpu <= d.CPUDescriptorHandle.ptr < h.cpu + h.count * DESCRIPTOR_SIZE), None)
        if heap is None:
            raise FakeError("binding table CPU handle is in no descriptor heap")
        if d.GPUDescriptorHandle.ptr - heap.gpu != d.CPUDescriptorHandle.ptr - heap.cpu:
            raise FakeError("binding table CPU and GPU handles point at different descriptors")
        available = heap.count - (d.CPUDescriptorHandle.ptr - heap.cpu) // DESCRIPTOR_SIZE
        if d.SizeInDescriptors < dispatchable.properties[0] or d.SizeInDescriptors > available:
            raise FakeError(f"binding table of {d.SizeInDescriptors} descriptors (needs "
                            f"{dispatchable.properties[0]}, heap has {available})")
        table.dispatchable, table.heap = dispatchable, heap
        table.inputs, table.outputs, table.temporary, table.persistent = None, None, None, None

    def _bindings(self, count, descs):
        result = []
        for i in range(count):
            desc = read(S.DML_BINDING_DESC, descs + i * sizeof(S.DML_BINDING_DESC))
            if desc.Type == S.DML_BINDING_TYPE_NONE:
                result.append(None)
            elif desc.Type == S.DML_BINDING_TYPE_BUFFER:
                b = read(S.DML_BUFFER_BINDING, desc.Desc)
                resource = self._get(b.Buffer, "ID3D12Resource")
                if b.Offset + b.SizeInBytes > resource.width:
                    raise FakeError(f"binding [{b.Offset}, +{b.SizeInBytes}) outside a {resource.width}-byte buffer")
                if b.Offset % S.DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT:
                    raise FakeError(f"binding offset {b.Offset} not aligned to 16")
                result.append((resource, b.Offset, b.SizeInBytes))
            else:
                raise FakeError(f"binding type {desc.Type}")
        return result

    def IDMLBindingTable_BindInputs(self, obj, count, descs):
        obj.inputs = self._bindings(count, descs)

    def IDMLBindingTable_BindOutputs(self, obj, count, descs):
        obj.outputs = self._bindings(count, descs)

    def IDMLBindingTable_BindTemporaryResource(self, obj, desc):
        obj.temporary = self._bindings(1, desc)[0] if desc else None

    def IDMLBindingTable_BindPersistentResource(self, obj, desc):
        obj.persistent = self._bindings(1, desc)[0] if desc else None

    def IDMLBindingTable_Reset(self, obj, desc):
        self._reset_table(obj, desc)

    def IDMLCommandRecorder_RecordDispatch(self, obj, command_list, dispatchable, table):
        commands = self._get(command_list, "ID3D12GraphicsCommandList")
        target = self._get(dispatchable, "IDMLCompiledOperator", "IDMLOperatorInitializer")
        bound = self._get(table, "IDMLBindingTable")
        if bound.dispatchable is not target:
            raise FakeError("RecordDispatch with a binding table made for another dispatchable")
        snapshot = dict(inputs=bound.inputs, outputs=bound.outputs, temporary=bound.temporary,
                        persistent=bound.persistent, heap=bound.heap)
        self._record(commands, ("dispatch", target, snapshot))

    # -- execution -----------------------------------------------------------------------------

    def _execute_commands(self, commands):
        try:
            self._run_commands(commands)
        except FakeError as error:   # on the GPU timeline: no HRESULT to return, only the record
            self.violations.append(f"execution: {error}")

    def _run_commands(self, commands):
        heaps = ()
        for command in commands:
            kind = command[0]
            if kind == "heaps":
                heaps = command[1]
            elif kind == "copy":
                _, dst, dst_offset, src, src_offset, size = command
                if dst.state != S.D3D12_RESOURCE_STATE_COPY_DEST:
                    raise FakeError(f"copy into a buffer in state 0x{dst.state:x}")
                if not src.state & S.D3D12_RESOURCE_STATE_COPY_SOURCE:
                    raise FakeError(f"copy from a buffer in state 0x{src.state:x}")
                if dst_offset + size > dst.width or src_offset + size > src.width:
                    raise FakeError("copy out of range")
                dst.data[dst_offset:dst_offset + size] = src.data[src_offset:src_offset + size]
            elif kind == "barrier":
                for item in command[1]:
                    if item[0] == "transition":
                        _, resource, before, after = item
                        if resource.state != before:
                            raise FakeError(f"barrier StateBefore 0x{before:x}, "
                                            f"but the buffer is in 0x{resource.state:x}")
                        resource.state = after
            elif kind == "dispatch":
                _, target, bindings = command
                if bindings["heap"] not in heaps:
                    raise FakeError("dispatch without the binding table's descriptor heap set")
                self._dispatch(target, bindings)

    def _require(self, binding, size, what):
        if binding is None:
            raise FakeError(f"{what} is not bound")
        resource, offset, bound = binding
        if bound < size:
            raise FakeError(f"{what}: {bound} bytes bound, {size} needed")
        if resource.heap != S.D3D12_HEAP_TYPE_DEFAULT or resource.state != S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS:
            raise FakeError(f"{what}: the buffer is not a default-heap buffer in UNORDERED_ACCESS")
        return resource.data[offset:offset + bound]

    def _dispatch(self, target, bindings):
        count, temporary, persistent = target.properties
        if temporary:
            self._require(bindings["temporary"], temporary, "temporary resource")
        if target.interface == "IDMLOperatorInitializer":
            for compiled in target.operators:
                if compiled.properties[2]:
                    outputs = bindings["outputs"] or []
                    self._require(outputs[0] if outputs else None, compiled.properties[2],
                                  "persistent resource (initializer output)")
                compiled.initialized = True
            return
        if not target.initialized:
            raise FakeError("dispatch of a compiled operator that was never initialized")
        if persistent:
            self._require(bindings["persistent"], persistent, "persistent resource")
        state_desc, output_desc, output_state_desc = target.tensors
        inputs, outputs = bindings["inputs"] or [], bindings["outputs"] or []
        if len(inputs) != 1 or len(outputs) != 2:
            raise FakeError(f"{len(inputs)} inputs and {len(outputs)} outputs bound (1 and 2 expected)")
        state_bytes = self._require(inputs[0], state_desc.total_bytes, "InputStateTensor")
        output_bytes = self._require(outputs[0], output_desc.total_bytes, "OutputTensor")
        if output_state_desc is None:
            if outputs[1] is not None:
                raise FakeError("OutputStateTensor bound but not described")
        else:
            out_state_bytes = self._require(outputs[1], output_state_desc.total_bytes, "OutputStateTensor")
        state = state_bytes[:24].view(np.uint32).reshape(state_desc.sizes)
        words = output_bytes[:output_desc.total_bytes].view(np.uint32)
        new_state = reference.random_generator(state, output_desc.sizes, output_desc.strides, words,
                                               output_state=output_state_desc is not None,
                                               feature_level=self.level)
        if output_state_desc is not None:
            out_state_bytes[:24] = new_state.astype(np.uint32).view(np.uint8)
            if self.in_place_state:
                state_bytes[:24] = new_state.astype(np.uint32).view(np.uint8)
        self.executions += 1
