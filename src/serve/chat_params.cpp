// Reading the gateway's own request fields (see chat_params.hpp).
#include "serve/chat_params.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "chatwire/adapt.hpp"

namespace chatwire::serve {

namespace {

Error bad(std::string path, std::string message) {
  return Error{"RequestError", std::move(message), 0, 0, std::move(path)};
}

// Sampling fields passed on to the backend: name, lowest and highest accepted value, and
// whether only a whole number is (the backends refuse `seed: 1.5`, which would reach the client as
// a 502 instead of a 400 naming the field).
struct SamplingField {
  const char* name;
  double low, high;
  bool integer;
};
constexpr SamplingField kSamplingFields[] = {
    {"temperature", 0.0, 2.0, false},
    {"top_p", 0.0, 1.0, false},
    {"top_k", -1.0, 1e9, true},
    {"min_p", 0.0, 1.0, false},
    {"presence_penalty", -2.0, 2.0, false},
    {"frequency_penalty", -2.0, 2.0, false},
    {"repetition_penalty", 0.0, 1e3, false},
    // A 64-bit integer; each further choice of `n` adds its index (wrapping).
    {"seed", -9.3e18, 9.3e18, true},
};

// OpenAI request fields the gateway cannot honour in any value but their default: a request that
// asks for more is refused, not answered without it. (`store`: nothing is stored; `echo` belongs to
// the legacy completions API.)
struct UnservedField {
  const char* name;
  const char* why;
};
constexpr UnservedField kUnservedFields[] = {
    {"audio", "audio output is not served by this gateway"},
    {"prediction", "predicted outputs are not served by this gateway"},
    {"web_search_options", "web search is not served by this gateway"},
    {"verbosity", "the model's verbosity is not controlled by this gateway"},
};

// logit_bias: OpenAI's {"token id": bias} with biases from -100 to 100, passed on to every
// backend API under the same name.
std::optional<Error> read_logit_bias(const json& bias) {
  if (!bias.is_object()) return bad("logit_bias", "must be an object of token ids to biases");
  if (bias.size() > 1024) return bad("logit_bias", "may bias at most 1024 tokens");
  for (const auto& [key, value] : bias.items()) {
    const bool digits =
        !key.empty() && key.size() <= 10 &&
        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        std::stoull(key) <= 0xFFFFFFFFull;
    if (!digits) return bad("logit_bias." + key, "must be keyed by a token id (a decimal number)");
    if (!value.is_number() || value.get<double>() < -100 || value.get<double>() > 100)
      return bad("logit_bias." + key, "must be a number between -100 and 100");
  }
  return std::nullopt;
}

std::optional<Error> check_sampling(const SamplingField& f, const json& value) {
  if (!value.is_number()) return bad(f.name, "must be a number");
  if (f.integer && !value.is_number_integer()) return bad(f.name, "must be an integer");
  if (f.integer && value.is_number_unsigned() &&
      value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    return bad(f.name, "must fit in a signed 64-bit integer");
  const double v = value.get<double>();
  if (v < f.low || v > f.high)
    return bad(f.name, "must be between " + json(f.low).dump() + " and " + json(f.high).dump());
  return std::nullopt;
}

}  // namespace

std::optional<Error> check_request_fields(const json& request,
                                          const std::vector<std::string>& template_names) {
  for (const auto& item : request.items()) {
    const std::string& key = item.key();
    // null is absent, as for every field the gateway reads (wrappers forward every keyword).
    if (item.value().is_null() || adapt::is_openai_parameter(key) || key == "reasoning_effort" ||
        std::binary_search(template_names.begin(), template_names.end(), key))
      continue;
    if (key == "functions" || key == "function_call")
      return bad(key,
                 "belongs to OpenAI's legacy functions API, which this gateway does not "
                 "serve: send the functions as `tools` (and `function_call` as `tool_choice`)");
    if (key == "chat_template")
      return bad(key, "a served model has one template, chosen when the gateway loads it");
    return bad(key,
               "is not a request field this gateway reads, and the model's chat template reads no "
               "variable of that name (a template variable may also go in chat_template_kwargs)");
  }
  return std::nullopt;
}

std::optional<Error> check_media_parts(const json& request) {
  const auto messages = request.find("messages");
  if (messages == request.end() || !messages->is_array()) return std::nullopt;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    if (!m.is_object() || !m.contains("content") || !m["content"].is_array()) continue;
    const json& parts = m["content"];
    for (std::size_t k = 0; k < parts.size(); ++k) {
      // A part without a string type is the request validation's to name; text and an
      // assistant's refusal are text.
      if (!parts[k].is_object() || !parts[k].contains("type") || !parts[k]["type"].is_string())
        continue;
      const std::string& type = parts[k]["type"].get_ref<const std::string&>();
      if (type == "text" || type == "refusal") continue;
      return bad("messages[" + std::to_string(i) + "].content[" + std::to_string(k) + "]",
                 "is a '" + type +
                     "' part: this gateway sends its backend a text prompt, which carries no "
                     "media, so the model would not see it");
    }
  }
  return std::nullopt;
}

std::optional<Error> check_default_sampling(const json& sampling, const std::string& path) {
  if (!sampling.is_object()) return Error{"ConfigError", "must be an object", 0, 0, path};
  for (const auto& item : sampling.items()) {
    // (Not a structured binding: clang 14 does not let the lambda below capture one.)
    const std::string& key = item.key();
    const json& value = item.value();
    std::optional<Error> problem;
    const auto f = std::find_if(std::begin(kSamplingFields), std::end(kSamplingFields),
                                [&](const SamplingField& s) { return key == s.name; });
    if (key == "logit_bias")
      problem = read_logit_bias(value);
    else if (f == std::end(kSamplingFields))
      problem = bad(key,
                    "is not a sampling parameter (temperature, top_p, top_k, min_p, "
                    "presence_penalty, frequency_penalty, repetition_penalty, seed, "
                    "logit_bias)");
    else
      problem = check_sampling(*f, value);
    if (problem) {
      problem->type = "ConfigError";
      problem->path = path + "." + problem->path;
      return problem;
    }
  }
  return std::nullopt;
}

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
    if (!p.stream) return bad("stream_options", "is only allowed with stream: true");
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
    if (!p.max_tokens) {
      p.max_tokens = it->get<std::size_t>();
      p.max_tokens_field = key;
    }
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
    if (auto problem = check_sampling(f, *it)) return *problem;
    p.sampling[f.name] = *it;
  }
  if (auto b = request.find("logit_bias"); b != request.end() && !b->is_null()) {
    if (auto problem = read_logit_bias(*b)) return *problem;
    p.sampling["logit_bias"] = *b;
  }
  for (const auto& f : kUnservedFields)
    if (auto it = request.find(f.name); it != request.end() && !it->is_null())
      return bad(f.name, f.why);
  if (auto e = request.find("echo"); e != request.end() && !e->is_null()) {
    if (!e->is_boolean()) return bad("echo", "must be a boolean");
    if (e->get<bool>())
      return bad("echo",
                 "is not part of the chat completions API (the prompt is at /v1/chat/render)");
  }
  if (auto st = request.find("store"); st != request.end() && !st->is_null()) {
    if (!st->is_boolean()) return bad("store", "must be a boolean");
    if (st->get<bool>()) return bad("store", "this gateway stores no completions");
  }
  if (auto m = request.find("modalities"); m != request.end() && !m->is_null()) {
    if (!m->is_array() || m->empty() ||
        std::any_of(m->begin(), m->end(), [](const json& x) { return x != "text"; }))
      return bad("modalities", "only [\"text\"] is served by this gateway");
  }
  for (const char* key :
       {"user", "safety_identifier", "prompt_cache_key", "prompt_cache_retention"})
    if (auto it = request.find(key); it != request.end() && !it->is_null() && !it->is_string())
      return bad(key, "must be a string");
  if (auto m = request.find("metadata"); m != request.end() && !m->is_null() && !m->is_object())
    return bad("metadata", "must be an object");
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
    if (type == "json_schema") {
      auto js = rf->find("json_schema");
      if (js == rf->end() || !js->is_object())
        return bad("response_format.json_schema", "is required with type json_schema (an object)");
      if (auto schema = js->find("schema"); schema != js->end() && !schema->is_object())
        return bad("response_format.json_schema.schema", "must be an object");
    }
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
      if (auto t = request.find("tools"); t != request.end() && !t->is_null() && !t->is_array())
        return bad("tools", "must be a list of tools");
      request.erase("tools");  // the model is not offered tools: it cannot call one
      request.erase("tool_choice");
      p.tool_choice_none = true;
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
