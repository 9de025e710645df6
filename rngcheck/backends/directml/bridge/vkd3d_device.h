/* What both of rngcheck's D3D12s on vkd3d (d3d12_bridge.c, libd3d12.so for the Linux DirectML;
 * d3d12_windows.c, rngcheck_d3d12.dll for DirectML.dll) do alike with a device vkd3d made.
 * Included after d3d12.h and a DEBUG(...) macro. */
#ifndef RNGCHECK_VKD3D_DEVICE_H
#define RNGCHECK_VKD3D_DEVICE_H

/* ID3D12Device5::EnumerateMetaCommands is E_NOTIMPL in vkd3d, and DMLCreateDevice gives up on
 * that: S_OK with zero meta commands (DirectML then uses its own shaders for everything). */
static HRESULT STDMETHODCALLTYPE device_EnumerateMetaCommands(ID3D12Device5 *self, UINT *count,
        D3D12_META_COMMAND_DESC *descs)
{
    (void)self; (void)descs;
    DEBUG("EnumerateMetaCommands: none\n");
    if (!count)
        return E_INVALIDARG;
    *count = 0;
    return S_OK;
}

/* D3D12CreateDevice's ending: the interface asked for (S_FALSE for none), the creation's
 * reference released. */
static HRESULT hand_over(ID3D12Device *created, REFIID iid, void **device)
{
    HRESULT hr;

    if (!device)
    {
        ID3D12Device_Release(created);
        return S_FALSE;
    }
    hr = ID3D12Device_QueryInterface(created, iid, device);
    ID3D12Device_Release(created);
    return hr;
}

#endif
