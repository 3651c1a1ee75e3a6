// Python string formatting: `fmt % args`, str.format (as Jinja2's SandboxedFormatter
// resolves fields) and the format-spec mini-language.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "value/internal.hpp"

namespace chatwire {

namespace {

// ---------------------------------------------------------------------------------
// Shared number helpers
// ---------------------------------------------------------------------------------

std::string unsigned_digits(std::uint64_t magnitude, int base, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  if (magnitude == 0) return "0";
  std::string s;
  while (magnitude) {
    s += digits[magnitude % static_cast<unsigned>(base)];
    magnitude /= static_cast<unsigned>(base);
  }
  return std::string(s.rbegin(), s.rend());
}

std::uint64_t magnitude_of(std::int64_t i) {
  return i < 0 ? static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(i)
               : static_cast<std::uint64_t>(i);
}

// C printf of a finite double with a conversion in "eEfFgG".
std::string c_format_double(double d, char conversion, int precision, bool alternate) {
  char fmt[16];
  std::snprintf(fmt, sizeof fmt, "%%%s.*%c", alternate ? "#" : "", conversion);
  int n = std::snprintf(nullptr, 0, fmt, precision, d);
  std::string s(static_cast<std::size_t>(n), '\0');
  std::snprintf(s.data(), s.size() + 1, fmt, precision, d);
  return s;
}

// Inserts `sep` every `every` digits into the leading run of digits of `body`.
std::string group_digits(const std::string& body, char sep, int every) {
  std::size_t end = 0;
  while (end < body.size() && body[end] >= '0' && body[end] <= '9') ++end;
  if (end == 0) end = body.find_first_not_of("0123456789abcdefABCDEF");
  if (end == std::string::npos) end = body.size();
  std::string out;
  for (std::size_t i = 0; i < end; ++i) {
    if (i > 0 && (end - i) % static_cast<std::size_t>(every) == 0) out += sep;
    out += body[i];
  }
  out.append(body, end, std::string::npos);
  return out;
}

// With '0' fill and '=' alignment Python grows the digit run itself, separators
// included: format(42, '+08,d') == '+000,042'.
std::string grouped_zero_fill(const std::string& body, char sep, int every,
                              std::size_t min_length) {
  std::size_t end = body.find_first_not_of(every == 4 ? "0123456789abcdefABCDEF" : "0123456789");
  if (end == std::string::npos) end = body.size();
  std::string digits = body.substr(0, end), rest = body.substr(end);
  std::string grouped = group_digits(digits, sep, every);
  while (grouped.size() + rest.size() < min_length) {
    digits.insert(0, 1, '0');
    grouped = group_digits(digits, sep, every);
  }
  return grouped + rest;
}

Result<std::int64_t> float_to_int(double d) {
  if (std::isnan(d)) return value_error("cannot convert float NaN to integer");
  if (std::isinf(d)) return make_error("OverflowError", "cannot convert float infinity to integer");
  double t = std::trunc(d);
  if (t < -9223372036854775808.0 || t >= 9223372036854775808.0)
    return make_error("OverflowError", "integer result exceeds 64 bits");
  return static_cast<std::int64_t>(t);
}

void append_ascii_repr(std::string& out, const Value& v) {
  std::string repr = to_repr(v);
  std::size_t i = 0;
  while (i < repr.size()) {
    auto byte = static_cast<unsigned char>(repr[i]);
    if (byte < 0x80) {
      out += repr[i++];
      continue;
    }
    char32_t c = utf8::decode(repr, i);
    char buf[16];
    if (c <= 0xFF)
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
    else if (c <= 0xFFFF)
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
    else
      std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
    out += buf;
  }
}

// ---------------------------------------------------------------------------------
// The format-spec mini-language
// ---------------------------------------------------------------------------------

struct Spec {
  char32_t fill = ' ';
  bool fill_given = false;
  char align = 0;
  char sign = 0;
  bool no_neg_zero = false;
  bool alternate = false;
  std::int64_t width = -1;
  char grouping = 0;
  std::int64_t precision = -1;
  char type = 0;
};

bool is_align(char32_t c) {
  return c == '<' || c == '>' || c == '^' || c == '=';
}

Result<Spec> parse_spec(std::string_view text, char default_align, const ValueLimits& limits) {
  Spec spec;
  std::size_t i = 0;
  // [[fill]align]
  if (!text.empty()) {
    std::size_t after_first = 0;
    char32_t first = utf8::decode(text, after_first);
    if (after_first < text.size() && is_align(static_cast<unsigned char>(text[after_first]))) {
      spec.fill = first;
      spec.fill_given = true;
      spec.align = text[after_first];
      i = after_first + 1;
    } else if (is_align(first)) {
      spec.align = static_cast<char>(first);
      i = 1;
    }
  }
  if (i < text.size() && (text[i] == '+' || text[i] == '-' || text[i] == ' '))
    spec.sign = text[i++];
  if (i < text.size() && text[i] == 'z') {
    spec.no_neg_zero = true;
    ++i;
  }
  if (i < text.size() && text[i] == '#') {
    spec.alternate = true;
    ++i;
  }
  if (i < text.size() && text[i] == '0' && !spec.fill_given) {
    spec.fill = '0';
    spec.fill_given = true;
    if (!spec.align && default_align == '>') spec.align = '=';
    ++i;
  }
  // Python accepts any width or precision up to sys.maxsize ("Too many decimal digits" only
  // beyond it) and then fails to allocate: a width over the limit is a LimitError below.
  auto digits = [&](std::int64_t& out) {
    std::size_t start = i;
    std::int64_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text[i] - '0', &v))
        return false;
      ++i;
    }
    if (i > start) out = v;
    return true;
  };
  if (!digits(spec.width)) return value_error("Too many decimal digits in format string");
  if (i < text.size() && (text[i] == ',' || text[i] == '_')) spec.grouping = text[i++];
  if (i < text.size() && text[i] == '.') {
    ++i;
    std::size_t start = i;
    if (!digits(spec.precision)) return value_error("Too many decimal digits in format string");
    if (i == start) return value_error("Format specifier missing precision");
  }
  // Checked before anything is allocated: a width or precision beyond the string limit
  // could only build a string beyond it.
  // A string's precision only truncates ('{:.2000000000}' of 'a' is 'a'); a number's adds
  // digits.
  if (spec.width > static_cast<std::int64_t>(limits.max_string_bytes) ||
      (default_align != '<' && spec.precision > static_cast<std::int64_t>(limits.max_string_bytes)))
    return limit_error("max_string_bytes", limits.max_string_bytes);
  if (text.size() - i > 1) return value_error("Invalid format specifier");
  if (i < text.size()) spec.type = text[i];
  if (!spec.align) spec.align = default_align;
  return spec;
}

