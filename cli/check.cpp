// `chatwire check`: not written yet (placeholder so the command table links).
#include <cstdio>

#include "commands.hpp"

namespace chatwire::cli {

void add_check(CLI::App& root, int& exit_code) {
  auto* cmd = root.add_subcommand("check", "(not implemented yet)");
  cmd->callback([&exit_code] {
    std::fprintf(stderr, "chatwire check: not implemented yet\n");
    exit_code = 2;
  });
}

}  // namespace chatwire::cli
