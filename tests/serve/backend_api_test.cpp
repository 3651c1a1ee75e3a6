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

// The prompt tokens a backend served from its cache, where it says so (OpenAI's
// prompt_tokens_details.cached_tokens in the gateway's usage); nothing where it does not.
TEST(BackendApi, CachedPromptTokensAreReadWhereReported) {
  // llama.cpp's tokens_cached is the whole KV cache (prompt and generated tokens), not the
  // prompt tokens reused: not read.
  cs::StreamState st;
  auto llama = cs::backend_api_row(cs::BackendApi::llama_cpp)
                   .read(R"({"content":"","stop":true,"stop_type":"eos","tokens_cached":5})", st);
  ASSERT_TRUE(llama);
  EXPECT_FALSE(llama->cached_tokens.has_value());
  cs::StreamState st2;
  auto openai = cs::backend_api_row(cs::BackendApi::openai)
                    .read(R"({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2,
                              "prompt_tokens_details": {"cached_tokens": 8}}})",
                          st2);
  ASSERT_TRUE(openai);
  EXPECT_EQ(openai->cached_tokens, 8u);
  cs::StreamState st3;
  auto bare =
      cs::backend_api_row(cs::BackendApi::openai)
          .read(R"({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 2}})", st3);
  ASSERT_TRUE(bare);
  EXPECT_FALSE(bare->cached_tokens.has_value());
  cs::StreamState st4;
  auto sglang =
      cs::backend_api_row(cs::BackendApi::sglang)
          .read(R"({"text":"a","output_ids":[1],"meta_info":{"finish_reason":{"type":"stop"},
                              "prompt_tokens":4,"completion_tokens":1,"cached_tokens":3}})",
                st4);
  ASSERT_TRUE(sglang);
  EXPECT_EQ(sglang->cached_tokens, 3u);
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

// vLLM's "abort" (a request the engine failed or dropped) ends a cut-off text: a 502, not a stop.
TEST(BackendApi, AnAbortedCompletionIsAnError) {
  const auto& row = cs::backend_api_row(cs::BackendApi::openai);
  cs::StreamState st;
  auto e = row.read(R"({"choices":[{"index":0,"text":"Hal","finish_reason":"abort"}]})", st);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("abort"), std::string::npos) << e.error().message;
  auto ok = row.read(R"({"choices":[{"index":0,"text":"","finish_reason":"stop"}]})", st);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->finish, "stop");
}

TEST(BackendApi, LogitBiasGoesToEveryApi) {
  auto r = request();
  r.sampling["logit_bias"] = {{"15043", -100}};
  EXPECT_EQ(cs::backend_api_row(cs::BackendApi::llama_cpp).build(r)["logit_bias"],
            r.sampling["logit_bias"]);
  EXPECT_EQ(cs::backend_api_row(cs::BackendApi::openai).build(r)["logit_bias"],
            r.sampling["logit_bias"]);
  EXPECT_EQ(cs::backend_api_row(cs::BackendApi::sglang).build(r)["sampling_params"]["logit_bias"],
            r.sampling["logit_bias"]);
}

