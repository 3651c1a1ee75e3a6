// The Python rules the response parser reproduces, each checked against what CPython 3 gives
// (stated beside each case): regexes in `re` syntax on PCRE2, str.strip, int(), float() and
// json.loads, including the constructs refused because PCRE2 would read them differently.
#include <gtest/gtest.h>

#include <cmath>

#include "response/internal.hpp"

namespace chatwire::response {
namespace {

Regex::Found find(const std::string& pattern, const std::string& subject, bool partial = false) {
  auto re = Regex::python(pattern, "p", Limits{});
  EXPECT_TRUE(re.ok()) << pattern << ": " << (re.ok() ? "" : re.error().to_string());
  if (!re.ok()) return Regex::Found::kNone;
  auto m = re->search(subject, 0, partial);
  EXPECT_TRUE(m.ok());
  return m.ok() ? m->found : Regex::Found::kNone;
}

constexpr auto kMatch = Regex::Found::kComplete;
constexpr auto kNone = Regex::Found::kNone;

TEST(PythonRegex, EscapesMeanWhatPythonMeans) {
  EXPECT_EQ(find(R"(a\Z)", "a\n"), kNone);  // re.search(r"a\Z", "a\n") is None
  EXPECT_EQ(find(R"(a$)", "a\n"), kMatch);  // $ also matches before a final newline
  EXPECT_EQ(find(R"(\v)", "\n"), kNone);    // \v is only U+000B
  EXPECT_EQ(find(R"(\v)", "\x0b"), kMatch);
  EXPECT_EQ(find(R"(\s)", "\x1c"), kMatch);  // str.isspace() holds U+001C..U+001F
  EXPECT_EQ(find(R"(\S)", "\x1f"), kNone);
  EXPECT_EQ(find(R"(\u00e9)", "\xc3\xa9"), kMatch);
  EXPECT_EQ(find(R"(\101)", "A"), kMatch);  // three octal digits
  EXPECT_EQ(find(R"(\0)", std::string(1, '\0')), kMatch);
  EXPECT_EQ(find(R"((a)\1)", "aa"), kMatch);
  EXPECT_EQ(find(R"((?P<n>a)(?P=n))", "aa"), kMatch);
  EXPECT_EQ(find(R"(\w+)", "\xc3\xa9t\xc3\xa9"), kMatch);  // Unicode \w
}

TEST(PythonRegex, BracesAndClasses) {
  EXPECT_EQ(find(R"(^a{,2}b$)", "aab"), kMatch);  // {,n} is {0,n} in Python
  EXPECT_EQ(find(R"(a{x)", "a{x"), kMatch);       // not a quantifier: a literal brace
  EXPECT_EQ(find(R"([[])", "["), kMatch);         // '[' inside a class is literal
  EXPECT_EQ(find(R"(^[[:a]]$)", "a]"), kMatch);   // no POSIX classes in Python
  EXPECT_EQ(find(R"([]a])", "]"), kMatch);        // a leading ']' is literal
}

TEST(PythonRegex, RefusedConstructsAreNamed) {
  for (const char* pattern : {R"(\p{L})", R"(\N{EM DASH})", "(?x)a", "(?<n>a)", "(*FAIL)", R"(\e)",
                              "(?a)x", R"([\S])", "(a", R"(\2(a))"}) {
    auto re = Regex::python(pattern, "fields.x.open_pattern", Limits{});
    ASSERT_FALSE(re.ok()) << pattern;
    EXPECT_EQ(re.error().type, "ValueError");
    EXPECT_EQ(re.error().path, "fields.x.open_pattern");
  }
}

TEST(PythonRegex, PartialMatchHoldsAPossibleDelimiter) {
  EXPECT_EQ(find("</think>", "abc</th", true), Regex::Found::kPartial);
  EXPECT_EQ(find("</think>", "abc", true), kNone);
  EXPECT_EQ(find(R"(call:(?P<name>\w+))", "x call:fo", true), Regex::Found::kPartial);
}

TEST(PythonValues, StripIsUnicodeWhitespace) {
  EXPECT_EQ(py_strip("\xe3\x80\x80 x\x1c\n"), "x");       // U+3000 and U+001C are whitespace
  EXPECT_EQ(py_strip("\xe2\x80\x8bx"), "\xe2\x80\x8bx");  // U+200B is not
}

TEST(PythonValues, IntAndFloat) {
  EXPECT_EQ(py_int(" 007 ").value, 7);
  EXPECT_EQ(py_int("1_000").value, 1000);
  EXPECT_EQ(py_int("-9223372036854775808").value, INT64_MIN);
  EXPECT_EQ(py_int("1__0").kind, PyResult::Kind::kValueError);
  EXPECT_EQ(py_int("1.0").kind, PyResult::Kind::kValueError);
  EXPECT_EQ(py_int("99999999999999999999").kind, PyResult::Kind::kRefused);
  EXPECT_EQ(py_int("\xd9\xa3").kind,
            PyResult::Kind::kRefused);  // ARABIC-INDIC THREE: int() gives 3
  EXPECT_EQ(py_float("1_0.5").value, 10.5);
  EXPECT_EQ(py_float(".5").value, 0.5);
  EXPECT_EQ(py_float("5.").value, 5.0);
  EXPECT_TRUE(py_float("5.").value.is_number_float());
  EXPECT_TRUE(std::isinf(py_float("-Infinity").value.get<double>()));
  EXPECT_TRUE(std::isnan(py_float("nan").value.get<double>()));
  EXPECT_EQ(py_float("1e").kind, PyResult::Kind::kValueError);
}

TEST(PythonValues, JsonLoads) {
  const auto loads = [](const std::string& s) { return py_json_loads(s, 512); };
  EXPECT_TRUE(std::isnan(loads("NaN").value.get<double>()));
  EXPECT_EQ(loads(R"({"a": 1, "b": 0, "a": 2})").value.dump(), R"({"a":2,"b":0})");
  EXPECT_EQ(loads("\xef\xbb\xbf"
                  "1")
                .kind,
            PyResult::Kind::kValueError);  // BOM
  EXPECT_EQ(loads("[1,]").kind, PyResult::Kind::kValueError);
  EXPECT_EQ(loads("01").kind, PyResult::Kind::kValueError);
  EXPECT_EQ(loads("1 2").kind, PyResult::Kind::kValueError);
  EXPECT_EQ(loads(" -0 ").value.dump(), "0");
  EXPECT_TRUE(loads("1.0").value.is_number_float());
  EXPECT_TRUE(loads("1E2").value.is_number_float());
  EXPECT_EQ(loads(R"("\ud83d\ude00")").value.get<std::string>(), "\xf0\x9f\x98\x80");
  EXPECT_EQ(loads(R"("\ud800")").kind, PyResult::Kind::kRefused);  // a lone surrogate
  EXPECT_EQ(loads("\"a\tb\"").kind, PyResult::Kind::kValueError);  // control character
  EXPECT_EQ(py_json_loads("[[[1]]]", 2).kind, PyResult::Kind::kRefused);
}

TEST(ResponseTemplate, LoadErrorsNameTheKeyPath) {
  const auto error_of_spec = [](const char* text) {
    auto t = Template::from_json_text(text);
    EXPECT_FALSE(t.ok()) << text;
    return t.ok() ? Error{} : t.error();
  };
  EXPECT_EQ(error_of_spec(
                R"({"start_anchor": "a", "fields": {"x": {"open": "<x>", "transform_each": 1}}})")
                .path,
            "fields.x.transform_each");
  EXPECT_EQ(
      error_of_spec(R"({"start_anchor": "a", "fields": {"x": {"open_pattern": "(?x)a"}}})").path,
      "fields.x.open_pattern");
  EXPECT_EQ(error_of_spec(R"({"start_anchor": "a", "fields": {"x": {"content": "json",
              "content_args": {"string_delims": [["", "b"]]}}}})")
                .path,
            "fields.x.content_args.string_delims");
  EXPECT_EQ(error_of_spec(R"({"start_anchor": "a", "defaults": [], "fields": {"x": {}}})").path,
            "defaults");
}

