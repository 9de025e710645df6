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
    """Bytes the kernel says can still be allocated without swapping (MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
