// Private to the value component: heap payload layouts and UTF-8 helpers.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatwire/value.hpp"
#include "util/utf8.hpp"

namespace chatwire::detail {

// The rarely given details of an Undefined, apart so that the common one (a missing
// attribute, item or variable) neither builds nor frees any string.
struct UndefinedExtra {
  std::string object_type;  // object_type_repr given by the caller ("" = by kind / none)
  std::string hint;         // replaces the generated message when set
  std::string error_type;   // raised on use; "" = UndefinedError
};

// Jinja2's Undefined details, kept in the form they arrive in. Most Undefineds are only
// tested (`is defined`, truthiness, `default`) and dropped, so the message ("'dict
// object' has no attribute 'x'") is built by undefined_message() when asked for, from
// the object's kind and the name; a short name is copied into the payload itself rather
// than into a string Value of its own.
struct UndefinedData final : RefCounted {
  static constexpr std::size_t kInlineName = 24;

  UndefinedData() = default;
  ~UndefinedData() override { delete extra; }

  // Lives in RefCounted's tail padding.
  bool name_inline = false;  // the name is name_bytes[0, name_size)
  bool on_known = false;     // looked up on a non-Object of kind on_kind
  Kind on_kind = Kind::Undefined;
  std::uint8_t name_size = 0;
  Value name;  // missing name / key when not inline (Undefined = unknown)
  UndefinedExtra* extra = nullptr;
  char name_bytes[kInlineName];

  Value name_value() const {
    return name_inline ? Value(std::string_view(name_bytes, name_size)) : name;
  }
};
static_assert(sizeof(UndefinedData) <= 64, "one 64-byte block of the payload cache");

}  // namespace chatwire::detail

namespace chatwire {

// The operators on the values as Python's builtin types do them (a Markup operand read as
// a plain str); binary_op, get_item and slice add Markup's own rules (markup.cpp) on top.
Result<Value> str_binary_op(BinaryOp op, const Value& a, const Value& b, const ValueLimits& limits);
Result<Value> str_get_item(const Value& container, const Value& key);
Result<Value> str_slice(const Value& v, std::optional<std::int64_t> start,
                        std::optional<std::int64_t> stop, std::optional<std::int64_t> step,
                        const ValueLimits& limits);
// binary_op when an operand is a Markup (markupsafe's __add__/__radd__/__mul__/__mod__).
Result<Value> markup_binary_op(BinaryOp op, const Value& a, const Value& b,
                               const ValueLimits& limits);

struct ValueAccess {
  static detail::StringData* str(const Value& v) noexcept {
    return static_cast<detail::StringData*>(v.u_.ptr);
  }
  static detail::ListData* list(const Value& v) noexcept {
    return static_cast<detail::ListData*>(v.u_.ptr);
  }
  static detail::DictData* dict(const Value& v) noexcept {
    return static_cast<detail::DictData*>(v.u_.ptr);
  }
  static detail::UndefinedData* undef(const Value& v) noexcept {
    return static_cast<detail::UndefinedData*>(v.u_.ptr);
  }
  // Turns `v` into a plain Undefined without releasing its payload (an uncounted alias).
  static void forget(Value& v) noexcept {
    v.kind_ = Kind::Undefined;
    v.u_.ptr = nullptr;
  }
  // Counts one more reference to v's payload (turns an uncounted alias into a reference).
  static void add_ref(const Value& v) noexcept { v.retain(); }
  static Value from_payload(Kind kind, detail::RefCounted* ptr) noexcept {
    Value v;
    v.kind_ = kind;
    v.u_.ptr = ptr;
    return v;
  }
};

namespace utf8 {

inline bool is_continuation(unsigned char c) noexcept {
  return (c & 0xC0) == 0x80;
}

// The decoder shared with the jinja component (WTF-8: surrogates decode as written;
// a malformed byte decodes as itself, one byte each, so iteration always terminates).
using util::utf8::decode;

// Decodes the code point that ends just before s[i]; moves i back to its start.
inline char32_t decode_back(std::string_view s, std::size_t& i) noexcept {
  std::size_t start = i - 1;
  while (start > 0 && i - start < 4 && is_continuation(static_cast<unsigned char>(s[start])))
    --start;
  std::size_t j = start;
  char32_t cp = decode(s, j);
  if (j != i) {  // malformed: step one byte
    start = i - 1;
    cp = static_cast<unsigned char>(s[start]);
  }
  i = start;
  return cp;
}

// The shared encoder under the name this component's callers use.
inline void encode(std::string& out, char32_t cp) {
  util::utf8::append(out, cp);
}

// Number of code points (= lead bytes) in s: the shared vectorised counter.
using util::utf8::code_points;

inline bool all_ascii(std::string_view s) noexcept {
  // Eight bytes at a time: any high bit set means a non-ASCII byte.
  std::size_t i = 0;
  std::uint64_t high = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    high |= word;
  }
  if (high & 0x8080808080808080ull) return false;
  for (; i < s.size(); ++i)
    if (static_cast<unsigned char>(s[i]) >= 0x80) return false;
  return true;
}

// Byte offset of code point `index` (0 <= index <= count) in s.
inline std::size_t byte_offset(std::string_view s, std::size_t index) noexcept {
  std::size_t i = 0;
  while (index > 0 && i < s.size()) {
    ++i;
    while (i < s.size() && is_continuation(static_cast<unsigned char>(s[i]))) ++i;
    --index;
  }
  return i;
}

}  // namespace utf8

