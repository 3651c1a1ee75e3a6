// The Endpoint's rules one at a time: field-path errors and limits on untrusted requests and
// configs, the cached profile, the measured tool-call id rule, the parser state a prompt implies,
// modes and masks, stops, and sharing one Endpoint between threads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "chatwire/endpoint.hpp"
#include "chatwire/endpoint_json.hpp"
#include "chatwire/probe_json.hpp"
#include "endpoint/shared.hpp"
#include "util/utf8.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using chatwire::endpoint::Endpoint;
using chatwire::endpoint::PrepareOptions;

namespace {

const fs::path kData = CHATWIRE_DATA_DIR;

Endpoint load(const fs::path& dir, const chatwire::endpoint::LoadOptions& options = {}) {
  auto e = Endpoint::load(dir, options);
  if (!e) {
    ADD_FAILURE() << dir << ": " << e.error().to_string();
    std::abort();
  }
  return std::move(*e);
}

const Endpoint& qwen3() {
  return shared_endpoint("qwen3");
}

// A model directory made in a temporary folder from a bundled template (no tokenizer.json).
struct TempModel {
  fs::path dir;
  explicit TempModel(const std::string& template_stem, const json& generation_config = nullptr) {
    static int counter = 0;
    dir = fs::temp_directory_path() /
          ("chatwire-endpoint-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir);
    fs::copy_file(kData / "templates" / (template_stem + ".jinja"), dir / "chat_template.jinja");
    std::ofstream(dir / "tokenizer_config.json") << R"({"bos_token": "<s>", "eos_token": "</s>"})";
    if (!generation_config.is_null())
      std::ofstream(dir / "generation_config.json") << generation_config.dump();
  }
  ~TempModel() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

json user(const std::string& text) {
  return json{{"messages", {{{"role", "user"}, {"content", text}}}}};
}

const json kTools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");

TEST(EndpointRequest, ErrorsNameTheField) {
  const Endpoint& ep = qwen3();
  struct Case {
    std::string request;
    std::string type, path;
  };
  const std::vector<Case> cases = {
      {"{", "JSONDecodeError", ""},
      {"[]", "RequestError", ""},
      {"{}", "RequestError", "messages"},
      {R"({"messages": []})", "RequestError", "messages"},
      {R"({"messages": [{"content": "x"}]})", "RequestError", "messages[0].role"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "RequestError", "messages[0].content"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}]})", "RequestError",
       "messages[0].tool_calls[0].function"},
      {R"({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f",
         "arguments": "not json"}}]}]})",
       "RequestError", "messages[0].tool_calls[0].function.arguments"},
      {R"({"messages": [{"role": "user", "content": "x"}], "tools": 3})", "RequestError", "tools"},
      {R"({"messages": [{"role": "user", "content": "x"}], "add_generation_prompt": "yes"})",
       "RequestError", "add_generation_prompt"},
      {R"({"messages": [{"role": "user", "content": "x"}], "chat_template": "tool_use"})",
       "RequestError", "chat_template"},
      {std::string(100000, '[') + std::string(100000, ']'), "LimitError", ""},
  };
  for (const auto& c : cases) {
    auto p = ep.prepare(c.request);
    ASSERT_FALSE(p) << c.request.substr(0, 200);
    EXPECT_EQ(p.error().type, c.type) << c.request.substr(0, 200) << ": " << p.error().to_string();
    EXPECT_EQ(p.error().path, c.path) << c.request.substr(0, 200) << ": " << p.error().to_string();
  }
  PrepareOptions few_tools;
  few_tools.max_tools = 0;
  json r = user("x");
  r["tools"] = kTools;
  auto p = ep.prepare(r.dump(), few_tools);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().type, "LimitError");
  EXPECT_EQ(p.error().path, "tools");
}

