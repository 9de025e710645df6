"""Buffers that another process can map: the check's buffer for large tensors (issue 29).

A large tensor's buffer is allocated once, in an anonymous shared-memory file (Linux
``memfd_create``), and mapped here; a worker process maps the same pages through
``/proc/<pid>/fd/<fd>`` (rngcheck.backends.exec_protocol, "shared buffers"), so the buffer
crosses the exec protocol without a copy: its bytes are in memory once, whatever the
processes that touch them. memfd files are not bounded by /dev/shm's size and vanish with
their last mapping.

``allocate(words)`` gives a uint32 array backed by such a file; ``segment_of(array)`` says
which file, and where in it, an array (or a view of one) lives, or None for ordinary memory.
"""

from __future__ import annotations

import mmap
import os
import weakref

import numpy as np

WORD_BYTES = 4
# Buffers of at least this many words are allocated shared (the 2^26-word case and the huge profile).
SHARED_WORDS = 1 << 26

_SEGMENTS: list[tuple[int, int, int, weakref.ref]] = []   # (address, bytes, descriptor, the mmap)


def available() -> bool:
    """Whether this system has memfd_create (Linux); elsewhere buffers stay ordinary memory."""
    return hasattr(os, "memfd_create") and os.path.isdir(f"/proc/{os.getpid()}/fd")


def allocate(words: int) -> np.ndarray:
    """A zeroed uint32 array of ``words`` in a shared-memory file (ordinary memory where there is none).

    Pages are only backed when written: a buffer's untouched pages cost nothing.
    """
    nbytes = max(1, int(words)) * WORD_BYTES
    if not available():
        return np.zeros(int(words), dtype=np.uint32)
    fd = os.memfd_create("rngcheck-buffer", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, nbytes)
        mapping = mmap.mmap(fd, nbytes)   # MAP_SHARED
    except BaseException:
        os.close(fd)
        raise
    weakref.finalize(mapping, os.close, fd)   # the descriptor (a worker's way in) lives as long as the mapping
    array = np.frombuffer(mapping, dtype=np.uint32, count=int(words))
    _SEGMENTS[:] = [s for s in _SEGMENTS if s[3]() is not None]
    _SEGMENTS.append((array.ctypes.data, nbytes, fd, weakref.ref(mapping)))
    return array


def segment_of(array: np.ndarray) -> tuple[str, int] | None:
    """(path another process opens to map the file, byte offset of ``array``'s first element), or None
    when ``array`` is not a contiguous view into a shared buffer of this process."""
    if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
        return None
    start = array.ctypes.data
    for address, nbytes, fd, ref in _SEGMENTS:
        mapping = ref()
        if mapping is None or mapping.closed:
            continue
        if address <= start and start + array.nbytes <= address + nbytes:
            return f"/proc/{os.getpid()}/fd/{fd}", start - address
    return None


def attach(path: str, offset: int, words: int) -> np.ndarray:
    """The other side: ``words`` uint32 words at byte ``offset`` of the shared file at ``path``, mapped."""
    fd = os.open(path, os.O_RDWR)
    try:
        size = os.fstat(fd).st_size
        if offset < 0 or offset % WORD_BYTES or offset + words * WORD_BYTES > size:
            raise ValueError(f"the shared buffer {path} holds {size} bytes: no {words} words at byte {offset}")
        start = offset // mmap.ALLOCATIONGRANULARITY * mmap.ALLOCATIONGRANULARITY
        length = offset - start + max(1, words) * WORD_BYTES
        mapping = mmap.mmap(fd, length, offset=start)
    finally:
        os.close(fd)
    return np.frombuffer(mapping, dtype=np.uint32, count=words, offset=offset - start)


def memory_available() -> int | None:
    """Bytes this process can still allocate (the tightest of memory_limits), or None if unknown."""
    limits = memory_limits()
    return min(limits.values()) if limits else None


def memory_limits() -> dict[str, int]:
    """Bytes this process can still allocate under each limit that applies to it, by its name:

    1. ``MemAvailable``: what the kernel says can be allocated without swapping (/proc/meminfo).
    2. ``RLIMIT_AS``: the address-space limit (``ulimit -v``) less the process's virtual size
       (/proc/self/status VmSize): an mmap or a numpy array past it fails, whatever memory is free.
    3. ``cgroup``: the memory limit of the process's control group less its usage (cgroup v2
       memory.max - memory.current, or v1 memory.limit_in_bytes - memory.usage_in_bytes): past it the
       kernel kills the process (an OOM kill, not an error rngcheck could report).
    A limit that cannot be read, or is unlimited, is left out.
    """
    limits: dict[str, int] = {}
    meminfo = _meminfo_value("/proc/meminfo", "MemAvailable:")
    if meminfo is not None:
        limits["MemAvailable"] = meminfo
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        size = _meminfo_value("/proc/self/status", "VmSize:")
        if soft != resource.RLIM_INFINITY and size is not None:
            limits["RLIMIT_AS"] = max(0, soft - size)
    except (ImportError, OSError, ValueError):
        pass
    group = _cgroup_headroom()
    if group is not None:
        limits["cgroup"] = group
    return limits


def shortfall(needed: int, margin: int = 0) -> str | None:
    """Why ``needed`` bytes (and ``margin`` kept free) do not fit this process now, naming the limit
    (memory_limits), or None when they fit or nothing is known."""
    limits = memory_limits()
    if not limits:
        return None
    name, room = min(limits.items(), key=lambda item: item[1])
    if needed + margin <= room:
        return None
    kept = f", {margin / 2**30:.1f} GiB kept free" if margin else ""
    return (f"it needs {needed / 2**30:.1f} GiB and this process can allocate {room / 2**30:.1f} GiB "
            f"({name}{kept})")


def _meminfo_value(path: str, key: str) -> int | None:
    """A ``key: N kB`` line of a /proc file, in bytes."""
    try:
        with open(path) as lines:
            for line in lines:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _read_int(path: str) -> int | None:
    try:
        with open(path) as file:
            text = file.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_headroom() -> int | None:
    """The process's control group's memory limit less its usage (v2, else v1), or None."""
    try:
        with open("/proc/self/cgroup") as lines:
            entries = [line.strip().split(":", 2) for line in lines if line.count(":") >= 2]
    except OSError:
        return None
    for _, controllers, path in entries:
        if controllers == "":   # cgroup v2: "0::/path"
            base = "/sys/fs/cgroup" + path.rstrip("/")
            limit, usage = _read_int(base + "/memory.max"), _read_int(base + "/memory.current")
            if limit is not None and usage is not None:
                return max(0, limit - usage)
        elif "memory" in controllers.split(","):
            for base in ("/sys/fs/cgroup/memory" + path.rstrip("/"), "/sys/fs/cgroup/memory"):
                limit, usage = _read_int(base + "/memory.limit_in_bytes"), _read_int(base + "/memory.usage_in_bytes")
                if limit is not None and usage is not None and limit < 1 << 62:
                    return max(0, limit - usage)
    return None