// Pads `sign_prefix + body` to the spec's width.
void pad(std::string& out, const Spec& spec, std::string_view sign_prefix, std::string_view body) {
  std::size_t length = utf8::code_points(sign_prefix) + utf8::code_points(body);
  std::size_t width = spec.width < 0 ? 0 : static_cast<std::size_t>(spec.width);
  std::size_t padding = width > length ? width - length : 0;
  std::string fill;
  utf8::encode(fill, spec.fill);
  auto repeat = [&](std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) out += fill;
  };
  switch (spec.align) {
    case '<':
      out += sign_prefix;
      out += body;
      repeat(padding);
      break;
    case '^':
      repeat(padding / 2);
      out += sign_prefix;
      out += body;
      repeat(padding - padding / 2);
      break;
    case '=':
      out += sign_prefix;
      repeat(padding);
      out += body;
      break;
    default:
      repeat(padding);
      out += sign_prefix;
      out += body;
  }
}

// The spec's ',' or '_' grouping of `body`, a separator every `every` digits. With '0' fill
// and '=' alignment the zero padding up to the width left after `prefix_size` is grouped too,
// unless the digits cannot grow (nan, inf).
std::string grouped_body(const std::string& body, const Spec& spec, int every,
                         std::size_t prefix_size, bool zero_fill_digits) {
  if (spec.fill == '0' && spec.align == '=' && spec.width > 0 &&
      static_cast<std::size_t>(spec.width) > prefix_size && zero_fill_digits)
    return grouped_zero_fill(body, spec.grouping, every,
                             static_cast<std::size_t>(spec.width) - prefix_size);
  return group_digits(body, spec.grouping, every);
}

std::string sign_string(bool negative, char sign) {
  if (negative) return "-";
  if (sign == '+') return "+";
  if (sign == ' ') return " ";
  return "";
}

Status format_string_spec(std::string& out, std::string_view s, std::size_t code_points,
                          std::string_view text, const ValueLimits& limits) {
  auto parsed = parse_spec(text, '<', limits);
  if (!parsed) return parsed.error();
  Spec spec = *parsed;
  if (spec.type && spec.type != 's')
    return value_error(std::string("Unknown format code '") + spec.type +
                       "' for object of type 'str'");
  if (spec.sign) return value_error("Sign not allowed in string format specifier");
  if (spec.alternate)
    return value_error("Alternate form (#) not allowed in string format specifier");
  if (spec.grouping)
    return value_error(std::string("Cannot specify '") + spec.grouping + "' with 's'.");
  if (spec.align == '=') return value_error("'=' alignment not allowed in string format specifier");
  std::string_view body = s;
  if (spec.precision >= 0 && static_cast<std::size_t>(spec.precision) < code_points)
    body = s.substr(0, utf8::byte_offset(s, static_cast<std::size_t>(spec.precision)));
  pad(out, spec, "", body);
  return ok_status();
}

