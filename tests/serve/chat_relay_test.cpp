// A chat completion without sockets: the request planned into a backend body, the backend's
// events relayed as OpenAI's chunks or one chat.completion, finish reasons, tool-call ids, and
// the error table.
#include "serve/chat_relay.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "serve/http_errors.hpp"
#include "test_models.hpp"

namespace cs = chatwire::serve;
using cs::json;

namespace {

const std::string kWeatherTool =
    R"({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
        "properties": {"city": {"type": "string"}}, "required": ["city"]}}})";
const std::string kTimeTool =
    R"({"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
        "properties": {}}}})";

std::string request(const std::string& extra = "", const std::string& model = "qwen3") {
  return R"({"model": ")" + model +
         R"(", "messages": [{"role": "user", "content": "weather in Paris?"}], "tools": [)" +
         kWeatherTool + "," + kTimeTool + "]" + extra + "}";
}

// "hi" with Qwen3's thinking off: the reply is plain content.
const std::string kHiWithoutThinking =
    R"({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}],
        "chat_template_kwargs": {"enable_thinking": false}})";

cs::LoadedModels qwen3(cs::BackendApi api = cs::BackendApi::llama_cpp,
                       const std::string& ids = "auto") {
  auto config = cs::testing::model_config("qwen3", "http://127.0.0.1:9", api);
  config.tool_call_ids = ids;
  return cs::testing::models_with(config);
}

// llama.cpp /completion events that write `pieces` as text, then stop (stop_type `stop_type`).
std::vector<std::string> llama_text_events(const std::vector<std::string>& pieces,
                                           const std::string& stop_type = "eos") {
  std::vector<std::string> events;
  for (const auto& p : pieces) events.push_back(json{{"content", p}, {"stop", false}}.dump());
  events.push_back(
      json{{"content", ""}, {"stop", true}, {"stop_type", stop_type}, {"tokens_predicted", 11}}
          .dump());
  return events;
}

// llama.cpp /completion events that return `pieces` as token ids (the text is not read where
// ids are), then the stop id with the final event.
std::vector<std::string> llama_id_events(const std::vector<std::vector<std::uint32_t>>& pieces,
                                         std::uint32_t stop_id) {
  std::vector<std::string> events;
  for (const auto& ids : pieces)
    events.push_back(json{{"content", "?"}, {"tokens", ids}, {"stop", false}}.dump());
  events.push_back(
      json{{"content", ""}, {"tokens", {stop_id}}, {"stop", true}, {"stop_type", "eos"}}.dump());
  return events;
}

// Everything the relay sends for `events`, or the error it stops on.
struct Relayed {
  std::string text;
  std::optional<cs::HttpError> error;
  cs::Usage usage;
};

Relayed relay(const cs::ChatJob& job, const std::vector<std::string>& events) {
  Relayed out;
  auto r = cs::ChatRelay::start(job, cs::Limits{});
  EXPECT_TRUE(r) << r.error().to_string();
  for (const auto& e : events) {
    auto sent = r->on_event(e);
    if (!sent) {
      out.error = cs::http_error(sent.error());
      return out;
    }
    out.text += *sent;
  }
  auto tail = r->finish();
  if (!tail) {
    out.error = cs::http_error(tail.error());
    return out;
  }
  out.text += *tail;
  out.usage = r->usage();
  return out;
}

// The JSON payloads of an SSE text; "[DONE]" as the string "[DONE]".
std::vector<json> sse_events(const std::string& text) {
  std::vector<json> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find("\n\n", at);
    EXPECT_NE(end, std::string::npos) << "an event without its blank line";
    if (end == std::string::npos) break;
    std::string event = text.substr(at, end - at);
    EXPECT_TRUE(event.starts_with("data: ")) << event;
    event = event.substr(6);
    out.push_back(event == "[DONE]" ? json("[DONE]") : json::parse(event));
    at = end + 2;
  }
  return out;
}

// The choice of a relayed reply: the non-streaming body's, or a stream's finish chunk's.
json final_choice(const Relayed& out, bool stream) {
  if (!stream) return json::parse(out.text)["choices"][0];
  json choice;
  for (const auto& e : sse_events(out.text))
    if (e != "[DONE]" && !e["choices"].empty() && !e["choices"][0]["finish_reason"].is_null())
      choice = e["choices"][0];
  return choice;
}

TEST(PlanChat, TheLlamaCppBodyCarriesThePromptIdsTheStopsAndTheLimit) {
  auto models = qwen3();
  auto job = cs::plan_chat(models, request(R"(, "max_tokens": 7, "stop": ["END"])"));
  ASSERT_TRUE(job) << job.error().to_string();
  EXPECT_EQ(job->backend_path, "/completion");
  const json body = json::parse(job->backend_body);
  ASSERT_FALSE(job->prompt.ids.empty());
  EXPECT_EQ(body["prompt"], json(job->prompt.ids));
  EXPECT_EQ(body["n_predict"], 7);
  EXPECT_EQ(body["return_tokens"], true);
  EXPECT_EQ(body["stream"], true);
  // The client's stop strings, and none that is a stop id's token: a model quoting
  // "<|im_end|>" in a call has not ended its turn (the backend stops at the id).
  const auto stops = body["stop"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(stops.begin(), stops.end(), "END"), stops.end());
  ASSERT_TRUE(job->model->endpoint.stops_by_id(job->prompt, "<|im_end|>"));
  for (const auto& s : job->prompt.stop_strings)
    EXPECT_EQ(std::find(stops.begin(), stops.end(), s) != stops.end(),
              !job->model->endpoint.stops_by_id(job->prompt, s))
        << s;
  EXPECT_NE(job->prompt.text.find("get_weather"), std::string::npos);
  EXPECT_EQ(job->head.model, "qwen3");
  EXPECT_TRUE(job->head.id.starts_with("chatcmpl-"));
}

TEST(PlanChat, TheOpenAiBodyAsksForNoSecondBosAndTheBackendModelName) {
  auto config = cs::testing::model_config("qwen3", "http://127.0.0.1:9", cs::BackendApi::openai);
  config.backend_model = "Qwen/Qwen3-0.6B";
  auto models = cs::testing::models_with(config);
  auto job = cs::plan_chat(models, request());
  ASSERT_TRUE(job) << job.error().to_string();
  const json body = json::parse(job->backend_body);
  EXPECT_EQ(job->backend_path, "/v1/completions");
  EXPECT_EQ(body["model"], "Qwen/Qwen3-0.6B");
  EXPECT_EQ(body["add_special_tokens"], false);
  EXPECT_EQ(body["prompt"], json(job->prompt.ids));
}

