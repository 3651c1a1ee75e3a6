// Render conformance on the generated context sets of scripts/regen-render-goldens, every
// template of data/templates × each context, with the DEFAULT limits:
//  - "extra" (data/goldens/render/extra/, goldens extra.jsonl with full outputs): features
//    data/conversations does not exercise: documents, template kwargs, JSON-heavy tool
//    schemas and arguments, multimodal parts, tricky text, reasoning around tool calls,
//    legacy roles, empty/null content, 20 tools, a lone system message;
//  - "stress" (data/goldens/render/stress/, goldens stress.jsonl with outputs as UTF-8
//    length + FNV-1a because they are 100-350 KB): a 1000-turn chat and 1000 messages of
//    tool-calling rounds. This is issue 3's promise that the default limits never fire on
//    real templates with 1000-turn conversations.
// Where the oracle renders, chatwire must render the same bytes and generation spans (a
// LimitError is a failure); where it fails, chatwire must fail with the same error type
// (and the same message for raise_exception).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"
#include "jinja/both_ways.hpp"
#include "jinja/test_util.hpp"

namespace {

using chatwire::test::data_path;

constexpr const char* kFrozenNow = "2026-08-19T10:00:00";

const char* const kSets[] = {"extra", "stress"};

// Goldens grouped by set and template: set → template → conversation → golden line.
using Goldens = std::map<std::string, std::map<std::string, std::map<std::string, nlohmann::json>>>;
const Goldens& goldens() {
  static const Goldens table = [] {
    Goldens rows;
    for (const char* set : kSets) {
      for (const auto& line :
           chatwire::test::read_lines(data_path("goldens/render/" + std::string(set) + ".jsonl"))) {
        auto golden = nlohmann::json::parse(line, nullptr, false);
        if (golden.is_discarded()) continue;
        // Keys first: in `a = b` the right side is evaluated (and moved from) before the left.
        const std::string stem = golden.value("template", "");
        const std::string conversation = golden.value("conversation", "");
        rows[set][stem][conversation] = std::move(golden);
      }
    }
    return rows;
  }();
  return table;
}

// Parsed contexts: "set/name" → value.
const std::map<std::string, chatwire::Value>& contexts() {
  static const std::map<std::string, chatwire::Value> table = [] {
    std::map<std::string, chatwire::Value> rows;
    for (const auto& [set, by_template] : goldens()) {
      std::set<std::string> names;
      for (const auto& [stem, by_conversation] : by_template) {
        for (const auto& [name, golden] : by_conversation) names.insert(name);
      }
      for (const auto& name : names) {
        auto text =
            chatwire::test::read_file(data_path("goldens/render/" + set + "/" + name + ".json"));
        if (!text) continue;
        auto parsed = chatwire::parse_json(*text);
        if (parsed.ok()) rows.emplace(set + "/" + name, std::move(parsed.value()));
      }
    }
    return rows;
  }();
  return table;
}

struct Case {
  std::string set, stem;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.set << "/" << c.stem;
}
std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& [set, by_template] : goldens()) {
    for (const auto& [stem, by_conversation] : by_template) out.push_back({set, stem});
  }
  return out;
}

class RenderGenerated : public ::testing::TestWithParam<Case> {};

TEST_P(RenderGenerated, MatchesOracleWithDefaultLimits) {
  const std::string& stem = GetParam().stem;
  const std::string& set = GetParam().set;
  const auto source = chatwire::test::read_file(data_path("templates/" + stem + ".jinja"));
  ASSERT_TRUE(source) << "template " << stem << " is gone: run scripts/regen-render-goldens";
  const chatwire::test::BothWays compiled(*source);
  chatwire::jinja::RenderOptions options;  // default limits on purpose
  options.now = kFrozenNow;

  for (const auto& [conversation, golden] : goldens().at(set).at(stem)) {
    SCOPED_TRACE(stem + " x " + set + "/" + conversation);
    const auto context = contexts().find(set + "/" + conversation);
    ASSERT_NE(context, contexts().end()) << "context " << set << "/" << conversation << " missing";
    std::string optimizer_difference;
    auto result = compiled.render(context->second, options, optimizer_difference);
    EXPECT_EQ(optimizer_difference, "");
    if (golden.value("ok", false)) {
      if (!result.ok()) {
        ADD_FAILURE() << "oracle renders, chatwire fails: " << result.error().to_string();
        continue;
      }
      if (golden.contains("output")) {
        const std::string expected = golden["output"].get<std::string>();
        EXPECT_TRUE(result->output == expected)
            << "output differs: " << chatwire::test::describe_difference(expected, result->output);
      } else {
        const auto bytes = golden["output_bytes"].get<std::size_t>();
        const auto hash = golden["output_fnv1a64"].get<std::string>();
        EXPECT_TRUE(result->output.size() == bytes &&
                    chatwire::test::fnv1a64_hex(result->output) == hash)
            << "output differs: oracle " << bytes << " bytes (FNV-1a " << hash << "), chatwire "
            << result->output.size() << " bytes (" << chatwire::test::fnv1a64_hex(result->output)
            << "); scripts/compare-render shows the difference on the 80-turn conversation";
      }
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
        if (expected_type == "TemplateError" && result.error().type == expected_type) {
          EXPECT_EQ(result.error().message, golden.value("message", ""))
              << "raise_exception message differs";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, RenderGenerated, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.set + "_t" + std::to_string(info.index) + "_" +
                                  chatwire::test::test_name(info.param.stem);
                         });

TEST(RenderGeneratedData, IsPresent) {
  for (const char* set : kSets) {
    EXPECT_TRUE(goldens().count(set) && goldens().at(set).size() >= 150u)
        << "data/goldens/render/" << set << ".jsonl missing: run scripts/regen-render-goldens";
  }
  EXPECT_GE(contexts().size(), 12u) << "contexts under data/goldens/render/{extra,stress}/ missing";
}

}  // namespace
