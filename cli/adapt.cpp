// `chatwire adapt`: an OpenAI request → the template variables that make one template render
// all of it, with the adaptations applied and the probe findings behind them.
#include <iostream>
#include <sstream>

#include "chatwire/adapt_json.hpp"
#include "chatwire/chat.hpp"
#include "chatwire/value_json.hpp"
#include "commands.hpp"

namespace chatwire::cli {

namespace {

struct AdaptArgs {
  std::string template_file, model_dir, request_file, call_syntax;
  std::string tokenizer_dir;  // --tokenizer: a template file's special tokens
  bool no_verify = false;
  bool render = false;  // print the rendered prompt instead of the context
};

// A failure as the command promises it: {"error": {type, path, message}} on standard output (an
// OpenAI-style error body a caller can read) and the message on standard error.
int fail(const Error& error) {
  const nlohmann::ordered_json err = {
      {"error", {{"type", error.type}, {"path", error.path}, {"message", error.message}}}};
  std::cout << err.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  std::cerr << "chatwire adapt: " << error.to_string() << "\n";
  return 1;
}

int run_adapt(const AdaptArgs& args) {
  using json = nlohmann::ordered_json;
  auto target = !args.model_dir.empty() ? adapt::load_model_dir(args.model_dir)
                                        : adapt::load_template_file(args.template_file);
  if (!target) {
    // A file's error names the file in its path too (the body's "path" field).
    Error error = target.error();
    if (error.path.empty())
      error.path = !args.model_dir.empty() ? args.model_dir : args.template_file;
    return fail(error);
  }
  std::string text;
  if (args.request_file == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    text = buffer.str();
  } else {
    auto read = chat::read_text_file(args.request_file);
    if (!read) {
      Error error = read.error();
      error.path = args.request_file;
      return fail(error);
    }
    text = std::move(*read);
  }
  // Parsed with chatwire's JSON reader first: invalid UTF-8 and syntax errors get a position.
  auto parsed = parse_json(text);
  if (!parsed) {
    Error error = parsed.error();
    error.message = (args.request_file == "-" ? std::string("standard input") : args.request_file) +
                    ": " + error.message;
    return fail(error);
  }
  auto request = to_json(*parsed);
  if (!request) return fail(request.error());
  adapt::Options options;
  options.call_syntax = args.call_syntax;
  options.special_tokens = target->special_tokens;
  if (!args.tokenizer_dir.empty()) {
    auto tokens = chat::Model::load(args.tokenizer_dir);
    if (!tokens) {
      Error error = tokens.error();
      if (error.path.empty()) error.path = args.tokenizer_dir;
      return fail(error);
    }
    options.special_tokens = tokens->special_tokens();
  }
  // --render prints the verification render, so it always verifies.
  options.verify = !args.no_verify || args.render;
  auto adapted = adapt::adapt(*request, target->profile, *target->tmpl, options);
  if (!adapted)
    return fail(args.model_dir.empty() && args.tokenizer_dir.empty()
                    ? with_special_tokens_hint(adapted.error())
                    : adapted.error());
  if (args.render) {
    // The adapted request rendered with chatwire's engine (the render render_chat would make
    // from the context); issue 7's `render --adapt`.
    std::cout << adapted->rendered;
    return 0;
  }
  json adaptations = json::array();
  for (const auto& a : adapted->adaptations)
    adaptations.push_back({{"code", a.code}, {"finding", a.finding}, {"detail", a.detail}});
  json out = {
      {"context", adapted->context}, {"adaptations", adaptations}, {"warnings", adapted->warnings}};
  std::cout << out.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  return 0;
}

}  // namespace

void add_adapt(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<AdaptArgs>();
  auto* cmd =
      root.add_subcommand("adapt", "Adapt an OpenAI request to what one template can render");
  auto* t = cmd->add_option("--template", args->template_file, "chat template file (.jinja)");
  auto* m = cmd->add_option("--model", args->model_dir, "checkpoint directory");
  t->excludes(m);
  cmd->add_option("--tokenizer", args->tokenizer_dir,
                  "with --template: the special tokens (bos_token, eos_token, ...) of this "
                  "directory's tokenizer_config.json (default: none, as render --template)")
      ->excludes(m);
  cmd->add_option("--request", args->request_file, "OpenAI request JSON file ('-' = stdin)")
      ->required();
  cmd->add_option(
         "--call-syntax", args->call_syntax,
         "text syntax for calls a template drops (default: the one its instructions teach)")
      ->check(CLI::IsMember(adapt::call_syntax_names()));
  cmd->add_flag("--no-verify", args->no_verify,
                "do not render the result to check nothing is lost");
  cmd->add_flag("--render", args->render, "print the prompt the adapted request renders to");
  cmd->callback([args, &exit_code] {
    if (args->template_file.empty() && args->model_dir.empty()) {
      std::cerr << "chatwire adapt: give --template FILE or --model DIR\n";
      exit_code = 2;
      return;
    }
    exit_code = run_adapt(*args);
  });
}

}  // namespace chatwire::cli