// response_format: the backend constrains the output to JSON, from its first token (then the
// JSON is the content even where the parser starts in reasoning: the deepseek_r1 row, as vLLM's
// parser, takes output without a close for reasoning) or after a reasoning block (vLLM and
// SGLang started with a reasoning parser): both read.
TEST(ChatRelay, ConstrainedJsonIsTheContentWithOrWithoutReasoningBeforeIt) {
  auto config = cs::testing::model_config("deepseek-r1", "http://127.0.0.1:9");
  config.dialect = "deepseek_r1";
  auto loaded = cs::load_model(config);  // not the cached load: the dialect is the Endpoint's
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  cs::LoadedModels models;
  models.models.push_back(std::make_unique<const cs::ServedModel>(std::move(*loaded)));
  const std::string json_only = R"(, "response_format": {"type": "json_object"})";
  for (bool stream : {false, true})
    for (const auto& [format, pieces, reasoning] :
         {std::tuple{std::string(), std::vector<std::string>{R"({"answer": )", "42}"},
                     std::string(R"({"answer": 42})")},
          std::tuple{json_only, std::vector<std::string>{R"({"answer": )", "42}"}, std::string()},
          std::tuple{
              json_only,
              std::vector<std::string>{"The user wants ", "JSON.</think>", R"({"answer": 42})"},
              std::string("The user wants JSON.")}}) {
      auto job = cs::plan_chat(
          models, request(format + (stream ? R"(, "stream": true)" : ""), "deepseek-r1"));
      ASSERT_TRUE(job) << job.error().to_string();
      auto out = relay(*job, llama_text_events(pieces));
      ASSERT_FALSE(out.error) << out.error->message;
      std::string content, thought;
      if (stream) {
        for (const auto& e : sse_events(out.text))
          if (e != "[DONE]" && !e["choices"].empty()) {
            const json& d = e["choices"][0]["delta"];
            if (d.contains("content") && d["content"].is_string()) content += d["content"];
            if (d.contains("reasoning_content")) thought += d["reasoning_content"];
          }
      } else {
        const json message = json::parse(out.text)["choices"][0]["message"];
        if (message["content"].is_string()) content = message["content"];
        thought = message.value("reasoning_content", "");
      }
      EXPECT_EQ(thought, reasoning) << out.text;
      if (format.empty())
        EXPECT_EQ(content, "") << out.text;  // unconstrained: all of it was reasoning
      else
        EXPECT_EQ(content, R"({"answer": 42})") << out.text;
    }
}

// gpt-oss's channels under response_format: the analysis message is still the reasoning and the
// final message the content.
TEST(ChatRelay, ConstrainedJsonAfterHarmonysAnalysisIsTheContent) {
  const auto models =
      cs::testing::models_with(cs::testing::model_config("gpt-oss", "http://127.0.0.1:9"));
  auto job = cs::plan_chat(
      models, R"({"model": "gpt-oss", "messages": [{"role": "user", "content": "json please"}],
                  "response_format": {"type": "json_object"}})");
  ASSERT_TRUE(job) << job.error().to_string();
  auto out = relay(
      *job, llama_text_events({"<|channel|>analysis<|message|>Think.<|end|>",
                               "<|start|>assistant<|channel|>final<|message|>", R"({"a": 1})"}));
  ASSERT_FALSE(out.error) << out.error->message;
  const json message = json::parse(out.text)["choices"][0]["message"];
  EXPECT_EQ(message["content"], R"({"a": 1})") << out.text;
  EXPECT_EQ(message.value("reasoning_content", ""), "Think.") << out.text;
}

// Fields the template reads are its variables (Qwen3's enable_thinking), as are
// chat_template_kwargs whatever they hold; reasoning_effort is taken for any model.
TEST(PlanChat, FieldsTheTemplateReadsAreTakenAndNoOthers) {
  auto models = qwen3();
  // And OpenAI's fields the gateway takes without passing them on; null is absent.
  for (const char* extra : {R"(, "enable_thinking": false)", R"(, "reasoning_effort": "low")",
                            R"(, "chat_template_kwargs": {"anything": 1})", R"(, "user": "u")",
                            R"(, "safety_identifier": "s")", R"(, "prompt_cache_key": "k")",
                            R"(, "prompt_cache_retention": "24h")", R"(, "metadata": {"a": "b"})",
                            R"(, "service_tier": "auto")", R"(, "functions": null)",
                            R"(, "web_search_options": null)", R"(, "made_up": null)"})
    EXPECT_TRUE(cs::plan_chat(models, request(extra))) << extra;
  for (const char* field : {"chat_template", "web_search_options", "verbosity"}) {
    auto refused = cs::plan_chat(models, request(std::string(R"(, ")") + field + R"(": "x")"));
    ASSERT_FALSE(refused) << field;
    EXPECT_EQ(refused.error().path, field);
  }
  auto typo = cs::plan_chat(models, request(R"(, "enable_thinkin": false)"));
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().message.find("chat_template_kwargs"), std::string::npos);
}

TEST(PlanChat, ChatTemplateKwargsReachTheTemplate) {
  auto models = qwen3();
  auto thinking = cs::plan_chat(models, request());
  auto no_thinking =
      cs::plan_chat(models, request(R"(, "chat_template_kwargs": {"enable_thinking": false})"));
  ASSERT_TRUE(thinking && no_thinking);
  EXPECT_EQ(thinking->prompt.text.find("<think>\n\n</think>"), std::string::npos);
  EXPECT_NE(no_thinking->prompt.text.find("<think>\n\n</think>"), std::string::npos);
}

