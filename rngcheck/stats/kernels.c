/* The battery's hot loops in C (rngcheck/stats/kernels.py builds this file once, on first use,
 * into the cache, and calls it through ctypes). Every function here computes exactly the integer
 * counts of the numpy code it stands for (kernels.py holds both; tests/test_stats_kernels.py
 * compares them): nothing here is a floating-point result except where the numpy code's own
 * function is called the same way (hypot in spectral_below), and the spectral test's own FFT
 * (spectral_counts), which decides only where an error bound puts numpy's FFT on the same side
 * of the threshold and hands the other rows back to it.
 *
 * Conventions: words are uint32 in stream order, a "row" is one sample of s words; outputs
 * are int64 arrays the caller allocates (zeroed by the functions that accumulate). Bits of a
 * word are read most significant first where the numpy code does (bits.py).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;
typedef uint32_t u32;
typedef uint64_t u64;

#ifdef __AVX2__
#include <immintrin.h>
#endif

/* Comparisons of up to 64 consecutive words as the bits of masks (bit i: word i). steps: rising
 * (x[i + 1] > x[i]) and falling (x[i + 1] < x[i]) for i < count (count + 1 words read); clear:
 * x[i] & mask == 0 for i < count. A full 64 with AVX2 (built with -march=native where the CPU has
 * it): eight words a compare, their signs gathered by movemask; else the plain loops, the same bits. */
#ifdef __AVX2__
#define SIGNS8(v) ((u64)(u32)_mm256_movemask_ps(_mm256_castsi256_ps(v)))
#endif
static inline void steps(const u32 *x, i64 count, u64 *rising, u64 *falling) {
    u64 up = 0, down = 0;
#ifdef __AVX2__
    if (count == 64) {
        const __m256i flip = _mm256_set1_epi32((int)0x80000000u);   /* unsigned order as signed order */
        for (int g = 0; g < 8; g++) {
            __m256i now = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(x + 8 * g)), flip);
            __m256i next = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(x + 8 * g + 1)), flip);
            up |= SIGNS8(_mm256_cmpgt_epi32(next, now)) << (8 * g);
            down |= SIGNS8(_mm256_cmpgt_epi32(now, next)) << (8 * g);
        }
        count = 0;
    }
#endif
    for (i64 i = 0; i < count; i++) {
        up |= (u64)(x[i + 1] > x[i]) << i;
        down |= (u64)(x[i + 1] < x[i]) << i;
    }
    *rising = up;
    *falling = down;
}
static inline u64 clear(const u32 *x, i64 count, u32 mask) {
    u64 bits = 0;
#ifdef __AVX2__
    if (count == 64) {
        const __m256i m = _mm256_set1_epi32((int)mask), zero = _mm256_setzero_si256();
        for (int g = 0; g < 8; g++) {
            __m256i now = _mm256_loadu_si256((const __m256i *)(x + 8 * g));
            bits |= SIGNS8(_mm256_cmpeq_epi32(_mm256_and_si256(now, m), zero)) << (8 * g);
        }
        return bits;
    }
#endif
    for (i64 i = 0; i < count; i++) bits |= (u64)((x[i] & mask) == 0) << i;
    return bits;
}

/* knuth.ByteFrequency: per row, counts of the 256 byte values (all four bytes of every word). */
void byte_counts(const u32 *w, i64 rows, i64 s, i64 *out) {
    for (i64 r = 0; r < rows; r++) {
        u32 h[4][256];
        memset(h, 0, sizeof h);
        const u32 *x = w + r * s;
        for (i64 i = 0; i < s; i++) {
            u32 v = x[i];
            h[0][v & 255]++; h[1][(v >> 8) & 255]++; h[2][(v >> 16) & 255]++; h[3][v >> 24]++;
        }
        for (int v = 0; v < 256; v++) out[r * 256 + v] = (i64)h[0][v] + h[1][v] + h[2][v] + h[3][v];
    }
}

/* knuth.Frequency16: per row, counts of the 65536 16-bit values (both halves of every word). */
void u16_counts(const u32 *w, i64 rows, i64 s, i64 *out) {
    u32 *h = (u32 *)malloc(sizeof(u32) << 16);  /* 256 KiB: not on a thread's stack */
    for (i64 r = 0; r < rows; r++) {
        const uint16_t *x = (const uint16_t *)(w + r * s);
        memset(h, 0, sizeof(u32) << 16);
        for (i64 i = 0; i < 2 * s; i++) h[x[i]]++;
        for (i64 v = 0; v < (1 << 16); v++) out[r * (1 << 16) + v] = h[v];
    }
    free(h);
}

/* lanes.lane_bit_counts of the words, of word i xor word i+1 and of word i xor word i+4:
 * (rows, 3, 4, 32) counts of ones per (lane = i mod 4, bit, least significant = 0). Bit-sliced,
 * the four lanes of a block side by side in one vector: 4-bit fields (at most 15 blocks), then
 * 8-bit fields (at most 255), then the counts. */
typedef u32 v4 __attribute__((vector_size(16)));

/* The three kinds (0: the words, 1: word ^ word+1, 4: word ^ word+4) in one pass over the row. */
static void lane_counts_row(const u32 *x, i64 s, i64 *out) {
    v4 oct[3][8], nib[3][4];
    const v4 ones = {0x11111111u, 0x11111111u, 0x11111111u, 0x11111111u};
    const v4 low = {0x0F0F0F0Fu, 0x0F0F0F0Fu, 0x0F0F0F0Fu, 0x0F0F0F0Fu};
    const int kinds[3] = {0, 1, 4};
    i64 blocks = s / 4, done = 0;
    int spills = 0;
    memset(oct, 0, sizeof oct);
    while (done < blocks) {
        i64 take = blocks - done < 15 ? blocks - done : 15;
        memset(nib, 0, sizeof nib);
        for (i64 j = done; j < done + take; j++) {
            v4 v[3];
            memcpy(&v[0], x + 4 * j, sizeof v[0]);
            if (4 * j + 8 <= s) {  /* every neighbour within the row */
                v4 n1, n4;
                memcpy(&n1, x + 4 * j + 1, sizeof n1);
                memcpy(&n4, x + 4 * j + 4, sizeof n4);
                v[1] = v[0] ^ n1;
                v[2] = v[0] ^ n4;
            } else {
                for (int k = 1; k < 3; k++) {  /* the words `kind` further on; zero beyond the row */
                    int kind = kinds[k];
                    v4 next = {0, 0, 0, 0};
                    i64 at = 4 * j + kind;
                    for (int l = 0; l < 4; l++) next[l] = at + l < s ? x[at + l] : 0;
                    v4 valid = {4 * j + kind < s, 4 * j + 1 + kind < s, 4 * j + 2 + kind < s, 4 * j + 3 + kind < s};
                    v[k] = (v[0] ^ next) * valid;
                }
            }
            for (int k = 0; k < 3; k++)
                for (int b = 0; b < 4; b++) nib[k][b] += (v[k] >> b) & ones;
        }
        for (int k = 0; k < 3; k++)
            for (int b = 0; b < 4; b++) {
                oct[k][b] += nib[k][b] & low;
                oct[k][b + 4] += (nib[k][b] >> 4) & low;
            }
        done += take;
        if (++spills == 17 || done == blocks) {  /* 17 * 15 = 255: a byte field is full */
            for (int k = 0; k < 3; k++)
                for (int lane = 0; lane < 4; lane++)
                    for (int o = 0; o < 8; o++)
                        for (int g = 0; g < 4; g++)
                            out[128 * k + lane * 32 + 8 * g + o] += (oct[k][o][lane] >> (8 * g)) & 0xFF;
            memset(oct, 0, sizeof oct);
            spills = 0;
        }
    }
}

void lane_bit_counts3(const u32 *w, i64 rows, i64 s, i64 *out) {
    memset(out, 0, sizeof(i64) * rows * 3 * 128);
    for (i64 r = 0; r < rows; r++) lane_counts_row(w + r * s, s, out + r * 384);
}

/* nist.LongestRun: per row, counts of 128-bit blocks (4 words, most significant bit first) by
 * the longest run of ones: <= 4, 5, 6, 7, 8, >= 9. a_k (bit set where a run of k ones ends) is
 * a_(k-1) & (a_(k-1) << 1) over the block's 128 bits; the class is how many of a_5 .. a_9 are not
 * zero. Four blocks side by side in vectors of 64-bit halves; the row's last blocks padded with
 * zero blocks (class 0, taken off again). */
typedef u64 v4u64 __attribute__((vector_size(32)));
typedef i64 v4i64 __attribute__((vector_size(32)));

