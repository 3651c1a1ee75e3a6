// Model output -> OpenAI assistant message: reasoning, content and tool calls, for a complete
// output (parse) or a stream of chunks (StreamParser, producing OpenAI streaming deltas).
//
// Every model family's syntax is one row of the dialect table (src/parse/dialects.cpp). One
// engine runs all of them: it holds back only a suffix that could still become a marker, lexes
// JSON incrementally, and never re-scans what it has already decided, so the work is linear in
// the output length and the result does not depend on how the output was chunked: parse(text)
// is literally a StreamParser fed one chunk.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"

// JSON forms (nlohmann) of these types, and tools given as a nlohmann array:
// chatwire/parse_json.hpp.

namespace chatwire::parse {

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // a JSON text (normally an object); "{}" for zero-argument calls
};

struct Message {
  std::string content;            // "" = none (printed as null)
  std::string reasoning_content;  // "" = none (omitted)
  std::vector<ToolCall> tool_calls;
};

// Something the parser had to decide about malformed or truncated output. Text is never dropped
// silently: what cannot be a call stays content, and the warning says why and where (byte
// offset); a call to an undeclared function that is not returned (Options::forward_unknown_tools)
// is carried whole by its "unknown_tool" warning.
struct Warning {
  std::string code;  // e.g. "unterminated_call", "invalid_arguments", "not_a_call"
  std::string message;
  std::size_t offset = 0;
};

struct Options {
  // The prompt already opened the reasoning block (generation prompt ends inside <think>).
  bool reasoning_prefilled = false;
  // Thinking requested (true: output starts in reasoning even without an opening tag, as vLLM's
  // reasoning parsers assume), disabled (false: output starts as content), or unknown (nullopt:
  // the dialect's default).
  std::optional<bool> enable_thinking;
  // The reasoning block goes to reasoning_content. false: it stays in the content as written,
  // markers included, as a server without a reasoning parser returns it (vLLM without
  // --reasoning-parser, SGLang's separate_reasoning=false); it is still read as a block, so a call
  // the model writes inside it is text, as vLLM's think-aware tool parsers keep it. Harmony's
  // analysis channel is not a marked block and stays reasoning.
  bool separate_reasoning = true;
  // Generated ids are id_prefix + the call's index in this response ("call_0", "call_1", ...);
  // native ids (Kimi "functions.x:0", Mistral 9-character ids, Command-R ids) are kept.
  std::string id_prefix = "call_";
  // Limits for untrusted output. Exceeding one never loses text: the excess stays content and a
  // warning names the limit.
  std::size_t max_output_bytes = std::size_t{256} << 20;  // input accepted in total
  std::size_t max_held_bytes = std::size_t{16} << 20;     // a call held back before deciding
  std::size_t max_tool_calls = 4096;                      // calls per response
  std::size_t max_json_depth = 512;                       // nesting inside one argument value
  // Arguments up to this size are fully validated as JSON (a warning when not); larger ones are
  // checked structurally only, so a long file argument costs one pass.
  std::size_t max_validated_argument_bytes = std::size_t{64} << 10;
  // For callers who prefer a refusal to content: a malformed call (broken JSON, a call cut off
  // at the end, a missing marker, a call marker not followed by a call, ...) makes parse() an
  // error (type "ParseError", path "output") naming the byte offset and the syntax family, and
  // StreamParser::failure() says the same. Off: the text stays content with a Warning.
  bool strict = false;
  // A call to a function the request's tools do not declare: returned like any call (true), or
  // not returned (false) and reported whole, name and arguments, in an "unknown_tool" warning,
  // never silently. nullopt: the dialect's default, its reference parser's behaviour (dialect
  // column drops_unknown_tools: SGLang's detectors drop such calls, its
  // SGLANG_FORWARD_UNKNOWN_TOOLS=false default, as vLLM's internlm2 parser does; vLLM's
  // glm4_moe and qwen3_coder parsers return them). Without tools (none given, or none named)
  // every call is returned.
  std::optional<bool> forward_unknown_tools;
};

// Whether a warning code means a malformed call (what Options::strict refuses).
bool is_malformed_call(std::string_view warning_code) noexcept;

struct ToolCallDelta {
  std::size_t index = 0;  // position of the call in this response
  std::string id;         // set on the call's first delta only
  std::string name;       // set on the call's first delta only
  std::string arguments;  // a fragment; the fragments of one call concatenate to its arguments
};

// One OpenAI streaming delta: content and reasoning fragments, or tool-call fragments.
struct Delta {
  std::string content;
  std::string reasoning_content;
  std::vector<ToolCallDelta> tool_calls;
};

struct ParseResult {
  Message message;
  std::vector<Warning> warnings;
};

