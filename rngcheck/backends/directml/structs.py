"""C structures and enumerations of DirectML, Direct3D 12 and DXGI, as ctypes.

Every table names its source. The layouts follow the C declarations member by member;
ctypes applies the platform's C layout rules (natural alignment, structure size rounded
up to the largest member alignment), which on x64 (Windows and Linux alike: every type
used here is fixed-size or pointer-sized) give the offsets that tests/test_directml_structs.py
recomputes by hand and asserts.

Sources:
  DirectML.h (DirectML 1.x redistributable header, DML_TARGET_VERSION up to 0x6400):
      DML_TENSOR_DATA_TYPE, DML_TENSOR_TYPE, DML_TENSOR_FLAGS, DML_OPERATOR_TYPE (the value of
      DML_OPERATOR_RANDOM_GENERATOR, counted through the #if DML_TARGET_VERSION blocks and
      matching the Windows metadata's explicit value 132), DML_RANDOM_GENERATOR_TYPE,
      DML_FEATURE_LEVEL, DML_FEATURE, DML_EXECUTION_FLAGS, DML_CREATE_DEVICE_FLAGS,
      DML_BINDING_TYPE, and the structures DML_BUFFER_TENSOR_DESC, DML_TENSOR_DESC,
      DML_OPERATOR_DESC, DML_RANDOM_GENERATOR_OPERATOR_DESC, DML_FEATURE_QUERY_FEATURE_LEVELS,
      DML_FEATURE_DATA_FEATURE_LEVELS, DML_BINDING_TABLE_DESC, DML_BINDING_PROPERTIES,
      DML_BINDING_DESC, DML_BUFFER_BINDING, DML_BUFFER_ARRAY_BINDING.
  d3d12.h (Windows SDK / DirectX-Headers): D3D12_COMMAND_QUEUE_DESC, D3D12_DESCRIPTOR_HEAP_DESC,
      D3D12_CPU/GPU_DESCRIPTOR_HANDLE, D3D12_HEAP_PROPERTIES, D3D12_RESOURCE_DESC,
      DXGI_SAMPLE_DESC, D3D12_RANGE, D3D12_RESOURCE_BARRIER and the enumerations used with them.
  dxgi.h: DXGI_ADAPTER_DESC1 (with LUID from winnt.h).
"""

from __future__ import annotations

import ctypes
import uuid
from ctypes import c_int32, c_size_t, c_uint16, c_uint32, c_uint64, c_void_p

UINT = c_uint32
UINT64 = c_uint64
ENUM = c_uint32          # C enums used here are int-sized; values are non-negative
HRESULT = c_int32

# --- GUID ------------------------------------------------------------------------------


class GUID(ctypes.Structure):
    _fields_ = [("Data1", c_uint32), ("Data2", c_uint16), ("Data3", c_uint16), ("Data4", ctypes.c_uint8 * 8)]

    @classmethod
    def parse(cls, text: str) -> GUID:
        value = uuid.UUID(text)
        guid = cls()
        guid.Data1, guid.Data2, guid.Data3 = value.fields[0], value.fields[1], value.fields[2]
        guid.Data4[:] = list(value.bytes[8:])
        return guid

    def __str__(self) -> str:
        tail = bytes(self.Data4)
        return str(uuid.UUID(fields=(self.Data1, self.Data2, self.Data3, tail[0], tail[1],
                                     int.from_bytes(tail[2:], "big"))))


# --- DirectML enumerations (DirectML.h) -------------------------------------------------

DML_TENSOR_DATA_TYPE = {
    "UNKNOWN": 0, "FLOAT32": 1, "FLOAT16": 2, "UINT32": 3, "UINT16": 4, "UINT8": 5,
    "INT32": 6, "INT16": 7, "INT8": 8, "FLOAT64": 9, "UINT64": 10, "INT64": 11,
    "UINT4": 12, "INT4": 13,   # DML_TARGET_VERSION >= 0x6300
}
DML_TENSOR_DATA_TYPE_UINT32 = DML_TENSOR_DATA_TYPE["UINT32"]

