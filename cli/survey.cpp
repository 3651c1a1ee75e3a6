// `chatwire survey`: the probe over every template in a directory (.jinja files and model
// directories), printed as the survey's tables (Markdown) or as JSON.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "chatwire/probe.hpp"
#include "commands.hpp"

namespace chatwire::cli {

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
    std::string out = *format == "json"
                          ? probe::survey_json(entries).dump(
                                1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
                                "\n"
                          : probe::survey_markdown(entries);
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
