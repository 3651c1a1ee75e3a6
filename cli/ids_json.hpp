// Token ids as a JSON array ("[1,2,3]\n", as nlohmann writes it), straight into an io::Writer's
// buffer: `chatwire tokenize` writes an encode of megabytes this way, and bench_tokenize's
// encode_cold_json measures the same code in process.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <span>

#include "io.hpp"

namespace chatwire::cli {

namespace ids_json_detail {

// The four decimal digits of 0..9999, zero-padded, as the bytes of a little-endian word (the
// thousands digit in its low byte): a word shifted right by 8 * (4 - n) bits holds the last n
// digits in its low n bytes.
inline constexpr std::array<std::uint32_t, 10000> kDigits4 = [] {
  std::array<std::uint32_t, 10000> t{};
  for (std::uint32_t i = 0; i < 10000; ++i) {
    t[i] = (std::uint32_t{'0'} + i / 1000) | (std::uint32_t{'0'} + i / 100 % 10) << 8 |
           (std::uint32_t{'0'} + i / 10 % 10) << 16 | (std::uint32_t{'0'} + i % 10) << 24;
  }
  return t;
}();

// Writes v < 10000 without leading zeros; stores 4 bytes at `at` (the caller has room).
inline char* put_small(char* at, std::uint32_t v) {
  const unsigned n = 1u + (v >= 10) + (v >= 100) + (v >= 1000);
  const std::uint32_t w = kDigits4[v] >> (8 * (4 - n));
  std::memcpy(at, &w, 4);
  return at + n;
}

// Writes id in decimal; stores up to 8 bytes at `at` and returns the end of the digits. A table
// of four digits at a time: std::to_chars took about 8 ns an id, the writing of 300k ids 2.5 ms.
inline char* put_id(char* at, std::uint32_t id) {
  if constexpr (std::endian::native == std::endian::little) {
    if (id < 10000) return put_small(at, id);
    if (id < 100000000) {
      at = put_small(at, id / 10000);
      std::memcpy(at, &kDigits4[id % 10000], 4);
      return at + 4;
    }
  }
  return std::to_chars(at, at + 10, id).ptr;
}

}  // namespace ids_json_detail

inline void write_ids_json(io::Writer& out, std::span<const std::uint32_t> ids) {
  constexpr std::size_t kBlock = 256;  // ids per reservation: at most 11 bytes each
  out.put('[');
  for (std::size_t i = 0; i < ids.size(); i += kBlock) {
    const std::size_t n = std::min(kBlock, ids.size() - i);
    // 11 bytes an id (a comma and 10 digits), and 4 for put_small's last store.
    char* begin = out.reserve(n * 11 + 4);
    char* at = begin;
    std::size_t k = i;
    if (k == 0) at = ids_json_detail::put_id(at, ids[k++]);
    for (; k < i + n; ++k) {
      *at++ = ',';
      at = ids_json_detail::put_id(at, ids[k]);
    }
    out.commit(static_cast<std::size_t>(at - begin));
  }
  out.write("]\n");
}

}  // namespace chatwire::cli
