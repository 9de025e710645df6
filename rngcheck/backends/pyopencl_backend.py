"""The ``pyopencl`` backend: pyopencl's bundled Random123 Philox, two ways (docs/library-findings.md).

``pyopencl:mode=header`` (the default): pyopencl's copy of Random123's OpenCL header
(``#include <pyopencl-random123/philox.cl>``, the ``philox4x32`` function, 10 rounds) called
from a small kernel of rngcheck's own: work item j computes block j of a launch,
``philox4x32(counter + first/4 + j, {k0, k1})`` with the 128-bit add done in the kernel
(ulong halves, carry through all four words), and writes its four lanes in order; one work
item also writes the output state, counter + ceil(n/4), computed by the same kernel code.
The Philox words are the header's; the operator's counter and state arithmetic are the
kernel's (the header has no state); the host only places the packed words (placement).

``pyopencl:mode=generator``: ``pyopencl.clrandom.PhiloxGenerator(context, key=[k1],
counter=[w0, w1, w2, w3])`` and ``fill_uniform`` on a float64 array: what the library does,
as its kernel (pyopencl/clrandom.py) and host code say and rngcheck's tests verify:

  * the key it passes is ``{get_global_id(0), k1}``: key word 0 (k0) is replaced by the
    work-item id; k0 cannot be passed at all;
  * the global size G comes from ``pyopencl.array._splay(device, n)`` (n elements, the
    device's compute units): block b of the output is made by work item b % G in its pass
    b // G, and each work item steps its own copy of the counter once per call of its
    ``gen_bits`` (carry from word 0 to 1 to 2, none into word 3);
  * there is no uint32 output (measured on PoCL): float32 is A rounded to 24 bits, int32 over
    [0, 2^31 - 1) is floor(A * (2^31 - 1) / 2^32) (0xFFFFFFFE and 0xFFFFFFFF always agree),
    int64 over [0, 2^32) is A + int32(B), two blocks added. float64 is ``2^-32 * A + 2^-64 * B``
    for two consecutive blocks A, B
    (gen_bits is called twice per pass: A = counter + 2p, B = counter + 2p + 1, in PoCL's
    evaluation order), rounded to 53 bits. floor(x * 2^32) is exactly A's word unless the
    fraction left is 0, where A's word and A's word - 1 (with B's rounding up) cannot be
    told apart: the call is then not applicable (rngcheck.NotApplicable), naming the element
    (about 2^-21 of the words: in practice the 2^26-element scale cases);
  * the host then advances counter word 0 by 2n (float64 uses two blocks per 4 outputs)
    and carries into words 1 and 2 modulo 2^31 - 1 (``counter_max``, int32 max), none
    into word 3. The returned state is the generator's ``counter`` (as uint32 words) and
    k1 from its ``key``; k0, which the generator has no notion of, is returned as given.
    Counter words are passed as the int32 values of the same bits (the kernel arguments
    are int32; pyopencl refuses 2^31 or more with "RuntimeError ... std::bad_cast").

Options: ``mode=header|generator``; ``platform=N,device=N`` as for the ``opencl`` backend.
"""

from __future__ import annotations

import numpy as np

from .. import counter
from ..description import FEATURE_LEVEL_4_0
from ..errors import BackendSpecError, BackendUnavailable, NotApplicable
from . import Backend, placement

MODES = ("header", "generator")
INSTALL_HINT = "pip install rngcheck[opencl]"

HEADER_KERNEL = r"""
#include <pyopencl-random123/philox.cl>

/* Block j of this launch: philox4x32(counter + first_block + j mod 2^128, key), lanes in
 * order (Random123's philox4x32 from pyopencl's bundled header).  Work item 0 also writes
 * the output state counter + blocks (the operator's rule 4) into state_out. */
__kernel void rngcheck_philox_header(__global uint *out, ulong ctr_lo, ulong ctr_hi, uint k0, uint k1,
                                     ulong first_block, ulong count, ulong blocks, __global uint *state_out)
{
    const ulong j = get_global_id(0);
    if (j == 0) {
        const ulong lo = ctr_lo + blocks, hi = ctr_hi + (lo < ctr_lo);
        state_out[0] = (uint)lo; state_out[1] = (uint)(lo >> 32);
        state_out[2] = (uint)hi; state_out[3] = (uint)(hi >> 32);
        state_out[4] = k0; state_out[5] = k1;
    }
    if (4 * j >= count)
        return;
    const ulong step = first_block + j;
    const ulong lo = ctr_lo + step, hi = ctr_hi + (lo < ctr_lo);
    philox4x32_ctr_t c = {{(uint)lo, (uint)(lo >> 32), (uint)hi, (uint)(hi >> 32)}};
    philox4x32_key_t k = {{k0, k1}};
    philox4x32_ctr_t r = philox4x32(c, k);
    for (ulong lane = 0; lane < 4 && 4 * j + lane < count; ++lane)
        out[4 * j + lane] = r.v[lane];
}
"""