static void longest_run_4blocks(const u32 *x, v4i64 *c) {
    v4u64 a, b, hi, lo;
    memcpy(&a, x, sizeof a);                      /* 64-bit lane i: word 2i, word 2i + 1 above it */
    memcpy(&b, x + 8, sizeof b);
#ifdef __clang__
    hi = __builtin_shufflevector(a, b, 0, 2, 4, 6);
    lo = __builtin_shufflevector(a, b, 1, 3, 5, 7);
#else
    hi = __builtin_shuffle(a, b, (v4u64){0, 2, 4, 6});
    lo = __builtin_shuffle(a, b, (v4u64){1, 3, 5, 7});
#endif
    hi = (hi << 32) | (hi >> 32);                 /* the block's first word most significant */
    lo = (lo << 32) | (lo >> 32);
    v4u64 h2 = (hi << 1) | (lo >> 63), l2 = lo << 1;
    hi &= h2; lo &= l2;                           /* a_2 */
    h2 = (hi << 2) | (lo >> 62); l2 = lo << 2;
    hi &= h2; lo &= l2;                           /* a_4 */
    v4i64 cls = {0, 0, 0, 0};
    for (int k = 0; k < 5; k++) {                 /* a_5 .. a_9 */
        h2 = (hi << 1) | (lo >> 63); l2 = lo << 1;
        hi &= h2; lo &= l2;
        cls -= (v4i64)((hi | lo) != 0);           /* a true comparison is -1 */
    }
    for (int v = 0; v < 6; v++) c[v] -= (v4i64)(cls == v);
}

void longest_run_classes(const u32 *w, i64 rows, i64 s, i64 *out) {
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        i64 words = s - s % 4, j = 0;
        v4i64 c[6];
        memset(c, 0, sizeof c);
        for (; j + 16 <= words; j += 16) longest_run_4blocks(x + j, c);
        if (j < words) {
            u32 last[16] = {0};
            memcpy(last, x + j, sizeof(u32) * (size_t)(words - j));
            longest_run_4blocks(last, c);
        }
        i64 *o = out + r * 6;
        for (int v = 0; v < 6; v++) o[v] = c[v][0] + c[v][1] + c[v][2] + c[v][3];
        o[0] -= j < words ? (16 - (words - j)) / 4 : 0;   /* the padding's zero blocks */
    }
}

/* knuth.Poker: per row, words by the number of distinct hexadecimal digits: <= 3, 4, ..., 8.
 * sets: the set of the four digits of each 16-bit value (a 16-bit mask). */
void poker_counts(const u32 *w, i64 rows, i64 s, const uint16_t *sets, i64 *out) {
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        i64 c[17] = {0};
        for (i64 i = 0; i < s; i++) c[__builtin_popcount(sets[x[i] & 0xFFFF] | sets[x[i] >> 16])]++;
        out[r * 6] = c[1] + c[2] + c[3];
        for (int q = 4; q <= 8; q++) out[r * 6 + q - 3] = c[q];
    }
}

/* Runs of length 1..5 and >= 6 (6 counts) of a row of s words from its step bits R (bit i: step
 * x[i] -> x[i+1] continues the run; `words` words, zero beyond step s-2). With S[j] = "a run
 * starts at j" (j = 0, or step j-1 does not continue), the runs of length >= L are the j with
 * S[j] and R[j], ..., R[j+L-2]. */
static void runs_from_steps(const u64 *R, i64 words, i64 s, i64 *out) {
    i64 at_least[8] = {0};
    i64 steps = 0;
    for (i64 q = 0; q < words; q++) steps += __builtin_popcountll(R[q]);
    at_least[1] = 1 + (s - 1 - steps);
    for (i64 q = 0; q < words; q++) {
        u64 next = q + 1 < words ? R[q + 1] : 0;
        u64 start = ~((R[q] << 1) | (q ? R[q - 1] >> 63 : 0));
        u64 chain = start & R[q];  /* runs of length >= 2 */
        at_least[2] += __builtin_popcountll(chain);
        for (int k = 1; k <= 4; k++) {  /* >= k + 2: step j + k continues too */
            chain &= (R[q] >> k) | (next << (64 - k));
            at_least[k + 2] += __builtin_popcountll(chain);
        }
    }
    for (int k = 1; k <= 5; k++) out[k - 1] = at_least[k] - at_least[k + 1];
    out[5] = at_least[6];
}

/* knuth.RunsUp and RunsDown: per row, runs up (out[r][0][*]) and runs down (out[r][1][*]) of
 * length 1..5 and >= 6 (a run ends at the row's end). */
void runs_up_down(const u32 *w, i64 rows, i64 s, i64 *out) {
    i64 words = (s - 1 + 63) / 64;
    u64 *up = (u64 *)calloc(words + 1, sizeof(u64)), *down = (u64 *)calloc(words + 1, sizeof(u64));
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        for (i64 q = 0; q < words; q++) {
            i64 base = 64 * q, count = s - 1 - base < 64 ? s - 1 - base : 64;
            u64 a, b;
            steps(x + base, count, &a, &b);
            up[q] = a;
            down[q] = b;
        }
        runs_from_steps(up, words, s, out + r * 12);
        runs_from_steps(down, words, s, out + r * 12 + 6);
    }
    free(up);
    free(down);
}

/* nist.Runs: per row, (ones, transitions between adjacent bits, most significant first). */
void runs_transitions(const u32 *w, i64 rows, i64 s, i64 *out) {
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        i64 ones = 0, inner = 0, across = 0, i = 0;
        for (; i + 2 <= s; i += 2) {   /* two words at once, the bit shifted from one into the other masked off */
            u64 pair;
            memcpy(&pair, x + i, sizeof pair);
            ones += __builtin_popcountll(pair);
            inner += __builtin_popcountll((pair ^ (pair >> 1)) & 0x7FFFFFFF7FFFFFFFull);
        }
        for (; i < s; i++) {
            ones += __builtin_popcount(x[i]);
            inner += __builtin_popcount((x[i] ^ (x[i] >> 1)) & 0x7FFFFFFFu);
        }
        for (i64 i = 0; i + 1 < s; i++) across += (x[i] & 1u) != (x[i + 1] >> 31);
        out[r * 2] = ones;
        out[r * 2 + 1] = inner + across;
    }
}

/* knuth.Gap: per row, gaps between words whose nibble at `shift` is 0, classes 0 .. t-1 and
 * >= t (t + 1 counts), and the number of such words (hits). */
void gap_counts(const u32 *w, i64 rows, i64 s, int shift, i64 t, i64 *counts, i64 *hits) {
    memset(counts, 0, sizeof(i64) * rows * (t + 1));
    u32 mask = 15u << shift;
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        i64 last = -1, n = 0, *c = counts + r * (t + 1);
        for (i64 base = 0; base < s; base += 64) {  /* the hits of 64 words as a bit mask, then each hit */
            i64 len = s - base < 64 ? s - base : 64;
            u64 m = clear(x + base, len, mask);
            while (m) {
                i64 i = base + __builtin_ctzll(m);
                m &= m - 1;
                n++;
                if (last >= 0) {
                    i64 gap = i - last - 1;
                    c[gap < t ? gap : t]++;
                }
                last = i;
            }
        }
        hits[r] = n;
    }
}

/* knuth.CouponCollector: per row, lengths of the segments of 4-bit digits (most significant
 * first) that see all 16 values, each counted in bin_of[min(length, t)]; a segment not complete
 * at the row's end is dropped. */
void coupon_counts(const u32 *w, i64 rows, i64 s, const i64 *bin_of, i64 t, i64 bins, i64 *out) {
    memset(out, 0, sizeof(i64) * rows * bins);
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        u32 seen = 0;
        i64 length = 0, *o = out + r * bins;
        for (i64 i = 0; i < s; i++) {
            u32 v = x[i];
            for (int d = 28; d >= 0; d -= 4) {
                seen |= 1u << ((v >> d) & 15);
                length++;
                if (seen == 0xFFFF) {
                    o[bin_of[length < t ? length : t]]++;
                    seen = 0;
                    length = 0;
                }
            }
        }
    }
}

/* knuth.MaximumOfT: per row, maxima of groups of t words in cells: below[top 16 bits] edges lie
 * below the top's range, and edge_in[top] is the one edge within it (2^32 if none). */
