// The round trip on every bundled template: chatwire renders the same round-trip texts as the
// reference renderer (data/goldens/readback/, scripts/readback-oracle.py), and the parser
// derived from the template's own renders reads its calls and reasoning back, or the template
// writes them unreadably and the choice says why with the rendered evidence.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chatwire/readback_json.hpp"

namespace cw = chatwire;
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const fs::path kData = CHATWIRE_DATA_DIR;

struct Outcome {
  cw::probe::Profile profile;
  cw::readback::ParserChoice choice;
};

// The template sets and their round-trip goldens: the bundled templates, and templates crafted
// here with call shapes no bundled one has (names are prefixed "crafted/").
struct TemplateSet {
  fs::path templates, goldens;
  std::string prefix;
};
const std::vector<TemplateSet>& sets() {
  static const std::vector<TemplateSet> all = {
      {kData / "templates", kData / "goldens" / "readback", ""},
      {kData / "readback" / "crafted", kData / "goldens" / "readback" / "crafted", "crafted/"},
  };
  return all;
}

// Every template's choice, computed once for all tests.
const std::map<std::string, Outcome>& outcomes() {
  static const std::map<std::string, Outcome> all = [] {
    std::map<std::string, Outcome> out;
    for (const auto& set : sets())
      for (const auto& e : fs::directory_iterator(set.templates)) {
        if (e.path().extension() != ".jinja") continue;
        auto loaded = cw::readback::choose_parser_file(e.path());
        if (!loaded) continue;  // a template that does not compile: covered by the probe tests
        out.emplace(set.prefix + e.path().stem().string(),
                    Outcome{std::move(loaded->profile), std::move(loaded->choice)});
      }
    return out;
  }();
  return all;
}

const cw::readback::RoundTrip* find_trip(const cw::readback::ParserChoice& c,
                                         const std::string& kind) {
  for (const auto& t : c.trips)
    if (t.kind == kind) return &t;
  return nullptr;
}

// `syntax` reading a round trip's text one-shot, from where the trip's prompt leaves the
// reasoning (as the choice proves it).
auto read_trip(const std::string& text, const cw::readback::RoundTrip& trip,
               const cw::parse::Syntax& syntax, cw::parse::Options options) {
  options.reasoning_prefilled = trip.reasoning_prefilled;
  return cw::parse::parse(text, syntax, cw::readback::round_trip_tools_json(), options);
}

TEST(Readback, RoundTripTextsEqualTheReference) {
  std::size_t goldens = 0;
  for (const auto& set : sets())
    for (const auto& e : fs::directory_iterator(set.goldens)) {
      if (e.path().extension() != ".json") continue;
      ++goldens;
      Json golden = Json::parse(read(e.path()));
      std::string name = set.prefix + e.path().stem().string();
      auto it = outcomes().find(name);
      ASSERT_NE(it, outcomes().end()) << name;
      for (const auto& g : golden["trips"]) {
        std::string kind = g["kind"];
        const auto* trip = find_trip(it->second.choice, kind);
        ASSERT_NE(trip, nullptr) << name << " " << kind;
        if (kind == "calls") {
          EXPECT_EQ(trip->calls, g["calls"].get<std::size_t>()) << name;
          EXPECT_EQ(trip->id_rule, g["id_rule"].get<std::string>()) << name;
        }
        if (!g["error"].is_null()) {
          EXPECT_FALSE(trip->applicable) << name << " " << kind;
          EXPECT_NE(trip->why_not.find(g["error"].get<std::string>().substr(0, 20)),
                    std::string::npos)
              << name << " " << kind << ": " << trip->why_not;
          continue;
        }
        EXPECT_EQ(trip->prompt, g["prompt"].get<std::string>()) << name << " " << kind;
        EXPECT_EQ(trip->full, g["full"].get<std::string>()) << name << " " << kind;
      }
    }
  // Every template with a round trip (it renders calls or reasoning) has a round-trip golden.
  std::size_t expected = 0;
  for (const auto& [name, o] : outcomes()) expected += o.profile.renders && !o.choice.trips.empty();
  EXPECT_EQ(goldens, expected);
}

