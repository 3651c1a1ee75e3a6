// chatwire's chat layer: Hugging Face transformers' apply_chat_template up to (not including)
// tokenization, byte for byte. It finds a checkpoint directory's templates and special tokens
// as transformers' tokenizer loading does, chooses a template as get_chat_template does,
// validates the request (errors name the field path), renders it with the Jinja engine and
// applies continue_final_message exactly as transformers does.
//
//   auto model = chatwire::chat::Model::load("path/to/checkpoint");   // once
//   auto request = chatwire::chat::parse_request_json(json_text);     // per request
//   auto result = model->render(*request, {.mode = chatwire::chat::Mode::reply});
//   // result->text, result->generation (assistant spans), result->warnings
//
// A loaded Model is immutable (apart from an internal, locked cache) and safe to render from
// many threads at once. Nothing here throws or aborts: failures are Error values whose type
// is the Python exception transformers would raise (ValueError, TypeError, ...), or
// RequestError for a request refused by validation (Error::path names the field).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"
#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"

namespace chatwire::chat {

// What the rendered prompt is for; one named choice instead of two booleans.
enum class Mode : unsigned char {
  reply,     // add_generation_prompt=True: the prompt ends where a new assistant message starts
  prefill,   // continue_final_message=True: the model continues the final (assistant) message
  training,  // neither: the whole conversation, e.g. for fine-tuning with assistant masks
};
std::string_view mode_name(Mode mode) noexcept;  // "reply", "prefill", "training"
std::optional<Mode> parse_mode(std::string_view name) noexcept;

// Limits for untrusted input (model directories and request JSON).
struct InputLimits {
  std::size_t max_file_bytes = std::size_t{64} << 20;     // any config/template file read
  std::size_t max_request_bytes = std::size_t{64} << 20;  // one request's JSON text
  std::size_t max_json_depth = 512;                       // nesting of request/config JSON
  std::size_t max_templates = 256;                        // named templates in one directory
  std::size_t max_cached_sources = 64;                    // explicit template sources kept compiled
};

// A transformers-style chat request (the oracle's `chat` object). Values are shared, never
// copied per render.
struct ChatRequest {
  Value messages = Value::empty_list();  // list of message dicts
  Value tools = Value::none();           // list of tool dicts, or None when absent
  Value documents = Value::none();       // list of document dicts, or None when absent
  bool add_generation_prompt = false;
  bool continue_final_message = false;
  // A template name; for a model with one template transformers treats it as template source.
  std::optional<std::string> chat_template;
  // chat_template is template source whatever the model's templates are named: transformers'
  // get_chat_template takes a string that names no template of a dict as source (the oracle,
  // hf_render.py, refuses it instead; the Python module follows transformers here).
  bool chat_template_is_source = false;
  Value special_tokens_map = Value::empty_dict();  // overrides the model's special tokens
  Value kwargs = Value::empty_dict();              // extra template variables; they win over tokens
};

// Checks a request before rendering. Every failure is a RequestError whose path names the
// field ("messages[2].tool_calls[0].function.name"):
// messages a non-empty list of objects; role a non-empty string (any role: templates use
// ipython, observation, developer, ...); content a string, null, absent, or a list of typed
// parts (objects with a string "type"; "text" parts with a string "text"); tool_calls a list
// of {function: {name: non-empty string, arguments: string or object}} (or the flat
// {name, arguments}); tools and documents lists of objects or null.
Status validate(const ChatRequest& request);

// Builds a request from a parsed `chat` object, checking field types (RequestError with the
// path); `validate` is not called. Unknown fields are ignored, as transformers ignores them.
Result<ChatRequest> request_from_value(const Value& chat);
// Parses request JSON text: refused with the byte position when it is not valid UTF-8, not
// JSON or not an object. Then request_from_value and (when `check` is true) validate.
Result<ChatRequest> parse_request_json(std::string_view json, const InputLimits& limits = {},
                                       bool check = true);

struct RenderOptions {
  jinja::Limits limits;
  std::string now;           // strftime_now's clock, ISO 8601; empty = the real local time
  std::optional<Mode> mode;  // overrides the request's two flags; prefill needs an assistant last
  bool validate = true;      // run validate() first
  bool assistant_mask = false;  // caller wants masks: warn when the template has no generation tag
};

struct ChatResult {
  std::string text;
  bool uses_generation = false;                   // the template has {% generation %} blocks
  std::vector<jinja::GenerationSpan> generation;  // assistant spans, code points and bytes
  std::vector<std::string> warnings;              // things a user may want to know; never fatal
};

// Renders `request` with a compiled template, as transformers' render_jinja_template does:
// variables = special_tokens, then request.special_tokens_map, then request.kwargs (later win),
// then messages/tools/documents/add_generation_prompt (tools and documents always defined).
Result<ChatResult> render(const jinja::Template& tmpl, const ChatRequest& request,
                          const Value& special_tokens, const RenderOptions& options = {});

// The variables render() passes to the template (before continue_final_message and a mode
// change them): special tokens, special_tokens_map, kwargs, then messages, tools, documents and
// add_generation_prompt; a later duplicate key wins.
Value template_variables(const ChatRequest& request, const Value& special_tokens);

// A text file (a chat template's source, a request), read as transformers reads a template
// (UTF-8): a directory, a missing or unreadable file, more than limits.max_file_bytes (a pipe or
// device included) or bytes that are not UTF-8 are errors naming the file.
Result<std::string> read_text_file(const std::filesystem::path& file,
                                   const InputLimits& limits = {});

// A checkpoint directory's chat templates and special tokens, loaded once.
class Model {
 public:
  // Finds templates as transformers does: chat_template.jinja and additional_chat_templates/
  // *.jinja win over tokenizer_config.json's "chat_template" (a string, or the legacy list of
  // {name, template}); chat_template.json last. Special tokens (strings or AddedToken objects)
  // from tokenizer_config.json, overridden by special_tokens_map.json. Every template is
  // compiled here; one that fails to compile reports its error when it is chosen.
  // A directory without any template loads (has_template() is false); choosing fails then.
  static Result<Model> load(const std::filesystem::path& dir,
                            const jinja::CompileOptions& compile = {},
                            const InputLimits& limits = {});

