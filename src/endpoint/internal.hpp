// The Endpoint's loaded state, shared by endpoint.cpp and endpoint_json.cpp.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "chatwire/endpoint.hpp"
#include "chatwire/parse_json.hpp"
#include "chatwire/probe_json.hpp"

namespace chatwire::endpoint {

// The output parser the Endpoint runs, and why.
struct ParserChoice {
  std::optional<parse::Syntax> syntax;  // nullopt: plain content
  bool calls_read_back = false;         // proven on the round trip (or named by the caller)
  std::string verdict;                  // readback's verdict, or how it was chosen
  std::string warning;                  // set when calls are rendered but cannot be read back
};

struct Endpoint::Impl {
  std::optional<chat::Model> model;
  std::shared_ptr<const jinja::Template> tmpl;  // the one template served
  std::optional<tokenize::Tokenizer> tokenizer;
  probe::Profile profile;
  ParserChoice parser;
  CallIdStyle call_ids = CallIdStyle::openai;
  std::vector<std::uint32_t> stop_ids;
  std::vector<std::string> stop_strings;
  std::optional<std::string> end_marker;  // the template's end-of-turn marker, measured
  std::string open_marker;                // opens reasoning ("" = unknown): reasoning_open_marker()
  std::vector<std::string> warnings;
  chat::InputLimits input;
};

struct EndpointAccess {
  static const Endpoint::Impl& impl(const Endpoint& endpoint) { return *endpoint.impl_; }
};

// prepare() on a parsed request.
Result<Prompt> prepare_json(const Endpoint::Impl& impl, const nlohmann::ordered_json& request,
                            const PrepareOptions& options);

// The request's tool_choice and parallel_tool_calls into prompt.forced_calls, forced_name,
// constraint_schema and max_tool_calls (forced_calls.cpp). Errors: RequestError with the path.
Status read_tool_choice(const nlohmann::ordered_json& request, Prompt& prompt);

// The parser choice, its JSON form (Endpoint::parser_json) and the reasoning marker.
Status choose_parser(Endpoint::Impl& impl, const LoadOptions& options);
nlohmann::ordered_json parser_to_json(const ParserChoice& parser);
Result<ParserChoice> parser_from_json(const nlohmann::ordered_json& json);
std::string reasoning_open_marker(const probe::Profile& profile);

}  // namespace chatwire::endpoint
