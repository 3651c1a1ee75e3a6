// Render conformance: every template of data/templates × every context of
// data/conversations, rendered through the public API and compared with the oracle's
// results committed in data/goldens/render/<template>.jsonl (scripts/regen-render-goldens).
//
// Where the oracle renders: byte-identical output and the same {% generation %} spans
// (code points). Where it fails: the same error_type, and for raise_exception
// (TemplateError) the same message. A mismatch on error type is tolerated only when it
// is listed with a reason in data/goldens/render/known_differences.tsv, and that list
// may hold at most 1% of the failing pairs (the bar). Output is never excused.
//
// One test per template (filter with --gtest_filter='*Qwen*'); a summary of the whole
// run is printed at the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"
#include "jinja/both_ways.hpp"
#include "jinja/test_util.hpp"

namespace {

using chatwire::test::data_path;
using chatwire::test::describe_difference;

// The instant the goldens were rendered with (scripts/regen-render-goldens FROZEN_NOW).
constexpr const char* kFrozenNow = "2026-08-19T10:00:00";
// The issue allows a different error type on at most 1% of the pairs the oracle rejects.
constexpr double kMaxKnownDifferenceShare = 0.01;

std::vector<std::string> template_stems() {
  std::vector<std::string> stems;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_path("templates"), ec)) {
    if (entry.path().extension() == ".jinja") stems.push_back(entry.path().stem().string());
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

// known_differences.tsv: "template<TAB>conversation<TAB>reason", '#' comments.
using PairKey = std::pair<std::string, std::string>;
const std::map<PairKey, std::string>& known_differences() {
  static const std::map<PairKey, std::string> table = [] {
    std::map<PairKey, std::string> rows;
    for (const auto& line :
         chatwire::test::read_lines(data_path("goldens/render/known_differences.tsv"))) {
      if (line[0] == '#') continue;
      const auto tab1 = line.find('\t');
      const auto tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
      if (tab2 == std::string::npos) continue;  // malformed: KnownDifferences.AreWellFormed says so
      rows[{line.substr(0, tab1), line.substr(tab1 + 1, tab2 - tab1 - 1)}] = line.substr(tab2 + 1);
    }
    return rows;
  }();
  return table;
}

// Context JSON text per conversation name, read once.
const std::map<std::string, chatwire::Value>& contexts() {
  static const std::map<std::string, chatwire::Value> table = [] {
    std::map<std::string, chatwire::Value> rows;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(data_path("conversations"), ec)) {
      if (entry.path().extension() != ".json") continue;
      auto text = chatwire::test::read_file(entry.path().string());
      if (!text) continue;
      auto parsed = chatwire::parse_json(*text);
      // A context that does not parse is reported by the pair that needs it.
      if (parsed.ok()) rows.emplace(entry.path().stem().string(), std::move(parsed.value()));
    }
    return rows;
  }();
  return table;
}

struct Tally {
  std::mutex mutex;
  std::size_t rendered_total = 0, rendered_identical = 0;
  std::size_t errors_total = 0, error_type_matches = 0, errors_excused = 0;
  std::map<std::string, std::size_t> mismatches_by_kind;
  std::size_t templates_run = 0;
};
Tally& tally() {
  static Tally t;
  return t;
}

class RenderConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(RenderConformance, MatchesOracle) {
  const std::string& stem = GetParam();
  const auto source = chatwire::test::read_file(data_path("templates/" + stem + ".jinja"));
  ASSERT_TRUE(source) << "cannot read template " << stem;
  const auto golden_lines =
      chatwire::test::read_lines(data_path("goldens/render/" + stem + ".jsonl"));
  ASSERT_FALSE(golden_lines.empty())
      << "no goldens for " << stem << ": run scripts/regen-render-goldens";

  const chatwire::test::BothWays compiled(*source);
  chatwire::jinja::RenderOptions options;
  options.now = kFrozenNow;

  std::size_t rendered_total = 0, rendered_identical = 0;
  std::size_t errors_total = 0, error_type_matches = 0, errors_excused = 0;
  std::map<std::string, std::size_t> mismatch_kinds;