void maximum_counts(const u32 *w, i64 rows, i64 s, i64 t, const uint8_t *below, const u64 *edge_in,
                    i64 cells, i64 *out) {
    memset(out, 0, sizeof(i64) * rows * cells);
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        for (i64 j = 0; j + t <= s; j += t) {
            u32 m = x[j];
            for (i64 i = 1; i < t; i++) m = x[j + i] > m ? x[j + i] : m;
            u32 top = m >> 16;
            out[r * cells + below[top] + ((u64)m >= edge_in[top])]++;
        }
    }
}

/* bits.weight_pairs: per row, (33, 33) counts of (popcount(word 2i), popcount(word 2i+1)). */
void weight_pairs(const u32 *w, i64 rows, i64 s, i64 *out) {
    memset(out, 0, sizeof(i64) * rows * 33 * 33);
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        i64 *o = out + r * 33 * 33;
        for (i64 i = 0; i + 1 < s; i += 2) o[__builtin_popcount(x[i]) * 33 + __builtin_popcount(x[i + 1])]++;
    }
}

/* nist.Spectral: each row's bits (most significant first) as 0.0 / 1.0. */
void bits_f64(const u32 *w, i64 count, double *out) {
    for (i64 i = 0; i < count; i++)
        for (int b = 0; b < 32; b++) out[32 * i + b] = (double)((w[i] >> (31 - b)) & 1u);
}

/* nist.Spectral: per row of `stride` complex terms, how many of terms 1 .. count-1 have a modulus
 * (hypot, as numpy's abs) below `threshold`; the squared modulus decides where it is far from it. */
void spectral_below(const double *terms, i64 rows, i64 stride, i64 count, double threshold, i64 *out) {
    double t2 = threshold * threshold, low = t2 * (1 - 1e-9), high = t2 * (1 + 1e-9);
    for (i64 r = 0; r < rows; r++) {
        const double *z = terms + 2 * r * stride;
        i64 below = 0;
        for (i64 i = 1; i < count; i++) {
            double re = z[2 * i], im = z[2 * i + 1], q = re * re + im * im;
            below += q < low ? 1 : q > high ? 0 : hypot(re, im) < threshold;
        }
        out[r] = below;
    }
}

/* nist.Spectral without numpy's FFT: per row of s words (n = 32 s bits, most significant bit of
 * each word first), how many of the DFT terms X_k, k = 1 .. n/2 - 1, have |X_k| < threshold.
 *
 * How: the n real bits as N = n/2 complex points z_m = x_2m + i x_2m+1, whose DFT Z gives X by
 * the usual split (X_k = E + W_2N^k O, E = (Z_k + conj Z_N-k) / 2, O = (Z_k - conj Z_N-k) / 2i).
 * Z by the four-step method, N = N1 x N2 (32768 = 256 x 128): N2 column DFTs of N1 points, a
 * twiddle W_N^(j2 k1) each, then N1 row DFTs of N2 points, each small enough for the L1 cache.
 * FFT_LANES rows at once, one per lane of a vector: every DFT below is plain scalar code on vectors
 * and every twiddle one broadcast double. The bits are expanded as the column DFTs load them
 * (their first radix-4 pass in integers), the column twiddles applied as their last pass
 * stores, and the terms counted as the row DFTs' last pass ends: no n-point array of doubles.
 * Radix-4 passes throughout (an 8-point first pass where a length is an odd power of two).
 *
 * Same counts as numpy (rfft, then hypot < threshold, kernels.c spectral_below): q = |X_k|^2 is
 * compared with t^2; a row with any q within 1e-9 t^2 of t^2 gets out = -1 and the caller
 * recomputes it with numpy. Outside that band the two agree: they differ by far less than the
 * band. A bound of Higham's form (Accuracy and Stability, thm. 24.2, for radix-2 Cooley-Tukey:
 * |dX| <= L eta |X|_2, |X|_2 <= n for 0/1 bits; the radix-4, radix-8 and four-step stages here
 * are made of the same butterflies, L = 19 levels of rounding) gives 1.1e-9 for this FFT at
 * n = 65536 and 1.3e-9 for pocketfft (L <= 24, assumed, not derived from its code), so near t
 * |dq| <= 1.1e-6, 1/46 of the band 1e-9 t^2; measured, 3.8e-12 at most (tests/
 * test_stats_kernels.py holds the terms to numpy's). The margin falls as 1/sqrt(n): kernels.py
 * sends rows of more than SPECTRAL_FFT_MOST_WORDS words to numpy.
 *
 * Twiddles from spectral_tables (once per s, in the caller's array): every W_M^m = exp(-2 pi i
 * m / M) from cos / sin of an angle in [0, pi/4] (exact reduction by symmetry), within ~1 ulp.
 */
/* FFT_LANES rows at once: 4 with AVX (256-bit vectors), else 2 (SSE2: a v4d would take two
 * registers and the radix-4 butterflies would spill). cv: one complex point of FFT_LANES rows, re
 * and im together (64 bytes with AVX: a whole cache line, so that the transposition between
 * the column and row DFTs moves whole lines). */
#ifdef __AVX__
#define FFT_LANES 4
#else
#define FFT_LANES 2
#endif
typedef double vd __attribute__((vector_size(8 * FFT_LANES)));
typedef int64_t vl __attribute__((vector_size(8 * FFT_LANES)));
typedef int32_t vi __attribute__((vector_size(4 * FFT_LANES)));
typedef struct { vd re, im; } cv;
#define FFT_INLINE static inline __attribute__((always_inline))

/* The split of N = 16 s points: N1 = 4^a nearest sqrt(N) (the column DFTs radix-4 only, their
 * first pass in integers), N2 = N / N1 >= 16; Lmax, the longer, sizes the sub-DFTs' table. */
static int fft_lg2(i64 x) { int l = 0; while (((i64)1 << l) < x) l++; return l; }
static i64 fft_column_length(i64 N) { return (i64)1 << (2 * ((fft_lg2(N) + 2) / 4)); }
#define FFT_SPLIT(s) i64 N = 16 * (s), N1 = fft_column_length(N), N2 = N / N1, Lmax = N1 > N2 ? N1 : N2

/* Table layout (doubles), for s words a row:
 *   small  [2 Lmax]             W_Lmax^m: re[m] then im[m] (a sub-DFT of L: W_L^m = W_Lmax^(m Lmax / L))
 *   four   [N2][2 N1]           W_N^(j2 k1): per column j2, re[k1] then im[k1]
 *   post   [N1 / 2 + 1][2 N2]   W_2N^(k1 + N1 k2): per row k1 <= N1 / 2, re[k2] then im[k2]
 * Scratch (doubles): the N1 rows (cv[N2 + 1] each, one point of padding against cache set
 * conflicts), one column (cv[N1]), FFT_LANES rows' words interleaved, 8 for alignment to 64 bytes. */
i64 spectral_table_doubles(i64 s) { FFT_SPLIT(s); return 2 * Lmax + 2 * N + (N1 / 2 + 1) * 2 * N2; }
i64 spectral_scratch_doubles(i64 s) { i64 N = 16 * s; return 2 * FFT_LANES * (N + 2 * fft_column_length(N)) + FFT_LANES * s / 2 + 8; }

/* W_M^m = exp(-2 pi i m / M), M a power of two: m reduced to the first octant exactly (integer
 * symmetries), so that cos and sin only see angles in [0, pi/4], rounded once. */
static void fft_twiddle(i64 m, i64 M, double *re, double *im) {
    m &= M - 1;
    i64 quad = 4 * m / M, r = m - quad * (M / 4);   /* angle = quad pi/2 + 2 pi r / M */
    double c, sn;
    if (8 * r <= M) { double a = 2 * M_PI * ((double)r / M); c = cos(a); sn = sin(a); }
    else { double a = 2 * M_PI * ((double)(M / 4 - r) / M); c = sin(a); sn = cos(a); }
    double cr[4] = {c, -sn, -c, sn}, sr[4] = {sn, c, -sn, -c};   /* quad quarter turns more */
    *re = cr[quad];
    *im = -sr[quad];
}

void spectral_tables(i64 s, double *t) {
    FFT_SPLIT(s);
    double *small = t, *four = small + 2 * Lmax, *post = four + 2 * N;
    for (i64 m = 0; m < Lmax; m++) fft_twiddle(m, Lmax, small + m, small + Lmax + m);
    for (i64 j2 = 0; j2 < N2; j2++)
        for (i64 k1 = 0; k1 < N1; k1++) fft_twiddle(j2 * k1, N, four + 2 * N1 * j2 + k1, four + 2 * N1 * j2 + N1 + k1);
    for (i64 k1 = 0; k1 <= N1 / 2; k1++)
        for (i64 k2 = 0; k2 < N2; k2++) fft_twiddle(k1 + N1 * k2, 2 * N, post + 2 * N2 * k1 + k2, post + 2 * N2 * k1 + N2 + k2);
}

