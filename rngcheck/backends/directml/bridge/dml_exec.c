/*
 * DirectML's own DML_OPERATOR_RANDOM_GENERATOR (Philox 4x32-10), run through DirectML.dll on a
 * D3D12 device, speaking rngcheck's exec protocol, version 1 (docs/exec-protocol.md), on stdin
 * and stdout. A native Windows program: no Python on the machine under test.
 *
 *   x86_64-w64-mingw32-gcc -O2 -Wall -o dml_exec.exe dml_exec.c -lversion -lbcrypt     (mingw-w64)
 *   cl /O2 dml_exec.c version.lib bcrypt.lib                                                   (MSVC)
 *
 *   dml_exec.exe [--dml PATH] [--d3d12 PATH] [--adapter default|warp|N] [--name NAME]
 *   rngcheck run --backend 'exec:dml_exec.exe --dml C:\path\DirectML.dll --adapter warp' --profile quick
 *
 *   --dml PATH     the DirectML.dll to test (default: "DirectML.dll", found by Windows' DLL search)
 *   --d3d12 PATH   a DLL whose D3D12CreateDevice makes the device (default: the system's d3d12.dll);
 *                  rngcheck's vkd3d D3D12 (rngcheck_d3d12.dll) is the Wine route
 *   --adapter A    the DXGI adapter: default (adapter 0), warp (the software rasterizer) or an index
 *   --name NAME    the backend's name in reports (default: directml-windows:VERSION)
 *   --fault KIND   for rngcheck's own tests: crash, hang or flip (one output bit) on every call
 *
 * One call (rngcheck.backends.directml.dispatch does the same from Python):
 *   0. a description of a feature level above this DirectML's maximum (DML_FEATURE_FEATURE_LEVELS,
 *      e.g. a 1-D tensor, FL 4.0, on DirectML 1.5.1, FL 3.1) cannot be asked of it: FAIL with
 *      "not_applicable" and the reason (the case is not applicable to this release, not a failure);
 *   1. the checks a DML_BUFFER_TENSOR_DESC cannot express (negative or too large sizes and strides,
 *      a stride count other than the dimension count, feature level below 3.0, and feature level
 *      3.x's 4-D shapes on a DirectML that validates at a higher level) -> RJCT with the rule;
 *   2. DML_BUFFER_TENSOR_DESCs for the input state, the output (the call's sizes and strides,
 *      TotalTensorSizeInBytes = the whole caller buffer) and the output state;
 *      IDMLDevice::CreateOperator (E_INVALIDARG: DirectML rejects the description -> RJCT with the
 *      HRESULT name), CompileOperator, CreateOperatorInitializer;
 *   3. a descriptor heap and binding table, the initializer recorded and executed;
 *   4. default-heap buffers, the input state and the prefilled caller buffer uploaded, the operator
 *      dispatched, buffer and output state copied back -> DONE. Any other failure -> FAIL naming the
 *      call and its HRESULT.
 */
#define COBJMACROS
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#include <bcrypt.h>         /* the sha256 of the DirectML.dll it loaded: the identity a conformance statement names */
#include <initguid.h>      /* the D3D12 and DXGI IIDs defined here: no import library needed for them */
#include <d3d12.h>
#include <dxgi1_4.h>
#include <fcntl.h>
#include <io.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 16
#define PROGRAM "rngcheck/backends/directml/bridge/dml_exec.c"

/* ---- DirectML.h: the part this program uses (DirectML 1.x, DML_TARGET_VERSION 0x6400) ------ */
enum { DML_TENSOR_TYPE_BUFFER = 1, DML_OPERATOR_RANDOM_GENERATOR = 132, DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10 = 0,
       DML_FEATURE_FEATURE_LEVELS = 1, DML_BINDING_TYPE_NONE = 0, DML_BINDING_TYPE_BUFFER = 1 };

typedef struct { UINT DataType, Flags, DimensionCount; const UINT *Sizes, *Strides;
                 UINT64 TotalTensorSizeInBytes; UINT GuaranteedBaseOffsetAlignment; } DML_BUFFER_TENSOR_DESC;
typedef struct { UINT Type; const void *Desc; } DML_TENSOR_DESC;
typedef struct { UINT Type; const void *Desc; } DML_OPERATOR_DESC;
typedef struct { const DML_TENSOR_DESC *InputStateTensor, *OutputTensor, *OutputStateTensor; UINT Type; }
    DML_RANDOM_GENERATOR_OPERATOR_DESC;
typedef struct { UINT RequestedFeatureLevelCount; const UINT *RequestedFeatureLevels; } DML_FEATURE_QUERY_FEATURE_LEVELS;
typedef struct { UINT MaxSupportedFeatureLevel; } DML_FEATURE_DATA_FEATURE_LEVELS;
typedef struct { void *Dispatchable; D3D12_CPU_DESCRIPTOR_HANDLE CPUDescriptorHandle;
                 D3D12_GPU_DESCRIPTOR_HANDLE GPUDescriptorHandle; UINT SizeInDescriptors; } DML_BINDING_TABLE_DESC;
typedef struct { UINT RequiredDescriptorCount; UINT64 TemporaryResourceSize, PersistentResourceSize; }
    DML_BINDING_PROPERTIES;
typedef struct { UINT Type; const void *Desc; } DML_BINDING_DESC;
typedef struct { ID3D12Resource *Buffer; UINT64 Offset, SizeInBytes; } DML_BUFFER_BINDING;

static const GUID IID_IDMLDevice_ = {0x6dbd6437, 0x96fd, 0x423f, {0xa9, 0x8c, 0xae, 0x5e, 0x7c, 0x2a, 0x57, 0x3f}};
static const GUID IID_IDMLOperator_ = {0x26caae7a, 0x3081, 0x4633, {0x95, 0x81, 0x22, 0x6f, 0xbe, 0x57, 0x69, 0x5d}};
static const GUID IID_IDMLCompiledOperator_ =
    {0x6b15e56a, 0xbf5c, 0x4902, {0x92, 0xd8, 0xda, 0x3a, 0x65, 0x0a, 0xfe, 0xa4}};
static const GUID IID_IDMLOperatorInitializer_ =
    {0x427c1113, 0x435c, 0x469c, {0x86, 0x76, 0x4d, 0x5d, 0xd0, 0x72, 0xf8, 0x13}};
static const GUID IID_IDMLBindingTable_ = {0x29c687dc, 0xde74, 0x4e3b, {0xab, 0x00, 0x11, 0x68, 0xf2, 0xfc, 0x3c, 0xfc}};
static const GUID IID_IDMLCommandRecorder_ =
    {0xe6857a76, 0x2e3e, 0x4fdd, {0xbf, 0xf4, 0x5d, 0x2b, 0xa1, 0x0f, 0xb4, 0x53}};

