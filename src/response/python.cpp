// Python's rules for the values a response template produces: str.strip, int(), float(),
// json.loads (the C scanner) and json.dumps of a str, truthiness and type names. Where Python
// would hold a value JSON cannot (an int beyond 64 bits, a lone surrogate), the result is a
// refusal rather than a different value.
#include <utf8proc.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "response/internal.hpp"
#include "util/utf8.hpp"

namespace chatwire::response {

namespace {

namespace utf8 = util::utf8;

// str.isspace(): the code points Python strips (Unicode White_Space plus the ASCII separators
// U+001C..U+001F, which Python counts as whitespace).
bool py_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// Start of the code point that ends at s[end) (end > 0).
std::size_t previous_start(std::string_view s, std::size_t end) {
  std::size_t i = end - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

// Whether s holds a non-ASCII decimal digit, which int()/float() would read as its value and
// which this implementation refuses rather than misread.
bool has_unicode_digit(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    char32_t c = utf8::decode(s, i);
    if (c >= 0x80 && utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_ND)
      return true;
  }
  return false;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// digit (["_"] digit)* from s[i]; returns false when none; underscores dropped into `out`.
bool digit_part(std::string_view s, std::size_t& i, std::string& out) {
  if (i >= s.size() || !is_digit(s[i])) return false;
  out.push_back(s[i++]);
  while (i < s.size()) {
    if (is_digit(s[i])) {
      out.push_back(s[i++]);
    } else if (s[i] == '_' && i + 1 < s.size() && is_digit(s[i + 1])) {
      out.push_back(s[i + 1]);
      i += 2;
    } else {
      break;
    }
  }
  return true;
}

// An integer from its ASCII digits: int64 when it fits, uint64 above, refused beyond.
PyResult integer_value(bool negative, std::string_view digits) {
  unsigned __int128 v = 0;
  for (char c : digits) {
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > (static_cast<unsigned __int128>(1) << 64))
      return PyResult::refused("LimitError", "an integer beyond 64 bits (Python would keep it)");
  }
  PyResult r;
  if (negative) {
    if (v > static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max()) + 1)
      return PyResult::refused("LimitError", "an integer beyond 64 bits (Python would keep it)");
    r.value = v == 0 ? std::int64_t{0} : static_cast<std::int64_t>(-static_cast<__int128>(v));
  } else if (v <= static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max())) {
    r.value = static_cast<std::int64_t>(v);
  } else if (v <= std::numeric_limits<std::uint64_t>::max()) {
    r.value = static_cast<std::uint64_t>(v);
  } else {
    return PyResult::refused("LimitError", "an integer beyond 64 bits (Python would keep it)");
  }
  return r;
}

std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// ---- json.loads ------------------------------------------------------------------------------

class JsonScanner {
 public:
  JsonScanner(std::string_view s, std::size_t max_depth) : s_(s), max_depth_(max_depth) {}

  PyResult run() {
    PyResult r;
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") return fail("Unexpected UTF-8 BOM", 0);
    skip_ws();
    if (!value(r.value, 0)) return std::move(result_);
    skip_ws();
    if (i_ != s_.size()) return fail("Extra data", i_);
    return r;
  }

