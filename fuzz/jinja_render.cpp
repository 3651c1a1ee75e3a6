// libFuzzer: renders arbitrary templates against a chat-like context (or, when the
// input holds a NUL byte, the JSON after it as the context) with small limits. Every
// outcome must be an output or an Error; never a crash, hang or runaway allocation.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"

namespace {

const chatwire::Value& default_context() {
  static const chatwire::Value context = [] {
    auto parsed = chatwire::parse_json(R"({
      "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi <b> & 'q' é😀"},
        {"role": "assistant", "content": null, "tool_calls": [
          {"id": "c1", "type": "function",
           "function": {"name": "f", "arguments": {"a": 1, "b": [1.5, true, null]}}}]},
        {"role": "tool", "content": "42", "tool_call_id": "c1"}],
      "tools": [{"type": "function", "function": {"name": "f", "description": "d",
                 "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}],
      "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
      "n": 3, "f": -2.5, "s": "text", "l": [3, 1, 2], "d": {"k": "v"}
    })");
    return parsed ? parsed.value() : chatwire::Value::empty_dict();
  }();
  return context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view source = input;
  chatwire::Value context = default_context();
  if (auto nul = input.find('\0'); nul != std::string_view::npos) {
    source = input.substr(0, nul);
    chatwire::JsonParseOptions json_options;
    json_options.max_depth = 64;
    auto parsed = chatwire::parse_json(input.substr(nul + 1), json_options);
    if (parsed && parsed->is_dict()) context = parsed.value();
  }
  chatwire::jinja::CompileOptions compile_options;
  compile_options.limits.max_parse_depth = 200;
  auto compiled = chatwire::jinja::Template::compile(source, compile_options);
  if (!compiled) return 0;
  chatwire::jinja::RenderOptions options;
  options.now = "2026-08-19T10:00:00";
  options.limits.max_steps = 20000;
  options.limits.max_recursion = 50;
  options.limits.max_output_bytes = 1u << 20;
  options.limits.max_string_bytes = 1u << 20;
  options.limits.max_container_items = 1u << 14;
  options.limits.max_range = 10000;
  auto rendered = compiled->render(context, options);
  (void)rendered;
  return 0;
}