TEST(EndpointLoad, GenerationConfig) {
  {
    TempModel m("Qwen--Qwen3-0.6B", json{{"eos_token_id", 7}});
    Endpoint ep = load(m.dir);
    EXPECT_EQ(std::vector<std::uint32_t>(ep.stop_ids().begin(), ep.stop_ids().end()),
              std::vector<std::uint32_t>{7});
    EXPECT_EQ(std::vector<std::string>(ep.stop_strings().begin(), ep.stop_strings().end()),
              std::vector<std::string>{"<|im_end|>"});  // the probe's end-of-turn marker
  }
  const std::vector<std::pair<json, std::string>> bad = {
      {json{{"eos_token_id", "x"}}, "eos_token_id"},
      {json{{"eos_token_id", {1, -2}}}, "eos_token_id[1]"},
      {json{{"eos_token_id", 1ll << 40}}, "eos_token_id"},
      {json::array(), ""},
  };
  for (const auto& [config, path] : bad) {
    TempModel m("Qwen--Qwen3-0.6B", config);
    auto ep = Endpoint::load(m.dir);
    ASSERT_FALSE(ep) << config.dump();
    EXPECT_EQ(ep.error().path, path) << ep.error().to_string();
  }
  TempModel broken("Qwen--Qwen3-0.6B");
  std::ofstream(broken.dir / "generation_config.json") << "{not json";
  auto ep = Endpoint::load(broken.dir);
  ASSERT_FALSE(ep);
  EXPECT_EQ(ep.error().type, "JSONDecodeError");
}

// The probe's renders while loading have their own limits (LoadOptions::probe_limits): a
// template whose renders take more steps than allowed renders nothing to the probe, and the
// error names the limit it met.
TEST(EndpointLoad, ProbeLimits) {
  TempModel m("Qwen--Qwen3-0.6B");
  EXPECT_TRUE(load(m.dir).profile().renders);
  chatwire::endpoint::LoadOptions tight;
  tight.probe_limits = chatwire::jinja::Limits{};
  tight.probe_limits->max_steps = 10;
  Endpoint ep = load(m.dir, tight);
  EXPECT_FALSE(ep.profile().renders);
  EXPECT_NE(ep.profile().baseline.error.find("max_steps=10"), std::string::npos)
      << ep.profile().baseline.error;
}

// A profile and parser saved by one Endpoint load into another (no probe, no derivation),
// which then prepares the same prompts; a bad cache fails before the tokenizer is read.
TEST(EndpointLoad, CachedProfile) {
  const Endpoint& probed = qwen3();
  chatwire::endpoint::LoadOptions options;
  options.profile_json = probed.profile_json();
  options.parser_json = probed.parser_json();
  Endpoint cached = load(kData / "models" / "endpoint" / "qwen3", options);
  EXPECT_EQ(cached.profile().to_json_text(), probed.profile().to_json_text());
  EXPECT_EQ(cached.dialect(), probed.dialect());
  EXPECT_EQ(cached.parser_json(), probed.parser_json());
  EXPECT_TRUE(cached.tool_calls_read_back());
  options.parser_json = "{\"syntax\": 5}";
  auto bad_parser = Endpoint::load(kData / "models" / "endpoint" / "qwen3", options);
  ASSERT_FALSE(bad_parser);
  EXPECT_EQ(bad_parser.error().path.substr(0, 6), "syntax") << bad_parser.error().to_string();
  options.parser_json.clear();
  json r = user("Weather in Paris?");
  r["tools"] = kTools;
  auto a = probed.prepare(r.dump()), b = cached.prepare(r.dump());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->text, b->text);
  EXPECT_EQ(a->ids, b->ids);
  options.profile_json = "{\"profile_version\": 1}";
  auto bad = Endpoint::load(kData / "models" / "endpoint" / "qwen3", options);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().path, "renders");
  options.profile_json.clear();
  options.dialect = "no-such-dialect";
  auto unknown = Endpoint::load(kData / "models" / "endpoint" / "qwen3", options);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().path, "dialect");
}

