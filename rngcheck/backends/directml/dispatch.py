"""The DirectML execution sequence for one DML_RANDOM_GENERATOR call, over rngcheck's COM caller.

Device set-up (once per backend), following DirectML's documented flow:
  [Windows] CreateDXGIFactory1(IDXGIFactory4) -> EnumWarpAdapter / EnumAdapters1(i) ->
  IDXGIAdapter1::GetDesc1, IDXGIAdapter::CheckInterfaceSupport(IDXGIDevice) (driver version);
  D3D12CreateDevice(adapter or NULL on WSL, D3D_FEATURE_LEVEL_11_0) -> command queue, command
  allocator, command list (closed until used), fence; DMLCreateDevice1(min DML_FEATURE_LEVEL_3_0)
  -> IDMLDevice::CheckFeatureSupport(DML_FEATURE_FEATURE_LEVELS) -> the highest feature level.
One execution:
  1. DML_BUFFER_TENSOR_DESCs: InputStateTensor and OutputStateTensor sized by
     DMLCalcBufferTensorSize (rngcheck.layout.required_bytes); OutputTensor with the call's
     sizes, its strides (NULL when packed row-major is meant) and TotalTensorSizeInBytes =
     the whole caller buffer (at least DMLCalcBufferTensorSize, which DirectML checks), so
     words DirectML must not touch (padding, guards) make the round trip and show whether
     it did.
  2. IDMLDevice::CreateOperator (E_INVALIDARG -> rngcheck.Rejected), CompileOperator,
     CreateOperatorInitializer; GetBindingProperties of both.
  3. Shader-visible CBV/SRV/UAV descriptor heap; binding table for the initializer
     (temporary / persistent resources when asked for); record and execute the
     initializer; wait on the fence.
  4. Default-heap buffers (UAV) for the input state, the output and the output state, an
     upload buffer (input state + the prefilled caller buffer), a readback buffer.
  5. Reset the binding table for the compiled operator; BindInputs (input state),
     BindOutputs (output, output state or DML_BINDING_TYPE_NONE); record: copies in,
     COPY_DEST -> UNORDERED_ACCESS barriers, RecordDispatch, UAV barrier,
     UNORDERED_ACCESS -> COPY_SOURCE, copies out; execute; wait; map the readback buffer.
Every object made is released in reverse order.
"""

from __future__ import annotations

import ctypes
from ctypes import addressof, c_uint32, c_uint64, c_void_p, sizeof
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import layout
from ...errors import BackendUnavailable, NotApplicable
from . import structs as S
from .com import Com, HResultError, InvalidArgument, check

UPLOAD_OUTPUT_OFFSET = 256          # the caller buffer's place in the upload / readback buffers
FENCE_REMOVED = 0xFFFFFFFFFFFFFFFF  # a removed device completes every fence with UINT64_MAX


def round_up(value: int, multiple: int) -> int:
    return (value + multiple - 1) // multiple * multiple


def data_type_name(dtype) -> str | None:
    return S.NUMPY_DATA_TYPES.get(np.dtype(dtype).name)


def calc_buffer_tensor_size(data_type: str, sizes, strides) -> int:
    """DMLCalcBufferTensorSize of a tensor of ``data_type``: rngcheck.layout's rule 3 (its one home).

    Not restated here as a cross-check: DirectML itself is that. It checks every tensor's
    TotalTensorSizeInBytes against its own DMLCalcBufferTensorSize and refuses a short one
    (E_INVALIDARG -> Rejected), so on real DirectML a wrong layout.required_bytes shows as a
    refused state tensor, or in the buffer-size cases, whose buffers layout sizes."""
    return layout.required_bytes(sizes, strides, S.DATA_TYPE_BYTES[data_type])


