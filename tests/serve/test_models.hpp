// The model directories the gateway's tests serve (data/models/endpoint), each loaded once.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "serve/models.hpp"

namespace chatwire::serve::testing {

inline std::string model_dir(const std::string& name) {
  return std::string(CHATWIRE_DATA_DIR) + "/models/endpoint/" + name;
}

// The model `name` (a directory of data/models/endpoint) behind `backend_url`.
inline ModelConfig model_config(const std::string& name, const std::string& backend_url,
                                BackendApi api = BackendApi::llama_cpp) {
  ModelConfig c;
  c.name = name;
  c.dir = model_dir(name);
  c.backend_url = backend_url;
  c.backend_api = api;
  return c;
}

// Loaded once per process (a load probes the template), then copied: a ServedModel shares its
// Endpoint.
inline const ServedModel& loaded(const std::string& name) {
  static std::map<std::string, std::unique_ptr<ServedModel>> cache;
  auto& slot = cache[name];
  if (!slot) {
    auto m = load_model(model_config(name, "http://127.0.0.1:9"));
    if (!m) throw std::runtime_error(m.error().to_string());
    slot = std::make_unique<ServedModel>(std::move(*m));
  }
  return *slot;
}

// LoadedModels holding `name` with `config` (backend, API, rules) over the cached load.
inline LoadedModels models_with(const ModelConfig& config) {
  ServedModel m = loaded(config.dir.filename().string());
  m.config = config;
  m.call_ids = call_id_style(config.tool_call_ids, m.endpoint.call_ids());
  LoadedModels out;
  out.models.push_back(std::make_unique<const ServedModel>(std::move(m)));
  return out;
}

}  // namespace chatwire::serve::testing