// A field of the wrong type is the backend's malformed reply, an error that names the field; the
// JSON library's checked access would have thrown out of the relay (fuzz_backend_reply found the
// first of these).
TEST(BackendApi, FieldsOfTheWrongTypeAreErrorsNamingThem) {
  struct Case {
    cs::BackendApi api;
    const char* event;
    const char* field;
  };
  const Case cases[] = {
      {cs::BackendApi::llama_cpp, R"({"content": "a", "stop": "yes"})", "`stop`"},
      {cs::BackendApi::llama_cpp, R"({"content": "", "stop": true, "stop_type": 1})",
       "`stop_type`"},
      {cs::BackendApi::openai, R"({"choices": [{"index": "0", "text": "a"}]})", "`index`"},
      {cs::BackendApi::sglang, R"({"text": "a", "meta_info": {"finish_reason": {"type": 3}}})",
       "`finish_reason`"},
      {cs::BackendApi::sglang, R"({"text": "a", "meta_info": {"finish_reason": 3}})",
       "`finish_reason`"},
  };
  for (const auto& c : cases) {
    cs::StreamState st;
    auto r = cs::backend_api_row(c.api).read(c.event, st);
    ASSERT_FALSE(r) << c.event;
    EXPECT_NE(r.error().message.find(c.field), std::string::npos) << r.error().message;
  }
  // A null is an absent field, and a choice other than the first is skipped.
  cs::StreamState st;
  auto skipped =
      cs::backend_api_row(cs::BackendApi::openai)
          .read(R"({"choices": [{"index": 1, "text": "b"}, {"index": 0, "text": "a"}]})", st);
  ASSERT_TRUE(skipped) << skipped.error().message;
  EXPECT_EQ(skipped->text, "a");
  auto null_type = cs::backend_api_row(cs::BackendApi::llama_cpp)
                       .read(R"({"content": "", "stop": true, "stop_type": null})", st);
  ASSERT_TRUE(null_type) << null_type.error().message;
  EXPECT_EQ(null_type->finish, "stop");
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
          "default_sampling": {"temperature": 0.6}, "probe_max_steps": 5000}]})",
      "/base");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->port, 9000);
  ASSERT_EQ(c->models.size(), 1u);
  EXPECT_EQ(c->models[0].dir, "/base/m/qwen3");
  EXPECT_EQ(c->models[0].backend_api, cs::BackendApi::sglang);
  EXPECT_EQ(c->models[0].default_sampling_json, R"({"temperature":0.6})");
  EXPECT_EQ(c->models[0].probe_max_steps, 5000u);
  auto steps = cs::Config::from_json_text(
      R"({"models": [{"model_dir": "m", "backend_url": "u", "probe_max_steps": -1}]})", "/");
  ASSERT_FALSE(steps);
  EXPECT_EQ(steps.error().path, "models[0].probe_max_steps");

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

// A key the reader does not know, a zero limit, a default_sampling a request could not send and
// a name that cannot be taken from model_dir are refused, naming the key path; a model_dir that
// ends with a slash still names the model.
TEST(ServeConfig, UnknownKeysZeroLimitsAndBadDefaultsAreRefused) {
  const auto path_of = [](const std::string& text) -> std::string {
    auto c = cs::Config::from_json_text(text, "/base");
    return c ? "accepted" : c.error().path;
  };
  const std::string model = R"({"model_dir": "m/qwen3/", "backend_url": "u")";
  EXPECT_EQ(path_of(R"({"bogus": 1, "models": [)" + model + "}]}"), "bogus");
  EXPECT_EQ(path_of(R"({"limits": {"max_body_byte": 10}, "models": [)" + model + "}]}"),
            "limits.max_body_byte");
  EXPECT_EQ(path_of(R"({"timeouts": {"idle": 10}, "models": [)" + model + "}]}"), "timeouts.idle");
  EXPECT_EQ(path_of(R"({"limits": {"max_header_bytes": 0}, "models": [)" + model + "}]}"),
            "limits.max_header_bytes");
  EXPECT_EQ(path_of(R"({"timeouts": {"client_write_ms": 0}, "models": [)" + model + "}]}"),
            "timeouts.client_write_ms");
  EXPECT_EQ(path_of(R"({"timeouts": {"shutdown_grace_ms": 0}, "models": [)" + model + "}]}"),
            "accepted");
  EXPECT_EQ(path_of(R"({"models": [)" + model + R"(, "typo_key": true}]})"), "models[0].typo_key");
  EXPECT_EQ(path_of(R"({"models": [)" + model + R"(, "default_sampling": {"temprature": 0.6}}]})"),
            "models[0].default_sampling.temprature");
  EXPECT_EQ(
      path_of(R"({"models": [)" + model + R"(, "default_sampling": {"temperature": "hot"}}]})"),
      "models[0].default_sampling.temperature");
  EXPECT_EQ(path_of(R"({"models": [)" + model + R"(, "default_sampling": {"seed": 1.5}}]})"),
            "models[0].default_sampling.seed");
  EXPECT_EQ(path_of(R"({"models": [)" + model + R"(, "name": ""}]})"), "models[0].name");
  EXPECT_EQ(path_of(R"({"models": [{"model_dir": "/", "backend_url": "u"}]})"), "models[0].name");
  auto c = cs::Config::from_json_text(
      R"({"models": [)" + model +
          R"(, "max_model_len": 32768, "default_sampling": {"top_k": 20, "logit_bias": {"7": 1}}}]})",
      "/base");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->models[0].name, "qwen3");
  EXPECT_EQ(c->models[0].max_model_len, 32768u);
  auto logged = cs::Config::from_json_text(
      R"({"access_log": "logs/access.jsonl", "models": [)" + model + "}]}", "/base");
  ASSERT_TRUE(logged) << logged.error().to_string();
  EXPECT_EQ(logged->access_log, "/base/logs/access.jsonl");  // as model_dir: the file's directory
}

