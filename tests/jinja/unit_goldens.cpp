// Focused unit tests of the Jinja engine, one test per feature file of
// data/goldens/jinja_unit/ (inputs hand-written, expectations from the oracle via
// scripts/regen-jinja-unit-goldens): identical output and generation spans where the
// oracle renders, the same error type where it fails (and the same message for
// raise_exception's TemplateError).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "chatwire/jinja.hpp"
#include "chatwire/value_json.hpp"
#include "jinja/both_ways.hpp"
#include "jinja/test_util.hpp"

namespace {

using chatwire::test::data_path;
using chatwire::test::read_lines;

// CPython prints object addresses; compare without them.
std::string mask_addresses(const std::string& s) {
  static const std::regex kAddress(" at 0x[0-9a-f]+");
  return std::regex_replace(s, kAddress, "");
}

class JinjaUnit : public ::testing::TestWithParam<std::string> {};

TEST_P(JinjaUnit, MatchesOracle) {
  const auto lines = read_lines(data_path("goldens/jinja_unit/" + GetParam() + ".jsonl"));
  ASSERT_FALSE(lines.empty()) << "missing goldens for " << GetParam();
  for (const auto& line : lines) {
    if (line.empty()) continue;
    auto c = nlohmann::ordered_json::parse(line);
    const std::string id = c["id"];
    const std::string source = c["template"];
    SCOPED_TRACE(id + ": " + source);
    const auto& oracle = c["oracle"];
    // A documented difference (e.g. Python big integers): chatwire must fail cleanly.
    const chatwire::test::BothWays compiled(source);
    std::string optimizer_difference;
    if (c.contains("known_difference")) {
      auto r = compiled.render(chatwire::from_json(c["context"]), {}, optimizer_difference);
      EXPECT_EQ(optimizer_difference, "");
      if (compiled.optimized()) {
        EXPECT_FALSE(r.ok()) << "known difference now renders: remove the marker";
      }
      continue;
    }
    chatwire::jinja::RenderOptions options;
    if (c.contains("now")) options.now = c["now"].get<std::string>();
    auto rendered =
        compiled.render(chatwire::from_json(c["context"]), options, optimizer_difference);
    EXPECT_EQ(optimizer_difference, "");
    if (oracle["ok"].get<bool>()) {
      ASSERT_TRUE(rendered.ok()) << "oracle renders, chatwire fails: "
                                 << rendered.error().to_string();
      EXPECT_EQ(mask_addresses(rendered->output), mask_addresses(oracle["output"]));
      if (oracle.contains("generation")) {
        EXPECT_TRUE(rendered->uses_generation);
        std::vector<std::pair<std::size_t, std::size_t>> expected, actual;
        for (const auto& span : oracle["generation"]) expected.emplace_back(span[0], span[1]);
        for (const auto& span : rendered->generation) actual.emplace_back(span.begin, span.end);
        EXPECT_EQ(actual, expected);
        // The byte spans are the same positions in the UTF-8 output (clamped to its end).
        const std::string& text = rendered->output;
        auto byte_of = [&](std::size_t points) {
          std::size_t byte = 0;
          for (std::size_t p = 0; p < points && byte < text.size(); ++p) {
            ++byte;
            while (byte < text.size() && (static_cast<unsigned char>(text[byte]) & 0xC0) == 0x80)
              ++byte;
          }
          return byte;
        };
        for (const auto& span : rendered->generation) {
          EXPECT_EQ(span.begin_byte, byte_of(span.begin)) << "span " << span.begin;
          EXPECT_EQ(span.end_byte, byte_of(span.end)) << "span " << span.end;
        }
      } else {
        EXPECT_FALSE(rendered->uses_generation);
      }
    } else {
      ASSERT_FALSE(rendered.ok()) << "oracle fails with " << oracle["error_type"]
                                  << ", chatwire renders: " << rendered->output;
      EXPECT_EQ(rendered.error().type, oracle["error_type"].get<std::string>())
          << rendered.error().to_string();
      if (oracle["error_type"] == "TemplateError" ||
          oracle["error_type"] == "TemplateSyntaxError") {
        EXPECT_EQ(rendered.error().message, oracle["message"].get<std::string>());
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Features, JinjaUnit,
                         ::testing::Values("whitespace", "expressions", "statements", "filters",
                                           "tests", "sandbox", "undefined", "generation",
                                           "fast_paths"));

}  // namespace