class TensorDesc:
    """A DML_TENSOR_DESC over a DML_BUFFER_TENSOR_DESC, owning the arrays it points to."""

    def __init__(self, data_type: str, sizes, strides, total_bytes: int):
        self.sizes = (c_uint32 * max(1, len(sizes)))(*[int(s) for s in sizes])
        self.strides = None if strides is None else (c_uint32 * max(1, len(strides)))(*[int(s) for s in strides])
        self.buffer = S.DML_BUFFER_TENSOR_DESC(
            DataType=S.DML_TENSOR_DATA_TYPE[data_type],
            Flags=S.DML_TENSOR_FLAG_NONE,
            DimensionCount=len(sizes),
            Sizes=ctypes.cast(self.sizes, ctypes.POINTER(c_uint32)),
            Strides=None if self.strides is None else ctypes.cast(self.strides, ctypes.POINTER(c_uint32)),
            TotalTensorSizeInBytes=int(total_bytes),
            GuaranteedBaseOffsetAlignment=0,
        )
        self.desc = S.DML_TENSOR_DESC(S.DML_TENSOR_TYPE_BUFFER, addressof(self.buffer))
        self.total_bytes = int(total_bytes)


def buffer_tensor_desc(data_type: str, sizes, strides, total_bytes: int) -> TensorDesc:
    """The tensor description DirectML gets (module-level so tests can substitute a broken one)."""
    return TensorDesc(data_type, sizes, strides, total_bytes)


class OperatorDesc:
    """DML_OPERATOR_DESC of type DML_OPERATOR_RANDOM_GENERATOR over its three tensor descs."""

    def __init__(self, input_state: TensorDesc, output: TensorDesc, output_state: TensorDesc | None):
        self.parts = (input_state, output, output_state)
        pointer = ctypes.POINTER(S.DML_TENSOR_DESC)
        self.random = S.DML_RANDOM_GENERATOR_OPERATOR_DESC(
            InputStateTensor=ctypes.pointer(input_state.desc),
            OutputTensor=ctypes.pointer(output.desc),
            OutputStateTensor=ctypes.pointer(output_state.desc) if output_state else pointer(),
            Type=S.DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10,
        )
        self.desc = S.DML_OPERATOR_DESC(S.DML_OPERATOR_RANDOM_GENERATOR, addressof(self.random))


def buffer_binding(resource: int, size: int):
    """(DML_BINDING_DESC, the DML_BUFFER_BINDING it points to) for a whole resource."""
    binding = S.DML_BUFFER_BINDING(resource, 0, size)
    return S.DML_BINDING_DESC(S.DML_BINDING_TYPE_BUFFER, addressof(binding)), binding


def descriptor_array(descs):
    array = (S.DML_BINDING_DESC * max(1, len(descs)))()
    for i, desc in enumerate(descs):
        array[i] = desc
    return array


@dataclass
class Bindings:
    """What one execution binds through (step 3): the binding table and its command recorder, the
    shader-visible descriptor heap (``heaps``, as SetDescriptorHeaps takes it) and its range, the compiled
    operator's binding properties, the temporary and persistent resources (None: not asked for), and every
    ctypes structure handed to DirectML (``keep``: alive until the execution is over)."""

    table: int
    recorder: int
    heaps: Any
    cpu: Any
    gpu: Any
    descriptors: int
    exec_props: Any
    temporary: int | None
    temporary_size: int
    persistent: int | None
    persistent_size: int
    keep: list = field(default_factory=list)

    def bind(self, com: Com, resource: int, size: int, method: str) -> None:
        """One buffer bound by IDMLBindingTable::BindTemporaryResource / BindPersistentResource."""
        desc, binding = buffer_binding(resource, size)
        self.keep.extend([desc, binding])
        com.call(self.table, "IDMLBindingTable", method, addressof(desc))


@dataclass
class Buffers:
    """The buffers of one execution (step 4): default-heap (UAV) ones for the input state, the output
    and the output state (None: not described), the upload and readback buffers, and their sizes in
    bytes; the readback buffer holds the output state at 0, the output at UPLOAD_OUTPUT_OFFSET and the
    input state back at ``input_back``."""

    state_in: int
    output: int
    state_out: int | None
    upload: int
    readback: int
    in_state_bytes: int
    out_bytes: int
    out_state_bytes: int
    input_back: int
    staging_bytes: int


