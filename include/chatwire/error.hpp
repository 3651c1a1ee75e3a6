// Errors are values: a type name (the oracle's Python exception names, e.g.
// TemplateSyntaxError, UndefinedError, SecurityError, TypeError, ValueError,
// OverflowError, TemplateError, LimitError, RequestError), a message and a location.
// Library calls return them in a Result; nothing aborts the process.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <variant>

namespace chatwire {

struct Error {
  std::string type;     // Python-style exception name, e.g. "UndefinedError"
  std::string message;  // verbatim for raise_exception
  // Where: template position (1-based; 0 = unknown) and/or a request field path
  // such as "messages[3].tool_calls[0].function.arguments".
  std::size_t line = 0;
  std::size_t column = 0;
  std::string path;

  // "TypeError: message (line 3, column 7)" / "RequestError: messages[2].role: ..."
  std::string to_string() const {
    std::string s = type;
    s += ": ";
    if (!path.empty()) {
      s += path;
      s += ": ";
    }
    s += message;
    if (line != 0) {
      s += " (line " + std::to_string(line);
      if (column != 0) s += ", column " + std::to_string(column);
      s += ")";
    }
    return s;
  }
};

// Result<T>: a T or an Error. Minimal on purpose (std::expected is C++23).
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }
  Error& error() { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace chatwire