TEST(Readback, EveryTemplateReadsBackWhatItWrites) {
  std::size_t calls = 0, calls_ok = 0, bugs = 0, reasoning = 0, reasoning_ok = 0;
  std::size_t history = 0, history_ok = 0;
  for (const auto& [name, o] : outcomes()) {
    const auto& c = o.choice;
    const auto* ct = find_trip(c, "calls");
    const auto* rt = find_trip(c, "reasoning");
    // The round trip proper: the prompt is a prefix of the conversation.
    if (ct && ct->applicable && !ct->prefix) {
      ++history;
      history_ok += c.calls_read_back;
    }
    if (ct && ct->applicable && ct->prefix) {
      ++calls;
      calls_ok += c.calls_read_back;
      bugs += !c.calls_read_back && c.template_bug.has_value();
      EXPECT_TRUE(c.calls_read_back || c.template_bug) << name << ": " << c.verdict;
      if (c.calls_read_back) {
        EXPECT_TRUE(c.syntax && c.syntax->has_tool_calls()) << name;
      }
    }
    if (rt && rt->applicable && rt->prefix) {
      ++reasoning;
      reasoning_ok += c.reasoning_read_back;
      EXPECT_TRUE(c.reasoning_read_back) << name << ": " << c.verdict;
    }
  }
  std::printf("round trip: calls %zu/%zu read back, %zu template bugs; reasoning %zu/%zu\n",
              calls_ok, calls, bugs, reasoning_ok, reasoning);
  // The plain answer: read back wherever the prompt is a prefix of the conversation.
  std::size_t answers = 0, answers_ok = 0;
  for (const auto& [name, o] : outcomes()) {
    const auto* at = find_trip(o.choice, "answer");
    if (!at || !at->applicable || !at->prefix) continue;
    ++answers;
    answers_ok += o.choice.answer_read_back;
    EXPECT_TRUE(o.choice.answer_read_back) << name << ": " << o.choice.answer_verdict;
  }
  std::printf("round trip: plain answers %zu/%zu read back\n", answers_ok, answers);
  // Content beside a call, measured with the parser the calls chose: where it is not read back
  // the verdict says why (the content moved to another message, the calls before the content).
  std::size_t beside = 0, beside_ok = 0;
  for (const auto& [name, o] : outcomes()) {
    const auto* bt = find_trip(o.choice, "content_calls");
    if (!bt || !bt->applicable || !bt->prefix || !o.choice.calls_read_back) continue;
    ++beside;
    beside_ok += o.choice.content_calls_read_back;
    EXPECT_EQ(o.choice.content_calls_read_back, o.choice.content_calls_verdict.empty()) << name;
    if (o.choice.content_calls_read_back) continue;
    std::printf("  content beside a call not read back: %s: %s\n", name.c_str(),
                o.choice.content_calls_verdict.c_str());
    // Not read back only where the template moves the content out of it (another message or
    // channel): a content that holds the answer with the call's text beside it is a parser that
    // misses the call (vLLM's llama4_json before bare_anywhere was tried).
    auto r = read_trip(bt->generated, *bt, *o.choice.syntax, o.choice.options);
    ASSERT_TRUE(r) << name;
    EXPECT_EQ(r->message.content.find(bt->expected.content), std::string::npos)
        << name << ": the content holds the answer and more: " << r->message.content;
  }
  std::printf("round trip: content beside a call %zu/%zu read back\n", beside_ok, beside);
  std::printf("prompt not a prefix, parser derived from the conversation's render: %zu/%zu\n",
              history_ok, history);
  // Measured, not required: the same texts not cut at the end-of-turn marker (everything the
  // template renders after the prompt), as a caller that does not stop there would pass them.
  std::size_t uncut = 0, uncut_ok = 0;
  for (const auto& [name, o] : outcomes()) {
    if (!o.choice.syntax) continue;
    for (const auto& t : o.choice.trips) {
      bool proven = t.kind == "calls"           ? o.choice.calls_read_back
                    : t.kind == "reasoning"     ? o.choice.reasoning_read_back
                    : t.kind == "content_calls" ? o.choice.content_calls_read_back
                                                : o.choice.answer_read_back;
      if (!t.applicable || !proven) continue;
      cw::readback::RoundTrip whole = t;
      whole.generated = t.full.substr(t.turn_at);
      auto r = read_trip(whole.generated, t, *o.choice.syntax, o.choice.options);
      ++uncut;
      const bool ok = r && cw::readback::compare(r->message, whole).empty();
      uncut_ok += ok;
      if (!ok) std::printf("  not read back uncut: %s (%s)\n", name.c_str(), t.kind.c_str());
    }
  }
  std::printf("not cut at the end-of-turn marker: %zu/%zu read back\n", uncut_ok, uncut);
  EXPECT_GT(calls, 0u);
  EXPECT_GT(reasoning, 0u);
}

// An answer that is a JSON object with a "name" is the answer, not a call to that name: the
// answer round trip's text with its answer replaced by such an object (as the template would
// write it) gives the object back as content on every template whose answer reads back (the
// parsers derived for bare JSON calls read `{"name": "Bob", "age": 3}` as a call to Bob).
TEST(Readback, AJsonAnswerIsNoCall) {
  const std::string json_answer = R"({"name": "Bob", "age": 3})";
  std::size_t checked = 0;
  for (const auto& [name, o] : outcomes()) {
    const auto* at = find_trip(o.choice, "answer");
    if (!at || !at->applicable || !o.choice.answer_read_back || !o.choice.syntax) continue;
    const std::size_t where = at->generated.find(at->expected.content);
    if (at->expected.content.empty() || where == std::string::npos) continue;
    std::string text = at->generated;
    text.replace(where, at->expected.content.size(), json_answer);
    auto r = read_trip(text, *at, *o.choice.syntax, o.choice.options);
    ASSERT_TRUE(r) << name;
    EXPECT_TRUE(r->message.tool_calls.empty()) << name << ": " << text;
    // Compared without surrounding whitespace, as the answer round trip compares it.
    const std::string& content = r->message.content;
    const auto first = content.find_first_not_of(" \n\r\t");
    const auto last = content.find_last_not_of(" \n\r\t");
    EXPECT_EQ(first == std::string::npos ? "" : content.substr(first, last - first + 1),
              json_answer)
        << name;
    ++checked;
  }
  std::printf("a JSON answer read back as the answer: %zu templates\n", checked);
  EXPECT_GT(checked, 100u);
}

