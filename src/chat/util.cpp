// UTF-8 checks, file reading and small string helpers for the chat layer.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include "chat/internal.hpp"
#include "chatwire/chat.hpp"
#include "util/utf8.hpp"

namespace chatwire::chat::detail {

bool valid_utf8(std::string_view text, Utf8Problem& problem) noexcept {
  const std::size_t bad = util::utf8::first_invalid(text);
  if (bad == text.size()) return true;
  // Where it is, for the message: only computed for input that fails.
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t line = 1, line_start = 0;
  for (std::size_t k = 0; k < bad; ++k) {
    if (s[k] == '\n') {
      ++line;
      line_start = k + 1;
    }
  }
  problem.offset = bad;
  problem.line = line;
  // Column in characters (code points) from the start of the line, 1-based.
  std::size_t column = 1;
  for (std::size_t k = line_start; k < bad; ++k)
    if ((s[k] & 0xC0) != 0x80) ++column;
  problem.column = column;
  return false;
}

std::optional<FileIdentity> file_identity(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0) return std::nullopt;
  return FileIdentity{
      st.st_dev, st.st_ino, st.st_size,
      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
      S_ISREG(st.st_mode)};
}

Result<std::string> read_file(const std::filesystem::path& path, std::string_view shown,
                              std::size_t max_bytes, bool require_utf8) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return make_error("FileNotFoundError",
                      "[Errno 2] No such file or directory: '" + std::string(shown) + "'");
  }
  if (std::filesystem::is_directory(status)) {
    return make_error("IsADirectoryError",
                      "[Errno 21] Is a directory: '" + std::string(shown) + "'");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error("PermissionError",
                      "[Errno 13] Permission denied: '" + std::string(shown) + "'");
  }
  // Read in blocks up to the limit rather than by the size stat() gives: a pipe or a device
  // (`--template <(..)`, /dev/zero) has none, and a file may grow while it is read.
  std::string bytes;
  const auto regular_size = std::filesystem::is_regular_file(status)
                                ? std::filesystem::file_size(path, ec)
                                : std::uintmax_t{0};
  auto too_large = [&] {
    Error e = limit_error("max_file_bytes", max_bytes);
    e.message = std::string(shown) + ": " + e.message;
    return e;
  };
  if (!ec && regular_size > max_bytes) return too_large();
  if (!ec) bytes.reserve(static_cast<std::size_t>(regular_size));
  char block[1 << 16];
  while (in) {
    in.read(block, sizeof block);
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got > max_bytes - bytes.size()) return too_large();
    bytes.append(block, got);
  }
  if (in.bad()) {
    return make_error("OSError", "[Errno 5] Input/output error: '" + std::string(shown) + "'");
  }
  if (require_utf8) {
    Utf8Problem problem;
    if (!valid_utf8(bytes, problem)) {
      Error e = make_error("UnicodeDecodeError", std::string(shown) + ": not valid UTF-8 at byte " +
                                                     std::to_string(problem.offset) + " (line " +
                                                     std::to_string(problem.line) + ", column " +
                                                     std::to_string(problem.column) + ")");
      return e;
    }
  }
  return bytes;
}

namespace {

// Decodes the code point that ends at `end` (exclusive); returns its start.
std::size_t previous_code_point(std::string_view s, std::size_t end, char32_t& cp) {
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 && end - start < 4)
    --start;
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char lead = b(start);
  std::size_t len = end - start;
  if (lead < 0x80 || len == 1) {
    cp = lead;
  } else if (len == 2) {
    cp = static_cast<char32_t>(((lead & 0x1F) << 6) | (b(start + 1) & 0x3F));
  } else if (len == 3) {
    cp = static_cast<char32_t>(((lead & 0x0F) << 12) | ((b(start + 1) & 0x3F) << 6) |
                               (b(start + 2) & 0x3F));
  } else {
    cp = static_cast<char32_t>(((lead & 0x07) << 18) | ((b(start + 1) & 0x3F) << 12) |
                               ((b(start + 2) & 0x3F) << 6) | (b(start + 3) & 0x3F));
  }
  return start;
}

}  // namespace

void rstrip_python(std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    char32_t cp = 0;
    std::size_t start = previous_code_point(text, end, cp);
    if (!is_python_whitespace(cp)) break;
    end = start;
  }
  text.resize(end);
}

Error request_error(std::string path, std::string message) {
  Error e = make_error("RequestError", std::move(message));
  e.path = std::move(path);
  return e;
}

std::string json_kind(const Value& v) {
  switch (v.kind()) {
    case Kind::None:
      return "null";
    case Kind::Bool:
      return "a boolean";
    case Kind::Int:
    case Kind::Float:
      return "a number";
    case Kind::String:
      return "a string";
    case Kind::List:
    case Kind::Tuple:
      return "an array";
    case Kind::Dict:
      return "an object";
    default:
      return std::string(type_name(v));
  }
}

}  // namespace chatwire::chat::detail

namespace chatwire::chat {

Result<std::string> read_text_file(const std::filesystem::path& file, const InputLimits& limits) {
  return detail::read_file(file, file.string(), limits.max_file_bytes, /*require_utf8=*/true);
}

}  // namespace chatwire::chat
