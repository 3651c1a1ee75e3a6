// The profile run of a profile-guided build (cmake/pgo/pgo.cmake): compiles every bundled
// template and renders it with every bundled conversation, each render repeated, so that
// GCC's counts weigh rendering (what users do many times per template) over compiling. Each
// render is of a fresh request, as in `render --batch` and a server: the conversation's JSON
// parsed into a new value tree, rendered, and released. With one parse per conversation the
// JSON parser and the tree's release were trained as cold code.
//
//   chatwire_pgo_train DATA_DIR REPEAT
//
// The renders' results are not checked here (the test suite checks them); failures are
// part of the profile too (templates that raise on some conversations).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The files of `dir` ending in `extension`, sorted (a deterministic profile).
std::vector<std::filesystem::path> files(const std::filesystem::path& dir,
                                         std::string_view extension) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == extension) found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: chatwire_pgo_train DATA_DIR REPEAT\n");
    return 2;
  }
  const std::filesystem::path data = argv[1];
  const int repeat = std::atoi(argv[2]);
  std::vector<std::string> contexts;  // the JSON texts of the conversations that parse
  for (const auto& path : files(data / "conversations", ".json")) {
    std::string text = read_file(path);
    if (chatwire::parse_json(text).ok()) contexts.push_back(std::move(text));
  }
  chatwire::jinja::RenderOptions options;
  options.now = "2026-08-19T10:00:00";
  std::size_t templates = 0, renders = 0, rendered = 0;
  for (const auto& path : files(data / "templates", ".jinja")) {
    auto compiled = chatwire::jinja::Template::compile(read_file(path));
    if (!compiled.ok()) continue;
    ++templates;
    for (const auto& text : contexts) {
      for (int i = 0; i < repeat; ++i) {
        ++renders;
        auto context = chatwire::parse_json(text);
        rendered += context.ok() && compiled->render(*context, options).ok() ? 1 : 0;
      }
    }
  }
  std::printf("chatwire_pgo_train: %zu templates x %zu conversations x %d: %zu renders (%zu ok)\n",
              templates, contexts.size(), repeat, renders, rendered);
  return templates > 0 && !contexts.empty() ? 0 : 1;
}