TEST(PlanChat, RefusalsNameTheStatusAndTheField) {
  auto models = qwen3();
  struct Case {
    std::string body;
    int status;
    std::string param;
  };
  const Case cases[] = {
      {request("", "nope"), 404, "model"},
      {"{not json", 400, ""},
      {R"({"messages": []})", 400, "model"},
      {request(R"(, "tool_choice": {"type": "function", "function": {"name": "nope"}})"), 400,
       "tool_choice.function.name"},
      {request(R"(, "tool_choice": {"type": "tool", "function": {"name": "get_time"}})"), 400,
       "tool_choice.type"},
      {request(R"(, "tool_choice": 3)"), 400, "tool_choice"},
      {request(R"(, "tool_choice": "always")"), 400, "tool_choice"},
      {request(R"(, "parallel_tool_calls": "no")"), 400, "parallel_tool_calls"},
      {request(R"(, "n": 17)"), 400, "n"},
      // A field neither OpenAI's nor read by the template: a typo, an unserved API.
      {request(R"(, "max_tokenz": 5)"), 400, "max_tokenz"},
      {request(R"(, "functions": [{"name": "f", "parameters": {}}])"), 400, "functions"},
      {request(R"(, "skip_special_tokens": false)"), 400, "skip_special_tokens"},
      {R"({"model": "qwen3", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant",
          "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f",
          "arguments": "{bad"}}]}]})",
       400, "messages[1].tool_calls[0].function.arguments"},
  };
  for (const auto& c : cases) {
    auto job = cs::plan_chat(models, c.body);
    ASSERT_FALSE(job) << c.body;
    const cs::HttpError e = cs::http_error(job.error());
    EXPECT_EQ(e.status, c.status) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    const json body = json::parse(cs::error_body(e));
    EXPECT_TRUE(body["error"].contains("message") && body["error"].contains("type") &&
                body["error"].contains("param") && body["error"].contains("code"));
  }
}

// The model's context: a prompt that fills it, or a client's limit past it, is a 400 naming the
// field (as vLLM refuses it); the model's own default limit is cut to what is left.
TEST(PlanChat, TheContextLengthIsCheckedBeforeTheBackend) {
  auto config = cs::testing::model_config("qwen3", "http://127.0.0.1:9");
  auto fits = cs::plan_chat(cs::testing::models_with(config), request());
  ASSERT_TRUE(fits) << fits.error().to_string();
  const std::size_t in = fits->prompt.ids.size();
  ASSERT_GT(in, 0u);
  config.max_model_len = in + 10;
  // Without a limit the reply may take what is left, as vLLM's default.
  auto rest = cs::plan_chat(cs::testing::models_with(config), request());
  ASSERT_TRUE(rest) << rest.error().to_string();
  EXPECT_EQ(rest->params.max_tokens, 10u);
  config.max_tokens_default = 100;
  const auto models = cs::testing::models_with(config);
  auto cut = cs::plan_chat(models, request());
  ASSERT_TRUE(cut) << cut.error().to_string();
  EXPECT_EQ(cut->params.max_tokens, 10u);
  // /v1/chat/render shows any prompt: no context check there.
  EXPECT_TRUE(cs::plan_chat(models, request(R"(, "max_tokens": 11)"), 512, 16, false));
  EXPECT_TRUE(cs::plan_chat(models, request(R"(, "max_tokens": 10)")));
  for (const char* field : {"max_tokens", "max_completion_tokens"}) {
    auto over = cs::plan_chat(models, request(std::string(R"(, ")") + field + R"(": 11)"));
    ASSERT_FALSE(over);
    const cs::HttpError e = cs::http_error(over.error());
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, field);
    EXPECT_NE(e.message.find(std::to_string(in + 11)), std::string::npos) << e.message;
  }
  config.max_model_len = in;
  auto full = cs::plan_chat(cs::testing::models_with(config), request());
  ASSERT_FALSE(full);
  EXPECT_EQ(cs::http_error(full.error()).status, 400);
  EXPECT_EQ(cs::http_error(full.error()).param, "messages");
}

// A backend's refusal of the request is the client's (400) or a busy backend's (429), not a 502
// the OpenAI clients retry.
TEST(HttpErrors, ABackendsRefusalIsTheClients) {
  EXPECT_EQ(cs::http_error(cs::gateway_error("BackendRefused", "m")).status, 400);
  EXPECT_EQ(cs::http_error(cs::gateway_error("BackendRefused", "m")).type, "invalid_request_error");
  EXPECT_EQ(cs::http_error(cs::gateway_error("Overloaded", "m")).status, 429);
  EXPECT_EQ(cs::http_error(cs::gateway_error("BackendError", "m")).status, 502);
}

// tool_choice with a named function: the backend is asked for the function's parameters as JSON
// (vLLM's way), and what it generates streams as that call's arguments.
TEST(ChatRelay, ANamedToolChoiceConstrainsTheBackendAndStreamsTheArguments) {
  for (auto api : {cs::BackendApi::llama_cpp, cs::BackendApi::openai, cs::BackendApi::sglang}) {
    auto models = qwen3(api);
    auto job = cs::plan_chat(
        models,
        request(
            R"(, "stream": true, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})"));
    ASSERT_TRUE(job) << job.error().to_string();
    const json body = json::parse(job->backend_body);
    const json parameters = json::parse(kWeatherTool)["function"]["parameters"];
    json sent;
    if (api == cs::BackendApi::llama_cpp) sent = body["json_schema"];
    if (api == cs::BackendApi::openai) sent = body["response_format"]["json_schema"]["schema"];
    if (api == cs::BackendApi::sglang)
      sent = json::parse(body["sampling_params"]["json_schema"].get<std::string>());
    EXPECT_EQ(sent, parameters);
  }
  auto models = qwen3();
  auto job = cs::plan_chat(
      models,
      request(
          R"(, "stream": true, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})"));
  ASSERT_TRUE(job);
  // Text that the template's own parser would read as content: here it is the arguments.
  auto out = relay(*job, llama_text_events({"{\"city\": ", "\"Paris\"}"}));
  ASSERT_FALSE(out.error) << out.error->message;
  const auto events = sse_events(out.text);
  std::string arguments, id;
  std::string finish;
  for (const auto& e : events) {
    if (!e.is_object() || e["choices"].empty()) continue;
    const json& c = e["choices"][0];
    if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
    if (!c["delta"].contains("tool_calls")) continue;
    const json& call = c["delta"]["tool_calls"][0];
    EXPECT_EQ(call["index"], 0);
    if (call.contains("id")) {
      EXPECT_TRUE(id.empty()) << "the id comes on the first delta only";
      id = call["id"];
      EXPECT_EQ(call["function"]["name"], "get_weather");
    }
    arguments += call["function"]["arguments"].get<std::string>();
  }
  EXPECT_TRUE(id.starts_with("call_")) << id;
  EXPECT_EQ(arguments, "{\"city\": \"Paris\"}");
  EXPECT_EQ(finish, "tool_calls");
}

