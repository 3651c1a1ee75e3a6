// `chatwire render`: renders a template with a context, a chat request with a model directory
// (or a loose template), or a stream of oracle-protocol request lines (--batch). With
// --tokenize a chat request is also encoded (apply_chat_template(tokenize=True, return_dict=True,
// return_assistant_tokens_mask=True)).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatwire/adapt_json.hpp"
#include "chatwire/chat.hpp"
#include "chatwire/jinja.hpp"
#include "chatwire/tokenize.hpp"
#include "chatwire/tokenized.hpp"
#include "chatwire/value.hpp"
#include "chatwire/value_json.hpp"
#include "commands.hpp"
#include "io.hpp"

namespace chatwire::cli {

namespace {

struct RenderArgs {
  std::string template_file;
  std::string context_file;
  std::string model_dir;
  std::string request_file;
  std::string mode;
  std::string chat_template;
  std::string now;
  bool batch = false;
  bool json = false;
  bool no_validate = false;
  bool assistant_mask = false;
  bool tokenize = false;
  bool adapt = false;  // --adapt: the request is OpenAI-shaped; adapt it to the template first
  std::string tokenizer_dir;  // --tokenizer; default: the --model directory
  std::size_t repeat = 0;
  std::string base_dir;
  jinja::Limits limits;
};

void print_error(const Error& error) {
  std::fprintf(stderr, "chatwire render: %s\n", error.to_string().c_str());
}

// An error in a file's contents, named with the file (its line and column are the file's).
void print_error(const std::string& file, const Error& error) {
  std::fprintf(stderr, "chatwire render: %s: %s\n", file.c_str(), error.to_string().c_str());
}

std::optional<std::string> read_all(const std::string& path) {
  std::string error;
  auto text = io::read_file(path, chat::InputLimits{}.max_file_bytes, error);
  if (!text) std::fprintf(stderr, "chatwire render: %s\n", error.c_str());
  return text;
}

// Like read_all, these report their own error: the caller only returns 1.
std::optional<Value> read_json(const std::string& path) {
  auto text = read_all(path);
  if (!text) return std::nullopt;
  auto parsed = parse_json(*text);
  if (!parsed) {
    print_error(path, parsed.error());
    return std::nullopt;
  }
  return std::move(*parsed);
}

std::optional<jinja::Template> compile_template(const std::string& file, const std::string& source,
                                                const jinja::Limits& limits) {
  jinja::CompileOptions compile;
  compile.limits = limits;
  auto tmpl = jinja::Template::compile(source, compile);
  if (!tmpl) {
    print_error(file, tmpl.error());
    return std::nullopt;
  }
  return std::move(*tmpl);
}

void write_out(std::string_view text) {
  io::out().write(text);
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "chatwire render: warning: %s\n", w.c_str());
}

using JsonEntries = std::vector<std::pair<Value, Value>>;

// The rendered text, its {% generation %} spans (code points and bytes, only when the template
// has such blocks) and the warnings, in the order both --json outputs print them.
void append_render_entries(JsonEntries& entries, const std::string& output, bool uses_generation,
                           const std::vector<jinja::GenerationSpan>& spans,
                           const std::vector<std::string>& warnings) {
  std::vector<Value> code_points, bytes, notes;
  for (const auto& s : spans) {
    code_points.push_back(Value::list(
        {Value(static_cast<long long>(s.begin)), Value(static_cast<long long>(s.end))}));
    bytes.push_back(Value::list(
        {Value(static_cast<long long>(s.begin_byte)), Value(static_cast<long long>(s.end_byte))}));
  }
  for (const auto& w : warnings) notes.push_back(Value(w));
  entries.emplace_back(Value("output"), Value(output));
  if (uses_generation) {
    entries.emplace_back(Value("generation"), Value::list(std::move(code_points)));
    entries.emplace_back(Value("generation_bytes"), Value::list(std::move(bytes)));
  }
  entries.emplace_back(Value("warnings"), Value::list(std::move(notes)));
}

void write_json_object(JsonEntries entries) {
  JsonDumpOptions options;
  options.ensure_ascii = false;
  std::string text;
  (void)dump_json(text, Value::dict_unchecked(std::move(entries)), options);
  text += '\n';
  write_out(text);
}

// --json: the rendered text with both kinds of span and the warnings, as one JSON object.
void write_json(const std::string& output, bool uses_generation,
                const std::vector<jinja::GenerationSpan>& spans,
                const std::vector<std::string>& warnings) {
  JsonEntries entries;
  append_render_entries(entries, output, uses_generation, spans, warnings);
  write_json_object(std::move(entries));
}

// --tokenize: transformers' BatchEncoding keys (input_ids, attention_mask, assistant_masks);
// with --json also the text, spans and warnings.
void write_tokenized(const chat::TokenizedResult& r, bool with_text) {
  auto ints = [](const auto& xs) {
    std::vector<Value> out;
    out.reserve(xs.size());
    for (auto x : xs) out.emplace_back(static_cast<long long>(x));
    return Value::list(std::move(out));
  };
  JsonEntries entries{{Value("input_ids"), ints(r.input_ids)},
                      {Value("attention_mask"), ints(r.attention_mask)},
                      {Value("assistant_masks"), ints(r.assistant_masks)}};
  if (with_text)
    append_render_entries(entries, r.chat.text, r.chat.uses_generation, r.chat.generation,
                          r.chat.warnings);
  else
    print_warnings(r.chat.warnings);
  write_json_object(std::move(entries));
}

int run_batch(const RenderArgs& args) {
  chat::BatchOptions options;
  options.limits = args.limits;
  options.base_dir = args.base_dir;
  options.validate = !args.no_validate;
  options.repeat = args.repeat;
  // A line longer than max_request_bytes comes cut to one byte more, which render_line
  // answers with its LimitError; the batch goes on with the next line.
  const std::size_t max_line = options.input.max_request_bytes;
  // Template files are checked for changes once per read of input and per write of output,
  // not per line: a change that could matter to a line reached us through one of them.
  options.check_files_per_io_epoch = true;
  chat::BatchRenderer renderer(std::move(options));
  io::LineReader lines(0, max_line);
  io::Writer& out = io::out();
  // 1 MB: the template files are checked once per write-out (and per read), and with 64 KB a
  // write-out came every dozen request lines, so one stat() per line, 7.5% of a batch's CPU.
  // Nothing waits on the larger buffer: it is written out before the reader waits for input.
  out.set_capacity(std::size_t{1} << 20);
  std::uint64_t io_seen = 0;
  while (auto line = lines.next()) {
    if (const std::uint64_t io_now = lines.reads() + out.write_outs(); io_now != io_seen) {
      renderer.next_io_epoch();
      io_seen = io_now;
    }
    std::string_view text = line->text;
    if (!line->too_long && !text.empty() && text.back() == '\r') text.remove_suffix(1);
    std::string result = renderer.render_line(text);
    if (result.empty()) continue;
    out.write(result);
    out.put('\n');
  }
  if (!lines.error().empty()) {
    std::fprintf(stderr, "chatwire render: reading standard input: %s\n", lines.error().c_str());
    return 1;
  }
  return 0;
}

// A request key render does not read is named on stderr (the render ignores it, as the oracle
// does): a vLLM-style `chat_template_kwargs` or a top-level `enable_thinking` would otherwise
// leave the template's default without a word.
void warn_unread_keys(const std::string& file, std::string_view text) {
  static constexpr std::string_view kRead[] = {"messages",
                                               "tools",
                                               "documents",
                                               "add_generation_prompt",
                                               "continue_final_message",
                                               "chat_template",
                                               "special_tokens_map",
                                               "kwargs"};
  auto parsed = parse_json(text);
  if (!parsed || !parsed->is_dict()) return;
  for (const auto& entry : parsed->dict_entries()) {
    if (!entry.first.is_string()) continue;
    const std::string_view name = entry.first.as_string();
    if (std::find(std::begin(kRead), std::end(kRead), name) == std::end(kRead))
      std::fprintf(stderr,
                   "chatwire render: warning: %s: key \"%.*s\" is not read (template variables go "
                   "in \"kwargs\")\n",
                   file.c_str(), static_cast<int>(name.size()), name.data());
  }
}

int run_chat(const RenderArgs& args) {
  auto text = read_all(args.request_file);
  if (!text) return 1;
  auto request = chat::parse_request_json(*text, {}, !args.no_validate);
  if (!request) {
    print_error(args.request_file, request.error());
    return 1;
  }
  warn_unread_keys(args.request_file, *text);
  if (!args.chat_template.empty()) request->chat_template = args.chat_template;
  chat::RenderOptions options;
  options.limits = args.limits;
  options.now = args.now;
  options.validate = !args.no_validate;
  options.assistant_mask = args.assistant_mask;
  if (!args.mode.empty()) options.mode = chat::parse_mode(args.mode);
  Result<chat::ChatResult> result = Error{};
  std::optional<tokenize::Tokenizer> tokenizer;
  if (args.tokenize) {
    // Loaded before rendering so that a missing tokenizer.json is reported first.
    std::string dir = args.tokenizer_dir.empty() ? args.model_dir : args.tokenizer_dir;
    if (dir.empty()) {
      std::fprintf(stderr, "chatwire render: --tokenize needs --model DIR or --tokenizer DIR\n");
      return 2;
    }
    auto tok = tokenize::Tokenizer::load_dir(dir);
    if (!tok) {
      print_error(tok.error());
      return 1;
    }
    tokenizer = std::move(*tok);
    options.assistant_mask = true;  // masks are always returned: warn when they stay zero
  }
  if (!args.model_dir.empty()) {
    jinja::CompileOptions compile;
    compile.limits = args.limits;
    auto model = chat::Model::load(args.model_dir, compile);
    if (!model) {
      print_error(model.error());
      return 1;
    }
    result = model->render(*request, options);
  } else {
    auto source = read_all(args.template_file);
    if (!source) return 1;
    auto tmpl = compile_template(args.template_file, *source, args.limits);
    if (!tmpl) return 1;
    // With a tokenizer directory the template sees its special tokens, as transformers'
    // apply_chat_template(chat_template=...) passes the tokenizer's (bos_token, eos_token, ...).
    Value special_tokens = Value::empty_dict();
    if (tokenizer) {
      auto tokens = chat::Model::load(args.tokenizer_dir);
      if (!tokens) {
        print_error(tokens.error());
        return 1;
      }
      special_tokens = tokens->special_tokens();
    }
    result = chat::render(*tmpl, *request, special_tokens, options);
  }
  if (!result) {
    print_error(result.error());
    return 1;
  }
  if (tokenizer) {
    auto tokenized = chat::tokenize_rendered(std::move(*result), *tokenizer);
    if (!tokenized) {
      print_error(tokenized.error());
      return 1;
    }
    write_tokenized(*tokenized, args.json);
    return 0;
  }
  if (args.json) {
    write_json(result->text, result->uses_generation, result->generation, result->warnings);
  } else {
    print_warnings(result->warnings);
    write_out(result->text);
  }
  return 0;
}

int run_template(const RenderArgs& args) {
  auto source = read_all(args.template_file);
  if (!source) return 1;
  Value context = Value::empty_dict();
  if (!args.context_file.empty()) {
    auto parsed = read_json(args.context_file);
    if (!parsed) return 1;
    if (!parsed->is_dict()) {
      std::fprintf(stderr, "chatwire render: %s must hold a JSON object (the template variables)\n",
                   args.context_file.c_str());
      return 1;
    }
    context = std::move(*parsed);
  }
  auto tmpl = compile_template(args.template_file, *source, args.limits);
  if (!tmpl) return 1;
  jinja::RenderOptions options;
  options.limits = args.limits;
  options.now = args.now;
  auto result = tmpl->render(context, options);
  if (!result) {
    print_error(result.error());
    return 1;
  }
  if (args.json) {
    write_json(result->output, result->uses_generation, result->generation, {});
  } else {
    write_out(result->output);
  }
  return 0;
}

}  // namespace

