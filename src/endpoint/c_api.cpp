// The C API (chatwire/chatwire.h) over the Endpoint. Options and results cross the boundary as
// JSON text; every entry point catches everything, so nothing unwinds into C.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "chatwire/chatwire.h"
#include "chatwire/endpoint.hpp"
#include "chatwire/endpoint_json.hpp"
#include "chatwire/version.hpp"

using chatwire::Error;
using json = nlohmann::ordered_json;
namespace ep = chatwire::endpoint;

struct chatwire_endpoint {
  ep::Endpoint endpoint;
};
struct chatwire_prompt {
  ep::Prompt prompt;
  std::string json_text;
};
struct chatwire_generation {
  ep::Generation generation;
};

namespace {

char* copy(std::string_view s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out == nullptr) return nullptr;
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

void set_error(char** error, const std::string& message) {
  if (error != nullptr) *error = copy(message);
}

void clear(char** error) {
  if (error != nullptr) *error = nullptr;
}

// Options JSON: an object or NULL; a wrong type names the key.
chatwire::Result<json> options_object(const char* text) {
  if (text == nullptr || *text == '\0') return json::object();
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Error{"ValueError", "options must be a JSON object", 0, 0, "options"};
  return j;
}

template <typename T>
bool read_option(const json& options, const char* key, T& out, std::string& problem) {
  auto it = options.find(key);
  if (it == options.end() || it->is_null()) return true;
  try {
    out = it->get<T>();
    return true;
  } catch (const json::exception&) {
    problem = std::string("ValueError: options.") + key + ": wrong type";
    return false;
  }
}

std::string deltas_json(const std::vector<ep::Delta>& deltas) {
  json out = json::array();
  for (const auto& d : deltas) out.push_back(ep::to_json(d));
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Runs `body`, turning an exception into an error message and a null result.
template <typename F>
auto guarded(char** error, F&& body) -> decltype(body()) {
  clear(error);
  try {
    return body();
  } catch (const std::bad_alloc&) {
    set_error(error, "MemoryError: out of memory");
  } catch (const std::exception& e) {
    set_error(error, std::string("InternalError: ") + e.what());
  } catch (...) {
    set_error(error, "InternalError: unknown exception");
  }
  return {};
}

}  // namespace

extern "C" {

const char* chatwire_version(void) {
  return CHATWIRE_VERSION_STRING;
}

void chatwire_string_free(char* s) {
  std::free(s);
}

chatwire_endpoint* chatwire_endpoint_load(const char* dir, const char* options_json, char** error) {
  return guarded(error, [&]() -> chatwire_endpoint* {
    if (dir == nullptr) return set_error(error, "ValueError: dir is NULL"), nullptr;
    auto options = options_object(options_json);
    if (!options) return set_error(error, options.error().to_string()), nullptr;
    ep::LoadOptions load;
    std::string problem, template_name;
    if (!read_option(*options, "dialect", load.dialect, problem) ||
        !read_option(*options, "profile_json", load.profile_json, problem) ||
        !read_option(*options, "template_name", template_name, problem))
      return set_error(error, problem), nullptr;
    if (!template_name.empty()) load.template_name = template_name;
    auto loaded = ep::Endpoint::load(dir, load);
    if (!loaded) return set_error(error, loaded.error().to_string()), nullptr;
    return new chatwire_endpoint{std::move(*loaded)};
  });
}

void chatwire_endpoint_free(chatwire_endpoint* endpoint) {
  delete endpoint;
}

char* chatwire_endpoint_profile_json(const chatwire_endpoint* endpoint) {
  if (endpoint == nullptr) return nullptr;
  return guarded(nullptr, [&] { return copy(endpoint->endpoint.profile_json()); });
}

chatwire_prompt* chatwire_prepare(const chatwire_endpoint* endpoint, const char* request_json,
                                  size_t size, const char* options_json, char** error) {
  return guarded(error, [&]() -> chatwire_prompt* {
    if (endpoint == nullptr || (request_json == nullptr && size != 0))
      return set_error(error, "ValueError: endpoint or request is NULL"), nullptr;
    auto options = options_object(options_json);
    if (!options) return set_error(error, options.error().to_string()), nullptr;
    ep::PrepareOptions prepare;
    std::string problem, mode;
    if (!read_option(*options, "now", prepare.now, problem) ||
        !read_option(*options, "mode", mode, problem) ||
        !read_option(*options, "tokenize", prepare.tokenize, problem) ||
        !read_option(*options, "assistant_mask", prepare.assistant_mask, problem))
      return set_error(error, problem), nullptr;
    if (!mode.empty()) {
      prepare.mode = chatwire::chat::parse_mode(mode);
      if (!prepare.mode)
        return set_error(error, "ValueError: options.mode: reply, prefill or training"), nullptr;
    }
    auto prompt = endpoint->endpoint.prepare(std::string_view(request_json, size), prepare);
    if (!prompt) return set_error(error, prompt.error().to_string()), nullptr;
    auto* out = new chatwire_prompt{std::move(*prompt), {}};
    out->json_text = ep::to_json(out->prompt).dump(-1, ' ', false, json::error_handler_t::replace);
    return out;
  });
}

void chatwire_prompt_free(chatwire_prompt* prompt) {
  delete prompt;
}

const char* chatwire_prompt_text(const chatwire_prompt* prompt, size_t* size) {
  if (prompt == nullptr) return nullptr;
  if (size != nullptr) *size = prompt->prompt.text.size();
  return prompt->prompt.text.c_str();
}

const uint32_t* chatwire_prompt_ids(const chatwire_prompt* prompt, size_t* count) {
  if (prompt == nullptr) return nullptr;
  if (count != nullptr) *count = prompt->prompt.ids.size();
  return prompt->prompt.ids.data();
}

const uint32_t* chatwire_prompt_stop_ids(const chatwire_prompt* prompt, size_t* count) {
  if (prompt == nullptr) return nullptr;
  if (count != nullptr) *count = prompt->prompt.stop_ids.size();
  return prompt->prompt.stop_ids.data();
}

const char* chatwire_prompt_json(const chatwire_prompt* prompt) {
  return prompt == nullptr ? nullptr : prompt->json_text.c_str();
}

int chatwire_stops_by_id(const chatwire_endpoint* endpoint, const chatwire_prompt* prompt,
                         const char* text, size_t size) {
  if (endpoint == nullptr || prompt == nullptr || (text == nullptr && size != 0)) return 0;
  try {
    return endpoint->endpoint.stops_by_id(prompt->prompt, std::string_view(text, size)) ? 1 : 0;
  } catch (const std::exception&) {  // out of memory in the lookup: nothing throws from here
    return 0;
  }
}

chatwire_generation* chatwire_start(const chatwire_endpoint* endpoint,
                                    const chatwire_prompt* prompt, char** error) {
  return guarded(error, [&]() -> chatwire_generation* {
    if (endpoint == nullptr || prompt == nullptr)
      return set_error(error, "ValueError: endpoint or prompt is NULL"), nullptr;
    auto generation = endpoint->endpoint.start(prompt->prompt);
    if (!generation) return set_error(error, generation.error().to_string()), nullptr;
    return new chatwire_generation{std::move(*generation)};
  });
}

void chatwire_generation_free(chatwire_generation* generation) {
  delete generation;
}

char* chatwire_generation_push(chatwire_generation* generation, const uint32_t* ids, size_t count,
                               char** error) {
  return guarded(error, [&]() -> char* {
    if (generation == nullptr || (ids == nullptr && count != 0))
      return set_error(error, "ValueError: generation or ids is NULL"), nullptr;
    auto deltas = generation->generation.push(std::span<const std::uint32_t>(ids, count));
    if (!deltas) return set_error(error, deltas.error().to_string()), nullptr;
    return copy(deltas_json(*deltas));
  });
}

char* chatwire_generation_push_text(chatwire_generation* generation, const char* text, size_t size,
                                    char** error) {
  return guarded(error, [&]() -> char* {
    if (generation == nullptr || (text == nullptr && size != 0))
      return set_error(error, "ValueError: generation or text is NULL"), nullptr;
    auto deltas = generation->generation.push_text(std::string_view(text, size));
    if (!deltas) return set_error(error, deltas.error().to_string()), nullptr;
    return copy(deltas_json(*deltas));
  });
}

char* chatwire_generation_finish(chatwire_generation* generation, char** error) {
  return guarded(error, [&]() -> char* {
    if (generation == nullptr) return set_error(error, "ValueError: generation is NULL"), nullptr;
    auto deltas = generation->generation.finish();
    if (!deltas) return set_error(error, deltas.error().to_string()), nullptr;
    return copy(deltas_json(*deltas));
  });
}

char* chatwire_generation_message(const chatwire_generation* generation) {
  if (generation == nullptr) return nullptr;
  return guarded(nullptr, [&] {
    return copy(ep::to_json(generation->generation.message())
                    .dump(-1, ' ', false, json::error_handler_t::replace));
  });
}

char* chatwire_generation_warnings(const chatwire_generation* generation) {
  if (generation == nullptr) return nullptr;
  return guarded(nullptr, [&] {
    return copy(ep::to_json(generation->generation.warnings())
                    .dump(-1, ' ', false, json::error_handler_t::replace));
  });
}

int chatwire_generation_stopped(const chatwire_generation* generation) {
  return generation != nullptr && generation->generation.stopped() ? 1 : 0;
}

int chatwire_generation_call_limit_reached(const chatwire_generation* generation) {
  return generation != nullptr && generation->generation.call_limit_reached() ? 1 : 0;
}

const char* chatwire_generation_finish_reason(const chatwire_generation* generation) {
  if (generation == nullptr) return nullptr;
  return generation->generation.finish_reason().data();
}

}  // extern "C"