Status format_float_spec(std::string& out, double d, const Spec& spec,
                         std::string_view type_name_for_errors) {
  char type = spec.type;
  switch (type) {
    case 0:
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
    case 'n':
    case '%':
      break;
    default:
      return value_error(std::string("Unknown format code '") + type + "' for object of type '" +
                         std::string(type_name_for_errors) + "'");
  }
  bool negative = std::signbit(d) && !std::isnan(d);
  double magnitude = std::fabs(d);
  std::string body;
  bool upper = type == 'E' || type == 'F' || type == 'G';
  if (std::isnan(d) || std::isinf(d)) {
    body = std::isnan(d) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
    if (type == '%') body += '%';
  } else if (type == 0 && spec.precision < 0) {
    append_float_repr(body, magnitude);
  } else {
    int precision = spec.precision < 0 ? 6 : static_cast<int>(spec.precision);
    char conversion = type == 0 || type == 'n' ? 'g' : type == '%' ? 'f' : type;
    if (type == 0 && precision == 0) precision = 1;
    double x = type == '%' ? magnitude * 100.0 : magnitude;
    body = c_format_double(x, conversion, precision, spec.alternate);
    if (type == 0 && body.find_first_of(".e") == std::string::npos) body += ".0";
    if (type == '%') body += '%';
  }
  if (negative && spec.no_neg_zero && body.find_first_of("123456789") == std::string::npos)
    negative = false;
  std::string sign = sign_string(negative, spec.sign);
  if (spec.grouping) body = grouped_body(body, spec, 3, sign.size(), std::isfinite(d));
  pad(out, spec, sign, body);
  return ok_status();
}

Status format_int_spec(std::string& out, std::int64_t i, const Spec& spec) {
  char type = spec.type;
  switch (type) {
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
    case '%':
      return format_float_spec(out, static_cast<double>(i), spec, "int");
    case 0:
    case 'd':
    case 'n':
    case 'b':
    case 'o':
    case 'x':
    case 'X':
    case 'c':
      break;
    default:
      return value_error(std::string("Unknown format code '") + type +
                         "' for object of type 'int'");
  }
  if (spec.precision >= 0) return value_error("Precision not allowed in integer format specifier");
  if (type == 'c') {
    if (spec.sign) return value_error("Sign not allowed with integer format specifier 'c'");
    if (i < 0 || i > 0x10FFFF) return make_error("OverflowError", "%c arg not in range(0x110000)");
    std::string body;
    utf8::encode(body, static_cast<char32_t>(i));
    pad(out, spec, "", body);
    return ok_status();
  }
  int base = type == 'b' ? 2 : type == 'o' ? 8 : (type == 'x' || type == 'X') ? 16 : 10;
  if (spec.grouping == ',' && base != 10)
    return value_error(std::string("Cannot specify ',' with '") + type + "'.");
  std::string body = unsigned_digits(magnitude_of(i), base, type == 'X');
  std::string prefix = sign_string(i < 0, spec.sign);
  if (spec.alternate && base != 10) {
    prefix += '0';
    prefix += type;
  }
  if (spec.grouping) body = grouped_body(body, spec, base == 10 ? 3 : 4, prefix.size(), true);
  pad(out, spec, prefix, body);
  return ok_status();
}

// format(value, spec) with the caller's limits (str.format passes its own).
Status format_spec_limited(std::string& out, const Value& v, std::string_view spec_text,
                           const ValueLimits& limits) {
  switch (v.kind()) {
    case Kind::String:
      return format_string_spec(out, v.as_string(), v.string_length(), spec_text, limits);
    case Kind::Bool:
      if (spec_text.empty()) {
        out += v.as_bool() ? "True" : "False";
        return ok_status();
      }
      [[fallthrough]];
    case Kind::Int: {
      auto spec = parse_spec(spec_text, '>', limits);
      if (!spec) return spec.error();
      return format_int_spec(out, v.as_integer(), *spec);
    }
    case Kind::Float: {
      auto spec = parse_spec(spec_text, '>', limits);
      if (!spec) return spec.error();
      return format_float_spec(out, v.as_float(), *spec, "float");
    }
    default:
      if (!spec_text.empty())
        return type_error("unsupported format string passed to " + std::string(type_name(v)) +
                          ".__format__");
      append_str(out, v);
      return ok_status();
  }
}

}  // namespace

