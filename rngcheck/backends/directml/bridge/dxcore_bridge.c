/* rngcheck's DXCore bridge: libdxcore.so for the Linux (WSL) build of DirectML.
 *
 * DMLCreateDevice looks up the adapter of the D3D12 device it is given through DXCore:
 * DXCoreCreateAdapterFactory -> IDXCoreAdapterFactory::GetAdapterByLuid (the LUID from
 * ID3D12Device::GetAdapterLuid) -> IDXCoreAdapter::GetProperty (HardwareID,
 * DriverDescription, IsIntegrated, DriverVersion, ...). This library answers with the one
 * adapter the D3D12 bridge created its device on (a Vulkan device, lavapipe on a machine
 * without a GPU), as described by rngcheck_bridge_adapter() in libd3d12.so.
 * Interfaces, IIDs and property numbers: dxcore_interface.h (Wine's copy, from the same
 * Debian wine source package as vkd3d).
 */
#define COBJMACROS
#define INITGUID
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <dxcore.h>

#include "bridge.h"

/* The three objects are static singletons: reference counts are kept but never free them. */
struct object { const void *vtbl; LONG refcount; };

static struct object factory, list, adapter;

static BOOL is(REFIID a, const GUID *b) { return !memcmp(a, b, sizeof(GUID)); }

static HRESULT query(struct object *self, const GUID *own, REFIID iid, void **out)
{
    if (!out)
        return E_POINTER;
    if (is(iid, own) || is(iid, &IID_IUnknown))
    {
        __atomic_add_fetch(&self->refcount, 1, __ATOMIC_SEQ_CST);
        *out = self;
        return S_OK;
    }
    DEBUG("QueryInterface for an unknown interface {%08x-...}\n", (unsigned)iid->Data1);
    *out = NULL;
    return E_NOINTERFACE;
}

static ULONG add_ref(void *self) { return __atomic_add_fetch(&((struct object *)self)->refcount, 1, __ATOMIC_SEQ_CST); }
static ULONG release(void *self) { return __atomic_sub_fetch(&((struct object *)self)->refcount, 1, __ATOMIC_SEQ_CST); }

static struct rngcheck_bridge_adapter describe(void)
{
    struct rngcheck_bridge_adapter info;
    memset(&info, 0, sizeof(info));
    rngcheck_bridge_adapter(&info);
    return info;
}

/* ---- IDXCoreAdapter ---------------------------------------------------------------------- */

static HRESULT STDMETHODCALLTYPE adapter_QueryInterface(IDXCoreAdapter *self, REFIID iid, void **out)
{
    return query((struct object *)self, &IID_IDXCoreAdapter, iid, out);
}
static ULONG STDMETHODCALLTYPE adapter_AddRef(IDXCoreAdapter *self) { return add_ref(self); }
static ULONG STDMETHODCALLTYPE adapter_Release(IDXCoreAdapter *self) { return release(self); }
static BOOL STDMETHODCALLTYPE adapter_IsValid(IDXCoreAdapter *self) { (void)self; return describe().valid; }

static BOOL STDMETHODCALLTYPE adapter_IsAttributeSupported(IDXCoreAdapter *self, REFGUID attribute)
{
    (void)self;
    return is(attribute, &DXCORE_ADAPTER_ATTRIBUTE_D3D12_CORE_COMPUTE)
        || is(attribute, &DXCORE_ADAPTER_ATTRIBUTE_D3D12_GRAPHICS);
}

/* The size of each property this adapter answers; 0 for the others. */
static size_t property_size(DXCoreAdapterProperty property)
{
    switch (property)
    {
        case InstanceLuid: return sizeof(LUID);
        case DriverVersion: return sizeof(uint64_t);
        case DriverDescription: return strlen(describe().name) + 1;
        case HardwareID: return sizeof(DXCoreHardwareID);
        case HardwareIDParts: return sizeof(DXCoreHardwareIDParts);
        case DedicatedAdapterMemory: case DedicatedSystemMemory: case SharedSystemMemory: return sizeof(uint64_t);
        case IsHardware: case IsIntegrated: case IsDetachable: case AcgCompatible: return sizeof(BOOL);
        default: return 0;
    }
}

static BOOL STDMETHODCALLTYPE adapter_IsPropertySupported(IDXCoreAdapter *self, DXCoreAdapterProperty property)
{
    (void)self;
    return property_size(property) != 0;
}

static HRESULT STDMETHODCALLTYPE adapter_GetPropertySize(IDXCoreAdapter *self, DXCoreAdapterProperty property,
        size_t *size)
{
    (void)self;
    if (!size)
        return E_POINTER;
    if (!(*size = property_size(property)))
        return DXGI_ERROR_UNSUPPORTED;
    return S_OK;
}

