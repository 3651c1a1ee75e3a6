// The backend API table: llama.cpp server, OpenAI completions (vLLM, SGLang), SGLang /generate.
// Every row asks for a streamed reply with token ids where the API can return them, so that
// special-token markers reach chatwire's own detokenizer and parser intact.
#include "serve/backend_api.hpp"

#include <algorithm>
#include <array>

#include "util/token_ids.hpp"

namespace chatwire::serve {

namespace {

// One sampling parameter under each API's name ("" = the API has no such parameter).
struct SamplingName {
  std::string_view openai, llama_cpp, completions, sglang;
};
constexpr SamplingName kSampling[] = {
    {"temperature", "temperature", "temperature", "temperature"},
    {"top_p", "top_p", "top_p", "top_p"},
    {"top_k", "top_k", "top_k", "top_k"},
    {"min_p", "min_p", "min_p", "min_p"},
    {"seed", "seed", "seed", "sampling_seed"},
    {"presence_penalty", "presence_penalty", "presence_penalty", "presence_penalty"},
    {"frequency_penalty", "frequency_penalty", "frequency_penalty", "frequency_penalty"},
    {"repetition_penalty", "repeat_penalty", "repetition_penalty", "repetition_penalty"},
    // OpenAI's {"token id": bias} object, which all three read (llama.cpp also takes [[id, bias]]).
    {"logit_bias", "logit_bias", "logit_bias", "logit_bias"},
};

void put_sampling(json& out, const json& sampling, std::string_view SamplingName::*column) {
  for (const auto& row : kSampling) {
    auto it = sampling.find(row.openai);
    if (it != sampling.end() && !(row.*column).empty()) out[std::string(row.*column)] = *it;
  }
}

// The JSON schema of an OpenAI response_format (json_object: any object).
json schema_of(const json& response_format) {
  if (response_format.value("type", "") == "json_schema") {
    auto it = response_format.find("json_schema");
    if (it != response_format.end() && it->is_object() && it->contains("schema"))
      return (*it)["schema"];
  }
  return json{{"type", "object"}};
}

// --- log probabilities, in each API's shape ----------------------------------------------

bool read_logprob(const json& v, double& out) {
  if (!v.is_number()) return false;
  out = v.get<double>();
  return true;
}

// llama.cpp: {"id", "token", "logprob", "top_logprobs": [{"id", "token", "logprob"}]}.
bool read_llama_logprob(const json& e, TokenLogprob& out, bool with_top) {
  if (!e.is_object() || !read_logprob(e.value("logprob", json()), out.logprob)) return false;
  if (auto id = e.find("id"); id != e.end() && id->is_number_unsigned())
    out.id = static_cast<std::uint32_t>(id->get<std::uint64_t>());
  else if (auto t = e.find("token"); t != e.end() && t->is_string())
    out.text = t->get<std::string>();
  else
    return false;
  if (!with_top) return true;
  if (auto top = e.find("top_logprobs"); top != e.end() && top->is_array())
    for (const auto& alt : *top) {
      TokenLogprob a;
      if (!read_llama_logprob(alt, a, false)) return false;
      out.top.push_back(std::move(a));
    }
  return true;
}

// vLLM's "token_id:123" (return_tokens_as_token_ids), else the token's text.
void put_token(const std::string& token, TokenLogprob& out) {
  constexpr std::string_view kPrefix = "token_id:";
  if (token.starts_with(kPrefix)) {
    std::uint64_t id = 0;
    bool digits = token.size() > kPrefix.size();
    for (std::size_t i = kPrefix.size(); digits && i < token.size(); ++i) {
      digits = token[i] >= '0' && token[i] <= '9' && id < 0xffffffffu;
      id = id * 10 + static_cast<std::uint64_t>(token[i] - '0');
    }
    if (digits && id <= 0xffffffffu) {
      out.id = static_cast<std::uint32_t>(id);
      return;
    }
  }
  out.text = token;
}

// SGLang: [logprob, token_id, text-or-null].
bool read_sglang_logprob(const json& e, TokenLogprob& out) {
  if (!e.is_array() || e.size() < 2 || !read_logprob(e[0], out.logprob) ||
      !e[1].is_number_unsigned())
    return false;
  out.id = static_cast<std::uint32_t>(e[1].get<std::uint64_t>());
  return true;
}

Error backend_error(std::string message) {
  return Error{"BackendError", std::move(message), 0, 0, {}};
}

Result<json> parse_event(std::string_view data) {
  json j = json::parse(data.begin(), data.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return backend_error("the backend sent an event that is not a JSON object: " +
                         std::string(data.substr(0, 200)));
  if (auto e = j.find("error"); e != j.end()) {
    std::string m = e->is_object() ? e->value("message", e->dump()) : e->dump();
    return backend_error("the backend reported an error: " + m);
  }
  return j;
}

// token ids from a JSON array, appended to `out`; false when it is not an array of token ids.
bool read_ids(const json& a, std::vector<std::uint32_t>& out) {
  std::size_t bad = 0;
  auto ids = util::token_ids(a, bad);
  if (!ids) return false;
  out.insert(out.end(), ids->begin(), ids->end());
  return true;
}

// A string field: "" when absent or null, nullopt when it holds another type (a malformed reply,
// reported as such: nlohmann's value() would throw).
std::optional<std::string> string_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::string();
  if (!it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<std::size_t> count(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<std::size_t>();
}

// The prompt as token ids under `ids_key`, or as text under `text_key` when there are none.
void put_prompt(json& b, const BackendRequest& r, const char* text_key, const char* ids_key) {
  if (r.ids.empty())
    b[text_key] = r.text;
  else
    b[ids_key] = r.ids;
}

// --- llama.cpp server: POST /completion -------------------------------------------------

json llama_build(const BackendRequest& r) {
  json b;
  put_prompt(b, r, "prompt", "prompt");
  b["n_predict"] = r.max_tokens ? static_cast<long long>(*r.max_tokens) : -1;
  b["stop"] = r.stop;
  b["stream"] = true;
  b["cache_prompt"] = true;
  b["return_tokens"] = true;  // ids, so that special-token markers survive
  put_sampling(b, r.sampling, &SamplingName::llama_cpp);
  if (!r.response_format.is_null()) b["json_schema"] = schema_of(r.response_format);
  // n_probs 0 returns no probabilities at all: at least one, the extra ones dropped later.
  if (r.top_logprobs) b["n_probs"] = std::max<std::size_t>(*r.top_logprobs, 1);
  return b;
}

Result<BackendChunk> llama_read(std::string_view data, StreamState&) {
  auto j = parse_event(data);
  if (!j) return j.error();
  BackendChunk c;
  if (auto t = j->find("tokens"); t != j->end()) {
    if (!read_ids(*t, c.ids)) return backend_error("the backend's `tokens` are not token ids");
    c.has_ids = true;
  }
  if (auto t = j->find("content"); t != j->end() && t->is_string()) c.text = t->get<std::string>();
  if (auto p = j->find("completion_probabilities"); p != j->end() && p->is_array())
    for (const auto& e : *p) {
      TokenLogprob t;
      if (!read_llama_logprob(e, t, true))
        return backend_error("the backend's `completion_probabilities` are not read: " +
                             e.dump().substr(0, 200));
      c.logprobs.push_back(std::move(t));
    }
  auto stop = j->find("stop");
  if (stop != j->end() && !stop->is_boolean())
    return backend_error("the backend's `stop` is not true or false");
  if (stop != j->end() && stop->get<bool>()) {
    c.done = true;
    const auto type = string_field(*j, "stop_type");
    if (!type) return backend_error("the backend's `stop_type` is not a string");
    c.finish = *type == "limit" ? "length" : "stop";
    if (auto t = j->find("truncated"); t != j->end() && t->is_boolean() && t->get<bool>())
      c.finish = "length";
    c.prompt_tokens = count(*j, "tokens_evaluated");
    c.completion_tokens = count(*j, "tokens_predicted");
  }
  return c;
}

// --- OpenAI completions (vLLM, SGLang): POST /v1/completions ---------------------------

json completions_build(const BackendRequest& r) {
  json b;
  b["model"] = r.model;
  put_prompt(b, r, "prompt", "prompt");
  if (r.max_tokens) b["max_tokens"] = *r.max_tokens;
  if (!r.stop.empty()) b["stop"] = r.stop;
  if (!r.stop_ids.empty()) b["stop_token_ids"] = r.stop_ids;
  b["stream"] = true;
  b["stream_options"] = {{"include_usage", true}};
  // The template wrote its own BOS: no second one (vLLM's double-BOS reports).
  b["add_special_tokens"] = false;
  b["skip_special_tokens"] = false;  // markers such as <tool_call> must reach the parser
  b["spaces_between_special_tokens"] = false;
  b["return_token_ids"] = true;  // vLLM: choices[].token_ids
  put_sampling(b, r.sampling, &SamplingName::completions);
  if (!r.response_format.is_null()) b["response_format"] = r.response_format;
  if (r.top_logprobs) {
    b["logprobs"] = *r.top_logprobs;
    b["return_tokens_as_token_ids"] = true;  // "token_id:N": ids, not ambiguous strings
  }
  return b;
}

Result<BackendChunk> completions_read(std::string_view data, StreamState&) {
  auto j = parse_event(data);
  if (!j) return j.error();
  BackendChunk c;
  if (auto u = j->find("usage"); u != j->end() && u->is_object()) {
    c.prompt_tokens = count(*u, "prompt_tokens");
    c.completion_tokens = count(*u, "completion_tokens");
    if (auto d = u->find("prompt_tokens_details"); d != u->end() && d->is_object())
      c.cached_tokens = count(*d, "cached_tokens");
  }
  auto choices = j->find("choices");
  if (choices == j->end() || !choices->is_array())
    return backend_error("the backend's completion chunk has no `choices` list");
  for (const auto& choice : *choices) {
    if (!choice.is_object()) return backend_error("a backend choice is not an object");
    auto index = choice.find("index");
    if (index != choice.end() && !index->is_number_integer())
      return backend_error("a backend choice's `index` is not an integer");
    if (index != choice.end() && index->get<std::int64_t>() != 0) continue;
    if (auto t = choice.find("token_ids"); t != choice.end() && !t->is_null()) {
      if (!read_ids(*t, c.ids)) return backend_error("the backend's `token_ids` are not token ids");
      c.has_ids = true;
    }
    if (auto t = choice.find("text"); t != choice.end() && t->is_string())
      c.text = t->get<std::string>();
    if (auto l = choice.find("logprobs"); l != choice.end() && l->is_object()) {
      const json& tokens = l->value("tokens", json());
      const json& values = l->value("token_logprobs", json());
      const json& tops = l->value("top_logprobs", json());
      if (!tokens.is_array() || !values.is_array() || values.size() != tokens.size())
        return backend_error("the backend's `logprobs` have no matching tokens and token_logprobs");
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        TokenLogprob t;
        if (!tokens[i].is_string() || !read_logprob(values[i], t.logprob))
          return backend_error("the backend's `logprobs` are not read");
        put_token(tokens[i].get<std::string>(), t);
        if (tops.is_array() && i < tops.size() && tops[i].is_object())
          for (const auto& [token, value] : tops[i].items()) {
            TokenLogprob a;
            if (!read_logprob(value, a.logprob))
              return backend_error("the backend's `top_logprobs` are not read");
            put_token(token, a);
            t.top.push_back(std::move(a));
          }
        c.logprobs.push_back(std::move(t));
      }
    }
    if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string()) {
      const std::string& reason = f->get_ref<const std::string&>();
      // vLLM ends a request it aborted (the engine failed it, or it was preempted and dropped) with
      // "abort": the text is cut off, not finished.
      if (reason == "abort" || reason == "error")
        return backend_error("the backend ended the generation with finish_reason \"" + reason +
                             "\"");
      c.done = true;
      c.finish = reason == "length" ? "length" : "stop";
    }
  }
  return c;
}

// --- SGLang native: POST /generate (cumulative text and ids) ---------------------------

json sglang_build(const BackendRequest& r) {
  json b;
  put_prompt(b, r, "text", "input_ids");
  json s = json::object();
  if (r.max_tokens) s["max_new_tokens"] = *r.max_tokens;
  if (!r.stop.empty()) s["stop"] = r.stop;
  if (!r.stop_ids.empty()) s["stop_token_ids"] = r.stop_ids;
  s["skip_special_tokens"] = false;
  s["spaces_between_special_tokens"] = false;
  put_sampling(s, r.sampling, &SamplingName::sglang);
  if (!r.response_format.is_null()) s["json_schema"] = schema_of(r.response_format).dump();
  b["sampling_params"] = std::move(s);
  b["stream"] = true;
  if (r.top_logprobs) {
    b["return_logprob"] = true;
    b["top_logprobs_num"] = *r.top_logprobs;
  }
  return b;
}

Result<BackendChunk> sglang_read(std::string_view data, StreamState& state) {
  auto j = parse_event(data);
  if (!j) return j.error();
  BackendChunk c;
  if (auto t = j->find("output_ids"); t != j->end() && !t->is_null()) {
    std::vector<std::uint32_t> all;
    if (!read_ids(*t, all)) return backend_error("the backend's `output_ids` are not token ids");
    if (all.size() < state.ids_seen)
      return backend_error("the backend's cumulative `output_ids` shrank");
    c.ids.assign(all.begin() + static_cast<std::ptrdiff_t>(state.ids_seen), all.end());
    state.ids_seen = all.size();
    c.has_ids = true;
  }
  if (auto t = j->find("text"); t != j->end() && t->is_string()) {
    const std::string& all = t->get_ref<const std::string&>();
    if (all.size() < state.text_seen)
      return backend_error("the backend's cumulative `text` shrank");
    c.text = all.substr(state.text_seen);
    state.text_seen = all.size();
  }
  if (auto m = j->find("meta_info"); m != j->end() && m->is_object()) {
    // Cumulative like the text: the entries past those already seen.
    if (auto l = m->find("output_token_logprobs"); l != m->end() && l->is_array()) {
      if (l->size() < state.logprobs_seen)
        return backend_error("the backend's cumulative `output_token_logprobs` shrank");
      const json& tops = m->value("output_top_logprobs", json());
      for (std::size_t i = state.logprobs_seen; i < l->size(); ++i) {
        TokenLogprob t;
        if (!read_sglang_logprob((*l)[i], t))
          return backend_error("the backend's `output_token_logprobs` are not read");
        if (tops.is_array() && i < tops.size() && tops[i].is_array())
          for (const auto& alt : tops[i]) {
            TokenLogprob a;
            if (!read_sglang_logprob(alt, a))
              return backend_error("the backend's `output_top_logprobs` are not read");
            t.top.push_back(std::move(a));
          }
        c.logprobs.push_back(std::move(t));
      }
      state.logprobs_seen = l->size();
    }
    c.prompt_tokens = count(*m, "prompt_tokens");
    c.completion_tokens = count(*m, "completion_tokens");
    c.cached_tokens = count(*m, "cached_tokens");
    if (auto f = m->find("finish_reason"); f != m->end() && !f->is_null()) {
      c.done = true;
      const auto type = f->is_object()   ? string_field(*f, "type")
                        : f->is_string() ? f->get<std::string>()
                                         : std::optional<std::string>();
      if (!type)
        return backend_error(
            "the backend's `finish_reason` is neither a string nor an object "
            "with a string `type`");
      if (*type == "abort") return backend_error("the backend aborted the request");
      c.finish = *type == "length" ? "length" : "stop";
    }
  }
  return c;
}

constexpr std::array<BackendApiRow, 3> kBackendApis = {{
    {BackendApi::llama_cpp, "llama.cpp", "/completion", llama_build, llama_read},
    {BackendApi::openai, "openai", "/v1/completions", completions_build, completions_read},
    {BackendApi::sglang, "sglang", "/generate", sglang_build, sglang_read},
}};

}  // namespace

const BackendApiRow& backend_api_row(BackendApi api) noexcept {
  for (const auto& row : kBackendApis)
    if (row.api == api) return row;
  return kBackendApis[0];
}

std::string_view backend_api_name(BackendApi api) noexcept {
  return backend_api_row(api).name;
}

Result<BackendApi> backend_api_from_name(std::string_view name) {
  for (const auto& row : kBackendApis)
    if (row.name == name) return row.api;
  return Error{"ConfigError",
               "unknown backend API '" + std::string(name) + "' (llama.cpp, openai or sglang)",
               0,
               0,
               {}};
}

}  // namespace chatwire::serve
