/* rngcheck's vkd3d D3D12 for Windows programs: rngcheck_d3d12.dll, for DirectML.dll under Wine.
 *
 * Wine's own d3d12.dll (Wine 8.0 in Debian 12) is built on a vkd3d that skips DXIL, and every
 * DirectML shader is DXIL. This DLL is vkd3d 1.14 (the copy bundled in Debian's wine 10.0 source
 * package) cross-built for Windows with mingw-w64 and its DXIL front end (windows.py), plus what
 * follows. A Windows program loads it instead of d3d12.dll and calls its D3D12CreateDevice; under
 * Wine, vkd3d's Vulkan calls go to winevulkan and on to the host's Vulkan driver (lavapipe where
 * there is no GPU). Built for Windows, vkd3d's methods have the Microsoft x64 convention that a
 * Windows caller uses: none of the System V adapters of d3d12_bridge.c are needed here.
 *
 *   W1. D3D12CreateDevice is written on vkd3d_create_instance / vkd3d_create_device (the bundle
 *       has no vkd3d-utils). vulkan-1.dll is loaded when the first device is made, so a machine
 *       without Vulkan gets a failed HRESULT and a line on stderr, not a DLL that will not load.
 *   W2. ID3D12Device::GetAdapterLuid answers the LUID of the DXGI adapter passed in, else of
 *       DXGI adapter 0: DMLCreateDevice looks its device's adapter up by LUID through DXGI, and
 *       gives up with DXGI_ERROR_NOT_FOUND on a LUID DXGI does not know.
 *   W3. ID3D12Device5::EnumerateMetaCommands is E_NOTIMPL in vkd3d, and DMLCreateDevice gives up
 *       on that; this DLL answers S_OK with zero meta commands (as d3d12_bridge.c does on Linux).
 *
 * RNGCHECK_BRIDGE_DEBUG=1 logs what it does on stderr.
 */
#define COBJMACROS
#define INITGUID
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <windows.h>
#include <d3d12.h>
#include <dxgi.h>
#include <vkd3d.h>

#define EXPORT __declspec(dllexport)

static int debug_enabled(void)
{
    static int enabled = -1;
    if (enabled < 0)
    {
        const char *value = getenv("RNGCHECK_BRIDGE_DEBUG");
        enabled = value && *value && *value != '0';
    }
    return enabled;
}

#define DEBUG(...) do { if (debug_enabled()) fprintf(stderr, "rngcheck-d3d12: " __VA_ARGS__); } while (0)

#include "vkd3d_device.h"

static CRITICAL_SECTION lock;
static struct vkd3d_instance *instance;
static HMODULE vulkan;

BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, void *reserved)
{
    (void)module; (void)reserved;
    if (reason == DLL_PROCESS_ATTACH)
        InitializeCriticalSection(&lock);
    return TRUE;
}

/* ---- W3 --------------------------------------------------------------------------------- */

/* device_EnumerateMetaCommands: vkd3d_device.h */

/* vkd3d's vtables are constant data: one slot is made writable for the time of the write. */
static int patch(void *vtable, size_t slot, void *function)
{
    void **entry = (void **)vtable + slot;
    DWORD old;

    if (*entry == function)
        return 0;
    if (!VirtualProtect(entry, sizeof(*entry), PAGE_EXECUTE_READWRITE, &old))
    {
        fprintf(stderr, "rngcheck-d3d12: cannot make a vkd3d vtable writable (error %lu)\n", GetLastError());
        return -1;
    }
    *entry = function;
    VirtualProtect(entry, sizeof(*entry), old, &old);
    return 0;
}

#define SLOT(vtbl_type, method) (offsetof(vtbl_type, method) / sizeof(void *))

/* ---- W2 --------------------------------------------------------------------------------- */

typedef HRESULT (WINAPI *create_factory_fn)(REFIID, void **);

static HRESULT adapter_luid(IUnknown *adapter, LUID *luid)
{
    IDXGIAdapter *dxgi_adapter = NULL;
    IDXGIFactory1 *factory = NULL;
    IDXGIAdapter1 *first = NULL;
    DXGI_ADAPTER_DESC desc;
    create_factory_fn create;
    HMODULE dxgi;
    HRESULT hr;

    if (adapter && SUCCEEDED(IUnknown_QueryInterface(adapter, &IID_IDXGIAdapter, (void **)&dxgi_adapter)))
    {
        hr = IDXGIAdapter_GetDesc(dxgi_adapter, &desc);
        IDXGIAdapter_Release(dxgi_adapter);
        if (SUCCEEDED(hr))
            *luid = desc.AdapterLuid;
        return hr;
    }
    if (!(dxgi = LoadLibraryA("dxgi.dll"))
            || !(create = (create_factory_fn)(void *)GetProcAddress(dxgi, "CreateDXGIFactory1")))
        return DXGI_ERROR_UNSUPPORTED;
    if (FAILED(hr = create(&IID_IDXGIFactory1, (void **)&factory)))
        return hr;
    hr = IDXGIFactory1_EnumAdapters1(factory, 0, &first);
    IDXGIFactory1_Release(factory);
    if (FAILED(hr))
        return hr;
    hr = IDXGIAdapter1_GetDesc(first, &desc);
    IDXGIAdapter1_Release(first);
    if (SUCCEEDED(hr))
        *luid = desc.AdapterLuid;
    return hr;
}