Status format_spec(std::string& out, const Value& v, std::string_view spec_text) {
  return format_spec_limited(out, v, spec_text, ValueLimits{});
}

// ---------------------------------------------------------------------------------
// printf-style `%`
// ---------------------------------------------------------------------------------

namespace {

struct PercentSpec {
  bool left = false, plus = false, space = false, alternate = false, zero = false;
  std::int64_t width = -1, precision = -1;
};

void percent_pad(std::string& out, const PercentSpec& spec, std::string_view prefix,
                 std::string_view body, bool numeric) {
  std::size_t length = utf8::code_points(prefix) + utf8::code_points(body);
  std::size_t width = spec.width < 0 ? 0 : static_cast<std::size_t>(spec.width);
  std::size_t padding = width > length ? width - length : 0;
  if (spec.left) {
    out += prefix;
    out += body;
    out.append(padding, ' ');
  } else if (spec.zero && numeric) {
    out += prefix;
    out.append(padding, '0');
    out += body;
  } else {
    out.append(padding, ' ');
    out += prefix;
    out += body;
  }
}

// str(), repr() or ascii() of `v`: the 's', 'r' and 'a' conversions of both % and str.format.
void append_converted(std::string& out, char conversion, const Value& v) {
  if (conversion == 's')
    append_str(out, v);
  else if (conversion == 'r')
    append_repr(out, v);
  else
    append_ascii_repr(out, v);
}

std::string percent_sign(bool negative, const PercentSpec& spec) {
  if (negative) return "-";
  if (spec.plus) return "+";
  if (spec.space) return " ";
  return "";
}

// `escape`: the format string is a Markup, whose __mod__ wraps every argument in
// markupsafe's _MarkupEscapeHelper: str(), repr() and ascii() of it are the escaped text
// (a Markup argument's str() is itself); int() and float() are the argument's own.
Status percent_one(std::string& out, char conversion, const PercentSpec& spec, const Value& arg,
                   bool escape) {
  // Numeric conversions call int()/float() on the argument, which an Undefined refuses.
  if (arg.is_undefined() && conversion != 's' && conversion != 'r' && conversion != 'a')
    return arg.undefined_error();
  switch (conversion) {
    case 's':
    case 'r':
    case 'a': {
      std::string text;
      append_converted(text, conversion, arg);
      if (escape && !(conversion == 's' && arg.is_markup())) {
        std::string escaped;
        append_html_escaped(escaped, text);
        text = std::move(escaped);
      }
      std::string_view body = text;
      if (spec.precision >= 0) {
        auto n = static_cast<std::size_t>(spec.precision);
        if (n < utf8::code_points(body)) body = body.substr(0, utf8::byte_offset(body, n));
      }
      percent_pad(out, spec, "", body, false);
      return ok_status();
    }
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o': {
      std::int64_t i;
      bool decimal = conversion == 'd' || conversion == 'i' || conversion == 'u';
      if (arg.is_int() || arg.is_bool()) {
        i = arg.as_integer();
      } else if (arg.is_float() && decimal) {
        auto converted = float_to_int(arg.as_float());
        if (!converted) return converted.error();
        i = *converted;
      } else if (decimal) {
        return type_error(std::string("%") + conversion +
                          " format: a real number is required, not " + std::string(type_name(arg)));
      } else {
        return type_error(std::string("%") + conversion + " format: an integer is required, not " +
                          std::string(type_name(arg)));
      }
      int base = decimal ? 10 : conversion == 'o' ? 8 : 16;
      std::string body = unsigned_digits(magnitude_of(i), base, conversion == 'X');
      if (spec.precision >= 0 && body.size() < static_cast<std::size_t>(spec.precision))
        body.insert(0, static_cast<std::size_t>(spec.precision) - body.size(), '0');
      std::string prefix = percent_sign(i < 0, spec);
      if (spec.alternate && !decimal) {
        prefix += '0';
        prefix += conversion == 'o' ? 'o' : conversion;
      }
      percent_pad(out, spec, prefix, body, true);
      return ok_status();
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': {
      if (!arg.is_number())
        return type_error("must be real number, not " + std::string(type_name(arg)));
      double d = arg.to_double();
      bool negative = std::signbit(d) && !std::isnan(d);
      std::string body;
      bool upper = conversion == 'E' || conversion == 'F' || conversion == 'G';
      if (std::isnan(d))
        body = upper ? "NAN" : "nan";
      else if (std::isinf(d))
        body = upper ? "INF" : "inf";
      else
        body = c_format_double(std::fabs(d), conversion,
                               spec.precision < 0 ? 6 : static_cast<int>(spec.precision),
                               spec.alternate);
      percent_pad(out, spec, percent_sign(negative, spec), body, true);
      return ok_status();
    }
    case 'c': {
      std::string body;
      if (arg.is_int() || arg.is_bool()) {
        std::int64_t i = arg.as_integer();
        if (i < 0 || i > 0x10FFFF)
          return make_error("OverflowError", "%c arg not in range(0x110000)");
        utf8::encode(body, static_cast<char32_t>(i));
      } else if (arg.is_string() && arg.string_length() == 1) {
        body = arg.as_string();
      } else {
        return type_error("%c requires int or char");
      }
      percent_pad(out, spec, "", body, false);
      return ok_status();
    }
    default:
      return ok_status();
  }
}

