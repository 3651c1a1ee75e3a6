// Python str() and repr() of values, written straight into the caller's buffer.
#include <charconv>
#include <cmath>
#include <cstdio>

#include "value/internal.hpp"

namespace chatwire {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, char32_t c, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(c >> shift) & 0xF];
}

// Python's unicode_repr: choose the quote, escape what is not printable.
void append_string_repr(std::string& out, const Value& v) {
  std::string_view s = v.as_string();
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  out += quote;
  bool ascii = v.string_is_ascii();
  std::size_t i = 0;
  while (i < s.size()) {
    // Copy the longest run of printable ASCII other than the quote and backslash.
    std::size_t run = i;
    while (run < s.size()) {
      auto b = static_cast<unsigned char>(s[run]);
      if (b < 0x20 || b >= 0x7F || b == '\\' || b == static_cast<unsigned char>(quote)) break;
      ++run;
    }
    out.append(s.data() + i, run - i);
    i = run;
    if (i >= s.size()) break;
    char32_t c = ascii ? static_cast<unsigned char>(s[i++]) : utf8::decode(s, i);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      out += "\\x";
      append_hex(out, c, 2);
    } else if (c < 0x7F) {
      out += static_cast<char>(c);
    } else if (!unicode::is_printable(c)) {
      if (c <= 0xFF) {
        out += "\\x";
        append_hex(out, c, 2);
      } else if (c <= 0xFFFF) {
        out += "\\u";
        append_hex(out, c, 4);
      } else {
        out += "\\U";
        append_hex(out, c, 8);
      }
    } else {
      utf8::encode(out, c);
    }
  }
  out += quote;
}

}  // namespace

void append_float_repr(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  if (d == 0.0) {
    out += std::signbit(d) ? "-0.0" : "0.0";
    return;
  }
  // Shortest round-trip digits, then Python's layout rule (float_repr_style 'short'):
  // fixed notation when -4 < decimal exponent <= 16, else scientific.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, res.ptr - buf);
  bool negative = sci[0] == '-';
  if (negative) sci.remove_prefix(1);
  std::size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos))
    if (c != '.') digits += c;
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + 1 + (sci[e_pos + 1] == '+'), sci.data() + sci.size(),
                  exponent);
  int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
  if (negative) out += '-';
  int ndigits = static_cast<int>(digits.size());
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-decpt), '0');
      out += digits;
    } else if (decpt >= ndigits) {
      out += digits;
      out.append(static_cast<std::size_t>(decpt - ndigits), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(decpt));
      out += '.';
      out.append(digits, static_cast<std::size_t>(decpt), std::string::npos);
    }
  } else {
    out += digits[0];
    if (ndigits > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    int e = decpt - 1;
    out += 'e';
    out += e < 0 ? '-' : '+';
    if (e < 0) e = -e;
    if (e < 10) out += '0';
    out += std::to_string(e);
  }
}

void append_repr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      out += "Undefined";
      return;
    case Kind::None:
      out += "None";
      return;
    case Kind::Bool:
      out += v.as_bool() ? "True" : "False";
      return;
    case Kind::Int: {
      char buf[24];
      auto res = std::to_chars(buf, buf + sizeof buf, v.as_int());
      out.append(buf, res.ptr);
      return;
    }
    case Kind::Float:
      append_float_repr(out, v.as_float());
      return;
    case Kind::String:
      append_string_repr(out, v);
      return;
    case Kind::List:
    case Kind::Tuple: {
      bool is_list = v.is_list();
      out += is_list ? '[' : '(';
      auto items = v.as_list();
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        append_repr(out, items[i]);
      }
      if (!is_list && items.size() == 1) out += ',';
      out += is_list ? ']' : ')';
      return;
    }
    case Kind::Dict: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.dict_entries()) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, key);
        out += ": ";
        append_repr(out, value);
      }
      out += '}';
      return;
    }
    case Kind::Object:
      v.as_object()->repr(out);
      return;
  }
}

void append_str(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      return;
    case Kind::String:
      out += v.as_string();
      return;
    case Kind::Object:
      v.as_object()->str(out);
      return;
    default:
      append_repr(out, v);
  }
}

std::string to_str(const Value& v) {
  std::string s;
  append_str(s, v);
  return s;
}

std::string to_repr(const Value& v) {
  std::string s;
  append_repr(s, v);
  return s;
}

}  // namespace chatwire
