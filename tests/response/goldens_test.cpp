// transformers' own test expectations for response templates (data/goldens/response, written by
// scripts/response_cases.py from tests/utils/test_chat_parsing.py): each case whole, then fed in
// every chunk size from 1 to 16 bytes and in seeded random splits, which must give the same
// message (or the same error) with well-formed events.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "chatwire/response_json.hpp"
#include "response/internal.hpp"

namespace chatwire::response {
namespace {

Json read_json_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

const Json& templates() {
  static const Json t = read_json_file(CHATWIRE_DATA_DIR "/goldens/response/templates.json");
  return t;
}

std::vector<Json> load_cases() {
  std::vector<Json> cases;
  std::ifstream in(CHATWIRE_DATA_DIR "/goldens/response/cases.jsonl");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) cases.push_back(Json::parse(line));
  return cases;
}

const std::vector<Json>& cases() {
  static const std::vector<Json> all = load_cases();
  return all;
}

// Python's == on the values a template produces, but with int and float told apart (the
// transcribed literals say which one Python holds), and bool never equal to a number.
bool same(const Json& a, const Json& b) {
  const bool a_int = a.is_number_integer(), b_int = b.is_number_integer();
  if (a_int || b_int) return a_int && b_int && a == b;
  if (a.is_number_float() || b.is_number_float())
    return a.is_number_float() && b.is_number_float() && a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [k, v] : a.items())
      if (!b.contains(k) || !same(v, b.at(k))) return false;
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

Template load(const Json& c) {
  const Json& t = c.at("template");
  auto tmpl = Template::from_json(t.is_string() ? templates().at(t.get<std::string>()) : t);
  EXPECT_TRUE(tmpl.ok()) << (tmpl.ok() ? "" : tmpl.error().to_string());
  return tmpl.ok() ? *tmpl : Template{};
}

// "tool_calls.0.function.arguments" into a message.
const Json* at_path(const Json& root, const std::string& path) {
  const Json* v = &root;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '.')) {
    if (v->is_array()) {
      const std::size_t i = std::stoul(part);
      if (i >= v->size()) return nullptr;
      v = &(*v)[i];
    } else if (v->is_object() && v->contains(part)) {
      v = &v->at(part);
    } else {
      return nullptr;
    }
  }
  return v;
}

void expect_error(const Error& e, const Json& expected) {
  if (!expected.at("type").is_null()) {
    EXPECT_EQ(e.type, expected.at("type").get<std::string>());
  }
  for (const auto& s : expected.at("contains")) {
    EXPECT_NE(e.to_string().find(s.get<std::string>()), std::string::npos)
        << "error " << e.to_string() << " lacks " << s;
  }
}

// Events open, chunk and close one region at a time, and none is left open.
void expect_well_formed(const std::vector<Event>& events) {
  std::optional<std::string> open;
  for (const auto& e : events) {
    switch (e.kind) {
      case Event::Kind::kOpen:
        EXPECT_FALSE(open) << "nested region_open " << e.field;
        open = e.field;
        break;
      case Event::Kind::kChunk:
        EXPECT_EQ(open.value_or("<none>"), e.field) << "chunk outside its region";
        break;
      case Event::Kind::kClose:
        EXPECT_EQ(open.value_or("<none>"), e.field) << "close of a region not open";
        open.reset();
        break;
    }
  }
  EXPECT_FALSE(open) << "region left open at the end";
}

struct Outcome {
  std::optional<Json> message;
  std::optional<Error> error;
  std::vector<Event> events;  // initial + every feed + finalize
  std::vector<std::vector<Event>> per_feed;
  std::vector<Event> initial, final_events;
  Parser* parser = nullptr;
};

Outcome run_feeds(const Template& t, const Json& c, const std::vector<std::string>& feeds,
                  std::optional<Parser>* keep = nullptr) {
  Outcome out;
  const Json tools = c.contains("tools") ? c.at("tools") : Json(nullptr);
  auto parser = Parser::create(t, c.at("prefix").get<std::string>(), tools);
  if (!parser) {
    out.error = parser.error();
    return out;
  }
  out.initial = parser->initial_events();
  out.events = out.initial;
  for (const auto& f : feeds) {
    auto ev = parser->feed(f);
    if (!ev) {
      out.error = ev.error();
      return out;
    }
    out.per_feed.push_back(*ev);
    out.events.insert(out.events.end(), ev->begin(), ev->end());
  }
  auto done = parser->finalize();
  if (!done) {
    out.error = done.error();
    return out;
  }
  out.message = done->message;
  out.final_events = done->events;
  out.events.insert(out.events.end(), done->events.begin(), done->events.end());
  if (keep) keep->emplace(std::move(*parser));
  return out;
}