// The round trips compare content trimmed; the content is also read exactly where the only
// difference is newlines the template writes after the reasoning close or before the calls: the
// chosen parser then frames them as layout (newlines_after_think_close, layout_before_calls), or
// its choice records the framed parser tried and why it was not kept.
TEST(Readback, LayoutNewlinesAreFramedOrTheTryIsRecorded) {
  std::size_t proven = 0, exact = 0, framed = 0;
  for (const auto& [name, o] : outcomes()) {
    const auto& c = o.choice;
    if (!c.syntax) continue;
    const Json fields = cw::parse::to_json(*c.syntax);
    framed +=
        fields.contains("layout_before_calls") || fields.contains("newlines_after_think_close");
    for (const auto& t : c.trips) {
      const bool read_back = t.kind == "calls"           ? c.calls_read_back
                             : t.kind == "reasoning"     ? c.reasoning_read_back
                             : t.kind == "content_calls" ? c.content_calls_read_back
                                                         : c.answer_read_back;
      if (!t.applicable || !t.prefix || !read_back) continue;
      auto r = read_trip(t.generated, t, *c.syntax, c.options);
      ASSERT_TRUE(r) << name << " " << t.kind;
      ++proven;
      const std::string& got = r->message.content;
      const std::string& want = t.expected.content;
      if (got == want) {
        ++exact;
        continue;
      }
      const std::size_t at = got.find(want);
      const bool newlines_only = !want.empty() && at != std::string::npos &&
                                 got.find_first_not_of('\n') == at &&
                                 got.find_last_not_of('\n') == at + want.size() - 1;
      if (!newlines_only) continue;  // other whitespace, or text the trimmed compare accepts
      // Newlines before the content follow a reasoning block; after it, they precede the calls.
      // Others (an answer's trailing newline before the turn end) are measured only.
      std::string field;
      if (at > 0 && !t.expected.reasoning_content.empty())
        field = "newlines_after_think_close";
      else if (at + want.size() < got.size() && t.kind == "content_calls")
        field = "layout_before_calls";
      if (field.empty()) continue;
      bool tried = false;
      for (const auto& attempt : c.tried)
        tried = tried || (!attempt.verdict.empty() &&
                          attempt.syntax.summary().find(field) != std::string::npos);
      EXPECT_TRUE(tried) << name << " " << t.kind << ": content " << Json(got).dump() << " is "
                         << Json(want).dump() << " with newlines, and no " << field
                         << " framing was tried";
    }
  }
  std::printf("content read exactly: %zu/%zu read-back round trips; %zu parsers frame layout\n",
              exact, proven, framed);
  EXPECT_GT(framed, 0u);
}

// A template bug is reported only where the parser fails, with the rendered evidence.
TEST(Readback, TemplateBugsCarryEvidence) {
  for (const auto& [name, o] : outcomes()) {
    const auto& c = o.choice;
    if (!c.template_bug) continue;
    EXPECT_FALSE(c.calls_read_back) << name;
    EXPECT_FALSE(c.template_bug->evidence.empty()) << name;
    EXPECT_NE(c.verdict.find(c.template_bug->cause), std::string::npos) << name;
  }
}

// The chosen parser survives its JSON form (a server caches it with the profile).
TEST(Readback, ChosenParserJsonRoundTrip) {
  for (const auto& [name, o] : outcomes()) {
    const auto& c = o.choice;
    if (!c.syntax) continue;
    auto back = cw::parse::syntax_from_json(cw::parse::to_json(*c.syntax));
    ASSERT_TRUE(back) << name << ": " << back.error().message;
    EXPECT_EQ(cw::parse::to_json(*back), cw::parse::to_json(*c.syntax)) << name;
    for (const auto& t : c.trips) {
      if (!t.applicable) continue;
      auto a = cw::parse::parse(t.generated, *c.syntax, cw::readback::round_trip_tools_json(),
                                c.options);
      auto b =
          cw::parse::parse(t.generated, *back, cw::readback::round_trip_tools_json(), c.options);
      ASSERT_TRUE(a && b) << name;
      EXPECT_EQ(cw::parse::message_to_json(a->message), cw::parse::message_to_json(b->message))
          << name;
    }
  }
}

