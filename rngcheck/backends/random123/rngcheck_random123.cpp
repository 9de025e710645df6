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
#include <Random123/philox.h>
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

}  // namespace

extern "C" {

int rngcheck_random123_abi(void) { return 1; }

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