  for (const auto& line : golden_lines) {
    const auto golden = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(golden.is_discarded()) << "bad golden line in " << stem << ".jsonl";
    const std::string conversation = golden.value("conversation", "");
    const bool oracle_ok = golden.value("ok", false);
    SCOPED_TRACE(stem + " x " + conversation);

    const auto context = contexts().find(conversation);
    ASSERT_NE(context, contexts().end())
        << "conversation " << conversation << " missing or not parsable";

    std::string optimizer_difference;
    auto result = compiled.render(context->second, options, optimizer_difference);
    EXPECT_EQ(optimizer_difference, "");

    if (oracle_ok) {
      ++rendered_total;
      const std::string expected = golden.value("output", "");
      if (!result.ok()) {
        ++mismatch_kinds["failed where the oracle renders"];
        ADD_FAILURE() << "oracle renders, chatwire fails: " << result.error().to_string();
        continue;
      }
      bool identical = true;
      if (result->output != expected) {
        identical = false;
        ++mismatch_kinds["output differs"];
        ADD_FAILURE() << "output differs: " << describe_difference(expected, result->output);
      }
      std::vector<std::pair<std::size_t, std::size_t>> expected_spans, actual_spans;
      if (golden.contains("generation")) {
        for (const auto& span : golden["generation"]) {
          expected_spans.emplace_back(span[0].get<std::size_t>(), span[1].get<std::size_t>());
        }
      }
      for (const auto& span : result->generation) actual_spans.emplace_back(span.begin, span.end);
      if (expected_spans != actual_spans) {
        identical = false;
        ++mismatch_kinds["generation spans differ"];
        std::ostringstream msg;
        msg << "generation spans differ: expected";
        for (auto [b, e] : expected_spans) msg << " [" << b << "," << e << ")";
        msg << ", got";
        for (auto [b, e] : actual_spans) msg << " [" << b << "," << e << ")";
        ADD_FAILURE() << msg.str();
      }
      // Byte spans: the same positions in the UTF-8 output (clamped to its end).
      for (const auto& span : result->generation) {
        auto byte_of = [&](std::size_t points) {
          std::size_t byte = 0;
          for (std::size_t p = 0; p < points && byte < result->output.size(); ++p) {
            ++byte;
            while (byte < result->output.size() &&
                   (static_cast<unsigned char>(result->output[byte]) & 0xC0) == 0x80)
              ++byte;
          }
          return byte;
        };
        if (span.begin_byte != byte_of(span.begin) || span.end_byte != byte_of(span.end)) {
          identical = false;
          ++mismatch_kinds["generation byte spans differ"];
          ADD_FAILURE() << "byte span [" << span.begin_byte << "," << span.end_byte
                        << ") is not code point span [" << span.begin << "," << span.end << ")";
          break;
        }
      }
      if (identical) ++rendered_identical;
      continue;
    }

    ++errors_total;
    const std::string expected_type = golden.value("error_type", "");
    const std::string expected_message = golden.value("message", "");
    std::string problem;
    if (result.ok()) {
      problem = "oracle fails with " + expected_type + ": " + expected_message +
                "; chatwire renders " + std::to_string(result->output.size()) + " bytes";
      ++mismatch_kinds["renders where the oracle fails"];
    } else if (result.error().type != expected_type) {
      problem = "error type differs: oracle " + expected_type + ": " + expected_message +
                "; chatwire " + result.error().to_string();
      ++mismatch_kinds["error type differs"];
    } else if (expected_type == "TemplateError" && result.error().message != expected_message) {
      // raise_exception's message is part of the template's contract.
      problem = "raise_exception message differs: oracle \"" + expected_message +
                "\"; chatwire \"" + result.error().message + "\"";
      ++mismatch_kinds["raise_exception message differs"];
    }
    const auto known = known_differences().find({stem, conversation});
    if (problem.empty()) {
      ++error_type_matches;
      if (known != known_differences().end()) {
        std::printf(
            "[ NOTE ] %s x %s now matches the oracle: remove it from known_differences.tsv\n",
            stem.c_str(), conversation.c_str());
      }
    } else if (known != known_differences().end()) {
      ++errors_excused;
    } else {
      ADD_FAILURE() << problem;
    }
  }