Result<Value> percent_format_impl(std::string_view fmt, const Value& args,
                                  const ValueLimits& limits, bool escape);

}  // namespace

Result<Value> percent_format(std::string_view fmt, const Value& args, const ValueLimits& limits) {
  return percent_format_impl(fmt, args, limits, false);
}

Result<Value> markup_percent_format(std::string_view fmt, const Value& args,
                                    const ValueLimits& limits) {
  auto r = percent_format_impl(fmt, args, limits, true);
  if (!r) return r;
  return Value::as_markup(*r);
}

namespace {

Result<Value> percent_format_impl(std::string_view fmt, const Value& args,
                                  const ValueLimits& limits, bool escape) {
  std::span<const Value> positional;
  Value single[1];
  bool is_tuple = args.is_tuple();
  if (is_tuple) {
    positional = args.as_list();
  } else {
    single[0] = args;
    positional = single;
  }
  // Python uses the argument as a mapping when it is one (and not a tuple or str).
  const Value* mapping = args.is_dict() || args.is_object() ? &args : nullptr;
  std::size_t next_arg = 0;
  bool used_mapping_key = false;
  std::string out;
  auto next = [&]() -> const Value* {
    if (next_arg < positional.size()) return &positional[next_arg++];
    return nullptr;
  };
  std::size_t i = 0;
  while (i < fmt.size()) {
    std::size_t pct = fmt.find('%', i);
    if (pct == std::string_view::npos) {
      out.append(fmt.substr(i));
      break;
    }
    out.append(fmt.substr(i, pct - i));
    std::size_t spec_start = pct;
    i = pct + 1;
    if (i >= fmt.size()) return value_error("incomplete format");
    const Value* key_value = nullptr;
    Value looked_up;
    if (fmt[i] == '(') {
      if (!mapping) return type_error("format requires a mapping");
      int depth = 1;
      std::size_t key_start = ++i;
      while (i < fmt.size() && depth > 0) {
        if (fmt[i] == '(') ++depth;
        if (fmt[i] == ')') --depth;
        ++i;
      }
      if (depth > 0) return value_error("incomplete format key");
      Value key(fmt.substr(key_start, i - 1 - key_start));
      auto item = get_item(*mapping, key);
      if (!item) return item.error();
      looked_up = std::move(*item);
      key_value = &looked_up;
      used_mapping_key = true;
    }
    PercentSpec spec;
    for (; i < fmt.size(); ++i) {
      char c = fmt[i];
      if (c == '-')
        spec.left = true;
      else if (c == '+')
        spec.plus = true;
      else if (c == ' ')
        spec.space = true;
      else if (c == '#')
        spec.alternate = true;
      else if (c == '0')
        spec.zero = true;
      else
        break;
    }
    // Python refuses a width beyond sys.maxsize and a precision beyond INT_MAX ("width too
    // big"); smaller ones it tries to allocate, so the limits are checked below, once the
    // conversion is known.
    auto number = [&](std::int64_t& target, const char* what, std::int64_t most) -> Status {
      if (i < fmt.size() && fmt[i] == '*') {
        ++i;
        const Value* v = next();
        if (!v) return type_error("not enough arguments for format string");
        if (!v->is_int() && !v->is_bool()) return type_error("* wants int");
        target = v->as_integer();
        return ok_status();
      }
      std::int64_t n = -1;
      while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') {
        if (n > (most - (fmt[i] - '0')) / 10) return value_error(std::string(what) + " too big");
        n = (n < 0 ? 0 : n) * 10 + (fmt[i] - '0');
        ++i;
      }
      if (n >= 0) target = n;
      return ok_status();
    };
    if (auto s = number(spec.width, "width", std::numeric_limits<std::int64_t>::max()); !s)
      return s.error();
    if (spec.width == std::numeric_limits<std::int64_t>::min())  // `*` of INT64_MIN: no -width
      return limit_error("max_string_bytes", limits.max_string_bytes);
    if (spec.width < -1) {
      spec.left = true;
      spec.width = -spec.width;
    }
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      spec.precision = 0;
      if (auto s = number(spec.precision, "precision", 2147483647); !s) return s.error();
    }
    while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) return value_error("incomplete format");
    char conversion = fmt[i++];
    // A width pads, so a width beyond the limit would build a string beyond it. A precision
    // only truncates text ('%.2000000000s' is harmless) but pads numbers with digits.
    const auto max = static_cast<std::int64_t>(limits.max_string_bytes);
    const bool text_conversion =
        conversion == 's' || conversion == 'r' || conversion == 'a' || conversion == 'c';
    if (spec.width > max || (!text_conversion && spec.precision > max))
      return limit_error("max_string_bytes", limits.max_string_bytes);
    if (conversion == '%') {
      out += '%';
      continue;
    }
    static constexpr std::string_view kConversions = "sradiuxXoeEfFgGc";
    if (kConversions.find(conversion) == std::string_view::npos) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "unsupported format character '%c' (0x%x) at index %zu",
                    conversion, static_cast<unsigned char>(conversion), i - 1);
      (void)spec_start;
      return value_error(buf);
    }
    const Value* arg = key_value ? key_value : next();
    if (!arg) return type_error("not enough arguments for format string");
    if (auto s = percent_one(out, conversion, spec, *arg, escape); !s) return s.error();
    if (out.size() > limits.max_string_bytes)
      return limit_error("max_string_bytes", limits.max_string_bytes);
  }
  if (next_arg < positional.size() && !mapping && !used_mapping_key)
    return type_error("not all arguments converted during string formatting");
  return make_string(std::move(out));
}

}  // namespace