/* One radix-4 decimation-in-time butterfly on x[b + m h], m = 0 .. 3, which hold the h-point
 * DFTs of the residues 0, 2, 1, 3 (mod 4) of a 4h-point block (bit-reversed order): c_r =
 * W_4h^(r j) D_r, then the 4-point DFT of c into o (re of m = 0 .. 3, then im). w: W^j, W^2j,
 * W^3j as re, im; tw = 0 where j = 0. */
FFT_INLINE void fft_radix4(const cv *x, i64 b, i64 h, const double *w, int tw, vd *o) {
    vd c0r = x[b].re, c0i = x[b].im, c2r = x[b + h].re, c2i = x[b + h].im;
    vd c1r = x[b + 2 * h].re, c1i = x[b + 2 * h].im, c3r = x[b + 3 * h].re, c3i = x[b + 3 * h].im;
    if (tw) {
        vd r;
        r = c1r * w[0] - c1i * w[1]; c1i = c1r * w[1] + c1i * w[0]; c1r = r;
        r = c2r * w[2] - c2i * w[3]; c2i = c2r * w[3] + c2i * w[2]; c2r = r;
        r = c3r * w[4] - c3i * w[5]; c3i = c3r * w[5] + c3i * w[4]; c3r = r;
    }
    vd t0r = c0r + c2r, t0i = c0i + c2i, t1r = c0r - c2r, t1i = c0i - c2i;
    vd t2r = c1r + c3r, t2i = c1i + c3i, t3r = c1r - c3r, t3i = c1i - c3i;
    o[0] = t0r + t2r; o[4] = t0i + t2i;
    o[1] = t1r + t3i; o[5] = t1i - t3r;   /* t1 - i t3 */
    o[2] = t0r - t2r; o[6] = t0i - t2i;
    o[3] = t1r - t3i; o[7] = t1i + t3r;   /* t1 + i t3 */
}

/* The twiddles of butterfly j of the pass h: W_4h^j = W_Lmax^(j step). */
#define FFT_TWIDDLES(j, step) {wr[(j) * (step)], wi[(j) * (step)], wr[2 * (j) * (step)], wi[2 * (j) * (step)], wr[3 * (j) * (step)], wi[3 * (j) * (step)]}

/* The in-place radix-4 passes h, 4h, .. < hend of an L-point DFT (input bit-reversed). */
static void fft_passes(cv *x, i64 L, i64 h, i64 hend, const double *wr, const double *wi, i64 Lmax) {
    for (; h < hend; h *= 4)
        for (i64 j = 0; j < h; j++) {
            double w[6] = FFT_TWIDDLES(j, Lmax / (4 * h));
            for (i64 b = j; b < L; b += 4 * h) {
                vd o[8];
                if (j) fft_radix4(x, b, h, w, 1, o); else fft_radix4(x, b, h, w, 0, o);
                for (int m = 0; m < 4; m++) x[b + m * h] = (cv){o[m], o[4 + m]};
            }
        }
}

/* An L-point DFT in place (bit-reversed in, natural out): a first pass of 8-point DFTs where
 * log2 L is odd (the 4-point DFTs E of x[b .. b+3] and O of x[b+4 .. b+7], then E_k +- W_8^k
 * O_k), then radix-4 passes up to hend (L: all of them; L / 4: all but the last). */
static void fft_dft(cv *x, i64 L, i64 hend, const double *wr, const double *wi, i64 Lmax) {
    i64 h = 1;
    if (fft_lg2(L) & 1) {
        const double r = M_SQRT1_2;
        for (i64 b = 0; b < L; b += 8) {
            vd e[8], o[8];
            fft_radix4(x, b, 1, 0, 0, e);
            fft_radix4(x, b + 4, 1, 0, 0, o);
            vd pr[4] = {o[0], r * (o[1] + o[5]), o[6], r * (o[7] - o[3])};    /* W_8^k O_k */
            vd pi[4] = {o[4], r * (o[5] - o[1]), -o[2], -r * (o[3] + o[7])};
            for (int k = 0; k < 4; k++) {
                x[b + k] = (cv){e[k] + pr[k], e[4 + k] + pi[k]};
                x[b + 4 + k] = (cv){e[k] - pr[k], e[4 + k] - pi[k]};
            }
        }
        h = 8;
    }
    fft_passes(x, L, h, hend, wr, wi, Lmax);
}

/* From Z_k = a and Z_N-k = b (re, im), with W_2N^k = (wr, wi): 2 X_k and 2 conj X_N-k as E + P
 * and E - P; their squared moduli (4 q) counted against 4 t^2 (low, high: the band), both
 * (two = 1) or the first only. below: per lane, how many q < low (compare masks are -1); near:
 * how many q <= high (near - below: how many in the band). terms (spectral_terms only): X_k and
 * X_N-k of each lane's row, rows of N complex. */
FFT_INLINE void fft_pair(const vd *ar, const vd *ai, const vd *br, const vd *bi, double wr, double wi, double low, double high,
                 int two, vl *below, vl *near, double *terms, i64 k, i64 lanes, i64 N) {
    vd er = *ar + *br, ei = *ai - *bi, dr = *ar - *br, di = *ai + *bi;   /* 2E = A + conj B; A - conj B */
    vd pr = wr * di + wi * dr, pi = wi * di - wr * dr;                   /* P = W (-i)(A - conj B) = 2 W O */
    vd q = (er + pr) * (er + pr) + (ei + pi) * (ei + pi);
    *below -= (vl)(q < low);
    *near -= (vl)(q <= high);
    if (two) {
        q = (er - pr) * (er - pr) + (ei - pi) * (ei - pi);
        *below -= (vl)(q < low);
        *near -= (vl)(q <= high);
    }
    if (terms)
        for (i64 l = 0; l < lanes; l++) {
            double *x = terms + 2 * N * l;
            x[2 * k] = 0.5 * (er + pr)[l]; x[2 * k + 1] = 0.5 * (ei + pi)[l];
            if (two) { x[2 * (N - k)] = 0.5 * (er - pr)[l]; x[2 * (N - k) + 1] = -0.5 * (ei - pi)[l]; }
        }
}
#define FFT_PAIR(a, b, k2, two, k) fft_pair(&(a).re, &(a).im, &(b).re, &(b).im, pr[k2], pi[k2], low, high, two, &below, &near, T, k, lanes, N)

