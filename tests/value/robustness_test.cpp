// Untrusted input must never crash: random mutations of JSON text, random strings
// through every str method, random slices and format specs. Run under ASan+UBSan too.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "chatwire/value.hpp"
#include "chatwire/value_json.hpp"

namespace chatwire {
namespace {

const char* const kAlphabet[] = {"a",
                                 "b",
                                 " ",
                                 "\t",
                                 "\n",
                                 "\r",
                                 ",",
                                 ":",
                                 "{",
                                 "}",
                                 "[",
                                 "]",
                                 "\"",
                                 "\\",
                                 "u",
                                 "d",
                                 "8",
                                 "0",
                                 "-",
                                 "+",
                                 ".",
                                 "e",
                                 "é",
                                 "😀",
                                 "\xED\xA0\x80",
                                 "\xC3",
                                 "\x80",
                                 "%",
                                 "{0}",
                                 "ß",
                                 "Σ",
                                 "\x1c",
                                 "\xE2\x80\xA8",
                                 "x",
                                 "N",
                                 "1",
                                 "9",
                                 "*",
                                 "#"};

std::string random_text(std::mt19937& rng, std::size_t max_pieces) {
  std::uniform_int_distribution<std::size_t> count(0, max_pieces);
  std::uniform_int_distribution<std::size_t> piece(0, std::size(kAlphabet) - 1);
  std::string s;
  for (std::size_t i = count(rng); i > 0; --i) s += kAlphabet[piece(rng)];
  return s;
}

TEST(Robustness, MutatedJsonNeverCrashes) {
  std::mt19937 rng(1234);
  const std::string seed =
      R"({"messages": [{"role": "user", "content": "h\u00e9 \ud83d\ude00"}, {"n": -1.5e3, "t": true, "z": null, "l": [1, [2, {}]]}]})";
  std::uniform_int_distribution<int> op(0, 2);
  int parsed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string text = seed;
    std::uniform_int_distribution<std::size_t> at(0, text.size());
    for (int m = 0; m < 3; ++m) {
      std::size_t pos = at(rng) % (text.size() + 1);
      switch (op(rng)) {
        case 0:
          text.insert(pos, random_text(rng, 2));
          break;
        case 1:
          if (pos < text.size()) text.erase(pos, 1);
          break;
        default:
          if (pos < text.size()) text[pos] = static_cast<char>(rng() & 0xFF);
      }
    }
    auto v = parse_json(text);
    if (v) {
      ++parsed;
      std::string out;
      append_repr(out, *v);
      JsonDumpOptions options;
      options.ensure_ascii = (iter & 1) != 0;
      options.sort_keys = (iter & 2) != 0;
      (void)dump_json(out, *v, options);
      (void)to_json(*v);
    } else {
      EXPECT_FALSE(v.error().type.empty());
    }
  }
  EXPECT_GT(parsed, 100);
}

TEST(Robustness, RandomStringsThroughEveryMethod) {
  std::mt19937 rng(99);
  const char* const methods[] = {
      "strip",      "lstrip",    "rstrip",     "split",        "rsplit",       "splitlines",
      "startswith", "endswith",  "replace",    "find",         "rfind",        "index",
      "rindex",     "count",     "upper",      "lower",        "title",        "capitalize",
      "swapcase",   "casefold",  "isalpha",    "isdigit",      "isalnum",      "isspace",
      "isupper",    "islower",   "istitle",    "isnumeric",    "isdecimal",    "isidentifier",
      "isascii",    "join",      "format",     "zfill",        "center",       "ljust",
      "rjust",      "partition", "rpartition", "removeprefix", "removesuffix", "expandtabs"};
  std::uniform_int_distribution<int> nargs(0, 3);
  std::uniform_int_distribution<int> kind(0, 3);
  for (int iter = 0; iter < 20000; ++iter) {
    Value self(random_text(rng, 8));
    std::vector<Value> args;
    for (int i = nargs(rng); i > 0; --i) {
      switch (kind(rng)) {
        case 0:
          args.emplace_back(random_text(rng, 3));
          break;
        case 1:
          args.emplace_back(static_cast<int>(rng() % 21) - 10);
          break;
        case 2:
          args.push_back(Value::none());
          break;
        default:
          args.push_back(Value::tuple({Value(random_text(rng, 2)), Value("a")}));
      }
    }
    const char* name = methods[rng() % std::size(methods)];
    auto r = call_method(self, name, {args, {}});
    if (r && r->is_string()) {
      // Flags must agree with the bytes.
      std::string_view s = r->as_string();
      std::size_t cps = 0;
      bool ascii = true;
      for (unsigned char c : s) {
        cps += (c & 0xC0) != 0x80;
        ascii &= c < 0x80;
      }
      EXPECT_EQ(r->string_length(), cps) << name << " " << to_repr(self);
      EXPECT_EQ(r->string_is_ascii(), ascii) << name << " " << to_repr(self);
    }
    auto sliced = slice(self, static_cast<int>(rng() % 21) - 10, static_cast<int>(rng() % 21) - 10,
                        static_cast<int>(rng() % 7) - 3);
    (void)sliced;
    std::string out;
    (void)format_spec(out, self, random_text(rng, 3));
    (void)percent_format(self.as_string(), Value::tuple(args));
  }
}

}  // namespace
}  // namespace chatwire
