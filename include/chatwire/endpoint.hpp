// chatwire's Endpoint: one object per checkpoint directory that runs the whole path, from an
// OpenAI chat-completions request to prompt ids, and from generated ids back to OpenAI deltas
// and the final assistant message.
//
//   auto ep = chatwire::endpoint::Endpoint::load("path/to/checkpoint");   // once, shared
//   auto prompt = ep->prepare(request_json_text);                          // per request
//   // prompt->ids to the inference engine; stop at prompt->stop_ids / stop_strings
//   auto gen = ep->start(*prompt);
//   for (auto chunk : generated) for (auto& d : *gen->push(chunk)) send(d);  // OpenAI deltas
//   gen->finish();  gen->message();                                         // the final message
//
// load() reads the chat layer's templates and special tokens, tokenizer.json when present,
// generation_config.json (eos_token_id, an int or a list) for the stop ids, and probes the
// template once (or loads a cached profile, see profile_json()) and derives the output parser from
// the template's own renders, proven by the round trip (chatwire/readback.hpp; or a dialect by
// name). prepare() validates the request
// (errors name the field path), adapts it to what the template renders (driven by the probe's
// measurements, as adapt does), renders it through chat::render and tokenizes it as
// transformers does (add_special_tokens=False: the template writes its own BOS). A generation
// runs the streaming detokenizer and the incremental output parser.
//
// A loaded Endpoint is immutable and safe to use from many threads at once; a Generation
// belongs to one thread. Nothing here throws: failures are Error values. This header does not
// include nlohmann/json; JSON forms of these types are in chatwire/endpoint_json.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/chat.hpp"
#include "chatwire/error.hpp"
#include "chatwire/jinja.hpp"
#include "chatwire/tokenize.hpp"

namespace chatwire::probe {
struct Profile;
}

