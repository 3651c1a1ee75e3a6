// Cases from the reference projects' test suites (data/parse/*.jsonl, each with its source):
// every case is parsed one-shot and compared with its expected message, then streamed at chunk
// sizes 1..16 and at a seeded random chunking; the deltas must assemble to the one-shot message
// and obey OpenAI's streaming shape (id and name once, index = position, fragments only grow);
// words inserted at random places come through or are reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "case_support.hpp"
#include "chatwire/parse_json.hpp"

namespace {

using chatwire::parse::Json;
namespace parse = chatwire::parse;
using namespace chatwire::parse::testing;

struct Case {
  std::string file;
  Json data;
  std::string name;
};

std::vector<Case> load_cases() {
  std::vector<Case> cases;
  std::filesystem::path dir = std::filesystem::path(CHATWIRE_DATA_DIR) / "parse";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".jsonl") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.empty() || line[0] == '#') continue;
      Case c;
      c.file = path.filename().string();
      c.data = Json::parse(line);
      std::string name = c.data.value("id", path.stem().string() + "_" + std::to_string(n));
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      c.name = name;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::string strip(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

class ParseCase : public ::testing::TestWithParam<Case> {};

TEST_P(ParseCase, OneShotMatchesExpected) {
  const Json& c = GetParam().data;
  Json tools = c.value("tools", Json());
  auto result = parse::parse(c["input"].get<std::string>(), c["dialect"].get<std::string>(), tools,
                             options_of(c));
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  const parse::Message& got = result->message;
  const Json& want = c["expected"];
  bool stripped = c.value("compare", "exact") == "strip";
  auto norm = [stripped](const std::string& s) { return stripped ? strip(s) : s; };
  std::string context = "source: " + c.value("source", "?") + "\ngot: " + describe(got) +
                        "\nwarnings: " + parse::warnings_to_json(result->warnings).dump();
  EXPECT_EQ(norm(got.content), norm(text_of(want.value("content", Json())))) << context;
  EXPECT_EQ(norm(got.reasoning_content), norm(text_of(want.value("reasoning_content", Json()))))
      << context;
  Json calls = want.value("tool_calls", Json::array());
  ASSERT_EQ(got.tool_calls.size(), calls.size()) << context;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const auto& call = got.tool_calls[i];
    EXPECT_EQ(call.name, calls[i]["name"].get<std::string>()) << context;
    const Json& want_args = calls[i]["arguments"];
    Json got_args = Json::parse(call.arguments, nullptr, false);
    if (calls[i].value("arguments_exact", false)) {
      // The text itself: a JSON comparison would merge an argument written twice.
      EXPECT_EQ(call.arguments, want_args.get<std::string>()) << context;
    } else if (want_args.is_string()) {
      Json parsed = Json::parse(want_args.get<std::string>(), nullptr, false);
      if (parsed.is_discarded()) {
        EXPECT_EQ(call.arguments, want_args.get<std::string>()) << context;
      } else {
        EXPECT_EQ(got_args, parsed) << context;
      }
    } else {
      EXPECT_EQ(got_args, want_args) << context;
    }
    if (calls[i].contains("id")) {
      EXPECT_EQ(call.id, calls[i]["id"].get<std::string>()) << context;
    }
  }
  if (c.contains("warnings")) {
    // `"warnings": []` says the output gives none.
    if (c["warnings"].empty()) {
      EXPECT_TRUE(result->warnings.empty())
          << "expected no warning, got " << result->warnings[0].code << "\n"
          << context;
    }
    for (const auto& code : c["warnings"]) {
      bool found = false;
      for (const auto& w : result->warnings) found = found || w.code == code.get<std::string>();
      EXPECT_TRUE(found) << "expected warning " << code << "\n" << context;
    }
  }
}