def recover_words(values: np.ndarray) -> np.ndarray:
    """uint32 words A from float64 x = fl(2^-32 A + 2^-64 B): floor(x * 2^32), exact when the
    fraction left is not 0 (a round-up to A + 1 always leaves 0). An ambiguous one makes the
    call not applicable: the library gives no exact 32-bit word there."""
    scaled = np.asarray(values, dtype=np.float64) * 2.0 ** 32      # exact: a power of two
    whole = np.floor(scaled)
    ambiguous = np.flatnonzero(scaled == whole)
    if ambiguous.size:
        i = int(ambiguous[0])
        raise NotApplicable(f"pyopencl's float64 output cannot pin {ambiguous.size} word(s), the first at "
                           f"element {i}: x * 2^32 = {scaled[i]:.0f} exactly is word {int(whole[i])} "
                           f"(B rounded down) or {int(whole[i]) - 1} (B rounded up)")
    if np.any((whole < 0) | (whole >= 2.0 ** 32)):
        raise RuntimeError("pyopencl's float64 output is outside [0, 1)")
    return whole.astype(np.uint32)


class PyopenclBackend(Backend):
    """pyopencl's bundled Random123 Philox: the header from rngcheck's kernel, or PhiloxGenerator."""

    validates = False

    def __init__(self, mode: str = "header", platform=None, device=None):
        if mode not in MODES:
            raise BackendSpecError(f"pyopencl: mode must be one of {', '.join(MODES)}, got {mode!r}")
        try:
            import pyopencl as cl
            import pyopencl.array  # the generator's arrays
            import pyopencl.clrandom
        except ImportError:
            raise BackendUnavailable(f"pyopencl is not installed: {INSTALL_HINT}") from None
        from .opencl import _choose_device, _index, context_for
        self._cl = cl
        self.mode = mode
        self.name = "pyopencl" if mode == "header" else "pyopencl:mode=generator"
        self.device = _choose_device(cl, _index(platform, "platform"), _index(device, "device"))
        self.context, self.queue = context_for(cl, self.device)
        if mode == "header":
            try:
                # pyopencl adds its own include directory (pyopencl/cl) to every build
                program = cl.Program(self.context, HEADER_KERNEL).build()
            except cl.Error as error:
                raise BackendUnavailable(f"pyopencl's philox.cl did not build on {self.device.name}: {error}") from None
            self.kernel = cl.Kernel(program, "rngcheck_philox_header")

    def describe(self) -> dict[str, str]:
        cl, device = self._cl, self.device
        implementation = (
            "pyopencl-random123/philox.cl philox4x32 (pyopencl's bundled Random123 header), rngcheck's kernel"
            if self.mode == "header" else
            "pyopencl.clrandom.PhiloxGenerator.fill_uniform (float64 array, words recovered as floor(x * 2^32))")
        return {
            "implementation": implementation,
            "version": f"pyopencl {cl.VERSION_TEXT}",
            "pyopencl": cl.VERSION_TEXT,
            "device": device.name,
            "platform": f"{device.platform.name} ({device.platform.version})",
            "driver version": device.driver_version,
            "compute units": str(device.max_compute_units),
        }

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True,
                         feature_level=FEATURE_LEVEL_4_0):
        state = placement.read_state(state)
        if self.mode == "header":
            return self._header(state, sizes, strides, buffer, output_state)
        return self._generator(state, sizes, strides, buffer, output_state)

    # -- mode=header ----------------------------------------------------------------------

    def _header(self, state, sizes, strides, buffer, output_state):
        cl = self._cl
        low, high = counter.counter_halves(state)
        k0, k1 = counter.key_of(state)
        n = placement.checked_element_count(sizes, strides, buffer)
        state_out = np.zeros(6, dtype=np.uint32)
        state_buffer = cl.Buffer(self.context, cl.mem_flags.WRITE_ONLY, state_out.nbytes)

        def produce(first, count):
            words = np.empty(count, dtype=np.uint32)
            device_words = cl.Buffer(self.context, cl.mem_flags.WRITE_ONLY, max(4, words.nbytes))
            items = -(-count // 4)
            self.kernel(self.queue, (items,), None, device_words, np.uint64(low), np.uint64(high),
                        np.uint32(k0), np.uint32(k1), np.uint64(first // 4), np.uint64(count),
                        np.uint64(counter.blocks_for(n)), state_buffer).wait()
            cl.enqueue_copy(self.queue, words, device_words, is_blocking=True)
            return words

        placement.place(sizes, strides, buffer, produce)
        if not output_state:
            return None
        cl.enqueue_copy(self.queue, state_out, state_buffer, is_blocking=True)
        return state_out

    # -- mode=generator -------------------------------------------------------------------

    def _generator(self, state, sizes, strides, buffer, output_state):
        import pyopencl.array as cl_array
        from pyopencl.clrandom import PhiloxGenerator
        n = placement.checked_element_count(sizes, strides, buffer)
        k0, k1 = counter.key_of(state)
        # pyopencl's generator takes its key and counter as int32 kernel arguments
        generator = PhiloxGenerator(self.context, key=[counter.signed_word(k1)],
                                    counter=[counter.signed_word(w) for w in counter.counter_words(state)])
        values = cl_array.empty(self.queue, n, dtype=np.float64)
        generator.fill_uniform(values, a=0, b=1, queue=self.queue)
        recovered = recover_words(values.get(queue=self.queue))
        placement.place(sizes, strides, buffer, lambda first, count: recovered[first:first + count])
        if not output_state:
            return None
        return counter.state_from_words([counter.word_of(w) for w in generator.counter],
                                        [k0, counter.word_of(generator.key[0])])


class PyopenclGeneratorBackend(PyopenclBackend):
    """``pyopencl:mode=generator`` under a name of its own, for module:attr specs (which take no options)."""

    def __init__(self, mode: str = "generator", platform=None, device=None):
        super().__init__(mode=mode, platform=platform, device=device)
