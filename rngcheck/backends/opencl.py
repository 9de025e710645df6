"""The ``opencl`` backend: DML_RANDOM_GENERATOR as an OpenCL kernel, run with pyopencl.

The kernel (rngcheck.backends.opencl_kernel) implements the whole operator: block counter
with the full 128-bit carry, Philox4x32-10, and the strided write, for any rank 1..8 with
64-bit offsets. The host validates the description (as DirectML does), moves the touched
part of the buffer to the device and back, and computes the output state with
rngcheck.counter, as the reference does.

Options: ``opencl`` (default device: PYOPENCL_CTX if set, else the first device of the
first platform) or ``opencl:platform=0,device=1``. ``counter_bits=32|64`` and
``rounds=N`` build deliberately broken variants, for the test panel only;
``window_bytes=N`` caps the buffer bytes moved per launch (tests use it to force several).
"""

from __future__ import annotations

import os
import time

import numpy as np

from .. import counter, layout
from ..description import FEATURE_LEVEL_4_0, Description, validate
from ..errors import BackendSpecError, BackendUnavailable, RngcheckError
from . import Backend
from .opencl_kernel import SOURCE

BLOCKS_PER_ITEM = 16      # packed kernel: Philox blocks per work item (one uint16 group)
GROUP = 64                # strided kernel: elements per work item (sixteen blocks)
LOCAL_SIZE = 64           # work items per work group (at most)
WINDOW_LIMIT = 1 << 30    # bytes of buffer moved to the device per launch, at most

# Programs are built once per context and options, contexts made once per device: a
# second backend on the same device (e.g. a broken variant) reuses them.
_CONTEXTS: dict = {}
_PROGRAMS: dict = {}


class OpenCLBuildError(RngcheckError):
    """The kernel did not compile; the message carries the build log."""


def _index(value, what):
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise BackendSpecError(f"opencl: {what} must be an integer, got {value!r}") from None


def context_for(cl, device):
    """(context, queue) for ``device``, made once per process and shared by every backend on it."""
    key = device.int_ptr
    if key not in _CONTEXTS:
        context = cl.Context([device])
        _CONTEXTS[key] = (context, cl.CommandQueue(context))
    return _CONTEXTS[key]


def _choose_device(cl, platform, device):
    """The device to run on: explicit indices, else PYOPENCL_CTX, else the first device."""
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    if not platforms:
        raise BackendUnavailable("no OpenCL platform found (is an ICD such as pocl-opencl-icd installed?)")
    if platform is None and device is None and os.environ.get("PYOPENCL_CTX"):
        try:   # pyopencl's own reading of PYOPENCL_CTX, never prompting
            if hasattr(cl, "choose_devices"):
                return cl.choose_devices(interactive=False)[0]
            return cl.create_some_context(interactive=False).devices[0]
        except Exception as error:
            raise BackendUnavailable(f"PYOPENCL_CTX={os.environ['PYOPENCL_CTX']!r} names no "
                                     f"OpenCL device: {error}") from None
    platform = platform or 0
    if not 0 <= platform < len(platforms):
        raise BackendUnavailable(f"no OpenCL platform {platform} ({len(platforms)} found)")
    try:
        devices = platforms[platform].get_devices()
    except cl.Error:
        devices = []
    if not devices:
        raise BackendUnavailable(f"OpenCL platform {platforms[platform].name!r} has no device")
    device = device or 0
    if not 0 <= device < len(devices):
        raise BackendUnavailable(f"no OpenCL device {device} on platform {platforms[platform].name!r} "
                                 f"({len(devices)} found)")
    return devices[device]


def _collapse(sizes, strides):
    """The same element -> offset map with fewer dimensions: size-1 dimensions dropped, a
    dimension merged into the next when it steps exactly over it (stride = size' * stride')."""
    dims = [(int(s), int(t)) for s, t in zip(sizes, strides) if int(s) != 1] or [(1, 1)]
    merged = [dims[0]]
    for size, stride in dims[1:]:
        outer_size, outer_stride = merged[-1]
        if outer_stride == size * stride:
            merged[-1] = (outer_size * size, stride)
        else:
            merged.append((size, stride))
    return [s for s, _ in merged], [t for _, t in merged]


