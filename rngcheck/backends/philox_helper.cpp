// rngcheck's C++ helper: a library's Philox4x32-10 driven with a DirectML
// DML_RANDOM_GENERATOR state, called through ctypes. One engine per build, chosen by a macro:
//
//   (default)               PyTorch's at::Philox4_32 (ATen/core/PhiloxRNGEngine.h, a header in
//                           the torch wheel): the `torch` backend (rngcheck/backends/torch_backend.py)
//   RNGCHECK_ENGINE_ONEDPL  Intel oneDPL's oneapi::dpl::philox4x32 (P2075's philox_engine), on the
//                           host, without a SYCL compiler: the `onedpl` backend
//                           (rngcheck/backends/onedpl_backend.py)
//
// Built with g++ -O2 -std=c++17 -shared -fPIC -I<headers> [-DRNGCHECK_ENGINE_ONEDPL] into a cache
// folder on first use, rebuilt when this file's hash changes. Both engines are header-only:
// nothing of libtorch or of a SYCL runtime is linked or loaded.
//
// Interface (both engines):
//   const char* rngcheck_engine(void);
//   void rngcheck_philox_words(const uint32_t state[6], uint64_t skip_blocks, uint64_t count,
//                              uint32_t* out, uint32_t out_state[6]);
// draws `count` words starting `skip_blocks` blocks after the state's counter (with the
// library's own skip), and writes into out_state the state the library itself reports after
// the draw (see each engine below).

#include <cstdint>

#if defined(RNGCHECK_ENGINE_ONEDPL)

#include <array>
#include <istream>
#include <ostream>
#include <sstream>
#include <type_traits>

// oneDPL's random headers name two SYCL types in signatures that the scalar host path never
// instantiates (sycl::vec results, the sycl::stream inserter); <oneapi/dpl/random> itself
// includes <sycl/sycl.hpp> and stops with #error without a SYCL compiler. Declaring the two
// types is all the engine needs on the host.
namespace sycl {
template <typename T, int N> class vec;
class stream;
}  // namespace sycl

#include <oneapi/dpl/internal/random_impl/random_common.h>
#include <oneapi/dpl/internal/random_impl/philox_engine.h>

// oneapi::dpl::philox4x32, exactly as <oneapi/dpl/random> defines it.
using Engine = oneapi::dpl::philox_engine<uint_fast32_t, 32, 4, 10, 0xCD9E8D57, 0x9E3779B9, 0xD2511F53, 0xBB67AE85>;

extern "C" {

const char* rngcheck_engine(void) {
    return "oneapi::dpl::philox4x32 (oneDPL philox_engine, P2075), host C++ without SYCL";
}

// Mapping: seed(k0) sets K0 (K1 = 0, counter 0); set_counter({w3, w2, w1, w0}) sets the 128-bit
// counter, most significant word first, and the next call computes that block. oneDPL has no
// seed-sequence constructor, so a key with k1 != 0 is loaded through the engine's extractor
// (operator>>, the textual representation "K0 K1 X0 X1 X2 X3 i", i = 3: no buffered words).
// Skip: discard(4 * skip_blocks). Output state: the engine's own K and X, read back through its
// inserter (operator<<) after the draw: X is the counter of the next block it would compute.
void rngcheck_philox_words(const uint32_t* state, uint64_t skip_blocks, uint64_t count,
                           uint32_t* out, uint32_t* out_state) {
    Engine engine(state[4]);
    engine.set_counter({state[3], state[2], state[1], state[0]});
    if (state[5] != 0) {
        std::stringstream text;
        text << state[4] << ' ' << state[5] << ' ' << state[0] << ' ' << state[1] << ' '
             << state[2] << ' ' << state[3] << ' ' << 3;
        text >> engine;
    }
    if (skip_blocks) engine.discard(4 * skip_blocks);
    for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<uint32_t>(engine());
    std::stringstream text;
    text << engine;
    unsigned long long k0, k1, x0, x1, x2, x3;
    text >> k0 >> k1 >> x0 >> x1 >> x2 >> x3;
    const unsigned long long words[6] = {x0, x1, x2, x3, k0, k1};
    for (int i = 0; i < 6; ++i) out_state[i] = static_cast<uint32_t>(words[i]);
}

}  // extern "C"

#else  // PyTorch's at::Philox4_32

#include <ATen/core/PhiloxRNGEngine.h>

extern "C" {

const char* rngcheck_engine(void) { return "at::Philox4_32 (ATen/core/PhiloxRNGEngine.h)"; }

// Mapping (see docs/library-findings.md): seed = s4 | s5 << 32 (key k0, k1),
// subsequence = s2 | s3 << 32 (counter words 2, 3), offset = s0 | s1 << 32 (counter words 0,
// 1, in blocks). Skip: the engine's own incr_n. Words: operator(), one per call, lanes in order.
// Output state: what the engine can report: get_offset() as words 0-1, the subsequence it was
// given as words 2-3 (it has no accessor for them), the seed as words 4-5.
void rngcheck_philox_words(const uint32_t* state, uint64_t skip_blocks, uint64_t count,
                           uint32_t* out, uint32_t* out_state) {
    const uint64_t offset = uint64_t(state[0]) | (uint64_t(state[1]) << 32);
    const uint64_t subsequence = uint64_t(state[2]) | (uint64_t(state[3]) << 32);
    const uint64_t seed = uint64_t(state[4]) | (uint64_t(state[5]) << 32);
    at::Philox4_32 engine(seed, subsequence, offset);
    if (skip_blocks) engine.incr_n(skip_blocks);
    for (uint64_t i = 0; i < count; ++i) out[i] = engine();
    const uint64_t after = engine.get_offset();
    out_state[0] = uint32_t(after);
    out_state[1] = uint32_t(after >> 32);
    out_state[2] = state[2];
    out_state[3] = state[3];
    out_state[4] = state[4];
    out_state[5] = state[5];
}

}  // extern "C"

#endif