std::vector<std::vector<std::string>> chunkings(const std::string& text, std::size_t seed) {
  std::vector<std::vector<std::string>> all;
  for (std::size_t size = 1; size <= 16; ++size) {
    std::vector<std::string> feeds;
    for (std::size_t i = 0; i < text.size(); i += size) feeds.push_back(text.substr(i, size));
    all.push_back(feeds);
  }
  std::mt19937 rng(static_cast<unsigned>(seed));
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<std::string> feeds;
    std::size_t i = 0;
    while (i < text.size()) {
      const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 24)(rng);
      feeds.push_back(text.substr(i, n));  // empty chunks too
      i += n;
    }
    all.push_back(feeds);
  }
  return all;
}

// The whole parse, then every chunking: the same message or the same error type.
Outcome whole_and_chunked(const Template& t, const Json& c, std::size_t seed) {
  const std::string input = c.at("input").get<std::string>();
  Outcome whole = run_feeds(t, c, {input});
  if (!whole.error) expect_well_formed(whole.events);
  for (const auto& feeds : chunkings(input, seed)) {
    Outcome part = run_feeds(t, c, feeds);
    SCOPED_TRACE("chunking into " + std::to_string(feeds.size()) + " feeds");
    EXPECT_EQ(whole.error.has_value(), part.error.has_value())
        << (part.error ? part.error->to_string() : whole.error->to_string());
    if (whole.error.has_value() != part.error.has_value()) continue;
    if (whole.error) {
      EXPECT_EQ(whole.error->type, part.error->type);
      continue;
    }
    EXPECT_TRUE(same(*whole.message, *part.message))
        << whole.message->dump() << "\n vs " << part.message->dump();
    expect_well_formed(part.events);
    // The chunks of each region concatenate to the same bytes, however the output was cut.
    std::map<std::string, std::string> a, b;
    for (const auto& e : whole.events)
      if (e.kind == Event::Kind::kChunk) a[e.field] += e.text;
    for (const auto& e : part.events)
      if (e.kind == Event::Kind::kChunk) b[e.field] += e.text;
    EXPECT_EQ(a, b);
  }
  return whole;
}

std::vector<std::pair<std::string, std::string>> types_fields(const std::vector<Event>& events) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : events) out.emplace_back(to_json(e).at("type"), e.field);
  return out;
}

std::vector<std::pair<std::string, std::string>> pairs(const Json& expected) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : expected) out.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
  return out;
}

