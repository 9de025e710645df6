// rngcheck's bridge to Random123 (https://github.com/DEShawResearch/random123), loaded with ctypes
// by rngcheck/backends/random123_backend.py, which compiles it on first use:
//     g++ -O2 -std=c++11 -shared -fPIC rngcheck_random123.cpp
// (Debian: apt-get install librandom123-dev, header-only).
//
// A stream is one execution of DML_RANDOM_GENERATOR as a Random123 user would write it:
//   mode 0 (raw):    block = philox4x32(ctr, key); ctr.incr();  lanes 0, 1, 2, 3 in order;
//                    a partial block's unused lanes are kept for the next draw.
//   mode 1 (engine): r123::Engine<r123::Philox4x32> e(key); e.setcounter(ctr, 0); each word e();
// The state read back is the library's own: the raw counter after its incr() calls, or the
// engine's getcounter().first and getkey().
//
// The generators (rngcheck_random123_blocks): one block of any of the headers' counter-based
// generators per counter, at any round count the header's <name>_R(R, ctr, key) takes (Philox up to 16,
// ThreeFry 2xW up to 32, 4xW up to 72; ARS and AESNI only when compiled with AES-NI and the CPU has it,
// AESNI at its 10 rounds only). Counters and key are the header's ctr.v[] / key.v[] words in order.
#include <Random123/philox.h>
#include <Random123/threefry.h>
#if R123_USE_AES_NI
#include <Random123/ars.h>
#include <Random123/aes.h>
#endif
#include <Random123/conventional/Engine.hpp>

#include <cstdint>
#include <new>

namespace {

typedef r123::Philox4x32 G;
typedef G::ctr_type Ctr;
typedef G::key_type Key;

struct Stream {
    int mode;
    Key key;
    Ctr ctr;            // raw: the counter of the next block to compute
    Ctr block;          // raw: the last block computed
    unsigned pending;   // raw: its lanes not yet drawn (4 - lanes drawn), 0 when none
    r123::Engine<G> engine;

    Stream(int m, const uint32_t c[4], const uint32_t k[2]) : mode(m), pending(0) {
        for (int i = 0; i < 4; ++i) ctr.v[i] = c[i];
        key.v[0] = k[0];
        key.v[1] = k[1];
        engine = r123::Engine<G>(key);
        engine.setcounter(ctr, 0);
    }

    void draw(uint32_t *out, uint64_t n) {
        if (mode == 1) {
            for (uint64_t i = 0; i < n; ++i) out[i] = engine();
            return;
        }
        uint64_t i = 0;
        while (i < n && pending) out[i++] = block.v[4 - pending--];
        G philox;
        while (n - i >= 4) {
            Ctr r = philox(ctr, key);
            ctr.incr();
            out[i] = r.v[0]; out[i + 1] = r.v[1]; out[i + 2] = r.v[2]; out[i + 3] = r.v[3];
            i += 4;
        }
        if (i < n) {
            block = philox(ctr, key);
            ctr.incr();
            pending = 4;
            while (i < n) out[i++] = block.v[4 - pending--];
        }
    }

    void state(uint32_t out[6]) const {
        Ctr c = ctr;
        Key k = key;
        if (mode == 1) {
            c = engine.getcounter().first;
            k = engine.getkey();
        }
        for (int i = 0; i < 4; ++i) out[i] = c.v[i];
        out[4] = k.v[0];
        out[5] = k.v[1];
    }
};

// One generator, R rounds, n blocks: ctr and key words in, the blocks out. 0, or -1 for a round
// count the header does not take.
template <typename Ctr, typename Key, typename F>
int blocks(F f, unsigned rounds, unsigned most, const void *counters, uint64_t n, const void *key, unsigned nkey,
           void *out) {
    typedef typename Ctr::value_type W;
    if (nkey != Key::static_size) return -3;
    if (rounds > most) return -1;
    const W *in = static_cast<const W *>(counters);
    const W *k = static_cast<const W *>(key);
    W *o = static_cast<W *>(out);
    Key kk;
    for (unsigned i = 0; i < Key::static_size; ++i) kk.v[i] = k[i];
    for (uint64_t b = 0; b < n; ++b) {
        Ctr c;
        for (unsigned i = 0; i < Ctr::static_size; ++i) c.v[i] = in[b * Ctr::static_size + i];
        Ctr r = f(rounds, c, kk);
        for (unsigned i = 0; i < Ctr::static_size; ++i) o[b * Ctr::static_size + i] = r.v[i];
    }
    return 0;
}

#if R123_USE_AES_NI
bool has_aes() { return __builtin_cpu_supports("aes") && __builtin_cpu_supports("sse4.1"); }

r123array4x32 aesni(unsigned rounds, r123array4x32 c, r123array4x32 k) {
    return aesni4x32_R(rounds, c, aesni4x32keyinit(k));
}
#endif

const char *const GENERATORS[] = {
    "philox2x32", "philox4x32", "philox2x64", "philox4x64",
    "threefry2x32", "threefry4x32", "threefry2x64", "threefry4x64",
    "ars4x32", "aesni4x32",
};
const int GENERATOR_COUNT = sizeof(GENERATORS) / sizeof(GENERATORS[0]);

}  // namespace