/* The whole computation; spectral_counts (terms = 0) and spectral_terms are this one code. */
FFT_INLINE void fft_rows(const u32 *w, i64 rows, i64 s, double threshold, const double *tables, double *scratch, i64 *out, double *terms) {
    FFT_SPLIT(s);
    const double *wr = tables, *wi = wr + Lmax, *four = wr + 2 * Lmax, *post = four + 2 * N;
    double t2 = threshold * threshold, low = 4 * (t2 * (1 - 1e-9)), high = 4 * (t2 * (1 + 1e-9));
    i64 RS = N2 + 1;                                                  /* row stride */
    cv *z = (cv *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);      /* the rows */
    cv *col = z + RS * N1;                                            /* one column */
    vi *words = (vi *)(col + N1);                                     /* words[i]: word i of the rows */
    int rev1[N1], rev2[N2];                                           /* bit reversals */
    for (i64 i = 0; i < N1; i++) rev1[i] = (int)(i ? (rev1[i >> 1] >> 1) | ((i & 1) * (N1 >> 1)) : 0);
    for (i64 i = 0; i < N2; i++) rev2[i] = (int)(i ? (rev2[i >> 1] >> 1) | ((i & 1) * (N2 >> 1)) : 0);
    for (i64 r0 = 0; r0 < rows; r0 += FFT_LANES) {
        i64 lanes = rows - r0 < FFT_LANES ? rows - r0 : FFT_LANES;   /* a last group short of rows repeats its last */
        for (int l = 0; l < FFT_LANES; l++) {
            const u32 *p = w + s * (r0 + (l < lanes ? l : lanes - 1));
            for (i64 i = 0; i < s; i++) words[i][l] = (int32_t)p[i];
        }
        /* Columns j2: z_(N2 j1 + j2) = bits 2 N2 j1 + 2 j2 and the next. First pass: the 4-point
         * DFTs of z_(m + a N1/4), a = 0 .. 3, in integers, to positions rev1[m] .. + 3 (the
         * 4-point blocks of a bit-reversed input). Last pass: times W_N^(j2 k1) into row k1 at
         * position rev2[j2] (the row DFTs take bit-reversed input; one whole cv a store). */
        for (i64 j2 = 0; j2 < N2; j2++) {
            i64 c = rev2[j2], at = (2 * j2) >> 5;
            int shift = 31 - (int)((2 * j2) & 31);
            for (i64 m = 0; m < N1 / 4; m++) {
                vi xr[4], xi[4];
                for (int a = 0; a < 4; a++) {
                    vi x = words[((2 * N2 * (m + a * N1 / 4)) >> 5) + at];
                    xr[a] = (x >> shift) & 1;
                    xi[a] = (x >> (shift - 1)) & 1;
                }
                vi t0r = xr[0] + xr[2], t0i = xi[0] + xi[2], t1r = xr[0] - xr[2], t1i = xi[0] - xi[2];
                vi t2r = xr[1] + xr[3], t2i = xi[1] + xi[3], t3r = xr[1] - xr[3], t3i = xi[1] - xi[3];
                cv *x = col + rev1[m];
                x[0] = (cv){__builtin_convertvector(t0r + t2r, vd), __builtin_convertvector(t0i + t2i, vd)};
                x[1] = (cv){__builtin_convertvector(t1r + t3i, vd), __builtin_convertvector(t1i - t3r, vd)};
                x[2] = (cv){__builtin_convertvector(t0r - t2r, vd), __builtin_convertvector(t0i - t2i, vd)};
                x[3] = (cv){__builtin_convertvector(t1r - t3i, vd), __builtin_convertvector(t1i + t3r, vd)};
            }
            fft_passes(col, N1, 4, N1 / 4, wr, wi, Lmax);
            const double *fr = four + 2 * N1 * j2, *fi = fr + N1;
            for (i64 j = 0, h = N1 / 4; j < h; j++) {
                double tw[6] = FFT_TWIDDLES(j, Lmax / N1);
                vd o[8];
                fft_radix4(col, j, h, tw, 1, o);
                for (int m = 0; m < 4; m++) {
                    i64 k1 = j + m * h;
                    z[RS * k1 + c] = (cv){o[m] * fr[k1] - o[4 + m] * fi[k1], o[m] * fi[k1] + o[4 + m] * fr[k1]};
                }
            }
        }
        /* Rows k1 <= N1/2 with their partners N1 - k1: Z_(k1 + N1 k2) pairs with Z_(N - k) at
         * row N1 - k1, position N2 - 1 - k2; rows 0 and N1/2 pair with themselves. */
        vl below = {0}, near = {0};
        double *T = terms ? terms + 2 * N * r0 : 0;
        for (i64 k1 = 0; k1 <= N1 / 2; k1++) {
            cv *a = z + RS * k1, *b = z + RS * (N1 - k1);
            const double *pr = post + 2 * N2 * k1, *pi = pr + N2;
            if (k1 == 0) {   /* Z_(N1 k2) with Z_(N1 (N2 - k2)); k = N/2 once; not k = 0 (DC) */
                fft_dft(a, N2, N2, wr, wi, Lmax);
                for (i64 k2 = 1; k2 < N2 / 2; k2++) FFT_PAIR(a[k2], a[N2 - k2], k2, 1, N1 * k2);
                FFT_PAIR(a[N2 / 2], a[N2 / 2], N2 / 2, 0, N / 2);
            } else if (k1 == N1 / 2) {   /* Z_(k1 + N1 k2) with Z_(k1 + N1 (N2 - 1 - k2)) */
                fft_dft(a, N2, N2, wr, wi, Lmax);
                for (i64 k2 = 0; k2 < N2 / 2; k2++) FFT_PAIR(a[k2], a[N2 - 1 - k2], k2, 1, k1 + N1 * k2);
            } else {   /* the last pass of both rows at once: butterfly j of one, h - 1 - j of the other */
                fft_dft(a, N2, N2 / 4, wr, wi, Lmax);
                fft_dft(b, N2, N2 / 4, wr, wi, Lmax);
                for (i64 j = 0, h = N2 / 4; j < h; j++) {
                    double ta[6] = FFT_TWIDDLES(j, Lmax / N2), tb[6] = FFT_TWIDDLES(h - 1 - j, Lmax / N2);
                    vd oa[8], ob[8];
                    fft_radix4(a, j, h, ta, 1, oa);
                    fft_radix4(b, h - 1 - j, h, tb, 1, ob);
                    for (int m = 0; m < 4; m++)
                        fft_pair(oa + m, oa + 4 + m, ob + 3 - m, ob + 7 - m, pr[j + m * h], pi[j + m * h], low, high, 1,
                             &below, &near, T, k1 + N1 * (j + m * h), lanes, N);
                }
            }
        }
        for (int l = 0; l < lanes; l++) out[r0 + l] = near[l] != below[l] ? -1 : below[l];
    }
}

/* out[r]: the count of row r, or -1 where a term's q is within 1e-9 t^2 of t^2. w: rows x s
 * words; tables: spectral_tables(s); scratch: spectral_scratch_doubles(s) doubles, any alignment;
 * s a power of two >= 64. */
void spectral_counts(const u32 *w, i64 rows, i64 s, double threshold, const double *tables, double *scratch, i64 *out) {
    fft_rows(w, rows, s, threshold, tables, scratch, out, 0);
}

/* The same, and each row's X_k, k = 1 .. N - 1, at 2k, 2k + 1 of its row of 2N doubles in terms. */
void spectral_terms(const u32 *w, i64 rows, i64 s, double threshold, const double *tables, double *scratch, i64 *out, double *terms) {
    fft_rows(w, rows, s, threshold, tables, scratch, out, terms);
}

/* linear.berlekamp_massey on n bits (0/1 bytes): the linear complexity. `scratch`: 4 * (n / 64
 * + 2) words. History bit i is s_(N-i) (the newest in bit 0), bit i of C the coefficient of x^i,
 * as in the Python version. */
i64 berlekamp_massey(const uint8_t *bits, i64 n, u64 *scratch) {
    i64 words = n / 64 + 2;
    u64 *c = scratch, *b = scratch + words, *history = scratch + 2 * words, *saved = scratch + 3 * words;
    memset(scratch, 0, sizeof(u64) * 4 * words);
    c[0] = b[0] = 1;
    i64 length = 0, last = -1, used = 1, ctop = 1, btop = 1;  /* words that can be non-zero */
    for (i64 k = 0; k < n; k++) {
        u64 carry = bits[k] & 1;  /* history = (history << 1) | bit */
        if (used < words && (history[used - 1] >> 63)) used++;
        for (i64 i = 0; i < used; i++) {
            u64 top = history[i] >> 63;
            history[i] = (history[i] << 1) | carry;
            carry = top;
        }
        u64 d = 0;
        i64 upto = ctop < used ? ctop : used;
        for (i64 i = 0; i < upto; i++) d ^= c[i] & history[i];
        if (!__builtin_parityll(d)) continue;
        i64 shift = k - last, ws = shift / 64, bs = shift % 64;
        int grow = 2 * length <= k;
        if (grow) memcpy(saved, c, sizeof(u64) * ctop);
        i64 top = btop + ws + 1 < words ? btop + ws + 1 : words;
        for (i64 i = ws; i < top; i++) {  /* c ^= b << shift */
            u64 v = b[i - ws] << bs;
            if (bs && i - ws >= 1) v |= b[i - ws - 1] >> (64 - bs);
            c[i] ^= v;
        }
        i64 oldtop = ctop;
        ctop = top > ctop ? top : ctop;
        if (grow) {
            length = k + 1 - length;
            last = k;
            memset(b, 0, sizeof(u64) * btop);
            memcpy(b, saved, sizeof(u64) * oldtop);
            btop = oldtop;
        }
    }
    return length;
}

/* bits.walk_extremes: per row, (final sum, highest, lowest partial sum) of the +-1 walk over the
 * bits (most significant first), from per-byte tables of the walk's total, maximum and minimum. */
void walk_extremes(const u32 *w, i64 rows, i64 s, const int32_t *total, const int32_t *high,
                   const int32_t *low, i64 *out) {
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        i64 sum = 0, hi = INT64_MIN, lo = INT64_MAX;
        for (i64 i = 0; i < s; i++) {
            for (int shift = 24; shift >= 0; shift -= 8) {
                u32 b = (x[i] >> shift) & 255;
                i64 a = sum + high[b], z = sum + low[b];
                hi = a > hi ? a : hi;
                lo = z < lo ? z : lo;
                sum += total[b];
            }
        }
        out[r * 3] = sum;
        out[r * 3 + 1] = hi;
        out[r * 3 + 2] = lo;
    }
}