 private:
  PyResult fail(const char* what, std::size_t at) {
    return PyResult::value_error("JSONDecodeError",
                                 std::string(what) + " (char " + std::to_string(at) + ")");
  }
  bool set_fail(const char* what, std::size_t at) {
    result_ = fail(what, at);
    return false;
  }
  bool refuse(std::string message) {
    result_ = PyResult::refused("LimitError", std::move(message));
    return false;
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool starts(std::string_view word) const { return s_.substr(i_, word.size()) == word; }

  bool value(Json& out, std::size_t depth) {
    if (i_ >= s_.size()) return set_fail("Expecting value", i_);
    char c = s_[i_];
    if (c == '"') {
      std::string str;
      if (!string(str)) return false;
      out = std::move(str);
      return true;
    }
    if (c == '{' || c == '[') {
      if (depth + 1 > max_depth_)
        return refuse("JSON nested deeper than max_json_depth=" + std::to_string(max_depth_));
      return c == '{' ? object(out, depth + 1) : array(out, depth + 1);
    }
    if (starts("null")) return i_ += 4, out = nullptr, true;
    if (starts("true")) return i_ += 4, out = true, true;
    if (starts("false")) return i_ += 5, out = false, true;
    if (starts("NaN")) return i_ += 3, out = std::numeric_limits<double>::quiet_NaN(), true;
    if (starts("Infinity")) return i_ += 8, out = std::numeric_limits<double>::infinity(), true;
    if (starts("-Infinity")) return i_ += 9, out = -std::numeric_limits<double>::infinity(), true;
    return number(out);
  }

  // (-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)? with ASCII digits, as the C scanner reads it.
  bool number(Json& out) {
    const std::size_t start = i_;
    std::size_t j = i_;
    bool negative = false;
    if (j < s_.size() && s_[j] == '-') negative = true, ++j;
    if (j >= s_.size() || !is_digit(s_[j])) return set_fail("Expecting value", start);
    const std::size_t int_start = j;
    if (s_[j] == '0') {
      ++j;
    } else {
      while (j < s_.size() && is_digit(s_[j])) ++j;
    }
    const std::size_t int_end = j;
    bool is_float = false;
    if (j + 1 < s_.size() && s_[j] == '.' && is_digit(s_[j + 1])) {
      j += 2;
      while (j < s_.size() && is_digit(s_[j])) ++j;
      is_float = true;
    }
    if (j < s_.size() && (s_[j] == 'e' || s_[j] == 'E')) {
      std::size_t k = j + 1;
      if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
      if (k < s_.size() && is_digit(s_[k])) {
        while (k < s_.size() && is_digit(s_[k])) ++k;
        j = k;
        is_float = true;
      }
    }
    i_ = j;
    if (!is_float) {
      PyResult r = integer_value(negative, s_.substr(int_start, int_end - int_start));
      if (r.kind != PyResult::Kind::kValue) {
        result_ = std::move(r);
        return false;
      }
      out = std::move(r.value);
      return true;
    }
    double d = 0;
    const char* first = s_.data() + start + (negative ? 1 : 0);
    auto [ptr, ec] = std::from_chars(first, s_.data() + j, d);
    if (ec == std::errc::result_out_of_range) {
      // from_chars leaves d unset on overflow/underflow; Python gives inf or 0.0.
      std::string text(s_.substr(start, j - start));
      d = std::strtod(text.c_str(), nullptr);
      out = d;
      return true;
    }
    if (ptr != s_.data() + j) return set_fail("Expecting value", start);
    out = negative ? -d : d;
    return true;
  }

  bool hex4(std::size_t at, char32_t& v) const {
    if (at + 4 > s_.size()) return false;
    v = 0;
    for (std::size_t k = at; k < at + 4; ++k) {
      char c = s_[k];
      v <<= 4;
      if (is_digit(c)) {
        v |= static_cast<char32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<char32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<char32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    return true;
  }

  bool string(std::string& out) {
    const std::size_t begin = i_;
    ++i_;  // the opening quote
    while (true) {
      if (i_ >= s_.size()) return set_fail("Unterminated string starting at", begin);
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return set_fail("Invalid control character at", i_);
      if (c != '\\') {
        out.push_back(static_cast<char>(c));
        ++i_;
        continue;
      }
      if (i_ + 1 >= s_.size()) return set_fail("Unterminated string starting at", begin);
      const char e = s_[i_ + 1];
      const char* simple = nullptr;
      switch (e) {
        case '"':
          simple = "\"";
          break;
        case '\\':
          simple = "\\";
          break;
        case '/':
          simple = "/";
          break;
        case 'b':
          simple = "\b";
          break;
        case 'f':
          simple = "\f";
          break;
        case 'n':
          simple = "\n";
          break;
        case 'r':
          simple = "\r";
          break;
        case 't':
          simple = "\t";
          break;
        default:
          break;
      }
      if (simple != nullptr) {
        out += simple;
        i_ += 2;
        continue;
      }
      if (e != 'u') return set_fail("Invalid \\escape", i_);
      char32_t cp = 0;
      if (!hex4(i_ + 2, cp)) return set_fail("Invalid \\uXXXX escape", i_);
      i_ += 6;
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        char32_t low = 0;
        if (i_ + 1 < s_.size() && s_[i_] == '\\' && s_[i_ + 1] == 'u' && hex4(i_ + 2, low) &&
            low >= 0xDC00 && low <= 0xDFFF) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i_ += 6;
        }
      }
      if (cp >= 0xD800 && cp <= 0xDFFF)
        return refuse("a lone surrogate \\u escape (Python keeps it in a str; UTF-8 cannot)");
      utf8::append(out, cp);
    }
  }

  bool object(Json& out, std::size_t depth) {
    out = Json::object();
    ++i_;
    skip_ws();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    while (true) {
      if (i_ >= s_.size() || s_[i_] != '"')
        return set_fail("Expecting property name enclosed in double quotes", i_);
      std::string key;
      if (!string(key)) return false;
      skip_ws();
      if (i_ >= s_.size() || s_[i_] != ':') return set_fail("Expecting ':' delimiter", i_);
      ++i_;
      skip_ws();
      Json v;
      if (!value(v, depth)) return false;
      out[key] = std::move(v);  // a repeated key keeps its first place, takes the last value
      skip_ws();
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      if (i_ >= s_.size() || s_[i_] != ',') return set_fail("Expecting ',' delimiter", i_);
      ++i_;
      skip_ws();
    }
  }

  bool array(Json& out, std::size_t depth) {
    out = Json::array();
    ++i_;
    skip_ws();
    if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
    while (true) {
      Json v;
      if (!value(v, depth)) return false;
      out.push_back(std::move(v));
      skip_ws();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      if (i_ >= s_.size() || s_[i_] != ',') return set_fail("Expecting ',' delimiter", i_);
      ++i_;
      skip_ws();
    }
  }

  std::string_view s_;
  std::size_t max_depth_;
  std::size_t i_ = 0;
  PyResult result_;
};

}  // namespace

