// A template's delimiter patterns read as the `regex` module reads them (transformers compiles
// them with it): every line of data/goldens/response/regex_module.jsonl, written by
// scripts/regen-response-regex-goldens from the regex module, gives the same first match; a
// construct chatwire refuses is listed there with its reason and must be a ValueError naming the
// field, never a silently different match.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "response/internal.hpp"

namespace chatwire::response {
namespace {

TEST(RegexModule, DelimiterPatternsMatchAsTheRegexModule) {
  std::ifstream in(std::string(CHATWIRE_DATA_DIR) + "/goldens/response/regex_module.jsonl");
  ASSERT_TRUE(in) << "regex_module.jsonl missing";
  std::size_t same = 0, refused = 0, lines = 0;
  for (std::string line; std::getline(in, line);) {
    ++lines;
    const auto c = nlohmann::json::parse(line);
    const std::string pattern = c["pattern"], subject = c["subject"];
    auto re =
        Regex::python(pattern, "fields.x.open_pattern", Limits{}, Regex::Syntax::kRegexModule);
    if (c.contains("chatwire_refuses")) {
      ASSERT_FALSE(re.ok()) << pattern << " is listed as refused but compiles";
      EXPECT_EQ(re.error().type, "ValueError") << pattern;
      EXPECT_EQ(re.error().path, "fields.x.open_pattern") << pattern;
      ++refused;
      continue;
    }
    ASSERT_FALSE(c.contains("error")) << "the regex module refuses " << pattern;
    ASSERT_TRUE(re.ok()) << pattern << ": " << re.error().to_string();
    auto m = re->search(subject, 0, false);
    ASSERT_TRUE(m.ok()) << pattern;
    if (c["span"].is_null()) {
      EXPECT_EQ(m->found, Regex::Found::kNone) << pattern << " on " << subject;
    } else {
      ASSERT_EQ(m->found, Regex::Found::kComplete) << pattern << " on " << subject;
      EXPECT_EQ(m->start, c["span"][0].get<std::size_t>()) << pattern << " on " << subject;
      EXPECT_EQ(m->end, c["span"][1].get<std::size_t>()) << pattern << " on " << subject;
    }
    ++same;
  }
  EXPECT_EQ(same + refused, lines);
  EXPECT_GT(refused, 0u);
  std::printf(
      "[ regex module ] %zu of %zu patterns match as the regex module, %zu refused as listed\n",
      same, lines, refused);
}

// A content parser's tag_pattern is compiled with re, which has none of the regex module's
// extensions and whose \s holds U+001C..U+001F.
TEST(RegexModule, ContentPatternsStayRe) {
  for (const char* pattern : {"(?<n>a)", "\\p{L}", "\\mword", "\\G"}) {
    auto re = Regex::python(pattern, "p", Limits{}, Regex::Syntax::kRe);
    EXPECT_FALSE(re.ok()) << pattern;
  }
  auto space = Regex::python("\\s", "p", Limits{});
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(space->search("\x1c", 0, false)->found, Regex::Found::kComplete);
  auto module_space = Regex::python("\\s", "p", Limits{}, Regex::Syntax::kRegexModule);
  ASSERT_TRUE(module_space.ok());
  EXPECT_EQ(module_space->search("\x1c", 0, false)->found, Regex::Found::kNone);
}

}  // namespace
}  // namespace chatwire::response