/* rank.gf2_ranks: ranks over GF(2) of `batch` square n x n matrices of `words` uint64 per row
 * (destroyed). */
void gf2_ranks(u64 *m, i64 batch, i64 n, i64 words, i64 *out) {
    for (i64 b = 0; b < batch; b++) {
        u64 *a = m + b * n * words;
        i64 rank = 0;
        for (i64 column = 0; column < n && rank < n; column++) {
            i64 wd = column / 64;
            u64 bit = (u64)1 << (column % 64);
            i64 pivot = -1;
            for (i64 row = rank; row < n; row++)
                if (a[row * words + wd] & bit) { pivot = row; break; }
            if (pivot < 0) continue;
            u64 *p = a + pivot * words, *q = a + rank * words;
            if (pivot != rank)
                for (i64 i = wd; i < words; i++) { u64 t = p[i]; p[i] = q[i]; q[i] = t; }
            for (i64 row = rank + 1; row < n; row++) {
                u64 *o = a + row * words;
                if (o[wd] & bit)
                    for (i64 i = wd; i < words; i++) o[i] ^= q[i];
            }
            rank++;
        }
        out[b] = rank;
    }
}

/* nist.entropy.overlapping_counts for m <= 12: per row of s words, counts of the n = 32 s
 * overlapping m-bit patterns (most significant first, wrapping around), from the histogram of
 * the (m + 3)-bit windows at every 4-bit boundary (a pattern starts 0 to 3 bits into one):
 * 32-bit counts while they cannot overflow (8 s windows a row), a table half the size of 16-bit
 * windows' and a quarter of the work after the count (1.6x faster at m = 12). */
void overlapping_counts(const u32 *w, i64 rows, i64 s, int m, i64 *out) {
    int width = m + 3;
    i64 cells = (i64)1 << width;
    u64 mask = (u64)cells - 1;
    int narrow = 8 * s < ((i64)1 << 32);
    u32 *h32 = narrow ? (u32 *)malloc(sizeof(u32) * cells) : NULL;
    i64 *h64 = narrow ? NULL : (i64 *)malloc(sizeof(i64) * cells);
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        if (narrow) memset(h32, 0, sizeof(u32) * cells); else memset(h64, 0, sizeof(i64) * cells);
        for (i64 i = 0; i < s; i++) {
            u64 pair = ((u64)x[i] << 32) | x[(i + 1) % s];
            if (narrow)
                for (int shift = 0; shift < 32; shift += 4) h32[(pair >> (64 - width - shift)) & mask]++;
            else
                for (int shift = 0; shift < 32; shift += 4) h64[(pair >> (64 - width - shift)) & mask]++;
        }
        i64 *o = out + r * ((i64)1 << m);
        memset(o, 0, sizeof(i64) << m);
        for (int offset = 0; offset < 4; offset++) {  /* the pattern starting offset bits into a window */
            int drop = 3 - offset;
            for (i64 v = 0; v < cells; v++) o[(v >> drop) & ((1 << m) - 1)] += narrow ? (i64)h32[v] : h64[v];
        }
    }
    free(h32);
    free(h64);
}

/* knuth.Collision: per row, the collisions (balls - distinct urns) of each set of `balls`
 * consecutive words' top `bits` bits, summed. */
#define COLLISION_AHEAD 16

void collision_counts(const u32 *w, i64 rows, i64 s, i64 balls, int bits, i64 *out) {
    if (bits > 24 || balls > ((i64)1 << 16)) {  /* the bitmap of all urns (2^bits bits) */
        u64 *urns = (u64 *)calloc(((i64)1 << bits) / 64 + 1, sizeof(u64));
        for (i64 r = 0; r < rows; r++) {
            i64 total = 0;
            for (i64 j = 0; j + balls <= s; j += balls) {
                const u32 *x = w + r * s + j;
                for (i64 i = 0; i < balls; i++) {
                    u32 v = x[i] >> (32 - bits);
                    u64 bit = (u64)1 << (v & 63), *cell = urns + (v >> 6);
                    total += (*cell & bit) != 0;
                    *cell |= bit;
                }
                for (i64 i = 0; i < balls; i++) urns[(x[i] >> (32 - bits)) >> 6] = 0;
            }
            out[r] = total;
        }
        free(urns);
        return;
    }
    /* A hash set of the occupied urns (open addressing, 16 slots a ball: 1 MiB for 2^14 balls, in
     * the core's cache, where the 2 MiB bitmap of 2^24 urns was not, and few second probes: 2.7 ns
     * a ball against 4.7 with the bitmap, 3.1 with 8 slots, 4.1 with 4, 7.9 with 2, this 2-core
     * Xeon): a slot holds urn | set tag << 24, and a slot
     * with another set's tag is empty, so the table is cleared once every 255 sets only. The
     * same counts as the bitmap: a ball whose urn is in the set is a collision. Each ball's slot is
     * prefetched COLLISION_AHEAD balls ahead, so that the table's misses overlap (the standard
     * tier's 2^26 balls: 0.15 s against 0.24 s without, the 2-core AMD EPYC that followed the Xeon,
     * where 4 to 32 slots a ball took the same time without it). */
    int lg = 1;
    while (((i64)1 << lg) < 16 * balls) lg++;
    u32 size = (u32)1 << lg, mask = size - 1, gen = 0;
    u32 *table = (u32 *)calloc(size, sizeof(u32));
    for (i64 r = 0; r < rows; r++) {
        i64 total = 0;
        for (i64 j = 0; j + balls <= s; j += balls) {
            const u32 *x = w + r * s + j;
            if (++gen == 256) { memset(table, 0, sizeof(u32) * size); gen = 1; }
            for (i64 i = 0; i < balls; i++) {
                if (i + COLLISION_AHEAD < balls)
                    __builtin_prefetch(table + (((x[i + COLLISION_AHEAD] >> (32 - bits)) * 0x9E3779B1u) >> (32 - lg)), 1);
                u32 v = x[i] >> (32 - bits), key = (gen << 24) | v, h = (v * 0x9E3779B1u) >> (32 - lg);
                for (;;) {
                    u32 e = table[h];
                    if (e == key) { total++; break; }
                    if ((e >> 24) != gen) { table[h] = key; break; }
                    h = (h + 1) & mask;
                }
            }
        }
        out[r] = total;
    }
    free(table);
}

/* nist.Monobit, nist.BlockFrequency: the ones of each run of `block` words (count runs in all). */
void block_ones(const u32 *w, i64 count, i64 block, i64 *out) {
    for (i64 b = 0; b < count; b++) {
        const u32 *x = w + b * block;
        i64 ones = 0, i = 0;
        for (; i + 2 <= block; i += 2) {
            u64 v;
            memcpy(&v, x + i, sizeof v);
            ones += __builtin_popcountll(v);
        }
        for (; i < block; i++) ones += __builtin_popcount(x[i]);
        out[b] = ones;
    }
}

/* nist.matrix_rank.gf2_rank32: ranks over GF(2) of `count` 32 x 32 matrices of 32 words each.
 * From the most significant column down: with the higher bits cleared, the largest row has the
 * column's bit iff some row has it; xoring it into every row that has the bit clears the column.
 * With AVX2, eight matrices at once, one a lane (rows[r], lane l: row r of matrix q + l): the
 * largest row by vertical maxima only (0.034-0.049 s against 0.075-0.079 s for the standard
 * tier's 262144 matrices; without AVX2 the vectors are slower than the scalar loop). */
static void gf2_rank32_one(const u32 *w, i64 *out) {
    u32 rows[32];
    memcpy(rows, w, sizeof rows);
    i64 rank = 0;
    for (int bit = 31; bit >= 0; bit--) {
        u32 pivot = 0;
        for (int r = 0; r < 32; r++) pivot = rows[r] > pivot ? rows[r] : pivot;
        rank += (pivot >> bit) & 1;
        for (int r = 0; r < 32; r++) rows[r] ^= pivot & (0u - ((rows[r] >> bit) & 1));
    }
    *out = rank;
}

#ifdef __AVX2__
typedef u32 v8u __attribute__((vector_size(32)));
static inline v8u vmax8(v8u a, v8u b) { v8u more = (v8u)(a > b); return (a & more) | (b & ~more); }

