// The gateway's own request fields: passed on, applied or refused with the field path, never
// ignored; and the OpenAI response shapes it writes.
#include "serve/chat_params.hpp"

#include <gtest/gtest.h>

#include "serve/openai_shapes.hpp"

namespace cs = chatwire::serve;
using cs::json;

namespace {

cs::ModelConfig model() {
  cs::ModelConfig m;
  // Assigned from std::string, not a literal: GCC 12 at -O3 reported a false -Wstringop-overflow
  // for the literal's inlined copy here when openai_shapes.hpp gained the warnings field.
  m.name = std::string("m");
  m.default_sampling_json = std::string(R"({"temperature": 0.6, "top_p": 0.95})");
  return m;
}

std::string refused(json request) {
  auto p = cs::read_chat_params(request, model());
  return p ? "accepted" : p.error().path;
}

TEST(ChatParams, ReadsStreamingLimitsStopAndSampling) {
  json r = json::parse(R"({"model": "m", "messages": [], "stream": true,
      "stream_options": {"include_usage": true}, "max_completion_tokens": 9, "max_tokens": 5,
      "stop": "END", "temperature": 0.2, "seed": 7})");
  auto p = cs::read_chat_params(r, model());
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_TRUE(p->stream);
  EXPECT_TRUE(p->include_usage);
  EXPECT_EQ(p->max_tokens, 9u);  // max_completion_tokens wins, as OpenAI's newer name
  EXPECT_EQ(p->stop, std::vector<std::string>{"END"});
  EXPECT_EQ(p->sampling["temperature"], 0.2);  // the request's over the model's default
  EXPECT_EQ(p->sampling["top_p"], 0.95);       // the model's default
  EXPECT_EQ(p->sampling["seed"], 7);
}

TEST(ChatParams, ToolChoiceNoneDropsTheToolsForcedCallsNeedAConstrainingBackend) {
  json r = json::parse(R"({"tools": [{"type": "function"}], "tool_choice": "none"})");
  ASSERT_TRUE(cs::read_chat_params(r, model()));
  EXPECT_FALSE(r.contains("tools"));
  EXPECT_FALSE(r.contains("tool_choice"));
  json a = json::parse(R"({"tools": [], "tool_choice": "auto"})");
  ASSERT_TRUE(cs::read_chat_params(a, model()));
  EXPECT_TRUE(a.contains("tools"));
  // required and a named function are left for the Endpoint, which builds the constraint.
  const json named =
      json::parse(R"({"tool_choice": {"type": "function", "function": {"name": "f"}}})");
  for (json forced : {json::parse(R"({"tool_choice": "required"})"), named}) {
    json copy = forced;
    ASSERT_TRUE(cs::read_chat_params(copy, model())) << forced;
    EXPECT_EQ(copy["tool_choice"], forced["tool_choice"]);
    auto plain = model();
    plain.backend_structured_output = false;
    copy = forced;
    auto refused_here = cs::read_chat_params(copy, plain);
    ASSERT_FALSE(refused_here) << forced;
    EXPECT_EQ(refused_here.error().path, "tool_choice");
    copy = forced;
    copy["response_format"] = {{"type", "json_object"}};
    EXPECT_EQ(refused(copy), "response_format") << forced;
  }
  json parallel = json::parse(R"({"parallel_tool_calls": false})");
  ASSERT_TRUE(cs::read_chat_params(parallel, model()));
  EXPECT_EQ(parallel["parallel_tool_calls"], false);  // read by the Endpoint
}

