// The Endpoint end to end on five checkpoint directories (data/models/endpoint/: Qwen3,
// Llama 3.1, gpt-oss, Mistral v0.3, DeepSeek-R1): OpenAI request -> prompt text and ids (both
// checked against the reference: data/goldens/endpoint/cases.jsonl, scripts/regen-endpoint-goldens)
// -> the ids a model trained on the template generates -> the OpenAI message, the same for every
// chunking of the ids and of the text.
#include "chatwire/endpoint.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "chatwire/endpoint_json.hpp"
#include "chatwire/probe_json.hpp"
#include "endpoint/shared.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using chatwire::endpoint::Delta;
using chatwire::endpoint::Endpoint;
using chatwire::endpoint::Generation;
using chatwire::endpoint::Message;

namespace {

const fs::path kData = CHATWIRE_DATA_DIR;

struct Case {
  std::string name;
  json golden;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  std::ifstream in(kData / "goldens" / "endpoint" / "cases.jsonl");
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    out.push_back({j["model"].get<std::string>() + "/" + j["case"].get<std::string>(), j});
  }
  return out;
}

std::string test_name(const testing::TestParamInfo<Case>& info) {
  std::string s;
  for (char c : info.param.name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

// Everything the deltas of one generation say, assembled as a client assembles a stream.
struct Assembled {
  std::string content, reasoning;
  std::vector<chatwire::endpoint::ToolCall> calls;
  void add(const std::vector<Delta>& deltas) {
    for (const auto& d : deltas) {
      content += d.content;
      reasoning += d.reasoning_content;
      for (const auto& c : d.tool_calls) {
        if (c.index >= calls.size()) calls.resize(c.index + 1);
        if (!c.id.empty()) calls[c.index].id = c.id;
        if (!c.name.empty()) calls[c.index].name = c.name;
        calls[c.index].arguments += c.arguments;
      }
    }
  }
};

bool well_formed_id(const std::string& id, chatwire::endpoint::CallIdStyle style) {
  auto alnum = [](std::string_view s) {
    for (char c : s)
      if (!std::isalnum(static_cast<unsigned char>(c))) return false;
    return true;
  };
  if (style == chatwire::endpoint::CallIdStyle::short9) return id.size() == 9 && alnum(id);
  return id.size() == 29 && id.starts_with("call_") && alnum(std::string_view(id).substr(5));
}

std::string_view strip(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The message read back equals the reply the template rendered (arguments JSON-equal). Text is
// compared without the whitespace the template frames it with ("<think>\n", "</think>\n\n"):
// which of it belongs to the markers is the template-derived parser's to know (issue 16,
// section 2), the dialect parsers keep it.
void expect_message(const Message& m, const json& expected, const std::string& what) {
  EXPECT_EQ(strip(m.content),
            expected["content"].is_null() ? "" : expected["content"].get<std::string>())
      << what;
  EXPECT_EQ(strip(m.reasoning_content), expected.value("reasoning_content", "")) << what;
  const json calls = expected.value("tool_calls", json::array());
  ASSERT_EQ(m.tool_calls.size(), calls.size()) << what;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(m.tool_calls[i].name, calls[i]["function"]["name"]) << what;
    EXPECT_EQ(json::parse(m.tool_calls[i].arguments),
              json::parse(calls[i]["function"]["arguments"].get<std::string>()))
        << what << ": " << m.tool_calls[i].arguments;
    if (calls[i].contains("id")) {
      EXPECT_EQ(m.tool_calls[i].id, calls[i]["id"]) << what;
    }
  }
}

class EndpointEndToEnd : public testing::TestWithParam<Case> {};

TEST_P(EndpointEndToEnd, RequestToIdsToMessage) {
  const json& g = GetParam().golden;
  const Endpoint& ep = shared_endpoint(g["model"], g.value("dialect", ""));
  chatwire::endpoint::PrepareOptions options;
  options.now = g["now"];
  auto prompt = ep.prepare(g["request"].dump(), options);
  ASSERT_TRUE(prompt) << prompt.error().to_string();
  EXPECT_EQ(prompt->text, g["prompt"]["text"].get<std::string>());
  EXPECT_EQ(prompt->ids, g["prompt"]["ids"].get<std::vector<std::uint32_t>>());
  // No double BOS: the template writes its own, and encoding adds none (add_special_tokens=False).
  ASSERT_NE(ep.tokenizer(), nullptr) << g["model"] << ": tokenizer.json not present "
                                     << "(scripts/fetch-tokenizers brings it)";
  if (auto bos = ep.tokenizer()->bos_token())
    if (auto bos_id = ep.tokenizer()->token_to_id(*bos); bos_id && prompt->ids.size() > 1) {
      EXPECT_FALSE(prompt->ids[0] == *bos_id && prompt->ids[1] == *bos_id);
    }
  std::vector<std::string> codes;
  for (const auto& a : prompt->adaptations) codes.push_back(a.code);
  EXPECT_EQ(codes, g["adaptations"].get<std::vector<std::string>>());
  const auto generated = g["generated"]["ids"].get<std::vector<std::uint32_t>>();
  const std::uint32_t stop = generated.back();
  EXPECT_NE(std::find(prompt->stop_ids.begin(), prompt->stop_ids.end(), stop),
            prompt->stop_ids.end())
      << "the generation ends with " << stop << ", which is not a stop id";
  EXPECT_NE(std::find(prompt->stop_strings.begin(), prompt->stop_strings.end(),
                      g["generated"]["stop"].get<std::string>()),
            prompt->stop_strings.end());

  // One shot: all ids at once (a junk id after the stop id is ignored).
  auto gen = ep.start(*prompt);
  ASSERT_TRUE(gen) << gen.error().to_string();
  std::vector<std::uint32_t> with_junk = generated;
  with_junk.push_back(generated.front());
  Assembled whole;
  auto deltas = gen->push(with_junk);
  ASSERT_TRUE(deltas) << deltas.error().to_string();
  whole.add(*deltas);
  auto tail = gen->finish();
  ASSERT_TRUE(tail);
  whole.add(*tail);
  EXPECT_TRUE(gen->stopped());
  // Reasoning tokens as vLLM counts them: the ids between each reasoning opener and its close,
  // 0 without reasoning. Counted here from the reply's encoding with offsets: the tokens that
  // begin inside a block of the text.
  {
    std::size_t expected = 0;
    if (!g["expected"].value("reasoning_content", std::string()).empty()) {
      const std::string text = g["generated"]["text"].get<std::string>();
      chatwire::tokenize::EncodeOptions with_offsets;
      with_offsets.with_offsets = true;
      auto enc = ep.tokenizer()->encode(text, with_offsets);
      ASSERT_TRUE(enc);
      ASSERT_EQ(enc->ids, std::vector<std::uint32_t>(generated.begin(), generated.end() - 1));
      for (const auto& [open, close] : {std::pair<std::string, std::string>{"<think>", "</think>"},
                                        {"<|channel|>analysis<|message|>", "<|end|>"}}) {
        for (std::size_t at = text.find(open); at != std::string::npos;
             at = text.find(open, at + 1)) {
          const std::size_t begin = at + open.size();
          const std::size_t end = std::min(text.find(close, begin), text.size());
          for (const auto& [b, e] : enc->offsets) expected += b >= begin && b < end;
        }
      }
      EXPECT_GT(expected, 0u) << text;
    }
    EXPECT_EQ(gen->reasoning_tokens(), expected) << g["generated"]["text"];
  }
  const Message one_shot = gen->message();
  expect_message(one_shot, g["expected"], "one shot");
  EXPECT_EQ(gen->finish_reason(), one_shot.tool_calls.empty() ? "stop" : "tool_calls");
  std::set<std::string> ids;
  for (const auto& c : one_shot.tool_calls) {
    if (!g["expected"]["tool_calls"][ids.size()].contains("id")) {
      EXPECT_TRUE(well_formed_id(c.id, prompt->call_ids)) << c.id;
    }
    ids.insert(c.id);
  }
  EXPECT_EQ(ids.size(), one_shot.tool_calls.size()) << "tool-call ids are unique";

  // Every chunk size of the ids, and of the text: the same message, and the deltas add up to it.
  auto check_stream = [&](const Assembled& s, const Message& m, const std::string& what) {
    expect_message(m, g["expected"], what);
    EXPECT_EQ(s.content, m.content) << what;
    EXPECT_EQ(s.reasoning, m.reasoning_content) << what;
    ASSERT_EQ(s.calls.size(), m.tool_calls.size()) << what;
    for (std::size_t i = 0; i < m.tool_calls.size(); ++i) {
      EXPECT_EQ(s.calls[i].id, m.tool_calls[i].id) << what;
      EXPECT_EQ(s.calls[i].name, m.tool_calls[i].name) << what;
      EXPECT_EQ(s.calls[i].arguments, m.tool_calls[i].arguments) << what;
    }
  };
  check_stream(whole, one_shot, "one shot");
  for (std::size_t k = 1; k < generated.size(); ++k) {
    auto g2 = ep.start(*prompt);
    ASSERT_TRUE(g2);
    Assembled s;
    for (std::size_t i = 0; i < generated.size(); i += k) {
      auto d = g2->push(std::span(generated).subspan(i, std::min(k, generated.size() - i)));
      ASSERT_TRUE(d) << d.error().to_string();
      s.add(*d);
    }
    auto f = g2->finish();
    ASSERT_TRUE(f);
    s.add(*f);
    check_stream(s, g2->message(), "ids in chunks of " + std::to_string(k));
    EXPECT_EQ(g2->reasoning_tokens(), gen->reasoning_tokens()) << "ids in chunks of " << k;
    if (HasFailure()) return;
  }
  const std::string text = g["generated"]["text"].get<std::string>() +
                           g["generated"]["stop"].get<std::string>() + "ignored after the stop";
  for (std::size_t k = 1; k <= text.size(); k += (k < 16 ? 1 : 7)) {
    auto g2 = ep.start(*prompt);
    ASSERT_TRUE(g2);
    Assembled s;
    for (std::size_t i = 0; i < text.size(); i += k) {
      auto d = g2->push_text(std::string_view(text).substr(i, k));
      ASSERT_TRUE(d);
      s.add(*d);
    }
    auto f = g2->finish();
    ASSERT_TRUE(f);
    s.add(*f);
    EXPECT_TRUE(g2->stopped());
    check_stream(s, g2->message(), "text in chunks of " + std::to_string(k));
    if (HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Goldens, EndpointEndToEnd, testing::ValuesIn(cases()), test_name);

TEST(Endpoint, GoldensCoverTheFiveFamilies) {
  std::set<std::string> models;
  for (const auto& c : cases()) models.insert(c.golden["model"]);
  EXPECT_EQ(models,
            (std::set<std::string>{"qwen3", "llama3_1", "gpt-oss", "mistral-v0.3", "deepseek-r1"}));
}

}  // namespace