// tool_choice "required": a list of {"name", "parameters"} objects, one schema per tool; with
// parallel_tool_calls false, at most one.
TEST(ChatRelay, RequiredToolChoiceReadsTheConstrainedListAsCalls) {
  auto models = qwen3();
  auto job = cs::plan_chat(models, request(R"(, "tool_choice": "required")"));
  ASSERT_TRUE(job) << job.error().to_string();
  const json schema = json::parse(job->backend_body)["json_schema"];
  EXPECT_EQ(schema["type"], "array");
  EXPECT_EQ(schema["minItems"], 1);
  EXPECT_FALSE(schema.contains("maxItems"));
  ASSERT_EQ(schema["items"]["anyOf"].size(), 2u);
  EXPECT_EQ(schema["items"]["anyOf"][1]["properties"]["name"]["enum"], json::array({"get_time"}));
  auto one = cs::plan_chat(models, request(R"(, "tool_choice": "required",
                                              "parallel_tool_calls": false)"));
  ASSERT_TRUE(one);
  EXPECT_EQ(json::parse(one->backend_body)["json_schema"]["maxItems"], 1);

  auto out = relay(*job, llama_text_events({R"([{"name": "get_weather", "parameters": )",
                                            R"({"city": "Paris"}}, {"name": "get_time", )",
                                            R"("parameters": {}}])"}));
  ASSERT_FALSE(out.error) << out.error->message;
  const json body = json::parse(out.text);
  const json& message = body["choices"][0]["message"];
  EXPECT_EQ(body["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_TRUE(message["content"].is_null());
  ASSERT_EQ(message["tool_calls"].size(), 2u);
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(message["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            json::parse(R"({"city": "Paris"})"));
  EXPECT_EQ(message["tool_calls"][1]["function"]["arguments"], "{}");
  EXPECT_NE(message["tool_calls"][0]["id"], message["tool_calls"][1]["id"]);

  // Output that is not the list (a backend that ignored the constraint) is kept as content.
  auto ignored = relay(*job, llama_text_events({"Sunny, probably."}));
  ASSERT_FALSE(ignored.error);
  const json plain = json::parse(ignored.text);
  EXPECT_EQ(plain["choices"][0]["message"]["content"], "Sunny, probably.");
  EXPECT_EQ(plain["choices"][0]["finish_reason"], "stop");
}

// parallel_tool_calls false with tool_choice auto: the reply ends where a second call begins
// (the backend request can be cancelled), streaming and not.
TEST(ChatRelay, ParallelToolCallsFalseEndsTheReplyAtTheSecondCall) {
  auto models = qwen3();
  const std::vector<std::string> pieces = {
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>",
      "\n<tool_call>\n{\"name\": \"get_time\", ", "\"arguments\": {}}\n</tool_call>",
      "\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>"};
  for (bool stream : {false, true}) {
    auto job =
        cs::plan_chat(models, request(std::string(R"(, "parallel_tool_calls": false, "stream": )") +
                                      (stream ? "true" : "false")));
    ASSERT_TRUE(job) << job.error().to_string();
    auto r = cs::ChatRelay::start(*job, cs::Limits{});
    ASSERT_TRUE(r);
    std::string text;
    const auto events = llama_text_events(pieces);
    std::size_t fed = 0;
    for (const auto& e : events) {
      auto sent = r->on_event(e);
      ASSERT_TRUE(sent) << sent.error().to_string();
      text += *sent;
      ++fed;
      if (r->ended_early()) break;
    }
    EXPECT_TRUE(r->ended_early());
    // The relay ends at the event where the second call shows (its name is read), before the
    // third call and the backend's last event.
    EXPECT_EQ(fed, 3u);
    auto tail = r->finish();
    ASSERT_TRUE(tail) << tail.error().to_string();
    text += *tail;
    std::vector<std::string> names;
    std::string finish;
    if (stream) {
      for (const auto& e : sse_events(text)) {
        if (!e.is_object() || e["choices"].empty()) continue;
        const json& c = e["choices"][0];
        if (!c["finish_reason"].is_null()) finish = c["finish_reason"];
        if (c["delta"].contains("tool_calls"))
          for (const auto& call : c["delta"]["tool_calls"]) {
            EXPECT_EQ(call["index"], 0);
            if (call["function"].contains("name")) names.push_back(call["function"]["name"]);
          }
      }
    } else {
      const json body = json::parse(text);
      finish = body["choices"][0]["finish_reason"];
      for (const auto& call : body["choices"][0]["message"]["tool_calls"])
        names.push_back(call["function"]["name"]);
    }
    EXPECT_EQ(names, std::vector<std::string>{"get_weather"}) << "stream " << stream;
    EXPECT_EQ(finish, "tool_calls");
    // The backend sent text without ids, and its count comes with the last event, which the
    // relay did not wait for: the text received is counted by the tokenizer (it was 0).
    std::string received;
    for (std::size_t i = 0; i < fed; ++i) received += pieces[i];
    auto ids = job->model->endpoint.tokenizer()->encode_ids(received);
    ASSERT_TRUE(ids);
    EXPECT_EQ(r->usage().completion_tokens, ids->size()) << "stream " << stream;
    EXPECT_GT(r->usage().completion_tokens, 20u);
  }
}

// n > 1: one backend request per choice (seed + choice when a seed is given, an integer kept an
// integer), each relay writing its own choice index; only the last ends the stream.
TEST(ChatRelay, SeveralChoicesAreOneBackendRequestEachWithTheirOwnIndex) {
  auto models = qwen3();
  auto job = cs::plan_chat(models, request(R"(, "n": 3, "seed": 41, "stream": true)"));
  ASSERT_TRUE(job) << job.error().to_string();
  EXPECT_EQ(job->params.n, 3u);
  EXPECT_EQ(json::parse(job->backend_body_for(0))["seed"], 41);
  const json third = json::parse(job->backend_body_for(2));
  EXPECT_TRUE(third["seed"].is_number_integer());
  EXPECT_EQ(third["seed"], 43);
  EXPECT_EQ(third["prompt"], json::parse(job->backend_body)["prompt"]);
  for (std::size_t choice = 0; choice < 3; ++choice) {
    auto r = cs::ChatRelay::start(*job, cs::Limits{}, choice);
    ASSERT_TRUE(r);
    std::string text;
    for (const auto& e : llama_text_events({"Hi"})) text += *r->on_event(e);
    text += *r->finish();
    const auto events = sse_events(text);
    for (const auto& e : events) {
      if (e.is_object() && !e["choices"].empty()) {
        EXPECT_EQ(e["choices"][0]["index"], choice);
      }
    }
    EXPECT_EQ(events.back() == json("[DONE]"), choice == 2) << choice;
  }
  EXPECT_FALSE(cs::plan_chat(models, request(R"(, "n": 5)"), 512, 4));
}

TEST(ChatRelay, AStreamedToolCallHasOpenAisShape) {
  auto models = qwen3();
  auto job = cs::plan_chat(
      models, request(R"(, "stream": true, "stream_options": {"include_usage": true})"));
  ASSERT_TRUE(job) << job.error().to_string();
  auto out = relay(
      *job, llama_text_events({"<tool_call>\n{\"name\": \"get_weather\", ",
                               "\"arguments\": {\"city\": ", "\"Paris\"}}", "\n</tool_call>"}));
  ASSERT_FALSE(out.error) << out.error->message;
  const auto events = sse_events(out.text);
  ASSERT_GE(events.size(), 5u);
  const json& first = events.front();
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  std::string arguments, id;
  std::size_t firsts = 0;
  for (std::size_t i = 1; i + 3 < events.size(); ++i) {
    const json& delta = events[i]["choices"][0]["delta"];
    EXPECT_FALSE(delta.contains("role"));
    ASSERT_TRUE(delta.contains("tool_calls")) << delta.dump();
    const json& call = delta["tool_calls"][0];
    EXPECT_EQ(call["index"], 0);
    if (call.contains("id")) {
      ++firsts;
      id = call["id"];
      EXPECT_EQ(call["type"], "function");
      EXPECT_EQ(call["function"]["name"], "get_weather");
    } else {
      EXPECT_FALSE(call["function"].contains("name"));
    }
    arguments += call["function"]["arguments"].get<std::string>();
  }
  EXPECT_EQ(firsts, 1u);
  EXPECT_TRUE(id.starts_with("call_"));
  EXPECT_EQ(id.size(), 29u);
  EXPECT_EQ(json::parse(arguments), json::parse(R"({"city": "Paris"})"));
  const json& finish = events[events.size() - 3];
  EXPECT_EQ(finish["choices"][0]["delta"], json::object());
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "tool_calls");
  const json& usage = events[events.size() - 2];
  EXPECT_EQ(usage["choices"], json::array());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], job->prompt.ids.size());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 11);
  EXPECT_EQ(events.back(), "[DONE]");
}

TEST(ChatRelay, AParameterlessCallStreamsArgumentsAsAnEmptyObject) {
  auto models = qwen3();
  for (const std::string call :
       {R"({"name": "get_time", "arguments": {}})", R"({"name": "get_time"})"}) {
    auto job = cs::plan_chat(models, request(R"(, "stream": true)"));
    ASSERT_TRUE(job);
    auto out = relay(*job, llama_text_events({"<tool_call>\n", call, "\n</tool_call>"}));
    ASSERT_FALSE(out.error) << out.error->message;
    std::string arguments;
    bool named = false;
    for (const auto& e : sse_events(out.text)) {
      if (e == "[DONE]" || !e["choices"][0]["delta"].contains("tool_calls")) continue;
      const json& c = e["choices"][0]["delta"]["tool_calls"][0];
      named = named || (c.contains("function") && c["function"].value("name", "") == "get_time");
      arguments += c["function"]["arguments"].get<std::string>();
    }
    EXPECT_TRUE(named) << call;
    EXPECT_EQ(arguments, "{}") << call;
  }
}

// What the parser reported reaches the client: a call object cut off by the length limit is
// returned with its warning on the choice ("warnings", non-streaming and in the finish chunk);
// a clean reply has no such field.
TEST(ChatRelay, TheParsersWarningsAreOnTheChoice) {
  auto models = qwen3();
  const std::vector<std::string> cut = {"<tool_call>\n",
                                        R"({"name": "get_weather", "arguments": {"ci)"};
  for (bool stream : {false, true}) {
    auto job = cs::plan_chat(models, request(stream ? R"(, "stream": true)" : ""));
    ASSERT_TRUE(job);
    auto out = relay(*job, llama_text_events(cut, "limit"));
    ASSERT_FALSE(out.error) << out.error->message;
    const json choice = final_choice(out, stream);
    ASSERT_TRUE(choice.contains("warnings")) << out.text;
    ASSERT_FALSE(choice["warnings"].empty());
    EXPECT_EQ(choice["warnings"][0]["code"], "truncated") << choice.dump();
    EXPECT_TRUE(choice["warnings"][0]["message"].is_string());
    EXPECT_TRUE(choice["warnings"][0]["offset"].is_number_unsigned());
  }
  auto job = cs::plan_chat(models, request());
  ASSERT_TRUE(job);
  auto clean = relay(*job, llama_text_events({"It is sunny."}));
  ASSERT_FALSE(clean.error);
  EXPECT_FALSE(json::parse(clean.text)["choices"][0].contains("warnings")) << clean.text;
}

TEST(ChatRelay, NonStreamingContentWithTheBackendsLengthStop) {
  auto models = qwen3();
  auto job = cs::plan_chat(models, kHiWithoutThinking);
  ASSERT_TRUE(job);
  auto out = relay(*job, llama_text_events({"Hello", " there"}, "limit"));
  ASSERT_FALSE(out.error) << out.error->message;
  const json body = json::parse(out.text);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(body["choices"][0]["message"]["content"], "Hello there");
  EXPECT_FALSE(body["choices"][0]["message"].contains("tool_calls"));
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["completion_tokens"], 11);
}

