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

#include "chatwire/adapt_json.hpp"
#include "chatwire/probe_json.hpp"
#include "chatwire/readback_json.hpp"
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
    options.special_tokens = target->measured_tokens;  // checked as the probe measured
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

// The output parser column: the parser derived from each template's renders and whether its
// own calls and reasoning come back (the round trip; readback is built on the probe).
struct ParserColumn {
  std::string name, parser = "-", calls = "-", reasoning = "-", verdict;
};

std::vector<ParserColumn> parser_column(const std::filesystem::path& dir,
                                        const std::vector<probe::SurveyEntry>& entries) {
  std::vector<ParserColumn> rows;
  for (const auto& e : entries) {
    std::filesystem::path path = dir / e.name;
    if (!std::filesystem::exists(path)) path = dir;
    auto loaded = std::filesystem::is_directory(path) ? readback::choose_parser_model(path)
                                                      : readback::choose_parser_file(path);
    ParserColumn row;
    row.name = e.name;
    if (!loaded) {
      row.verdict = loaded.error().to_string();
      rows.push_back(std::move(row));
      continue;
    }
    const auto& c = loaded->choice;
    if (c.syntax) row.parser = c.syntax->name() + " " + std::string(c.syntax->family());
    auto state = [](bool rendered, bool back) {
      return !rendered ? std::string("-") : back ? std::string("read back") : std::string("no");
    };
    // The round trip proper needs the prompt to be a prefix of the conversation; otherwise the
    // parser was derived from the conversation's render ("history").
    bool calls_applicable = false, reasoning_applicable = false, history = false;
    for (const auto& t : c.trips) {
      if (t.kind == "calls") calls_applicable = t.applicable && t.prefix;
      if (t.kind == "calls") history = t.applicable && !t.prefix;
      if (t.kind == "reasoning") reasoning_applicable = t.applicable && t.prefix;
    }
    row.calls = state(calls_applicable, c.calls_read_back);
    if (calls_applicable && c.template_bug) row.calls = "template bug: " + c.template_bug->cause;
    if (history) row.calls = c.calls_read_back ? "history: read back" : "history: no";
    row.reasoning = state(reasoning_applicable, c.reasoning_read_back);
    row.verdict = c.verdict;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string parser_count_line(const std::vector<ParserColumn>& rows) {
  std::size_t calls = 0, calls_ok = 0, bugs = 0, reasoning = 0, reasoning_ok = 0;
  std::size_t history = 0, history_ok = 0;
  for (const auto& r : rows) {
    history += r.calls.starts_with("history");
    history_ok += r.calls == "history: read back";
    calls += r.calls != "-" && !r.calls.starts_with("history");
    calls_ok += r.calls == "read back";
    bugs += r.calls.starts_with("template bug");
    reasoning += r.reasoning != "-";
    reasoning_ok += r.reasoning == "read back";
  }
  return "calls read back " + std::to_string(calls_ok) + "/" + std::to_string(calls) + " (" +
         std::to_string(bugs) + " unreadable renders reported as template bugs), reasoning " +
         std::to_string(reasoning_ok) + "/" + std::to_string(reasoning) +
         "; where the prompt is not a prefix, parsers derived from the conversation's render " +
         std::to_string(history_ok) + "/" + std::to_string(history);
}

std::string parser_markdown(const std::vector<ParserColumn>& rows) {
  std::string out = "\n## Output parser and round trip\n\n";
  out +=
      "The parser derived from each template's own renders of two calls and of reasoning "
      "(`chatwire parse --template`), proven by parsing them back: " +
      parser_count_line(rows) +
      ".\n\n| template | parser | calls | reasoning | verdict |\n|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    std::string verdict = r.verdict;
    for (char& c : verdict)
      if (c == '|' || c == '\n') c = ' ';
    if (verdict.size() > 160) verdict = verdict.substr(0, 160) + "...";
    out += "| " + r.name + " | " + r.parser + " | " + r.calls + " | " + r.reasoning + " | " +
           verdict + " |\n";
  }
  return out;
}

nlohmann::ordered_json parser_json(const std::vector<ParserColumn>& rows) {
  nlohmann::ordered_json templates = nlohmann::ordered_json::object();
  for (const auto& r : rows)
    templates[r.name] = {{"parser", r.parser},
                         {"calls", r.calls},
                         {"reasoning", r.reasoning},
                         {"verdict", r.verdict}};
  return {{"summary", parser_count_line(rows)}, {"templates", std::move(templates)}};
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
    // A path that is neither a directory nor a file is refused before anything is surveyed.
    if (std::error_code ec; !std::filesystem::exists(args->dir, ec)) {
      std::fprintf(stderr, "chatwire survey: %s: no such file or directory\n", args->dir.c_str());
      exit_code = 1;
      return;
    }
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
    auto parsers = parser_column(*dir, entries);
    std::string out;
    if (*format == "json") {
      auto j = probe::survey_json(entries);
      j["raw_vs_adapted"] = adapt_json(column);
      j["output_parser"] = parser_json(parsers);
      out = j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    } else {
      out = probe::survey_markdown(entries) + adapt_markdown(column) + parser_markdown(parsers);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!*quiet)
      std::fprintf(stderr, "chatwire survey: %zu templates in %.2f s\n", entries.size(), seconds);
    bool any_probed = false;
    for (const auto& e : entries) any_probed |= e.profile.ok();
    // Each template that could not be probed is named on stderr too, not only in the tables.
    for (const auto& e : entries)
      if (!e.profile.ok())
        std::fprintf(stderr, "chatwire survey: %s: %s\n", e.name.c_str(),
                     e.profile.error().to_string().c_str());
    exit_code = entries.empty() || !any_probed ? 1 : 0;
  });
}

}  // namespace chatwire::cli