namespace chatwire::endpoint {

struct LoadOptions {
  jinja::CompileOptions compile;
  chat::InputLimits input;  // every file read (templates, configs, generation_config.json)
  tokenize::LoadOptions tokenizer;
  // Which of several named templates to serve; nullopt = the one transformers chooses when
  // tools are given (the one the probe measures). One Endpoint serves one template.
  std::optional<std::string> template_name;
  // The output parser by dialect name (parse::dialects()), overriding the parser derived from
  // the template (readback::choose_parser).
  std::string dialect;
  // A cached profile and parser (the texts of an earlier Endpoint's profile_json() and
  // parser_json()); empty = probe / derive now. They must come from the same template:
  // nothing here can tell.
  std::string profile_json;
  std::string parser_json;
  // The limits of each render the probe and the parser derivation make while loading (not
  // used with a cached profile and parser). nullopt = probe::probe_render_limits(), far above
  // what a real template needs for the sentinel conversations.
  std::optional<jinja::Limits> probe_limits;
};

struct PrepareOptions {
  // Overrides the request's add_generation_prompt / continue_final_message.
  std::optional<chat::Mode> mode;
  std::string now;               // strftime_now's clock, ISO 8601; empty = the real local time
  bool tokenize = true;          // fill Prompt::ids (needs tokenizer.json)
  bool assistant_mask = false;   // fill Prompt::assistant_masks (needs tokenizer.json)
  jinja::Limits limits;          // of the render
  std::string call_syntax;       // adapt::Options::call_syntax ("" = the template's own)
  std::size_t max_tools = 4096;  // tools in one request
};

// One change the adapter made to the request, and the probe measurement behind it.
struct Adaptation {
  std::string code;     // e.g. "arguments_to_dict", "short_call_ids", "system_into_user"
  std::string finding;  // e.g. "conventions.arguments_string: error (TypeError: ...)"
  std::string detail;   // what was changed, with request field paths
};

// How a generation's tool-call ids are made, measured on the template.
enum class CallIdStyle : unsigned char {
  openai,  // "call_" + 24 random alphanumerics
  short9,  // 9 random alphanumerics: the template rejects OpenAI-style ids and takes these
};

// tool_choice "required" or a named function (the request's `tool_choice`), served the way vLLM
// serves them: the engine constrains the generation to Prompt::constraint_schema, and the
// Generation reads that JSON as the calls instead of the template's own call syntax.
enum class ForcedCalls : unsigned char {
  none,      // "auto" (or no tool_choice): the template's own parser decides
  named,     // {"type": "function", "function": {"name": ...}}: the output is its arguments
  required,  // a JSON list of {"name", "parameters"} objects, at least one
};

struct Prompt {
  std::string text;                               // the rendered prompt
  std::vector<std::uint32_t> ids;                 // its tokens (empty without a tokenizer)
  std::vector<std::uint8_t> assistant_masks;      // with PrepareOptions::assistant_mask
  std::vector<jinja::GenerationSpan> generation;  // the {% generation %} spans
  std::vector<Adaptation> adaptations;
  std::vector<std::string> warnings;
  // Where generation stops: generation_config.json's eos_token_id (or the tokenizer's EOS when
  // there is none) and the template's end-of-turn marker (the probe's frame) when it is one
  // token; the same as text, for engines that stop on strings. An engine that stops at the ids
  // needs only the strings Endpoint::stops_by_id says no id covers: engine_stop_strings.
  std::vector<std::uint32_t> stop_ids;
  std::vector<std::string> stop_strings;
  // Those of stop_strings that are no stop id's token: what to send, besides stop_ids, to an
  // engine that stops at ids. The rest would also cut where the model writes the same text in
  // other tokens (code quoting "<|im_end|>").
  std::vector<std::string> engine_stop_strings;
  // The parser state the prompt implies.
  bool reasoning_prefilled = false;     // the prompt ends inside an opened reasoning block
  std::optional<bool> enable_thinking;  // the request's enable_thinking (false: no reasoning)
  // The engine constrains the output (response_format's JSON): it holds either a reasoning block
  // first (vLLM and SGLang with a reasoning parser apply the grammar after the block's close) or
  // none (an engine constraining from the first token). Read either way: a close before any
  // other marker ends reasoning, and output without one is content. Set by prepare where the
  // request's response_format asks for JSON (json_object, json_schema).
  bool output_constrained = false;
  std::string dialect;  // the output parser: a dialect or "derived"; "" = content only
  // The prompt teaches the model a call syntax the template does not write (the adapter's
  // taught_call_syntax, e.g. tools for Gemma 3): its calls are read with this dialect, inside
  // the template's own reasoning and framing ("" = the template's own parser).
  std::string taught_dialect;
  bool tool_calls_read_back = false;  // false: calls this template renders are served as content
  CallIdStyle call_ids = CallIdStyle::openai;
  std::string tools_json;  // the request's tools as JSON text ("" = none), for the parser
  ForcedCalls forced_calls = ForcedCalls::none;
  std::string forced_name;  // ForcedCalls::named: the function
  // The JSON schema (text) the engine must constrain the generation to when forced_calls is
  // not none (vLLM's: named, the function's parameters; required, a list of at least one
  // {"name": one of the tools, "parameters": its schema}, at most one with max_tool_calls 1).
  // An engine that cannot constrain output cannot serve such a request.
  std::string constraint_schema;
  // parallel_tool_calls false: 1, the generation ends where a second call begins (its text is
  // not part of the message); 0 = no limit.
  std::size_t max_tool_calls = 0;
  // tool_choice "none": the output is read without tool calls (parse::Syntax::without_calls),
  // so a call the model writes anyway is the content it wrote, as vLLM returns it; where the
  // format's calls are its messages (Harmony), they are still read.
  bool tool_calls_allowed = true;
};

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text
};

struct Message {                  // the final assistant message
  std::string content;            // "" = none
  std::string reasoning_content;  // "" = none
  std::vector<ToolCall> tool_calls;
};

// Whether the message has calls and every one is whole: its arguments a JSON object ("" counts as
// "{}"). A call the output cut off, or whose arguments the model wrote malformed, is kept as
// written (nothing is dropped) but is not one a client can run: its finish reason is not
// "tool_calls".
bool calls_are_whole(const Message& message);
// One call's arguments text is whole: a JSON object, or "" (no arguments).
bool arguments_are_whole(std::string_view arguments);

struct ToolCallDelta {
  std::size_t index = 0;  // the call's position in this response
  std::string id;         // on the call's first delta only
  std::string name;       // on the call's first delta only
  std::string arguments;  // a fragment
};