static void gf2_rank32_eight(const u32 *w, i64 *out) {
    v8u rows[32], rank = {0};
    for (int r = 0; r < 32; r++)
        for (int l = 0; l < 8; l++) rows[r][l] = w[32 * l + r];
    for (int bit = 31; bit >= 0; bit--) {
        v8u t[16];   /* the largest row: a tree of maxima */
        for (int r = 0; r < 16; r++) t[r] = vmax8(rows[r], rows[r + 16]);
        for (int r = 0; r < 8; r++) t[r] = vmax8(t[r], t[r + 8]);
        for (int r = 0; r < 4; r++) t[r] = vmax8(t[r], t[r + 4]);
        v8u pivot = vmax8(vmax8(t[0], t[2]), vmax8(t[1], t[3]));
        rank += (pivot >> bit) & 1;
        for (int r = 0; r < 32; r++) rows[r] ^= pivot & (0u - ((rows[r] >> bit) & 1));
    }
    for (int l = 0; l < 8; l++) out[l] = rank[l];
}
#endif

void gf2_rank32(const u32 *w, i64 count, i64 *out) {
    i64 q = 0;
#ifdef __AVX2__
    for (; q + 8 <= count; q += 8) gf2_rank32_eight(w + 32 * q, out + q);
#endif
    for (; q < count; q++) gf2_rank32_one(w + 32 * q, out + q);
}

/* nist.RandomExcursions: per row of s words, the +-1 walk over its bits (most significant first)
 * cut into cycles at its zeros (and at its end): out[r] = J (the cycles), then the 6 x 8 table of
 * cycles visiting each state -4..-1, 1..4 exactly k times (k = 0..4, >= 5; row k, column state),
 * then the visits to -9..-1, 1..9 (18): 67 counts. */
void excursion_counts(const u32 *w, i64 rows, i64 s, i64 *out) {
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        i64 *o = out + r * 67, *table = o + 1, *xi = o + 49;
        memset(o, 0, sizeof(i64) * 67);
        i64 visits[8] = {0}, walk = 0, cycles = 0, state_xi[19] = {0};
        for (i64 i = 0; i < s; i++) {
            for (int b = 31; b >= 0; b--) {
                walk += ((x[i] >> b) & 1) ? 1 : -1;
                if (walk == 0) {
                    for (int c = 0; c < 8; c++) { table[(visits[c] < 5 ? visits[c] : 5) * 8 + c]++; visits[c] = 0; }
                    cycles++;
                } else if (walk >= -9 && walk <= 9) {
                    state_xi[walk + 9]++;
                    if (walk >= -4 && walk <= 4) visits[walk + 4 - (walk > 0)]++;
                }
            }
        }
        if (walk != 0) {
            for (int c = 0; c < 8; c++) table[(visits[c] < 5 ? visits[c] : 5) * 8 + c]++;
            cycles++;
        }
        o[0] = cycles;
        for (int v = 0; v < 9; v++) { xi[v] = state_xi[v]; xi[9 + v] = state_xi[10 + v]; }
    }
}

/* practrand_kinds.PowerLags: per row and lag, the 256 counts of the low byte of the second
 * difference x[i] - 2 x[i+L] + x[i+2L] (mod 2^32), i = 0 .. s-2L-1: out (rows, lags, 256). */
void power_lag_counts(const u32 *w, i64 rows, i64 s, const i64 *lags, i64 count, i64 *out) {
    memset(out, 0, sizeof(i64) * rows * count * 256);
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        for (i64 q = 0; q < count; q++) {
            i64 lag = lags[q], span = s - 2 * lag, *o = out + (r * count + q) * 256;
            u32 h[4][256];
            memset(h, 0, sizeof h);
            i64 i = 0;
            for (; i + 4 <= span; i += 4)
                for (int u = 0; u < 4; u++) h[u][(x[i + u] - 2u * x[i + u + lag] + x[i + u + 2 * lag]) & 255]++;
            for (; i < span; i++) h[0][(x[i] - 2u * x[i + lag] + x[i + 2 * lag]) & 255]++;
            for (int v = 0; v < 256; v++) o[v] = (i64)h[0][v] + h[1][v] + h[2][v] + h[3][v];
        }
    }
}

/* practrand_kinds.WeightWindows: per row, the counts of every circular window of 9 bytes (in
 * memory order, each byte's class from byte_class: 3^9 cells, code sum class[i+j] 3^j) and of
 * 6 words (a word's class: weight > cut_low, + weight >= cut_high: 3^6 cells). */
static void window_counts(uint8_t *letters, i64 n, int length, i64 *out) {
    /* letters has room for `length` more: the cycle's start is copied after its end */
    u32 top = 1, code = 0;
    for (int j = 1; j < length; j++) top *= 3;
    for (int j = 0; j < length; j++) letters[n + j] = letters[j % n];
    for (int j = length - 1; j >= 0; j--) code = code * 3 + letters[j];
    for (i64 i = 0; i < n; i++) {
        out[code]++;
        code = (code - letters[i]) / 3 + letters[i + length] * top;
    }
}

void weight_window_counts(const u32 *w, i64 rows, i64 s, const int8_t *byte_class, int cut_low, int cut_high,
                          i64 *bytes_out, i64 *words_out) {
    uint8_t *letters = (uint8_t *)malloc(4 * s + 16);
    memset(bytes_out, 0, sizeof(i64) * rows * 19683);
    memset(words_out, 0, sizeof(i64) * rows * 729);
    for (i64 r = 0; r < rows; r++) {
        const uint8_t *octets = (const uint8_t *)(w + r * s);
        for (i64 i = 0; i < 4 * s; i++) letters[i] = (uint8_t)byte_class[octets[i]];
        window_counts(letters, 4 * s, 9, bytes_out + r * 19683);
        for (i64 i = 0; i < s; i++) {
            int weight = __builtin_popcount(w[r * s + i]);
            letters[i] = (uint8_t)((weight > cut_low) + (weight >= cut_high));
        }
        window_counts(letters, s, 6, words_out + r * 729);
    }
    free(letters);
}

/* The m bits (m <= 32) from bit p of a row of `words` words, most significant first (zeros beyond
 * the row), as an integer whose first bit is its most significant (nist/common.window_values). */
static inline u32 window_at(const u32 *x, i64 words, i64 p, int m) {
    i64 j = p >> 5;
    u64 pair = ((u64)x[j] << 32) | (j + 1 < words ? x[j + 1] : 0u);
    return (u32)((pair >> (64 - (p & 31) - m)) & (((u64)1 << m) - 1));
}

/* nist.Universal (universal_statistic): for the L-bit blocks Q .. Q+K-1 of a row (blocks numbered
 * from 1), the distance to the previous block of the same value (its number itself where none);
 * last: 2^L scratch. */
void universal_distances(const u32 *x, i64 words, int L, i64 Q, i64 K, i64 *last, i64 *out) {
    memset(last, 0, sizeof(i64) << L);
    for (i64 i = 0; i < Q + K; i++) {
        u32 v = window_at(x, words, i * L, L);
        if (i >= Q) out[i - Q] = (i + 1) - last[v];
        last[v] = i + 1;
    }
}

/* nist.NonOverlappingTemplate (template_counts): per block of M bits of a row (N blocks), the
 * counts of the values of its m-bit windows at 0 .. M-m ((N, 2^m), accumulated). */
void block_window_counts(const u32 *x, i64 words, i64 N, i64 M, int m, i64 *out) {
    for (i64 b = 0; b < N; b++)
        for (i64 p = b * M; p <= b * M + M - m; p++) out[b * ((i64)1 << m) + window_at(x, words, p, m)]++;
}

/* nist.OverlappingTemplate (overlapping_classes): per block of M bits of a row (N blocks), the
 * m-bit windows at 0 .. M-m that are all ones. */
void block_ones_windows(const u32 *x, i64 words, i64 N, i64 M, int m, i64 *out) {
    u32 all = (u32)(((u64)1 << m) - 1);
    for (i64 b = 0; b < N; b++) {
        i64 hits = 0;
        for (i64 p = b * M; p <= b * M + M - m; p++) hits += window_at(x, words, p, m) == all;
        out[b] = hits;
    }
}

/* practrand_kinds.Gap16: per row of n 16-bit values (the words' halves, in memory order: low
 * half first on a little-endian machine, as numpy's view), the gaps between consecutive
 * occurrences of each value (position difference), counted by class: class = the number of
 * `bounds` (ascending, nb of them) at or below the gap (numpy's searchsorted side="right"); a
 * gap at or past the last bound is not counted (numpy's code slices that column off).
 * `by_length[L]`: the class of every gap of bit length L + 1 (2^L .. 2^(L+1) - 1) where they
 * share one, else -1 (then a binary search). `last`: 65536 i64 of scratch. */
