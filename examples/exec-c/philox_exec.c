/*
 * DML_RANDOM_GENERATOR (Philox 4x32-10) in C, speaking rngcheck's exec protocol, version 1
 * (docs/exec-protocol.md) on stdin and stdout.
 *
 *   gcc -O2 -std=c99 -Wall -Wextra -o philox_exec philox_exec.c
 *   rngcheck run --backend exec:./philox_exec --profile full
 *
 * The operator (DirectML's DML_RANDOM_GENERATOR_OPERATOR_DESC; Salmon et al., SC11):
 *   element i (row-major over Sizes) = lane i%4 of Philox4x32-10(counter + floor(i/4) mod 2^128, key),
 *   written at offset sum(index_d * stride_d); output state = counter + ceil(n/4) mod 2^128.
 * It validates descriptions as DirectML does and answers RJCT with the rule's id.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 16

/* ---- I/O: every integer little-endian (this file assumes a little-endian host) ---------- */
static int read_all(void *data, size_t size) {
    return fread(data, 1, size, stdin) == size;
}

static void write_all(const void *data, size_t size) {
    if (fwrite(data, 1, size, stdout) != size) exit(3);
}

static void send_message(const char tag[4], const void *payload, uint32_t size) {
    write_all(tag, 4);
    write_all(&size, 4);
    if (size) write_all(payload, size);
    fflush(stdout);
}

static void send_text(const char tag[4], const char *json) {
    send_message(tag, json, (uint32_t)strlen(json));
}