struct Delta {  // one OpenAI streaming delta
  std::string content;
  std::string reasoning_content;
  std::vector<ToolCallDelta> tool_calls;
};

// What the parser decided about malformed output (text is never dropped) or why the
// generation stopped.
struct Warning {
  std::string code;
  std::string message;
  std::size_t offset = 0;
};

// One response being generated: push what the model generates, get OpenAI deltas back. The
// concatenated deltas equal message() whatever the chunking. A stop id or stop string ends the
// generation (it is not part of the message); input after it is ignored.
class Generation {
 public:
  Generation(Generation&&) noexcept;
  Generation& operator=(Generation&&) noexcept;
  ~Generation();

  // Generated token ids (decoded by the streaming detokenizer). Error: an unknown id, or no
  // tokenizer.
  Result<std::vector<Delta>> push(std::span<const std::uint32_t> ids);
  // Generated text, for engines that return text.
  Result<std::vector<Delta>> push_text(std::string_view text);
  // Ends the generation: flushes what the detokenizer and the parser held back.
  Result<std::vector<Delta>> finish();

  const Message& message() const;  // complete after finish()
  std::vector<Warning> warnings() const;
  bool stopped() const;  // a stop id or stop string was generated, or the call limit reached
  // Prompt::max_tool_calls reached: a further call began and the generation ended there (the
  // engine can stop generating).
  bool call_limit_reached() const;
  // "tool_calls" when the message's calls are whole (calls_are_whole), else "stop" when stopped,
  // else "length".
  std::string_view finish_reason() const;
  // The pushed ids inside reasoning blocks, counted as vLLM's reasoning parsers count them
  // (OpenAI's usage reasoning_tokens): from after a run of the opener's ids (from the start where
  // the prompt opened the block) up to the next run of the close's first marker's ids (or the
  // end), markers excluded; every block (gpt-oss writes an analysis message before each call). 0
  // where the message has no reasoning (an empty block is none) or only text was pushed.
  std::size_t reasoning_tokens() const;

  struct Impl;

 private:
  friend class Endpoint;
  explicit Generation(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct EndpointAccess;  // the library's own access to the loaded state (endpoint/internal.hpp)

class Endpoint {
 public:
  static Result<Endpoint> load(const std::filesystem::path& dir, const LoadOptions& options = {});

  // `openai_request` is the JSON text of a chat-completions request. Errors: RequestError
  // (with the field path), CannotRepresent (the template cannot carry a piece of it), the
  // template's own errors, LimitError.
  Result<Prompt> prepare(std::string_view openai_request, const PrepareOptions& options = {}) const;
  Result<Generation> start(const Prompt& prompt) const;

  const chat::Model& model() const noexcept;
  const jinja::Template& chat_template() const noexcept;  // the one template served
  const tokenize::Tokenizer* tokenizer() const noexcept;  // nullptr without tokenizer.json
  const probe::Profile& profile() const noexcept;         // include chatwire/probe.hpp
  std::string profile_json() const;                       // to cache: LoadOptions::profile_json
  // The output parser: derived from the template's own renders and proven by the round trip
  // (readback::choose_parser), or named by LoadOptions::dialect.
  std::string_view dialect() const noexcept;   // a dialect name or "derived"; "" = plain content
  bool tool_calls_read_back() const noexcept;  // false: calls are served as content (warnings())
  std::string parser_json() const;             // to cache: LoadOptions::parser_json
  CallIdStyle call_ids() const noexcept;
  std::span<const std::uint32_t> stop_ids() const noexcept;
  std::span<const std::string> stop_strings() const noexcept;
  // True when `text` is the token of one of `prompt.stop_ids`. An engine that stops at those ids
  // should not also get `text` as a stop string: a model can write the same characters in other
  // tokens (code that quotes "<|im_end|>"), and that is not the end of its turn. Generation::push
  // matches such a string by its id only; push_text, which has no ids, by the text.
  bool stops_by_id(const Prompt& prompt, std::string_view text) const;
  const std::vector<std::string>& warnings() const noexcept;  // found while loading

  struct Impl;

 private:
  explicit Endpoint(std::shared_ptr<const Impl> impl);
  friend struct EndpointAccess;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace chatwire::endpoint