// Call shapes with markers of their own read back by a derived parser, whatever row is chosen
// after (the glimmer row reads Muse Glimmer's; command_r_plus's fenced list, the only row to).
TEST(Readback, CraftedShapesReadBack) {
  for (const char* name :
       {"crafted/action-tags-json", "crafted/bracket-header-json", "crafted/muse-glimmer-style",
        "crafted/fenced-json-list", "crafted/name-keyed-json-list", "crafted/fenced-pythonic-lines",
        "crafted/recipient-messages", "crafted/multi-message-turn"}) {
    auto it = outcomes().find(name);
    ASSERT_NE(it, outcomes().end()) << name;
    const auto& c = it->second.choice;
    EXPECT_TRUE(c.calls_read_back) << name << ": " << c.verdict;
    ASSERT_TRUE(c.syntax) << name;
    EXPECT_TRUE(std::any_of(c.tried.begin(), c.tried.end(), [](const auto& t) {
      return t.origin == "derived" && t.syntax.has_tool_calls() && t.verdict.empty();
    })) << name;
  }
  // Messages routed by recipient: the message to "self" is the reasoning.
  auto routed = outcomes().find("crafted/recipient-messages");
  ASSERT_NE(routed, outcomes().end());
  EXPECT_TRUE(routed->second.choice.reasoning_read_back) << routed->second.choice.verdict;
  // A turn of several messages ends where the whole two-marker suffix stands (or its first
  // marker directly followed by another, as a turn ending in calls does), not at the end of
  // its first message.
  auto turn = outcomes().find("crafted/multi-message-turn");
  ASSERT_NE(turn, outcomes().end());
  EXPECT_TRUE(turn->second.choice.reasoning_read_back) << turn->second.choice.verdict;
  const auto* calls = find_trip(turn->second.choice, "calls");
  ASSERT_NE(calls, nullptr);
  EXPECT_EQ(calls->end_marker, "<|im_end|><|pause|>");
  // A turn whose suffix's first marker also closes the reasoning element inside it (Kimi K3's
  // shape): the turn ends at the suffix's own last marker, not right after the reasoning (which
  // made the calls look written after the turn's end, a template bug that is not one).
  auto elements = outcomes().find("crafted/element-closes-in-turn");
  ASSERT_NE(elements, outcomes().end());
  const auto& ec = elements->second.choice;
  EXPECT_TRUE(ec.calls_read_back) << ec.verdict;
  EXPECT_FALSE(ec.template_bug.has_value());
  const auto* element_calls = find_trip(ec, "calls");
  ASSERT_NE(element_calls, nullptr);
  EXPECT_EQ(element_calls->end_marker, "<|end|>");
  // A prompt that closes an empty reasoning block, a history that writes only the close (DeepSeek
  // V3.2's shape): the close is the prompt's, so the calls' section does not begin with it and
  // the answer and the content beside a call read back too.
  auto closes = outcomes().find("crafted/prompt-closes-reasoning");
  ASSERT_NE(closes, outcomes().end());
  const auto& cc = closes->second.choice;
  EXPECT_TRUE(cc.calls_read_back) << cc.verdict;
  EXPECT_TRUE(cc.answer_read_back) << cc.answer_verdict;
  EXPECT_TRUE(cc.content_calls_read_back) << cc.content_calls_verdict;
  // The reasoning round trip (style "prompt": its reasoning written in the content) begins
  // with the block the model opens, not with the prompt's close.
  for (const auto& t : cc.trips)
    if (t.kind == "reasoning")
      EXPECT_TRUE(t.generated.starts_with("<think>")) << t.generated;
    else
      EXPECT_EQ(t.generated.find("</think>"), std::string::npos) << t.kind << ": " << t.generated;
  // Content beside calls written as a turn of its own, ended by the text of the reasoning close
  // (HyperCLOVAX SEED Think 14B's shape): that text is layout before the calls, so the content
  // reads back exactly, without the turn boundary.
  auto turns = outcomes().find("crafted/answer-turn-before-calls");
  ASSERT_NE(turns, outcomes().end());
  const auto& tc = turns->second.choice;
  EXPECT_TRUE(tc.calls_read_back) << tc.verdict;
  EXPECT_TRUE(tc.content_calls_read_back) << tc.content_calls_verdict;
  ASSERT_TRUE(tc.syntax);
  const auto* beside = find_trip(tc, "content_calls");
  ASSERT_NE(beside, nullptr);
  auto read = read_trip(beside->generated, *beside, *tc.syntax, tc.options);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->message.content, beside->expected.content);
}