extern "C" {

// The name of generator i (0 <= i), or null past the last; 1 if this build and CPU compute it.
const char *rngcheck_random123_generator(int i, int *available) {
    if (i < 0 || i >= GENERATOR_COUNT) return 0;
    *available = i < 8;
#if R123_USE_AES_NI
    if (i >= 8) *available = has_aes();
#endif
    return GENERATORS[i];
}

// Blocks of generator i (its index above) with R rounds: 0, -1 for a round count the header
// does not take, -2 for a generator this build or CPU does not compute, -3 for a key of another
// number of words than the generator's.
int rngcheck_random123_blocks(int i, unsigned rounds, const void *counters, uint64_t n, const void *key,
                              unsigned nkey, void *out) {
    switch (i) {
    case 0: return blocks<philox2x32_ctr_t, philox2x32_key_t>(philox2x32_R, rounds, 16, counters, n, key, nkey, out);
    case 1: return blocks<philox4x32_ctr_t, philox4x32_key_t>(philox4x32_R, rounds, 16, counters, n, key, nkey, out);
    case 2: return blocks<philox2x64_ctr_t, philox2x64_key_t>(philox2x64_R, rounds, 16, counters, n, key, nkey, out);
    case 3: return blocks<philox4x64_ctr_t, philox4x64_key_t>(philox4x64_R, rounds, 16, counters, n, key, nkey, out);
    case 4: return blocks<threefry2x32_ctr_t, threefry2x32_key_t>(threefry2x32_R, rounds, 32, counters, n, key, nkey, out);
    case 5: return blocks<threefry4x32_ctr_t, threefry4x32_key_t>(threefry4x32_R, rounds, 72, counters, n, key, nkey, out);
    case 6: return blocks<threefry2x64_ctr_t, threefry2x64_key_t>(threefry2x64_R, rounds, 32, counters, n, key, nkey, out);
    case 7: return blocks<threefry4x64_ctr_t, threefry4x64_key_t>(threefry4x64_R, rounds, 72, counters, n, key, nkey, out);
#if R123_USE_AES_NI
    case 8:
        if (!has_aes()) return -2;
        if (rounds < 1) return -1;
        return blocks<ars4x32_ctr_t, ars4x32_ukey_t>(ars4x32_R, rounds, 10, counters, n, key, nkey, out);
    case 9:
        if (!has_aes()) return -2;
        if (rounds != 10) return -1;
        return blocks<r123array4x32, r123array4x32>(aesni, rounds, 10, counters, n, key, nkey, out);
#endif
    default: return -2;
    }
}


int rngcheck_random123_abi(void) { return 2; }

const char *rngcheck_random123_compiler(void) {
#ifdef __VERSION__
    return __VERSION__;
#else
    return "unknown";
#endif
}

int rngcheck_random123_rounds(void) { return PHILOX4x32_DEFAULT_ROUNDS; }

void *rngcheck_random123_open(int mode, const uint32_t counter[4], const uint32_t key[2]) {
    if (mode != 0 && mode != 1) return 0;
    return new (std::nothrow) Stream(mode, counter, key);
}

void rngcheck_random123_draw(void *stream, uint32_t *out, uint64_t n) {
    static_cast<Stream *>(stream)->draw(out, n);
}

void rngcheck_random123_state(void *stream, uint32_t out[6]) {
    static_cast<const Stream *>(stream)->state(out);
}

void rngcheck_random123_close(void *stream) { delete static_cast<Stream *>(stream); }

}
