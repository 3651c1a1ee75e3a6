// `chatwire survey`: the probe over every template in a directory (.jinja files and model
// directories), printed as the survey's tables (Markdown) or as JSON.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "chatwire/adapt.hpp"
#include "chatwire/probe.hpp"
#include "commands.hpp"

namespace chatwire::cli {

namespace {

// The survey's last column (issue 7 §3): the sentinel tool request as transformers takes it
// (raw) and as the adapter rewrites it (adapted), pass/fail per template. It lives here, not
// in the probe library, because the adapter is built on the probe.
struct AdaptColumn {
  std::string name, raw, adapted, reason;
};

std::vector<AdaptColumn> adapt_column(const std::filesystem::path& dir,
                                      const std::vector<probe::SurveyEntry>& entries) {
  std::vector<AdaptColumn> rows;
  for (const auto& e : entries) {
    std::filesystem::path path = dir / e.name;
    if (!std::filesystem::exists(path)) path = dir;  // `dir` was itself the template
    auto target = std::filesystem::is_directory(path) ? adapt::load_model_dir(path)
                                                      : adapt::load_template_file(path);
    AdaptColumn row{e.name, "fail", "fail", ""};
    if (!target) {
      row.adapted = "refused";
      row.reason = target.error().to_string();
      rows.push_back(std::move(row));
      continue;
    }
    adapt::Options options;
    options.special_tokens = target->special_tokens;
    row.raw = adapt::check_raw(*target->tmpl, options).passed ? "pass" : "fail";
    auto checked = adapt::check(target->profile, *target->tmpl, options);
    row.adapted = checked.refused ? "refused" : checked.passed ? "pass" : "fail";
    row.reason = checked.error;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string count_line(const std::vector<AdaptColumn>& rows) {
  std::size_t raw = 0, adapted = 0, refused = 0;
  for (const auto& r : rows) {
    raw += r.raw == "pass";
    adapted += r.adapted == "pass";
    refused += r.adapted == "refused";
  }
  const std::string n = std::to_string(rows.size());
  return std::string("raw ") + std::to_string(raw) + "/" + n + " pass; adapted " +
         std::to_string(adapted) + "/" + n + " pass, " + std::to_string(refused) +
         " refused with a reason, " + std::to_string(rows.size() - adapted - refused) + " fail";
}

std::string adapt_markdown(const std::vector<AdaptColumn>& rows) {
  std::string out = "\n## Raw vs adapted request\n\n";
  out +=
      "The sentinel tool conversation (`chatwire check`): every sentinel present and no past "
      "reasoning. " +
      count_line(rows) + ".\n\n| template | raw | adapted | reason |\n|---|---|---|---|\n";
  for (const auto& r : rows) {
    std::string reason = r.reason;
    for (char& c : reason)
      if (c == '|' || c == '\n') c = ' ';
    out += "| " + r.name + " | " + r.raw + " | " + r.adapted + " | " + reason + " |\n";
  }
  return out;
}

nlohmann::ordered_json adapt_json(const std::vector<AdaptColumn>& rows) {
  nlohmann::ordered_json templates = nlohmann::ordered_json::object();
  for (const auto& r : rows) {
    nlohmann::ordered_json j = {{"raw", r.raw}, {"adapted", r.adapted}};
    if (!r.reason.empty()) j["reason"] = r.reason;
    templates[r.name] = std::move(j);
  }
  return {{"summary", count_line(rows)}, {"templates", std::move(templates)}};
}

}  // namespace

void add_survey(CLI::App& root, int& exit_code) {
  auto* cmd = root.add_subcommand(
      "survey", "Probe every template in a directory and print the survey tables");
  struct Args {
    std::string dir, format = "md";
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("DIR", args->dir, "directory of .jinja files and/or model directories")
      ->required();
  cmd->add_option("--format", args->format, "md (tables) or json (every profile)")
      ->check(CLI::IsMember({"md", "json"}));
  cmd->add_flag("--quiet", args->quiet, "no progress line on stderr");
  cmd->callback([args, &exit_code] {
    const std::string* dir = &args->dir;
    const std::string* format = &args->format;
    const bool* quiet = &args->quiet;
    auto started = std::chrono::steady_clock::now();
    // A progress line rewritten in place on a terminal; into a log, one line per tenth.
    const bool terminal = isatty(fileno(stderr)) != 0;
    auto progress = [&](std::size_t done, std::size_t total, std::string_view name) {
      if (*quiet) return;
      if (terminal) {
        std::fprintf(stderr, "\rchatwire survey: [%zu/%zu] %-60.60s", done, total,
                     std::string(name).c_str());
        if (done == total) std::fprintf(stderr, "\n");
      } else if (done == total || done % std::max<std::size_t>(1, total / 10) == 0) {
        std::fprintf(stderr, "chatwire survey: [%zu/%zu] %s\n", done, total,
                     std::string(name).c_str());
      }
      std::fflush(stderr);
    };
    auto entries = probe::survey(*dir, {}, progress);
    auto column = adapt_column(*dir, entries);
    std::string out;
    if (*format == "json") {
      auto j = probe::survey_json(entries);
      j["raw_vs_adapted"] = adapt_json(column);
      out = j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    } else {
      out = probe::survey_markdown(entries) + adapt_markdown(column);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!*quiet)
      std::fprintf(stderr, "chatwire survey: %zu templates in %.2f s\n", entries.size(), seconds);
    bool any_probed = false;
    for (const auto& e : entries) any_probed |= e.profile.ok();
    exit_code = entries.empty() || !any_probed ? 1 : 0;
  });
}

}  // namespace chatwire::cli