// --adapt: an OpenAI request, adapted to what the template can render (issue 7), then rendered.
// The adapter renders the adapted context itself to verify that nothing was lost; that
// verified render is what is printed.
int run_adapted(const RenderArgs& args) {
  auto target = !args.model_dir.empty() ? adapt::load_model_dir(args.model_dir)
                                        : adapt::load_template_file(args.template_file);
  if (!target) {
    print_error(target.error());
    return 1;
  }
  auto parsed = read_json(args.request_file);
  if (!parsed) return 1;
  auto request = to_json(*parsed);
  if (!request) {
    print_error(request.error());
    return 1;
  }
  adapt::Options options;
  options.special_tokens = target->special_tokens;  // none for a template file, as in render_chat
  if (!args.tokenizer_dir.empty()) {
    auto tokens = chat::Model::load(args.tokenizer_dir);
    if (!tokens) {
      print_error(tokens.error());
      return 1;
    }
    options.special_tokens = tokens->special_tokens();
  }
  options.limits = args.limits;
  if (!args.now.empty()) options.now = args.now;
  auto adapted = adapt::adapt(*request, target->profile, *target->tmpl, options);
  if (!adapted) {
    print_error(args.model_dir.empty() && args.tokenizer_dir.empty()
                    ? with_special_tokens_hint(adapted.error())
                    : adapted.error());
    return 1;
  }
  for (const auto& a : adapted->adaptations)
    std::fprintf(stderr, "adaptation %s: %s [%s]\n", a.code.c_str(), a.detail.c_str(),
                 a.finding.c_str());
  write_out(adapted->rendered);
  return 0;
}

