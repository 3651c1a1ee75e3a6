// libFuzzer: arbitrary bytes as a backend's streamed reply, through everything the gateway runs
// on one: the SSE reader (the bytes arriving in pieces of the size the input says), the backend
// API row's event reader (llama.cpp, OpenAI completions, SGLang's cumulative stream), the
// Generation (token ids through the streaming detokenizer and the output parser, or text) and the
// relay's OpenAI chunks and final body, and the same written as a Responses reply. A backend is
// another program on the network: nothing it sends may crash or hang the gateway. Every event
// gives text to send or an error with a message; a reply that finishes is a chat.completion
// object with one choice (non-streaming) or SSE `data:` events ending in [DONE] (streaming), and
// as a response, a `response` object or events from response.created to response.completed (or
// .incomplete).
//
// Input: byte 0 picks the backend API (bits 0-1), streaming (bit 2), tools in the request
// (bit 3), parallel_tool_calls false (bit 4) and the model (bits 5-7, modulo the six); byte 1
// the piece size (1-64 bytes); the rest is the backend's body. The models are the gateway
// tests' six checkpoint directories, data/models/endpoint/ (CHATWIRE_DATA_DIR, which
// scripts/fuzz sets): real tokenizers, the derived parsers (Harmony's for gpt-oss, Mistral's,
// Llama 3.1's JSON calls, ...) and stop ids.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "gateway_models.hpp"
#include "serve/chat_relay.hpp"
#include "serve/responses.hpp"
#include "serve/sse_reader.hpp"

namespace cs = chatwire::serve;
using chatwire::fuzz::kApis;
using chatwire::fuzz::kModelCount;
using chatwire::fuzz::kModels;

namespace {

std::string request(std::string_view model, bool stream, bool tools, bool one_call) {
  nlohmann::json r = {{"model", model},
                      {"messages", {{{"role", "user"}, {"content", "weather in Paris?"}}}},
                      {"stream", stream},
                      {"logprobs", true},
                      {"top_logprobs", 2}};
  if (stream) r["stream_options"] = {{"include_usage", true}};
  if (tools)  // with a description: gpt-oss's template refuses a tool without one
    r["tools"] = nlohmann::json::parse(R"([{"type": "function", "function": {"name": "get_weather",
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}])");
  if (one_call) r["parallel_tool_calls"] = false;
  return r.dump();
}

void check_error(const chatwire::Error& e) {
  if (e.type.empty() || e.message.empty()) std::abort();  // an error must say what it is
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t flags = data[0];
  const std::size_t piece = 1 + data[1] % 64;
  const std::size_t model = (flags >> 5) % kModelCount;
  const std::string_view body(reinterpret_cast<const char*>(data) + 2, size - 2);
  const cs::BackendApi api = kApis[(flags & 3) % 3];
  const bool stream = (flags & 4) != 0;

  // One planned job per flag combination (planning renders and tokenizes the prompt; the
  // request is the gateway's own, so it must succeed).
  static std::map<std::size_t, cs::ChatJob> jobs;
  const std::size_t key = model * 32 + (flags & 31);
  auto job = jobs.find(key);
  if (job == jobs.end()) {
    auto planned =
        cs::plan_chat(chatwire::fuzz::models_under(api),
                      request(kModels[model].name, stream, (flags & 8) != 0, (flags & 16) != 0));
    if (!planned) std::abort();
    job = jobs.emplace(key, std::move(*planned)).first;
  }
  auto relay = cs::ChatRelay::start(job->second, cs::Limits{});
  if (!relay) std::abort();

  cs::SseReader sse(cs::Limits{}.max_backend_event_bytes);
  std::vector<std::string> events;
  std::string sent;
  std::vector<std::string> pieces;  // as the server sends them
  for (std::size_t at = 0; at <= body.size(); at += piece) {
    events.clear();
    const bool last = at + piece > body.size();
    auto fed = sse.feed(body.substr(at, piece), events);
    if (!fed) {
      check_error(fed.error());
      return 0;
    }
    if (last) sse.finish(events);
    for (const auto& e : events) {
      auto out = relay->on_event(e);
      if (!out) {
        check_error(out.error());
        return 0;
      }
      sent += *out;
      pieces.push_back(std::move(*out));
      if (relay->ended_early()) break;
    }
    if (relay->ended_early()) break;
  }
  auto tail = relay->finish();
  if (!tail) {
    check_error(tail.error());
    return 0;
  }
  sent += *tail;
  pieces.push_back(std::move(*tail));
  if (!stream) {
    auto reply = nlohmann::json::parse(sent, nullptr, false);
    if (reply.is_discarded() || !reply.is_object() || reply["choices"].size() != 1) std::abort();
  } else if (!sent.starts_with("data: ") || !sent.ends_with("data: [DONE]\n\n")) {
    std::abort();
  }

  // The same reply as the Responses API writes it: the writer reads the relay's output, which
  // it must always be able to (a failure here is the gateway's own bug).
  static const cs::ResponsesRequest responses_request = [] {
    auto r = cs::to_chat_request(nlohmann::ordered_json::parse(R"({"input": "weather?"})"));
    if (!r) std::abort();
    return std::move(*r);
  }();
  cs::ResponsesWriter writer(responses_request, "m", 0);
  if (!stream) {
    auto response = writer.from_completion(sent);
    if (!response) std::abort();
    auto r = nlohmann::json::parse(*response, nullptr, false);
    if (r.is_discarded() || r["object"] != "response" || !r["output"].is_array()) std::abort();
    return 0;
  }
  std::string written = writer.begin();
  for (const auto& p : pieces) {
    auto events = writer.on_chat_sse(p);
    if (!events) std::abort();
    written += *events;
  }
  if (!written.starts_with("event: response.created\n") ||
      (written.find("event: response.completed\n") == std::string::npos &&
       written.find("event: response.incomplete\n") == std::string::npos))
    std::abort();
  return 0;
}
