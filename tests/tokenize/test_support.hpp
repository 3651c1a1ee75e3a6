// Shared helpers of the tokenize tests: where the tokenizers are and loading them once.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "chatwire/tokenize.hpp"

namespace chatwire::tokenize::testing {

inline std::string data_dir() {
  return CHATWIRE_DATA_DIR;
}

// data/tokenizers/<name>, or data/tokenizers/fetched/<name> (scripts/fetch-tokenizers, run by
// `make test`); empty if absent, which the tests report as a failure.
inline std::string tokenizer_dir(const std::string& name) {
  for (const std::string& base :
       {data_dir() + "/tokenizers/", data_dir() + "/tokenizers/fetched/"}) {
    if (std::filesystem::exists(base + name + "/tokenizer.json")) return base + name;
  }
  return {};
}

// Loaded once per process (Gemma 3 is large).
inline const Tokenizer* shared_tokenizer(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::optional<Tokenizer>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(name);
  if (it == cache.end()) {
    std::optional<Tokenizer> t;
    std::string dir = tokenizer_dir(name);
    if (!dir.empty()) {
      auto r = Tokenizer::load_dir(dir);
      if (r)
        t = std::move(*r);
      else
        ADD_FAILURE() << r.error().to_string();
    }
    it = cache.emplace(name, std::move(t)).first;
  }
  return it->second ? &*it->second : nullptr;
}

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_text_file(path));
}

}  // namespace chatwire::tokenize::testing
