// The Endpoint's loaded state, shared by endpoint.cpp and endpoint_json.cpp.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "chatwire/endpoint.hpp"
#include "chatwire/probe.hpp"

namespace chatwire::endpoint {

struct Endpoint::Impl {
  std::optional<chat::Model> model;
  std::shared_ptr<const jinja::Template> tmpl;  // the one template served
  std::optional<tokenize::Tokenizer> tokenizer;
  probe::Profile profile;
  std::string dialect;  // "" = content only
  CallIdStyle call_ids = CallIdStyle::openai;
  std::vector<std::uint32_t> stop_ids;
  std::vector<std::string> stop_strings;
  std::optional<std::string> end_marker;  // the template's end-of-turn marker, measured
  std::string open_marker;  // opens reasoning ("" = unknown): reasoning_open_marker()
  std::vector<std::string> warnings;
  chat::InputLimits input;
};

// prepare() on a parsed request.
Result<Prompt> prepare_json(const Endpoint::Impl& impl, const nlohmann::ordered_json& request,
                            const PrepareOptions& options);

// The interim parser choice and the reasoning marker (see endpoint.cpp).
std::string measured_dialect(const probe::Profile& profile);
std::string reasoning_open_marker(const probe::Profile& profile);

}  // namespace chatwire::endpoint
