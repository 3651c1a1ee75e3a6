// Python literals and call lists (pythonic tool calls: `[f(a=1), g(b='x')]`) read and
// converted to JSON text, as the pythonic family and the key-value readers need them.
#include <cctype>
#include <string>

#include "parse/internal.hpp"
#include "util/utf8.hpp"

namespace chatwire::parse {

namespace {

// ---- Python literals ----

class PyReader {
 public:
  PyReader(std::string_view text, std::size_t max_depth) : s_(text), max_depth_(max_depth) {}

  std::string_view s_;
  std::size_t i_ = 0;
  std::size_t max_depth_;
  std::string error_;

  bool fail(std::string message) {
    if (error_.empty()) error_ = std::move(message) + " at offset " + std::to_string(i_);
    return false;
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip_ws(bool newlines = true) {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
        ++i_;
      } else {
        break;
      }
    }
  }
  bool identifier(std::string& out) {
    std::size_t start = i_;
    while (i_ < s_.size()) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (std::isalnum(c) || c == '_' || c == '-' || c >= 0x80 || (c == '.' && i_ > start)) {
        ++i_;
      } else {
        break;
      }
    }
    if (i_ == start || std::isdigit(static_cast<unsigned char>(s_[start]))) {
      i_ = start;
      return fail("expected a name");
    }
    out.assign(s_.substr(start, i_ - start));
    return true;
  }

  // A Python (or JSON) literal, appended to `out` as JSON text.
  bool value(std::string& out, std::size_t depth) {
    if (depth > max_depth_) return fail("nesting deeper than max_json_depth");
    skip_ws();
    char c = peek();
    if (c == '\'' || c == '"') {
      std::string decoded;
      if (!string_literal(decoded)) return false;
      append_json_quoted(out, decoded);
      return true;
    }
    if (c == '[' || c == '(') return sequence(out, depth, c == '[' ? ']' : ')');
    if (c == '{') return mapping(out, depth);
    if (c == '-' || c == '+' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t start = i_;
      ++i_;
      while (i_ < s_.size()) {
        char d = s_[i_];
        if (std::isalnum(static_cast<unsigned char>(d)) || d == '.' || d == '_' ||
            ((d == '+' || d == '-') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E'))) {
          ++i_;
        } else {
          break;
        }
      }
      std::string_view text = s_.substr(start, i_ - start);
      std::string digits(text);
      digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
      if (is_integer_text(digits)) {
        out += integer_json(digits);
        return true;
      }
      std::string number;
      if (!number_json(text, number)) {
        i_ = start;
        return fail("not a finite number");
      }
      // Python float literals stay floats ("2.0" -> 2.0).
      if (number.find_first_of(".e") == std::string::npos) number += ".0";
      out += number;
      return true;
    }
    std::string word;
    std::size_t start = i_;
    while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
    word.assign(s_.substr(start, i_ - start));
    if (word == "True" || word == "true") {
      out += "true";
      return true;
    }
    if (word == "False" || word == "false") {
      out += "false";
      return true;
    }
    if (word == "None" || word == "null") {
      out += "null";
      return true;
    }
    i_ = start;
    return fail("expected a literal");
  }

  bool sequence(std::string& out, std::size_t depth, char close) {
    ++i_;
    out += '[';
    return items(out, depth, close, true);
  }

  // The elements of a list, tuple or set up to `close`, as the rest of a JSON array in `out`
  // (`first`: no element read yet).
  bool items(std::string& out, std::size_t depth, char close, bool first) {
    for (;;) {
      skip_ws();
      if (peek() == close) {
        ++i_;
        out += ']';
        return true;
      }
      if (!first) {
        if (peek() != ',') return fail("expected ','");
        ++i_;
        skip_ws();
        if (peek() == close) continue;
        out += ", ";
      }
      first = false;
      if (!value(out, depth + 1)) return false;
    }
  }

  bool mapping(std::string& out, std::size_t depth) {
    ++i_;
    const std::size_t open = out.size();
    out += '{';
    bool first = true;
    for (;;) {
      skip_ws();
      if (peek() == '}') {
        ++i_;
        out += '}';
        return true;
      }
      if (!first) {
        if (peek() != ',') return fail("expected ','");
        ++i_;
        skip_ws();
        if (peek() == '}') continue;
        out += ", ";
      }
      first = false;
      std::string key;
      if (!value(key, depth + 1)) return false;
      skip_ws();
      if (first_element_ends_set(open, out, key)) return items(out, depth, '}', false);
      if (key.empty() || key[0] != '"') key = Json(key).dump();  // JSON keys are strings
      out += key;
      if (peek() != ':') return fail("expected ':'");
      ++i_;
      out += ": ";
      if (!value(out, depth + 1)) return false;
    }
  }

  // `{'a', 'b'}` is a Python set (models write one for a list of tags): its first element is
  // followed by ',' or '}', not ':'. JSON has no set; it becomes the array of its elements.
  bool first_element_ends_set(std::size_t open, std::string& out, const std::string& first) {
    if (out.size() != open + 1 || (peek() != ',' && peek() != '}')) return false;
    out[open] = '[';
    out += first;
    return true;
  }

  // From an opening bracket to just after its match, strings skipped; false if unbalanced.
  bool skip_balanced() {
    int depth = 0;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\'' || c == '"') {
        std::string ignored;
        if (!string_literal(ignored)) return false;
        continue;
      }
      ++i_;
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && --depth == 0) return true;
    }
    return false;
  }

  bool hex(std::size_t digits, std::uint32_t& cp) {
    if (i_ + digits > s_.size()) return fail("short escape");
    cp = 0;
    for (std::size_t k = 0; k < digits; ++k) {
      char c = s_[i_ + k];
      cp <<= 4;
      if (c >= '0' && c <= '9') {
        cp |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        cp |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        cp |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return fail("bad hex escape");
      }
    }
    i_ += digits;
    return true;
  }

  bool string_literal(std::string& out) {
    char quote = s_[i_];
    bool triple = s_.substr(i_, 3) == std::string(3, quote);
    i_ += triple ? 3 : 1;
    for (;;) {
      if (i_ >= s_.size()) return fail("unterminated string");
      char c = s_[i_];
      if (c == quote) {
        if (!triple) {
          ++i_;
          return true;
        }
        if (s_.substr(i_, 3) == std::string(3, quote)) {
          i_ += 3;
          return true;
        }
      }
      // A raw newline in a one-line string is a Python syntax error, but models write one in
      // the code or text they pass (vLLM's LFM2 tests expect the call): it is the newline.
      if (c != '\\') {
        out += c;
        ++i_;
        continue;
      }
      if (++i_ >= s_.size()) return fail("unterminated string");
      char e = s_[i_++];
      std::uint32_t cp = 0;
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case '0':
          out += '\0';
          break;
        case '\n':
          break;
        case 'x':
          if (!hex(2, cp)) return false;
          util::utf8::append(out, cp);
          break;
        case 'u':
          if (!hex(4, cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(i_, 2) == "\\u") {
            std::uint32_t low = 0;
            std::size_t save = i_;
            i_ += 2;
            if (hex(4, low) && low >= 0xDC00 && low < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            } else {
              i_ = save;
            }
          }
          util::utf8::append(out, cp);
          break;
        case 'U':
          if (!hex(8, cp)) return false;
          util::utf8::append(out, cp);
          break;
        case 'a':
          out += '\a';
          break;
        case 'v':
          out += '\v';
          break;
        case '\\':
        case '\'':
        case '"':
          out += e;
          break;
        default:
          // As in Python, an unknown escape keeps its backslash (`"\d+"` is the regex \d+).
          out += '\\';
          out += e;
          break;
      }
    }
  }
};

}  // namespace

