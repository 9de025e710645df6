"""OpenCL C source of the ``opencl`` backend: DML_RANDOM_GENERATOR as one program.

A Python string rather than a package data file, so an installed rngcheck always has it.
Build-time macros (``-D``) of the program:
  PHILOX_ROUNDS   rounds of Philox4x32 (10; another value is a deliberately broken variant)
  COUNTER_BITS    width of the block-counter add: 128 (the spec), or 64 / 32 to model an
                  implementation whose carry stops at a word boundary (broken variants)
  BLOCKS_PER_ITEM Philox blocks per work item in the packed kernel (a multiple of 16)
"""

SOURCE = r"""
/* DML_RANDOM_GENERATOR (DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10), the whole operator.
 *
 * The rules (DirectML, DML_RANDOM_GENERATOR_OPERATOR_DESC; rngcheck.reference):
 *   state   = 6 words: a 128-bit counter (word 0 least significant), then key k0, k1;
 *   element i, counted in row-major order over Sizes, is lane i % 4 of
 *             Philox4x32-10(counter + floor(i / 4) mod 2^128, key);
 *   it is written at offset sum(coord_d * stride_d) (DirectML, "Using strides to
 *             express padding and memory layout"), and nowhere else.
 * The output state (counter + ceil(n / 4)) is computed by the host (rngcheck.counter).
 *
 * Indices and offsets are 64-bit (ulong): tensors may have up to 2^32 - 1 elements and
 * strides put them further apart than that.  A launch covers logical elements
 * first .. first + count - 1 and writes out[offset - base]: the host moves a window of
 * the buffer, starting at offset `base`, to the device.
 */

#ifndef PHILOX_ROUNDS
#define PHILOX_ROUNDS 10
#endif
#ifndef COUNTER_BITS
#define COUNTER_BITS 128
#endif
#ifndef BLOCKS_PER_ITEM
#define BLOCKS_PER_ITEM 16
#endif
#define MAX_RANK 8

/* Philox4x32 constants (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3",
 * SC11, table 2; Random123 philox.h PHILOX_M4x32_0/1, PHILOX_W32_0/1). */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

/* The counters of sixteen consecutive blocks b .. b+15, one block per vector lane:
 * counter + b mod 2^128, the carry running through all four words (DirectML: "a
 * monotonically increasing 128-bit counter"; rngcheck.counter.block_counters).  The
 * counter arrives as two 64-bit halves (words 0-1 and 2-3).  COUNTER_BITS 64 and 32 are
 * the broken variants the test panel must catch: their carry stops at word 1 / word 0. */
void block_counters16(ulong b, ulong ctr_lo, ulong ctr_hi, uint16 c[4])
{
    const ulong16 block = (ulong16)b + (ulong16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    ulong16 lo = (ulong16)ctr_lo + block;
    ulong16 hi = (ulong16)ctr_hi;
    if (COUNTER_BITS == 128)
        hi -= as_ulong16(lo < block);          /* carry out of word 1 (a true compare is -1) */
    if (COUNTER_BITS == 32)
        lo = ((ulong16)ctr_lo & (ulong16)0xFFFFFFFF00000000UL)
           | convert_ulong16(convert_uint16((ulong16)ctr_lo) + convert_uint16(block));
    c[0] = convert_uint16(lo);
    c[1] = convert_uint16(lo >> 32);
    c[2] = convert_uint16(hi);
    c[3] = convert_uint16(hi >> 32);
}

/* Philox4x32-R of the counters c under the key (k0, k1), sixteen blocks at once.
 * Each round (Random123 philox.h, _philox4x32round):
 *     hi0:lo0 = M0 * c0      hi1:lo1 = M1 * c2        (32 x 32 -> 64-bit products)
 *     c' = (hi1 ^ c1 ^ k0,  lo1,  hi0 ^ c3 ^ k1,  lo0)
 * and between rounds the key is bumped: k0 += W0, k1 += W1 (mod 2^32).
 * The products are taken in ulong16 (hi and lo from one multiply: vpmuludq on x86), which
 * PoCL ran ~1.4x faster than mul_hi plus a separate low multiply. */
void philox4x32_16(uint16 c[4], uint k0, uint k1)
{
    for (int round = 0; round < PHILOX_ROUNDS; ++round) {
        if (round) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        const ulong16 p0 = convert_ulong16(c[0]) * (ulong16)PHILOX_M0;
        const ulong16 p1 = convert_ulong16(c[2]) * (ulong16)PHILOX_M1;
        const uint16 c1 = c[1], c3 = c[3];
        c[0] = convert_uint16(p1 >> 32) ^ c1 ^ k0;
        c[1] = convert_uint16(p1);
        c[2] = convert_uint16(p0 >> 32) ^ c3 ^ k1;
        c[3] = convert_uint16(p0);
    }
}

/* Sixteen consecutive blocks b .. b+15, returned interleaved as the operator orders
 * them: word 4j + lane of the 64 is lane `lane` of block b + j. */
void philox16(ulong b, ulong ctr_lo, ulong ctr_hi, uint k0, uint k1, uint16 words[4])
{
    uint16 c[4];
    block_counters16(b, ctr_lo, ctr_hi, c);
    philox4x32_16(c, k0, k1);

    /* Transpose 4 x 16 -> 16 x 4: pair lanes 0,1 and 2,3 (as 64-bit), then the pairs. */
    const uint16 lo_pairs = (uint16)(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const uint16 hi_pairs = lo_pairs + (uint16)8;
    const ulong8 c01a = as_ulong8(shuffle2(c[0], c[1], lo_pairs)), c01b = as_ulong8(shuffle2(c[0], c[1], hi_pairs));
    const ulong8 c23a = as_ulong8(shuffle2(c[2], c[3], lo_pairs)), c23b = as_ulong8(shuffle2(c[2], c[3], hi_pairs));
    const ulong8 lo_quads = (ulong8)(0, 8, 1, 9, 2, 10, 3, 11);
    const ulong8 hi_quads = lo_quads + (ulong8)4;
    words[0] = as_uint16(shuffle2(c01a, c23a, lo_quads));  /* blocks 0..3 */
    words[1] = as_uint16(shuffle2(c01a, c23a, hi_quads));  /* blocks 4..7 */
    words[2] = as_uint16(shuffle2(c01b, c23b, lo_quads));  /* blocks 8..11 */
    words[3] = as_uint16(shuffle2(c01b, c23b, hi_quads));  /* blocks 12..15 */
}

#define GROUP 64   /* output words of sixteen blocks */

/* Packed row-major layout: offset = logical index, so block b fills words 4b .. 4b+3.
 * A work item writes BLOCKS_PER_ITEM consecutive blocks, sixteen at a time.  The launch
 * covers elements first .. first+count-1 (the host aligns first to a multiple of 4). */
__kernel void philox_packed(__global uint *out, ulong ctr_lo, ulong ctr_hi,
                            uint k0, uint k1, ulong first, ulong count, ulong base)
{
    for (int step = 0; step < BLOCKS_PER_ITEM; step += 16) {
        const ulong local_word = (get_global_id(0) * (ulong)BLOCKS_PER_ITEM + step) * 4;
        if (local_word >= count)
            return;
        uint16 words[4];
        philox16((first + local_word) / 4, ctr_lo, ctr_hi, k0, k1, words);
        __global uint *dst = out + (first + local_word - base);
        if (local_word + GROUP <= count) {
            vstore16(words[0], 0, dst); vstore16(words[1], 1, dst);
            vstore16(words[2], 2, dst); vstore16(words[3], 3, dst);
        } else {                                   /* the last, partial group: never past count */
            const uint *all = (const uint *)words;
            for (ulong k = 0; k < count - local_word; ++k)
                dst[k] = all[k];
        }
    }
}

/* Any layout, rank 1..8: sizes[d] and strides[d] for d < rank (row-major: the last
 * dimension varies fastest).  Work item g owns the aligned group of 64 logical elements
 * 64 * (first / 64 + g) ..., clipped to the launch's first .. first+count-1: it generates
 * their sixteen blocks, finds the coordinates of its first element by division, and
 * writes element after element, stepping the coordinates like an odometer. */
__kernel void philox_strided(__global uint *out, ulong ctr_lo, ulong ctr_hi,
                             uint k0, uint k1, ulong first, ulong count, ulong base,
                             uint rank, __constant ulong *sizes, __constant ulong *strides)
{
    const ulong group = (first / GROUP + get_global_id(0)) * GROUP;
    const ulong start = max(group, first), end = min(group + GROUP, first + count);
    if (start >= end)
        return;
    uint16 words[4];
    philox16(group / 4, ctr_lo, ctr_hi, k0, k1, words);
    const uint *all = (const uint *)words;

    ulong coord[MAX_RANK];
    ulong offset = 0, rest = start;
    for (int d = (int)rank - 1; d >= 0; --d) {
        coord[d] = rest % sizes[d];
        rest /= sizes[d];
        offset += coord[d] * strides[d];
    }
    const ulong inner_size = sizes[rank - 1], inner_stride = strides[rank - 1];
    if (coord[rank - 1] + (end - start) <= inner_size) {   /* all in one innermost row */
        __global uint *dst = out + (offset - base);
        if (inner_stride == 1 && end - start == GROUP) {
            vstore16(words[0], 0, dst); vstore16(words[1], 1, dst);
            vstore16(words[2], 2, dst); vstore16(words[3], 3, dst);
        } else {
            for (ulong i = start; i < end; ++i)
                dst[(i - start) * inner_stride] = all[i - group];
        }
        return;
    }
    for (ulong i = start; i < end; ++i) {
        out[offset - base] = all[i - group];
        for (int d = (int)rank - 1; d >= 0; --d) {   /* next element: odometer step */
            offset += strides[d];
            if (++coord[d] < sizes[d])
                break;
            offset -= sizes[d] * strides[d];
            coord[d] = 0;
        }
    }
}
"""
