// Helpers shared by the chat layer's translation units (not a public header).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatwire/error.hpp"
#include "chatwire/value.hpp"

namespace chatwire::chat::detail {

// Where the first invalid UTF-8 byte is (strict: no overlongs, no surrogates, <= U+10FFFF).
struct Utf8Problem {
  std::size_t offset = 0;  // byte offset
  std::size_t line = 1, column = 1;
};
// True when `text` is valid UTF-8; otherwise fills `problem`.
bool valid_utf8(std::string_view text, Utf8Problem& problem) noexcept;

// Reads a whole file as bytes (a pipe or device too, up to max_bytes). Errors: FileNotFoundError
// with Python's message ("[Errno 2] No such file or directory: '<shown>'"), IsADirectoryError,
// PermissionError, LimitError above max_bytes,
// UnicodeDecodeError when `require_utf8` and the bytes are not UTF-8.
Result<std::string> read_file(const std::filesystem::path& path, std::string_view shown,
                              std::size_t max_bytes, bool require_utf8);

// What stat() tells of a file: equal identities mean the same bytes as far as the file system
// tells (a file rewritten changes its modification time in nanoseconds, or its size or inode).
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::int64_t modified_ns = 0;
  bool regular = false;  // a regular file (not a directory, device, ...)
  bool operator==(const FileIdentity&) const = default;
};
// nullopt when the path cannot be stat()ed (absent, no permission).
std::optional<FileIdentity> file_identity(const char* path);

// The identity of every file Model::load reads from a model directory, and of the directory and
// its additional_chat_templates/: equal values mean a load would read the same bytes, so a cached
// Model can be reused. Files that are absent are part of it too (one appearing changes it).
using ModelFilesIdentity = std::vector<std::pair<std::string, std::optional<FileIdentity>>>;
ModelFilesIdentity model_files_identity(const std::filesystem::path& dir);

// Removes trailing Python whitespace (str.rstrip() without arguments) from UTF-8 text.
void rstrip_python(std::string& text);

// An error value with a Python exception name as its type.
inline Error make_error(std::string type, std::string message) {
  Error e;
  e.type = std::move(type);
  e.message = std::move(message);
  return e;
}

// A RequestError naming the field.
Error request_error(std::string path, std::string message);

// "list", "str", ... as JSON users know them: "array", "string", ...
std::string json_kind(const Value& v);

}  // namespace chatwire::chat::detail
