// Reading the gateway's own request fields (see chat_params.hpp).
#include "serve/chat_params.hpp"

#include <string_view>

namespace chatwire::serve {

namespace {

Error bad(std::string path, std::string message) {
  return Error{"RequestError", std::move(message), 0, 0, std::move(path)};
}

// Sampling fields passed on to the backend: name, lowest and highest accepted value.
struct SamplingField {
  const char* name;
  double low, high;
};
constexpr SamplingField kSamplingFields[] = {
    {"temperature", 0.0, 2.0},
    {"top_p", 0.0, 1.0},
    {"top_k", -1.0, 1e9},
    {"min_p", 0.0, 1.0},
    {"presence_penalty", -2.0, 2.0},
    {"frequency_penalty", -2.0, 2.0},
    {"repetition_penalty", 0.0, 1e3},
    {"seed", -9.3e18, 9.3e18},
};

}  // namespace

Result<ChatParams> read_chat_params(json& request, const ModelConfig& model,
                                    std::size_t max_choices) {
  ChatParams p;
  if (!request.is_object()) return bad("", "the request is not a JSON object");
  if (auto m = request.find("model"); m != request.end()) {
    if (!m->is_string()) return bad("model", "must be a string");
    p.model = m->get<std::string>();
  }
  if (auto s = request.find("stream"); s != request.end() && !s->is_null()) {
    if (!s->is_boolean()) return bad("stream", "must be a boolean");
    p.stream = s->get<bool>();
  }
  if (auto o = request.find("stream_options"); o != request.end() && !o->is_null()) {
    if (!o->is_object()) return bad("stream_options", "must be an object");
    if (auto u = o->find("include_usage"); u != o->end() && !u->is_null()) {
      if (!u->is_boolean()) return bad("stream_options.include_usage", "must be a boolean");
      p.include_usage = u->get<bool>();
    }
  }
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    auto it = request.find(key);
    if (it == request.end() || it->is_null()) continue;
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0)
      return bad(key, "must be a positive integer");
    if (!p.max_tokens) p.max_tokens = it->get<std::size_t>();
  }
  if (!p.max_tokens && model.max_tokens_default != 0) p.max_tokens = model.max_tokens_default;
  if (auto s = request.find("stop"); s != request.end() && !s->is_null()) {
    if (s->is_string()) {
      p.stop.push_back(s->get<std::string>());
    } else if (s->is_array()) {
      for (std::size_t i = 0; i < s->size(); ++i) {
        if (!(*s)[i].is_string()) return bad("stop[" + std::to_string(i) + "]", "must be a string");
        p.stop.push_back((*s)[i].get<std::string>());
      }
    } else {
      return bad("stop", "must be a string or a list of strings");
    }
  }
  if (!model.default_sampling_json.empty())
    p.sampling = json::parse(model.default_sampling_json, nullptr, false);
  if (!p.sampling.is_object()) p.sampling = json::object();
  for (const auto& f : kSamplingFields) {
    auto it = request.find(f.name);
    if (it == request.end() || it->is_null()) continue;
    if (!it->is_number()) return bad(f.name, "must be a number");
    const double v = it->get<double>();
    if (v < f.low || v > f.high)
      return bad(f.name, "must be between " + json(f.low).dump() + " and " + json(f.high).dump());
    p.sampling[f.name] = *it;
  }
  if (auto n = request.find("n"); n != request.end() && !n->is_null()) {
    if (!n->is_number_unsigned() || n->get<std::uint64_t>() == 0)
      return bad("n", "must be a positive integer");
    if (n->get<std::uint64_t>() > max_choices)
      return bad("n", "must be at most " + std::to_string(max_choices) + " (limits.max_choices)");
    p.n = n->get<std::size_t>();
  }
  bool logprobs = false;
  if (auto l = request.find("logprobs"); l != request.end() && !l->is_null()) {
    if (!l->is_boolean()) return bad("logprobs", "must be a boolean");
    logprobs = l->get<bool>();
  }
  if (auto t = request.find("top_logprobs"); t != request.end() && !t->is_null()) {
    if (!t->is_number_unsigned() || t->get<std::uint64_t>() > 20)
      return bad("top_logprobs", "must be an integer between 0 and 20");
    if (!logprobs) return bad("top_logprobs", "needs logprobs: true");
    p.top_logprobs = t->get<std::size_t>();
  }
  if (logprobs && !p.top_logprobs) p.top_logprobs = 0;
  // parallel_tool_calls is read by Endpoint::prepare (false: the generation ends where a second
  // call begins).
  if (auto rf = request.find("response_format"); rf != request.end() && !rf->is_null()) {
    if (!rf->is_object() || !(*rf)["type"].is_string())
      return bad("response_format", "must be an object with a string `type`");
    const std::string type = (*rf)["type"].get<std::string>();
    if (type == "json_object" || type == "json_schema") {
      if (!model.backend_structured_output)
        return bad("response_format",
                   "this model's backend does not constrain output "
                   "(backend_structured_output is false)");
      p.response_format = *rf;
    } else if (type != "text") {
      return bad("response_format.type", "must be text, json_object or json_schema");
    }
  }
  // tool_choice "required" and a named function are read by Endpoint::prepare (the backend
  // constrains the output to the JSON schema it builds, as vLLM does); "none" is applied here.
  if (auto tc = request.find("tool_choice"); tc != request.end() && !tc->is_null()) {
    const bool forced = tc->is_object() || (tc->is_string() && *tc == "required");
    if (tc->is_string() && *tc == "none") {
      request.erase("tools");  // the model is not offered tools: it cannot call one
      request.erase("tool_choice");
    } else if (forced && !model.backend_structured_output) {
      return bad("tool_choice",
                 "\"required\" and a named function need a backend that constrains output "
                 "(this model's backend_structured_output is false); use \"auto\"");
    } else if (forced && !p.response_format.is_null()) {
      return bad("response_format",
                 "cannot be combined with tool_choice \"required\" or a named function: both "
                 "constrain the output");
    }
  }
  return p;
}

}  // namespace chatwire::serve
