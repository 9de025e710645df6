/* The reference's Philox4x32-R stream, compiled: a speed-up of rngcheck/philox.py only.

   philox.py's numpy code is the spec and the fallback (rngcheck.philox.philox4x32, annotated round
   by round); tests/test_reference.py holds this file to it bit for bit (hypothesis: counters at every
   carry, keys, rounds 0-13, lengths across the batch) and to Random123's known answers on both paths.
   The multipliers and Weyl increments are not written here: philox.py passes them in
   (constants = M0, M1, W0, W1), so they have one home.

   Block j (j = 0 .. blocks-1) is Philox4x32-R of the 128-bit counter start + j mod 2^128
   (start[0] the lowest word) under the key (key[0], key[1]); its four words are out[4j .. 4j+3].
   Blocks are taken BATCH at a time, each round over the batch's lanes, so that the compiler keeps
   them in registers (its speed: docs/performance.md). */

#include <stdint.h>

#define BATCH 16

void philox4x32_stream(const uint32_t *start, const uint32_t *key, const uint32_t *constants,
                       int64_t blocks, int rounds, uint32_t *out) {
    const uint64_t low = (uint64_t)start[0] | ((uint64_t)start[1] << 32);
    const uint64_t high = (uint64_t)start[2] | ((uint64_t)start[3] << 32);
    const uint64_t m0 = constants[0], m1 = constants[1];
    for (int64_t b = 0; b < blocks; b += BATCH) {
        uint32_t c0[BATCH], c1[BATCH], c2[BATCH], c3[BATCH];
        for (int i = 0; i < BATCH; i++) {        /* the counter start + b + i, carried through 128 bits */
            uint64_t lo = low + (uint64_t)(b + i), hi = high + (lo < low);
            c0[i] = (uint32_t)lo; c1[i] = (uint32_t)(lo >> 32); c2[i] = (uint32_t)hi; c3[i] = (uint32_t)(hi >> 32);
        }
        uint32_t k0 = key[0], k1 = key[1];
        for (int r = 0; r < rounds; r++) {
            if (r) { k0 += constants[2]; k1 += constants[3]; }   /* the key bumped between rounds */
            for (int i = 0; i < BATCH; i++) {
                uint64_t p0 = m0 * c0[i], p1 = m1 * c2[i];       /* hi0:lo0 = M0 * c0, hi1:lo1 = M1 * c2 */
                uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[i] ^ k0;  /* c0' = hi1 ^ c1 ^ k0 */
                uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3[i] ^ k1;  /* c2' = hi0 ^ c3 ^ k1 */
                c1[i] = (uint32_t)p1;                             /* c1' = lo1 */
                c3[i] = (uint32_t)p0;                             /* c3' = lo0 */
                c0[i] = n0; c2[i] = n2;
            }
        }
        int64_t kept = blocks - b < BATCH ? blocks - b : BATCH;
        for (int64_t i = 0; i < kept; i++) {
            uint32_t *o = out + 4 * (b + i);
            o[0] = c0[i]; o[1] = c1[i]; o[2] = c2[i]; o[3] = c3[i];
        }
    }
}