// Mistral Nemo's template raises on OpenAI-style ids and takes 9 alphanumerics: the calls a
// generation reads back get such ids, distinct within the response. Its prompt is not a prefix
// of its rendered conversation; the parser is derived and proven on the conversation's own
// render of the calls (readback), so the calls come back without naming a dialect, and a named
// dialect still overrides.
TEST(EndpointGeneration, ToolCallIdsFollowTheTemplatesRule) {
  TempModel m("mistralai--Mistral-Nemo-Instruct-2407");
  json r = user("Weather in Paris and Rome?");
  r["tools"] = kTools;
  const std::string output =
      R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}},)"
      R"( {"name": "get_weather", "arguments": {"city": "Rome"}}])";
  {
    Endpoint derived = load(m.dir);
    EXPECT_TRUE(derived.tool_calls_read_back());
    auto prompt = derived.prepare(r.dump());
    ASSERT_TRUE(prompt) << prompt.error().to_string();
    EXPECT_TRUE(prompt->tool_calls_read_back);
    auto gen = derived.start(*prompt);
    ASSERT_TRUE(gen->push_text(output));
    ASSERT_TRUE(gen->finish());
    const auto& calls = gen->message().tool_calls;
    ASSERT_EQ(calls.size(), 2u);
    for (const auto& c : calls) EXPECT_EQ(c.id.size(), 9u) << c.id;
    EXPECT_NE(calls[0].id, calls[1].id);
  }
  chatwire::endpoint::LoadOptions named;
  named.dialect = "mistral_v03";
  Endpoint ep = load(m.dir, named);
  EXPECT_EQ(ep.call_ids(), chatwire::endpoint::CallIdStyle::short9);
  EXPECT_EQ(ep.dialect(), "mistral_v03");
  auto prompt = ep.prepare(r.dump());
  ASSERT_TRUE(prompt) << prompt.error().to_string();
  // No tokenizer, no stop ids: every stop string goes to the engine as a string.
  EXPECT_TRUE(prompt->stop_ids.empty());
  EXPECT_FALSE(prompt->stop_strings.empty());
  EXPECT_EQ(prompt->engine_stop_strings, prompt->stop_strings);
  auto gen = ep.start(*prompt);
  ASSERT_TRUE(gen);
  ASSERT_TRUE(gen->push_text(output));
  ASSERT_TRUE(gen->finish());
  const auto& calls = gen->message().tool_calls;
  ASSERT_EQ(calls.size(), 2u);
  for (const auto& c : calls) {
    EXPECT_EQ(c.id.size(), 9u) << c.id;
    for (char ch : c.id) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch))) << c.id;
  }
  EXPECT_NE(calls[0].id, calls[1].id);
  EXPECT_EQ(gen->finish_reason(), "tool_calls");
  // Without a tokenizer.json a generation takes text only.
  EXPECT_FALSE(ep.start(*prompt)->push(std::vector<std::uint32_t>{1, 2}));
  // Qwen3 takes OpenAI-style ids: call_ + 24 alphanumerics.
  EXPECT_EQ(qwen3().call_ids(), chatwire::endpoint::CallIdStyle::openai);
}

// The parser state the prompt implies: QwQ's generation prompt opens <think>, so the output
// starts inside the reasoning (QwQ's own renders prove no parser: its prompt is not a prefix of
// its conversation, so the dialect is named); Qwen3 with enable_thinking=false closes it in the
// prompt.
// A template that writes no tools (Gemma 3): the adapter teaches a call syntax in the system
// prompt, and the model's calls in that syntax are read back as calls, not served as content.
TEST(EndpointGeneration, CallsInTheTaughtSyntax) {
  const Endpoint& ep = shared_endpoint("gemma3");
  json r = user("Weather in Zürich?");
  r["tools"] = kTools;
  auto prompt = ep.prepare(r.dump());
  ASSERT_TRUE(prompt) << prompt.error().to_string();
  EXPECT_EQ(prompt->taught_dialect, "hermes");
  EXPECT_EQ(prompt->dialect, "hermes");
  EXPECT_TRUE(prompt->tool_calls_read_back);
  EXPECT_NE(prompt->text.find("<tool_call>"), std::string::npos);
  auto gen = ep.start(*prompt);
  ASSERT_TRUE(gen);
  ASSERT_TRUE(
      gen->push_text("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                     "\"Zürich\"}}\n</tool_call>"));
  ASSERT_TRUE(gen->finish());
  ASSERT_EQ(gen->message().tool_calls.size(), 1u);
  EXPECT_EQ(gen->message().tool_calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(gen->message().tool_calls[0].arguments), json({{"city", "Zürich"}}));
  EXPECT_EQ(gen->message().content, "");
  EXPECT_EQ(gen->finish_reason(), "tool_calls");
  // Without tools nothing is taught: the template's own parser, content only.
  auto plain = ep.prepare(user("Hi").dump());
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->taught_dialect, "");
  auto text = ep.start(*plain);
  ASSERT_TRUE(text);
  ASSERT_TRUE(text->push_text("<tool_call>\n{}\n</tool_call>"));
  ASSERT_TRUE(text->finish());
  EXPECT_TRUE(text->message().tool_calls.empty());
}