static HRESULT STDMETHODCALLTYPE adapter_GetProperty(IDXCoreAdapter *self, DXCoreAdapterProperty property,
        size_t buffer_size, void *buffer)
{
    struct rngcheck_bridge_adapter info = describe();
    size_t size = property_size(property);
    uint64_t u64 = 0;
    BOOL flag = FALSE;

    (void)self;
    DEBUG("IDXCoreAdapter::GetProperty(%u, %zu)\n", (unsigned)property, buffer_size);
    if (!size)
        return DXGI_ERROR_UNSUPPORTED;
    if (!buffer)
        return E_POINTER;
    if (buffer_size < size)
        return E_INVALIDARG;
    switch (property)
    {
        case InstanceLuid:
        {
            LUID luid = {info.luid_low, info.luid_high};
            memcpy(buffer, &luid, sizeof(luid));
            return S_OK;
        }
        case DriverDescription:
            memcpy(buffer, info.name, size);
            return S_OK;
        case HardwareID:
        {
            DXCoreHardwareID id = {info.vendor_id, info.device_id, 0, 0};
            memcpy(buffer, &id, sizeof(id));
            return S_OK;
        }
        case HardwareIDParts:
        {
            DXCoreHardwareIDParts parts = {info.vendor_id, info.device_id, 0, 0, 0};
            memcpy(buffer, &parts, sizeof(parts));
            return S_OK;
        }
        case DriverVersion: u64 = info.driver_version; break;
        case DedicatedAdapterMemory: u64 = info.dedicated_memory; break;
        case DedicatedSystemMemory: case SharedSystemMemory: u64 = 0; break;
        case IsHardware: flag = info.device_type != 4; /* VK_PHYSICAL_DEVICE_TYPE_CPU */ goto boolean;
        case IsIntegrated: flag = info.device_type == 1; /* VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU */ goto boolean;
        default: flag = FALSE; goto boolean;
    }
    memcpy(buffer, &u64, sizeof(u64));
    return S_OK;
boolean:
    memcpy(buffer, &flag, sizeof(flag));
    return S_OK;
}

static BOOL STDMETHODCALLTYPE adapter_IsQueryStateSupported(IDXCoreAdapter *self, DXCoreAdapterState state)
{
    (void)self; (void)state;
    return FALSE;
}
static HRESULT STDMETHODCALLTYPE adapter_QueryState(IDXCoreAdapter *self, DXCoreAdapterState state,
        size_t details_size, const void *details, size_t buffer_size, void *buffer)
{
    (void)self; (void)state; (void)details_size; (void)details; (void)buffer_size; (void)buffer;
    return DXGI_ERROR_UNSUPPORTED;
}
static BOOL STDMETHODCALLTYPE adapter_IsSetStateSupported(IDXCoreAdapter *self, DXCoreAdapterState state)
{
    (void)self; (void)state;
    return FALSE;
}
static HRESULT STDMETHODCALLTYPE adapter_SetState(IDXCoreAdapter *self, DXCoreAdapterState state,
        size_t details_size, const void *details, size_t buffer_size, const void *buffer)
{
    (void)self; (void)state; (void)details_size; (void)details; (void)buffer_size; (void)buffer;
    return DXGI_ERROR_UNSUPPORTED;
}
static HRESULT STDMETHODCALLTYPE adapter_GetFactory(IDXCoreAdapter *self, REFIID iid, void **out)
{
    (void)self;
    return query(&factory, &IID_IDXCoreAdapterFactory, iid, out);
}

static const IDXCoreAdapterVtbl adapter_vtbl =
{
    adapter_QueryInterface, adapter_AddRef, adapter_Release, adapter_IsValid, adapter_IsAttributeSupported,
    adapter_IsPropertySupported, adapter_GetProperty, adapter_GetPropertySize, adapter_IsQueryStateSupported,
    adapter_QueryState, adapter_IsSetStateSupported, adapter_SetState, adapter_GetFactory,
};

/* ---- IDXCoreAdapterList ------------------------------------------------------------------- */

