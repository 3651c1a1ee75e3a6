// chatwire's probe: measures what one chat template really keeps, drops and rejects by
// rendering a fixed conversation full of unique sentinel strings and looking for them in
// the output. First a baseline combination of input conventions is searched (the one that
// keeps the most sentinels), then each convention is flipped alone. The result, a Profile,
// is what the adapter (request -> template variables) and the output-parser choice read.
//
//   auto profile = chatwire::probe::probe_file("template.jinja");      // or probe_model(dir)
//   if (profile && !profile->tool_calls.rendered) ...                  // e.g. calls dropped
//   std::cout << profile->to_json_text(1);
//
// The probe is measurement, never a lookup table: nothing in it is keyed on a template's
// name or hash. scripts/probe-oracle.py runs the same algorithm through the reference
// renderer; tests/probe/ compares the two on every bundled template.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatwire/error.hpp"
#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"

namespace chatwire::probe {

inline constexpr int kProfileVersion = 1;

// The sentinel values inside the measured call syntax (ToolCalls::example) and tool
// definitions (Tools::definitions_block), so a caller can substitute real ones: e.g. the
// adapter writes a call in the template's own syntax by replacing these in the example.
namespace sentinel {
inline constexpr std::string_view kFunctionName = "get_zxweather";
inline constexpr std::string_view kArgumentKey = "zxcity";
inline constexpr std::string_view kArgumentValue = "ZXCITYXZ";
inline constexpr std::string_view kLongCallId = "call_ZXLONGID0123456789abcdef";  // OpenAI style
inline constexpr std::string_view kShortCallId = "ZXCALLID9";                     // 9 alphanumerics
inline constexpr std::string_view kToolDescription = "ZXTOOLDESCXZ";
inline constexpr std::string_view kResult = "ZXRESULTXZ";
}  // namespace sentinel

// How a template takes one input convention, measured by flipping it alone from the baseline.
enum class Status : unsigned char {
  ok,     // renders and keeps every sentinel the baseline keeps
  error,  // raises (message in Convention::error)
  lossy,  // renders but loses a sentinel the baseline keeps (names in Convention::lost)
};
std::string_view status_name(Status status) noexcept;  // "ok", "error", "lossy"

// One row of the probe-axis table: an input convention a caller can choose.
struct Convention {
  std::string key;    // "arguments_dict", "arguments_string", "long_call_id", "flat_tools", ...
  std::string axis;   // "arguments", "call_id", "tools", "content", "call_content"
  std::string value;  // "dict", "string", "long", "short", "nested", "flat", ...
  Status status = Status::error;
  std::string error;              // "TypeError: ..." when status is error
  std::vector<std::string> lost;  // sentinel names when status is lossy
};

struct Baseline {
  // The conversation shape that rendered: "full", "no_system", "no_tool_messages",
  // "no_system_no_tool_messages"; empty when nothing rendered.
  std::string conversation;
  std::vector<std::pair<std::string, std::string>> conventions;  // axis -> value chosen
  std::vector<std::string> kept, lost;                           // sentinel names
  std::string error;                    // why nothing rendered (when conversation is empty)
  std::string full_conversation_error;  // why the full tool conversation did not render
};

struct Tools {
  bool definitions_rendered = false;
  // "system", "developer", "user", "own_turn", "own_section", "not_rendered"
  std::string definitions_location = "not_rendered";
  // The text the definitions add to the prompt (the template's own tool instructions).
  std::optional<std::string> definitions_block;
  // The template's error when a parameter has no description (nullopt: it renders without).
  std::optional<std::string> parameter_description_required;
};

struct ToolCalls {
  bool rendered = false;
  std::optional<std::string> example;  // the call exactly as rendered (sentinel values)
  bool id_rendered = false;            // the call id appears in the prompt
};

struct ToolResults {
  bool rendered = false;
  // The role word of the header the result is rendered under ("tool", "user", "ipython",
  // "observation", "system", "functions.{name}", ...), "section" for a dedicated block
  // without a role header; nullopt when not rendered.
  std::optional<std::string> role;
  std::optional<std::string> header;  // that header verbatim ({name} = the function name)
};

struct Reasoning {
  bool history_kept = false;  // a past turn's reasoning is rendered
  // "tags", "channel", "content" (taken from content), "prompt" (only the generation prompt
  // opens it, with a known opener), "none"
  std::string style = "none";
  std::optional<std::string> field;        // "reasoning_content" or "thinking": which one renders
  std::optional<std::string> open, close;  // the markers around the current turn's reasoning
  bool prompt_opens = false;               // the generation prompt already opens reasoning
};

struct Frame {
  std::optional<std::string> generation_prompt;
  std::optional<std::string> assistant_prefix;  // of an assistant turn in history
  std::optional<std::string> assistant_suffix;
  std::optional<std::string> user_prefix;
  std::optional<std::string> user_suffix;
  std::string family = "unknown";  // "ChatML", "Llama 3", "Harmony", "Mistral", "Gemma", ...
  std::string error;               // why a plain user turn did not render
};

// continue_final_message (prefill): whether the final assistant message is left open.
struct Prefill {
  bool supported = false;                  // it renders and ends with the message's text
  std::optional<std::string> prefix;       // what precedes the text after the user's question
  bool matches_generation_prompt = false;  // prefix ends with the generation prompt
  std::optional<std::string> error;        // the template's error
};

// Assistant masks: transformers' return_assistant_tokens_mask reads {% generation %} blocks;
// measured on a training render (no generation prompt) of user, assistant, user, assistant
// (with reasoning), and of the baseline tool conversation.
struct AssistantMasks {
  bool generation_blocks = false;       // the training render records generation spans
  std::optional<bool> content_covered;  // both answers lie inside spans (nullopt: no blocks)
  std::optional<bool> only_assistant;   // no user, system or tool-result text inside a span
  // What the spans leave out although it is rendered: "content", "reasoning", "tool_calls",
  // "end_of_turn" (the assistant suffix after the final answer).
  std::vector<std::string> missed;
  std::vector<std::string> includes;  // covered beyond the content: "header"
  std::vector<std::string> masked;    // the spans' text in the plain training render
};

// One value a candidate variable was set to, and what the prompt did.
struct ControlValue {
  std::optional<std::string> error;  // the template raised
  bool changed = false;              // the rendering differs from the variable left unset
  std::string prompt;                // reasoning state after the last question: open/closed/none
  bool past_reasoning = false;       // a past turn's reasoning is rendered
};
struct ThinkingControl {
  std::string name;                                    // the template variable
  ControlValue true_value, false_value, string_value;  // set to true, false, "ZXVALUEXZ"
};
// Which template variables change the rendering (candidates: the template's own variable
// names, set to true, false and a sentinel string one at a time) and what each does to reasoning.
struct ThinkingControls {
  std::vector<std::string> candidates;  // the names flipped (Template::names() minus the
                                        // renderer's own variables and the globals)
  std::optional<std::string> prompt;    // with no variable set; nullopt: nothing rendered
  std::optional<bool> past_reasoning;
  std::vector<ThinkingControl> controls;  // variables that change the reasoning state
  // Variables that change the rendering otherwise, and where the first change is: "preamble"
  // (before the first question), "history", "prompt" (after the last question), "raises".
  std::vector<std::pair<std::string, std::string>> other_variables;
};

// Documents (RAG): `documents` = [{title, text}] with a user question.
struct Documents {
  bool rendered = false;  // the text is in the prompt
  bool title_rendered = false;
  std::string location = "not_rendered";  // as Tools::definitions_location
  std::optional<std::string> block;       // the text the documents add
  std::optional<std::string> error;       // the template raised with documents
};

// One content part type between two text parts of a user message.
struct ContentPart {
  std::string type;  // "image", "image_url", "audio", "input_audio", "video"
  // "placeholder", "printed" (the part written out as a Python repr or JSON), "dropped",
  // "error", "rendered" (the text-only message did not render, this one did)
  std::string status;
  std::optional<std::string> placeholder;  // what the part adds to the prompt
  bool in_place = false;                   // between the two texts, where it was sent
  std::optional<std::string> error;
};
struct Multimodal {
  bool text_parts = false;  // a message of text parts renders with both texts
  std::optional<std::string> error;
  std::vector<ContentPart> parts;  // in the part-type table's order
};

// The clock: the prompt rendered at two times (strftime_now).
struct DateDependence {
  bool depends_on_clock = false;
  std::optional<std::pair<std::string, std::string>> rendered;  // the differing text at each
  bool date_string = false;  // a `date_string` variable is written into the prompt
};

// Whether the template writes bos_token itself (the tokenizer must not add it again).
struct BosToken {
  bool writes_bos_token = false;
  bool at_start = false;
  std::size_t count = 0;
};

struct SystemSupport {
  bool supported = false;
  std::string error;  // the template's error, or "renders but drops the system message"
};

struct Alternation {
  bool required = false;  // two user turns in a row are refused
  std::string error;
};

struct TemplateBug {
  // "instruction_history_marker_mismatch", "tool_result_under_assistant",
  // "html_escaped_call" (the call syntax as rendered in history is HTML-escaped),
  // "html_escaped_tools" (the tool definitions are), "html_escaped_content" (a message's
  // text is: `rendered` is the first such line), "duplicate_system_block" (the caller's
  // one system message becomes a second system block after the template's own tools block:
  // `header` is the system header, `rendered` the text before the user's question),
  // "user_message_read_as_tool_result" (tool results go in user turns, and a user message
  // wrapped in the same markers changes how the rest of the conversation renders),
  // "tool_result_without_role" (the template has turn markers, but a tool result follows the
  // previous turn's end with no header or marker: `rendered` is that end and the result)
  std::string kind;
  std::string rendered;             // the marker rendered in history (mismatch); the escaped text
  std::vector<std::string> taught;  // the markers the instructions teach (mismatch)
  std::string header;               // the header of the tool result (under assistant)
  std::string decoded;              // html_escaped_*: the text with its entities decoded
  // user_message_read_as_tool_result: the follow-up question wrapped as the template wraps
  // tool results, and the conversation rendered with it plain and wrapped.
  std::string wrapped, as_text, as_result;
};

struct Profile {
  std::string name;  // the file or directory name (informational only, never used to decide)
  bool renders = false;
  Baseline baseline;
  std::vector<Convention> conventions;  // in axis-table order
  Tools tools;
  ToolCalls tool_calls;
  ToolResults tool_results;
  Reasoning reasoning;
  SystemSupport system;
  Alternation alternation;
  Frame frame;
  Prefill prefill;
  AssistantMasks assistant_masks;
  ThinkingControls thinking_controls;
  Documents documents;
  Multimodal multimodal;
  DateDependence date;
  BosToken bos_token;
  // "tool_calls_dropped", "tools_ignored", "tool_results_dropped", "reasoning_replayed",
  // "no_tool_support"
  std::vector<std::string> silent_failures;
  std::vector<TemplateBug> template_bugs;
  std::size_t renders_used = 0;