// Each bundled template's model has a dialect row (data/readback/model-dialects.tsv): the row,
// as a user picks it with --dialect, reads the template's own calls and reasoning round trips
// back (prefix or not), or the table says why not and the test holds that. The answer and
// content-beside-a-call trips are measured only: a row that starts in reasoning (DeepSeek R1)
// reads a turn without reasoning after a prompt that opens it as reasoning, as the model never
// writes it.
TEST(Readback, DialectRowsReadTheirModelsTemplates) {
  std::istringstream table(read(kData / "readback" / "model-dialects.tsv"));
  std::size_t rows = 0, reads = 0, trips = 0, other = 0, other_ok = 0;
  for (std::string line; std::getline(table, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) f.push_back(cell);
    ASSERT_GE(f.size(), 3u) << line;
    const std::string& name = f[0];
    const bool expect_reads = f[2] == "reads";
    ASSERT_TRUE(expect_reads || (f[2] == "differs" && f.size() == 4 && !f[3].empty())) << line;
    auto it = outcomes().find(name);
    ASSERT_NE(it, outcomes().end()) << name;
    auto row = cw::parse::Syntax::named(f[1]);
    ASSERT_TRUE(row) << f[1];
    ++rows;
    std::string first_miss;
    std::size_t proven = 0;
    for (const auto& t : it->second.choice.trips) {
      if (!t.applicable) continue;
      auto r = read_trip(t.generated, t, *row, it->second.choice.options);
      const std::string why = r ? cw::readback::compare(r->message, t) : r.error().message;
      if (t.kind != "calls" && t.kind != "reasoning") {
        ++other;
        other_ok += why.empty();
        if (!why.empty())
          std::printf("  row %s on %s (%s): %s\n", f[1].c_str(), name.c_str(), t.kind.c_str(),
                      why.c_str());
        continue;
      }
      ++proven;
      if (!why.empty() && first_miss.empty()) first_miss = t.kind + ": " + why;
    }
    EXPECT_GT(proven, 0u) << name << ": no calls or reasoning round trip";
    trips += proven;
    if (expect_reads) {
      EXPECT_EQ(first_miss, "") << name << " with " << f[1];
      reads += first_miss.empty();
    } else {
      EXPECT_NE(first_miss, "") << name << " with " << f[1]
                                << " reads back; the table says: " << f[3];
    }
  }
  std::printf(
      "dialect rows on their models' templates: %zu/%zu read back (%zu calls and "
      "reasoning trips); answers and content beside a call, measured: %zu/%zu\n",
      reads, rows, trips, other_ok, other);
  EXPECT_GT(rows, 0u);
}