  const std::filesystem::path& directory() const noexcept;
  bool has_template() const noexcept;
  // Names of the templates when the directory has several (sorted); empty for one or none.
  const std::vector<std::string>& template_names() const noexcept;
  // bos_token, eos_token, unk_token, sep_token, pad_token, cls_token, mask_token,
  // additional_special_tokens: a dict in that order, absent ones left out.
  const Value& special_tokens() const noexcept;
  // The source of the template called `name` ("" for a directory's single template; one of
  // template_names() otherwise) as read from the directory: what transformers'
  // tokenizer.chat_template holds. None when there is no such template.
  const Value& template_source(std::string_view name) const noexcept;

  // The template get_chat_template chooses: the named one; else "tool_use" when tools are
  // given and it exists; else "default"; else an error listing the names. For a directory
  // with a single template a name is itself template source (as transformers does).
  // "<dir> has no chat template" when there is none.
  Result<std::shared_ptr<const jinja::Template>> select(const std::optional<std::string>& name,
                                                        bool tools_given) const;

  // select() with the request's chat_template and tools, then chat::render with this
  // directory's special tokens.
  Result<ChatResult> render(const ChatRequest& request, const RenderOptions& options = {}) const;

  struct Impl;

 private:
  explicit Model(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// The oracle's batch protocol (scripts/oracle/hf_render.py), one JSON line in, one out:
// requests {"id", "template" | "template_file" | "model_dir", "context" | "chat", "now"},
// results {"id", "ok", "output", "generation"} or {"id", "ok", "error_type", "message"},
// written as Python's json.dumps(result, ensure_ascii=False). Model directories and template
// sources are loaded once and cached. Relative paths resolve against base_dir.
struct BatchOptions {
  jinja::Limits limits;
  std::filesystem::path base_dir;  // empty = the current directory
  bool validate = true;            // validate chat requests (RequestError before rendering)
  InputLimits input;
  // Timing, as the oracle's --repeat N: each successful request is rendered N more times and
  // its result gains "us", the mean microseconds of one render (compile excluded).
  std::size_t repeat = 0;
  // When a template_file or a model_dir's files are checked for a change (a stat() of each
  // file). false: on every line, as the oracle reads them on every line. true: once per I/O epoch,
  // which the caller marks with BatchRenderer::next_io_epoch() each time it has read more input or
  // written output out. A process that changes a file and then writes a line that uses it,
  // or that waits for a result before changing the file, can only reach us through those
  // reads and writes, so it sees the same results as with a check on every line; only a
  // change that races the batch, ordered by nothing, may be seen some lines later.
  bool check_files_per_io_epoch = false;
};

// Keeps caches between lines, so use one BatchRenderer per thread (Models it loads are shared
// and thread-safe; the renderer's own caches are not locked).
class BatchRenderer {
 public:
  explicit BatchRenderer(BatchOptions options = {});
  ~BatchRenderer();
  BatchRenderer(BatchRenderer&&) noexcept;
  BatchRenderer& operator=(BatchRenderer&&) noexcept;

  // The result line for one request line, without the newline; empty for a blank line
  // (the oracle skips those). Never fails: a bad request gives an error result.
  std::string render_line(std::string_view request_line);
  // With BatchOptions::check_files_per_io_epoch: input was read or output written out since
  // the last line, so template files are checked again before they are used.
  void next_io_epoch();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace chatwire::chat
