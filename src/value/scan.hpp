// Block scans shared by the value writers (json.dumps, repr): copy a run of bytes that need
// no escaping through 16-byte blocks, stopping at the first byte a writer-specific mask
// flags.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace chatwire::scan {

// The 1..7 bytes at `in` in the low lanes of a word, zeros above, reading none past them.
inline std::uint64_t load_tail(const char* in, std::size_t n) {
  if (n >= 4) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, in, 4);
    std::memcpy(&hi, in + n - 4, 4);  // overlaps lo: the shared lanes hold the same bytes
    return lo | (static_cast<std::uint64_t>(hi) << (8 * (n - 4)));
  }
  auto byte = [&](std::size_t i) {
    return static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  };
  return byte(0) | byte(n / 2) | byte(n - 1);
}

#if defined(__SSE2__)
// Copies the bytes of [in, stop) before the first one `flagged` marks (a 16-bit mask per
// block, one bit per byte; zero bytes must be flagged) and advances `in` to it. Blocks are
// stored whole into `out`, which has room for stop - in plus 16 bytes of slack; the cursor
// then moves only past the plain bytes. A tail under 16 bytes is gathered into one block
// whose zero lanes above it stop the scan, so no byte past `stop` is read.
template <typename Flagged>
[[gnu::always_inline]] inline char* copy_unflagged(const char*& in, const char* stop, char* out,
                                                   Flagged flagged) {
  while (stop - in >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), v);
    if (unsigned mask = flagged(v)) {
      auto k = static_cast<std::size_t>(std::countr_zero(mask));
      in += k;
      return out + k;
    }
    in += 16;
    out += 16;
  }
  if (in == stop) return out;
  auto n = static_cast<std::size_t>(stop - in);
  std::uint64_t lo, hi = 0;
  if (n >= 8) {
    std::memcpy(&lo, in, 8);
    if (n > 8) {
      std::memcpy(&hi, stop - 8, 8);  // overlaps lo; shifted down to bytes 8..n-1
      hi >>= 8 * (16 - n);
    }
  } else {
    lo = load_tail(in, n);
  }
  const __m128i v = _mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), v);
  auto k = static_cast<std::size_t>(std::countr_zero(flagged(v)));
  in += k;
  return out + k;
}
#endif

}  // namespace chatwire::scan