TEST_P(ParseCase, StreamingEqualsOneShot) {
  const Json& c = GetParam().data;
  Json tools = c.value("tools", Json());
  std::string input = c["input"].get<std::string>();
  std::string dialect = c["dialect"].get<std::string>();
  parse::Options options = options_of(c);
  auto one = parse::parse(input, dialect, tools, options);
  ASSERT_TRUE(one.ok());
  std::vector<std::vector<std::size_t>> chunkings;
  for (std::size_t size = 1; size <= 16; ++size) {
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < input.size(); i += size) sizes.push_back(size);
    chunkings.push_back(sizes);
  }
  std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>{}(GetParam().name)));
  for (int round = 0; round < 4; ++round) {
    std::vector<std::size_t> sizes;
    for (std::size_t i = 0; i < input.size();) {
      std::size_t n = std::uniform_int_distribution<std::size_t>(1, 24)(rng);
      sizes.push_back(n);
      i += n;
    }
    chunkings.push_back(sizes);
  }
  for (const auto& sizes : chunkings) {
    auto stream = parse::stream_parser(dialect, tools, options);
    ASSERT_TRUE(stream.ok());
    std::vector<parse::Delta> deltas;
    std::size_t at = 0;
    std::string plan;
    for (std::size_t n : sizes) {
      auto d = stream->feed(std::string_view(input).substr(at, n));
      deltas.insert(deltas.end(), d.begin(), d.end());
      at += n;
      if (plan.size() < 80) plan += std::to_string(n) + ",";
    }
    auto d = stream->finish();
    deltas.insert(deltas.end(), d.begin(), d.end());
    std::string shape_error;
    parse::Message assembled = assemble(deltas, shape_error);
    EXPECT_EQ(shape_error, "") << "chunks " << plan;
    EXPECT_EQ(describe(assembled), describe(one->message)) << "chunks " << plan;
    EXPECT_EQ(describe(stream->message()), describe(one->message)) << "chunks " << plan;
    EXPECT_EQ(parse::warnings_to_json(stream->warnings()).dump(),
              parse::warnings_to_json(one->warnings).dump())
        << "chunks " << plan;
    if (HasFailure()) return;
  }
}

// The dialect's JSON form (Syntax::to_json_text, what a server caches) reads the case as the
// named dialect does: every field of the row survives the round trip.
TEST_P(ParseCase, JsonFormReadsTheSame) {
  const Json& c = GetParam().data;
  Json tools = c.value("tools", Json());
  auto named = parse::Syntax::named(c["dialect"].get<std::string>());
  ASSERT_TRUE(named.ok()) << named.error().to_string();
  auto back = parse::Syntax::from_json_text(named->to_json_text());
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  const std::string input = c["input"].get<std::string>();
  auto want = parse::parse(input, *named, tools, options_of(c));
  auto got = parse::parse(input, *back, tools, options_of(c));
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_EQ(describe(got->message), describe(want->message));
  EXPECT_EQ(parse::warnings_to_json(got->warnings).dump(),
            parse::warnings_to_json(want->warnings).dump());
}

// The checks on a changed input: streamed at a seeded random chunking it gives the one-shot
// message and warnings, and each of `words` ("ZQ<n>X") reaches the message (content, reasoning, a
// call's name or arguments) unless a warning says what was left out.
void check_kept_or_reported(const Json& c, const Json& tools, const std::string& text,
                            const std::vector<std::string>& words, std::mt19937& rng) {
  auto result = parse::parse(text, c["dialect"].get<std::string>(), tools, options_of(c));
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  auto stream = parse::stream_parser(c["dialect"].get<std::string>(), tools, options_of(c));
  ASSERT_TRUE(stream.ok());
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = 1 + rng() % 12;
    stream->feed(std::string_view(text).substr(at, n));
    at += n;
  }
  stream->finish();
  EXPECT_EQ(describe(stream->message()), describe(result->message)) << Json(text).dump();
  EXPECT_EQ(parse::warnings_to_json(stream->warnings()).dump(),
            parse::warnings_to_json(result->warnings).dump())
      << Json(text).dump();
  if (!result->warnings.empty()) return;
  const std::string got = describe(result->message);
  for (const auto& word : words)
    EXPECT_NE(got.find(word), std::string::npos)
        << word << " dropped without a warning\ninput: " << Json(text).dump() << "\ngot: " << got;
}

// A generator seeded by the case's name (FNV-1a) and a salt per test: the same places on every
// run and platform.
std::mt19937 case_rng(const Case& param, std::uint32_t salt) {
  std::uint32_t seed = 2166136261u ^ salt;
  for (char ch : param.name) seed = (seed ^ static_cast<unsigned char>(ch)) * 16777619u;
  return std::mt19937(seed);
}