// ---------------------------------------------------------------------------------
// str.format
// ---------------------------------------------------------------------------------

namespace {

// The attributes Jinja2's Undefined really has (dir(jinja2.Undefined) in 3.1.6 that start
// with '_'): the sandbox finds them and refuses them as unsafe. Any other attribute of an
// Undefined is a call to Undefined.__getattr__ (or, for dunders, Undefined.__getitem__ after
// the AttributeError), both of which raise the Undefined's own error.
constexpr std::string_view kUndefinedOwnAttributes[] = {"__add__",
                                                        "__aiter__",
                                                        "__bool__",
                                                        "__call__",
                                                        "__class__",
                                                        "__complex__",
                                                        "__delattr__",
                                                        "__dir__",
                                                        "__div__",
                                                        "__doc__",
                                                        "__eq__",
                                                        "__float__",
                                                        "__floordiv__",
                                                        "__format__",
                                                        "__ge__",
                                                        "__getattr__",
                                                        "__getattribute__",
                                                        "__getitem__",
                                                        "__getstate__",
                                                        "__gt__",
                                                        "__hash__",
                                                        "__init__",
                                                        "__init_subclass__",
                                                        "__int__",
                                                        "__iter__",
                                                        "__le__",
                                                        "__len__",
                                                        "__lt__",
                                                        "__mod__",
                                                        "__module__",
                                                        "__mul__",
                                                        "__ne__",
                                                        "__neg__",
                                                        "__new__",
                                                        "__pos__",
                                                        "__pow__",
                                                        "__radd__",
                                                        "__rdiv__",
                                                        "__reduce__",
                                                        "__reduce_ex__",
                                                        "__repr__",
                                                        "__rfloordiv__",
                                                        "__rmod__",
                                                        "__rmul__",
                                                        "__rpow__",
                                                        "__rsub__",
                                                        "__rtruediv__",
                                                        "__setattr__",
                                                        "__sizeof__",
                                                        "__slots__",
                                                        "__str__",
                                                        "__sub__",
                                                        "__subclasshook__",
                                                        "__truediv__",
                                                        "_fail_with_undefined_error",
                                                        "_undefined_exception",
                                                        "_undefined_hint",
                                                        "_undefined_message",
                                                        "_undefined_name",
                                                        "_undefined_obj"};

// Jinja2's sandboxed getattr as the formatter uses it: a Python attribute first (our
// methods; dunder names are unsafe), then the item with that name, else Undefined.
// Looking further into an Undefined raises its error, as Jinja2's does: this is what stops
// '{0.__init__.__globals__}' (SecurityError) and '{0.x}'.format(missing) (UndefinedError).
Result<Value> sandbox_getattr(const Value& obj, std::string_view name) {
  if (obj.is_undefined()) {
    for (std::string_view own : kUndefinedOwnAttributes)
      if (own == name) return Value::unsafe_attribute(name, obj);
    return obj.undefined_error();
  }
  if (name.size() >= 4 && name.substr(0, 2) == "__" && name.substr(name.size() - 2) == "__")
    return Value::unsafe_attribute(name, obj);
  if (has_method(obj, name)) return bound_method(obj, name);
  if (is_unsafe_mutator(obj.kind(), name)) return Value::unsafe_attribute(name, obj);
  if (obj.is_object()) {
    auto v = obj.as_object()->get_attr(name);
    return v ? *v : Value::undefined_attribute(name, obj);
  }
  if (obj.is_dict())
    if (const Value* found = obj.dict_find(name)) return *found;
  return Value::undefined_attribute(name, obj);
}

// Jinja2's sandboxed getitem: the item, then an attribute of that name, else Undefined.
// Undefined[key] raises the Undefined's error (Undefined.__getitem__).
Result<Value> sandbox_getitem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return obj.undefined_error();
  auto item = get_item(obj, key);
  if (item) return *item;
  if (key.is_string()) {
    auto attr = sandbox_getattr(obj, key.as_string());
    if (!attr) return attr;
    if (!attr->is_undefined()) return attr;
  }
  return Value::undefined_item(key, obj);
}