/* DirectML's interfaces are called by vtable slot (the order of declaration in DirectML.h):
 * IUnknown 0-2, IDMLObject 3-6; IDMLDevice 7-16; IDMLDeviceChild::GetDevice 7;
 * IDMLDispatchable::GetBindingProperties 8; IDMLOperatorInitializer::Reset 9;
 * IDMLBindingTable 8-12; IDMLCommandRecorder::RecordDispatch 8. */
#define METHOD(object, slot, type) ((type)((*(void ***)(object))[slot]))
enum { DEVICE_CHECK_FEATURE_SUPPORT = 7, DEVICE_CREATE_OPERATOR, DEVICE_COMPILE_OPERATOR,
       DEVICE_CREATE_OPERATOR_INITIALIZER, DEVICE_CREATE_COMMAND_RECORDER, DEVICE_CREATE_BINDING_TABLE };
enum { DISPATCHABLE_GET_BINDING_PROPERTIES = 8 };
enum { TABLE_BIND_INPUTS = 8, TABLE_BIND_OUTPUTS, TABLE_BIND_TEMPORARY, TABLE_BIND_PERSISTENT, TABLE_RESET };
enum { RECORDER_RECORD_DISPATCH = 8 };
typedef ULONG (STDMETHODCALLTYPE *release_fn)(void *);
typedef HRESULT (STDMETHODCALLTYPE *check_feature_fn)(void *, UINT, UINT, const void *, UINT, void *);
typedef HRESULT (STDMETHODCALLTYPE *create_operator_fn)(void *, const DML_OPERATOR_DESC *, REFIID, void **);
typedef HRESULT (STDMETHODCALLTYPE *compile_operator_fn)(void *, void *, UINT, REFIID, void **);
typedef HRESULT (STDMETHODCALLTYPE *create_initializer_fn)(void *, UINT, void *const *, REFIID, void **);
typedef HRESULT (STDMETHODCALLTYPE *create_recorder_fn)(void *, REFIID, void **);
typedef HRESULT (STDMETHODCALLTYPE *create_table_fn)(void *, const DML_BINDING_TABLE_DESC *, REFIID, void **);
/* A structure returned by value from a COM method comes back through a pointer after `this`. */
typedef DML_BINDING_PROPERTIES *(STDMETHODCALLTYPE *binding_properties_fn)(void *, DML_BINDING_PROPERTIES *);
typedef void (STDMETHODCALLTYPE *bind_fn)(void *, UINT, const DML_BINDING_DESC *);
typedef void (STDMETHODCALLTYPE *bind_one_fn)(void *, const DML_BINDING_DESC *);
typedef HRESULT (STDMETHODCALLTYPE *table_reset_fn)(void *, const DML_BINDING_TABLE_DESC *);
typedef void (STDMETHODCALLTYPE *record_fn)(void *, ID3D12CommandList *, void *, void *);
typedef D3D12_CPU_DESCRIPTOR_HANDLE *(STDMETHODCALLTYPE *cpu_start_fn)(ID3D12DescriptorHeap *,
                                                                        D3D12_CPU_DESCRIPTOR_HANDLE *);
typedef D3D12_GPU_DESCRIPTOR_HANDLE *(STDMETHODCALLTYPE *gpu_start_fn)(ID3D12DescriptorHeap *,
                                                                        D3D12_GPU_DESCRIPTOR_HANDLE *);
typedef HRESULT (WINAPI *dml_create_device_fn)(ID3D12Device *, UINT, UINT, REFIID, void **);
typedef HRESULT (WINAPI *d3d12_create_device_fn)(IUnknown *, D3D_FEATURE_LEVEL, REFIID, void **);
typedef HRESULT (WINAPI *create_factory_fn)(REFIID, void **);

static const UINT FEATURE_LEVELS[] = {0x1000, 0x2000, 0x2100, 0x3000, 0x3100, 0x4000, 0x4100, 0x5000,
                                      0x5100, 0x5200, 0x6000, 0x6100, 0x6200, 0x6300, 0x6400};

/* ---- the exec protocol: every integer little-endian ------------------------------------- */
static int read_all(void *data, size_t size)
{
    return fread(data, 1, size, stdin) == size;
}

static void write_all(const void *data, size_t size)
{
    if (size && fwrite(data, 1, size, stdout) != size) exit(3);
}

static void send_text(const char tag[4], const char *json)
{
    uint32_t size = (uint32_t)strlen(json);
    write_all(tag, 4);
    write_all(&size, 4);
    write_all(json, size);
    fflush(stdout);
}

/* JSON string content: quotes, backslashes and control characters escaped, non-ASCII dropped. */
static void json_escape(char *out, size_t size, const char *text)
{
    size_t at = 0;
    for (; *text && at + 7 < size; text++)
    {
        unsigned char c = (unsigned char)*text;
        if (c == '"' || c == '\\') { out[at++] = '\\'; out[at++] = (char)c; }
        else if (c < 0x20) at += (size_t)snprintf(out + at, size - at, "\\u%04x", c);
        else if (c < 0x80) out[at++] = (char)c;
    }
    out[at] = 0;
}

/* ---- HRESULTs ------------------------------------------------------------------------ */
static const char *hresult_name(HRESULT hr, char *buffer, size_t size)
{
    static const struct { uint32_t value; const char *name; } names[] = {
        {0x00000000, "S_OK"}, {0x00000001, "S_FALSE"}, {0x80004001, "E_NOTIMPL"}, {0x80004002, "E_NOINTERFACE"},
        {0x80004003, "E_POINTER"}, {0x80004005, "E_FAIL"}, {0x8007000E, "E_OUTOFMEMORY"},
        {0x80070057, "E_INVALIDARG"}, {0x80070005, "E_ACCESSDENIED"}, {0x8007007E, "ERROR_MOD_NOT_FOUND"},
        {0x887A0001, "DXGI_ERROR_INVALID_CALL"}, {0x887A0002, "DXGI_ERROR_NOT_FOUND"},
        {0x887A0004, "DXGI_ERROR_UNSUPPORTED"}, {0x887A0005, "DXGI_ERROR_DEVICE_REMOVED"},
        {0x887A0006, "DXGI_ERROR_DEVICE_HUNG"}, {0x887A0007, "DXGI_ERROR_DEVICE_RESET"},
        {0x887A0020, "DXGI_ERROR_DRIVER_INTERNAL_ERROR"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].value == (uint32_t)hr)
        {
            snprintf(buffer, size, "%s (0x%08X)", names[i].name, (unsigned)hr);
            return buffer;
        }
    snprintf(buffer, size, "HRESULT 0x%08X", (unsigned)hr);
    return buffer;
}

