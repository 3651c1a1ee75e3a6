// One Endpoint per model directory of data/models/endpoint/ (and named dialect), loaded once
// for the whole test binary and shared, as a server shares it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "chatwire/endpoint.hpp"

inline const chatwire::endpoint::Endpoint& shared_endpoint(const std::string& model,
                                                           const std::string& dialect = "") {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<chatwire::endpoint::Endpoint>> loaded;
  std::lock_guard lock(mutex);
  auto& slot = loaded[model + "/" + dialect];
  if (!slot) {
    chatwire::endpoint::LoadOptions options;
    options.dialect = dialect;
    auto e = chatwire::endpoint::Endpoint::load(
        std::filesystem::path(CHATWIRE_DATA_DIR) / "models" / "endpoint" / model, options);
    if (!e) {
      ADD_FAILURE() << model << ": " << e.error().to_string();
      std::abort();
    }
    slot = std::make_unique<chatwire::endpoint::Endpoint>(std::move(*e));
  }
  return *slot;
}
