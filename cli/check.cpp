// `chatwire check`: the acceptance check. A sentinel tool conversation is adapted for the
// template and rendered; each sentinel must survive and past reasoning must not.
// Exit code 0 only when everything survives.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "card.hpp"
#include "chatwire/adapt_json.hpp"
#include "chatwire/value_json.hpp"
#include "commands.hpp"

namespace chatwire::cli {

namespace {

struct CheckArgs {
  std::string template_file, model_dir, all_dir, call_syntax, out;
  bool json_output = false, print_request = false, card = false;
};

using json = nlohmann::ordered_json;

void print_report(const std::string& name, const adapt::CheckReport& raw,
                  const adapt::CheckReport& adapted) {
  std::cout << name << ": raw " << (raw.passed ? "pass" : "FAIL") << ", adapted "
            << (adapted.passed    ? "pass"
                : adapted.refused ? "refused"
                                  : "FAIL")
            << "\n";
  for (const auto& s : adapted.sentinels)
    std::cout << "  " << (s.ok() ? "ok   " : "LOST ") << s.name << " (" << s.text << ") "
              << (s.expected ? (s.present ? "present" : "missing")
                             : (s.present ? "present, must be dropped" : "dropped"))
              << "\n";
  for (const auto& a : adapted.adaptations)
    std::cout << "  adaptation " << a.code << ": " << a.detail << "  [" << a.finding << "]\n";
  if (!adapted.error.empty()) std::cout << "  " << adapted.error << "\n";
}

int run_one(const CheckArgs& args, const std::filesystem::path& path, bool model, json* all) {
  auto target = model ? adapt::load_model_dir(path) : adapt::load_template_file(path);
  std::string name = path.filename().string();
  if (!target) {
    if (all != nullptr) {
      (*all)[name] = {{"error", target.error().to_string()}};
      return 1;
    }
    std::cerr << "chatwire check: " << naming(target.error(), path.string()).to_string() << "\n";
    return 1;
  }
  adapt::Options options;
  options.call_syntax = args.call_syntax;
  options.special_tokens = target->measured_tokens;  // checked as the probe measured
  auto raw = adapt::check_raw(*target->tmpl, options);
  auto adapted = adapt::check(target->profile, *target->tmpl, options);
  if (all != nullptr) {
    (*all)[name] = {{"raw", raw.passed ? "pass" : "fail"},
                    {"adapted", adapted.passed    ? "pass"
                                : adapted.refused ? "refused"
                                                  : "fail"},
                    {"report", adapted.to_json()}};
  } else if (args.json_output) {
    json out = {{"template", name},
                {"raw", raw.to_json()},
                {"adapted", adapted.to_json()},
                {"context", adapted.context}};
    std::cout << out.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    print_report(name, raw, adapted);
  }
  return adapted.passed ? 0 : 1;
}

int run_all(const CheckArgs& args) {
  std::vector<std::filesystem::path> entries;
  for (const auto& e : std::filesystem::directory_iterator(args.all_dir)) {
    if (e.is_regular_file() && e.path().extension() == ".jinja")
      entries.push_back(e.path());
    else if (e.is_directory())
      entries.push_back(e.path());
  }
  std::sort(entries.begin(), entries.end());
  // Nothing to check is no pass (a mistyped directory would otherwise exit 0).
  if (entries.empty()) {
    std::cerr << "chatwire check: " << args.all_dir
              << " holds no .jinja file and no model directory\n";
    return 1;
  }
  json all = json::object();
  // A directory that does not load (no chat template, broken config) is counted apart: there
  // is no template to adapt for, which is not a failure of the adapter.
  std::size_t raw_pass = 0, adapted_pass = 0, refused = 0, failed = 0, not_loaded = 0;
  for (const auto& p : entries) {
    run_one(args, p, std::filesystem::is_directory(p), &all);
    const json& r = all[p.filename().string()];
    if (r.contains("raw") && r["raw"] == "pass") ++raw_pass;
    if (r.contains("adapted")) {
      if (r["adapted"] == "pass")
        ++adapted_pass;
      else if (r["adapted"] == "refused")
        ++refused;
      else
        ++failed;
    } else {
      ++not_loaded;
    }
  }
  if (args.json_output) {
    std::cout << all.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    std::cout << "| template | raw request | adapted request |\n|---|---|---|\n";
    for (auto& [name, r] : all.items())
      std::cout << "| " << name << " | " << r.value("raw", "error") << " | "
                << r.value("adapted", std::string("error: ") + r.value("error", "")) << " |\n";
    std::cout << "\nraw: " << raw_pass << "/" << entries.size()
              << " pass; adapted: " << adapted_pass << "/" << entries.size() << " pass, " << refused
              << " refused with a reason, " << failed << " fail";
    if (not_loaded > 0) std::cout << ", " << not_loaded << " not loaded";
    std::cout << "\n";
  }
  return failed == 0 && not_loaded == 0 ? 0 : 1;
}

// --card: the capability card, as Markdown (or JSON with --json) on stdout, or both files
// (OUT.json and OUT.md) with --out OUT.
int run_card(const CheckArgs& args) {
  const bool model = !args.model_dir.empty();
  auto card = capability_card(model ? args.model_dir : args.template_file, model);
  if (!card) {
    std::cerr << "chatwire check --card: "
              << naming(card.error(), model ? args.model_dir : args.template_file).to_string()
              << "\n";
    return 1;
  }
  const std::string text = card->dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  if (!args.out.empty()) {
    std::ofstream json_file(args.out + ".json", std::ios::binary);
    std::ofstream md_file(args.out + ".md", std::ios::binary);
    json_file << text;
    md_file << card_markdown(*card);
    if (!json_file || !md_file) {
      std::cerr << "chatwire check --card: cannot write " << args.out << ".json/.md\n";
      return 1;
    }
    std::cout << "wrote " << args.out << ".json and " << args.out << ".md\n";
    return 0;
  }
  std::cout << (args.json_output ? text : card_markdown(*card));
  return 0;
}

}  // namespace

void add_check(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<CheckArgs>();
  auto* cmd = root.add_subcommand(
      "check", "Acceptance check: adapt and render a sentinel tool conversation");
  auto* t = cmd->add_option("--template", args->template_file, "chat template file (.jinja)");
  auto* m = cmd->add_option("--model", args->model_dir, "checkpoint directory");
  auto* a = cmd->add_option("--all", args->all_dir, "every .jinja file and model directory in DIR");
  t->excludes(m)->excludes(a);
  m->excludes(a);
  cmd->add_option("--call-syntax", args->call_syntax, "text syntax for calls a template drops")
      ->check(CLI::IsMember(adapt::call_syntax_names()));
  cmd->add_flag("--json", args->json_output, "JSON output");
  cmd->add_flag("--print-request", args->print_request, "print the sentinel request and exit");
  auto* card = cmd->add_flag("--card", args->card,
                             "the capability card (Markdown; JSON with --json; both with --out)");
  card->excludes(a);
  cmd->add_option("--out", args->out, "with --card: write OUT.json and OUT.md")->needs(card);
  cmd->callback([args, &exit_code] {
    if (args->print_request) {
      std::cout << adapt::sentinel_request().dump(1) << "\n";
      exit_code = 0;
      return;
    }
    if (args->card) {
      if (args->template_file.empty() && args->model_dir.empty()) {
        std::cerr << "chatwire check --card: give --template FILE or --model DIR\n";
        exit_code = 2;
        return;
      }
      exit_code = run_card(*args);
    } else if (!args->all_dir.empty()) {
      exit_code = run_all(*args);
    } else if (!args->template_file.empty()) {
      exit_code = run_one(*args, args->template_file, false, nullptr);
    } else if (!args->model_dir.empty()) {
      exit_code = run_one(*args, args->model_dir, true, nullptr);
    } else {
      std::cerr << "chatwire check: give --template FILE, --model DIR or --all DIR\n";
      exit_code = 2;
    }
  });
}

}  // namespace chatwire::cli
