// repr()/str() of random value trees against the straightforward writer print.cpp had
// before it wrote through a cursor (kept below as the reference), plus the nesting bound.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <random>

#include "chatwire/value.hpp"
#include "chatwire/value_print.hpp"
#include "value/internal.hpp"

namespace chatwire {
namespace {

// ---- reference: one append per piece, two find() passes for the quote -------------------

void ref_hex(std::string& out, char32_t c, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4)
    out += "0123456789abcdef"[(c >> shift) & 0xF];
}

void ref_string(std::string& out, const Value& v) {
  std::string_view s = v.as_string();
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  out += quote;
  bool ascii = v.string_is_ascii();
  std::size_t i = 0;
  while (i < s.size()) {
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
      ref_hex(out, c, 2);
    } else if (c < 0x7F) {
      out += static_cast<char>(c);
    } else if (!unicode::is_printable(c)) {
      if (c <= 0xFF) {
        out += "\\x";
        ref_hex(out, c, 2);
      } else if (c <= 0xFFFF) {
        out += "\\u";
        ref_hex(out, c, 4);
      } else {
        out += "\\U";
        ref_hex(out, c, 8);
      }
    } else {
      utf8::encode(out, c);
    }
  }
  out += quote;
}

void ref_float(std::string& out, double d) {
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
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  bool negative = sci[0] == '-';
  if (negative) sci.remove_prefix(1);
  std::size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos))
    if (c != '.') digits += c;
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + 1 + (sci[e_pos + 1] == '+'), sci.data() + sci.size(),
                  exponent);
  int decpt = exponent + 1;
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

void ref_repr(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
    case Kind::Object:
      append_repr(out, v);  // not what this test checks
      return;
    case Kind::None:
      out += "None";
      return;
    case Kind::Bool:
      out += v.as_bool() ? "True" : "False";
      return;
    case Kind::Int:
      out += std::to_string(v.as_int());
      return;
    case Kind::Float:
      ref_float(out, v.as_float());
      return;
    case Kind::String:
      ref_string(out, v);
      return;
    case Kind::List:
    case Kind::Tuple: {
      auto items = v.as_list();
      out += v.is_list() ? '[' : '(';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        ref_repr(out, items[i]);
      }
      if (!v.is_list() && items.size() == 1) out += ',';
      out += v.is_list() ? ']' : ')';
      return;
    }
    case Kind::Dict: {
      out += '{';
      bool first = true;
      for (const auto& [k, x] : v.dict_entries()) {
        if (!first) out += ", ";
        first = false;
        ref_repr(out, k);
        out += ": ";
        ref_repr(out, x);
      }
      out += '}';
      return;
    }
  }
}

// ---- random values ---------------------------------------------------------------------

struct Gen {
  std::mt19937_64 rng{20261130};

  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng() % n); }

  std::string text() {
    // Pieces chosen to hit every branch: quotes, escapes, controls, DEL, printable and
    // non-printable non-ASCII, WTF-8 surrogates, malformed and truncated sequences.
    static const char* const pieces[] = {
        "a",
        "hello world ",
        "'",
        "\"",
        "\\",
        "\t",
        "\n",
        "\r",
        "\x01",
        "\x1f",
        "\x7f",
        " ",
        "~",
        "\xc3\xa9",
        "\xc2\xa0",
        "\xc2\xad",
        "\xc2\x85",
        "\xe2\x80\xa8",
        "\xe4\xb8\xad",
        "\xee\x80\x80",
        "\xed\xa0\x80",
        "\xef\xbf\xbf",
        "\xf0\x9f\x98\x80",
        "\xf4\x8f\xbf\xbf",
        "\xf3\xa0\x80\x81",
        "\x80",
        "\xff",
        "\xc3",
        "\xe4\xb8",
        "\xc0\x80",
        "\xc1\x81",
        "0123456789abcdef",
        "{'type': 'function'}",
        "It's",
        "say \"hi\"",
    };
    std::size_t n = below(8) == 0 ? below(60) : below(6);
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
      if (below(3) == 0)
        s += pieces[below(std::size(pieces))];
      else
        s += static_cast<char>(0x20 + below(0x5F));  // printable ASCII
    }
    return s;
  }

  double real() {
    switch (below(6)) {
      case 0: {
        std::uint64_t bits = rng();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
      }
      case 1:
        return static_cast<double>(static_cast<std::int64_t>(rng() % 2000001) - 1000000) / 1000;
      case 2:
        return std::ldexp(static_cast<double>(rng() % 1000000), static_cast<int>(below(120)) - 60);
      case 3: {
        static const double special[] = {0.0,
                                         -0.0,
                                         1e16,
                                         1e17,
                                         1e-4,
                                         1e-5,
                                         0.1,
                                         1.5e300,
                                         -2.5e-300,
                                         5e-324,
                                         1.7976931348623157e308};
        return special[below(std::size(special))];
      }
      default:
        return static_cast<double>(rng() % 100) + 0.5;
    }
  }

  Value value(int depth) {
    std::size_t pick = below(depth > 4 ? 6 : 10);
    switch (pick) {
      case 0:
        return Value::none();
      case 1:
        return Value(below(2) == 0);
      case 2:
        return Value(static_cast<std::int64_t>(rng()) >> below(64));
      case 3:
        return Value(real());
      case 4:
      case 5:
        return Value(text());
      case 6:
      case 7: {
        std::vector<Value> items;
        for (std::size_t i = below(5); i > 0; --i) items.push_back(value(depth + 1));
        return below(3) == 0 ? Value::tuple(std::move(items)) : Value::list(std::move(items));
      }
      default: {
        std::vector<std::pair<Value, Value>> entries;
        for (std::size_t i = below(5); i > 0; --i)
          entries.emplace_back(Value(text() + std::to_string(i)), value(depth + 1));
        return Value::dict_unchecked(std::move(entries));
      }
    }
  }
};