/* A failed call: what failed and its HRESULT, one line; E_INVALIDARG from CreateOperator is a rejection. */
static char failure[400];
static HRESULT failed_hr;

static int fail(const char *what, HRESULT hr)
{
    char name[64];
    snprintf(failure, sizeof failure, "%s failed: %s", what, hresult_name(hr, name, sizeof name));
    failed_hr = hr;
    return 0;
}

/* DML_EXEC_DEBUG=1: each call made is logged on stderr before it is made. */
static int tracing = -1;
#define TRACE(what) do { if (tracing < 0) tracing = getenv("DML_EXEC_DEBUG") != NULL; \
                         if (tracing) fprintf(stderr, "dml_exec: %s\n", what); } while (0)
#define CHECK(call, what) do { TRACE(what); HRESULT hr_ = (call); if (FAILED(hr_)) return fail(what, hr_); } while (0)

static void release(void *object)
{
    if (object) METHOD(object, 2, release_fn)(object);
}

/* ---- the device ------------------------------------------------------------------------ */
static struct {
    ID3D12Device *device;
    ID3D12CommandQueue *queue;
    ID3D12CommandAllocator *allocator;
    ID3D12GraphicsCommandList *list;
    ID3D12Fence *fence;
    HANDLE event;
    UINT64 fence_value;
    void *dml;
    UINT feature_level;
    char adapter[160], vendor[16], device_id[16], driver[48], dml_path[MAX_PATH], dml_version[48], dml_sha256[72];
    char d3d12[MAX_PATH + 80], platform[64], short_version[48];
} g;

static void describe_adapter(IDXGIAdapter1 *adapter)
{
    DXGI_ADAPTER_DESC1 desc;
    LARGE_INTEGER umd;
    if (FAILED(IDXGIAdapter1_GetDesc1(adapter, &desc)))
        return;
    WideCharToMultiByte(CP_UTF8, 0, desc.Description, -1, g.adapter, sizeof g.adapter - 12, NULL, NULL);
    if (desc.Flags & DXGI_ADAPTER_FLAG_SOFTWARE)
        strcat(g.adapter, " (software)");
    snprintf(g.vendor, sizeof g.vendor, "0x%04X", desc.VendorId);
    snprintf(g.device_id, sizeof g.device_id, "0x%04X", desc.DeviceId);
    if (SUCCEEDED(IDXGIAdapter1_CheckInterfaceSupport(adapter, &IID_IDXGIDevice, &umd)))
    {
        uint64_t v = (uint64_t)umd.QuadPart;
        snprintf(g.driver, sizeof g.driver, "%u.%u.%u.%u", (unsigned)(v >> 48), (unsigned)(v >> 32) & 0xFFFF,
                 (unsigned)(v >> 16) & 0xFFFF, (unsigned)v & 0xFFFF);
    }
}

/* The DXGI adapter asked for (NULL and no error when DXGI is absent and the default is asked for). */
static int choose_adapter(const char *choice, IDXGIAdapter1 **adapter)
{
    HMODULE dxgi = LoadLibraryA("dxgi.dll");
    create_factory_fn create = dxgi ? (create_factory_fn)(void *)GetProcAddress(dxgi, "CreateDXGIFactory1") : NULL;
    IDXGIFactory4 *factory = NULL;
    HRESULT hr;

    *adapter = NULL;
    if (!create)
    {
        if (strcmp(choice, "default") == 0) return 1;
        snprintf(failure, sizeof failure, "adapter %s needs DXGI (dxgi.dll), which is not here", choice);
        return 0;
    }
    CHECK(create(&IID_IDXGIFactory4, (void **)&factory), "CreateDXGIFactory1(IDXGIFactory4)");
    if (strcmp(choice, "warp") == 0)
        hr = IDXGIFactory4_EnumWarpAdapter(factory, &IID_IDXGIAdapter1, (void **)adapter);
    else
        hr = IDXGIFactory4_EnumAdapters1(factory, strcmp(choice, "default") ? (UINT)atoi(choice) : 0, adapter);
    IDXGIFactory4_Release(factory);
    if (hr == DXGI_ERROR_NOT_FOUND)
    {
        snprintf(failure, sizeof failure, "no DXGI adapter %s", choice);
        return 0;
    }
    CHECK(hr, strcmp(choice, "warp") ? "IDXGIFactory1::EnumAdapters1" : "IDXGIFactory4::EnumWarpAdapter");
    describe_adapter(*adapter);
    return 1;
}

static void file_version(const char *path, char *out, size_t size)
{
    DWORD ignored, length = GetFileVersionInfoSizeA(path, &ignored);
    VS_FIXEDFILEINFO *info;
    UINT info_size;
    void *data;

    snprintf(out, size, "unknown");
    snprintf(g.short_version, sizeof g.short_version, "unknown");
    if (!length || !(data = malloc(length)))
        return;
    if (GetFileVersionInfoA(path, 0, length, data) && VerQueryValueA(data, "\\", (void **)&info, &info_size)
            && info_size >= sizeof *info)
    {
        snprintf(out, size, "%u.%u.%u.%u", (unsigned)HIWORD(info->dwFileVersionMS),
                 (unsigned)LOWORD(info->dwFileVersionMS), (unsigned)HIWORD(info->dwFileVersionLS),
                 (unsigned)LOWORD(info->dwFileVersionLS));
        snprintf(g.short_version, sizeof g.short_version, "%u.%u.%u", (unsigned)HIWORD(info->dwFileVersionMS),
                 (unsigned)LOWORD(info->dwFileVersionMS), (unsigned)HIWORD(info->dwFileVersionLS));
    }
    free(data);
}

/* The sha256 of the file at ``path`` (64 lowercase hex digits; "unknown" where Windows' BCrypt cannot
 * read or hash it): the DirectML.dll as loaded, so a statement names exactly the bytes tested. */
static void file_sha256(const char *path, char *out, size_t size)
{
    static UCHAR chunk[1 << 16];
    BCRYPT_ALG_HANDLE algorithm;
    BCRYPT_HASH_HANDLE hash;
    UCHAR digest[32];
    DWORD got;
    HANDLE file;
    int ok = 1, i;

    snprintf(out, size, "unknown");
    file = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (file == INVALID_HANDLE_VALUE)
        return;
    if (BCryptOpenAlgorithmProvider(&algorithm, BCRYPT_SHA256_ALGORITHM, NULL, 0) == 0)
    {
        if (BCryptCreateHash(algorithm, &hash, NULL, 0, NULL, 0, 0) == 0)
        {
            while (ok && (ok = ReadFile(file, chunk, sizeof chunk, &got, NULL)) && got)
                ok = BCryptHashData(hash, chunk, got, 0) == 0;
            if (ok && BCryptFinishHash(hash, digest, sizeof digest, 0) == 0 && size > 64)
                for (i = 0; i < 32; i++)
                    snprintf(out + 2 * i, size - 2 * i, "%02x", digest[i]);
            BCryptDestroyHash(hash);
        }
        BCryptCloseAlgorithmProvider(algorithm, 0);
    }
    CloseHandle(file);
}

