// The response-template half of `chatwire parse`: read the prompt prefix, the tools and the model
// output, feed the parser (whole, or --stream N bytes at a time) and print what it gives.
#include "parse_response.hpp"

#include <cstdio>

#include "io.hpp"
#include "json_writer.hpp"

namespace chatwire::cli {

namespace {

bool read_text(const std::string& path, std::size_t max_bytes, std::string& out) {
  std::string error;
  auto text = io::read_file(path, max_bytes, error);
  if (!text) {
    std::fprintf(stderr, "chatwire parse: %s: %s\n", path.c_str(), error.c_str());
    return false;
  }
  out = std::move(*text);
  return true;
}

int fail(const Error& e) {
  std::fprintf(stderr, "chatwire parse: %s\n", e.to_string().c_str());
  return 1;
}

}  // namespace

int run_response_template(const response::Template& tmpl, const ResponseTemplateRun& run) {
  std::string prefix;
  if (!run.prefix_path.empty() && !read_text(run.prefix_path, run.max_input_bytes, prefix))
    return 1;
  response::Json tools;
  if (!run.tools_path.empty()) {
    std::string text;
    if (!read_text(run.tools_path, run.max_input_bytes, text)) return 1;
    tools = response::Json::parse(text, nullptr, false);
    if (tools.is_discarded())
      return fail(Error{"ValueError", "not valid JSON", 0, 0, run.tools_path});
  }
  std::string read_error;
  auto read = io::WholeInput::read(0, run.max_input_bytes, read_error);
  if (!read) {
    std::fprintf(stderr, "chatwire parse: standard input: %s\n", read_error.c_str());
    return 2;
  }
  const std::string_view input = read->view();
  auto parser = response::Parser::create(tmpl, prefix, tools);
  if (!parser) return fail(parser.error());
  io::Writer& out = io::out();
  const auto print = [&](const std::vector<response::Event>& events) {
    for (const auto& e : events) {
      write_json(out, response::to_json(e));
      out.put('\n');
    }
  };
  if (run.stream) print(parser->initial_events());
  for (std::size_t i = 0; i < input.size() || i == 0; i += run.stream ? run.stream : input.size()) {
    const std::size_t n = run.stream ? run.stream : input.size();
    auto events = parser->feed(input.substr(i, n));
    if (!events) return fail(events.error());
    if (run.stream) print(*events);
    if (n == 0) break;
  }
  auto done = parser->finalize();
  if (!done) return fail(done.error());
  if (run.stream) {
    print(done->events);
    write_json(out, response::Json{{"type", "message"}, {"message", done->message}});
  } else {
    write_json(out, done->message);
  }
  out.put('\n');
  out.flush();
  return 0;
}

}  // namespace chatwire::cli