void gap16_counts(const uint16_t *v, i64 rows, i64 n, const i64 *bounds, i64 nb, const i64 *by_length,
                  i64 *last, i64 *out) {
    memset(out, 0, sizeof(i64) * rows * nb);
    for (i64 r = 0; r < rows; r++) {
        const uint16_t *x = v + r * n;
        i64 *c = out + r * nb;
        for (i64 i = 0; i < 65536; i++) last[i] = -1;
        for (i64 i = 0; i < n; i++) {
            uint16_t value = x[i];
            i64 previous = last[value];
            last[value] = i;
            if (previous < 0) continue;
            i64 gap = i - previous, lo = by_length[63 - __builtin_clzll((u64)gap)];
            if (lo < 0) {  /* the first bound above the gap */
                i64 hi = nb;
                lo = 0;
                while (lo < hi) {
                    i64 mid = (lo + hi) / 2;
                    if (bounds[mid] <= gap) lo = mid + 1; else hi = mid;
                }
            }
            if (lo < nb) c[lo]++;
        }
    }
}

/* --- testu01.BirthdaySpacings: per set of m birthdays, the repeated values among its spacings ---
 * J = m minus the number of distinct spacings of the sorted set (the first value counts as a
 * spacing, from 0), exactly the numpy code's two sorts, in one pass over each set held in the
 * caches. Two steps, each exact whatever the words are; only the time depends on them:
 *   1. sort: a counting sort by the top `bits` bits (m buckets, a value each on average),
 *      then rounds of odd-even transposition, as many as the fullest bucket holds values: values
 *      of different buckets are already in order, so each bucket sorts on its own, and n rounds
 *      sort n values whichever pairs the first round takes (the odd-even transposition network;
 *      tests/test_stats_kernels.py sorts every 0-1 input of up to 10 values, on either parity,
 *      which by the 0-1 principle covers every input). A bucket of more than BIRTHDAY_MOST
 *      values (a weak stream) sends the set to an LSD radix sort instead;
 *   2. the spacings put one by one in a hash set of 2^hash_bits slots (16 a spacing; Fibonacci
 *      hashing, linear probing): a spacing equal to one already in it is a repeat, so the repeats
 *      are the sum over the values of their count - 1, J. A slot holds its set's tag (16 bits)
 *      and the index of the spacing it keeps (16 bits: m <= BIRTHDAY_INDEXED), so a slot of
 *      another set's tag is empty and the table is cleared once every 65535 sets only; more
 *      spacings are sorted (the radix sort) and their adjacent equal values counted.
 *      (One step instead of three: two bitmaps of hashes seen once and twice, the candidates
 *      gathered, then counted in a small hash set; about the same time, 0.43 against 0.45 s best
 *      of 7 over the standard tier's 16384 sets.)
 * scratch: 2m + 2049 + 2^bits + 1 + 2^hash_bits u32. */
#define BIRTHDAY_MOST 10

static void radix_sort_u32(u32 *x, u32 *tmp, i64 n, u32 *count) {
    for (int shift = 0; shift < 32; shift += 11) {   /* 11 + 11 + 10 bits, least significant first */
        memset(count, 0, sizeof(u32) * 2049);
        for (i64 j = 0; j < n; j++) count[((x[j] >> shift) & 2047) + 1]++;
        for (int b = 0; b < 2048; b++) count[b + 1] += count[b];
        for (i64 j = 0; j < n; j++) tmp[count[(x[j] >> shift) & 2047]++] = x[j];
        memcpy(x, tmp, sizeof(u32) * n);
    }
}

static void birthday_sort(const u32 *x, i64 m, int bits, u32 *sorted, u32 *tmp, u32 *radix, u32 *bucket) {
    i64 buckets = (i64)1 << bits;
    int shift = 32 - bits;
    memset(bucket, 0, sizeof(u32) * (buckets + 1));
    for (i64 j = 0; j < m; j++) bucket[(x[j] >> shift) + 1]++;
    u32 most = 0;
    for (i64 b = 1; b <= buckets; b++) most = bucket[b] > most ? bucket[b] : most;   /* vectorised */
    for (i64 b = 1; b <= buckets; b++) bucket[b] += bucket[b - 1];   /* bucket[b]: where bucket b begins */
    if (most > BIRTHDAY_MOST) {
        memcpy(sorted, x, sizeof(u32) * m);
        radix_sort_u32(sorted, tmp, m, radix);
        return;
    }
    for (i64 j = 0; j < m; j++) sorted[bucket[x[j] >> shift]++] = x[j];
    for (u32 round = 0; round < most; round++)
        for (i64 j = round & 1; j + 1 < m; j += 2) {
            u32 a = sorted[j], b = sorted[j + 1];
            sorted[j] = a < b ? a : b;
            sorted[j + 1] = a < b ? b : a;
        }
}

/* Step 1 alone, each set's sorted values into `out` (for the tests: the 0-1 principle). */
void birthday_sorted(const u32 *w, i64 sets, i64 m, int bits, u32 *scratch, u32 *out) {
    u32 *tmp = scratch, *radix = tmp + m, *bucket = radix + 2049;
    for (i64 r = 0; r < sets; r++) birthday_sort(w + r * m, m, bits, out + r * m, tmp, radix, bucket);
}

#define BIRTHDAY_INDEXED 65536

void birthday_repeats(const u32 *w, i64 sets, i64 m, int bits, int hash_bits, u32 *scratch, i64 *out) {
    u32 *sorted = scratch, *gaps = sorted + m, *radix = gaps + m, *bucket = radix + 2049;
    u32 *slots = bucket + ((i64)1 << bits) + 1, mask = ((u32)1 << hash_bits) - 1, tag = 0;
    int down = 32 - (hash_bits ? hash_bits : 1);
    memset(slots, 0, sizeof(u32) << hash_bits);
    for (i64 r = 0; r < sets; r++) {
        birthday_sort(w + r * m, m, bits, sorted, gaps, radix, bucket);
        gaps[0] = sorted[0];
        for (i64 j = 1; j < m; j++) gaps[j] = sorted[j] - sorted[j - 1];   /* vectorised */
        i64 repeats = 0;
        if (m > BIRTHDAY_INDEXED || hash_bits == 0) {   /* no table (kernels.py's hash_bits 0) */
            radix_sort_u32(gaps, sorted, m, radix);
            for (i64 j = 1; j < m; j++) repeats += gaps[j] == gaps[j - 1];
            out[r] = repeats;
            continue;
        }
        tag += 1u << 16;
        if (tag == 0) {   /* 65535 sets since the last clearing: every tag is taken */
            memset(slots, 0, sizeof(u32) << hash_bits);
            tag = 1u << 16;
        }
        for (i64 j = 0; j < m; j++) {
            u32 gap = gaps[j], h = (gap * 2654435769u) >> down, slot = slots[h];
            while ((slot & 0xFFFF0000u) == tag && gaps[slot & 0xFFFFu] != gap) slot = slots[h = (h + 1) & mask];
            if ((slot & 0xFFFF0000u) == tag) repeats++;
            else slots[h] = tag | (u32)j;
        }
        out[r] = repeats;
    }
}

/* practrand_kinds.BlockWeights: per row of s words, for each level j (blocks of 2^levels[j]
 * words, ascending), the Hamming weight of each block in three classes (0: <= lower[j], 2: >=
 * upper[j], 1 between), the non-overlapping triples of consecutive blocks as cells c0 + 3 c1 +
 * 9 c2 counted: out (rows, nlevels, 27). `scratch`: s i64. */
void block_weight_counts(const u32 *w, i64 rows, i64 s, const i64 *levels, i64 nlevels, const i64 *lower,
                         const i64 *upper, i64 *scratch, i64 *out) {
    memset(out, 0, sizeof(i64) * rows * nlevels * 27);
    for (i64 r = 0; r < rows; r++) {
        const u32 *x = w + r * s;
        i64 blocks = s, level = 0;
        for (i64 i = 0; i < s; i++) scratch[i] = __builtin_popcount(x[i]);
        for (i64 j = 0; j < nlevels; j++) {
            while (level < levels[j]) {  /* pairs of blocks summed: the next level's weights */
                blocks /= 2;
                for (i64 b = 0; b < blocks; b++) scratch[b] = scratch[2 * b] + scratch[2 * b + 1];
                level++;
            }
            i64 *c = out + (r * nlevels + j) * 27, lo = lower[j], hi = upper[j];
            for (i64 b = 0; b + 3 <= blocks; b += 3) {
                int code = 0, scale = 1;
                for (int t = 0; t < 3; t++, scale *= 3)
                    code += scale * ((scratch[b + t] > lo) + (scratch[b + t] >= hi));
                c[code]++;
            }
        }
    }
}
