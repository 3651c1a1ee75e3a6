// The models a gateway serves: every model of the configuration loaded (its template probed,
// its output parser derived) once at start. A model that fails to load is reported with the
// reason and left out; the others are served.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/endpoint.hpp"
#include "chatwire/serve.hpp"

namespace chatwire::serve {

struct ServedModel {
  ModelConfig config;
  endpoint::Endpoint endpoint;
  // The tool-call id rule: config.tool_call_ids applied over what the probe measured.
  endpoint::CallIdStyle call_ids = endpoint::CallIdStyle::openai;
  // The capabilities /v1/models lists, from the probe profile (JSON object text).
  std::string capabilities_json;
  // Every name the template mentions (jinja::Template::names, sorted): a request field that is
  // no OpenAI parameter is a template variable only where the template may read it.
  std::vector<std::string> template_names;
  // config.json's max_position_embeddings, shown by /tokenize where max_model_len is not
  // configured; not enforced (rope scaling can extend it, as vLLM derives it).
  std::size_t position_embeddings = 0;
  std::int64_t loaded_at = 0;  // Unix seconds: /v1/models' `created` (as vLLM, its start)
};

struct LoadedModels {
  std::vector<std::unique_ptr<const ServedModel>> models;
  std::vector<std::string> failures;  // "name: reason", one per model not served

  const ServedModel* find(std::string_view name) const noexcept;
};

// The tool-call id style of a rule ("auto" = the probe's measurement).
endpoint::CallIdStyle call_id_style(std::string_view rule, endpoint::CallIdStyle measured) noexcept;

LoadedModels load_models(const Config& config);
Result<ServedModel> load_model(const ModelConfig& config);

}  // namespace chatwire::serve
