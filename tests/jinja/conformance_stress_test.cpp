// Render conformance under load: every template of data/templates × two generated
// 1000-message contexts (data/goldens/render/stress/: a 1000-turn chat and 250 rounds of
// tool calls), rendered with the DEFAULT limits and compared with the oracle
// (data/goldens/render/stress.jsonl, from scripts/regen-render-goldens; outputs by UTF-8
// length and FNV-1a because they are 100-300 KB each).
//
// This is issue 3's promise that the default limits never fire on real templates with
// conversations of 1000 turns: where the oracle renders, chatwire must render the same
// bytes (a LimitError is a failure); where it fails, chatwire must fail with the same type.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"
#include "jinja/test_util.hpp"

namespace {

using chatwire::test::data_path;

constexpr const char* kFrozenNow = "2026-08-19T10:00:00";

// Goldens grouped by template: conversation → golden line.
using StressGoldens = std::map<std::string, std::map<std::string, nlohmann::json>>;
const StressGoldens& stress_goldens() {
  static const StressGoldens table = [] {
    StressGoldens rows;
    for (const auto& line : chatwire::test::read_lines(data_path("goldens/render/stress.jsonl"))) {
      auto golden = nlohmann::json::parse(line, nullptr, false);
      if (golden.is_discarded()) continue;
      // Keys first: in `a = b` the right side is evaluated (and moved from) before the left.
      const std::string stem = golden.value("template", "");
      const std::string conversation = golden.value("conversation", "");
      rows[stem][conversation] = std::move(golden);
    }
    return rows;
  }();
  return table;
}

const std::map<std::string, chatwire::Value>& stress_contexts() {
  static const std::map<std::string, chatwire::Value> table = [] {
    std::map<std::string, chatwire::Value> rows;
    std::set<std::string> names;
    for (const auto& [stem, by_conversation] : stress_goldens()) {
      for (const auto& [name, golden] : by_conversation) names.insert(name);
    }
    for (const auto& name : names) {
      auto text = chatwire::test::read_file(data_path("goldens/render/stress/" + name + ".json"));
      if (!text) continue;
      auto parsed = chatwire::parse_json(*text);
      if (parsed.ok()) rows.emplace(name, std::move(parsed.value()));
    }
    return rows;
  }();
  return table;
}

std::vector<std::string> stems() {
  std::vector<std::string> out;
  for (const auto& [stem, by_conversation] : stress_goldens()) out.push_back(stem);
  return out;
}

class RenderStress : public ::testing::TestWithParam<std::string> {};

TEST_P(RenderStress, ThousandMessagesWithDefaultLimits) {
  const std::string& stem = GetParam();
  const auto source = chatwire::test::read_file(data_path("templates/" + stem + ".jinja"));
  ASSERT_TRUE(source) << "template " << stem << " is gone: run scripts/regen-render-goldens";
  auto compiled = chatwire::jinja::Template::compile(*source);
  chatwire::jinja::RenderOptions options;  // default limits on purpose
  options.now = kFrozenNow;

  for (const auto& [conversation, golden] : stress_goldens().at(stem)) {
    SCOPED_TRACE(stem + " x " + conversation);
    const auto context = stress_contexts().find(conversation);
    ASSERT_NE(context, stress_contexts().end()) << "stress context " << conversation << " missing";
    auto result = compiled.ok() ? compiled->render(context->second, options)
                                : chatwire::Result<chatwire::jinja::RenderResult>(compiled.error());
    if (golden.value("ok", false)) {
      if (!result.ok()) {
        ADD_FAILURE() << "oracle renders, chatwire fails: " << result.error().to_string();
        continue;
      }
      const auto bytes = golden["output_bytes"].get<std::size_t>();
      const auto hash = golden["output_fnv1a64"].get<std::string>();
      EXPECT_TRUE(result->output.size() == bytes &&
                  chatwire::test::fnv1a64_hex(result->output) == hash)
          << "output differs: oracle " << bytes << " bytes (FNV-1a " << hash << "), chatwire "
          << result->output.size() << " bytes (" << chatwire::test::fnv1a64_hex(result->output)
          << "); scripts/compare-render shows the difference on the 80-turn conversation";
      std::vector<std::pair<std::size_t, std::size_t>> expected, actual;
      if (golden.contains("generation")) {
        for (const auto& span : golden["generation"]) {
          expected.emplace_back(span[0].get<std::size_t>(), span[1].get<std::size_t>());
        }
      }
      for (const auto& span : result->generation) actual.emplace_back(span.begin, span.end);
      EXPECT_TRUE(expected == actual) << "generation spans differ (" << expected.size()
                                      << " expected, " << actual.size() << " found)";
    } else {
      const std::string expected_type = golden.value("error_type", "");
      if (result.ok()) {
        ADD_FAILURE() << "oracle fails with " << expected_type << ": "
                      << golden.value("message", "") << "; chatwire renders";
      } else {
        EXPECT_EQ(result.error().type, expected_type)
            << "oracle: " << golden.value("message", "") << "; chatwire "
            << result.error().to_string();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Templates, RenderStress, ::testing::ValuesIn(stems()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return "t" + std::to_string(info.index) + "_" +
                                  chatwire::test::test_name(info.param);
                         });

TEST(RenderStressData, IsPresent) {
  EXPECT_GE(stress_goldens().size(), 150u)
      << "data/goldens/render/stress.jsonl missing: run scripts/regen-render-goldens";
  EXPECT_EQ(stress_contexts().size(), 2u) << "contexts in data/goldens/render/stress/ missing";
}

}  // namespace
