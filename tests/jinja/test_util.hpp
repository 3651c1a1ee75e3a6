// Helpers shared by the data-driven tests of tests/jinja (conformance, hostile, suites):
// reading data files, describing the first difference between two outputs, and the
// small encodings the golden files use.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace chatwire::test {

// The repository's data/ directory (compiled in by tests/CMakeLists.txt).
inline std::string data_path(std::string_view relative) {
  std::string path = CHATWIRE_DATA_DIR;
  path += '/';
  path += relative;
  return path;
}

// Whole file as bytes; nullopt when it cannot be opened.
inline std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::move(buffer).str();
}

// Non-empty lines of a text file.
inline std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
  }
  return lines;
}

// A byte string made printable for a failure message: control bytes and non-ASCII as
// escapes, so invisible whitespace differences show.
inline std::string escape_bytes(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);  // UTF-8 passes through: readable in a terminal
    }
  }
  return out;
}

// "first difference at byte N (line L): expected «...» got «...»" with some context, or ""
// when equal. Keeps failure messages short even for 100 KB outputs.
inline std::string describe_difference(std::string_view expected, std::string_view actual,
                                       std::size_t context_bytes = 60) {
  if (expected == actual) return {};
  std::size_t at = 0;
  const std::size_t common = std::min(expected.size(), actual.size());
  while (at < common && expected[at] == actual[at]) ++at;
  const std::size_t line =
      1 + static_cast<std::size_t>(
              std::count(expected.begin(), expected.begin() + static_cast<long>(at), '\n'));
  const std::size_t from = at > context_bytes ? at - context_bytes : 0;
  auto window = [&](std::string_view s) {
    std::string_view before = s.substr(from, at - from);
    std::string_view after = at < s.size() ? s.substr(at, context_bytes) : std::string_view{};
    return escape_bytes(before) + "\u2038" + escape_bytes(after);  // ‸ marks the spot
  };
  std::ostringstream msg;
  msg << "first difference at byte " << at << " (line " << line << "); expected " << expected.size()
      << " bytes, got " << actual.size() << "\n  expected: " << window(expected)
      << "\n  actual:   " << window(actual);
  return msg.str();
}

// 64-bit FNV-1a, the hash the hostile goldens use for outputs too long to inline
// (scripts/regen-hostile-goldens computes the same).
inline std::string fnv1a64_hex(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = kHex[hash & 15];
    hash >>= 4;
  }
  return out;
}

// Lower- or upper-case hex → bytes; nullopt on odd length or a non-hex digit.
inline std::optional<std::string> hex_decode(std::string_view hex) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]), low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

// Replaces every surrogate encoded in WTF-8 (ED A0..BF xx) by U+FFFD (EF BF BD): what
// an engine that refuses to keep lone surrogates would produce instead.
inline std::string replace_wtf8_surrogates(std::string_view bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == 0xED && i + 2 < bytes.size() &&
        (static_cast<unsigned char>(bytes[i + 1]) & 0xE0) == 0xA0) {
      out += "\xEF\xBF\xBD";
      i += 2;
    } else {
      out += bytes[i];
    }
  }
  return out;
}

// Code-point offset → byte offset in UTF-8 text (for reporting spans).
inline std::size_t code_points_to_bytes(std::string_view utf8, std::size_t code_points) {
  std::size_t byte = 0;
  while (byte < utf8.size() && code_points > 0) {
    ++byte;
    while (byte < utf8.size() && (static_cast<unsigned char>(utf8[byte]) & 0xC0) == 0x80) ++byte;
    --code_points;
  }
  return byte;
}

// A name usable as a GoogleTest parameter name: [A-Za-z0-9_] only.
inline std::string test_name(std::string_view raw) {
  std::string out;
  for (char c : raw) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += keep ? c : '_';
  }
  return out.empty() ? std::string("_") : out;
}

}  // namespace chatwire::test