// A table row replaces the derived parser when it alone reads every text the derived parser
// reads. The rule knows no model; data/readback/model-dialects.tsv (each bundled template's
// model's row, written from the models' documentation) checks that the row it picks is the
// model's wherever one is listed, and that a template it leaves derived has no other row chosen.
TEST(Readback, TheOneRowThatReadsItAllIsTheModels) {
  std::map<std::string, std::string> model_row;
  std::istringstream table(read(kData / "readback" / "model-dialects.tsv"));
  for (std::string line; std::getline(table, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream cells(line);
    std::string name, row;
    std::getline(cells, name, '\t');
    std::getline(cells, row, '\t');
    model_row[name] = row;
  }
  std::size_t chosen = 0, listed = 0;
  for (const auto& [name, o] : outcomes()) {
    if (!o.choice.syntax || o.choice.syntax->name() == "derived") continue;
    ++chosen;
    auto it = model_row.find(name);
    if (it == model_row.end()) continue;
    ++listed;
    EXPECT_EQ(o.choice.syntax->name(), it->second) << name;
  }
  std::printf(
      "the one row that reads it all: %zu templates, %zu of them listed, all their model's\n",
      chosen, listed);
  EXPECT_GT(listed, 30u);
  // A row chosen so reads each look-alike answer (a call-shaped JSON bare or fenced, a pythonic
  // list, a think block) as the answer wherever the derived parser did (a review found EXAONE 4,
  // Granite 4, LFM2 and Llama 4's JSON template turning them into calls or reasoning).
  std::size_t lookalikes = 0;
  for (const auto& [name, o] : outcomes()) {
    if (!o.choice.syntax || o.choice.syntax->name() == "derived") continue;
    const auto* at = find_trip(o.choice, "answer");
    if (!at || !at->applicable || at->expected.content.empty()) continue;
    const std::size_t where = at->generated.find(at->expected.content);
    if (where == std::string::npos) continue;
    for (const char* answer :
         {R"({"name": "x", "arguments": {}})", "```json\n{\"name\": \"x\", \"arguments\": {}}\n```",
          R"([get_weather(city="Paris")])", "<think>\nhmm\n</think>\n\nHi."}) {
      cw::readback::RoundTrip t = *at;
      t.generated.replace(where, at->expected.content.size(), answer);
      t.expected.content = answer;
      auto derived = read_trip(t.generated, t, o.choice.tried.front().syntax, o.choice.options);
      if (!derived || !cw::readback::compare(derived->message, t).empty()) continue;
      auto chosen = read_trip(t.generated, t, *o.choice.syntax, o.choice.options);
      ASSERT_TRUE(chosen) << name;
      EXPECT_EQ(cw::readback::compare(chosen->message, t), "") << name << ": " << answer;
      ++lookalikes;
    }
  }
  std::printf("look-alike answers read as the answer by the chosen rows: %zu\n", lookalikes);
  // gpt-oss writes its recipient in the channel header as well as in the role header (the
  // Harmony documentation's own example); its template writes only the second. Read as the
  // harmony row reads it, both give the call.
  const auto& oss = outcomes().at("openai--gpt-oss-20b");
  ASSERT_TRUE(oss.choice.syntax);
  EXPECT_EQ(oss.choice.syntax->name(), "harmony");
  for (const char* text :
       {"<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary "
        "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant "
        "to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": "
        "\"Paris\"}<|call|>"}) {
    auto m = cw::parse::parse(text, *oss.choice.syntax, cw::readback::round_trip_tools_json(),
                              oss.choice.options);
    ASSERT_TRUE(m) << text;
    EXPECT_EQ(m->message.reasoning_content, "Need weather.") << text;
    ASSERT_EQ(m->message.tool_calls.size(), 1u) << text;
    EXPECT_EQ(m->message.tool_calls[0].name, "get_weather") << text;
    EXPECT_EQ(m->message.tool_calls[0].arguments, R"({"city": "Paris"})") << text;
  }
}

// Reasoning a template renders from no message field is still read: DeepSeek R1 takes
// `<think>..</think>` out of every turn's content (the probe's style "content"), so a model's
// output in those markers is parsed into reasoning, as vLLM's deepseek_r1 reasoning parser reads
// it; QwQ keeps the final turn's content as written, so its own render of a turn with reasoning
// reads back; Kimi K2 Thinking renders reasoning only in a tool loop's turn (after the last
// answer), so its calls round trip carries reasoning and reads it back.
TEST(Readback, ReasoningWithoutAFieldIsRead) {
  const auto& r1 = outcomes().at("deepseek-ai--DeepSeek-R1");
  EXPECT_EQ(r1.profile.reasoning.style, "content");
  ASSERT_TRUE(r1.choice.syntax);
  auto m =
      cw::parse::parse("<think>\nLet me think.\n</think>\n\nThe answer is 4.", *r1.choice.syntax,
                       cw::readback::round_trip_tools_json(), r1.choice.options);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->message.reasoning_content, "\nLet me think.\n");
  EXPECT_EQ(m->message.content, "\n\nThe answer is 4.");
  // R1 often skips `<think>`: a close before any other marker ends reasoning (vLLM's deepseek_r1
  // reading); an answer with no close is content.
  for (const auto& [text, reasoning, content] :
       {std::tuple{"Let me think.\n</think>\n\nThe answer is 4.", "Let me think.\n",
                   "\n\nThe answer is 4."},
        std::tuple{"Just an answer.", "", "Just an answer."}}) {
    auto u = cw::parse::parse(text, *r1.choice.syntax, cw::readback::round_trip_tools_json(),
                              r1.choice.options);
    ASSERT_TRUE(u) << text;
    EXPECT_EQ(u->message.reasoning_content, reasoning) << text;
    EXPECT_EQ(u->message.content, content) << text;
  }
  // Held until a close decides it only where the prompt leaves the opening to the model: where
  // it closes the block (thinking off: EXAONE 4's `<think>\n\n</think>`, DeepSeek V3.1's lone
  // `</think>`), an answer streams as it comes.
  EXPECT_TRUE(cw::parse::to_json(*r1.choice.syntax).value("reasoning_until_close", false));
  for (const char* name : {"LGAI-EXAONE--EXAONE-4.0-1.2B", "deepseek-ai--DeepSeek-V3.1"}) {
    const auto& o = outcomes().at(name);
    EXPECT_EQ(o.profile.reasoning.style, "content") << name;
    ASSERT_TRUE(o.choice.syntax) << name;
    EXPECT_FALSE(cw::parse::to_json(*o.choice.syntax).value("reasoning_until_close", false))
        << name;
  }
  // A template none of whose turns render (llama.cpp's R1 template raises on the conversation's
  // tool call) still gets the markers the probe measured; its prompt opens the block.
  const auto& lcpp = outcomes().at("llama-cpp--deepseek-r1");
  ASSERT_TRUE(lcpp.choice.syntax);
  EXPECT_TRUE(lcpp.choice.options.reasoning_prefilled);
  auto l = cw::parse::parse("Let me think.\n</think>\n\nThe answer is 4.", *lcpp.choice.syntax,
                            cw::readback::round_trip_tools_json(), lcpp.choice.options);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->message.reasoning_content, "Let me think.\n");
  // A template that writes no reasoning of any turn, whose generation prompt opens a block with
  // a known opener (OLMo 3 Think's `<|im_start|>assistant\n<think>`): style "prompt", the
  // opener's pair closes it, and reasoning written in a turn's content reads back.
  const auto& olmo = outcomes().at("trl--olmo3");
  EXPECT_EQ(olmo.profile.reasoning.style, "prompt");
  EXPECT_EQ(olmo.profile.reasoning.close, "</think>");
  EXPECT_TRUE(olmo.choice.reasoning_read_back) << olmo.choice.verdict;
  EXPECT_TRUE(olmo.choice.options.reasoning_prefilled);
  auto o = cw::parse::parse("Let me think.</think>The answer is 4.", *olmo.choice.syntax,
                            cw::readback::round_trip_tools_json(), olmo.choice.options);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->message.reasoning_content, "Let me think.");
  EXPECT_EQ(o->message.content, "The answer is 4.");

  const auto& qwq = outcomes().at("Qwen--QwQ-32B");
  EXPECT_EQ(qwq.profile.reasoning.style, "content");
  EXPECT_TRUE(qwq.choice.reasoning_read_back);
  const auto* reasoning = find_trip(qwq.choice, "reasoning");
  ASSERT_TRUE(reasoning && reasoning->applicable);
  EXPECT_TRUE(reasoning->reasoning_prefilled);

  const auto& kimi = outcomes().at("moonshotai--Kimi-K2-Thinking--rev-hfjs");
  EXPECT_EQ(kimi.profile.reasoning.field, "reasoning_content");
  EXPECT_TRUE(kimi.choice.calls_read_back);
  const auto* calls = find_trip(kimi.choice, "calls");
  ASSERT_TRUE(calls && calls->applicable);
  EXPECT_FALSE(calls->expected.reasoning_content.empty());
}