  std::lock_guard lock(tally().mutex);
  auto& t = tally();
  ++t.templates_run;
  t.rendered_total += rendered_total;
  t.rendered_identical += rendered_identical;
  t.errors_total += errors_total;
  t.error_type_matches += error_type_matches;
  t.errors_excused += errors_excused;
  for (const auto& [kind, n] : mismatch_kinds) t.mismatches_by_kind[kind] += n;
}

INSTANTIATE_TEST_SUITE_P(Templates, RenderConformance, ::testing::ValuesIn(template_stems()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           // Index prefix keeps names unique after sanitising.
                           return "t" + std::to_string(info.index) + "_" +
                                  chatwire::test::test_name(info.param);
                         });

// The list of excused pairs must name real failing pairs and stay within 1% of them.
TEST(RenderConformanceKnownDifferences, AreFewAndNameFailingPairs) {
  std::size_t oracle_failures = 0;
  std::set<PairKey> failing_pairs;
  for (const auto& stem : template_stems()) {
    for (const auto& line :
         chatwire::test::read_lines(data_path("goldens/render/" + stem + ".jsonl"))) {
      const auto golden = nlohmann::json::parse(line, nullptr, false);
      if (golden.is_discarded() || golden.value("ok", true)) continue;
      ++oracle_failures;
      failing_pairs.insert({stem, golden.value("conversation", "")});
    }
  }
  for (const auto& [pair, reason] : known_differences()) {
    EXPECT_TRUE(failing_pairs.count(pair)) << pair.first << " x " << pair.second
                                           << " is listed in known_differences.tsv but the oracle "
                                              "renders it (output is never excused)";
    EXPECT_FALSE(reason.empty()) << pair.first << " x " << pair.second << " has no reason";
  }
  EXPECT_LE(static_cast<double>(known_differences().size()),
            kMaxKnownDifferenceShare * static_cast<double>(oracle_failures))
      << known_differences().size() << " known differences exceed 1% of the " << oracle_failures
      << " pairs the oracle rejects";
}

// Every template has goldens for exactly the current conversations (a template or
// conversation added without running scripts/regen-render-goldens shows up here).
TEST(RenderConformanceGoldens, CoverEveryTemplateAndConversation) {
  std::set<std::string> conversations;
  for (const auto& [name, context] : contexts()) conversations.insert(name);
  ASSERT_FALSE(conversations.empty()) << "no parsable contexts in data/conversations";
  for (const auto& stem : template_stems()) {
    std::set<std::string> covered;
    for (const auto& line :
         chatwire::test::read_lines(data_path("goldens/render/" + stem + ".jsonl"))) {
      const auto golden = nlohmann::json::parse(line, nullptr, false);
      if (!golden.is_discarded()) covered.insert(golden.value("conversation", ""));
    }
    EXPECT_EQ(covered, conversations)
        << stem << ": goldens out of date, run scripts/regen-render-goldens";
  }
}

// Prints the run's numbers once every test has finished.
class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    auto& t = tally();
    if (t.templates_run == 0) return;
    std::printf("\n[ SUMMARY ] render conformance over %zu templates:\n", t.templates_run);
    std::printf("[ SUMMARY ]   rendered identical: %zu / %zu (%.2f%%)\n", t.rendered_identical,
                t.rendered_total,
                t.rendered_total ? 100.0 * static_cast<double>(t.rendered_identical) /
                                       static_cast<double>(t.rendered_total)
                                 : 100.0);
    std::printf("[ SUMMARY ]   error type matches: %zu / %zu (%.2f%%), %zu excused as known\n",
                t.error_type_matches, t.errors_total,
                t.errors_total ? 100.0 * static_cast<double>(t.error_type_matches) /
                                     static_cast<double>(t.errors_total)
                               : 100.0,
                t.errors_excused);
    for (const auto& [kind, n] : t.mismatches_by_kind) {
      std::printf("[ SUMMARY ]   %-34s %zu\n", (kind + ":").c_str(), n);
    }
  }
};
[[maybe_unused]] ::testing::Environment* const summary_printer =
    ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

}  // namespace