def _windows(dims, steps, limit, first=0, base=0):
    """Launches as (first element, count, first offset, words spanned), each spanning at most
    ``limit`` words: runs of the outermost dimension (offsets i0 * stride0 + inner offset),
    and when one row of it is too large, that row's own runs, and so on."""
    inner_count = layout.element_count(dims[1:])
    inner_extent = layout.required_elements(dims[1:], steps[1:])
    if inner_extent > limit:
        for i0 in range(dims[0]):
            yield from _windows(dims[1:], steps[1:], limit, first + i0 * inner_count, base + i0 * steps[0])
        return
    per_window = dims[0] if steps[0] == 0 else min(dims[0], (limit - inner_extent) // steps[0] + 1)
    for i0 in range(0, dims[0], per_window):
        rows = min(per_window, dims[0] - i0)
        yield (first + i0 * inner_count, rows * inner_count, base + i0 * steps[0],
               (rows - 1) * steps[0] + inner_extent)


class OpenCLBackend(Backend):
    """The operator as one OpenCL kernel (see rngcheck.backends.opencl_kernel)."""

    name = "opencl"
    validates = True

    def __init__(self, platform=None, device=None, counter_bits="128", rounds="10", window_bytes=None):
        try:
            import pyopencl as cl
        except ImportError:
            raise BackendUnavailable("pyopencl is not installed (pip install rngcheck[opencl])") from None
        self._cl = cl
        self.counter_bits = _index(counter_bits, "counter_bits")
        self.rounds = _index(rounds, "rounds")
        if self.counter_bits not in (32, 64, 128):
            raise BackendSpecError(f"opencl: counter_bits must be 32, 64 or 128, got {counter_bits!r}")
        self.window_bytes = _index(window_bytes, "window_bytes")
        self.device = _choose_device(cl, _index(platform, "platform"), _index(device, "device"))
        self.context, self.queue = context_for(cl, self.device)
        self.options = [f"-DPHILOX_ROUNDS={self.rounds}", f"-DCOUNTER_BITS={self.counter_bits}",
                        f"-DBLOCKS_PER_ITEM={BLOCKS_PER_ITEM}"]
        self.program, self.build_seconds = self._program()
        self.packed_kernel = cl.Kernel(self.program, "philox_packed")
        self.strided_kernel = cl.Kernel(self.program, "philox_strided")
        self.local_size = min([LOCAL_SIZE] + [
            kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device)
            for kernel in (self.packed_kernel, self.strided_kernel)])
        self._scratch = None
        self.timings = dict.fromkeys(("upload", "kernel", "download"), 0.0)  # seconds, all calls
        if self.counter_bits != 128 or self.rounds != 10:
            self.name = f"opencl[broken: counter_bits={self.counter_bits}, rounds={self.rounds}]"

    def _program(self):
        """The built program for this context and options, built on first use."""
        key = (self.context.int_ptr, tuple(self.options), SOURCE)
        if key not in _PROGRAMS:
            started = time.perf_counter()
            try:
                program = self._cl.Program(self.context, SOURCE).build(options=self.options)
            except self._cl.Error as error:  # for a build failure, pyopencl's message carries the log
                raise OpenCLBuildError(f"OpenCL kernel build failed on {self.device.name}:\n{error}") from None
            _PROGRAMS[key] = (program, time.perf_counter() - started)
        return _PROGRAMS[key]

    def describe(self) -> dict[str, str]:
        cl, device = self._cl, self.device
        return {
            "implementation": "rngcheck OpenCL kernel (pyopencl)",
            "version": f"pyopencl {cl.VERSION_TEXT}",
            "platform": f"{device.platform.name} ({device.platform.version})",
            "device": device.name,
            "device type": ", ".join(kind for kind in ("CPU", "GPU", "ACCELERATOR", "CUSTOM")
                                     if device.type & getattr(cl.device_type, kind, 0)),
            "driver version": device.driver_version,
            "OpenCL version": device.version,
            "OpenCL C version": device.opencl_c_version,
            "compute units": str(device.max_compute_units),
            "compiler options": " ".join(self.options),
            "work-group size": str(self.local_size),
            "build time": f"{self.build_seconds:.3f} s (first build of this program in this process)",
            "pyopencl": cl.VERSION_TEXT,
        }

    def close(self) -> None:
        self._scratch = None

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        validate(Description.of_call(state, sizes, strides, buffer, output_state, feature_level))
        state = counter.state_array(state)
        n = layout.element_count(sizes)
        dims, steps = _collapse(sizes, layout.effective_strides(sizes, strides))
        distinct = not layout.aliases(sizes, strides)
        if buffer.flags.c_contiguous:
            self._run(state, n, dims, steps, distinct, buffer)
        else:   # work on a contiguous copy, then put it back
            work = np.ascontiguousarray(buffer)
            self._run(state, n, dims, steps, distinct, work)
            buffer[...] = work
        if not output_state:
            return None
        return counter.advance(state, n, counter_bits=self.counter_bits)  # rule 4, on the host

    # -- launches ---------------------------------------------------------------------------

    def _run(self, state, n, dims, steps, distinct, buffer):
        """Every element, in launches over windows of the buffer no larger than the limit."""
        args = (*map(np.uint64, counter.counter_halves(state)), *map(np.uint32, counter.key_of(state)))
        packed = dims == [n] and steps == [1]   # packed row-major: offset = logical index
        shape = () if packed else (np.uint32(len(dims)), self._constant(dims), self._constant(steps))
        limit = max(GROUP, self._window_limit() // 4 // GROUP * GROUP)   # words; packed windows stay 4-aligned
        for first, count, base, span in _windows(dims, steps, limit):
            # Upload the window unless every word of it is about to be overwritten.
            upload = not (distinct and span == count)
            if packed:
                items = -(-count // (4 * BLOCKS_PER_ITEM))
            else:
                items = (first + count - 1) // GROUP - first // GROUP + 1
            self._launch(self.packed_kernel if packed else self.strided_kernel, args, first, count,
                         base, buffer[base:base + span], items, shape, upload)

    def _launch(self, kernel, args, first, count, base, window, items, shape, upload=False):
        """Copy ``window`` in (if some of it is not overwritten), run, copy it back."""
        cl, clock = self._cl, time.perf_counter
        device_buffer = self._device_buffer(window.nbytes)
        started = clock()
        if upload:
            cl.enqueue_copy(self.queue, device_buffer, window, is_blocking=True)
        uploaded = clock()
        global_size = -(-items // self.local_size) * self.local_size
        kernel(self.queue, (global_size,), (self.local_size,), device_buffer, *args,
               np.uint64(first), np.uint64(count), np.uint64(base), *shape).wait()
        ran = clock()
        cl.enqueue_copy(self.queue, window, device_buffer, is_blocking=True)
        for step, seconds in (("upload", uploaded - started), ("kernel", ran - uploaded),
                              ("download", clock() - ran)):
            self.timings[step] += seconds

    def _window_limit(self):
        limit = min(self.device.max_mem_alloc_size, WINDOW_LIMIT)
        return min(limit, self.window_bytes) if self.window_bytes else limit

    def _device_buffer(self, nbytes):
        """A device buffer of at least ``nbytes``, kept between calls (no per-call allocation)."""
        if self._scratch is None or self._scratch.size < nbytes:
            self._scratch = None
            self._scratch = self._cl.Buffer(self.context, self._cl.mem_flags.READ_WRITE, max(nbytes, 4))
        return self._scratch

    def _constant(self, values):
        words = np.zeros(8, dtype=np.uint64)
        words[:len(values)] = values
        return self._cl.Buffer(self.context, self._cl.mem_flags.READ_ONLY | self._cl.mem_flags.COPY_HOST_PTR,
                               hostbuf=words)