// The options each way of running render reads (the --max-* limits are read by all); an option
// given to a way that does not read it is refused rather than ignored: `--batch --now`, a
// `--context` beside `--request`, `--repeat` without `--batch`.
struct RenderWay {
  const char* name;
  std::vector<std::string_view> reads;
};
const RenderWay kBatchWay{"--batch", {"--batch", "--base-dir", "--repeat", "--no-validate"}};
const RenderWay kAdaptWay{
    "--adapt", {"--adapt", "--request", "--model", "--template", "--now", "--tokenizer"}};
const RenderWay kChatWay{
    "a chat request (--request)",
    {"--request", "--model", "--template", "--mode", "--chat-template", "--now", "--json",
     "--no-validate", "--assistant-mask", "--tokenize", "--tokenizer"}};
const RenderWay kTemplateWay{"a template and its variables (--template without --request)",
                             {"--template", "--context", "--now", "--json"}};

std::string refused_option(const CLI::App& cmd, const RenderArgs& args) {
  const RenderWay& way = args.batch                   ? kBatchWay
                         : args.adapt                 ? kAdaptWay
                         : !args.request_file.empty() ? kChatWay
                                                      : kTemplateWay;
  if (const std::string unread = first_unread_option(cmd, way.reads, "--max-"); !unread.empty())
    return unread + " is not used with " + way.name;
  if (!args.model_dir.empty() && !args.template_file.empty())
    return "give one of --model DIR and --template FILE";
  if (!args.tokenizer_dir.empty() && args.adapt && !args.model_dir.empty())
    return "--tokenizer is read with --adapt --template (a --model directory has its own tokens)";
  if (!args.tokenizer_dir.empty() && !args.tokenize && !args.adapt)
    return "--tokenizer is read with --tokenize or --adapt --template";
  return {};
}

