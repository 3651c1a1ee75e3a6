// The routes that answer without a backend, route errors, and the backend URL reader.
#include "serve/gateway.hpp"

#include <gtest/gtest.h>

#include "serve/backend_client.hpp"
#include "serve/http_errors.hpp"
#include "test_models.hpp"

namespace cs = chatwire::serve;
using cs::json;

namespace {

cs::Gateway gateway() {
  cs::Config config;
  config.models.push_back(cs::testing::model_config("qwen3", "http://127.0.0.1:9"));
  return cs::Gateway(config, cs::testing::models_with(config.models.front()));
}

cs::HttpReply answer(const cs::Gateway& g, std::string_view method, std::string_view target,
                     std::string_view body) {
  auto route = g.route(method, target);
  if (!route) return g.error_reply(route.error());
  EXPECT_NE((*route)->answer, nullptr) << target;
  return (*route)->answer(g, cs::Gateway::route_request(**route, target, body));
}

TEST(Gateway, UnknownRoutesAre404AndWrongMethods405) {
  auto g = gateway();
  EXPECT_EQ(answer(g, "GET", "/v2/nothing", "").status, 404);
  EXPECT_EQ(answer(g, "GET", "/v1/chat/completions", "").status, 405);
  EXPECT_EQ(answer(g, "DELETE", "/v1/models", "").status, 405);
  auto chat = g.route("POST", "/v1/chat/completions?x=1");
  ASSERT_TRUE(chat);
  EXPECT_EQ((*chat)->answer, nullptr);  // relayed by the server
  EXPECT_TRUE((*chat)->limited);
}

// API keys: every route but /health and /metrics asks for one of the keys, as a Bearer
// credential (the scheme in any case); a missing or wrong key is 401 with OpenAI's code.
TEST(Gateway, ApiKeysAreAskedForOnEveryRouteButHealthAndMetrics) {
  const auto open_gateway = gateway();
  const auto& models = **open_gateway.route("GET", "/v1/models");
  EXPECT_TRUE(open_gateway.authorize(models, ""));  // no keys configured: no check
  cs::Config config;
  config.models.push_back(cs::testing::model_config("qwen3", "http://127.0.0.1:9"));
  config.api_keys = {"sk-first", "sk-second"};
  cs::Gateway g(config, cs::testing::models_with(config.models.front()));
  for (const auto& [method, path] :
       std::vector<std::pair<std::string, std::string>>{{"POST", "/v1/chat/completions"},
                                                        {"POST", "/v1/chat/render"},
                                                        {"POST", "/tokenize"},
                                                        {"POST", "/detokenize"},
                                                        {"GET", "/v1/models"}}) {
    const cs::Route& r = **g.route(method, path);
    EXPECT_TRUE(g.authorize(r, "Bearer sk-first")) << path;
    EXPECT_TRUE(g.authorize(r, "Bearer sk-second")) << path;
    EXPECT_TRUE(g.authorize(r, "bearer sk-second")) << path;
    for (const char* wrong : {"", "sk-first", "Bearer", "Bearer ", "Bearer sk-firs",
                              "Bearer sk-first2", "Bearer  sk-first", "Basic sk-first"}) {
      auto refused = g.authorize(r, wrong);
      ASSERT_FALSE(refused) << path << " " << wrong;
      const cs::HttpReply reply = g.error_reply(refused.error());
      EXPECT_EQ(reply.status, 401) << wrong;
      const json body = json::parse(reply.body);
      EXPECT_EQ(body["error"]["code"], "invalid_api_key");
      EXPECT_EQ(body["error"]["type"], "invalid_request_error");
      EXPECT_FALSE(body["error"]["message"].get<std::string>().empty());
    }
  }
  for (const char* path : {"/health", "/metrics"})
    EXPECT_TRUE(g.authorize(**g.route("GET", path), "")) << path;
}

// Item routes: GET /v1/models/{id} (an id with a slash arrives percent-encoded, as the SDKs
// send it) and GET / DELETE /v1/responses/{id}, which says that nothing is stored.
TEST(Gateway, ItemRoutesForAModelAndForAStoredResponse) {
  cs::Config config;
  config.models.push_back(cs::testing::model_config("qwen3", "http://127.0.0.1:9"));
  config.models.back().name = "Qwen/Qwen3-8B";
  cs::Gateway g(config, cs::testing::models_with(config.models.front()));
  for (const char* target : {"/v1/models/Qwen%2FQwen3-8B", "/v1/models/Qwen/Qwen3-8B",
                             "/v1/models/Qwen%2fQwen3-8B?x=1"}) {
    auto r = answer(g, "GET", target, "");
    ASSERT_EQ(r.status, 200) << target << " " << r.body;
    const json m = json::parse(r.body);
    EXPECT_EQ(m["id"], "Qwen/Qwen3-8B");
    EXPECT_EQ(m["object"], "model");
    EXPECT_TRUE(m["capabilities"].is_object());
  }
  auto missing = answer(g, "GET", "/v1/models/llama%", "");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(json::parse(missing.body)["error"]["code"], "model_not_found");
  EXPECT_NE(json::parse(missing.body)["error"]["message"].get<std::string>().find("'llama%'"),
            std::string::npos);
  EXPECT_EQ(answer(g, "GET", "/v1/models/", "").status, 404);  // an item route needs its id
  for (const char* method : {"GET", "DELETE"}) {
    auto r = answer(g, method, "/v1/responses/resp_abc", "");
    EXPECT_EQ(r.status, 404);
    EXPECT_NE(r.body.find("stores no responses"), std::string::npos) << r.body;
  }
  EXPECT_EQ(answer(g, "PUT", "/v1/responses/resp_abc", "").status, 405);
}

TEST(Gateway, ModelsListsCapabilitiesFromTheProbe) {
  auto g = gateway();
  const auto r = answer(g, "GET", "/v1/models", "");
  ASSERT_EQ(r.status, 200);
  const json body = json::parse(r.body);
  EXPECT_EQ(body["object"], "list");
  ASSERT_EQ(body["data"].size(), 1u);
  EXPECT_EQ(body["data"][0]["id"], "qwen3");
  // When the model was loaded (Unix seconds), as vLLM gives its start: not 1970.
  EXPECT_GT(body["data"][0]["created"].get<std::int64_t>(), 1700000000);
  EXPECT_EQ(body["data"][0]["capabilities"]["tools"], true);
  EXPECT_EQ(body["data"][0]["capabilities"]["reasoning"], true);
  EXPECT_EQ(body["data"][0]["capabilities"]["tool_call_ids"], "openai");
  EXPECT_EQ(body["data"][0]["capabilities"]["tool_choice"],
            json::array({"none", "auto", "required", "function"}));
}

TEST(Gateway, TokenizeAPromptOrAChatAndDetokenize) {
  auto g = gateway();
  auto r =
      answer(g, "POST", "/tokenize", R"({"prompt": "hello world", "return_token_strs": true})");
  ASSERT_EQ(r.status, 200) << r.body;
  json body = json::parse(r.body);
  EXPECT_EQ(body["count"], 2);
  EXPECT_EQ(body["token_strs"], json::parse(R"(["hello", "Ġworld"])"));
  auto d =
      answer(g, "POST", "/detokenize", json{{"model", "qwen3"}, {"tokens", body["tokens"]}}.dump());
  ASSERT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(json::parse(d.body)["prompt"], "hello world");

  const std::string chat = R"({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}]})";
  auto t = answer(g, "POST", "/tokenize", chat);
  auto rendered = answer(g, "POST", "/v1/chat/render", chat);
  ASSERT_EQ(t.status, 200) << t.body;
  ASSERT_EQ(rendered.status, 200) << rendered.body;
  const json render_body = json::parse(rendered.body);
  EXPECT_EQ(json::parse(t.body)["tokens"], render_body["prompt_token_ids"]);
  // vLLM's shape: max_model_len (this directory has no config.json and none is configured).
  EXPECT_TRUE(json::parse(t.body).contains("max_model_len"));
  EXPECT_TRUE(json::parse(t.body)["max_model_len"].is_null());
  // add_special_tokens in a chat request: the tokenizer's own on top of the render, as vLLM.
  auto with_special = answer(g, "POST", "/tokenize",
                             R"({"model": "qwen3", "add_special_tokens": true, "messages": )"
                             R"([{"role": "user", "content": "hi"}]})");
  ASSERT_EQ(with_special.status, 200) << with_special.body;
  EXPECT_EQ(json::parse(with_special.body)["tokens"],
            render_body["prompt_token_ids"]);  // Qwen: none
  EXPECT_TRUE(render_body["prompt"].get<std::string>().starts_with("<|im_start|>user\nhi"));
  EXPECT_TRUE(render_body["adaptations"].is_array());
}

TEST(Gateway, TokenizeRefusalsNameTheField) {
  auto g = gateway();
  struct Case {
    std::string target, body;
    int status;
    std::string param;
  };
  const Case cases[] = {
      {"/detokenize", R"({"tokens": [1, -2]})", 400, "tokens[1]"},
      {"/detokenize", R"({"tokens": [4000000000]})", 400, "tokens"},
      {"/detokenize", R"({"tokens": "1 2"})", 400, "tokens"},
      {"/tokenize", R"({"prompt": 5})", 400, "prompt"},
      {"/tokenize", R"({"model": "other", "prompt": "x"})", 404, "model"},
      {"/tokenize", R"([1])", 400, ""},
      {"/tokenize", R"({"prompt": "x", "add_special_tokens": "no"})", 400, "add_special_tokens"},
      {"/tokenize", R"({"prompt": "x", "return_token_strs": 1})", 400, "return_token_strs"},
  };
  for (const auto& c : cases) {
    auto r = answer(g, "POST", c.target, c.body);
    EXPECT_EQ(r.status, c.status) << c.body << " " << r.body;
    EXPECT_EQ(json::parse(r.body)["error"]["param"], c.param.empty() ? json() : json(c.param))
        << c.body;
  }
}

TEST(Gateway, MetricsCountRequestsAndErrors) {
  auto g = gateway();
  answer(g, "GET", "/nope", "");
  g.metrics().request("chat_completions", 200, 0.002);
  g.metrics().tokens(10, 3);
  const auto r = answer(g, "GET", "/metrics", "");
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(r.content_type.starts_with("text/plain"));
  EXPECT_NE(r.body.find("chatwire_errors_total{code=\"not_found\"} 1"), std::string::npos);
  EXPECT_NE(r.body.find("chatwire_requests_total{route=\"chat_completions\",status=\"200\"} 1"),
            std::string::npos);
  EXPECT_NE(
      r.body.find("chatwire_request_seconds_bucket{route=\"chat_completions\",le=\"0.0025\"} 1"),
      std::string::npos);
  EXPECT_NE(r.body.find("chatwire_prompt_tokens_total 10"), std::string::npos);
  EXPECT_NE(r.body.find("chatwire_open_streams 0"), std::string::npos);
  // No first token yet: the histogram still has its buckets, +Inf equal to _count.
  EXPECT_NE(r.body.find("chatwire_time_to_first_token_seconds_bucket{le=\"+Inf\"} 0\n"
                        "chatwire_time_to_first_token_seconds_sum 0\n"
                        "chatwire_time_to_first_token_seconds_count 0\n"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("chatwire_time_to_first_token_seconds_bucket{le=\"0.1\"} 0"),
            std::string::npos);
}

TEST(BackendUrl, HostPortAndPrefix) {
  auto u = cs::parse_backend_url("http://10.0.0.2:8080/v1base/");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "10.0.0.2");
  EXPECT_EQ(u->port, "8080");
  EXPECT_EQ(u->prefix, "/v1base");
  auto v6 = cs::parse_backend_url("http://[::1]:9000");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, "9000");
  auto plain = cs::parse_backend_url("http://backend");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->port, "80");
  for (const char* bad : {"https://x", "x:80", "http://:80", "http://h:port", "http://[::1"})
    EXPECT_FALSE(cs::parse_backend_url(bad)) << bad;
}

}  // namespace