void run_stream_case(const Json& c) {
  const Template t = load(c);
  std::vector<std::string> feeds;
  if (c.contains("feeds")) {
    for (const auto& f : c.at("feeds")) feeds.push_back(f.get<std::string>());
  } else {
    const std::string input = c.at("input").get<std::string>();
    const std::size_t size = c.at("chunk_size").get<std::size_t>();
    for (std::size_t i = 0; i < input.size(); i += size) feeds.push_back(input.substr(i, size));
  }
  std::optional<Parser> kept;
  Outcome o = run_feeds(t, c, feeds, &kept);
  ASSERT_FALSE(o.error) << o.error->to_string();
  expect_well_formed(o.events);
  const Json& x = c.at("expect");
  if (x.contains("initial_events")) {
    EXPECT_EQ(types_fields(o.initial), pairs(x.at("initial_events")));
  }
  if (x.contains("initial_opens")) {
    std::vector<std::string> opens;
    for (const auto& e : o.initial)
      if (e.kind == Event::Kind::kOpen) opens.push_back(e.field);
    EXPECT_EQ(opens, x.at("initial_opens").get<std::vector<std::string>>());
  }
  if (x.contains("initial_close_value")) {
    ASSERT_FALSE(o.initial.empty());
    EXPECT_TRUE(same(o.initial.back().value, x.at("initial_close_value")));
  }
  if (x.contains("events_per_feed")) {
    ASSERT_EQ(o.per_feed.size(), x.at("events_per_feed").size());
    for (std::size_t k = 0; k < o.per_feed.size(); ++k)
      EXPECT_EQ(types_fields(o.per_feed[k]), pairs(x.at("events_per_feed")[k]));
  }
  if (x.contains("closes_per_feed")) {
    for (std::size_t k = 0; k < x.at("closes_per_feed").size(); ++k) {
      std::size_t closes = 0;
      for (const auto& e : o.per_feed.at(k)) closes += e.kind == Event::Kind::kClose;
      EXPECT_EQ(closes, x.at("closes_per_feed")[k].get<std::size_t>()) << "feed " << k;
    }
  }
  for (const char* key : {"feed_has_type", "feed_lacks_type"}) {
    if (!x.contains(key)) continue;
    for (const auto& spec : x.at(key)) {
      bool found = false;
      for (const auto& e : o.per_feed.at(spec[0].get<std::size_t>()))
        found = found || to_json(e).at("type") == spec[1];
      EXPECT_EQ(found, std::string(key) == "feed_has_type") << spec.dump();
    }
  }
  const bool feeds_only = c.value("feeds_only", false);
  std::vector<Event> counted;
  if (feeds_only) {
    for (const auto& f : o.per_feed) counted.insert(counted.end(), f.begin(), f.end());
  } else {
    counted = o.events;
  }
  if (x.contains("close_values")) {
    for (const auto& [field, value] : x.at("close_values").items()) {
      const Event* last = nullptr;
      for (const auto& e : counted)
        if (e.kind == Event::Kind::kClose && e.field == field) last = &e;
      ASSERT_NE(last, nullptr) << "no region_close for " << field;
      EXPECT_TRUE(same(last->value, value)) << last->value.dump() << " vs " << value.dump();
    }
  }
  if (x.contains("close_count")) {
    for (const auto& [field, n] : x.at("close_count").items()) {
      std::size_t count = 0;
      for (const auto& e : counted) count += e.kind == Event::Kind::kClose && e.field == field;
      EXPECT_EQ(count, n.get<std::size_t>()) << field;
    }
  }
  if (x.contains("chunks")) {
    for (const auto& [field, want] : x.at("chunks").items()) {
      std::string text;
      std::set<bool> dirty;
      for (const auto& e : o.events)
        if (e.kind == Event::Kind::kChunk && e.field == field)
          text += e.text, dirty.insert(e.dirty);
      EXPECT_EQ(text, want.at("text").get<std::string>()) << field;
      std::set<bool> want_dirty;
      for (const auto& d : want.at("dirty")) want_dirty.insert(d.get<bool>());
      EXPECT_EQ(dirty, want_dirty) << field;
    }
  }
  if (x.contains("chunks_after_feed")) {
    for (std::size_t k = 0; k < x.at("chunks_after_feed").size(); ++k) {
      std::map<std::string, std::string> got;
      for (const auto& e : o.per_feed.at(k))
        if (e.kind == Event::Kind::kChunk) got[e.field] += e.text;
      for (const auto& [field, text] : x.at("chunks_after_feed")[k].items())
        EXPECT_EQ(got[field], text.get<std::string>()) << "feed " << k;
    }
  }
  if (x.contains("message")) {
    EXPECT_TRUE(same(*o.message, x.at("message"))) << o.message->dump();
  }
  if (x.contains("message_keys")) {
    for (const auto& [k, v] : x.at("message_keys").items()) {
      EXPECT_TRUE(o.message->contains(k) && same(o.message->at(k), v)) << o.message->dump();
    }
  }
  if (x.contains("message_key")) {
    const Json* v = at_path(*o.message, x.at("message_key")[0].get<std::string>());
    ASSERT_NE(v, nullptr) << o.message->dump();
    EXPECT_TRUE(same(*v, x.at("message_key")[1])) << v->dump();
  }
  if (x.contains("tool_call_names")) {
    std::vector<std::string> names;
    for (const auto& call : o.message->value("tool_calls", Json::array()))
      names.push_back(call.at("function").at("name").get<std::string>());
    EXPECT_EQ(names, x.at("tool_call_names").get<std::vector<std::string>>());
  }
  if (x.contains("final_events")) {
    EXPECT_EQ(o.final_events.size(), x.at("final_events").size());
  }
  if (x.contains("after_finalize")) {
    ASSERT_TRUE(kept);
    auto fed = kept->feed("more");
    ASSERT_FALSE(fed.ok());
    EXPECT_EQ(fed.error().type, x.at("after_finalize").get<std::string>());
    auto again = kept->finalize();
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().type, x.at("after_finalize").get<std::string>());
  }
}