TEST(Repr, MatchesReferenceOnRandomValues) {
  Gen gen;
  for (int round = 0; round < 20000; ++round) {
    Value v = gen.value(0);
    std::string expected;
    ref_repr(expected, v);
    ASSERT_EQ(to_repr(v), expected) << "round " << round;
    if (!v.is_string()) {
      ASSERT_EQ(to_str(v), expected);
    }
    // Appending after existing text, into a buffer with and without spare capacity.
    std::string prefix(gen.below(40), 'p');
    std::string out = prefix;
    if (round % 2) out.reserve(gen.below(4096));
    append_repr(out, v);
    ASSERT_EQ(out, prefix + expected) << "round " << round;
  }
}

TEST(Repr, FloatsMatchReference) {
  Gen gen;
  for (int round = 0; round < 100000; ++round) {
    double d = gen.real();
    std::string expected, got;
    ref_float(expected, d);
    append_float_repr(got, d);
    ASSERT_EQ(got, expected) << d;
  }
}

TEST(Repr, LongStringsCrossBlockBoundaries) {
  // Every position of an escape within and around 16-byte blocks, for each quote rule.
  for (std::string_view special :
       {"'", "\"", "\\", "\n", "\x7f", "\xc3\xa9", "\xc2\xa0", "\xed\xa0\x80"}) {
    for (std::size_t len = 0; len < 70; ++len) {
      for (std::size_t at = 0; at <= len; ++at) {
        std::string s(len, 'x');
        s.insert(at, special);
        if (len % 3 == 0) s += "'";
        Value v(s);
        std::string expected;
        ref_string(expected, v);
        ASSERT_EQ(to_repr(v), expected) << s;
      }
    }
  }
}

TEST(Repr, NestingBound) {
  auto nested = [](std::size_t depth) {
    Value v = Value::list({});
    for (std::size_t i = 0; i < depth; ++i) v = Value::list({v});
    return v;
  };
  // kMaxValueNesting containers print; one more raises RecursionError.
  EXPECT_EQ(to_repr(nested(kMaxValueNesting - 1)).size(), 2 * kMaxValueNesting);
  try {
    to_repr(nested(kMaxValueNesting));
    FAIL() << "no RecursionError";
  } catch (const NestingError& e) {
    EXPECT_EQ(e.error.type, "RecursionError");
  }
  // A dict holding the chain counts the same way, and the bound holds again afterwards.
  Value d = Value::dict_unchecked({{Value("k"), nested(kMaxValueNesting - 1)}});
  EXPECT_THROW(to_repr(d), NestingError);
  EXPECT_EQ(to_repr(nested(kMaxValueNesting - 1)).size(), 2 * kMaxValueNesting);
}

}  // namespace
}  // namespace chatwire
