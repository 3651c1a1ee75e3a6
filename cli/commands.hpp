// The chatwire command line: one subcommand per job, each in its own file
// (cli/<name>.cpp). To add a subcommand, write `void add_<name>(CLI::App&, int&)`
// and list it in kSubcommands in cli/main.cpp.
#pragma once

#include <CLI/CLI.hpp>

namespace chatwire::cli {

// For a count or limit read into an unsigned integer: CLI11 converts with strtoull, which takes
// "-3" as 2^64-3 (a limit gone, a loop without end), so a leading minus is refused first.
inline CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& text) {
        const auto first = text.find_first_not_of(" \t");
        return first != std::string::npos && text[first] == '-'
                   ? std::string("expected a non-negative integer, got " + text)
                   : std::string();
      },
      "NONNEGATIVE", "non_negative");
}

// Each function registers one subcommand on `root`. Its callback runs the job and
// stores the process exit code in `exit_code` (0 success, 1 failure, 2 usage).
void add_render(CLI::App& root, int& exit_code);
void add_probe(CLI::App& root, int& exit_code);
void add_survey(CLI::App& root, int& exit_code);
void add_adapt(CLI::App& root, int& exit_code);
void add_check(CLI::App& root, int& exit_code);
void add_parse(CLI::App& root, int& exit_code);
void add_tokenize(CLI::App& root, int& exit_code);
void add_serve(CLI::App& root, int& exit_code);

}  // namespace chatwire::cli