TEST(ChatParams, BadFieldsNameTheirPath) {
  EXPECT_EQ(refused(json::parse(R"({"stream": "yes"})")), "stream");
  EXPECT_EQ(refused(json::parse(R"({"stream": true, "stream_options": {"include_usage": 1}})")),
            "stream_options.include_usage");
  EXPECT_EQ(refused(json::parse(R"({"max_tokens": 0})")), "max_tokens");
  EXPECT_EQ(refused(json::parse(R"({"stop": ["a", 2]})")), "stop[1]");
  EXPECT_EQ(refused(json::parse(R"({"temperature": 9})")), "temperature");
  EXPECT_EQ(refused(json::parse(R"({"n": 2})")), "accepted");
  EXPECT_EQ(refused(json::parse(R"({"n": 17})")), "n");  // limits.max_choices
  EXPECT_EQ(refused(json::parse(R"({"n": 0})")), "n");
  EXPECT_EQ(refused(json::parse(R"({"n": 1})")), "accepted");
  EXPECT_EQ(refused(json::parse(R"({"logprobs": true, "top_logprobs": 3})")), "accepted");
  EXPECT_EQ(refused(json::parse(R"({"logprobs": 1})")), "logprobs");
  EXPECT_EQ(refused(json::parse(R"({"logprobs": true, "top_logprobs": 21})")), "top_logprobs");
  EXPECT_EQ(refused(json::parse(R"({"top_logprobs": 2})")), "top_logprobs");
  EXPECT_EQ(refused(json::parse(R"({"response_format": {"type": "yaml"}})")),
            "response_format.type");
  EXPECT_EQ(refused(json::parse("[]")), "");
}

// What a backend would refuse (a 502 to the client) or what the gateway cannot honour is a 400
// naming the field; logit_bias is passed on.
TEST(ChatParams, TypesRangesAndFieldsThatCannotBeHonoured) {
  EXPECT_EQ(refused(json::parse(R"({"seed": 1.5})")), "seed");
  EXPECT_EQ(refused(json::parse(R"({"seed": 9223372036854775807})")), "accepted");
  EXPECT_EQ(refused(json::parse(R"({"seed": 9223372036854775808})")), "seed");
  EXPECT_EQ(refused(json::parse(R"({"seed": -5})")), "accepted");
  EXPECT_EQ(refused(json::parse(R"({"top_k": 2.5})")), "top_k");
  EXPECT_EQ(refused(json::parse(R"({"top_k": 40})")), "accepted");
  EXPECT_EQ(refused(json::parse(R"({"stream_options": {"include_usage": true}})")),
            "stream_options");  // as vLLM: only with stream true
  EXPECT_EQ(refused(json::parse(R"({"response_format": {"type": "json_schema"}})")),
            "response_format.json_schema");
  EXPECT_EQ(refused(json::parse(
                R"({"response_format": {"type": "json_schema", "json_schema": {"schema": 1}}})")),
            "response_format.json_schema.schema");
  EXPECT_EQ(refused(json::parse(R"({"tool_choice": "none", "tools": 5})")), "tools");
  EXPECT_EQ(refused(json::parse(R"({"logit_bias": "x"})")), "logit_bias");
  EXPECT_EQ(refused(json::parse(R"({"logit_bias": {"abc": 1}})")), "logit_bias.abc");
  EXPECT_EQ(refused(json::parse(R"({"logit_bias": {"15043": 101}})")), "logit_bias.15043");
  EXPECT_EQ(refused(json::parse(R"({"logit_bias": {"99999999999": 1}})")),
            "logit_bias.99999999999");
  EXPECT_EQ(refused(json::parse(R"({"audio": {"voice": "alloy"}})")), "audio");
  EXPECT_EQ(refused(json::parse(R"({"prediction": {"type": "content", "content": "x"}})")),
            "prediction");
  EXPECT_EQ(refused(json::parse(R"({"echo": true})")), "echo");
  EXPECT_EQ(refused(json::parse(R"({"echo": false})")), "accepted");
  EXPECT_EQ(refused(json::parse(R"({"store": true})")), "store");
  EXPECT_EQ(refused(json::parse(R"({"store": false})")), "accepted");
  EXPECT_EQ(refused(json::parse(R"({"modalities": ["text", "audio"]})")), "modalities");
  EXPECT_EQ(refused(json::parse(R"({"modalities": ["text"]})")), "accepted");
  EXPECT_EQ(refused(json::parse(R"({"user": 5})")), "user");
  EXPECT_EQ(refused(json::parse(R"({"metadata": []})")), "metadata");
  json r = json::parse(R"({"logit_bias": {"15043": -100, "0": 2.5}})");
  auto p = cs::read_chat_params(r, model());
  ASSERT_TRUE(p) << p.error().to_string();
  EXPECT_EQ(p->sampling["logit_bias"], r["logit_bias"]);
}

TEST(ChatParams, ResponseFormatNeedsAConstrainingBackend) {
  json r = json::parse(R"({"response_format": {"type": "json_object"}})");
  auto p = cs::read_chat_params(r, model());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->response_format["type"], "json_object");
  auto m = model();
  m.backend_structured_output = false;
  json r2 = r;
  auto q = cs::read_chat_params(r2, m);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().path, "response_format");
}