DML_TENSOR_TYPE_INVALID = 0
DML_TENSOR_TYPE_BUFFER = 1
DML_TENSOR_FLAG_NONE = 0x0
DML_TENSOR_FLAG_OWNED_BY_DML = 0x1

DML_OPERATOR_INVALID = 0
DML_OPERATOR_RANDOM_GENERATOR = 132
DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10 = 0

DML_FEATURE_LEVEL = {
    (1, 0): 0x1000, (2, 0): 0x2000, (2, 1): 0x2100, (3, 0): 0x3000, (3, 1): 0x3100,
    (4, 0): 0x4000, (4, 1): 0x4100, (5, 0): 0x5000, (5, 1): 0x5100, (5, 2): 0x5200,
    (6, 0): 0x6000, (6, 1): 0x6100, (6, 2): 0x6200, (6, 3): 0x6300, (6, 4): 0x6400,
}


def feature_level_tuple(value: int) -> tuple[int, int]:
    """0x4100 -> (4, 1): DML_FEATURE_LEVEL_a_b is 0xab00."""
    return (value >> 12) & 0xF, (value >> 8) & 0xF


DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT = 0
DML_FEATURE_FEATURE_LEVELS = 1

DML_EXECUTION_FLAG_NONE = 0
DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION = 0x1
DML_EXECUTION_FLAG_DISABLE_META_COMMANDS = 0x2
DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE = 0x4

DML_CREATE_DEVICE_FLAG_NONE = 0
DML_CREATE_DEVICE_FLAG_DEBUG = 0x1

DML_BINDING_TYPE_NONE = 0
DML_BINDING_TYPE_BUFFER = 1
DML_BINDING_TYPE_BUFFER_ARRAY = 2

DML_TENSOR_DIMENSION_COUNT_MAX1 = 8
DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT = 16
DML_TEMPORARY_BUFFER_ALIGNMENT = 256
DML_PERSISTENT_BUFFER_ALIGNMENT = 256

# --- DirectML structures (DirectML.h) ---------------------------------------------------


class DML_BUFFER_TENSOR_DESC(ctypes.Structure):
    _fields_ = [
        ("DataType", ENUM),
        ("Flags", ENUM),
        ("DimensionCount", UINT),
        ("Sizes", ctypes.POINTER(UINT)),
        ("Strides", ctypes.POINTER(UINT)),      # NULL: packed
        ("TotalTensorSizeInBytes", UINT64),
        ("GuaranteedBaseOffsetAlignment", UINT),
    ]


class DML_TENSOR_DESC(ctypes.Structure):
    _fields_ = [("Type", ENUM), ("Desc", c_void_p)]


class DML_OPERATOR_DESC(ctypes.Structure):
    _fields_ = [("Type", ENUM), ("Desc", c_void_p)]


class DML_RANDOM_GENERATOR_OPERATOR_DESC(ctypes.Structure):
    _fields_ = [
        ("InputStateTensor", ctypes.POINTER(DML_TENSOR_DESC)),
        ("OutputTensor", ctypes.POINTER(DML_TENSOR_DESC)),
        ("OutputStateTensor", ctypes.POINTER(DML_TENSOR_DESC)),   # _Maybenull_
        ("Type", ENUM),
    ]


class DML_FEATURE_QUERY_FEATURE_LEVELS(ctypes.Structure):
    _fields_ = [("RequestedFeatureLevelCount", UINT), ("RequestedFeatureLevels", ctypes.POINTER(ENUM))]


class DML_FEATURE_DATA_FEATURE_LEVELS(ctypes.Structure):
    _fields_ = [("MaxSupportedFeatureLevel", ENUM)]


class D3D12_CPU_DESCRIPTOR_HANDLE(ctypes.Structure):
    _fields_ = [("ptr", c_size_t)]


class D3D12_GPU_DESCRIPTOR_HANDLE(ctypes.Structure):
    _fields_ = [("ptr", UINT64)]