bool python_literal_json(std::string_view text, std::size_t max_depth, std::string& json) {
  PyReader reader(text, max_depth);
  if (!reader.value(json, 0)) return false;
  reader.skip_ws();
  return reader.at_end();
}

bool parse_python_calls(std::string_view text, std::vector<PyCall>& calls, std::string& error,
                        std::size_t max_depth) {
  PyReader r(text, max_depth);
  r.skip_ws();
  bool bracketed = r.peek() == '[';
  if (bracketed) ++r.i_;
  for (bool first = true;; first = false) {
    r.skip_ws();
    if (bracketed && r.peek() == ']') {
      ++r.i_;
      break;
    }
    if (!bracketed && r.at_end()) break;
    if (!first && r.peek() == ',') {
      ++r.i_;
      r.skip_ws();
    }
    PyCall call;
    if (!r.identifier(call.name)) {
      error = r.error_;
      return false;
    }
    // Llama 3 builtin tools are written `brave_search.call(query="...")`.
    if (call.name.size() > 5 && call.name.ends_with(".call"))
      call.name.resize(call.name.size() - 5);
    r.skip_ws();
    if (r.peek() != '(') {
      error = "expected '(' after " + call.name;
      return false;
    }
    std::size_t open_paren = r.i_;
    ++r.i_;
    call.arguments = "{";
    bool bad_value = false;
    for (bool first_arg = true;; first_arg = false) {
      r.skip_ws();
      if (r.peek() == ')') {
        ++r.i_;
        break;
      }
      if (!first_arg) {
        if (r.peek() != ',') {
          error = r.error_.empty() ? "expected ',' between arguments" : r.error_;
          return false;
        }
        ++r.i_;
        r.skip_ws();
        if (r.peek() == ')') continue;
        call.arguments += ", ";
      }
      std::string key;
      if (!r.identifier(key)) {
        error = r.error_;
        return false;
      }
      r.skip_ws();
      if (r.peek() != '=') {
        error = "positional argument in call to " + call.name;
        return false;
      }
      ++r.i_;
      append_json_quoted(call.arguments, key);
      call.arguments += ": ";
      if (!r.value(call.arguments, 1)) {
        // One unconvertible argument (bytes, inf) drops that call, not its siblings.
        error = r.error_;
        r.error_.clear();
        r.i_ = open_paren;
        if (!r.skip_balanced()) return false;
        bad_value = true;
        break;
      }
    }
    call.arguments += "}";
    if (!bad_value) calls.push_back(std::move(call));
    if (!bracketed) {
      r.skip_ws();
      if (r.at_end()) break;
    }
  }
  r.skip_ws();
  if (!r.at_end()) {
    error = "text after the call list";
    return false;
  }
  return !calls.empty();
}

}  // namespace chatwire::parse