TEST(ServeConfig, ApiKeysAreReadAndCheckedForAHeader) {
  auto c = cs::Config::from_json_text(
      R"({"api_keys": ["k1", "sk-2"], "access_log": "-", "cors_origins": ["*"], "models": [{"model_dir": "m", "backend_url": "u",
          "backend_api_key": "b-key"}, {"model_dir": "n", "backend_url": "u"}]})",
      "/");
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->api_keys, (std::vector<std::string>{"k1", "sk-2"}));
  EXPECT_EQ(c->models[0].backend_api_key, "b-key");
  EXPECT_EQ(c->models[1].backend_api_key, "");
  EXPECT_EQ(c->access_log, "-");
  EXPECT_EQ(c->cors_origins, std::vector<std::string>{"*"});
  // A key is sent in a header: empty, spaces, control or non-ASCII characters are refused.
  for (
      const auto& [text, path] : std::vector<std::pair<std::string, std::string>>{
          {R"({"api_keys": "k1", "models": [{"model_dir": "m", "backend_url": "u"}]})", "api_keys"},
          {R"({"api_keys": ["k1", ""], "models": [{"model_dir": "m", "backend_url": "u"}]})",
           "api_keys[1]"},
          {R"({"api_keys": ["a b"], "models": [{"model_dir": "m", "backend_url": "u"}]})",
           "api_keys[0]"},
          {R"({"models": [{"model_dir": "m", "backend_url": "u", "backend_api_key": "x\r\nHost: y"}]})",
           "models[0].backend_api_key"},
          {R"({"models": [{"model_dir": "m", "backend_url": "u", "backend_api_key": "clé"}]})",
           "models[0].backend_api_key"},
          {R"({"models": [{"model_dir": "m", "backend_url": "u", "backend_api_key": 7}]})",
           "models[0].backend_api_key"},
          {R"({"access_log": true, "models": [{"model_dir": "m", "backend_url": "u"}]})",
           "access_log"}}) {
    auto bad = cs::Config::from_json_text(text, "/");
    ASSERT_FALSE(bad) << text;
    EXPECT_EQ(bad.error().path, path) << text;
  }
}

