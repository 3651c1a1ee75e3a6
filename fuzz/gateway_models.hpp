// The gateway fuzz targets' models: the six checkpoint directories the gateway's tests serve
// (data/models/endpoint, found through CHATWIRE_DATA_DIR, which scripts/fuzz sets), each with its
// own template, tokenizer and output parser, DeepSeek-R1's dialect named as the serve tests
// configure it. Loaded once per process (a load probes the template).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "serve/models.hpp"

namespace chatwire::fuzz {

struct TestModel {
  const char* name;
  const char* dialect;
};
inline constexpr TestModel kModels[] = {{"qwen3", ""},        {"llama3_1", ""},
                                        {"mistral-v0.3", ""}, {"gpt-oss", ""},
                                        {"gemma3", ""},       {"deepseek-r1", "deepseek_r1"}};
inline constexpr std::size_t kModelCount = sizeof kModels / sizeof kModels[0];
inline constexpr serve::BackendApi kApis[] = {serve::BackendApi::llama_cpp,
                                              serve::BackendApi::openai, serve::BackendApi::sglang};

// The six models' configurations (behind a backend that is never called).
inline const std::vector<serve::ModelConfig>& model_configs() {
  static const auto* configs = [] {
    const char* data = std::getenv("CHATWIRE_DATA_DIR");
    auto* out = new std::vector<serve::ModelConfig>();
    for (const auto& model : kModels) {
      serve::ModelConfig config;
      config.name = model.name;
      config.dir = std::string(data ? data : "data") + "/models/endpoint/" + model.name;
      config.backend_url = "http://127.0.0.1:9";
      config.dialect = model.dialect;
      out->push_back(std::move(config));
    }
    return out;
  }();
  return *configs;
}

// All six models, each served under backend API `api`.
inline const serve::LoadedModels& models_under(serve::BackendApi api) {
  static const auto* all = [] {
    std::vector<serve::ServedModel> loaded;
    for (const auto& config : model_configs()) {
      auto model = serve::load_model(config);
      if (!model) std::abort();  // the fuzz run cannot start without its models
      loaded.push_back(std::move(*model));
    }
    auto* out = new std::vector<serve::LoadedModels>();
    for (auto a : kApis) {
      serve::LoadedModels under;
      for (const auto& model : loaded) {
        auto copy = std::make_unique<serve::ServedModel>(model);
        copy->config.backend_api = a;
        under.models.push_back(std::move(copy));
      }
      out->push_back(std::move(under));
    }
    return out;
  }();
  return (*all)[static_cast<std::size_t>(api)];
}

}  // namespace chatwire::fuzz