static int open_device(const char *dml_path, const char *d3d12_path, const char *adapter_choice)
{
    IDXGIAdapter1 *adapter = NULL;
    HMODULE d3d12, dml;
    d3d12_create_device_fn create_device;
    dml_create_device_fn create_dml;
    const char *(WINAPI *version)(void);
    typedef const char *(__cdecl *wine_version_fn)(void);
    wine_version_fn wine_version = (wine_version_fn)(void *)GetProcAddress(GetModuleHandleA("ntdll.dll"),
                                                                           "wine_get_version");
    D3D12_COMMAND_QUEUE_DESC queue_desc = {D3D12_COMMAND_LIST_TYPE_DIRECT, 0, D3D12_COMMAND_QUEUE_FLAG_NONE, 0};
    UINT count = sizeof FEATURE_LEVELS / sizeof FEATURE_LEVELS[0];

    if (wine_version) snprintf(g.platform, sizeof g.platform, "windows (wine %s)", wine_version());
    else snprintf(g.platform, sizeof g.platform, "windows");
    if (!(d3d12 = LoadLibraryA(d3d12_path)))
    {
        snprintf(failure, sizeof failure, "cannot load %s (error %lu)", d3d12_path, GetLastError());
        return 0;
    }
    if (!(create_device = (d3d12_create_device_fn)(void *)GetProcAddress(d3d12, "D3D12CreateDevice")))
    {
        snprintf(failure, sizeof failure, "%s has no D3D12CreateDevice", d3d12_path);
        return 0;
    }
    GetModuleFileNameA(d3d12, g.d3d12, MAX_PATH);
    version = (const char *(WINAPI *)(void))(void *)GetProcAddress(d3d12, "rngcheck_d3d12_version");
    if (version)
        snprintf(g.d3d12 + strlen(g.d3d12), sizeof g.d3d12 - strlen(g.d3d12), " (%s)", version());
    if (!(dml = LoadLibraryA(dml_path)))
    {
        snprintf(failure, sizeof failure, "cannot load %s (error %lu)", dml_path, GetLastError());
        return 0;
    }
    if (!(create_dml = (dml_create_device_fn)(void *)GetProcAddress(dml, "DMLCreateDevice1")))
    {
        snprintf(failure, sizeof failure, "%s has no DMLCreateDevice1 (DirectML 1.1 or later is needed)", dml_path);
        return 0;
    }
    GetModuleFileNameA(dml, g.dml_path, MAX_PATH);
    file_version(g.dml_path, g.dml_version, sizeof g.dml_version);
    file_sha256(g.dml_path, g.dml_sha256, sizeof g.dml_sha256);

    if (!choose_adapter(adapter_choice, &adapter)) return 0;
    CHECK(create_device((IUnknown *)adapter, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, (void **)&g.device),
          "D3D12CreateDevice");
    if (adapter) IDXGIAdapter1_Release(adapter);
    CHECK(ID3D12Device_CreateCommandQueue(g.device, &queue_desc, &IID_ID3D12CommandQueue, (void **)&g.queue),
          "ID3D12Device::CreateCommandQueue");
    CHECK(ID3D12Device_CreateCommandAllocator(g.device, D3D12_COMMAND_LIST_TYPE_DIRECT, &IID_ID3D12CommandAllocator,
                                              (void **)&g.allocator), "ID3D12Device::CreateCommandAllocator");
    CHECK(ID3D12Device_CreateCommandList(g.device, 0, D3D12_COMMAND_LIST_TYPE_DIRECT, g.allocator, NULL,
                                         &IID_ID3D12GraphicsCommandList, (void **)&g.list),
          "ID3D12Device::CreateCommandList");
    CHECK(ID3D12GraphicsCommandList_Close(g.list), "ID3D12GraphicsCommandList::Close");
    CHECK(ID3D12Device_CreateFence(g.device, 0, D3D12_FENCE_FLAG_NONE, &IID_ID3D12Fence, (void **)&g.fence),
          "ID3D12Device::CreateFence");
    if (!(g.event = CreateEventA(NULL, FALSE, FALSE, NULL))) return fail("CreateEvent", E_FAIL);
    CHECK(create_dml(g.device, 0, 0x3000, &IID_IDMLDevice_, &g.dml), "DMLCreateDevice1");

    /* The highest feature level, asking about every published level; a DirectML older than the
     * newest level may refuse levels it does not know with E_INVALIDARG: ask again without it. */
    while (count)
    {
        DML_FEATURE_QUERY_FEATURE_LEVELS query = {count, FEATURE_LEVELS};
        DML_FEATURE_DATA_FEATURE_LEVELS data = {0};
        HRESULT hr = METHOD(g.dml, DEVICE_CHECK_FEATURE_SUPPORT, check_feature_fn)(
            g.dml, DML_FEATURE_FEATURE_LEVELS, sizeof query, &query, sizeof data, &data);
        if (hr == E_INVALIDARG && FEATURE_LEVELS[count - 1] > 0x3000) { count--; continue; }
        CHECK(hr, "IDMLDevice::CheckFeatureSupport(DML_FEATURE_FEATURE_LEVELS)");
        g.feature_level = data.MaxSupportedFeatureLevel;
        return 1;
    }
    snprintf(failure, sizeof failure, "IDMLDevice::CheckFeatureSupport answered no feature level");
    return 0;
}

/* ---- one call ------------------------------------------------------------------------ */
typedef struct {
    uint32_t major, minor, flags, rank, stride_count, state_rank, out_rank, state_type, output_type;
    int64_t sizes[MAX_RANK], strides[MAX_RANK], state_sizes[MAX_RANK], out_sizes[MAX_RANK];
    uint32_t state_words;
    uint32_t state[64];
    uint64_t buffer_words;
    uint32_t *buffer;
} call_t;

static UINT64 round_up(UINT64 value, UINT64 multiple)
{
    return (value + multiple - 1) / multiple * multiple;
}

/* DMLCalcBufferTensorSize of a packed 32-bit tensor. */
static UINT64 packed_bytes(const int64_t *sizes, uint32_t rank)
{
    UINT64 n = 1;
    for (uint32_t d = 0; d < rank; d++) n *= (UINT64)sizes[d];
    return round_up(n * 4, 4);
}