// A gpt-oss answer without reasoning starts with the final channel's header, which the
// template writes before every plain answer: layout, not content.
TEST(EndpointGeneration, FramedPlainAnswer) {
  const Endpoint& ep = shared_endpoint("gpt-oss");
  auto prompt = ep.prepare(user("Hi").dump());
  ASSERT_TRUE(prompt) << prompt.error().to_string();
  for (std::size_t chunk : {1u, 5u, 1000u}) {
    auto gen = ep.start(*prompt);
    ASSERT_TRUE(gen);
    const std::string out = "<|channel|>final<|message|>Hello there.";
    for (std::size_t at = 0; at < out.size(); at += chunk)
      ASSERT_TRUE(gen->push_text(out.substr(at, chunk)));
    ASSERT_TRUE(gen->finish());
    EXPECT_EQ(gen->message().content, "Hello there.") << chunk;
  }
}

// A stop token's text written by the model in other tokens (a call's value quoting the turn-end
// marker) is not the end where ids are pushed: the stop id is. Text alone cannot tell them
// apart, so push_text stops at the text.
TEST(EndpointGeneration, AStopTokensTextInOtherTokensIsNotTheEnd) {
  const Endpoint& ep = qwen3();
  json request = user("Weather?");
  request["tools"] = kTools;
  request["chat_template_kwargs"] = {{"enable_thinking", false}};
  auto prompt = ep.prepare(request.dump());
  ASSERT_TRUE(prompt) << prompt.error().to_string();
  const chatwire::tokenize::Tokenizer& tok = *ep.tokenizer();
  const auto im_end = tok.token_to_id("<|im_end|>");
  ASSERT_TRUE(im_end);
  EXPECT_TRUE(ep.stops_by_id(*prompt, "<|im_end|>"));
  EXPECT_FALSE(ep.stops_by_id(*prompt, "<|im"));
  EXPECT_FALSE(ep.stops_by_id(*prompt, "END"));
  // Each of Qwen3's stop strings is a stop id's token: an engine stopping at the ids needs none.
  EXPECT_FALSE(prompt->stop_strings.empty());
  EXPECT_TRUE(prompt->engine_stop_strings.empty());
  // The marker's characters split over two encodings, so no piece is the special token.
  std::vector<std::uint32_t> ids;
  for (const char* piece :
       {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"a", "<|im", "_end|>",
        "b\"}}\n</tool_call>"}) {
    auto part = tok.encode_ids(piece);
    ASSERT_TRUE(part);
    ids.insert(ids.end(), part->begin(), part->end());
  }
  EXPECT_EQ(std::find(ids.begin(), ids.end(), *im_end), ids.end());
  ids.push_back(*im_end);
  const std::string quoted = R"({"city": "a<|im_end|>b"})";
  for (std::size_t chunk : {1u, 3u, 1000u}) {
    auto gen = ep.start(*prompt);
    ASSERT_TRUE(gen);
    for (std::size_t at = 0; at < ids.size(); at += chunk)
      ASSERT_TRUE(gen->push(std::span(ids).subspan(at, std::min(chunk, ids.size() - at))));
    ASSERT_TRUE(gen->finish());
    ASSERT_EQ(gen->message().tool_calls.size(), 1u) << chunk;
    EXPECT_EQ(json::parse(gen->message().tool_calls[0].arguments), json::parse(quoted)) << chunk;
    EXPECT_TRUE(gen->stopped());
  }
  auto text = tok.decode(ids);
  ASSERT_TRUE(text);
  auto gen = ep.start(*prompt);
  ASSERT_TRUE(gen->push_text(*text));
  ASSERT_TRUE(gen->finish());
  EXPECT_TRUE(gen->stopped());
  EXPECT_EQ(gen->message().content.find("b\"}}"), std::string::npos);
  for (const auto& call : gen->message().tool_calls)
    EXPECT_EQ(call.arguments.find("<|im_end|>"), std::string::npos) << call.arguments;
}

