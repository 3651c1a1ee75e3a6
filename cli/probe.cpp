// `chatwire probe`: measures one template (a .jinja file or a model directory) with sentinel
// conversations and prints its profile: what it keeps, drops and rejects.
#include <cstdio>
#include <memory>
#include <string>

#include "chatwire/probe_json.hpp"
#include "chatwire/readback_json.hpp"
#include "commands.hpp"

namespace chatwire::cli {

namespace {

void write_out(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

std::string yes(bool b) {
  return b ? "yes" : "no";
}

// The profile as a short human-readable report (the JSON has every detail).
std::string summary(const probe::Profile& p) {
  std::string s;
  s += "template:          " + p.name + "\n";
  s += "family:            " + p.frame.family + "\n";
  s += "renders:           " + yes(p.renders) +
       (p.renders ? " (baseline: " + p.baseline.conversation + ")" : "") + "\n";
  if (!p.renders) s += "error:             " + p.baseline.error + "\n";
  s += "tool definitions:  " + p.tools.definitions_location + "\n";
  s += "tool calls:        " + std::string(p.tool_calls.rendered ? "rendered" : "not rendered") +
       "\n";
  if (p.tool_calls.example)
    s += "call syntax:       " +
         nlohmann::json(*p.tool_calls.example)
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
  s += "tool results:      " +
       (p.tool_results.role ? "under " + *p.tool_results.role : std::string("not rendered")) + "\n";
  s +=
      "reasoning:         " + p.reasoning.style +
      (p.reasoning.open ? " " + *p.reasoning.open + " ... " + p.reasoning.close.value_or("") : "") +
      ", past reasoning kept: " + yes(p.reasoning.history_kept) +
      ", prompt opens it: " + yes(p.reasoning.prompt_opens) + "\n";
  s += "system role:       " + yes(p.system.supported) +
       (p.system.error.empty() ? "" : " (" + p.system.error + ")") + "\n";
  s += "alternation:       " + std::string(p.alternation.required ? "required" : "not required") +
       "\n";
  s += "conventions:      ";
  for (const auto& c : p.conventions)
    s += " " + c.key + "=" + std::string(probe::status_name(c.status));
  s += "\n";
  std::string silent;
  for (const auto& f : p.silent_failures) silent += " " + f;
  s += "silent failures:  " + (silent.empty() ? std::string(" none") : silent) + "\n";
  std::string bugs;
  for (const auto& b : p.template_bugs) bugs += " " + b.kind;
  s += "template bugs:    " + (bugs.empty() ? std::string(" none") : bugs) + "\n";
  s += "prefill:           " + yes(p.prefill.supported) +
       (p.prefill.supported && !p.prefill.matches_generation_prompt
            ? " (not where a generated reply starts)"
            : "") +
       "\n";
  const auto& m = p.assistant_masks;
  std::string missed;
  for (const auto& x : m.missed) missed += " " + x;
  s += "assistant masks:   " +
       std::string(!m.generation_blocks ? "no generation blocks"
                   : missed.empty()     ? "cover the assistant turns"
                                        : "miss" + missed) +
       "\n";
  std::string controls;
  for (const auto& c : p.thinking_controls.controls) controls += " " + c.name;
  s += "thinking controls:" + (controls.empty() ? std::string(" none") : controls) + "\n";
  s += "documents:         " +
       (p.documents.rendered ? "in " + p.documents.location : std::string("not rendered")) + "\n";
  std::string parts;
  for (const auto& part : p.multimodal.parts) parts += " " + part.type + "=" + part.status;
  s += "content parts:    " + parts + "\n";
  s += "clock:             " + std::string(p.date.depends_on_clock ? "read" : "not read") +
       ", date_string " + std::string(p.date.date_string ? "written" : "not written") + "\n";
  s += "writes bos_token:  " + yes(p.bos_token.writes_bos_token) + "\n";
  return s;
}

// The output parser chosen from the template's renders and its round-trip verdict.
std::string parser_summary(const readback::ParserChoice& c) {
  std::string s = "output parser:     ";
  s +=
      c.syntax ? c.syntax->name() + " " + c.syntax->summary() : std::string("none (plain content)");
  s += "\nround trip:        " + c.verdict + "\n";
  return s;
}

}  // namespace

void add_probe(CLI::App& root, int& exit_code) {
  auto* cmd = root.add_subcommand(
      "probe", "Measure what a chat template keeps, drops and rejects (sentinel probe)");
  struct Args {
    std::string template_file, model_dir, now = probe::Options{}.now;
    std::uint64_t max_steps = probe::probe_render_limits().max_steps;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto* t = cmd->add_option("--template", args->template_file, "a .jinja template file");
  auto* m =
      cmd->add_option("--model", args->model_dir,
                      "a checkpoint directory (tokenizer_config.json, chat_template.jinja, ...)");
  t->excludes(m);
  cmd->add_flag("--json", args->json, "print the whole profile as JSON");
  cmd->add_option("--now", args->now, "strftime_now's clock (ISO 8601)")->check(iso_clock());
  cmd->add_option("--max-steps", args->max_steps,
                  "step limit of each render the probe and the parser derivation make")
      ->capture_default_str()
      ->check(non_negative());
  cmd->callback([args, &exit_code] {
    const std::string* template_file = &args->template_file;
    const std::string* model_dir = &args->model_dir;
    if (template_file->empty() == model_dir->empty()) {
      std::fprintf(stderr, "chatwire probe: give exactly one of --template FILE or --model DIR\n");
      exit_code = 2;
      return;
    }
    probe::Options options;
    options.now = args->now;
    options.limits.max_steps = args->max_steps;
    auto loaded = template_file->empty() ? readback::choose_parser_model(*model_dir, options)
                                         : readback::choose_parser_file(*template_file, options);
    if (!loaded) {
      std::fprintf(stderr, "chatwire probe: %s\n",
                   naming(loaded.error(), template_file->empty() ? *model_dir : *template_file)
                       .to_string()
                       .c_str());
      exit_code = 1;
      return;
    }
    if (args->json) {
      auto json = probe::to_json(loaded->profile);
      json["parser"] = readback::to_json(loaded->choice);
      write_out(json.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
    } else {
      write_out(summary(loaded->profile) + parser_summary(loaded->choice));
    }
    exit_code = 0;
  });
}

}  // namespace chatwire::cli