std::string_view py_strip(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e) {
    std::size_t next = b;
    if (!py_space(utf8::decode(s, next))) break;
    b = next;
  }
  while (e > b) {
    std::size_t start = previous_start(s, e);
    std::size_t probe = start;
    if (!py_space(utf8::decode(s, probe))) break;
    e = start;
  }
  return s.substr(b, e - b);
}

bool py_truthy(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return false;
    case Json::value_t::boolean:
      return v.get<bool>();
    case Json::value_t::number_integer:
      return v.get<std::int64_t>() != 0;
    case Json::value_t::number_unsigned:
      return v.get<std::uint64_t>() != 0;
    case Json::value_t::number_float:
      return v.get<double>() != 0.0;
    case Json::value_t::string:
      return !v.get_ref<const std::string&>().empty();
    case Json::value_t::array:
    case Json::value_t::object:
      return !v.empty();
    default:
      return true;
  }
}

std::string py_type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "NoneType";
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "int";
    case Json::value_t::number_float:
      return "float";
    case Json::value_t::string:
      return "str";
    case Json::value_t::array:
      return "list";
    case Json::value_t::object:
      return "dict";
    default:
      return "object";
  }
}

bool py_is_empty(const Json& v) {
  if (v.is_string()) return v.get_ref<const std::string&>().empty();  // json::empty() is false
  return v.is_null() || ((v.is_array() || v.is_object()) && v.empty());
}

std::string py_repr(std::string_view s) {
  const bool dq = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos;
  const char q = dq ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\' || c == static_cast<unsigned char>(q)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += q;
  return out;
}

PyResult py_int(std::string_view text) {
  const std::string_view s = py_strip(text);
  if (has_unicode_digit(s))
    return PyResult::refused("LimitError", "int() of non-ASCII digits is not supported");
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  std::string digits;
  if (!digit_part(s, i, digits) || i != s.size())
    return PyResult::value_error("ValueError",
                                 "invalid literal for int() with base 10: " + py_repr(text));
  return integer_value(negative, digits);
}

PyResult py_float(std::string_view text) {
  const std::string_view s = py_strip(text);
  if (has_unicode_digit(s))
    return PyResult::refused("LimitError", "float() of non-ASCII digits is not supported");
  const auto bad = [&] {
    return PyResult::value_error("ValueError",
                                 "could not convert string to float: " + py_repr(text));
  };
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const std::string word = lower_ascii(s.substr(i));
  PyResult r;
  if (word == "inf" || word == "infinity") {
    r.value = negative ? -std::numeric_limits<double>::infinity()
                       : std::numeric_limits<double>::infinity();
    return r;
  }
  if (word == "nan") {
    r.value = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  std::string number;
  const bool int_part = digit_part(s, i, number);
  bool frac_part = false;
  if (i < s.size() && s[i] == '.') {
    number.push_back('.');
    ++i;
    frac_part = digit_part(s, i, number);
  }
  if (!int_part && !frac_part) return bad();
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    number.push_back('e');
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) number.push_back(s[i++]);
    if (!digit_part(s, i, number)) return bad();
  }
  if (i != s.size()) return bad();
  double d = std::strtod(number.c_str(), nullptr);  // correctly rounded, inf on overflow
  r.value = negative ? -d : d;
  return r;
}

PyResult py_json_loads(std::string_view text, std::size_t max_depth) {
  return JsonScanner(text, max_depth).run();
}

std::string py_json_dumps_str(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  const auto u = [&](char32_t v) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += hex[(v >> shift) & 15];
  };
  for (std::size_t i = 0; i < s.size();) {
    char32_t c = utf8::decode(s, i);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20 || (c >= 0x7F && c < 0x10000 && c != 0x7F)) {
          u(c);
        } else if (c >= 0x10000) {
          u(0xD800 + ((c - 0x10000) >> 10));
          u(0xDC00 + ((c - 0x10000) & 0x3FF));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace chatwire::response
