// chatwire serve's configuration file: the model list and the gateway's limits and timeouts.
#include <algorithm>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>
#include <variant>

#include "chatwire/serve.hpp"
#include "serve/chat_params.hpp"
#include "util/json_text.hpp"

namespace chatwire::serve {

namespace {

using json = nlohmann::ordered_json;
using Status = Result<std::monostate>;

Error config_error(std::string path, std::string message) {
  return Error{"ConfigError", std::move(message), 0, 0, std::move(path)};
}

// Reads an optional key of one type into `out`; a wrong type is an error naming the path.
template <typename T>
Status read(const json& object, const char* key, const std::string& path, T& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status{std::monostate{}};
  const std::string where = path.empty() ? key : path + "." + key;
  if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) return config_error(where, "must be a boolean");
    out = it->get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!it->is_number_unsigned()) return config_error(where, "must be a non-negative integer");
    const auto v = it->get<std::uint64_t>();
    if (v > std::numeric_limits<T>::max()) return config_error(where, "is too large");
    out = static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return config_error(where, "must be a string");
    out = it->get<std::string>();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!it->is_array()) return config_error(where, "must be a list of strings");
    out.clear();
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string())
        return config_error(where + "[" + std::to_string(i) + "]", "must be a string");
      out.push_back((*it)[i].get<std::string>());
    }
  }
  return Status{std::monostate{}};
}

// A key the reader does not know is refused, naming its path: a mistyped limit, timeout or key
// would otherwise leave the default in force without a word.
Status known_keys(const json& object, const std::string& path,
                  std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : object.items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      return config_error(path.empty() ? key : path + "." + key, "is not a configuration key");
  return Status{std::monostate{}};
}

// Limits and timeouts of 0 would refuse every request (max_header_bytes, max_concurrent_requests)
// or time out at once.
Status positive(const json& object, const std::string& path) {
  for (const auto& [key, value] : object.items())
    if (key != "shutdown_grace_ms" && value.is_number_unsigned() && value.get<std::uint64_t>() == 0)
      return config_error(path + "." + key, "must be positive");
  return Status{std::monostate{}};
}

#define CW_CHECK(expr)                         \
  do {                                         \
    if (auto s = (expr); !s) return s.error(); \
  } while (0)

#define CW_READ(obj, key, path, field)                              \
  do {                                                              \
    if (auto s = read(obj, key, path, field); !s) return s.error(); \
  } while (0)

Result<ModelConfig> read_model(const json& m, const std::string& path,
                               const std::filesystem::path& base) {
  if (!m.is_object()) return config_error(path, "must be an object");
  CW_CHECK(known_keys(
      m, path,
      {"name", "model_dir", "backend_url", "backend_api", "backend_model", "tool_call_ids",
       "reasoning_fields", "dialect", "max_tokens", "backend_structured_output", "probe_max_steps",
       "backend_api_key", "default_sampling", "max_model_len"}));
  ModelConfig model;
  std::string dir, api = "llama.cpp";
  CW_READ(m, "name", path, model.name);
  CW_READ(m, "model_dir", path, dir);
  CW_READ(m, "backend_url", path, model.backend_url);
  CW_READ(m, "backend_api", path, api);
  CW_READ(m, "backend_model", path, model.backend_model);
  CW_READ(m, "tool_call_ids", path, model.tool_call_ids);
  CW_READ(m, "reasoning_fields", path, model.reasoning_fields);
  CW_READ(m, "dialect", path, model.dialect);
  CW_READ(m, "max_tokens", path, model.max_tokens_default);
  CW_READ(m, "backend_structured_output", path, model.backend_structured_output);
  CW_READ(m, "probe_max_steps", path, model.probe_max_steps);
  CW_READ(m, "backend_api_key", path, model.backend_api_key);
  CW_READ(m, "max_model_len", path, model.max_model_len);
  if (auto it = m.find("backend_api_key"); it != m.end() && !it->is_null())
    if (auto e = check_api_key(model.backend_api_key, path + ".backend_api_key")) return *e;
  if (dir.empty()) return config_error(path + ".model_dir", "is missing");
  if (model.backend_url.empty()) return config_error(path + ".backend_url", "is missing");
  model.dir = std::filesystem::path(dir).is_absolute() ? std::filesystem::path(dir) : base / dir;
  if (auto n = m.find("name"); n != m.end() && n->is_string() && model.name.empty())
    return config_error(path + ".name", "must not be empty");
  if (model.name.empty()) {  // the directory's name, also when model_dir ends with a slash
    const std::filesystem::path normal = model.dir.lexically_normal();
    model.name = (normal.has_filename() ? normal : normal.parent_path()).filename().string();
  }
  if (model.name.empty() || model.name == "." || model.name == "..")
    return config_error(path + ".name",
                        "is missing (model_dir names no directory to take it from)");
  auto parsed_api = backend_api_from_name(api);
  if (!parsed_api) return config_error(path + ".backend_api", parsed_api.error().message);
  model.backend_api = *parsed_api;
  if (model.tool_call_ids != "auto" && model.tool_call_ids != "openai" &&
      model.tool_call_ids != "short9")
    return config_error(path + ".tool_call_ids", "must be \"auto\", \"openai\" or \"short9\"");
  if (auto it = m.find("default_sampling"); it != m.end() && !it->is_null()) {
    if (auto e = check_default_sampling(*it, path + ".default_sampling")) return *e;
    model.default_sampling_json = it->dump();
  }
  return model;
}

}  // namespace