class Golden : public testing::TestWithParam<std::size_t> {};

TEST_P(Golden, Case) {
  const Json& c = cases()[GetParam()];
  SCOPED_TRACE(c.at("id").get<std::string>() + " (" + c.at("source").at("test").get<std::string>() +
               ")");
  const std::string kind = c.at("kind").get<std::string>();
  if (kind == "load_error") {
    auto t = Template::from_json(c.at("template"));
    ASSERT_FALSE(t.ok()) << "the template loaded";
    expect_error(t.error(), c.at("expect").at("error"));
  } else if (kind == "parse") {
    const Template t = load(c);
    Outcome o = whole_and_chunked(t, c, GetParam());
    const Json& x = c.at("expect");
    if (x.contains("error")) {
      ASSERT_TRUE(o.error) << "parsed: " << o.message->dump();
      expect_error(*o.error, x.at("error"));
      return;
    }
    ASSERT_FALSE(o.error) << o.error->to_string();
    if (x.contains("message")) {
      EXPECT_TRUE(same(*o.message, x.at("message"))) << o.message->dump();
    }
    if (x.contains("key")) {
      const Json* v = at_path(*o.message, x.at("key").get<std::string>());
      ASSERT_NE(v, nullptr) << o.message->dump();
      EXPECT_TRUE(same(*v, x.at("value"))) << v->dump();
    }
  } else if (kind == "stream_invariant") {
    const Template t = load(c);
    Outcome o = whole_and_chunked(t, c, GetParam());
    EXPECT_FALSE(o.error) << o.error->to_string();
  } else if (kind == "stream") {
    run_stream_case(c);
  } else if (kind == "coerce") {
    auto v = coerce_argument(c.at("raw").get<std::string>(),
                             c.at("types").get<std::vector<std::string>>());
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_TRUE(same(*v, c.at("expected"))) << v->dump();
  } else if (kind == "schema_types") {
    auto v = schema_types(c.at("schema"));
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(*v, c.at("expected").get<std::vector<std::string>>());
  } else if (kind == "coerce_tool_calls") {
    auto params = tool_params(c.at("tools"));
    ASSERT_TRUE(params.ok());
    Json call = c.at("call");
    ASSERT_TRUE(coerce_tool_calls(call, *params).ok());
    EXPECT_TRUE(same(call, c.at("expected"))) << call.dump();
  } else {
    FAIL() << "unknown case kind " << kind;
  }
}

// The cases that run here. A "not_applicable" case (it needs a real tokenizer or a Python
// callable) is not a test at all rather than a skip that ctest would count as passed; the data
// keeps it with its reason, and NotApplicableCasesSayWhy checks that every one has one.
std::vector<std::size_t> indices() {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < cases().size(); ++i)
    if (cases()[i].at("kind").get<std::string>() != "not_applicable") out.push_back(i);
  return out;
}

TEST(GoldenData, NotApplicableCasesSayWhy) {
  for (const auto& c : cases()) {
    if (c.at("kind").get<std::string>() != "not_applicable") continue;
    EXPECT_FALSE(c.value("reason", std::string()).empty()) << c.at("id");
  }
}

INSTANTIATE_TEST_SUITE_P(Transformers, Golden, testing::ValuesIn(indices()),
                         [](const testing::TestParamInfo<std::size_t>& info) {
                           std::string name = cases()[info.param].at("id").get<std::string>();
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(GoldenData, HasCasesOfEveryKind) {
  std::set<std::string> kinds;
  for (const auto& c : cases()) kinds.insert(c.at("kind").get<std::string>());
  EXPECT_EQ(kinds,
            (std::set<std::string>{"parse", "stream", "stream_invariant", "load_error", "coerce",
                                   "schema_types", "coerce_tool_calls", "not_applicable"}));
}

}  // namespace
}  // namespace chatwire::response