// The dialect registry: names accepted by parse()/StreamParser, in table order.
struct DialectInfo {
  std::string_view name;
  std::string_view summary;  // families and markers, one line
};
const std::vector<DialectInfo>& dialects();
bool has_dialect(std::string_view name);

struct ToolsData;  // src/parse/internal.hpp: the tools array, read once

// The request's tools (the OpenAI `tools` array), read once and shared by every parse of a
// request: XML and pythonic arguments are typed by their parameter schemas, and a header call
// that names no function is attributed by its argument keys. Default: no tools.
class Tools {
 public:
  Tools() = default;
  // `json_text` is a JSON array of tool definitions (or null = none), nested at most
  // `max_json_depth` deep. Errors: ValueError with field "tools" for text that is not JSON, too
  // deep, or not an array.
  static Result<Tools> from_json_text(std::string_view json_text, std::size_t max_json_depth = 512);

  bool empty() const noexcept;
  std::size_t size() const noexcept;

  explicit Tools(std::shared_ptr<const ToolsData> data) : data_(std::move(data)) {}
  const ToolsData* data() const noexcept { return data_.get(); }

 private:
  std::shared_ptr<const ToolsData> data_;
};

struct SyntaxData;  // src/parse/internal.hpp: a dialect description and the strings it owns

// A parser description: a row of the dialect table (Syntax::named) or one derived from a
// template's own renders (chatwire/readback.hpp). Immutable and cheap to copy (shared).
class Syntax {
 public:
  static Result<Syntax> named(std::string_view dialect);
  // The JSON text to_json_text() writes (chatwire/parse_json.hpp: the nlohmann forms); errors
  // name the field.
  static Result<Syntax> from_json_text(std::string_view json_text,
                                       std::size_t max_json_depth = 512);

  // The calls of `calls` inside the text framing of `text` (its reasoning markers, answer
  // opener and dropped tokens): the parser for a template that writes no calls of its own when
  // the prompt teaches the model a call syntax (adapt's calls_as_text, definitions_into_system).
  static Syntax with_calls(const Syntax& text, const Syntax& calls);
  // `text` reading no calls: its reasoning, answer framing and turn ends, call markup left as
  // the content the model wrote (tool_choice "none", as vLLM runs no tool parser then). nullopt
  // where calls are messages of the format itself (Harmony's, Glimmer's recipients), whose
  // reading the reasoning depends on.
  static std::optional<Syntax> without_calls(const Syntax& text);

  const std::string& name() const noexcept;     // the table row, or "derived"
  const std::string& summary() const noexcept;  // family and markers, one line
  std::string_view family() const noexcept;     // "json", "header_json", "xml", "pythonic", ...
  bool has_tool_calls() const noexcept;
  bool has_reasoning() const noexcept;
  // Every field that differs from an empty dialect: {"name", "family", "think_open", ...};
  // indent < 0 = one line.
  std::string to_json_text(int indent = -1) const;

  explicit Syntax(std::shared_ptr<const SyntaxData> data) : data_(std::move(data)) {}
  const SyntaxData& data() const noexcept { return *data_; }
  const std::shared_ptr<const SyntaxData>& shared() const noexcept { return data_; }

 private:
  std::shared_ptr<const SyntaxData> data_;
};

// One-shot parse. Errors only for an unknown dialect; malformed model output is never an error
// (see Warning).
Result<ParseResult> parse(std::string_view text, std::string_view dialect, const Tools& tools = {},
                          const Options& options = {});
Result<ParseResult> parse(std::string_view text, const Syntax& syntax, const Tools& tools = {},
                          const Options& options = {});

class Engine;

// Incremental parser for one response. feed() returns the deltas that became certain; finish()
// flushes what was held back. The concatenation of all deltas equals parse(full text).
class StreamParser {
 public:
  static Result<StreamParser> create(std::string_view dialect, const Tools& tools = {},
                                     const Options& options = {});
  static Result<StreamParser> create(const Syntax& syntax, const Tools& tools = {},
                                     const Options& options = {});
  StreamParser(StreamParser&&) noexcept;
  StreamParser& operator=(StreamParser&&) noexcept;
  ~StreamParser();

  std::vector<Delta> feed(std::string_view chunk);
  std::vector<Delta> finish();
  // The message assembled so far (complete after finish()) and the warnings so far.
  const Message& message() const;
  const std::vector<Warning>& warnings() const;
  // With Options::strict: the first malformed call so far, as the error parse() would return.
  std::optional<Error> failure() const;

 private:
  explicit StreamParser(std::unique_ptr<Engine> engine);
  std::unique_ptr<Engine> engine_;
};

// The OpenAI JSON text of a message ({role, content, reasoning_content?, tool_calls?}) and of
// a delta ({content?, reasoning_content?, tool_calls?}), one line.
std::string message_to_json_text(const Message& message);
std::string delta_to_json_text(const Delta& delta);

}  // namespace chatwire::parse