struct Formatter {
  const CallArgs& args;
  const ValueLimits& limits;
  // Markup.format: markupsafe's EscapeFormatter escapes each formatted field; a Markup
  // value is written as it is (its __html_format__, which refuses a format spec).
  bool escape = false;
  int auto_index = 0;  // -1 once manual numbering is used
  bool manual = false;

  Result<Value> field_value(std::string_view field) {
    // arg_name
    std::size_t end = field.find_first_of(".[");
    std::string_view arg_name = field.substr(0, end);
    Value obj;
    bool numeric =
        !arg_name.empty() && arg_name.find_first_not_of("0123456789") == std::string_view::npos;
    if (arg_name.empty()) {
      if (manual)
        return value_error(
            "cannot switch from manual field specification to automatic field numbering");
      auto_index_used = true;
      std::size_t index = static_cast<std::size_t>(auto_index++);
      if (index >= args.positional.size())
        return make_error("IndexError", "Replacement index " + std::to_string(index) +
                                            " out of range for positional args tuple");
      obj = args.positional[index];
    } else if (numeric) {
      if (auto_index_used)
        return value_error(
            "cannot switch from automatic field numbering to manual field specification");
      manual = true;
      std::size_t index = 0;
      std::from_chars(arg_name.data(), arg_name.data() + arg_name.size(), index);
      if (index >= args.positional.size())
        return make_error("IndexError", "Replacement index " + std::to_string(index) +
                                            " out of range for positional args tuple");
      obj = args.positional[index];
    } else {
      const Value* found = nullptr;
      for (const NamedArg& kw : args.keyword)
        if (kw.name == arg_name) found = &kw.value;
      if (!found) return make_error("KeyError", to_repr(Value(arg_name)));
      obj = *found;
    }
    // accessors
    std::size_t i = end == std::string_view::npos ? field.size() : end;
    while (i < field.size()) {
      if (field[i] == '.') {
        std::size_t next = field.find_first_of(".[", i + 1);
        if (next == std::string_view::npos) next = field.size();
        std::string_view attr = field.substr(i + 1, next - i - 1);
        if (attr.empty()) return value_error("Empty attribute in format string");
        auto looked_up = sandbox_getattr(obj, attr);
        if (!looked_up) return looked_up;
        obj = std::move(*looked_up);
        i = next;
      } else if (field[i] == '[') {
        std::size_t close = field.find(']', i + 1);
        if (close == std::string_view::npos) return value_error("Missing ']' in format string");
        std::string_view key = field.substr(i + 1, close - i - 1);
        if (key.empty()) return value_error("Empty attribute in format string");
        Value key_value;
        if (key.find_first_not_of("0123456789") == std::string_view::npos) {
          std::int64_t n = 0;
          std::from_chars(key.data(), key.data() + key.size(), n);
          key_value = Value(n);
        } else {
          key_value = Value(key);
        }
        auto looked_up = sandbox_getitem(obj, key_value);
        if (!looked_up) return looked_up;
        obj = std::move(*looked_up);
        i = close + 1;
        if (i < field.size() && field[i] != '.' && field[i] != '[')
          return value_error("Only '.' or '[' may follow ']' in format field specifier");
      } else {
        return value_error("Only '.' or '[' may follow ']' in format field specifier");
      }
    }
    return obj;
  }
  bool auto_index_used = false;

