// Writes an nlohmann JSON value exactly as dump(-1, ' ', false, error_handler_t::replace) does,
// straight into the output writer, with strings escaped 16 bytes at a time: `chatwire parse`
// prints messages of many megabytes, and nlohmann's serializer decodes and checks them one
// byte at a time. Strings that are not valid UTF-8 (model output may hold any bytes) are left
// to nlohmann, whose replacement of bad bytes by U+FFFD this does not reimplement.
#pragma once

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "chatwire/parse_json.hpp"
#include "io.hpp"
#include "util/json_escape.hpp"
#include "util/utf8.hpp"

namespace chatwire::cli {

namespace json_writer_detail {

using util::JsonEscape;
using util::kJsonEscapes;

// Escapes `s` into dst (room for 6 bytes per input byte, and 16 more): blocks of 16 bytes are
// stored whole and the cursor only advances past the bytes before the first one to escape, so plain
// text costs one load, one compare set and one store per 16 bytes. Returns the bytes written.
inline std::size_t escape_into(char* dst, std::string_view s) {
  const char* p = s.data();
  const std::size_t n = s.size();
  char* const start = dst;
  std::size_t at = 0;
  while (at < n) {
#if defined(__SSE2__)
    if (at + 16 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), v);
      const __m128i high = _mm_cmplt_epi8(v, _mm_setzero_si128());  // >= 0x80: not escaped
      __m128i bad = _mm_andnot_si128(high, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
      bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
      bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
      unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(bad));
      if (mask == 0) {
        at += 16;
        dst += 16;
        continue;
      }
      // Every byte to escape in this block, without loading it again per escape (code and JSON
      // text escape every few bytes): the plain bytes before each are copied 16 at a time from
      // the source (exactly, near the end of the input).
      std::size_t done = 0;  // bytes of this block written so far
      while (mask != 0) {
        const auto k = static_cast<std::size_t>(__builtin_ctz(mask));
        mask &= mask - 1;
        if (at + done + 16 <= n)
          std::memcpy(dst, p + at + done, 16);
        else  // near the end of the input: only the bytes that are there
          std::memcpy(dst, p + at + done, k - done);
        dst += k - done;
        const JsonEscape& e = kJsonEscapes.of[static_cast<unsigned char>(p[at + k])];
        std::memcpy(dst, e.text, 8);
        dst += e.size;
        done = k + 1;
      }
      at += done;  // the rest of the block is read again with the next load
      continue;
    } else
#endif
    {
      const auto c = static_cast<unsigned char>(p[at]);
      if (c >= 0x20 && c != '"' && c != '\\') {
        *dst++ = static_cast<char>(c);
        ++at;
        continue;
      }
    }
    // The escape from a table, copied as 8 bytes: no branch on which byte it is (quotes and
    // backslashes alternate in code and JSON text, which a switch mispredicts).
    const JsonEscape& e = kJsonEscapes.of[static_cast<unsigned char>(p[at++])];
    std::memcpy(dst, e.text, 8);
    dst += e.size;
  }
  return static_cast<std::size_t>(dst - start);
}

// A valid UTF-8 string as nlohmann writes it without ensure_ascii, escaped straight into the
// writer's buffer a piece at a time (each piece's worst case, 6 bytes a byte, fits in it).
inline void write_valid_string(io::Writer& out, std::string_view s) {
  out.put('"');
  if (out.capacity() < 256) {  // a tiny buffer: through a string
    std::string escaped(s.size() * 6 + 16, '\0');
    escaped.resize(escape_into(escaped.data(), s));
    out.write(escaped);
    out.put('"');
    return;
  }
  const std::size_t piece = std::max<std::size_t>((out.capacity() - 16) / 6, 1);
  for (std::size_t at = 0; at < s.size(); at += piece) {
    std::string_view part = s.substr(at, piece);
    out.commit(escape_into(out.reserve(part.size() * 6 + 16), part));
  }
  out.put('"');
}

}  // namespace json_writer_detail

// One string as a JSON string, as nlohmann writes it.
inline void write_json_string(io::Writer& out, std::string_view s) {
  if (util::utf8::first_invalid(s) == s.size())
    json_writer_detail::write_valid_string(out, s);
  else
    out.write(nlohmann::json(std::string(s))
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

template <typename BasicJson>
void write_json(io::Writer& out, const BasicJson& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      out.put('{');
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) out.put(',');
        first = false;
        write_json_string(out, it.key());
        out.put(':');
        write_json(out, it.value());
      }
      out.put('}');
      return;
    }
    case nlohmann::json::value_t::array: {
      out.put('[');
      bool first = true;
      for (const auto& item : j) {
        if (!first) out.put(',');
        first = false;
        write_json(out, item);
      }
      out.put(']');
      return;
    }
    case nlohmann::json::value_t::string:
      write_json_string(out, j.template get_ref<const std::string&>());
      return;
    default:
      break;
  }
  out.write(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// parse::message_to_json(message) written without building it: the JSON value would copy
// every string of a message of many megabytes once more.
inline void write_message(io::Writer& out, const parse::Message& message) {
  out.write("{\"role\":\"assistant\",\"content\":");
  if (message.content.empty())
    out.write("null");
  else
    write_json_string(out, message.content);
  if (!message.reasoning_content.empty()) {
    out.write(",\"reasoning_content\":");
    write_json_string(out, message.reasoning_content);
  }
  if (!message.tool_calls.empty()) {
    out.write(",\"tool_calls\":[");
    for (std::size_t i = 0; i < message.tool_calls.size(); ++i) {
      const auto& call = message.tool_calls[i];
      out.write(i ? ",{\"id\":" : "{\"id\":");
      write_json_string(out, call.id);
      out.write(",\"type\":\"function\",\"function\":{\"name\":");
      write_json_string(out, call.name);
      out.write(",\"arguments\":");
      write_json_string(out, call.arguments);
      out.write("}}");
    }
    out.put(']');
  }
  out.put('}');
}

}  // namespace chatwire::cli