// An API key goes into an HTTP header: visible ASCII, no spaces (RFC 6750's token68 and more).
std::optional<Error> check_api_key(std::string_view key, const std::string& where) {
  if (key.empty()) return config_error(where, "must not be empty");
  for (char c : key)
    if (c <= ' ' || c > '~')
      return config_error(where, "must be visible ASCII characters without spaces");
  return std::nullopt;
}

Result<Config> Config::from_json_text(std::string_view text, const std::filesystem::path& base) {
  auto parsed = util::parse_bounded_json(text, 64);
  if (!parsed)
    return config_error("", parsed.failure == util::BoundedJson::Failure::kTooDeep
                                ? "the configuration is nested too deeply"
                                : "the configuration is not JSON: " + parsed.what);
  const json& j = parsed.value;
  if (!j.is_object()) return config_error("", "the configuration must be a JSON object");
  CW_CHECK(known_keys(j, "",
                      {"host", "port", "worker_threads", "max_idle_backend_connections", "api_keys",
                       "access_log", "cors_origins", "limits", "timeouts", "models"}));
  Config c;
  CW_READ(j, "host", "", c.host);
  CW_READ(j, "port", "", c.port);
  CW_READ(j, "worker_threads", "", c.worker_threads);
  CW_READ(j, "max_idle_backend_connections", "", c.max_idle_backend_connections);
  CW_READ(j, "api_keys", "", c.api_keys);
  CW_READ(j, "access_log", "", c.access_log);
  // Read against the file's directory, as model_dir is ("-" is standard error).
  if (!c.access_log.empty() && c.access_log != "-" &&
      !std::filesystem::path(c.access_log).is_absolute())
    c.access_log = (base / c.access_log).string();
  CW_READ(j, "cors_origins", "", c.cors_origins);
  for (std::size_t i = 0; i < c.api_keys.size(); ++i)
    if (auto e = check_api_key(c.api_keys[i], "api_keys[" + std::to_string(i) + "]")) return *e;
  if (auto it = j.find("limits"); it != j.end()) {
    if (!it->is_object()) return config_error("limits", "must be an object");
    CW_CHECK(known_keys(*it, "limits",
                        {"max_body_bytes", "max_header_bytes", "max_concurrent_requests",
                         "max_backend_event_bytes", "max_completion_bytes", "max_choices"}));
    CW_CHECK(positive(*it, "limits"));
    CW_READ(*it, "max_body_bytes", "limits", c.limits.max_body_bytes);
    CW_READ(*it, "max_header_bytes", "limits", c.limits.max_header_bytes);
    CW_READ(*it, "max_concurrent_requests", "limits", c.limits.max_concurrent_requests);
    CW_READ(*it, "max_backend_event_bytes", "limits", c.limits.max_backend_event_bytes);
    CW_READ(*it, "max_completion_bytes", "limits", c.limits.max_completion_bytes);
    CW_READ(*it, "max_choices", "limits", c.limits.max_choices);
  }
  if (auto it = j.find("timeouts"); it != j.end()) {
    if (!it->is_object()) return config_error("timeouts", "must be an object");
    CW_CHECK(known_keys(*it, "timeouts",
                        {"connect_ms", "request_ms", "idle_ms", "client_idle_ms", "client_write_ms",
                         "shutdown_grace_ms"}));
    CW_CHECK(positive(*it, "timeouts"));
    CW_READ(*it, "connect_ms", "timeouts", c.timeouts.connect_ms);
    CW_READ(*it, "request_ms", "timeouts", c.timeouts.request_ms);
    CW_READ(*it, "idle_ms", "timeouts", c.timeouts.idle_ms);
    CW_READ(*it, "client_idle_ms", "timeouts", c.timeouts.client_idle_ms);
    CW_READ(*it, "client_write_ms", "timeouts", c.timeouts.client_write_ms);
    CW_READ(*it, "shutdown_grace_ms", "timeouts", c.timeouts.shutdown_grace_ms);
  }
  auto models = j.find("models");
  if (models == j.end() || !models->is_array() || models->empty())
    return config_error("models", "must be a non-empty list of models");
  for (std::size_t i = 0; i < models->size(); ++i) {
    auto m = read_model((*models)[i], "models[" + std::to_string(i) + "]", base);
    if (!m) return m.error();
    for (const auto& other : c.models)
      if (other.name == m->name)
        return config_error("models[" + std::to_string(i) + "].name",
                            "'" + m->name + "' is served twice");
    c.models.push_back(std::move(*m));
  }
  return c;
}

}  // namespace chatwire::serve
