// Cases transcribed from the parser unit tests of vLLM, SGLang, llama.cpp, openai/harmony and
// mistral-common (data/parse/reference/<project>.jsonl, every file there but differences.jsonl).
// Each case is parsed one-shot and streamed in 1-byte, 7-byte and whole-output chunks; every
// chunking must give the one-shot message. The one-shot
// message is compared with the reference's expectation as far as the reference asserts it (a
// field missing from "expected" is not asserted; "content_contains" and friends are substring
// checks; "arguments_partial" asks only for the listed keys; "arguments_keys" only that the
// listed keys are present, whatever their values (a test that asserts `key in args`);
// "strip_whitespace" compares content
// and reasoning without surrounding whitespace, as llama.cpp's tests do). A case where chatwire
// deliberately differs is listed with its reason in data/parse/reference/differences.jsonl: a
// listed case must still differ (a stale entry fails), a listed id must exist, and every other case
// must match.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "case_support.hpp"
#include "chatwire/parse_json.hpp"

namespace {

using chatwire::parse::Json;
namespace parse = chatwire::parse;
using namespace chatwire::parse::testing;

const std::filesystem::path& reference_dir() {
  static const std::filesystem::path dir =
      std::filesystem::path(CHATWIRE_DATA_DIR) / "parse" / "reference";
  return dir;
}

std::vector<Json> read_jsonl(const std::filesystem::path& path) {
  std::vector<Json> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    rows.push_back(Json::parse(line));
  }
  return rows;
}

struct RefCase {
  std::string project;  // the file's stem: vllm, sglang, llamacpp, harmony, mistral_common
  Json data;
  std::string name;  // the id as a test name
};