// A generation prompt that opens and closes an empty block with markers the template shows
// nowhere else (DeepSeek V3.2's llama.cpp template, thinking off: `<｜Assistant｜><think></think>`;
// style "prompt") leaves nothing open: its turns are read from the content, so the
// `deepseek_v32` row reads its plain answer back too. With markers the template shows (EXAONE 4
// takes `<think>..</think>` out of past turns; its prompt writes `<think>\n\n</think>\n\n`)
// nothing is open either.
TEST(Readback, PromptClosingAnEmptyBlockLeavesNothingOpen) {
  for (const auto& [name, row, style] :
       {std::tuple{"deepseek-ai--DeepSeek-V3.2--llamacpp", "deepseek_v32", "prompt"},
        std::tuple{"LGAI-EXAONE--EXAONE-4.0-1.2B", "hermes", "content"}}) {
    SCOPED_TRACE(name);
    auto it = outcomes().find(name);
    ASSERT_NE(it, outcomes().end());
    EXPECT_EQ(it->second.profile.reasoning.style, style);
    EXPECT_EQ(it->second.profile.reasoning.open, "<think>");
    EXPECT_TRUE(it->second.profile.reasoning.prompt_opens);
    EXPECT_FALSE(it->second.choice.options.reasoning_prefilled);
    const auto* answer = find_trip(it->second.choice, "answer");
    ASSERT_TRUE(answer && answer->applicable);
    EXPECT_FALSE(answer->reasoning_prefilled);
    auto r = read_trip(answer->generated, *answer, *cw::parse::Syntax::named(row),
                       it->second.choice.options);
    ASSERT_TRUE(r);
    EXPECT_EQ(cw::readback::compare(r->message, *answer), "");
  }
}

// A derived parser ends the output at a marker the template writes only at a turn's end: text a
// backend that keeps special tokens reads past it (the next turn) is reported, not joined to the
// answer (Gemma 3's `<end_of_turn>`); a model's eos token too, but not a bare template's stand-in.
// A marker the template also writes inside a turn (the crafted multi-message turn's `<|im_end|>`,
// which ends each of its messages) stays framing.
TEST(Readback, TurnEndsEndTheDerivedParsersOutput) {
  auto gemma = outcomes().find("google--gemma-3-it");
  ASSERT_NE(gemma, outcomes().end());
  const auto& g = gemma->second.choice;
  ASSERT_TRUE(g.syntax);
  const auto* answer = find_trip(g, "answer");
  ASSERT_TRUE(answer && answer->applicable && !answer->end_marker.empty());
  EXPECT_TRUE(answer->inner_ends.empty());
  auto r = read_trip(answer->generated + answer->end_marker + "\n<start_of_turn>user\nMore?",
                     *answer, *g.syntax, g.options);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->message.content, answer->expected.content);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0].code, "after_end");
  // The bare template's stand-in eos token (`</s>`, rendered where the template asks for one) is
  // no model's: Gemma 3's template never writes it, so it is text.
  auto text = read_trip(answer->generated + "</s>More", *answer, *g.syntax, g.options);
  ASSERT_TRUE(text);
  EXPECT_EQ(text->message.content, answer->expected.content + "</s>More");
  EXPECT_TRUE(text->warnings.empty());

  auto turn = outcomes().find("crafted/multi-message-turn");
  ASSERT_NE(turn, outcomes().end());
  const auto& m = turn->second.choice;
  ASSERT_TRUE(m.syntax);
  const auto* calls = find_trip(m, "calls");
  ASSERT_TRUE(calls && calls->applicable);
  EXPECT_NE(std::find(calls->inner_ends.begin(), calls->inner_ends.end(), "<|im_end|>"),
            calls->inner_ends.end());
  EXPECT_TRUE(m.calls_read_back) << m.verdict;
}

