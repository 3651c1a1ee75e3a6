// Entry point of the `chatwire` command: builds the subcommand table and runs one.
#include <malloc.h>

#include <cstdio>
#include <exception>
#include <iostream>

#include "commands.hpp"
#include "io.hpp"

namespace {

using AddSubcommand = void (*)(CLI::App&, int&);

// One row per subcommand; the order is the order of `chatwire --help`.
constexpr AddSubcommand kSubcommands[] = {
    chatwire::cli::add_render,   chatwire::cli::add_probe, chatwire::cli::add_survey,
    chatwire::cli::add_adapt,    chatwire::cli::add_check, chatwire::cli::add_parse,
    chatwire::cli::add_tokenize, chatwire::cli::add_serve,
};

}  // namespace

int main(int argc, char** argv) {
  // A command runs once over one input: large buffers (a 16 MB model output, its parsed copies)
  // come from the heap and are reused when freed, instead of a fresh mapping each, whose every
  // page faults in zeroed and is unmapped again (about a tenth of `parse` on 16 MB).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  CLI::App app{"chatwire: render, probe, adapt and parse LLM chat formats"};
  app.require_subcommand(1);
  int exit_code = 0;
  for (AddSubcommand add : kSubcommands) add(app, exit_code);
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) known = known || sub->check_name(argv[1]);
    if (!known) {
      std::fprintf(stderr, "chatwire: unknown command '%s' (see chatwire --help)\n", argv[1]);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (105, 106, 109, ...) are usage errors: 2, as every command documents.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chatwire: %s\n", e.what());
    return 1;
  }
  // Output that never reached its file (a full disk, a closed descriptor) is a failure: a
  // script reading the exit status must not take a truncated result for the whole one.
  chatwire::cli::io::out().flush();
  std::cout.flush();
  if (!chatwire::cli::io::out().ok() || std::fflush(stdout) != 0 || std::ferror(stdout) ||
      !std::cout) {
    std::fprintf(stderr, "chatwire: could not write standard output\n");
    return exit_code != 0 ? exit_code : 1;
  }
  return exit_code;
}