class DML_BINDING_TABLE_DESC(ctypes.Structure):
    _fields_ = [
        ("Dispatchable", c_void_p),                        # IDMLDispatchable*
        ("CPUDescriptorHandle", D3D12_CPU_DESCRIPTOR_HANDLE),
        ("GPUDescriptorHandle", D3D12_GPU_DESCRIPTOR_HANDLE),
        ("SizeInDescriptors", UINT),
    ]


class DML_BINDING_PROPERTIES(ctypes.Structure):
    _fields_ = [("RequiredDescriptorCount", UINT), ("TemporaryResourceSize", UINT64),
                ("PersistentResourceSize", UINT64)]


class DML_BINDING_DESC(ctypes.Structure):
    _fields_ = [("Type", ENUM), ("Desc", c_void_p)]


class DML_BUFFER_BINDING(ctypes.Structure):
    _fields_ = [("Buffer", c_void_p), ("Offset", UINT64), ("SizeInBytes", UINT64)]   # ID3D12Resource*


class DML_BUFFER_ARRAY_BINDING(ctypes.Structure):
    _fields_ = [("BindingCount", UINT), ("Bindings", ctypes.POINTER(DML_BUFFER_BINDING))]


# --- Direct3D 12 enumerations and structures (d3d12.h, d3dcommon.h, dxgiformat.h) -------

D3D_FEATURE_LEVEL_11_0 = 0xB000
D3D12_COMMAND_LIST_TYPE_DIRECT = 0
D3D12_COMMAND_LIST_TYPE_COMPUTE = 2
D3D12_COMMAND_QUEUE_FLAG_NONE = 0
D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV = 0
D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE = 0x1
D3D12_HEAP_TYPE_DEFAULT = 1
D3D12_HEAP_TYPE_UPLOAD = 2
D3D12_HEAP_TYPE_READBACK = 3
D3D12_CPU_PAGE_PROPERTY_UNKNOWN = 0
D3D12_MEMORY_POOL_UNKNOWN = 0
D3D12_HEAP_FLAG_NONE = 0
D3D12_RESOURCE_DIMENSION_BUFFER = 1
DXGI_FORMAT_UNKNOWN = 0
D3D12_TEXTURE_LAYOUT_ROW_MAJOR = 1
D3D12_RESOURCE_FLAG_NONE = 0
D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS = 0x4
D3D12_RESOURCE_STATE_COMMON = 0
D3D12_RESOURCE_STATE_UNORDERED_ACCESS = 0x8
D3D12_RESOURCE_STATE_COPY_DEST = 0x400
D3D12_RESOURCE_STATE_COPY_SOURCE = 0x800
D3D12_RESOURCE_STATE_GENERIC_READ = 0x1 | 0x2 | 0x40 | 0x80 | 0x200 | 0x800   # = 0xAC3
D3D12_RESOURCE_BARRIER_TYPE_TRANSITION = 0
D3D12_RESOURCE_BARRIER_TYPE_ALIASING = 1
D3D12_RESOURCE_BARRIER_TYPE_UAV = 2
D3D12_RESOURCE_BARRIER_FLAG_NONE = 0
D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES = 0xFFFFFFFF
D3D12_FENCE_FLAG_NONE = 0


class D3D12_COMMAND_QUEUE_DESC(ctypes.Structure):
    _fields_ = [("Type", ENUM), ("Priority", c_int32), ("Flags", ENUM), ("NodeMask", UINT)]


class D3D12_DESCRIPTOR_HEAP_DESC(ctypes.Structure):
    _fields_ = [("Type", ENUM), ("NumDescriptors", UINT), ("Flags", ENUM), ("NodeMask", UINT)]


class D3D12_HEAP_PROPERTIES(ctypes.Structure):
    _fields_ = [("Type", ENUM), ("CPUPageProperty", ENUM), ("MemoryPoolPreference", ENUM),
                ("CreationNodeMask", UINT), ("VisibleNodeMask", UINT)]


class DXGI_SAMPLE_DESC(ctypes.Structure):
    _fields_ = [("Count", UINT), ("Quality", UINT)]