TEST(EndpointGeneration, ParserStateFromThePrompt) {
  TempModel qwq("Qwen--QwQ-32B");
  chatwire::endpoint::LoadOptions hermes;
  hermes.dialect = "hermes";
  Endpoint ep = load(qwq.dir, hermes);
  auto prompt = ep.prepare(user("2+2?").dump());
  ASSERT_TRUE(prompt) << prompt.error().to_string();
  EXPECT_TRUE(prompt->reasoning_prefilled);
  auto gen = ep.start(*prompt);
  ASSERT_TRUE(gen->push_text("Four, surely.\n</think>\n\n4"));
  ASSERT_TRUE(gen->finish());
  EXPECT_EQ(gen->message().reasoning_content, "Four, surely.\n");
  EXPECT_EQ(gen->message().content, "\n\n4");

  json off = user("2+2?");
  off["chat_template_kwargs"] = {{"enable_thinking", false}};
  auto closed = qwen3().prepare(off.dump());
  ASSERT_TRUE(closed) << closed.error().to_string();
  EXPECT_TRUE(closed->text.ends_with("<think>\n\n</think>\n\n")) << closed->text;
  EXPECT_EQ(closed->enable_thinking, false);
  EXPECT_FALSE(closed->reasoning_prefilled);
  auto plain = qwen3().start(*closed);
  ASSERT_TRUE(plain->push_text("4<|im_end|>"));
  ASSERT_TRUE(plain->finish());
  EXPECT_EQ(plain->message().content, "4");
  EXPECT_EQ(plain->message().reasoning_content, "");
  EXPECT_TRUE(plain->stopped());
}

TEST(EndpointPrepare, ModesMasksAndClock) {
  json r = {{"messages",
             {{{"role", "user"}, {"content", "Hi"}}, {{"role", "assistant"}, {"content", "Hel"}}}}};
  PrepareOptions prefill;
  prefill.mode = chatwire::chat::Mode::prefill;
  auto p = qwen3().prepare(r.dump(), prefill);
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_TRUE(p->text.ends_with("Hel")) << p->text;
  PrepareOptions training;
  training.mode = chatwire::chat::Mode::training;
  training.assistant_mask = true;
  auto t = qwen3().prepare(r.dump(), training);
  ASSERT_TRUE(t) << t.error().to_string();
  EXPECT_EQ(t->assistant_masks.size(), t->ids.size());
  EXPECT_FALSE(t->warnings.empty());  // this template has no {% generation %} blocks
  // continue_final_message in the request works through adaptation too.
  r["continue_final_message"] = true;
  auto c = qwen3().prepare(r.dump());
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->text, p->text);
  // The clock: gpt-oss writes the date; the real one unless `now` is given.
  const Endpoint& oss = shared_endpoint("gpt-oss");
  PrepareOptions fixed;
  fixed.now = "2031-02-03T04:05:06";
  auto dated = oss.prepare(user("Hi").dump(), fixed);
  ASSERT_TRUE(dated);
  EXPECT_NE(dated->text.find("2031-02-03"), std::string::npos);
  auto today = oss.prepare(user("Hi").dump());
  ASSERT_TRUE(today);
  EXPECT_EQ(today->text.find("2031-02-03"), std::string::npos);
}