// logprobs: each API is asked in its own words and its answer read into one shape (ids where
// the API gives ids: vLLM's "token_id:N" strings, llama.cpp's and SGLang's ids).
TEST(BackendApi, LogprobsAreAskedForAndReadInEachApisShape) {
  auto r = request();
  r.top_logprobs = 0;
  EXPECT_EQ(cs::backend_api_row(cs::BackendApi::llama_cpp).build(r)["n_probs"], 1);
  r.top_logprobs = 2;
  EXPECT_EQ(cs::backend_api_row(cs::BackendApi::llama_cpp).build(r)["n_probs"], 2);
  auto c = cs::backend_api_row(cs::BackendApi::openai).build(r);
  EXPECT_EQ(c["logprobs"], 2);
  EXPECT_EQ(c["return_tokens_as_token_ids"], true);
  auto g = cs::backend_api_row(cs::BackendApi::sglang).build(r);
  EXPECT_EQ(g["return_logprob"], true);
  EXPECT_EQ(g["top_logprobs_num"], 2);
  EXPECT_FALSE(
      cs::backend_api_row(cs::BackendApi::sglang).build(request()).contains("return_logprob"));

  cs::StreamState st;
  auto l = cs::backend_api_row(cs::BackendApi::llama_cpp)
               .read(R"({"content": "Hi", "tokens": [9], "stop": false, "completion_probabilities":
                   [{"id": 9, "token": "Hi", "logprob": -0.25, "bytes": [72, 105],
                     "top_logprobs": [{"id": 9, "token": "Hi", "logprob": -0.25},
                                      {"id": 4, "token": "Hey", "logprob": -1.5}]}]})",
                     st);
  ASSERT_TRUE(l) << l.error().to_string();
  ASSERT_EQ(l->logprobs.size(), 1u);
  EXPECT_EQ(l->logprobs[0].id, 9u);
  EXPECT_EQ(l->logprobs[0].logprob, -0.25);
  ASSERT_EQ(l->logprobs[0].top.size(), 2u);
  EXPECT_EQ(l->logprobs[0].top[1].id, 4u);

  auto o = cs::backend_api_row(cs::BackendApi::openai)
               .read(R"({"choices": [{"index": 0, "text": "Hi!", "token_ids": [9, 2],
                   "logprobs": {"tokens": ["token_id:9", "!"], "token_logprobs": [-0.25, -0.5],
                                "top_logprobs": [{"token_id:9": -0.25, "token_id:4": -1.5},
                                                 {"!": -0.5}], "text_offset": [0, 2]},
                   "finish_reason": null}]})",
                     st);
  ASSERT_TRUE(o) << o.error().to_string();
  ASSERT_EQ(o->logprobs.size(), 2u);
  EXPECT_EQ(o->logprobs[0].id, 9u);
  EXPECT_EQ(o->logprobs[0].top[1].id, 4u);
  EXPECT_FALSE(o->logprobs[1].id.has_value());
  EXPECT_EQ(o->logprobs[1].text, "!");
  EXPECT_FALSE(cs::backend_api_row(cs::BackendApi::openai)
                   .read(R"({"choices": [{"index": 0, "text": "", "logprobs": {"tokens": ["a"],
                         "token_logprobs": []}}]})",
                         st));

  cs::StreamState sg;
  const auto& sglang = cs::backend_api_row(cs::BackendApi::sglang);
  auto first = sglang.read(R"({"text": "Hi", "output_ids": [9], "meta_info": {
      "output_token_logprobs": [[-0.25, 9, null]],
      "output_top_logprobs": [[[-0.25, 9, null], [-1.5, 4, null]]], "finish_reason": null}})",
                           sg);
  auto second = sglang.read(R"({"text": "Hi!", "output_ids": [9, 2], "meta_info": {
      "output_token_logprobs": [[-0.25, 9, null], [-0.5, 2, null]],
      "output_top_logprobs": [[[-0.25, 9, null]], [[-0.5, 2, null]]], "finish_reason": null}})",
                            sg);
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->logprobs.size(), 1u);
  EXPECT_EQ(first->logprobs[0].top.size(), 2u);
  ASSERT_EQ(second->logprobs.size(), 1u) << "cumulative: only the new entry";
  EXPECT_EQ(second->logprobs[0].id, 2u);
  EXPECT_EQ(second->logprobs[0].logprob, -0.5);
}

}  // namespace