TEST(ChatRelay, ReasoningIsWrittenToEachConfiguredField) {
  auto config = cs::testing::model_config("qwen3", "http://127.0.0.1:9");
  config.reasoning_fields = {"reasoning_content", "reasoning"};
  auto models = cs::testing::models_with(config);
  auto job = cs::plan_chat(models, R"({"model": "qwen3",
      "messages": [{"role": "user", "content": "hi"}]})");
  ASSERT_TRUE(job);
  auto out = relay(*job, llama_text_events({"<think>\nhmm\n</think>\n\n", "Hello"}));
  ASSERT_FALSE(out.error) << out.error->message;
  const json message = json::parse(out.text)["choices"][0]["message"];
  // What follows </think> is content as the model wrote it (vLLM's Qwen3 parser keeps it too).
  EXPECT_TRUE(message["content"].get<std::string>().ends_with("Hello")) << message.dump();
  EXPECT_EQ(message["reasoning_content"], message["reasoning"]);
  EXPECT_NE(message["reasoning"].get<std::string>().find("hmm"), std::string::npos);
}

TEST(ChatRelay, GeneratedIdsAreDecodedAndCounted) {
  auto models = qwen3();
  auto job = cs::plan_chat(models, kHiWithoutThinking);
  ASSERT_TRUE(job);
  auto ids = job->model->endpoint.tokenizer()->encode_ids("Hello there, friend");
  ASSERT_TRUE(ids);
  ASSERT_FALSE(job->prompt.stop_ids.empty());
  std::vector<std::vector<std::uint32_t>> pieces;
  for (auto id : *ids) pieces.push_back({id});
  const auto events = llama_id_events(pieces, job->prompt.stop_ids.front());
  auto out = relay(*job, events);
  ASSERT_FALSE(out.error) << out.error->message;
  const json body = json::parse(out.text);
  EXPECT_EQ(body["choices"][0]["message"]["content"], "Hello there, friend");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(out.usage.completion_tokens, ids->size() + 1);
  EXPECT_EQ(out.usage.prompt_tokens, job->prompt.ids.size());
}