// Hostile output never crashes: random bytes as text, ids beyond the vocabulary (an error).
TEST(EndpointGeneration, HostileOutput) {
  json r = user("x");
  r["tools"] = kTools;
  auto prompt = qwen3().prepare(r.dump());
  ASSERT_TRUE(prompt);
  std::mt19937 random(7);
  for (int round = 0; round < 20; ++round) {
    auto gen = qwen3().start(*prompt);
    std::string text;
    for (int i = 0; i < 400; ++i) {
      static const std::string pieces[] = {
          "<tool_call>", "</tool_call>", "<think>", "</think>", "{\"name\": ", "\"", "{",
          "}",           "<|im_",        "end|>",   "\xff",     "\xc3",        "a"};
      text += pieces[random() % std::size(pieces)];
    }
    for (std::size_t i = 0; i < text.size(); i += 1 + random() % 9)
      ASSERT_TRUE(gen->push_text(std::string_view(text).substr(i, 1 + random() % 9)));
    ASSERT_TRUE(gen->finish());
    EXPECT_FALSE(gen->push_text("more")) << "a finished generation refuses input";
  }
  auto gen = qwen3().start(*prompt);
  EXPECT_FALSE(gen->push(std::vector<std::uint32_t>{4000000000u}));
}

// Stop strings that overlap end the message where the first of them is complete, as text
// arriving piece by piece meets them: the same message whatever the chunking.
TEST(EndpointGeneration, OverlappingStopStringsCutWhereTheFirstEnds) {
  json r = user("x");
  r["chat_template_kwargs"] = {{"enable_thinking", false}};
  auto prompt = qwen3().prepare(r.dump());
  ASSERT_TRUE(prompt);
  prompt->stop_strings = {"abcd", "c"};
  for (std::size_t chunk : {1u, 2u, 3u, 100u}) {
    auto gen = qwen3().start(*prompt);
    const std::string text = "zabcd and more";
    std::string streamed;
    for (std::size_t at = 0; at < text.size(); at += chunk) {
      auto deltas = gen->push_text(std::string_view(text).substr(at, chunk));
      ASSERT_TRUE(deltas);
      for (const auto& d : *deltas) streamed += d.content;
    }
    auto rest = gen->finish();
    ASSERT_TRUE(rest);
    for (const auto& d : *rest) streamed += d.content;
    EXPECT_EQ(gen->message().content, "zab") << chunk;
    EXPECT_EQ(streamed, "zab") << chunk;
    EXPECT_TRUE(gen->stopped());
  }
}

// An id the tokenizer cannot decode is an error for its whole chunk, which leaves the
// generation as it was: the ids pushed with it are not lost, and the generation goes on.
TEST(EndpointGeneration, AnUnknownIdLeavesTheGenerationUsable) {
  auto prompt = qwen3().prepare(user("x").dump());
  ASSERT_TRUE(prompt);
  const auto& tok = *qwen3().tokenizer();
  auto hello = tok.encode_ids("Hello there");
  ASSERT_TRUE(hello);
  auto gen = qwen3().start(*prompt);
  std::vector<std::uint32_t> bad = *hello;
  bad.push_back(4000000000u);
  auto refused = gen->push(bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("4000000000"), std::string::npos)
      << refused.error().message;
  ASSERT_TRUE(gen->push(*hello));
  ASSERT_TRUE(gen->finish());
  EXPECT_EQ(gen->message().content, "Hello there");
}