// Where the prompt is no prefix of the conversation only because the history rewrites the
// prompt's opened reasoning block, an answer turn is still read from the state the prompt
// leaves: Nemotron 3's prompt ends `<think>\n` and its history writes `<think></think>` (the
// shared part holds the whole prompt but its whitespace); GLM-4.7's prompt ends `<think>` and
// its history writes `</think>` in its place (the turn begins with the close of the block the
// prompt opened). Neither template measures an opener of its own.
TEST(Readback, AnswerAfterTheHistoryRewritesThePromptsOpenBlock) {
  for (const char* name :
       {"nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "zai-org--GLM-4.7-Flash"}) {
    auto it = outcomes().find(name);
    ASSERT_NE(it, outcomes().end()) << name;
    const auto& c = it->second.choice;
    EXPECT_EQ(it->second.profile.reasoning.open.value_or(""), "") << name;
    const auto* answer = find_trip(c, "answer");
    ASSERT_TRUE(answer && answer->applicable) << name;
    EXPECT_FALSE(answer->prefix) << name;
    EXPECT_TRUE(answer->generated.starts_with("</think>")) << name << ": " << answer->generated;
    EXPECT_TRUE(answer->reasoning_prefilled) << name;
    EXPECT_TRUE(c.answer_read_back) << name << ": " << c.answer_verdict;
  }
}

// Where the prompt is no prefix of the conversation, the prompt's own text after the shared
// part, written by the conversation too with other whitespace, is the prompt's: Granite-20B-
// FunctionCalling's prompt ends `ASSISTANT: \n`, its history writes `ASSISTANT:\n<function_call>`,
// and the calls read back (they were content behind `ASSISTANT:`).
TEST(Readback, PromptTextWrittenWithOtherWhitespaceIsThePrompts) {
  auto it = outcomes().find("vllm--tool_chat_template_granite_20b_fc");
  ASSERT_NE(it, outcomes().end());
  const auto& c = it->second.choice;
  const auto* calls = find_trip(c, "calls");
  ASSERT_TRUE(calls && calls->applicable);
  EXPECT_FALSE(calls->prefix);
  EXPECT_EQ(calls->generated.find("ASSISTANT:"), std::string::npos) << calls->generated;
  EXPECT_TRUE(c.calls_read_back) << c.verdict;
}

// Templates that write their own calls unreadably are reported as template bugs, with the
// cause and the rendered evidence, never read back by a guess.
TEST(Readback, CraftedTemplateBugsAreReported) {
  const std::pair<const char*, const char*> cases[] = {
      {"crafted/bug-missing-separator", "missing_argument_separator"},
      {"crafted/bug-unopened-call", "unopened_call"},
      {"crafted/bug-final-calls-dropped", "calls_dropped_in_last_turn"},
  };
  for (const auto& [name, cause] : cases) {
    auto it = outcomes().find(name);
    ASSERT_NE(it, outcomes().end()) << name;
    const auto& c = it->second.choice;
    EXPECT_TRUE(c.calls_rendered) << name;
    EXPECT_FALSE(c.calls_read_back) << name;
    ASSERT_TRUE(c.template_bug) << name << ": " << c.verdict;
    EXPECT_EQ(c.template_bug->cause, cause) << name;
    EXPECT_FALSE(c.template_bug->evidence.empty()) << name;
  }
  // The evidence is the rendering itself.
  auto sep = outcomes().find("crafted/bug-missing-separator");
  ASSERT_NE(sep, outcomes().end());
  EXPECT_NE(sep->second.choice.template_bug->evidence.find("\\\"\"days=3"), std::string::npos)
      << sep->second.choice.template_bug->evidence;
}

// A candidate whose markers hold a call's name would pass the round trip by accident (it
// fits only calls to that function): it is never chosen.
TEST(Readback, NoMarkerHoldsACallName) {
  for (const auto& [name, o] : outcomes()) {
    if (!o.choice.syntax) continue;
    std::string markers = o.choice.syntax->to_json_text();
    markers.erase(0, markers.find("\"family\""));  // the summary and name may quote calls
    EXPECT_EQ(markers.find("get_weather"), std::string::npos) << name;
    EXPECT_EQ(markers.find("set_alarm"), std::string::npos) << name;
  }
}

TEST(Readback, SyntaxFromJsonNamesTheBadField) {
  auto bad = cw::parse::syntax_from_json(Json{{"family", "json"}, {"sections", "x"}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("sections"), std::string::npos);
  auto family = cw::parse::syntax_from_json(Json{{"family", "nope"}});
  ASSERT_FALSE(family);
  EXPECT_NE(family.error().message.find("family"), std::string::npos);
}

}  // namespace