// The client's stop strings are not part of the message: llama.cpp withholds the text of the
// tokens that hold a stop string but still sends their ids, from which the reply is decoded.
TEST(ChatRelay, TheClientsStopStringIsNotInTheReply) {
  auto models = qwen3();
  std::string body = kHiWithoutThinking;
  body.insert(body.rfind('}'), R"(, "stop": ["Observation:"], "stream": true)");
  auto job = cs::plan_chat(models, body);
  ASSERT_TRUE(job) << job.error().to_string();
  EXPECT_EQ(json::parse(job->backend_body)["stop"], json::array({"Observation:"}));
  const auto& tok = *job->model->endpoint.tokenizer();
  auto ids = tok.encode_ids("Thought: ok\nObservation: the tool said so");
  ASSERT_TRUE(ids);
  std::vector<std::vector<std::uint32_t>> pieces;
  for (auto id : *ids) pieces.push_back({id});
  auto out = relay(*job, llama_id_events(pieces, job->prompt.stop_ids.front()));
  ASSERT_FALSE(out.error) << out.error->message;
  std::string content;
  for (const json& e : sse_events(out.text))
    if (e.is_object() && !e["choices"].empty())
      content += e["choices"][0]["delta"].value("content", "");
  EXPECT_EQ(content, "Thought: ok\n");
}

// tool_choice "none": the tools are not offered, and a call the model writes anyway comes back
// as the content it wrote, finish_reason stop (as vLLM, which runs no tool parser then).
TEST(ChatRelay, ToolChoiceNoneGivesCallMarkupAsContent) {
  auto models = qwen3();
  auto job = cs::plan_chat(
      models,
      request(R"(, "tool_choice": "none", "chat_template_kwargs": {"enable_thinking": false})"));
  ASSERT_TRUE(job) << job.error().to_string();
  EXPECT_EQ(job->prompt.text.find("get_weather"), std::string::npos);  // no tools offered
  const std::string call =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>";
  auto out = relay(*job, llama_text_events({call}));
  ASSERT_FALSE(out.error) << out.error->message;
  const json choice = json::parse(out.text)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "stop");
  EXPECT_FALSE(choice["message"].contains("tool_calls") && !choice["message"]["tool_calls"].empty())
      << choice.dump();
  EXPECT_EQ(choice["message"]["content"], call);
}

// A request that offers no tools gets a call the model writes anyway as the content it wrote,
// finish_reason stop: the client has nothing to run it with (vLLM runs its tool parser only for a
// request with tools; found by a review, where an empty request got `tool_calls` for
// `delete_files`). The same reply with the tools offered is the call.
TEST(ChatRelay, NoToolsOfferedGivesCallMarkupAsContent) {
  auto models = qwen3();
  const std::string call =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>";
  for (const std::string tools : {"", R"(, "tools": null)", R"(, "tools": [])"}) {
    auto job = cs::plan_chat(
        models, R"({"model": "qwen3", "messages": [{"role": "user", "content": "weather?"}],
                    "chat_template_kwargs": {"enable_thinking": false})" +
                    tools + "}");
    ASSERT_TRUE(job) << job.error().to_string();
    auto out = relay(*job, llama_text_events({call}));
    ASSERT_FALSE(out.error) << out.error->message;
    const json choice = json::parse(out.text)["choices"][0];
    EXPECT_EQ(choice["finish_reason"], "stop") << tools;
    EXPECT_FALSE(choice["message"].contains("tool_calls")) << choice.dump();
    EXPECT_EQ(choice["message"]["content"], call) << tools;
  }
  auto job =
      cs::plan_chat(models, request(R"(, "chat_template_kwargs": {"enable_thinking": false})"));
  ASSERT_TRUE(job) << job.error().to_string();
  auto out = relay(*job, llama_text_events({call}));
  ASSERT_FALSE(out.error) << out.error->message;
  EXPECT_EQ(json::parse(out.text)["choices"][0]["finish_reason"], "tool_calls");
}

// A media part cannot reach a backend that takes a text prompt: a 400 naming the part (a
// Responses input goes the same way, its path mapped back by responses_error_path).
TEST(PlanChat, AMediaPartIsRefusedNamingIt) {
  auto models = qwen3();
  auto job = cs::plan_chat(models, R"({"model": "qwen3", "messages": [{"role": "user", "content": [
      {"type": "text", "text": "What is this?"},
      {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo"}}]}]})");
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().type, "RequestError");
  EXPECT_EQ(job.error().path, "messages[0].content[1]");
  EXPECT_NE(job.error().message.find("'image_url' part"), std::string::npos) << job.error().message;
  // A part whose type is no string is named by the request's validation, as before the check.
  auto bad_type =
      cs::plan_chat(models, R"({"model": "qwen3", "messages": [{"role": "user", "content": [
          {"type": 5, "text": "x"}]}]})");
  ASSERT_FALSE(bad_type);
  EXPECT_EQ(bad_type.error().path, "messages[0].content[0].type") << bad_type.error().to_string();
}