// The first UTF-8 character start in `text` at or after `at` (or its end).
std::size_t char_start_from(const std::string& text, std::size_t at) {
  while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
  return at;
}

// A place in `text` at a UTF-8 character's start.
std::size_t char_place(const std::string& text, std::mt19937& rng) {
  return char_start_from(text, rng() % (text.size() + 1));
}

// Nothing is silently dropped: text inserted at seeded random places of the case's input (see
// the two tests below) is kept or reported (check_kept_or_reported). `insert(rng, word)` makes
// the inserted text.
template <typename Insert>
void check_insertions(const Case& param, std::uint32_t salt, int rounds, Insert insert) {
  const Json& c = param.data;
  const std::string input = c["input"].get<std::string>();
  std::mt19937 rng = case_rng(param, salt);
  int serial = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::size_t> places(1 + rng() % 3);
    for (auto& at : places) at = char_place(input, rng);
    std::sort(places.rbegin(), places.rend());  // from the back: earlier places stay valid
    std::string text = input;
    std::vector<std::string> words;
    for (std::size_t at : places) {
      words.push_back("ZQ" + std::to_string(++serial) + "X");
      text.insert(at, insert(rng, words.back()));
    }
    check_kept_or_reported(c, c.value("tools", Json()), text, words, rng);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// A word with a space or a newline on each side, so that it stands as a word wherever it lands
// (inside a marker, a header, a key or a value too).
TEST_P(ParseCase, InsertedWordsAreKeptOrReported) {
  check_insertions(GetParam(), 0, 4, [](std::mt19937& rng, const std::string& word) {
    const std::string pad = rng() % 2 ? " " : "\n";
    return pad + word + pad;
  });
}

// Every marker the dialect's syntax names (its reasoning, section, call, parameter and value
// markers, header ends, framing and end tokens), as the JSON form of its syntax lists them.
std::vector<std::string> dialect_markers(const std::string& dialect) {
  auto syntax = parse::Syntax::named(dialect);
  if (!syntax.ok()) return {};
  const Json j = parse::to_json(*syntax);
  std::vector<std::string> markers;
  auto keep = [&](const Json& v) {
    if (v.is_string() && v.get_ref<const std::string&>().size() > 1)
      markers.push_back(v.get<std::string>());
  };
  for (const char* key :
       {"think_open", "think_close", "answer_open", "section_open", "section_close", "call_open",
        "call_close", "id_marker", "type_separator", "recipient_open", "recipient_close",
        "param_open", "param_name_end", "value_open", "type_open", "type_close", "value_close",
        "call_header_after", "reasoning_label"})
    if (j.contains(key)) keep(j[key]);
  for (const char* key : {"dropped", "end_tokens", "noise", "header_end", "name_end", "name_stop"})
    if (j.contains(key) && j[key].is_array())
      for (const Json& v : j[key]) keep(v);
  for (const char* key : {"sections", "pythonic_sections", "loose_sections", "think_alternates"})
    if (j.contains(key) && j[key].is_array())
      for (const Json& pair : j[key])  // [open, close]
        for (const Json& v : pair) keep(v);
  std::sort(markers.begin(), markers.end());
  markers.erase(std::unique(markers.begin(), markers.end()), markers.end());
  return markers;
}

// One of the dialect's own markers, then a word: a marker where it does not belong (a call
// opener in a value, a parameter's close in its name, an end token mid-answer) may change what
// the text around it is, but what it leaves out is reported.
TEST_P(ParseCase, InsertedMarkersAreKeptOrReported) {
  const std::vector<std::string> markers =
      dialect_markers(GetParam().data["dialect"].get<std::string>());
  ASSERT_FALSE(markers.empty()) << "no markers for the dialect";
  check_insertions(GetParam(), 1, 24, [&](std::mt19937& rng, const std::string& word) {
    const char* pads[] = {"", " ", "\n"};
    // (drawn in turn: the operands of one expression are unsequenced)
    const std::string& marker = markers[rng() % markers.size()];
    const char* pad = pads[rng() % 3];
    return marker + pad + word + (rng() % 2 ? " " : "\n");
  });
}

// The inputs of every case, by dialect (for the splice test).
const std::map<std::string, std::vector<const Json*>>& inputs_by_dialect() {
  static const std::vector<Case> cases = load_cases();
  static const std::map<std::string, std::vector<const Json*>> by = [] {
    std::map<std::string, std::vector<const Json*>> m;
    for (const auto& c : cases) m[c.data["dialect"].get<std::string>()].push_back(&c.data);
    return m;
  }();
  return by;
}

// The head of this case's input glued to the tail of another case of the same dialect, a word
// at the seam: a cut anywhere (inside a marker, a name, a value, a header) on both sides, as a
// model that loses its thread writes; the word is kept or reported.
TEST_P(ParseCase, SplicedInputsAreKeptOrReported) {
  const Json& c = GetParam().data;
  const auto& others = inputs_by_dialect().at(c["dialect"].get<std::string>());
  const std::string input = c["input"].get<std::string>();
  std::mt19937 rng = case_rng(GetParam(), 2);
  for (int round = 0; round < 8; ++round) {
    const Json& other = *others[rng() % others.size()];
    const std::string tail = other["input"].get<std::string>();
    const std::string word = "ZQ" + std::to_string(round) + "X";
    // (the two places drawn in turn: the operands of one expression are unsequenced)
    const std::size_t head_end = char_place(input, rng);
    const std::size_t tail_start = char_place(tail, rng);
    const std::string text = input.substr(0, head_end) + word + tail.substr(tail_start);
    const Json tools = c.contains("tools") ? c["tools"] : other.value("tools", Json());
    check_kept_or_reported(c, tools, text, {word}, rng);
    if (HasFatalFailure()) return;
  }
}

// A random slice [from, to) of `input` one of `lengths` long (or to its end), at UTF-8
// character starts.
struct Slice {
  std::size_t from, to;
};
Slice random_slice(const std::string& input, std::mt19937& rng,
                   const std::vector<std::size_t>& lengths) {
  const std::size_t from = char_place(input, rng);
  const std::size_t length = lengths[rng() % lengths.size()];
  return {from, char_start_from(input, std::min(input.size(), from + length))};
}

// The sentinel word of a round, and the word with a random pad (none, a space, a newline) on
// each side (drawn in turn: the operands of one expression are unsequenced).
struct Sentinel {
  std::string word, padded;
};
Sentinel padded_sentinel(int round, std::mt19937& rng) {
  const char* pads[] = {"", " ", "\n"};
  Sentinel s{"ZQ" + std::to_string(round) + "X", ""};
  s.padded = pads[rng() % 3];
  s.padded += s.word;
  s.padded += pads[rng() % 3];
  return s;
}

// A slice of the input written twice in place, a word between the copies: a model that repeats
// itself (a marker, a key, a call header, half a value); the word is kept or reported.
TEST_P(ParseCase, DuplicatedSlicesAreKeptOrReported) {
  const Json& c = GetParam().data;
  const std::string input = c["input"].get<std::string>();
  std::mt19937 rng = case_rng(GetParam(), 3);
  for (int round = 0; round < 8; ++round) {
    const Slice slice = random_slice(input, rng, {8, 40, 200});
    const Sentinel s = padded_sentinel(round, rng);
    const std::string text = input.substr(0, slice.to) + s.padded + input.substr(slice.from);
    check_kept_or_reported(c, c.value("tools", Json()), text, {s.word}, rng);
    if (HasFatalFailure()) return;
  }
}

// A slice of the input left out (a lost marker, half a name, a value's end), a word at a random
// place of what is left: what the gap makes of the text around it, the word is kept or reported.
TEST_P(ParseCase, DeletedSlicesAreKeptOrReported) {
  const Json& c = GetParam().data;
  const std::string input = c["input"].get<std::string>();
  std::mt19937 rng = case_rng(GetParam(), 4);
  for (int round = 0; round < 8; ++round) {
    const Slice slice = random_slice(input, rng, {1, 3, 8, 40});
    const std::string rest = input.substr(0, slice.from) + input.substr(slice.to);
    const std::size_t at = char_place(rest, rng);
    const Sentinel s = padded_sentinel(round, rng);
    const std::string text = rest.substr(0, at) + s.padded + rest.substr(at);
    check_kept_or_reported(c, c.value("tools", Json()), text, {s.word}, rng);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Data, ParseCase, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