class Device:
    """A D3D12 device, a DirectML device on it, and the queue / list / fence one execution uses.

    Over 20 methods: one per COM step of creating the device (adapter, queue and lists, DirectML device,
    feature level) and of one execution (initialize, stage, bind, dispatch, the buffers, barriers,
    submit), in the order DirectML's documentation gives them; each step uses the device's objects, so
    a split would hand every one of them across."""

    def __init__(self, com: Com, adapter: str = "default"):
        self.com = com
        self._owned: list[int] = []
        self.info: dict[str, str] = {}
        self.fence_value = 0
        try:
            adapter_object = self._adapter(adapter)
            self.device = self._export_create("d3d12", "D3D12CreateDevice", adapter_object,
                                              S.D3D_FEATURE_LEVEL_11_0, riid="ID3D12Device")
            self._queue_and_lists()
            self.dml = self._dml_device()
            self.feature_level = self._feature_level()
            major, minor = self.feature_level
            self.info["feature level"] = f"{major}.{minor}"
        except BaseException:
            self.close()
            raise

    # -- set-up ---------------------------------------------------------------------------

    def _own(self, pointer: int) -> int:
        self._owned.append(pointer)
        return pointer

    def _created(self, out: c_void_p, what: str) -> int:
        if not out.value:
            raise HResultError(what, 0x80004003, "returned S_OK and a null object")
        return out.value

    def _export_create(self, library, symbol, *args, riid):
        out = c_void_p()
        try:
            check(self.com.export(library, symbol, *args, self.com.guid(riid), addressof(out)), symbol)
        except HResultError as error:
            raise BackendUnavailable(f"{symbol} failed: {error}") from None
        return self._own(self._created(out, symbol))

    def _adapter(self, choice: str):
        com = self.com
        if not com.exports.has_dxgi:
            if choice != "default":
                raise BackendUnavailable(f"adapter={choice} needs DXGI (Windows); under WSL and on vkd3d only "
                                         f"the default adapter is available")
            self.info["adapter"] = "default (D3D12CreateDevice with no adapter; no DXGI here to name it)"
            return None
        factory = self._export_create("dxgi", "CreateDXGIFactory1", riid="IDXGIFactory4")
        out = c_void_p()
        if choice == "warp":
            com.hr(factory, "IDXGIFactory4", "EnumWarpAdapter", com.guid("IDXGIAdapter1"), addressof(out))
        else:
            index = 0 if choice == "default" else int(choice)
            result = com.call(factory, "IDXGIFactory1", "EnumAdapters1", index, addressof(out))
            if result & 0xFFFFFFFF == 0x887A0002:   # DXGI_ERROR_NOT_FOUND
                raise BackendUnavailable(f"no DXGI adapter {index}")
                check(result, "IDXGIFactory1::EnumAdapters1")
        adapter = self._own(self._created(out, "adapter enumeration"))
        desc = S.DXGI_ADAPTER_DESC1()
        com.hr(adapter, "IDXGIAdapter1", "GetDesc1", addressof(desc))
        umd = c_uint64()
        driver = "unknown"
        if com.call(adapter, "IDXGIAdapter", "CheckInterfaceSupport", com.guid("IDXGIDevice"), addressof(umd)) >= 0:
            v = umd.value
            driver = f"{v >> 48}.{(v >> 32) & 0xFFFF}.{(v >> 16) & 0xFFFF}.{v & 0xFFFF}"
        self.info.update({
            "adapter": desc.name + (" (software)" if desc.Flags & S.DXGI_ADAPTER_FLAG_SOFTWARE else ""),
            "adapter choice": choice,
            "vendor id": f"0x{desc.VendorId:04X}",
            "device id": f"0x{desc.DeviceId:04X}",
            "driver version": driver,
        })
        return adapter

    def _queue_and_lists(self):
        com, device = self.com, self.device
        queue_desc = S.D3D12_COMMAND_QUEUE_DESC(S.D3D12_COMMAND_LIST_TYPE_DIRECT, 0, S.D3D12_COMMAND_QUEUE_FLAG_NONE, 0)
        self.queue = self._own(com.create(device, "ID3D12Device", "CreateCommandQueue", addressof(queue_desc),
                                          riid="ID3D12CommandQueue"))
        self.allocator = self._own(com.create(device, "ID3D12Device", "CreateCommandAllocator",
                                              S.D3D12_COMMAND_LIST_TYPE_DIRECT, riid="ID3D12CommandAllocator"))
        self.list = self._own(com.create(device, "ID3D12Device", "CreateCommandList", 0,
                                         S.D3D12_COMMAND_LIST_TYPE_DIRECT, self.allocator, None,
                                         riid="ID3D12GraphicsCommandList"))
        com.hr(self.list, "ID3D12GraphicsCommandList", "Close")   # created open; each use resets it
        self.fence = self._own(com.create(device, "ID3D12Device", "CreateFence", 0, S.D3D12_FENCE_FLAG_NONE,
                                          riid="ID3D12Fence"))

    def _dml_device(self) -> int:
        return self._export_create("directml", "DMLCreateDevice1", self.device, S.DML_CREATE_DEVICE_FLAG_NONE,
                                   S.DML_FEATURE_LEVEL[(3, 0)], riid="IDMLDevice")

    def _feature_level(self) -> tuple[int, int]:
        """The highest DML_FEATURE_LEVEL the device supports, asking about every published level.

        A DirectML older than the newest level may refuse levels it does not know with
        E_INVALIDARG; then the query is repeated without the highest level asked about.
        """
        levels = sorted(S.DML_FEATURE_LEVEL.values())
        while levels:
            requested = (c_uint32 * len(levels))(*levels)
            query = S.DML_FEATURE_QUERY_FEATURE_LEVELS(len(levels), ctypes.cast(requested, ctypes.POINTER(c_uint32)))
            data = S.DML_FEATURE_DATA_FEATURE_LEVELS()
            try:
                self.com.hr(self.dml, "IDMLDevice", "CheckFeatureSupport", S.DML_FEATURE_FEATURE_LEVELS,
                            sizeof(query), addressof(query), sizeof(data), addressof(data))
            except InvalidArgument:
                if levels[-1] <= S.DML_FEATURE_LEVEL[(3, 0)]:
                    raise
                levels.pop()
                continue
            return S.feature_level_tuple(data.MaxSupportedFeatureLevel)
        raise BackendUnavailable("IDMLDevice::CheckFeatureSupport answered no feature level")

    def close(self):
        while self._owned:
            pointer = self._owned.pop()
            try:
                self.com.release(pointer)
            except Exception:   # releasing must not hide the error that led here
                pass

    # -- one execution ----------------------------------------------------------------------

    def execute(self, state: np.ndarray, sizes, strides, buffer: np.ndarray, output_state_sizes):
        """Run the operator once; ``buffer`` is updated in place; returns the output state's bytes or None."""
        scope: list[int] = []
        try:
            return self._execute(scope, state, sizes, strides, buffer, output_state_sizes)
        finally:
            for pointer in reversed(scope):
                try:
                    self.com.release(pointer)
                except Exception:
                    pass

    def _execute(self, scope, state, sizes, strides, buffer, output_state_sizes):
        com, dml = self.com, self.dml
        state_type, output_type = data_type_name(state.dtype), data_type_name(buffer.dtype)
        state_bytes = calc_buffer_tensor_size(state_type, state.shape, None)
        output_bytes = round_up(buffer.nbytes, 4)
        input_state = buffer_tensor_desc(state_type, state.shape, None, state_bytes)
        output = buffer_tensor_desc(output_type, sizes, strides, output_bytes)
        output_state = None
        if output_state_sizes is not None:
            output_state = buffer_tensor_desc(state_type, output_state_sizes, None,
                                              calc_buffer_tensor_size(state_type, output_state_sizes, None))
        operator_desc = OperatorDesc(input_state, output, output_state)

        # Creation: E_INVALIDARG here is DirectML refusing the description -> Rejected.
        operator = com.create(dml, "IDMLDevice", "CreateOperator", addressof(operator_desc.desc), riid="IDMLOperator")
        scope.append(operator)
        compiled = com.create(dml, "IDMLDevice", "CompileOperator", operator, S.DML_EXECUTION_FLAG_NONE,
                              riid="IDMLCompiledOperator")
        scope.append(compiled)
        try:
            return self._run(scope, compiled, state, buffer, input_state, output, output_state)
        except InvalidArgument as error:   # past creation, E_INVALIDARG means rngcheck misused the API
            raise HResultError(error.what, error.hresult, "refused an argument rngcheck built (a bug in the "
                                                          "backend, not a rejected description)") from None

    def _run(self, scope, compiled, state, buffer, input_state, output, output_state):
        """Steps 3 to 5 of the module doc, in that order."""
        bindings = self._initialize(scope, compiled)
        buffers = self._stage(scope, state, buffer, input_state, output, output_state)
        self._bind_operator(bindings, compiled, buffers)
        return self._dispatch(bindings, compiled, buffers, state, buffer)

    def _initialize(self, scope, compiled) -> Bindings:
        """Step 3: the descriptor heap, the binding table and its recorder; the initializer bound (its
        temporary and persistent resources when asked for), recorded and executed."""
        com, dml, device = self.com, self.dml, self.device
        operators = (c_void_p * 1)(compiled)
        initializer = com.create(dml, "IDMLDevice", "CreateOperatorInitializer", 1, addressof(operators),
                                 riid="IDMLOperatorInitializer")
        scope.append(initializer)
        init_props = com.call(initializer, "IDMLOperatorInitializer", "GetBindingProperties")
        exec_props = com.call(compiled, "IDMLCompiledOperator", "GetBindingProperties")
        descriptors = max(init_props.RequiredDescriptorCount, exec_props.RequiredDescriptorCount, 1)

        heap_desc = S.D3D12_DESCRIPTOR_HEAP_DESC(S.D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, descriptors,
                                                 S.D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE, 0)
        heap = com.create(device, "ID3D12Device", "CreateDescriptorHeap", addressof(heap_desc),
                          riid="ID3D12DescriptorHeap")
        scope.append(heap)
        cpu = com.call(heap, "ID3D12DescriptorHeap", "GetCPUDescriptorHandleForHeapStart")
        gpu = com.call(heap, "ID3D12DescriptorHeap", "GetGPUDescriptorHandleForHeapStart")
        heaps = (c_void_p * 1)(heap)
        table_desc = S.DML_BINDING_TABLE_DESC(initializer, cpu, gpu, descriptors)
        table = com.create(dml, "IDMLDevice", "CreateBindingTable", addressof(table_desc), riid="IDMLBindingTable")
        scope.append(table)
        recorder = com.create(dml, "IDMLDevice", "CreateCommandRecorder", riid="IDMLCommandRecorder")
        scope.append(recorder)

        temporary_size = max(init_props.TemporaryResourceSize, exec_props.TemporaryResourceSize)
        persistent_size = exec_props.PersistentResourceSize
        temporary = self._buffer(scope, S.D3D12_HEAP_TYPE_DEFAULT, temporary_size,
                                 S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS) if temporary_size else None
        persistent = self._buffer(scope, S.D3D12_HEAP_TYPE_DEFAULT, persistent_size,
                                  S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS) if persistent_size else None
        bindings = Bindings(table, recorder, heaps, cpu, gpu, descriptors, exec_props, temporary, temporary_size,
                            persistent, persistent_size, keep=[operators, heap_desc, table_desc])

        # The initializer (once per compiled operator).
        if temporary and init_props.TemporaryResourceSize:
            bindings.bind(com, temporary, temporary_size, "BindTemporaryResource")
        if persistent:
            desc, binding = buffer_binding(persistent, persistent_size)
            outputs = descriptor_array([desc])
            bindings.keep += [desc, binding, outputs]
            com.call(table, "IDMLBindingTable", "BindOutputs", 1, addressof(outputs))
        self._begin()
        com.call(self.list, "ID3D12GraphicsCommandList", "SetDescriptorHeaps", 1, addressof(heaps))
        com.call(recorder, "IDMLCommandRecorder", "RecordDispatch", self.list, initializer, table)
        self._submit_and_wait()
        return bindings

    def _stage(self, scope, state, buffer, input_state, output, output_state) -> Buffers:
        """Step 4: default (UAV) buffers for the three tensors, an upload buffer in (the input state and the
        prefilled caller buffer, written here), a readback buffer out."""
        in_state_bytes, out_bytes = input_state.total_bytes, output.total_bytes
        out_state_bytes = output_state.total_bytes if output_state else 0
        state_in = self._buffer(scope, S.D3D12_HEAP_TYPE_DEFAULT, in_state_bytes, S.D3D12_RESOURCE_STATE_COPY_DEST)
        output_buffer = self._buffer(scope, S.D3D12_HEAP_TYPE_DEFAULT, out_bytes, S.D3D12_RESOURCE_STATE_COPY_DEST)
        state_out = self._buffer(scope, S.D3D12_HEAP_TYPE_DEFAULT, out_state_bytes,
                                 S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS) if output_state else None
        # The readback buffer also takes the input state back: an in-place kernel (one buffer bound for both
        # state tensors) is seen by the caller as input-state-modified.
        input_back = UPLOAD_OUTPUT_OFFSET + round_up(out_bytes, 4)
        staging_bytes = input_back + round_up(state.nbytes, 4)
        upload = self._buffer(scope, S.D3D12_HEAP_TYPE_UPLOAD, staging_bytes, S.D3D12_RESOURCE_STATE_GENERIC_READ)
        readback = self._buffer(scope, S.D3D12_HEAP_TYPE_READBACK, staging_bytes, S.D3D12_RESOURCE_STATE_COPY_DEST)
        self._write(upload, [(0, state), (UPLOAD_OUTPUT_OFFSET, buffer)])
        return Buffers(state_in, output_buffer, state_out, upload, readback, in_state_bytes, out_bytes,
                       out_state_bytes, input_back, staging_bytes)

    def _bind_operator(self, bindings: Bindings, compiled, buffers: Buffers) -> None:
        """Step 5, the bindings: the table reset for the compiled operator; its temporary and persistent
        resources, BindInputs (the input state), BindOutputs (the output, the output state or
        DML_BINDING_TYPE_NONE)."""
        com, table = self.com, bindings.table
        reset = S.DML_BINDING_TABLE_DESC(compiled, bindings.cpu, bindings.gpu, bindings.descriptors)
        com.hr(table, "IDMLBindingTable", "Reset", addressof(reset))
        if bindings.temporary and bindings.exec_props.TemporaryResourceSize:
            bindings.bind(com, bindings.temporary, bindings.temporary_size, "BindTemporaryResource")
        if bindings.persistent:
            bindings.bind(com, bindings.persistent, bindings.persistent_size, "BindPersistentResource")
        in_desc, in_binding = buffer_binding(buffers.state_in, buffers.in_state_bytes)
        inputs = descriptor_array([in_desc])
        out_desc, out_binding = buffer_binding(buffers.output, buffers.out_bytes)
        if buffers.state_out:
            state_desc, state_binding = buffer_binding(buffers.state_out, buffers.out_state_bytes)
        else:
            state_desc, state_binding = S.DML_BINDING_DESC(S.DML_BINDING_TYPE_NONE, None), None
        outputs = descriptor_array([out_desc, state_desc])
        bindings.keep += [reset, in_desc, out_desc, state_desc, in_binding, out_binding, state_binding, inputs, outputs]
        com.call(table, "IDMLBindingTable", "BindInputs", 1, addressof(inputs))
        com.call(table, "IDMLBindingTable", "BindOutputs", 2, addressof(outputs))

    def _dispatch(self, bindings: Bindings, compiled, buffers: Buffers, state, buffer):
        """Step 5, the execution: record the copies in, COPY_DEST -> UNORDERED_ACCESS barriers, RecordDispatch,
        a UAV barrier, UNORDERED_ACCESS -> COPY_SOURCE, the copies out; execute; wait; read the readback
        buffer into ``buffer`` (and input_state_after); returns the output state's bytes or None."""
        com, b = self.com, buffers
        self._begin()
        com.call(self.list, "ID3D12GraphicsCommandList", "SetDescriptorHeaps", 1, addressof(bindings.heaps))
        copy = lambda dst, dst_offset, src, src_offset, size: com.call(  # noqa: E731
            self.list, "ID3D12GraphicsCommandList", "CopyBufferRegion", dst, dst_offset, src, src_offset, size)
        copy(b.state_in, 0, b.upload, 0, state.nbytes)
        copy(b.output, 0, b.upload, UPLOAD_OUTPUT_OFFSET, buffer.nbytes)
        self._barriers([(b.state_in, S.D3D12_RESOURCE_STATE_COPY_DEST, S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS),
                        (b.output, S.D3D12_RESOURCE_STATE_COPY_DEST, S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS)])
        com.call(bindings.recorder, "IDMLCommandRecorder", "RecordDispatch", self.list, compiled, bindings.table)
        after = [None, (b.output, S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, S.D3D12_RESOURCE_STATE_COPY_SOURCE),
                 (b.state_in, S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, S.D3D12_RESOURCE_STATE_COPY_SOURCE)]
        if b.state_out:
            after.append((b.state_out, S.D3D12_RESOURCE_STATE_UNORDERED_ACCESS, S.D3D12_RESOURCE_STATE_COPY_SOURCE))
        self._barriers(after)
        copy(b.readback, UPLOAD_OUTPUT_OFFSET, b.output, 0, buffer.nbytes)
        copy(b.readback, b.input_back, b.state_in, 0, state.nbytes)
        if b.state_out:
            copy(b.readback, 0, b.state_out, 0, b.out_state_bytes)
        self._submit_and_wait()

        data = self._read(b.readback, b.staging_bytes)
        buffer.view(np.uint8).reshape(-1)[:] = data[UPLOAD_OUTPUT_OFFSET:UPLOAD_OUTPUT_OFFSET + buffer.nbytes]
        self.input_state_after = data[b.input_back:b.input_back + state.nbytes].copy()
        return data[:b.out_state_bytes].copy() if b.state_out else None

    # -- helpers ------------------------------------------------------------------------------

    def _buffer(self, scope, heap_type: int, size: int, state: int) -> int:
        properties = S.D3D12_HEAP_PROPERTIES(heap_type, S.D3D12_CPU_PAGE_PROPERTY_UNKNOWN,
                                             S.D3D12_MEMORY_POOL_UNKNOWN, 1, 1)
        flags = (S.D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS if heap_type == S.D3D12_HEAP_TYPE_DEFAULT
                 else S.D3D12_RESOURCE_FLAG_NONE)
        desc = S.D3D12_RESOURCE_DESC(S.D3D12_RESOURCE_DIMENSION_BUFFER, 0, max(4, round_up(size, 4)), 1, 1, 1,
                                     S.DXGI_FORMAT_UNKNOWN, S.DXGI_SAMPLE_DESC(1, 0),
                                     S.D3D12_TEXTURE_LAYOUT_ROW_MAJOR, flags)
        try:
            resource = self.com.create(self.device, "ID3D12Device", "CreateCommittedResource", addressof(properties),
                                       S.D3D12_HEAP_FLAG_NONE, addressof(desc), state, None, riid="ID3D12Resource")
        except HResultError as error:
            if size < 1 << 32:
                raise
            # Past 4 GiB (issue 29): the device's limit, not a failure (vkd3d on lavapipe refuses any
            # buffer of 2^32 bytes or more with E_OUTOFMEMORY; docs/directml.md).
            raise NotApplicable(f"the D3D12 device refuses a buffer of {size} bytes ({error.name} from "
                                f"CreateCommittedResource): its largest buffer is below 4 GiB") from None
        scope.append(resource)
        return resource

    def _write(self, resource: int, pieces):
        pointer = c_void_p()
        nothing_read = S.D3D12_RANGE(0, 0)
        self.com.hr(resource, "ID3D12Resource", "Map", 0, addressof(nothing_read), addressof(pointer))
        try:
            for offset, array in pieces:
                array = np.ascontiguousarray(array)
                ctypes.memmove(pointer.value + offset, array.ctypes.data, array.nbytes)
        finally:
            self.com.call(resource, "ID3D12Resource", "Unmap", 0, None)

    def _read(self, resource: int, size: int) -> np.ndarray:
        pointer = c_void_p()
        everything = S.D3D12_RANGE(0, size)
        self.com.hr(resource, "ID3D12Resource", "Map", 0, addressof(everything), addressof(pointer))
        try:
            data = np.empty(size, dtype=np.uint8)
            if not pointer.value:
                raise RuntimeError("ID3D12Resource::Map succeeded but gave a null pointer")
            ctypes.memmove(data.ctypes.data, pointer.value, size)
        finally:
            nothing_written = S.D3D12_RANGE(0, 0)
            self.com.call(resource, "ID3D12Resource", "Unmap", 0, addressof(nothing_written))
        return data

    def _barriers(self, transitions):
        """ResourceBarrier: (resource, before, after) transitions; None is a UAV barrier on all UAV accesses."""
        barriers = (S.D3D12_RESOURCE_BARRIER * len(transitions))()
        for barrier, item in zip(barriers, transitions):
            barrier.Flags = S.D3D12_RESOURCE_BARRIER_FLAG_NONE
            if item is None:
                barrier.Type = S.D3D12_RESOURCE_BARRIER_TYPE_UAV
                barrier.UAV.pResource = None
            else:
                barrier.Type = S.D3D12_RESOURCE_BARRIER_TYPE_TRANSITION
                barrier.Transition.pResource, barrier.Transition.StateBefore, barrier.Transition.StateAfter = item
                barrier.Transition.Subresource = S.D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES
        self.com.call(self.list, "ID3D12GraphicsCommandList", "ResourceBarrier", len(transitions), addressof(barriers))

    def _begin(self):
        self.com.hr(self.allocator, "ID3D12CommandAllocator", "Reset")
        self.com.hr(self.list, "ID3D12GraphicsCommandList", "Reset", self.allocator, None)

    def _submit_and_wait(self):
        com = self.com
        com.hr(self.list, "ID3D12GraphicsCommandList", "Close")
        lists = (c_void_p * 1)(self.list)
        com.call(self.queue, "ID3D12CommandQueue", "ExecuteCommandLists", 1, addressof(lists))
        self.fence_value += 1
        com.hr(self.queue, "ID3D12CommandQueue", "Signal", self.fence, self.fence_value)
        if com.call(self.fence, "ID3D12Fence", "GetCompletedValue") < self.fence_value:
            com.hr(self.fence, "ID3D12Fence", "SetEventOnCompletion", self.fence_value, None)  # NULL: block
        if com.call(self.fence, "ID3D12Fence", "GetCompletedValue") == FENCE_REMOVED:
            reason = com.call(self.device, "ID3D12Device", "GetDeviceRemovedReason")
            raise HResultError("the D3D12 device was removed during execution; ID3D12Device::GetDeviceRemovedReason",
                               reason & 0xFFFFFFFF or 0x887A0005)