// A call whose value quotes the turn-end marker in ordinary tokens is read whole; the stop id
// after it ends the reply.
TEST(ChatRelay, AQuotedTurnEndMarkerInACallIsNotTheEnd) {
  auto models = qwen3();
  auto job =
      cs::plan_chat(models, request(R"(, "chat_template_kwargs": {"enable_thinking": false})"));
  ASSERT_TRUE(job) << job.error().to_string();
  const auto& tok = *job->model->endpoint.tokenizer();
  std::vector<std::vector<std::uint32_t>> pieces;
  for (const char* piece : {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"",
                            "<|im", "_end|>", "\"}}\n</tool_call>"}) {
    auto ids = tok.encode_ids(piece);
    ASSERT_TRUE(ids);
    pieces.push_back(*ids);
  }
  const auto events = llama_id_events(pieces, job->prompt.stop_ids.front());
  auto out = relay(*job, events);
  ASSERT_FALSE(out.error) << out.error->message;
  const json choice = json::parse(out.text)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << choice.dump();
  EXPECT_EQ(
      json::parse(choice["message"]["tool_calls"][0]["function"]["arguments"].get<std::string>()),
      json::parse(R"({"city": "<|im_end|>"})"));
}

// A backend that goes on past a stop id (llama.cpp stops only at the tokens it counts as end of
// generation): the reply ends at the id, and the backend request can be cancelled.
TEST(ChatRelay, AStopIdTheBackendWentPastEndsTheReply) {
  auto models = qwen3();
  auto job = cs::plan_chat(models, kHiWithoutThinking);
  ASSERT_TRUE(job);
  const auto& tok = *job->model->endpoint.tokenizer();
  auto hello = tok.encode_ids("Hello");
  auto more = tok.encode_ids("<|im_start|>user\nmore");
  ASSERT_TRUE(hello && more);
  std::vector<std::uint32_t> ids = *hello;
  ids.push_back(job->prompt.stop_ids.front());
  auto r = cs::ChatRelay::start(*job, cs::Limits{});
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->on_event(json{{"content", "?"}, {"tokens", ids}, {"stop", false}}.dump()));
  EXPECT_TRUE(r->ended_early());
  // What the backend sends after it is not part of the reply.
  ASSERT_TRUE(r->on_event(json{{"content", "?"}, {"tokens", *more}, {"stop", false}}.dump()));
  auto tail = r->finish();
  ASSERT_TRUE(tail) << tail.error().to_string();
  const json choice = json::parse(*tail)["choices"][0];
  EXPECT_EQ(choice["message"]["content"], "Hello");
  EXPECT_EQ(choice["finish_reason"], "stop");
  EXPECT_EQ(r->usage().completion_tokens, ids.size());

  // The stop id with the backend's own end: read to the end as usual.
  auto r2 = cs::ChatRelay::start(*job, cs::Limits{});
  ASSERT_TRUE(r2);
  ASSERT_TRUE(r2->on_event(
      json{{"content", "?"}, {"tokens", ids}, {"stop", true}, {"stop_type", "eos"}}.dump()));
  EXPECT_FALSE(r2->ended_early());
}

TEST(ChatRelay, TheOtherBackendsStreamsAreRelayedToo) {
  struct Case {
    cs::BackendApi api;
    std::vector<std::string> events;
  };
  const Case cases[] = {
      {cs::BackendApi::openai,
       {R"({"choices": [{"index": 0, "text": "Hel", "finish_reason": null}]})",
        R"({"choices": [{"index": 0, "text": "lo", "finish_reason": "stop"}]})",
        R"({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2,
            "prompt_tokens_details": {"cached_tokens": 1}}})",
        "[DONE]"}},
      {cs::BackendApi::sglang,  // cumulative text
       {R"({"text": "Hel", "meta_info": {"finish_reason": null}})",
        R"({"text": "Hello", "meta_info": {"finish_reason": {"type": "stop"},
            "completion_tokens": 2}})",
        "[DONE]"}},
  };
  for (const auto& c : cases) {
    auto models = qwen3(c.api);
    auto job = cs::plan_chat(models, R"({"model": "qwen3",
        "messages": [{"role": "user", "content": "hi"}], "stream": true,
        "chat_template_kwargs": {"enable_thinking": false}})");
    ASSERT_TRUE(job);
    auto out = relay(*job, c.events);
    ASSERT_FALSE(out.error) << out.error->message;
    std::string content;
    std::string finish;
    for (const auto& e : sse_events(out.text)) {
      if (e == "[DONE]") continue;
      content += e["choices"][0]["delta"].value("content", "");
      if (e["choices"][0]["finish_reason"].is_string()) finish = e["choices"][0]["finish_reason"];
    }
    EXPECT_EQ(content, "Hello");
    EXPECT_EQ(finish, "stop");
    EXPECT_EQ(out.usage.completion_tokens, 2u);
    // The cache the backend reported reaches the usage; nothing where it reported none.
    EXPECT_EQ(out.usage.cached_tokens,
              c.api == cs::BackendApi::openai ? std::optional<std::size_t>(1) : std::nullopt);
  }
}

TEST(ChatRelay, BackendFaultsAre502) {
  auto models = qwen3();
  auto job = cs::plan_chat(models, request());
  ASSERT_TRUE(job);
  const std::vector<std::vector<std::string>> faults = {
      {R"({"content": "Hel", "stop": false})"},         // the reply ended before its last event
      {R"({"content": "Hel", "stop": fal)"},            // malformed JSON
      {R"({"error": {"message": "out of memory"}})"},   // the backend's error event
      {R"({"content": "x", "tokens": [-4]})"},          // not token ids
      {R"({"content": "x", "tokens": [4000000000]})"},  // an id the tokenizer does not know
  };
  for (const auto& events : faults) {
    auto out = relay(*job, events);
    ASSERT_TRUE(out.error) << events.front();
    EXPECT_EQ(out.error->status, 502) << events.front();
    EXPECT_EQ(out.error->code, "backend_error");
  }
}

TEST(ChatRelay, AStreamErrorIsAnErrorEventThenDone) {
  cs::HttpError e;
  e.status = 504;
  e.type = "server_error";
  e.message = "stalled";
  e.code = "backend_timeout";
  const auto events = sse_events(cs::ChatRelay::stream_error(e));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["error"]["message"], "stalled");
  EXPECT_EQ(events[0]["error"]["code"], "backend_timeout");
  EXPECT_EQ(events[1], "[DONE]");
}

TEST(FinishReason, TheBackendsLengthWinsThenToolCallsThenStop) {
  EXPECT_EQ(cs::finish_reason(true, "length"), "length");  // as OpenAI: the limit cut the reply
  EXPECT_EQ(cs::finish_reason(true, "stop"), "tool_calls");
  EXPECT_EQ(cs::finish_reason(false, "length"), "length");
  EXPECT_EQ(cs::finish_reason(false, "stop"), "stop");
  EXPECT_EQ(cs::finish_reason(false, ""), "stop");
}