/* What a DML_BUFFER_TENSOR_DESC cannot express, and feature level 3.x on a newer DirectML. */
static const char *expressible(const call_t *c, char *why, size_t size)
{
    uint32_t level = (c->major << 12) | (c->minor << 8);
    if (c->major < 3)
        return snprintf(why, size, "feature level %u.%u", c->major, c->minor), "feature-level";
    for (uint32_t d = 0; d < c->rank; d++)
    {
        if (c->sizes[d] < 0) return snprintf(why, size, "OutputTensor size %lld", (long long)c->sizes[d]), "size-zero";
        if (c->sizes[d] > 0xFFFFFFFFll)
            return snprintf(why, size, "OutputTensor size %lld exceeds UINT32", (long long)c->sizes[d]),
                   "element-count";
    }
    for (uint32_t d = 0; d < c->out_rank; d++)
        if (c->out_sizes[d] < 0 || c->out_sizes[d] > 0xFFFFFFFFll)
            return snprintf(why, size, "OutputStateTensor size %lld", (long long)c->out_sizes[d]),
                   c->out_sizes[d] < 0 ? "size-zero" : "element-count";
    if (c->flags & 2)
    {
        if (c->stride_count != c->rank)
            return snprintf(why, size, "%u strides for %u dimensions (one DimensionCount covers Sizes and Strides)",
                            c->stride_count, c->rank), "stride-count";
        for (uint32_t d = 0; d < c->rank; d++)
        {
            if (c->strides[d] < 0) return snprintf(why, size, "stride %lld", (long long)c->strides[d]), "stride-negative";
            if (c->strides[d] > 0xFFFFFFFFll)
                return snprintf(why, size, "stride %lld exceeds UINT32", (long long)c->strides[d]), "element-count";
        }
    }
    if (level < 0x4000 && g.feature_level >= 0x4000)
    {
        static const int64_t state4[4] = {1, 1, 1, 6};
        if (c->state_rank != 4 || c->rank != 4 || ((c->flags & 1) && c->out_rank != 4))
            return snprintf(why, size, "a tensor that is not 4-D at feature level 3.0"), "rank";
        if (memcmp(c->state_sizes, state4, sizeof state4) || ((c->flags & 1) && memcmp(c->out_sizes, state4, sizeof state4)))
            return snprintf(why, size, "state sizes other than {1,1,1,6} at feature level 3.0"), "state-sizes";
    }
    return NULL;
}

static void tensor(DML_BUFFER_TENSOR_DESC *buffer, DML_TENSOR_DESC *desc, UINT *sizes, UINT *strides,
                   uint32_t type, const int64_t *in_sizes, const int64_t *in_strides, uint32_t rank, UINT64 bytes)
{
    for (uint32_t d = 0; d < rank; d++)
    {
        sizes[d] = (UINT)in_sizes[d];
        if (in_strides) strides[d] = (UINT)in_strides[d];
    }
    memset(buffer, 0, sizeof *buffer);
    buffer->DataType = type;
    buffer->DimensionCount = rank;
    buffer->Sizes = sizes;
    buffer->Strides = in_strides ? strides : NULL;
    buffer->TotalTensorSizeInBytes = bytes;
    desc->Type = DML_TENSOR_TYPE_BUFFER;
    desc->Desc = buffer;
}

/* Resources made during one call, released at its end. */
static void *scope[32];
static int scope_count;

static void *keep(void *object)
{
    if (scope_count < (int)(sizeof scope / sizeof scope[0])) scope[scope_count++] = object;
    return object;
}

static int make_buffer(D3D12_HEAP_TYPE heap, UINT64 size, D3D12_RESOURCE_STATES state, ID3D12Resource **out)
{
    D3D12_HEAP_PROPERTIES properties = {heap, D3D12_CPU_PAGE_PROPERTY_UNKNOWN, D3D12_MEMORY_POOL_UNKNOWN, 1, 1};
    D3D12_RESOURCE_DESC desc = {D3D12_RESOURCE_DIMENSION_BUFFER, 0, round_up(size ? size : 4, 4), 1, 1, 1,
                                DXGI_FORMAT_UNKNOWN, {1, 0}, D3D12_TEXTURE_LAYOUT_ROW_MAJOR,
                                heap == D3D12_HEAP_TYPE_DEFAULT ? D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS
                                                                : D3D12_RESOURCE_FLAG_NONE};
    *out = NULL;
    CHECK(ID3D12Device_CreateCommittedResource(g.device, &properties, D3D12_HEAP_FLAG_NONE, &desc, state, NULL,
                                               &IID_ID3D12Resource, (void **)out),
          "ID3D12Device::CreateCommittedResource");
    keep(*out);
    return 1;
}

static int begin(void)
{
    CHECK(ID3D12CommandAllocator_Reset(g.allocator), "ID3D12CommandAllocator::Reset");
    CHECK(ID3D12GraphicsCommandList_Reset(g.list, g.allocator, NULL), "ID3D12GraphicsCommandList::Reset");
    return 1;
}

static int submit_and_wait(void)
{
    ID3D12CommandList *lists[1] = {(ID3D12CommandList *)g.list};
    CHECK(ID3D12GraphicsCommandList_Close(g.list), "ID3D12GraphicsCommandList::Close");
    ID3D12CommandQueue_ExecuteCommandLists(g.queue, 1, lists);
    CHECK(ID3D12CommandQueue_Signal(g.queue, g.fence, ++g.fence_value), "ID3D12CommandQueue::Signal");
    if (ID3D12Fence_GetCompletedValue(g.fence) < g.fence_value)
    {
        CHECK(ID3D12Fence_SetEventOnCompletion(g.fence, g.fence_value, g.event), "ID3D12Fence::SetEventOnCompletion");
        WaitForSingleObject(g.event, INFINITE);
    }
    if (ID3D12Fence_GetCompletedValue(g.fence) == UINT64_MAX)
    {
        HRESULT reason = ID3D12Device_GetDeviceRemovedReason(g.device);
        return fail("the D3D12 device was removed during execution; GetDeviceRemovedReason",
                    FAILED(reason) ? reason : DXGI_ERROR_DEVICE_REMOVED);
    }
    return 1;
}

static void transition(D3D12_RESOURCE_BARRIER *barrier, ID3D12Resource *resource, D3D12_RESOURCE_STATES before,
                       D3D12_RESOURCE_STATES after)
{
    memset(barrier, 0, sizeof *barrier);
    barrier->Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
    barrier->Transition.pResource = resource;
    barrier->Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
    barrier->Transition.StateBefore = before;
    barrier->Transition.StateAfter = after;
}