/* ---- Philox4x32-10 (Random123 philox.h: multipliers, Weyl constants, round function) ---- */
static void philox4x32_10(const uint32_t ctr[4], uint32_t k0, uint32_t k1, uint32_t out[4]) {
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    for (int round = 0; round < 10; round++) {
        if (round) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0; c1 = (uint32_t)p1; c2 = n2; c3 = (uint32_t)p0;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* counter + add, 128-bit with carry, mod 2^128 (word 0 least significant) */
static void counter_add(const uint32_t in[4], uint64_t add, uint32_t out[4]) {
    uint64_t carry = add;
    for (int w = 0; w < 4; w++) {
        uint64_t sum = (uint64_t)in[w] + (carry & 0xFFFFFFFFu);
        out[w] = (uint32_t)sum;
        carry = (carry >> 32) + (sum >> 32);
    }
}

/* ---- one CALL ------------------------------------------------------------------------ */
typedef struct {
    uint32_t major, minor, flags, rank, stride_count, state_rank, out_rank, state_type, output_type;
    int64_t sizes[MAX_RANK], strides[MAX_RANK], state_sizes[MAX_RANK], out_sizes[MAX_RANK];
    uint32_t state_words;
    uint32_t state[64];
    uint64_t buffer_words;
    uint32_t *buffer;
} call_t;

static const char *validate(const call_t *c, char *why, size_t why_size) {
    const uint32_t UINT32 = 3;
    int fl3 = c->major < 4;
    if (c->major < 3) return "feature-level";
    if (c->state_type != UINT32 || c->output_type != UINT32) return "data-type";
    uint32_t ranks[3] = {c->state_rank, c->rank, c->out_rank};
    for (int t = 0; t < 3; t++) {
        if (t == 2 && !(c->flags & 1)) continue;
        if (fl3 ? ranks[t] != 4 : (ranks[t] < 1 || ranks[t] > 8)) return "rank";
    }
    for (int which = 0; which < 2; which++) {
        const int64_t *s = which ? c->out_sizes : c->state_sizes;
        uint32_t r = which ? c->out_rank : c->state_rank;
        if (which && !(c->flags & 1)) continue;
        if (r == 0 || s[r - 1] != 6) return "state-sizes";
        for (uint32_t d = 0; d + 1 < r; d++) if (s[d] != 1) return "state-sizes";
    }
    if (c->flags & 1) {
        if (c->out_rank != c->state_rank) return "state-match";
        for (uint32_t d = 0; d < c->state_rank; d++) if (c->out_sizes[d] != c->state_sizes[d]) return "state-match";
    }
    uint64_t n = 1;
    for (uint32_t d = 0; d < c->rank; d++) {
        if (c->sizes[d] <= 0) return "size-zero";
        n *= (uint64_t)c->sizes[d];
        if (n >= (1ull << 32)) return "element-count";
    }
    if ((c->flags & 2) && c->stride_count != c->rank) return "stride-count";
    uint64_t last = 0;
    for (uint32_t d = 0; d < c->rank; d++) {
        int64_t stride = 1;
        if (c->flags & 2) stride = c->strides[d];
        else for (uint32_t e = d + 1; e < c->rank; e++) stride *= c->sizes[e];
        if (stride < 0) return "stride-negative";
        last += (uint64_t)(c->sizes[d] - 1) * (uint64_t)stride;
    }
    if (c->buffer_words < last + 1) {
        snprintf(why, why_size, "buffer of %llu elements, %llu needed",
                 (unsigned long long)c->buffer_words, (unsigned long long)(last + 1));
        return "buffer-size";
    }
    return NULL;
}

static void generate(call_t *c) {
    int64_t strides[MAX_RANK];
    uint64_t n = 1;
    for (int d = (int)c->rank - 1; d >= 0; d--) {
        strides[d] = (c->flags & 2) ? c->strides[d] : (int64_t)n;
        n *= (uint64_t)c->sizes[d];
    }
    int64_t index[MAX_RANK] = {0};
    int64_t offset = 0;
    uint32_t block[4], ctr[4];
    for (uint64_t i = 0; i < n; i++) {
        if (i % 4 == 0) {
            counter_add(c->state, i / 4, ctr);
            philox4x32_10(ctr, c->state[4], c->state[5], block);
        }
        c->buffer[offset] = block[i % 4];
        /* next coordinates in row-major order, keeping the offset as we go */
        for (int d = (int)c->rank - 1; d >= 0; d--) {
            if (++index[d] < c->sizes[d]) { offset += strides[d]; break; }
            offset -= strides[d] * (c->sizes[d] - 1);
            index[d] = 0;
        }
    }
    uint32_t next[6];
    counter_add(c->state, (n + 3) / 4, next);
    next[4] = c->state[4];
    next[5] = c->state[5];

    /* DONE: state kind, state, buffer */
    uint32_t kind = (c->flags & 1) ? 1 : 0;
    uint32_t size = 4 + (kind ? 24 : 0) + 8 + (uint32_t)(4 * c->buffer_words);
    write_all("DONE", 4);
    write_all(&size, 4);
    write_all(&kind, 4);
    if (kind) write_all(next, 24);
    write_all(&c->buffer_words, 8);
    write_all(c->buffer, 4 * c->buffer_words);
    fflush(stdout);
}

static int handle_call(uint32_t length) {
    call_t c;
    memset(&c, 0, sizeof c);
    uint32_t fixed[9];
    if (length < sizeof fixed || !read_all(fixed, sizeof fixed)) return 0;
    c.major = fixed[0]; c.minor = fixed[1]; c.flags = fixed[2]; c.rank = fixed[3]; c.stride_count = fixed[4];
    c.state_rank = fixed[5]; c.out_rank = fixed[6]; c.state_type = fixed[7]; c.output_type = fixed[8];
    if (c.rank > MAX_RANK || c.stride_count > MAX_RANK || c.state_rank > MAX_RANK || c.out_rank > MAX_RANK) return 0;
    if (!read_all(c.sizes, 8 * c.rank)) return 0;
    if ((c.flags & 2) && !read_all(c.strides, 8 * c.stride_count)) return 0;
    if (!read_all(c.state_sizes, 8 * c.state_rank) || !read_all(c.out_sizes, 8 * c.out_rank)) return 0;
    if (!read_all(&c.state_words, 4) || c.state_words > 64 || !read_all(c.state, 4 * c.state_words)) return 0;
    if (!read_all(&c.buffer_words, 8)) return 0;
    c.buffer = malloc(c.buffer_words ? 4 * c.buffer_words : 4);
    if (!c.buffer || !read_all(c.buffer, 4 * c.buffer_words)) { free(c.buffer); return 0; }

    char why[160] = "";
    const char *rule = validate(&c, why, sizeof why);
    if (c.buffer_words > (0xFFFFFFFFull - 64) / 4) {  /* a DONE payload must fit in a u32 length */
        send_text("FAIL", "{\"error\": \"buffer too large for exec protocol version 1\"}");
    } else if (rule) {
        char json[320];
        snprintf(json, sizeof json, "{\"message\": \"%s: %s\", \"rule\": \"%s\"}", rule, why, rule);
        send_text("RJCT", json);
    } else {
        generate(&c);
    }
    free(c.buffer);
    return 1;
}

int main(void) {
    send_text("HELO", "{\"protocol\": 1, \"name\": \"philox-exec-c\", \"validates\": true, "
                      "\"describe\": {\"implementation\": \"examples/exec-c/philox_exec.c\", \"language\": \"C99\", "
                      "\"device\": \"cpu\"}}");
    for (;;) {
        char tag[4];
        uint32_t length;
        if (!read_all(tag, 4) || !read_all(&length, 4)) return 0;
        if (memcmp(tag, "QUIT", 4) == 0) return 0;
        if (memcmp(tag, "CALL", 4) != 0 || !handle_call(length)) {
            fprintf(stderr, "philox_exec: protocol error\n");
            return 2;
        }
    }
}