// Every <project>.jsonl in the reference directory except differences.jsonl.
std::vector<RefCase> load_reference_cases() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(reference_dir()))
    if (entry.path().extension() == ".jsonl" && entry.path().stem() != "differences")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<RefCase> cases;
  for (const auto& path : files) {
    for (auto& row : read_jsonl(path)) {
      RefCase c;
      c.project = path.stem().string();
      c.name = row.at("id").get<std::string>();
      for (char& ch : c.name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      c.data = std::move(row);
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// The case's id, not its bytes, in GoogleTest's messages.
void PrintTo(const RefCase& c, std::ostream* os) {
  *os << c.data.value("id", c.name);
}

// id -> reason
std::map<std::string, std::string> load_differences() {
  std::map<std::string, std::string> out;
  for (const auto& row : read_jsonl(reference_dir() / "differences.jsonl"))
    out[row.at("id").get<std::string>()] = row.value("reason", "");
  return out;
}

// The ways `got` differs from what the reference asserts (empty: it matches), with the
// semantics of the script the cases were measured with.
std::vector<std::string> compare(const Json& c, const parse::Message& got) {
  std::vector<std::string> why;
  const Json& want = c.at("expected");
  auto quoted = [](const std::string& s) { return Json(s).dump(); };
  // "strip_whitespace": the reference compares text with surrounding whitespace stripped
  // (llama.cpp's assert_msg_equals(..., ignore_whitespace_differences = true)).
  const bool strip = c.value("strip_whitespace", false);
  auto same = [strip](std::string_view a, std::string_view b) {
    if (!strip) return a == b;
    auto trim = [](std::string_view s) {
      const char* ws = " \t\n\r";
      auto first = s.find_first_not_of(ws);
      if (first == std::string_view::npos) return std::string_view();
      return s.substr(first, s.find_last_not_of(ws) - first + 1);
    };
    return trim(a) == trim(b);
  };
  if (want.contains("content") && !same(got.content, text_of(want["content"])))
    why.push_back("content " + quoted(got.content) + ", expected " +
                  quoted(text_of(want["content"])));
  if (want.contains("reasoning_content") &&
      !same(got.reasoning_content, text_of(want["reasoning_content"])))
    why.push_back("reasoning " + quoted(got.reasoning_content) + ", expected " +
                  quoted(text_of(want["reasoning_content"])));
  auto substrings = [&](const char* key, const std::string& text, bool present, const char* what) {
    for (const auto& s : c.value(key, Json::array())) {
      bool found = text.find(s.get<std::string>()) != std::string::npos;
      if (found != present)
        why.push_back(std::string(what) + " " + quoted(text) +
                      (present ? " lacks " : " contains ") + quoted(s.get<std::string>()));
    }
  };
  substrings("content_contains", got.content, true, "content");
  substrings("content_not_contains", got.content, false, "content");
  substrings("reasoning_contains", got.reasoning_content, true, "reasoning");
  substrings("reasoning_not_contains", got.reasoning_content, false, "reasoning");
  if (!want.contains("tool_calls")) return why;
  const Json& calls = want["tool_calls"];
  if (got.tool_calls.size() != calls.size()) {
    std::string names;
    for (const auto& t : got.tool_calls) names += " " + t.name + t.arguments;
    why.push_back(std::to_string(got.tool_calls.size()) + " calls," + names + "; expected " +
                  std::to_string(calls.size()));
    return why;
  }
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const auto& call = got.tool_calls[i];
    const Json& w = calls[i];
    if (call.name != w.at("name").get<std::string>())
      why.push_back("call name " + quoted(call.name) + ", expected " + w["name"].dump());
    if (w.contains("arguments_keys")) {
      const Json ga = Json::parse(call.arguments, nullptr, false);
      for (const auto& key : w["arguments_keys"])
        if (!ga.is_object() || !ga.contains(key.get<std::string>()))
          why.push_back("arguments " + call.arguments + ", expected the key " + key.dump());
    }
    if (w.contains("arguments")) {
      const Json& wa = w["arguments"];
      Json ga = Json::parse(call.arguments, nullptr, false);
      bool ok = !ga.is_discarded();
      if (wa.is_string()) {
        Json wv = Json::parse(wa.get<std::string>(), nullptr, false);
        if (!wv.is_discarded()) {
          if (!ok || ga != wv)
            why.push_back("arguments " + call.arguments + ", expected " + wa.get<std::string>());
        } else if (call.arguments != wa.get<std::string>()) {
          why.push_back("arguments " + quoted(call.arguments) + ", expected raw " + wa.dump());
        }
      } else if (w.value("arguments_partial", false) && wa.is_object()) {
        bool all = ok && ga.is_object();
        for (auto it = wa.begin(); all && it != wa.end(); ++it)
          all = ga.contains(it.key()) && ga[it.key()] == it.value();
        if (!all)
          why.push_back("arguments " + call.arguments + ", expected to include " + wa.dump());
      } else if (!ok || ga != wa) {
        why.push_back("arguments " + call.arguments + ", expected " + wa.dump());
      }
    }
    if (w.contains("id") && call.id != w["id"].get<std::string>())
      why.push_back("id " + quoted(call.id) + ", expected " + w["id"].dump());
  }
  return why;
}

std::string joined(const std::vector<std::string>& why) {
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

class ReferenceCase : public ::testing::TestWithParam<RefCase> {};

// A key the harness does not read would make a case that cannot fail (a misplaced
// "content_contains" inside "expected" was ignored): every key must be one it reads.
TEST_P(ReferenceCase, HasOnlyKeysTheHarnessReads) {
  static const std::set<std::string> top = {"id",
                                            "dialect",
                                            "source",
                                            "input",
                                            "tools",
                                            "options",
                                            "expected",
                                            "note",
                                            "partial",
                                            "strip_whitespace",
                                            "content_contains",
                                            "content_not_contains",
                                            "reasoning_contains",
                                            "reasoning_not_contains"};
  static const std::set<std::string> expected = {"content", "reasoning_content", "tool_calls"};
  static const std::set<std::string> call = {"name", "arguments", "arguments_partial",
                                             "arguments_keys", "id"};
  const Json& c = GetParam().data;
  for (const auto& [key, value] : c.items()) EXPECT_TRUE(top.count(key)) << "case key " << key;
  for (const auto& [key, value] : c.at("expected").items())
    EXPECT_TRUE(expected.count(key)) << "expected key " << key;
  for (const auto& w : c.at("expected").value("tool_calls", Json::array()))
    for (const auto& [key, value] : w.items()) EXPECT_TRUE(call.count(key)) << "call key " << key;
}

// Streaming in 1-byte, 7-byte and whole-output chunks gives the one-shot message and warnings,
// in deltas of OpenAI's shape (id and name once, index = position, fragments only grow).
TEST_P(ReferenceCase, ChunkingInvariant) {
  const Json& c = GetParam().data;
  Json tools = c.value("tools", Json());
  std::string input = c.at("input").get<std::string>();
  std::string dialect = c.at("dialect").get<std::string>();
  parse::Options options = options_of(c);
  auto one = parse::parse(input, dialect, tools, options);
  ASSERT_TRUE(one.ok()) << one.error().to_string();
  for (std::size_t size :
       {std::size_t{1}, std::size_t{7}, std::max<std::size_t>(input.size(), 1)}) {
    auto stream = parse::stream_parser(dialect, tools, options);
    ASSERT_TRUE(stream.ok());
    std::vector<parse::Delta> deltas;
    for (std::size_t at = 0; at < input.size(); at += size) {
      auto d = stream->feed(std::string_view(input).substr(at, size));
      deltas.insert(deltas.end(), d.begin(), d.end());
    }
    auto d = stream->finish();
    deltas.insert(deltas.end(), d.begin(), d.end());
    std::string shape_error;
    const parse::Message assembled = assemble(deltas, shape_error);
    EXPECT_EQ(shape_error, "") << "chunk size " << size;
    EXPECT_EQ(describe(assembled), describe(one->message)) << "chunk size " << size;
    EXPECT_EQ(describe(stream->message()), describe(one->message)) << "chunk size " << size;
    EXPECT_EQ(parse::warnings_to_json(stream->warnings()).dump(),
              parse::warnings_to_json(one->warnings).dump())
        << "chunk size " << size;
  }
}

// Matches the reference, or is listed as a deliberate difference and still differs.
TEST_P(ReferenceCase, MatchesReferenceOrListedDifference) {
  const Json& c = GetParam().data;
  static const auto differences = load_differences();
  auto result = parse::parse(c.at("input").get<std::string>(), c.at("dialect").get<std::string>(),
                             c.value("tools", Json()), options_of(c));
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  auto why = compare(c, result->message);
  std::string id = c.at("id").get<std::string>();
  std::string context = "source: " + c.value("source", "?") + "\nnote: " + c.value("note", "") +
                        "\ngot: " + describe(result->message) +
                        "\nwarnings: " + parse::warnings_to_json(result->warnings).dump();
  auto listed = differences.find(id);
  if (listed == differences.end()) {
    EXPECT_TRUE(why.empty()) << id << " differs from the reference and is not listed in "
                             << "differences.jsonl: " << joined(why) << "\n"
                             << context;
  } else {
    EXPECT_FALSE(why.empty()) << id << " now matches the reference: remove its stale entry from "
                              << "differences.jsonl (" << listed->second << ")\n"
                              << context;
  }
}

INSTANTIATE_TEST_SUITE_P(Reference, ReferenceCase, ::testing::ValuesIn(load_reference_cases()),
                         [](const ::testing::TestParamInfo<RefCase>& info) {
                           return info.param.name;
                         });

// differences.jsonl names existing cases, once each, with a reason; the pass rate per file.
TEST(ReferenceCases, DifferencesListedAndPassRate) {
  auto cases = load_reference_cases();
  ASSERT_FALSE(cases.empty());
  std::set<std::string> ids;
  for (const auto& c : cases)
    EXPECT_TRUE(ids.insert(c.data.at("id").get<std::string>()).second)
        << "duplicate id " << c.data["id"];
  std::set<std::string> listed;
  for (const auto& row : read_jsonl(reference_dir() / "differences.jsonl")) {
    std::string id = row.at("id").get<std::string>();
    EXPECT_TRUE(listed.insert(id).second) << "differences.jsonl lists " << id << " twice";
    EXPECT_TRUE(ids.count(id)) << "differences.jsonl lists " << id << ", which is no case";
    EXPECT_FALSE(row.value("reason", "").empty()) << id << " is listed without a reason";
  }
  std::map<std::string, std::pair<int, int>> rate;  // project -> (match, total)
  for (const auto& c : cases) {
    auto result =
        parse::parse(c.data.at("input").get<std::string>(), c.data.at("dialect").get<std::string>(),
                     c.data.value("tools", Json()), options_of(c.data));
    ASSERT_TRUE(result.ok());
    auto& [match, total] = rate[c.project];
    match += compare(c.data, result->message).empty() ? 1 : 0;
    ++total;
  }
  for (const auto& [project, r] : rate)
    std::cout << project << " " << r.first << "/" << r.second << " match the reference\n";
  std::cout << listed.size() << " deliberate differences listed in differences.jsonl\n";
}

}  // namespace
