// transformers' response templates (`response_template` in tokenizer_config.json): a region spec
// that turns model output into a message dict, the way `tokenizer.parse_response` and the
// streaming `ResponseParser` of transformers do. A Template is loaded from the spec (untrusted:
// every key is checked and errors name its path); a Parser is fed the output whole or in chunks
// and gives region events and, at finalize, the message. Values are JSON as Python would hold
// them: dicts keep insertion order, ints stay ints, floats stay floats.
//
// The whole API is JSON values (transformers hands back dicts), so it is a *_json.hpp header:
// the base headers stay free of nlohmann/json (tests/CMakeLists.txt checks that).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"

namespace chatwire::response {

using Json = nlohmann::ordered_json;

// Every bound on untrusted input (the spec, the model output, the values parsed from it).
struct Limits {
  std::size_t max_spec_bytes = std::size_t{1} << 20;      // spec JSON text / file
  std::size_t max_config_bytes = std::size_t{64} << 20;   // a model's tokenizer_config.json
  std::size_t max_json_depth = 512;                       // spec and JSON values in regions
  std::size_t max_fields = 256;                           // fields in one template
  std::size_t max_literals = 256;                         // literals in one open/close list
  std::size_t max_pattern_bytes = 16384;                  // one regex, before translation
  std::size_t max_output_bytes = std::size_t{256} << 20;  // prefix + everything fed
  std::uint32_t regex_match_limit = 10'000'000;           // PCRE2 match limit per search
  // PCRE2's backtracking depth per search: at least this, and at least twice the bytes searched,
  // since a repeated group keeps one backtracking frame per repetition (`(?:(?!</h>).)*` over
  // 150,000 characters needs 150,000; Python's re has no such bound). Memory is bounded by
  // regex_heap_limit_kib.
  std::uint32_t regex_depth_limit = 100'000;
  std::uint32_t regex_heap_limit_kib = 256 * 1024;  // PCRE2's heap for one search (256 MiB)
};

// One streaming event, as transformers' ResponseParser yields them (dicts with a "type").
struct Event {
  enum class Kind { kOpen, kChunk, kClose };
  Kind kind = Kind::kOpen;
  std::string field;
  std::string text;    // kChunk: the region bytes this event adds
  bool dirty = false;  // kChunk: the field's parser is structured (json, xml-inline, kv-lines)
  Json value;          // kClose: the parsed, transformed (and tool-cast) value
};
// {"type": "region_open"|"region_chunk"|"region_close", "field", "text"?, "dirty"?, "value"?}
Json to_json(const Event& event);

class Template {
 public:
  // The spec as JSON (a dict). ValueError naming the key path for anything transformers
  // rejects at load time, and for regex constructs whose Python semantics PCRE2 cannot give.
  static Result<Template> from_json(const Json& spec, const Limits& limits = {});
  static Result<Template> from_json_text(std::string_view text, const Limits& limits = {});
  // A file holding the spec itself (or a tokenizer_config.json, whose key is used).
  static Result<Template> from_file(const std::string& path, const Limits& limits = {});
  // The model directory's tokenizer_config.json "response_template" (transformers reads it
  // there). LookupError when the directory's config has none.
  static Result<Template> from_model_dir(const std::string& dir, const Limits& limits = {});

  const Json& spec() const;
  const Limits& limits() const;

  struct Impl;
  std::shared_ptr<const Impl> impl;
};

struct Finished {
  Json message;               // defaults, then each captured field in close order
  std::vector<Event> events;  // the events of finalize itself
};

// transformers.utils.chat_parsing.ResponseParser: one parser per sequence.
class Parser {
 public:
  // `prefix` is the prompt sent before generation (nullopt = ValueError, as transformers requires
  // it; "" opts out). It is cut past the last start anchor and run through the parser, so a
  // prompt that pre-opens `<think>` starts the parser inside thinking. `tools` is the request's
  // tools array (or null): tool-call arguments given as strings are cast by their schema.
  static Result<Parser> create(const Template& tmpl, std::optional<std::string_view> prefix,
                               const Json& tools = nullptr);
  const std::vector<Event>& initial_events() const;
  // Any byte chunking; a UTF-8 sequence split across chunks is held until complete.
  Result<std::vector<Event>> feed(std::string_view text);
  Result<Finished> finalize();  // once; feed/finalize afterwards: RuntimeError

  Parser(Parser&&) noexcept;
  Parser& operator=(Parser&&) noexcept;
  ~Parser();

  struct State;

 private:
  explicit Parser(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// transformers.utils.chat_parsing.parse_response: the whole text in one feed.
Result<Json> parse_response(std::string_view text, const Template& tmpl,
                            std::optional<std::string_view> prefix, const Json& tools = nullptr);

}  // namespace chatwire::response