static HRESULT STDMETHODCALLTYPE list_QueryInterface(IDXCoreAdapterList *self, REFIID iid, void **out)
{
    return query((struct object *)self, &IID_IDXCoreAdapterList, iid, out);
}
static ULONG STDMETHODCALLTYPE list_AddRef(IDXCoreAdapterList *self) { return add_ref(self); }
static ULONG STDMETHODCALLTYPE list_Release(IDXCoreAdapterList *self) { return release(self); }
static HRESULT STDMETHODCALLTYPE list_GetAdapter(IDXCoreAdapterList *self, uint32_t index, REFIID iid, void **out)
{
    (void)self;
    if (index != 0)
        return E_INVALIDARG;
    return query(&adapter, &IID_IDXCoreAdapter, iid, out);
}
static uint32_t STDMETHODCALLTYPE list_GetAdapterCount(IDXCoreAdapterList *self) { (void)self; return 1; }
static BOOL STDMETHODCALLTYPE list_IsStale(IDXCoreAdapterList *self) { (void)self; return FALSE; }
static HRESULT STDMETHODCALLTYPE list_GetFactory(IDXCoreAdapterList *self, REFIID iid, void **out)
{
    (void)self;
    return query(&factory, &IID_IDXCoreAdapterFactory, iid, out);
}
static HRESULT STDMETHODCALLTYPE list_Sort(IDXCoreAdapterList *self, uint32_t count,
        const DXCoreAdapterPreference *preferences)
{
    (void)self; (void)count; (void)preferences;
    return S_OK;
}
static BOOL STDMETHODCALLTYPE list_IsAdapterPreferenceSupported(IDXCoreAdapterList *self,
        DXCoreAdapterPreference preference)
{
    (void)self; (void)preference;
    return TRUE;
}

static const IDXCoreAdapterListVtbl list_vtbl =
{
    list_QueryInterface, list_AddRef, list_Release, list_GetAdapter, list_GetAdapterCount, list_IsStale,
    list_GetFactory, list_Sort, list_IsAdapterPreferenceSupported,
};

/* ---- IDXCoreAdapterFactory ---------------------------------------------------------------- */

static HRESULT STDMETHODCALLTYPE factory_QueryInterface(IDXCoreAdapterFactory *self, REFIID iid, void **out)
{
    return query((struct object *)self, &IID_IDXCoreAdapterFactory, iid, out);
}
static ULONG STDMETHODCALLTYPE factory_AddRef(IDXCoreAdapterFactory *self) { return add_ref(self); }
static ULONG STDMETHODCALLTYPE factory_Release(IDXCoreAdapterFactory *self) { return release(self); }
static HRESULT STDMETHODCALLTYPE factory_CreateAdapterList(IDXCoreAdapterFactory *self, uint32_t count,
        const GUID *attributes, REFIID iid, void **out)
{
    (void)self; (void)count; (void)attributes;
    return query(&list, &IID_IDXCoreAdapterList, iid, out);
}
static HRESULT STDMETHODCALLTYPE factory_GetAdapterByLuid(IDXCoreAdapterFactory *self, REFLUID luid,
        REFIID iid, void **out)
{
    struct rngcheck_bridge_adapter info = describe();
    (void)self;
    DEBUG("GetAdapterByLuid(%08x:%08x)\n", (unsigned)luid->HighPart, (unsigned)luid->LowPart);
    if (!info.valid || luid->LowPart != info.luid_low || luid->HighPart != info.luid_high)
    {
        if (out)
            *out = NULL;
        return E_INVALIDARG;
    }
    return query(&adapter, &IID_IDXCoreAdapter, iid, out);
}
static BOOL STDMETHODCALLTYPE factory_IsNotificationTypeSupported(IDXCoreAdapterFactory *self,
        DXCoreNotificationType type)
{
    (void)self; (void)type;
    return FALSE;
}
static HRESULT STDMETHODCALLTYPE factory_RegisterEventNotification(IDXCoreAdapterFactory *self, IUnknown *object,
        DXCoreNotificationType type, PFN_DXCORE_NOTIFICATION_CALLBACK callback, void *context, uint32_t *cookie)
{
    (void)self; (void)object; (void)type; (void)callback; (void)context; (void)cookie;
    return DXGI_ERROR_UNSUPPORTED;
}
static HRESULT STDMETHODCALLTYPE factory_UnregisterEventNotification(IDXCoreAdapterFactory *self, uint32_t cookie)
{
    (void)self; (void)cookie;
    return S_OK;
}

static const IDXCoreAdapterFactoryVtbl factory_vtbl =
{
    factory_QueryInterface, factory_AddRef, factory_Release, factory_CreateAdapterList, factory_GetAdapterByLuid,
    factory_IsNotificationTypeSupported, factory_RegisterEventNotification, factory_UnregisterEventNotification,
};

static struct object factory = {&factory_vtbl, 1}, list = {&list_vtbl, 1}, adapter = {&adapter_vtbl, 1};

EXPORT HRESULT WINAPI DXCoreCreateAdapterFactory(REFIID iid, void **out)
{
    DEBUG("DXCoreCreateAdapterFactory\n");
    return query(&factory, &IID_IDXCoreAdapterFactory, iid, out);
}