class D3D12_RESOURCE_DESC(ctypes.Structure):
    _fields_ = [
        ("Dimension", ENUM),
        ("Alignment", UINT64),
        ("Width", UINT64),
        ("Height", UINT),
        ("DepthOrArraySize", c_uint16),
        ("MipLevels", c_uint16),
        ("Format", ENUM),
        ("SampleDesc", DXGI_SAMPLE_DESC),
        ("Layout", ENUM),
        ("Flags", ENUM),
    ]


class D3D12_RANGE(ctypes.Structure):
    _fields_ = [("Begin", c_size_t), ("End", c_size_t)]


class D3D12_RESOURCE_TRANSITION_BARRIER(ctypes.Structure):
    _fields_ = [("pResource", c_void_p), ("Subresource", UINT), ("StateBefore", ENUM), ("StateAfter", ENUM)]


class D3D12_RESOURCE_ALIASING_BARRIER(ctypes.Structure):
    _fields_ = [("pResourceBefore", c_void_p), ("pResourceAfter", c_void_p)]


class D3D12_RESOURCE_UAV_BARRIER(ctypes.Structure):
    _fields_ = [("pResource", c_void_p)]


class _D3D12_RESOURCE_BARRIER_UNION(ctypes.Union):
    _fields_ = [("Transition", D3D12_RESOURCE_TRANSITION_BARRIER),
                ("Aliasing", D3D12_RESOURCE_ALIASING_BARRIER),
                ("UAV", D3D12_RESOURCE_UAV_BARRIER)]


class D3D12_RESOURCE_BARRIER(ctypes.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("Type", ENUM), ("Flags", ENUM), ("u", _D3D12_RESOURCE_BARRIER_UNION)]


# --- DXGI (dxgi.h) ----------------------------------------------------------------------

DXGI_ADAPTER_FLAG_SOFTWARE = 2


class LUID(ctypes.Structure):
    _fields_ = [("LowPart", c_uint32), ("HighPart", c_int32)]


class DXGI_ADAPTER_DESC1(ctypes.Structure):
    _fields_ = [
        ("Description", c_uint16 * 128),     # WCHAR[128]: UTF-16 on Windows
        ("VendorId", UINT),
        ("DeviceId", UINT),
        ("SubSysId", UINT),
        ("Revision", UINT),
        ("DedicatedVideoMemory", c_size_t),
        ("DedicatedSystemMemory", c_size_t),
        ("SharedSystemMemory", c_size_t),
        ("AdapterLuid", LUID),
        ("Flags", UINT),
    ]

    @property
    def name(self) -> str:
        units = list(self.Description)
        if 0 in units:
            units = units[:units.index(0)]
        return bytes(b for u in units for b in u.to_bytes(2, "little")).decode("utf-16-le", "replace")


def set_adapter_name(desc: DXGI_ADAPTER_DESC1, name: str) -> None:
    encoded = name.encode("utf-16-le")[:254]
    units = [int.from_bytes(encoded[i:i + 2], "little") for i in range(0, len(encoded), 2)]
    desc.Description[:len(units) + 1] = units + [0]


# --- numpy dtype -> DML_TENSOR_DATA_TYPE --------------------------------------------------

NUMPY_DATA_TYPES = {
    "float32": "FLOAT32", "float16": "FLOAT16", "uint32": "UINT32", "uint16": "UINT16",
    "uint8": "UINT8", "int32": "INT32", "int16": "INT16", "int8": "INT8", "float64": "FLOAT64",
    "uint64": "UINT64", "int64": "INT64",
}
DATA_TYPE_BYTES = {"FLOAT32": 4, "FLOAT16": 2, "UINT32": 4, "UINT16": 2, "UINT8": 1, "INT32": 4,
                   "INT16": 2, "INT8": 1, "FLOAT64": 8, "UINT64": 8, "INT64": 8}
DATA_TYPE_NAMES = {value: name for name, value in DML_TENSOR_DATA_TYPE.items()}