  Status run(std::string& out, std::string_view fmt, int depth) {
    if (depth > 2) return value_error("Max string recursion exceeded");
    std::size_t i = 0;
    while (i < fmt.size()) {
      char c = fmt[i];
      if (c == '}') {
        if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
          out += '}';
          i += 2;
          continue;
        }
        return value_error("Single '}' encountered in format string");
      }
      if (c != '{') {
        std::size_t next = fmt.find_first_of("{}", i);
        if (next == std::string_view::npos) next = fmt.size();
        out.append(fmt.substr(i, next - i));
        i = next;
        continue;
      }
      if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
        out += '{';
        i += 2;
        continue;
      }
      // A replacement field: find its matching '}' (nested braces in the spec).
      std::size_t j = i + 1;
      int nesting = 1;
      std::size_t bracket = 0;
      while (j < fmt.size()) {
        if (fmt[j] == '[')
          ++bracket;
        else if (fmt[j] == ']' && bracket)
          --bracket;
        else if (fmt[j] == '{')
          ++nesting;
        else if (fmt[j] == '}') {
          if (--nesting == 0) break;
        }
        ++j;
      }
      if (j >= fmt.size() && i + 1 == fmt.size())
        return value_error("Single '{' encountered in format string");
      if (j >= fmt.size()) {
        return value_error(nesting > 1 ? "unmatched '{' in format spec"
                                       : "expected '}' before end of string");
      }
      std::string_view inner = fmt.substr(i + 1, j - i - 1);
      i = j + 1;
      // field_name [!conversion] [:spec]
      std::size_t k = 0;
      std::size_t in_bracket = 0;
      while (k < inner.size()) {
        if (inner[k] == '[')
          ++in_bracket;
        else if (inner[k] == ']' && in_bracket)
          --in_bracket;
        else if (!in_bracket && (inner[k] == '!' || inner[k] == ':'))
          break;
        ++k;
      }
      std::string_view field = inner.substr(0, k);
      char conversion = 0;
      std::string_view spec;
      if (k < inner.size() && inner[k] == '!') {
        if (k + 1 >= inner.size())
          return value_error("end of string while looking for conversion specifier");
        conversion = inner[k + 1];
        k += 2;
        if (k < inner.size() && inner[k] != ':')
          return value_error("expected ':' after conversion specifier");
      }
      if (k < inner.size() && inner[k] == ':') spec = inner.substr(k + 1);
      auto value = field_value(field);
      if (!value) return value.error();
      Value v = std::move(*value);
      if (conversion == 'r' || conversion == 's' || conversion == 'a') {
        std::string converted;
        append_converted(converted, conversion, v);
        v = make_string(std::move(converted));
      } else if (conversion) {
        return value_error(std::string("Unknown conversion specifier ") + conversion);
      }
      std::string expanded_spec;
      if (spec.find('{') != std::string_view::npos) {
        if (auto s = run(expanded_spec, spec, depth + 1); !s) return s;
        spec = expanded_spec;
      }
      if (v.is_undefined() && !spec.empty())
        return type_error("unsupported format string passed to Undefined.__format__");
      if (escape && v.is_markup()) {
        if (!spec.empty()) return value_error("Unsupported format specification for Markup.");
        out += v.as_string();
      } else if (escape) {
        std::string field_text;
        if (auto s = format_spec_limited(field_text, v, spec, limits); !s) return s;
        append_html_escaped(out, field_text);
      } else if (auto s = format_spec_limited(out, v, spec, limits); !s) {
        return s;
      }
      if (out.size() > limits.max_string_bytes)
        return limit_error("max_string_bytes", limits.max_string_bytes);
    }
    return ok_status();
  }
};

}  // namespace

Result<Value> str_format(std::string_view fmt, const CallArgs& args, const ValueLimits& limits) {
  Formatter formatter{args, limits};
  std::string out;
  if (auto s = formatter.run(out, fmt, 0); !s) return s.error();
  return make_string(std::move(out));
}

Result<Value> markup_str_format(std::string_view fmt, const CallArgs& args,
                                const ValueLimits& limits) {
  Formatter formatter{args, limits, true};
  std::string out;
  if (auto s = formatter.run(out, fmt, 0); !s) return s.error();
  return Value::markup(std::move(out));
}

}  // namespace chatwire
