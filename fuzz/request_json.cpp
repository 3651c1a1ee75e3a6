// libFuzzer: arbitrary bytes as request JSON through the three entry points that take it from
// strangers: chatwire::parse_json, chat::parse_request_json (with and without validation, then
// a render with a tiny fixed template) and chat::BatchRenderer::render_line (the batch protocol,
// the bytes used as the `chat` object, as a `context`, and as a whole line). Nothing may crash or
// hang, every call returns a value or an error, and every batch result is one JSON object line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "chatwire/chat.hpp"
#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"

namespace {

// Uses every part of a request a template can read, and the {% generation %} tag.
constexpr std::string_view kTemplate =
    "{{ bos_token }}{% for m in messages %}<{{ m.role }}>"
    "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}"
    "{% else %}{{ m.content }}{% endif %}"
    "{% for c in m.tool_calls or [] %}{{ c.function.name }}({{ c.function.arguments | tojson }})"
    "{% endfor %}\n{% endfor %}{% if tools %}{{ tools | tojson }}{% endif %}"
    "{% if documents %}{{ documents | length }}{% endif %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}";

const chatwire::jinja::Template& tmpl() {
  static const auto* t = [] {
    auto compiled = chatwire::jinja::Template::compile(kTemplate);
    if (!compiled) std::abort();
    return new chatwire::jinja::Template(std::move(*compiled));
  }();
  return *t;
}

// A batch result line must be one JSON object with "ok".
void check_line(const std::string& line) {
  if (line.empty()) return;  // blank request line
  auto parsed = chatwire::parse_json(line);
  if (!parsed || !parsed->is_dict()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  chatwire::jinja::Limits limits;
  limits.max_steps = 200000;  // keep one input fast; a limit error is a fine outcome
  limits.max_output_bytes = 1 << 20;

  auto value = chatwire::parse_json(text);
  if (value) (void)chatwire::to_json_string(*value);

  for (bool check : {true, false}) {
    auto request = chatwire::chat::parse_request_json(text, {}, check);
    if (!request) {
      if (request.error().type.empty()) std::abort();  // an error must say what it is
      continue;
    }
    chatwire::chat::RenderOptions options;
    options.limits = limits;
    options.validate = check;
    options.now = "2026-08-19T10:00:00";
    auto tokens = chatwire::parse_json(R"({"bos_token": "<s>", "eos_token": "</s>"})");
    auto result = chatwire::chat::render(tmpl(), *request, *tokens, options);
    if (!result && result.error().type.empty()) std::abort();
  }

  static chatwire::chat::BatchRenderer* renderer = [] {
    chatwire::chat::BatchOptions options;
    options.limits.max_steps = 200000;
    options.limits.max_output_bytes = 1 << 20;
    return new chatwire::chat::BatchRenderer(options);
  }();
  // The bytes as a whole line: only a line without a newline is one request.
  if (text.find('\n') == std::string_view::npos) check_line(renderer->render_line(text));
  std::string tmpl_json;
  (void)chatwire::dump_json(tmpl_json, chatwire::Value(std::string(kTemplate)));
  std::string body;
  if (value && chatwire::dump_json(body, *value)) {  // re-serialised: one line, valid JSON
    check_line(renderer->render_line(R"({"id": 1, "template": )" + tmpl_json +
                                     R"(, "now": "2026-08-19T10:00:00", "chat": )" + body + "}"));
    check_line(renderer->render_line(R"({"id": 2, "template": )" + tmpl_json + R"(, "context": )" +
                                     body + "}"));
  }
  return 0;
}