static int map_copy(ID3D12Resource *resource, int write, UINT64 offset, void *data, UINT64 size)
{
    D3D12_RANGE none = {0, 0}, all = {0, (SIZE_T)(offset + size)};
    unsigned char *pointer;
    CHECK(ID3D12Resource_Map(resource, 0, write ? &none : &all, (void **)&pointer), "ID3D12Resource::Map");
    if (write) memcpy(pointer + offset, data, (size_t)size);
    else memcpy(data, pointer + offset, (size_t)size);
    ID3D12Resource_Unmap(resource, 0, write ? &all : &none);
    return 1;
}

static int bind_buffer(DML_BINDING_DESC *desc, DML_BUFFER_BINDING *binding, ID3D12Resource *resource, UINT64 size)
{
    binding->Buffer = resource;
    binding->Offset = 0;
    binding->SizeInBytes = size;
    desc->Type = DML_BINDING_TYPE_BUFFER;
    desc->Desc = binding;
    return 1;
}

/* Steps 2-4; returns 1 with the output state in next[] (when asked) and the buffer updated. */
static int execute(call_t *c, uint32_t *next)
{
    UINT state_sizes[MAX_RANK], out_sizes[MAX_RANK], out_state_sizes[MAX_RANK], out_strides[MAX_RANK];
    DML_BUFFER_TENSOR_DESC state_buffer, out_buffer, out_state_buffer;
    DML_TENSOR_DESC state_desc, out_desc, out_state_desc;
    DML_RANDOM_GENERATOR_OPERATOR_DESC random;
    DML_OPERATOR_DESC operator_desc = {DML_OPERATOR_RANDOM_GENERATOR, &random};
    UINT64 state_bytes = round_up(packed_bytes(c->state_sizes, c->state_rank), 4);
    UINT64 out_bytes = round_up(c->buffer_words * 4, 4);
    UINT64 out_state_bytes = (c->flags & 1) ? packed_bytes(c->out_sizes, c->out_rank) : 0;
    UINT64 state_data = (UINT64)c->state_words * 4, out_offset, staging;
    void *op = NULL, *compiled = NULL, *initializer = NULL, *table = NULL, *recorder = NULL;
    DML_BINDING_PROPERTIES init_props, exec_props;
    ID3D12DescriptorHeap *heap = NULL;
    D3D12_DESCRIPTOR_HEAP_DESC heap_desc = {D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV, 1,
                                           D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE, 0};
    DML_BINDING_TABLE_DESC table_desc;
    ID3D12Resource *temporary = NULL, *persistent = NULL, *state_in, *output, *state_out = NULL, *upload, *readback;
    DML_BUFFER_BINDING temp_binding, persist_binding, in_binding, out_binding, state_binding;
    DML_BINDING_DESC temp_desc, persist_desc, inputs[1], outputs[2];
    D3D12_RESOURCE_BARRIER barriers[3];
    UINT64 temporary_size, persistent_size;
    HRESULT hr;

    if (state_bytes < state_data) state_bytes = state_data;
    tensor(&state_buffer, &state_desc, state_sizes, NULL, c->state_type, c->state_sizes, NULL, c->state_rank, state_bytes);
    tensor(&out_buffer, &out_desc, out_sizes, out_strides, c->output_type, c->sizes, (c->flags & 2) ? c->strides : NULL,
           c->rank, out_bytes);
    if (c->flags & 1)
        tensor(&out_state_buffer, &out_state_desc, out_state_sizes, NULL, c->state_type, c->out_sizes, NULL,
               c->out_rank, out_state_bytes);
    random.InputStateTensor = &state_desc;
    random.OutputTensor = &out_desc;
    random.OutputStateTensor = (c->flags & 1) ? &out_state_desc : NULL;
    random.Type = DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10;

    hr = METHOD(g.dml, DEVICE_CREATE_OPERATOR, create_operator_fn)(g.dml, &operator_desc, &IID_IDMLOperator_, &op);
    if (FAILED(hr)) return fail("IDMLDevice::CreateOperator", hr);
    keep(op);
    CHECK(METHOD(g.dml, DEVICE_COMPILE_OPERATOR, compile_operator_fn)(g.dml, op, 0, &IID_IDMLCompiledOperator_,
                                                                       &compiled), "IDMLDevice::CompileOperator");
    keep(compiled);
    CHECK(METHOD(g.dml, DEVICE_CREATE_OPERATOR_INITIALIZER, create_initializer_fn)(
              g.dml, 1, &compiled, &IID_IDMLOperatorInitializer_, &initializer),
          "IDMLDevice::CreateOperatorInitializer");
    keep(initializer);
    METHOD(initializer, DISPATCHABLE_GET_BINDING_PROPERTIES, binding_properties_fn)(initializer, &init_props);
    METHOD(compiled, DISPATCHABLE_GET_BINDING_PROPERTIES, binding_properties_fn)(compiled, &exec_props);

    heap_desc.NumDescriptors = init_props.RequiredDescriptorCount > exec_props.RequiredDescriptorCount
                               ? init_props.RequiredDescriptorCount : exec_props.RequiredDescriptorCount;
    if (!heap_desc.NumDescriptors) heap_desc.NumDescriptors = 1;
    CHECK(ID3D12Device_CreateDescriptorHeap(g.device, &heap_desc, &IID_ID3D12DescriptorHeap, (void **)&heap),
          "ID3D12Device::CreateDescriptorHeap");
    keep(heap);
    table_desc.Dispatchable = initializer;
    ((cpu_start_fn)(void *)heap->lpVtbl->GetCPUDescriptorHandleForHeapStart)(heap, &table_desc.CPUDescriptorHandle);
    ((gpu_start_fn)(void *)heap->lpVtbl->GetGPUDescriptorHandleForHeapStart)(heap, &table_desc.GPUDescriptorHandle);
    table_desc.SizeInDescriptors = heap_desc.NumDescriptors;
    CHECK(METHOD(g.dml, DEVICE_CREATE_BINDING_TABLE, create_table_fn)(g.dml, &table_desc, &IID_IDMLBindingTable_, &table),
          "IDMLDevice::CreateBindingTable");
    keep(table);
    CHECK(METHOD(g.dml, DEVICE_CREATE_COMMAND_RECORDER, create_recorder_fn)(g.dml, &IID_IDMLCommandRecorder_, &recorder),
          "IDMLDevice::CreateCommandRecorder");
    keep(recorder);

    temporary_size = init_props.TemporaryResourceSize > exec_props.TemporaryResourceSize
                     ? init_props.TemporaryResourceSize : exec_props.TemporaryResourceSize;
    persistent_size = exec_props.PersistentResourceSize;
    if (temporary_size && !make_buffer(D3D12_HEAP_TYPE_DEFAULT, temporary_size,
                                       D3D12_RESOURCE_STATE_UNORDERED_ACCESS, &temporary)) return 0;
    if (persistent_size && !make_buffer(D3D12_HEAP_TYPE_DEFAULT, persistent_size,
                                        D3D12_RESOURCE_STATE_UNORDERED_ACCESS, &persistent)) return 0;
    if (temporary) bind_buffer(&temp_desc, &temp_binding, temporary, temporary_size);
    if (persistent) bind_buffer(&persist_desc, &persist_binding, persistent, persistent_size);

    /* The initializer. */
    if (temporary && init_props.TemporaryResourceSize)
        METHOD(table, TABLE_BIND_TEMPORARY, bind_one_fn)(table, &temp_desc);
    if (persistent)
        METHOD(table, TABLE_BIND_OUTPUTS, bind_fn)(table, 1, &persist_desc);
    if (!begin()) return 0;
    ID3D12GraphicsCommandList_SetDescriptorHeaps(g.list, 1, &heap);
    METHOD(recorder, RECORDER_RECORD_DISPATCH, record_fn)(recorder, (ID3D12CommandList *)g.list, initializer, table);
    if (!submit_and_wait()) return 0;

    /* The buffers: default heap (UAV) for the three tensors, upload in, readback out. */
    out_offset = round_up(state_data > 256 ? state_data : 256, 256);
    staging = out_offset + out_bytes;
    if (!make_buffer(D3D12_HEAP_TYPE_DEFAULT, state_bytes, D3D12_RESOURCE_STATE_COPY_DEST, &state_in)
            || !make_buffer(D3D12_HEAP_TYPE_DEFAULT, out_bytes, D3D12_RESOURCE_STATE_COPY_DEST, &output)
            || ((c->flags & 1) && !make_buffer(D3D12_HEAP_TYPE_DEFAULT, out_state_bytes,
                                               D3D12_RESOURCE_STATE_UNORDERED_ACCESS, &state_out))
            || !make_buffer(D3D12_HEAP_TYPE_UPLOAD, staging, D3D12_RESOURCE_STATE_GENERIC_READ, &upload)
            || !make_buffer(D3D12_HEAP_TYPE_READBACK, staging, D3D12_RESOURCE_STATE_COPY_DEST, &readback))
        return 0;
    if (!map_copy(upload, 1, 0, c->state, state_data) || !map_copy(upload, 1, out_offset, c->buffer, c->buffer_words * 4))
        return 0;

    /* The operator's bindings. */
    table_desc.Dispatchable = compiled;
    CHECK(METHOD(table, TABLE_RESET, table_reset_fn)(table, &table_desc), "IDMLBindingTable::Reset");
    if (temporary && exec_props.TemporaryResourceSize)
        METHOD(table, TABLE_BIND_TEMPORARY, bind_one_fn)(table, &temp_desc);
    if (persistent)
        METHOD(table, TABLE_BIND_PERSISTENT, bind_one_fn)(table, &persist_desc);
    bind_buffer(&inputs[0], &in_binding, state_in, state_bytes);
    bind_buffer(&outputs[0], &out_binding, output, out_bytes);
    if (state_out) bind_buffer(&outputs[1], &state_binding, state_out, out_state_bytes);
    else { outputs[1].Type = DML_BINDING_TYPE_NONE; outputs[1].Desc = NULL; }
    METHOD(table, TABLE_BIND_INPUTS, bind_fn)(table, 1, inputs);
    METHOD(table, TABLE_BIND_OUTPUTS, bind_fn)(table, 2, outputs);

    if (!begin()) return 0;
    ID3D12GraphicsCommandList_SetDescriptorHeaps(g.list, 1, &heap);
    ID3D12GraphicsCommandList_CopyBufferRegion(g.list, state_in, 0, upload, 0, state_data);
    ID3D12GraphicsCommandList_CopyBufferRegion(g.list, output, 0, upload, out_offset, c->buffer_words * 4);
    transition(&barriers[0], state_in, D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    transition(&barriers[1], output, D3D12_RESOURCE_STATE_COPY_DEST, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    ID3D12GraphicsCommandList_ResourceBarrier(g.list, 2, barriers);
    METHOD(recorder, RECORDER_RECORD_DISPATCH, record_fn)(recorder, (ID3D12CommandList *)g.list, compiled, table);
    memset(&barriers[0], 0, sizeof barriers[0]);
    barriers[0].Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
    transition(&barriers[1], output, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_SOURCE);
    if (state_out)
        transition(&barriers[2], state_out, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, D3D12_RESOURCE_STATE_COPY_SOURCE);
    ID3D12GraphicsCommandList_ResourceBarrier(g.list, state_out ? 3 : 2, barriers);
    ID3D12GraphicsCommandList_CopyBufferRegion(g.list, readback, out_offset, output, 0, c->buffer_words * 4);
    if (state_out)
        ID3D12GraphicsCommandList_CopyBufferRegion(g.list, readback, 0, state_out, 0, out_state_bytes);
    if (!submit_and_wait()) return 0;
    if (!map_copy(readback, 0, out_offset, c->buffer, c->buffer_words * 4)) return 0;
    if (state_out && !map_copy(readback, 0, 0, next, out_state_bytes < 24 ? out_state_bytes : 24)) return 0;
    return 1;
}

static const char *fault = "";

static void answer(call_t *c)
{
    uint32_t next[6] = {0};
    char why[200], json[700], text[440];
    const char *rule = expressible(c, why, sizeof why);
    uint32_t level = (c->major << 12) | (c->minor << 8);
    int ok;

    if (c->major >= 3 && level > g.feature_level)
    {   /* a description of a feature level this DirectML does not have: it cannot be asked */
        snprintf(json, sizeof json, "{\"error\": \"the description needs DirectML feature level %u.%u; this "
                 "DirectML's maximum is %u.%u (DML_FEATURE_FEATURE_LEVELS)\", \"not_applicable\": true}",
                 c->major, c->minor, g.feature_level >> 12, (g.feature_level >> 8) & 0xF);
        send_text("FAIL", json);
        return;
    }
    if (rule)
    {
        json_escape(text, sizeof text, why);
        snprintf(json, sizeof json, "{\"message\": \"%s: %s (checked by dml_exec: a DML_BUFFER_TENSOR_DESC cannot "
                 "express it, or DirectML validates at a higher feature level)\", \"rule\": \"%s\"}", rule, text, rule);
        send_text("RJCT", json);
        return;
    }
    if (c->buffer_words > (0xFFFFFFFFull - 64) / 4)
    {
        send_text("FAIL", "{\"error\": \"buffer too large for exec protocol version 1\"}");
        return;
    }
    if (strcmp(fault, "crash") == 0) abort();
    if (strcmp(fault, "hang") == 0) for (;;) Sleep(1000);
    scope_count = 0;
    failure[0] = 0;
    failed_hr = S_OK;
    ok = execute(c, next);
    while (scope_count) release(scope[--scope_count]);
    if (!ok)
    {
        json_escape(text, sizeof text, failure);
        if (failed_hr == E_INVALIDARG && strncmp(failure, "IDMLDevice::CreateOperator", 26) == 0)
            snprintf(json, sizeof json, "{\"message\": \"%s\"}", text);     /* DirectML rejects the description */
        else
            snprintf(json, sizeof json, "{\"error\": \"%s\"}", text);
        send_text(strncmp(json, "{\"message", 9) == 0 ? "RJCT" : "FAIL", json);
        return;
    }
    if (strcmp(fault, "flip") == 0 && c->buffer_words) c->buffer[0] ^= 1u << 7;
    {
        uint32_t kind = (c->flags & 1) ? 1 : 0;
        uint32_t size = 4 + (kind ? 24 : 0) + 8 + (uint32_t)(4 * c->buffer_words);
        write_all("DONE", 4);
        write_all(&size, 4);
        write_all(&kind, 4);
        if (kind) write_all(next, 24);
        write_all(&c->buffer_words, 8);
        write_all(c->buffer, 4 * c->buffer_words);
        fflush(stdout);
    }
}

static int handle_call(uint32_t length)
{
    call_t c;
    uint32_t fixed[9];
    memset(&c, 0, sizeof c);
    if (length < sizeof fixed || !read_all(fixed, sizeof fixed)) return 0;
    c.major = fixed[0]; c.minor = fixed[1]; c.flags = fixed[2]; c.rank = fixed[3]; c.stride_count = fixed[4];
    c.state_rank = fixed[5]; c.out_rank = fixed[6]; c.state_type = fixed[7]; c.output_type = fixed[8];
    if (c.rank > MAX_RANK || c.stride_count > MAX_RANK || c.state_rank > MAX_RANK || c.out_rank > MAX_RANK) return 0;
    if (!read_all(c.sizes, 8 * c.rank)) return 0;
    if ((c.flags & 2) && !read_all(c.strides, 8 * c.stride_count)) return 0;
    if (!read_all(c.state_sizes, 8 * c.state_rank) || !read_all(c.out_sizes, 8 * c.out_rank)) return 0;
    if (!read_all(&c.state_words, 4) || c.state_words > 64 || !read_all(c.state, 4 * c.state_words)) return 0;
    if (!read_all(&c.buffer_words, 8)) return 0;
    c.buffer = malloc(c.buffer_words ? 4 * c.buffer_words : 4);
    if (!c.buffer || !read_all(c.buffer, 4 * c.buffer_words)) { free(c.buffer); return 0; }
    answer(&c);
    free(c.buffer);
    return 1;
}

static void hello(const char *name)
{
    char json[2600], adapter[200], dml[MAX_PATH * 2], d3d12[MAX_PATH * 2 + 160], label[200];
    json_escape(adapter, sizeof adapter, g.adapter[0] ? g.adapter : "default (no DXGI to name it)");
    json_escape(dml, sizeof dml, g.dml_path);
    json_escape(d3d12, sizeof d3d12, g.d3d12);
    if (name) json_escape(label, sizeof label, name);
    else snprintf(label, sizeof label, "directml-windows:%s", g.short_version);
    snprintf(json, sizeof json,
             "{\"protocol\": 1, \"name\": \"%s\", \"validates\": true, \"describe\": {"
             "\"implementation\": \"DirectML DML_OPERATOR_RANDOM_GENERATOR (Philox 4x32-10), " PROGRAM "\", "
             "\"DirectML version\": \"%s\", \"max feature level\": \"%u.%u\", \"directml library\": \"%s\", \"directml sha256\": \"%s\", "
             "\"d3d12 library\": \"%s\", \"adapter\": \"%s\", \"vendor id\": \"%s\", \"device id\": \"%s\", "
             "\"driver version\": \"%s\", \"platform\": \"%s\"}}",
             label, g.dml_version, g.feature_level >> 12, (g.feature_level >> 8) & 0xF, dml, g.dml_sha256, d3d12, adapter,
             g.vendor[0] ? g.vendor : "unknown", g.device_id[0] ? g.device_id : "unknown",
             g.driver[0] ? g.driver : "unknown", g.platform);
    send_text("HELO", json);
}

static void unavailable(const char *why)
{
    char json[600], text[500];
    json_escape(text, sizeof text, why);
    snprintf(json, sizeof json, "{\"protocol\": 1, \"error\": \"dml_exec: %s\", \"unavailable\": true}", text);
    send_text("HELO", json);
}

int main(int argc, char **argv)
{
    const char *dml = "DirectML.dll", *d3d12 = "d3d12.dll", *adapter = "default", *name = NULL;

    _setmode(_fileno(stdin), _O_BINARY);
    _setmode(_fileno(stdout), _O_BINARY);
    for (int i = 1; i < argc; i++)
    {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!value || argv[i][0] != '-' || argv[i][1] != '-')
        {
            char why[300];
            snprintf(why, sizeof why, "usage: dml_exec [--dml PATH] [--d3d12 PATH] [--adapter default|warp|N] "
                     "[--name NAME] (not understood: %s)", argv[i]);
            send_text("HELO", "{\"protocol\": 1, \"error\": \"dml_exec: bad arguments (see the usage on stderr)\"}");
            fprintf(stderr, "%s\n", why);
            return 2;
        }
        if (strcmp(argv[i], "--dml") == 0) dml = value;
        else if (strcmp(argv[i], "--d3d12") == 0) d3d12 = value;
        else if (strcmp(argv[i], "--adapter") == 0) adapter = value;
        else if (strcmp(argv[i], "--name") == 0) name = value;
        else if (strcmp(argv[i], "--fault") == 0) fault = value;
        else
        {
            char json[300], text[200];
            json_escape(text, sizeof text, argv[i]);
            snprintf(json, sizeof json, "{\"protocol\": 1, \"error\": \"dml_exec: unknown option %s\"}", text);
            send_text("HELO", json);
            return 2;
        }
        i++;
    }
    if (!open_device(dml, d3d12, adapter))
    {
        unavailable(failure);
        return 1;
    }
    hello(name);
    for (;;)
    {
        char tag[4];
        uint32_t length;
        if (!read_all(tag, 4) || !read_all(&length, 4)) return 0;
        if (memcmp(tag, "QUIT", 4) == 0) return 0;
        if (memcmp(tag, "CALL", 4) != 0 || !handle_call(length))
        {
            fprintf(stderr, "dml_exec: protocol error\n");
            return 2;
        }
    }
}