// A call the output cut off (the model's eos or a stop string inside its arguments) or wrote
// malformed is kept as written with a warning, but the reply does not say tool_calls: a client
// that sees tool_calls runs the call, and its arguments are no JSON (vLLM's hermes parser
// returns such output as content, finish_reason stop).
TEST(FinishReason, CallsThatAreNotWholeAreNotToolCalls) {
  auto models = qwen3();
  const std::vector<std::string> cut = {"<tool_call>\n",
                                        R"({"name": "get_weather", "arguments": {"city": "Par)"};
  const std::vector<std::string> whole = {
      "<tool_call>\n", R"({"name": "get_weather", "arguments": {"city": "Paris", "days": 1}})",
      "\n</tool_call>"};
  for (bool stream : {false, true})
    for (const auto& [pieces, want] : {std::pair{cut, "stop"}, std::pair{whole, "tool_calls"}}) {
      auto job = cs::plan_chat(models, request(stream ? R"(, "stream": true)" : ""));
      ASSERT_TRUE(job);
      auto out = relay(*job, llama_text_events(pieces));
      ASSERT_FALSE(out.error) << out.error->message;
      const json choice = final_choice(out, stream);
      if (!stream) {  // kept as written
        ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << out.text;
      }
      EXPECT_EQ(choice["finish_reason"], want) << out.text;
    }
  chatwire::endpoint::Message m;
  EXPECT_FALSE(chatwire::endpoint::calls_are_whole(m));
  m.tool_calls.push_back({"call_1", "f", ""});  // a parameterless call
  EXPECT_TRUE(chatwire::endpoint::calls_are_whole(m));
  m.tool_calls.push_back({"call_2", "g", R"({"a": 1})"});
  EXPECT_TRUE(chatwire::endpoint::calls_are_whole(m));
  m.tool_calls.push_back({"call_3", "h", R"({"a": )"});
  EXPECT_FALSE(chatwire::endpoint::calls_are_whole(m));
  m.tool_calls.back().arguments = "[1]";
  EXPECT_FALSE(chatwire::endpoint::calls_are_whole(m));
}

bool alphanumeric(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c); });
}

// The id of the one tool call the relay streams for a get_weather call.
std::string streamed_call_id(const cs::LoadedModels& models, const std::string& model_name,
                             const std::vector<std::string>& pieces) {
  auto job = cs::plan_chat(models, request(R"(, "stream": true)", model_name));
  EXPECT_TRUE(job) << job.error().to_string();
  if (!job) return {};
  auto out = relay(*job, llama_text_events(pieces));
  EXPECT_FALSE(out.error) << out.error->message;
  for (const auto& e : sse_events(out.text))
    if (e != "[DONE]" && e["choices"][0]["delta"].contains("tool_calls"))
      if (auto& c = e["choices"][0]["delta"]["tool_calls"][0]; c.contains("id")) return c["id"];
  return {};
}

TEST(ToolCallIds, TheRuleOfTheConfigurationOverTheProbesMeasurement) {
  using chatwire::endpoint::CallIdStyle;
  EXPECT_EQ(cs::call_id_style("auto", CallIdStyle::short9), CallIdStyle::short9);
  EXPECT_EQ(cs::call_id_style("auto", CallIdStyle::openai), CallIdStyle::openai);
  EXPECT_EQ(cs::call_id_style("openai", CallIdStyle::short9), CallIdStyle::openai);
  EXPECT_EQ(cs::call_id_style("short9", CallIdStyle::openai), CallIdStyle::short9);

  const std::vector<std::string> qwen_call = {
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
      "\"Paris\"}}\n</tool_call>"};
  const std::string short_id =
      streamed_call_id(qwen3(cs::BackendApi::llama_cpp, "short9"), "qwen3", qwen_call);
  EXPECT_EQ(short_id.size(), 9u) << short_id;
  EXPECT_TRUE(alphanumeric(short_id)) << short_id;
}

// Mistral Nemo's template raises on call_... ids and takes 9 alphanumerics (the probe measures
// it): "auto" then gives the client such ids, which it sends back on the next turn. The model
// directory is mistral-v0.3's with Nemo's template.
TEST(ToolCallIds, AutoGivesNineCharacterIdsWhereTheTemplateRejectsOpenAis) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("chatwire-serve-nemo-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json", "generation_config.json"})
    fs::copy_file(cs::testing::model_dir("mistral-v0.3") + "/" + f, dir / f,
                  fs::copy_options::overwrite_existing);
  fs::copy_file(
      fs::path(CHATWIRE_DATA_DIR) / "templates" / "mistralai--Mistral-Nemo-Instruct-2407.jinja",
      dir / "chat_template.jinja", fs::copy_options::overwrite_existing);
  auto config = cs::testing::model_config("mistral-v0.3", "http://127.0.0.1:9");
  config.name = "nemo";
  config.dir = dir;
  auto served = cs::load_model(config);
  std::error_code ec;
  ASSERT_TRUE(served) << served.error().to_string();
  cs::LoadedModels models;
  models.models.push_back(std::make_unique<const cs::ServedModel>(std::move(*served)));
  fs::remove_all(dir, ec);
  EXPECT_EQ(models.models.front()->call_ids, chatwire::endpoint::CallIdStyle::short9);
  const std::string id = streamed_call_id(
      models, "nemo",
      {"[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]"});
  EXPECT_EQ(id.size(), 9u) << id;
  EXPECT_TRUE(alphanumeric(id)) << id;
}

TEST(HttpErrors, OneStatusPerErrorType) {
  const std::pair<const char*, int> rows[] = {
      {"RequestError", 400},   {"TypeError", 400},        {"ModelNotFound", 404},
      {"RouteNotFound", 404},  {"MethodNotAllowed", 405}, {"BodyTooLarge", 413},
      {"HeaderTooLarge", 431}, {"Overloaded", 429},       {"BackendError", 502},
      {"ShuttingDown", 503},   {"BackendTimeout", 504},
  };
  for (const auto& [type, status] : rows) {
    const cs::HttpError e = cs::http_error(cs::gateway_error(type, "m", "p"));
    EXPECT_EQ(e.status, status) << type;
    EXPECT_EQ(e.param, "p") << type;
  }
}

}  // namespace