/* ---- W1 --------------------------------------------------------------------------------- */

static HRESULT signal_event(HANDLE event)
{
    return SetEvent(event) ? S_OK : E_FAIL;
}

/* The modules holding Vulkan's code stay loaded for the life of the process: under Wine, the
 * Vulkan functions live in winevulkan.dll, which dxgi.dll also loads and frees again; without the
 * pin the adapter look-up (W2) unloaded it under vkd3d's feet. */
static void pin(const void *code)
{
    HMODULE module;
    if (code && !GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                                    (const char *)code, &module))
        DEBUG("cannot pin the module at %p (error %lu)\n", code, GetLastError());
}

static HRESULT create_instance(void)
{
    struct vkd3d_instance_create_info info;
    PFN_vkGetInstanceProcAddr get_proc;
    HRESULT hr;

    if (instance)
        return S_OK;
    if (!vulkan && !(vulkan = LoadLibraryA("vulkan-1.dll")))
    {
        fprintf(stderr, "rngcheck-d3d12: cannot load vulkan-1.dll (error %lu)\n", GetLastError());
        return DXGI_ERROR_UNSUPPORTED;
    }
    if (!(get_proc = (PFN_vkGetInstanceProcAddr)(void *)GetProcAddress(vulkan, "vkGetInstanceProcAddr")))
    {
        fprintf(stderr, "rngcheck-d3d12: vulkan-1.dll has no vkGetInstanceProcAddr\n");
        return DXGI_ERROR_UNSUPPORTED;
    }
    pin(get_proc);
    pin((const void *)get_proc(NULL, "vkCreateInstance"));
    memset(&info, 0, sizeof(info));
    info.type = VKD3D_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pfn_signal_event = signal_event;
    info.wchar_size = sizeof(WCHAR);
    info.pfn_vkGetInstanceProcAddr = get_proc;
    if (FAILED(hr = vkd3d_create_instance(&info, &instance)))
        instance = NULL;
    return hr;
}

EXPORT HRESULT WINAPI D3D12CreateDevice(IUnknown *adapter, D3D_FEATURE_LEVEL minimum_feature_level,
        REFIID iid, void **device)
{
    struct vkd3d_device_create_info info;
    ID3D12Device *created = NULL;
    ID3D12Device5 *device5 = NULL;
    LUID luid = {0, 0};
    HRESULT hr;

    DEBUG("D3D12CreateDevice(adapter %p, feature level %#x)\n", (void *)adapter, minimum_feature_level);
    if (FAILED(hr = adapter_luid(adapter, &luid)))
    {
        fprintf(stderr, "rngcheck-d3d12: no DXGI adapter to name the device after (%#lx)\n", (unsigned long)hr);
        return hr;
    }
    EnterCriticalSection(&lock);
    hr = create_instance();
    LeaveCriticalSection(&lock);
    if (FAILED(hr))
    {
        fprintf(stderr, "rngcheck-d3d12: vkd3d_create_instance failed (%#lx): no Vulkan driver?\n",
                (unsigned long)hr);
        return hr;
    }
    memset(&info, 0, sizeof(info));
    info.type = VKD3D_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.minimum_feature_level = minimum_feature_level;
    info.instance = instance;
    info.adapter_luid = luid;
    if (FAILED(hr = vkd3d_create_device(&info, &IID_ID3D12Device, (void **)&created)))
    {
        fprintf(stderr, "rngcheck-d3d12: vkd3d_create_device failed (%#lx)\n", (unsigned long)hr);
        return hr;
    }
    DEBUG("device %p, adapter LUID %08lx:%08lx\n", (void *)created, (unsigned long)luid.HighPart,
          (unsigned long)luid.LowPart);
    if (SUCCEEDED(ID3D12Device_QueryInterface(created, &IID_ID3D12Device5, (void **)&device5)))
    {
        int failed = patch((void *)device5->lpVtbl, SLOT(ID3D12Device5Vtbl, EnumerateMetaCommands),
                           device_EnumerateMetaCommands);
        ID3D12Device5_Release(device5);
        if (failed)
        {
            ID3D12Device_Release(created);
            return E_FAIL;
        }
    }
    return hand_over(created, iid, device);
}

/* The version of this D3D12, for the program's handshake. */
EXPORT const char *WINAPI rngcheck_d3d12_version(void)
{
    return RNGCHECK_BRIDGE_VERSION;
}