TEST(ResponseTemplate, RepeatsAndOptionalAreReadByTruthiness) {
  // transformers: `if field.repeats` and `not f.optional`, so null makes a field required.
  auto t = Template::from_json_text(
      R"({"start_anchor": "a", "fields": {"x": {"open": "<x>", "close": "</x>", "repeats": 1, "optional": null}}})");
  ASSERT_TRUE(t.ok());
  auto listed = parse_response("<x>1</x>", *t, "");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->dump(), R"({"x":["1"]})");
  auto missing = parse_response("none", *t, "");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().type, "ValueError");
}

TEST(ResponseParser, SplitUtf8AndEmptyLoopsAreHandled) {
  auto t = Template::from_json_text(R"({"start_anchor": "a", "fields": {"c": {}}})");
  ASSERT_TRUE(t.ok());
  auto p = Parser::create(*t, "");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->feed("\xc3").ok());  // half of é waits for the rest
  ASSERT_TRUE(p->feed("\xa9").ok());
  auto done = p->finalize();
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->message.dump(), R"({"c":"é"})");
  auto bad = Parser::create(*t, "");
  EXPECT_FALSE(bad->feed("\xff").ok());
  // Zero-width opens and closes at one position would loop in transformers; here they stop.
  auto loop = Template::from_json_text(
      R"({"start_anchor": "a", "fields": {"x": {"open_pattern": "", "close_pattern": ""}}})");
  ASSERT_TRUE(loop.ok());
  auto r = parse_response("abc", *loop, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, "LimitError");
  EXPECT_FALSE(parse_response("abc", *loop, std::nullopt).ok());  // prefix is required
}

// A repeated group keeps one PCRE2 backtracking frame per repetition; Python's engines have no
// such bound, so a long region between delimiters must not hit the depth limit (it did from
// 100,000 characters).
TEST(ResponseParser, LongRepeatedGroupsMatch) {
  auto t = Template::from_json_text(
      R"({"start_anchor": "a", "fields": {"x": {"open_pattern": "<h>(?:(?!</h>).)*</h>",
          "close": "</x>"}}})");
  ASSERT_TRUE(t.ok());
  std::string output = "<h>";  // (appended: GCC 12 warns of a bogus bound on `"<h>" + string`)
  output.append(300000, 'y');
  output += "</h>body</x>";
  auto r = parse_response(output, *t, "");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->dump(), R"({"x":"body"})");
}

TEST(ResponseParser, ErrorsComeInStreamOrder) {
  // The region before the invalid byte closes first, so its error is the one reported, fed
  // whole or byte by byte (found by fuzz_response_template).
  auto t = Template::from_json_text(
      R"({"start_anchor": "a", "fields": {"j": {"open": "<j>", "close": "</j>", "content": "json"}}})");
  ASSERT_TRUE(t.ok());
  const std::string output = "<j>{\"a\": 99999999999999999999}</j>\xff";
  auto whole = parse_response(output, *t, "");
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.error().type, "LimitError");
  auto p = Parser::create(*t, "");
  std::optional<Error> first;
  for (char c : output) {
    auto events = p->feed(std::string(1, c));
    if (!events.ok()) {
      first = events.error();
      break;
    }
  }
  ASSERT_TRUE(first);
  EXPECT_EQ(first->type, "LimitError");
}

}  // namespace
}  // namespace chatwire::response