void add_render(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<RenderArgs>();
  auto* cmd = root.add_subcommand("render",
                                  "Render a chat template: --template FILE --context FILE.json, "
                                  "--model DIR --request FILE.json, "
                                  "or --batch (the oracle's JSON Lines protocol on stdin/stdout)");
  cmd->add_option("--template", args->template_file, "template file (Jinja source)");
  cmd->add_option("--context", args->context_file,
                  "JSON object of template variables (with --template)");
  cmd->add_option("--model", args->model_dir,
                  "checkpoint directory (chat_template.jinja, tokenizer_config.json, ...)");
  cmd->add_option("--request", args->request_file,
                  "chat request JSON: messages, tools, documents, add_generation_prompt, "
                  "continue_final_message, "
                  "chat_template, special_tokens_map, kwargs");
  cmd->add_option("--mode", args->mode,
                  "reply (add_generation_prompt), prefill (continue_final_message) or training")
      ->check(CLI::IsMember({"reply", "prefill", "training"}));
  cmd->add_option("--chat-template", args->chat_template,
                  "name of the model's template to use (e.g. tool_use, rag)");
  cmd->add_option("--now", args->now,
                  "clock for strftime_now, e.g. 2026-08-19T10:00:00 (default: local time)")
      ->check(iso_clock());
  cmd->add_flag("--batch", args->batch,
                "read oracle request lines on stdin, write result lines on stdout");
  cmd->add_option("--base-dir", args->base_dir,
                  "with --batch: resolve relative paths against this directory");
  cmd->add_option("--repeat", args->repeat,
                  "with --batch: render each request N more times and report \"us\" per render (as "
                  "the oracle)")
      ->check(non_negative());
  cmd->add_flag("--adapt", args->adapt,
                "the request is an OpenAI request: adapt it to what the template can render "
                "(see chatwire adapt) and print the prompt");
  cmd->add_flag("--json", args->json,
                "print {output, generation, generation_bytes, warnings} as JSON");
  cmd->add_flag(
      "--assistant-mask", args->assistant_mask,
      "the caller needs assistant masks: warn when the template has no {% generation %} blocks");
  cmd->add_flag(
      "--tokenize", args->tokenize,
      "with --request: print {input_ids, attention_mask, assistant_masks} as "
      "apply_chat_template(tokenize=True, return_dict=True, "
      "return_assistant_tokens_mask=True) (with --json also output, generation, warnings)");
  cmd->add_option("--tokenizer", args->tokenizer_dir,
                  "with --tokenize: directory holding tokenizer.json (default: the --model "
                  "directory); with --template, its special tokens are the template's "
                  "(bos_token, eos_token, ...), as transformers passes the tokenizer's");
  cmd->add_flag("--no-validate", args->no_validate,
                "skip request validation (render what transformers would)");
  cmd->add_option("--max-steps", args->limits.max_steps, "evaluation steps per render")
      ->capture_default_str()
      ->check(non_negative());
  cmd->add_option("--max-recursion", args->limits.max_recursion, "macro / recursive loop depth")
      ->capture_default_str()
      ->check(non_negative());
  cmd->add_option("--max-parse-depth", args->limits.max_parse_depth, "nesting depth in the parser")
      ->capture_default_str()
      ->check(non_negative());
  cmd->add_option("--max-output-bytes", args->limits.max_output_bytes, "rendered output size")
      ->capture_default_str()
      ->check(non_negative());
  cmd->add_option("--max-string-bytes", args->limits.max_string_bytes,
                  "any string built while rendering")
      ->capture_default_str()
      ->check(non_negative());
  cmd->add_option("--max-container-items", args->limits.max_container_items,
                  "any list/dict built while rendering")
      ->capture_default_str()
      ->check(non_negative());
  cmd->add_option("--max-range", args->limits.max_range, "range() size")
      ->capture_default_str()
      ->check(non_negative());
  cmd->callback([args, cmd, &exit_code] {
    if (const std::string refused = refused_option(*cmd, *args); !refused.empty()) {
      std::fprintf(stderr, "chatwire render: %s\n", refused.c_str());
      exit_code = 2;
      return;
    }
    if (args->tokenize && (args->batch || args->request_file.empty())) {
      std::fprintf(stderr,
                   "chatwire render: --tokenize works on a chat request: --model DIR "
                   "--request FILE.json (or --template FILE --request FILE.json "
                   "--tokenizer DIR)\n");
      exit_code = 2;
    } else if (args->adapt) {
      if (args->request_file.empty() || (args->model_dir.empty() == args->template_file.empty())) {
        std::fprintf(stderr,
                     "chatwire render: --adapt needs --request FILE.json and one of --model DIR "
                     "or --template FILE\n");
        exit_code = 2;
      } else {
        exit_code = run_adapted(*args);
      }
    } else if (args->batch) {
      exit_code = run_batch(*args);
    } else if (!args->request_file.empty() &&
               (!args->model_dir.empty() || !args->template_file.empty())) {
      exit_code = run_chat(*args);
    } else if (!args->template_file.empty() && args->model_dir.empty()) {
      exit_code = run_template(*args);
    } else {
      std::fprintf(stderr,
                   "chatwire render: give --template FILE [--context FILE.json], --model DIR "
                   "--request FILE.json, "
                   "--template FILE --request FILE.json, or --batch\n");
      exit_code = 2;
    }
  });
}

}  // namespace chatwire::cli