namespace detail {
// A dict of entries whose keys are uncounted aliases of strings `owner` keeps alive (see
// DictData::key_owner), all distinct, at most DictData::kLinearMax of them; the dict takes
// over one count of `owner` from the caller.
Value dict_borrowing_keys(std::vector<std::pair<Value, Value>> entries, RefCounted* owner);

// A String value of a copy of bytes known to be WTF-8 with the given flags, the bytes in the
// payload's own block (one allocation; Value::string_known keeps a std::string's buffer,
// which is a second one when the string is longer than its inline capacity).
Value string_copy_known(std::string_view s, bool ascii, std::size_t code_points);
}  // namespace detail

// Builds a String value from bytes known to be WTF-8, computing the flags.
inline Value make_string(std::string&& s) {
  bool ascii = utf8::all_ascii(s);
  std::size_t n = ascii ? s.size() : utf8::code_points(s);
  return Value::string_known(std::move(s), ascii, n);
}

// Error helpers ("TypeError", message).
inline Error make_error(std::string type, std::string message) {
  Error e;
  e.type = std::move(type);
  e.message = std::move(message);
  return e;
}
inline Error type_error(std::string message) {
  return make_error("TypeError", std::move(message));
}
inline Error value_error(std::string message) {
  return make_error("ValueError", std::move(message));
}

// Python's checks for a limit on a result about to be built.
inline bool exceeds(std::size_t size, std::size_t limit) noexcept {
  return size > limit;
}

}  // namespace chatwire

namespace chatwire::unicode {
// Python's str predicates and case mappings for one code point (unicode.cpp).
bool is_space(char32_t c) noexcept;      // str.isspace
bool is_printable(char32_t c) noexcept;  // str.isprintable (repr escapes the others)
bool is_linebreak(char32_t c) noexcept;  // str.splitlines boundaries
bool is_alpha(char32_t c) noexcept;
bool is_decimal(char32_t c) noexcept;
bool is_digit(char32_t c) noexcept;
bool is_numeric(char32_t c) noexcept;
bool is_lower(char32_t c) noexcept;  // Lowercase property
bool is_upper(char32_t c) noexcept;  // Uppercase property
bool is_title(char32_t c) noexcept;  // category Lt
bool is_cased(char32_t c) noexcept;
bool is_case_ignorable(char32_t c) noexcept;
bool is_xid_start(char32_t c) noexcept;
bool is_xid_continue(char32_t c) noexcept;
// Full case mappings (SpecialCasing included) appended as UTF-8.
void append_upper(std::string& out, char32_t c);
void append_lower(std::string& out, char32_t c);
void append_title(std::string& out, char32_t c);
void append_casefold(std::string& out, char32_t c);
}  // namespace chatwire::unicode