// Content without a parser, and a named call's arguments: a character cut between two pieces
// reaches no delta in halves (the deltas still concatenate to the message).
TEST(EndpointGeneration, NoDeltaSplitsACharacter) {
  TempModel plain("Qwen--QwQ-32B");
  json cached = json::parse(load(plain.dir).parser_json());
  cached["syntax"] = nullptr;  // no parser: the output is content as it comes
  chatwire::endpoint::LoadOptions content_only;
  content_only.parser_json = cached.dump();
  Endpoint ep = load(plain.dir, content_only);
  ASSERT_EQ(ep.dialect(), "");
  auto prompt = ep.prepare(user("x").dump());
  ASSERT_TRUE(prompt) << prompt.error().to_string();
  auto gen = ep.start(*prompt);
  ASSERT_TRUE(gen);
  std::string streamed;
  for (std::string_view piece : {"caf\xC3", "\xA9 \xE2\x82", "\xAC", "\xF0\x9F"}) {
    auto deltas = gen->push_text(piece);
    ASSERT_TRUE(deltas);
    for (const auto& d : *deltas) {
      streamed += d.content;
      EXPECT_EQ(chatwire::util::utf8::complete_prefix(d.content), d.content.size()) << d.content;
    }
  }
  auto rest = gen->finish();
  ASSERT_TRUE(rest);
  for (const auto& d : *rest) streamed += d.content;
  EXPECT_EQ(streamed, gen->message().content);
  EXPECT_EQ(streamed, "caf\xC3\xA9 \xE2\x82\xAC\xF0\x9F");  // a cut-off character at the end kept

  json named = user("Weather?");
  named["tools"] = kTools;
  named["tool_choice"] = {{"type", "function"}, {"function", {{"name", "get_weather"}}}};
  auto forced = qwen3().prepare(named.dump());
  ASSERT_TRUE(forced) << forced.error().to_string();
  auto call = qwen3().start(*forced);
  std::string arguments;
  for (std::string_view piece : {"{\"city\": \"Z\xC3", "\xBCrich\"}"}) {
    auto deltas = call->push_text(piece);
    ASSERT_TRUE(deltas);
    for (const auto& d : *deltas)
      for (const auto& c : d.tool_calls) {
        EXPECT_EQ(chatwire::util::utf8::complete_prefix(c.arguments), c.arguments.size());
        arguments += c.arguments;
      }
  }
  ASSERT_TRUE(call->finish());
  EXPECT_TRUE(call->warnings().empty());
  EXPECT_EQ(arguments, "{\"city\": \"Z\xC3\xBCrich\"}");
  ASSERT_EQ(call->message().tool_calls.size(), 1u);
  EXPECT_EQ(call->message().tool_calls[0].arguments, arguments);
}

// A named tool_choice: nothing generated is the call without arguments ("{}"); output that is no
// JSON object (an engine that did not constrain it, a cut-off one) is kept, with a warning.
TEST(EndpointGeneration, ANamedCallsArgumentsAreAnObjectOrSaidNotToBe) {
  json named = user("Weather?");
  named["tools"] = kTools;
  named["tool_choice"] = {{"type", "function"}, {"function", {{"name", "get_weather"}}}};
  auto forced = qwen3().prepare(named.dump());
  ASSERT_TRUE(forced) << forced.error().to_string();
  auto empty = qwen3().start(*forced);
  auto deltas = empty->finish();
  ASSERT_TRUE(deltas);
  ASSERT_EQ(empty->message().tool_calls.size(), 1u);
  EXPECT_EQ(empty->message().tool_calls[0].arguments, "{}");
  EXPECT_TRUE(empty->warnings().empty());
  auto cut = qwen3().start(*forced);
  ASSERT_TRUE(cut->push_text("{\"city\": \"Par"));
  ASSERT_TRUE(cut->finish());
  EXPECT_EQ(cut->message().tool_calls[0].arguments, "{\"city\": \"Par");
  const auto warnings = cut->warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].code, "invalid_arguments");
}

// tool_choice "none": a call the model writes anyway is the content it wrote (vLLM runs no tool
// parser then); the reasoning is still read. "auto" reads the same output as a call.
TEST(EndpointGeneration, ToolChoiceNoneReadsNoCalls) {
  json r = user("Weather?");
  r["tools"] = kTools;
  const std::string out =
      "<think>hm</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>";
  for (const char* choice : {"none", "auto"}) {
    r["tool_choice"] = choice;
    auto prompt = qwen3().prepare(r.dump());
    ASSERT_TRUE(prompt) << prompt.error().to_string();
    EXPECT_EQ(prompt->tool_calls_allowed, std::string(choice) == "auto");
    auto gen = qwen3().start(*prompt);
    ASSERT_TRUE(gen->push_text(out));
    ASSERT_TRUE(gen->finish());
    EXPECT_EQ(gen->message().reasoning_content, "hm") << choice;
    if (std::string(choice) == "none") {
      EXPECT_TRUE(gen->message().tool_calls.empty());
      EXPECT_NE(gen->message().content.find("<tool_call>"), std::string::npos);
      EXPECT_EQ(gen->finish_reason(), "length");  // no stop pushed, no calls
    } else {
      EXPECT_EQ(gen->message().tool_calls.size(), 1u);
    }
  }
}

