/* What the D3D12 bridge (libd3d12.so) tells the DXCore bridge (libdxcore.so) and rngcheck, and
 * what both share. */
#ifndef RNGCHECK_BRIDGE_H
#define RNGCHECK_BRIDGE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* RNGCHECK_BRIDGE_DEBUG=1: the bridges say on stderr what they do. */
static inline int debug_enabled(void)
{
    const char *value = getenv("RNGCHECK_BRIDGE_DEBUG");
    return value && *value && strcmp(value, "0");
}

#define DEBUG(...) do { if (debug_enabled()) fprintf(stderr, "rngcheck-bridge: " __VA_ARGS__); } while (0)

#ifndef RNGCHECK_BRIDGE_VERSION
#define RNGCHECK_BRIDGE_VERSION "unknown"
#endif

/* The LUID the bridge gives its one adapter (any non-zero value would do). */
#define RNGCHECK_BRIDGE_LUID_LOW 0x52434b31u   /* "RCK1" */
#define RNGCHECK_BRIDGE_LUID_HIGH 0

/* Filled from vkGetPhysicalDeviceProperties of the Vulkan device vkd3d chose; layout shared
 * with rngcheck/backends/directml/loader.py (ctypes). */
struct rngcheck_bridge_adapter
{
    int32_t valid;
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t driver_version;
    uint32_t api_version;
    uint32_t device_type;          /* VkPhysicalDeviceType: 4 is CPU */
    uint32_t luid_low;
    int32_t luid_high;
    uint64_t dedicated_memory;
    char name[256];
};

int rngcheck_bridge_adapter(struct rngcheck_bridge_adapter *out);

#endif
