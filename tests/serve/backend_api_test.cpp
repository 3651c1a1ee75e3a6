// The backend API table: request bodies for each API and how their streamed events are read
// (shapes from llama.cpp server's, vLLM's and SGLang's API documentation).
#include "serve/backend_api.hpp"

#include <gtest/gtest.h>

namespace cs = chatwire::serve;

namespace {

cs::BackendRequest request() {
  cs::BackendRequest r;
  r.model = "m";
  r.ids = {1, 2, 3};
  r.max_tokens = 16;
  r.stop = {"<|im_end|>"};
  r.stop_ids = {7};
  r.sampling = {{"temperature", 0.5}, {"seed", 4}, {"repetition_penalty", 1.1}};
  return r;
}

TEST(BackendApi, LlamaCppBodyAsksForIdsAndStreams) {
  auto b = cs::backend_api_row(cs::BackendApi::llama_cpp).build(request());
  EXPECT_EQ(b["prompt"], cs::json({1, 2, 3}));
  EXPECT_EQ(b["n_predict"], 16);
  EXPECT_EQ(b["return_tokens"], true);
  EXPECT_EQ(b["stream"], true);
  EXPECT_EQ(b["repeat_penalty"], 1.1);
  EXPECT_FALSE(b.contains("repetition_penalty"));
}

TEST(BackendApi, CompletionsBodyAddsNoSpecialTokens) {
  auto b = cs::backend_api_row(cs::BackendApi::openai).build(request());
  EXPECT_EQ(b["add_special_tokens"], false);
  EXPECT_EQ(b["skip_special_tokens"], false);
  EXPECT_EQ(b["stop_token_ids"], cs::json({7}));
  EXPECT_EQ(b["seed"], 4);
}

TEST(BackendApi, SglangBodyNestsSamplingParams) {
  auto b = cs::backend_api_row(cs::BackendApi::sglang).build(request());
  EXPECT_EQ(b["input_ids"], cs::json({1, 2, 3}));
  EXPECT_EQ(b["sampling_params"]["max_new_tokens"], 16);
  EXPECT_EQ(b["sampling_params"]["sampling_seed"], 4);
  EXPECT_EQ(b["sampling_params"]["skip_special_tokens"], false);
}

TEST(BackendApi, LlamaCppEventsGiveIdsAndFinish) {
  const auto& row = cs::backend_api_row(cs::BackendApi::llama_cpp);
  cs::StreamState st;
  auto c = row.read(R"({"content":"Hi","tokens":[5,6],"stop":false})", st);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->has_ids);
  EXPECT_EQ(c->ids, (std::vector<std::uint32_t>{5, 6}));
  EXPECT_FALSE(c->done);
  auto end = row.read(R"({"content":"","stop":true,"stop_type":"limit","tokens_predicted":2})", st);
  ASSERT_TRUE(end);
  EXPECT_TRUE(end->done);
  EXPECT_EQ(end->finish, "length");
  EXPECT_EQ(end->completion_tokens, 2u);
}

TEST(BackendApi, SglangCumulativeEventsAreDifferenced) {
  const auto& row = cs::backend_api_row(cs::BackendApi::sglang);
  cs::StreamState st;
  auto a = row.read(R"({"text":"Hel","output_ids":[1,2],"meta_info":{"finish_reason":null}})", st);
  auto b = row.read(
      R"({"text":"Hello","output_ids":[1,2,3],"meta_info":{"finish_reason":{"type":"stop"}}})", st);
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->text, "lo");
  EXPECT_EQ(b->ids, (std::vector<std::uint32_t>{3}));
  EXPECT_TRUE(b->done);
  EXPECT_EQ(b->finish, "stop");
  EXPECT_FALSE(row.read(R"({"text":"He","output_ids":[1]})", st));  // shrank
}

TEST(BackendApi, GarbageAndErrorEventsAreErrors) {
  for (auto api : {cs::BackendApi::llama_cpp, cs::BackendApi::openai, cs::BackendApi::sglang}) {
    cs::StreamState st;
    const auto& row = cs::backend_api_row(api);
    EXPECT_FALSE(row.read("{not json", st)) << row.name;
    auto e = row.read(R"({"error":{"message":"out of memory"}})", st);
    ASSERT_FALSE(e) << row.name;
    EXPECT_NE(e.error().message.find("out of memory"), std::string::npos);
    EXPECT_FALSE(
        row.read(R"({"choices":[{"token_ids":[-1]}],"tokens":["x"],"output_ids":"x"})", st))
        << row.name;
  }
}

TEST(BackendApi, NamesRoundTrip) {
  for (auto api : {cs::BackendApi::llama_cpp, cs::BackendApi::openai, cs::BackendApi::sglang}) {
    auto back = cs::backend_api_from_name(cs::backend_api_name(api));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, api);
  }
  EXPECT_FALSE(cs::backend_api_from_name("tgi"));
}

TEST(ServeConfig, ReadsModelsAndNamesBadKeys) {
  auto c = cs::Config::from_json_text(
      R"({"port": 9000, "models": [{"name": "q", "model_dir": "m/qwen3",
          "backend_url": "http://127.0.0.1:8080", "backend_api": "sglang",
          "default_sampling": {"temperature": 0.6}}]})",
      "/base");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->port, 9000);
  ASSERT_EQ(c->models.size(), 1u);
  EXPECT_EQ(c->models[0].dir, "/base/m/qwen3");
  EXPECT_EQ(c->models[0].backend_api, cs::BackendApi::sglang);
  EXPECT_EQ(c->models[0].default_sampling_json, R"({"temperature":0.6})");

  auto bad = cs::Config::from_json_text(
      R"({"models": [{"model_dir": "m", "backend_url": "u", "tool_call_ids": "uuid"}]})", "/");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().path, "models[0].tool_call_ids");
  auto port = cs::Config::from_json_text(R"({"port": 70000, "models": []})", "/");
  ASSERT_FALSE(port);
  EXPECT_EQ(port.error().path, "port");
  EXPECT_FALSE(cs::Config::from_json_text("[", "/"));
  auto twice = cs::Config::from_json_text(
      R"({"models": [{"model_dir": "a/x", "backend_url": "u"}, {"model_dir": "b/x", "backend_url": "u"}]})",
      "/");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().path, "models[1].name");
}

}  // namespace