  // nullptr when the key is unknown.
  const Convention* convention(std::string_view key) const noexcept;
  // True when the convention renders without losing anything (status ok).
  bool accepts(std::string_view key) const noexcept;
  bool has_silent_failure(std::string_view name) const noexcept;
  // The profile as JSON text, the same keys as scripts/probe-oracle.py writes (indent < 0 = one
  // line); chatwire/probe_json.hpp has the nlohmann form, to_json(profile).
  std::string to_json_text(int indent = -1) const;
  // The inverse of to_json_text, so a server can cache a profile:
  // from_json_text(p.to_json_text()) is p. Errors (ValueError, the path names the key) for text
  // that is not JSON, a wrong profile_version, a missing key or a value of the wrong type;
  // unknown keys are ignored.
  static Result<Profile> from_json_text(std::string_view json_text,
                                        std::size_t max_json_depth = 512);
};

// The axis and value of a convention key ("long_call_id" -> {"call_id", "long"}); nullopt
// for a key the probe-axis table does not have.
std::optional<std::pair<std::string_view, std::string_view>> convention_axis(
    std::string_view key) noexcept;

// The limits of each render the probe, and the parser derivation after it (readback), make of
// a template. The sentinel conversations are small: every bundled template's probe renders fit
// in 2,000 steps (loop iterations and calls; 200 are too few for 42 of the 199) and a few kB of
// output. These bounds are 500 times that, and keep the probe of a template that spins (a
// loop of 10^10 iterations) to about 100 renders of 10^6 steps: seconds, where the rendering
// defaults (5 * 10^7 steps) took 72 s.
inline jinja::Limits probe_render_limits() {
  jinja::Limits limits;
  limits.max_steps = 1'000'000;
  limits.max_output_bytes = std::size_t{16} << 20;
  limits.max_string_bytes = std::size_t{16} << 20;
  return limits;
}

struct Options {
  jinja::Limits limits = probe_render_limits();
  std::string now = "2026-01-15T10:00:00";  // strftime_now's clock, fixed so profiles are stable
};

// Probes a compiled template. `special_tokens` is a dict of template variables (bos_token,
// eos_token, ...); the sentinel conversations are rendered as transformers does.
Profile probe_template(const jinja::Template& tmpl, const Value& special_tokens,
                       const Options& options = {});
// The probe over any renderer (probe_with, template_renderer): chatwire/probe_json.hpp.
// Probes template source, with bos_token "<s>" and eos_token "</s>". Fails only when the
// source does not compile.
Result<Profile> probe_source(std::string_view source, const Options& options = {});
// Reads and probes a .jinja file.
Result<Profile> probe_file(const std::filesystem::path& file, const Options& options = {});
// Probes a checkpoint directory's template (the one transformers chooses when tools are
// given) with the directory's own special tokens.
Result<Profile> probe_model(const std::filesystem::path& dir, const Options& options = {});

// ---------------------------------------------------------------------------------------
// The survey: the probe over many templates, and its tables.
// ---------------------------------------------------------------------------------------

struct SurveyEntry {
  std::string name;  // file or directory name
  Result<Profile> profile = Error{"ValueError", "not probed", 0, 0, {}};
};

// Every .jinja file and every model directory (a directory holding tokenizer_config.json,
// chat_template.jinja or chat_template.json) directly under `dir`, sorted by name; or `dir`
// itself when it is a file or a model directory. `progress(done, total, name)` is called
// after each one.
std::vector<SurveyEntry> survey(
    const std::filesystem::path& dir, const Options& options = {},
    const std::function<void(std::size_t, std::size_t, std::string_view)>& progress = {});

// The survey's tables in Markdown: turn frames by family, reasoning handling, where tool
// definitions go, call syntax (verbatim), tool-result roles, accepted input conventions
// (counts), silent failures and template bugs.
std::string survey_markdown(const std::vector<SurveyEntry>& entries);
// The survey as JSON text: {"templates": N, "profiles": {name: profile|{"error": ...}},
// "summary": {...}} (chatwire/probe_json.hpp: survey_json, the nlohmann form).
std::string survey_json_text(const std::vector<SurveyEntry>& entries, int indent = -1);

}  // namespace chatwire::probe