const std::vector<std::string> kFields = {"reasoning_content", "reasoning"};
cs::ResponseHead head() {
  return {"chatcmpl-1", 1700000000, "m", &kFields};
}

TEST(OpenAIShapes, ErrorBodyHasOpenAIsFourKeys) {
  cs::HttpError e{404, "invalid_request_error", "no such model", "model", "model_not_found"};
  EXPECT_EQ(
      cs::error_body(e),
      R"({"error":{"message":"no such model","type":"invalid_request_error","param":"model","code":"model_not_found"}})");
  cs::HttpError none{500, "server_error", "x", "", ""};
  EXPECT_EQ(json::parse(cs::error_body(none))["error"]["param"], nullptr);
}

TEST(OpenAIShapes, CompletionWithCallsHasNullContentAndParameterlessArguments) {
  chatwire::endpoint::Message m;
  m.reasoning_content = "why";
  m.tool_calls.push_back({"call_1", "now", ""});
  cs::Usage usage;
  usage.prompt_tokens = 3;
  usage.completion_tokens = 4;
  usage.reasoning_tokens = 2;
  auto j = json::parse(cs::completion_body(head(), m, "tool_calls", usage));
  const auto& msg = j["choices"][0]["message"];
  EXPECT_EQ(msg["content"], nullptr);
  EXPECT_EQ(msg["reasoning_content"], "why");
  EXPECT_EQ(msg["reasoning"], "why");
  EXPECT_EQ(msg["tool_calls"][0]["function"]["arguments"], "{}");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(j["usage"]["total_tokens"], 7);
  EXPECT_EQ(j["usage"]["completion_tokens_details"]["reasoning_tokens"], 2);
  EXPECT_FALSE(j["usage"].contains("prompt_tokens_details"));  // the backend said nothing
  EXPECT_EQ(j["object"], "chat.completion");
}

TEST(OpenAIShapes, ChunksFollowOpenAIsStreamingShape) {
  chatwire::endpoint::Delta first;
  auto j = json::parse(cs::chunk_body(head(), first, true));
  EXPECT_EQ(j["choices"][0]["delta"], json::parse(R"({"role":"assistant","content":""})"));
  chatwire::endpoint::Delta call;
  call.tool_calls.push_back({0, "call_1", "f", ""});
  auto c = json::parse(cs::chunk_body(head(), call, false));
  EXPECT_EQ(
      c["choices"][0]["delta"]["tool_calls"][0],
      json::parse(
          R"({"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}})"));
  chatwire::endpoint::Delta more;
  more.tool_calls.push_back({0, "", "", "{\"a\""});
  auto m = json::parse(cs::chunk_body(head(), more, false));
  EXPECT_EQ(m["choices"][0]["delta"]["tool_calls"][0],
            json::parse(R"({"index":0,"function":{"arguments":"{\"a\""}})"));
  EXPECT_EQ(cs::chunk_body(head(), chatwire::endpoint::Delta{}, false), "");
  auto f = json::parse(cs::finish_chunk_body(head(), "stop"));
  EXPECT_EQ(f["choices"][0]["delta"], json::object());
  EXPECT_EQ(f["choices"][0]["finish_reason"], "stop");
  cs::Usage usage;
  usage.prompt_tokens = 1;
  usage.completion_tokens = 2;
  usage.cached_tokens = 1;
  auto u = json::parse(cs::usage_chunk_body(head(), usage));
  EXPECT_EQ(u["choices"], json::array());
  EXPECT_EQ(u["usage"]["completion_tokens"], 2);
  EXPECT_EQ(u["usage"]["prompt_tokens_details"]["cached_tokens"], 1);
  EXPECT_EQ(u["usage"]["completion_tokens_details"]["reasoning_tokens"], 0);
  EXPECT_EQ(cs::sse("{}"), "data: {}\n\n");
}

TEST(OpenAIShapes, BytesThatAreNotUtf8AreReplacedNotThrown) {
  chatwire::endpoint::Delta d;
  d.content = "a\xff";
  json parsed;
  EXPECT_NO_THROW(parsed = json::parse(cs::chunk_body(head(), d, false)));
}

}  // namespace