// parallel_tool_calls false: the delta that began the cut call is not sent empty, and a
// `required` list longer than one call (an engine ignoring maxItems) keeps its first call and
// says so.
TEST(EndpointGeneration, OneCallWhenParallelCallsAreOff) {
  json r = user("Weather?");
  r["tools"] = kTools;
  r["parallel_tool_calls"] = false;
  r["chat_template_kwargs"] = {{"enable_thinking", false}};
  auto prompt = qwen3().prepare(r.dump());
  ASSERT_TRUE(prompt) << prompt.error().to_string();
  auto gen = qwen3().start(*prompt);
  auto deltas = gen->push_text(
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"A\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"B\"}}\n</tool_call>");
  ASSERT_TRUE(deltas);
  for (const auto& d : *deltas)
    EXPECT_FALSE(d.content.empty() && d.reasoning_content.empty() && d.tool_calls.empty());
  EXPECT_TRUE(gen->call_limit_reached());
  ASSERT_TRUE(gen->finish());
  EXPECT_EQ(gen->message().tool_calls.size(), 1u);

  r["tool_choice"] = "required";
  auto required = qwen3().prepare(r.dump());
  ASSERT_TRUE(required) << required.error().to_string();
  auto listed = qwen3().start(*required);
  ASSERT_TRUE(listed->push_text(R"([{"name": "get_weather", "parameters": {"city": "A"}},
                                    {"name": "get_weather", "parameters": {"city": "B"}}])"));
  ASSERT_TRUE(listed->finish());
  ASSERT_EQ(listed->message().tool_calls.size(), 1u);
  EXPECT_EQ(json::parse(listed->message().tool_calls[0].arguments),
            json::parse(R"({"city": "A"})"));
  EXPECT_TRUE(listed->call_limit_reached());
  const auto warnings = listed->warnings();
  EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(),
                          [](const auto& w) { return w.code == "call_limit"; }));
}

// One Endpoint, many threads: every thread gets the same prompt and the same message.
TEST(EndpointThreads, SharedEndpoint) {
  const Endpoint& ep = qwen3();
  json r = user("Weather in Paris?");
  r["tools"] = kTools;
  auto reference = ep.prepare(r.dump());
  ASSERT_TRUE(reference);
  ASSERT_NE(ep.tokenizer(), nullptr) << "tokenizer.json not present (scripts/fetch-tokenizers)";
  const std::string output =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>";
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        auto p = ep.prepare(r.dump());
        if (!p || p->ids != reference->ids) return;
        auto gen = ep.start(*p);
        auto ids = ep.tokenizer()->encode_ids(output);
        if (!gen || !ids || !gen->push(*ids) || !gen->finish()) return;
        if (gen->message().tool_calls.size() != 1) return;
      }
      ok[t] = 1;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

TEST(EndpointJson, WireShapes) {
  json r = user("Hi");
  auto p = qwen3().prepare(r.dump());
  ASSERT_TRUE(p);
  json j = chatwire::endpoint::to_json(*p);
  EXPECT_EQ(j["text"], p->text);
  EXPECT_EQ(j["parser"]["dialect"], std::string(qwen3().dialect()));
  chatwire::endpoint::Message m{"hi", "", {{"call_1", "f", "{}"}}};
  EXPECT_EQ(chatwire::endpoint::to_json(m).dump(),
            R"({"role":"assistant","content":"hi","tool_calls":[{"id":"call_1","type":"function",)"
            R"("function":{"name":"f","arguments":"{}"}}]})");
  auto q = chatwire::endpoint::prepare(qwen3(), r);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->text, p->text);
}

}  // namespace
