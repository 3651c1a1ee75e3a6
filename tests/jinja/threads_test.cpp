// One compiled template and one context rendered from many threads at once.
//
// A render does not count references to the values it did not build (the context, the
// template's constants) and counts its own without atomics (detail::RenderScope). This
// test keeps render-built values that hold context values (slices, namespace attributes,
// lists, sorted copies, macro arguments) alive across loop iterations on four threads at
// once; a wrong count frees a context value under another render (ASan/UBSan run) or
// changes the output.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"

namespace {

using chatwire::Value;
using chatwire::jinja::RenderOptions;
using chatwire::jinja::Template;

constexpr const char* kTemplate =
    R"({%- macro show(m) -%}[{{ m.role }}:{{ m.content | trim }}]{%- endmacro -%}
{%- set ns = namespace(last=none, seen=[]) -%}
{%- set rest = messages[1:] -%}
{%- for message in rest | reverse -%}
  {%- set ns.last = message -%}
  {%- set ns.seen = ns.seen + [message] -%}
  {{- show(message) -}}
{%- endfor -%}
|{{ ns.last.role }}|{{ ns.seen | length }}|
{%- for key, value in messages[0] | dictsort -%}{{ key }}={{ value }};{%- endfor -%}
{{- tools | map(attribute='function') | map(attribute='name') | join(',') -}}
|{{ tools | tojson }}|{{ messages | selectattr('role', 'equalto', 'user') | list | length }})";

constexpr const char* kContext = R"({
  "messages": [
    {"role": "system", "content": "  be brief  "},
    {"role": "user", "content": "héllo"},
    {"role": "assistant", "content": "hi "},
    {"role": "user", "content": "\u4f60\u597d"}
  ],
  "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
            {"type": "function", "function": {"name": "search", "parameters": {}}}]
})";

TEST(JinjaThreads, ConcurrentRendersShareTemplateAndContext) {
  auto compiled = Template::compile(kTemplate);
  ASSERT_TRUE(compiled.ok()) << compiled.error().to_string();
  auto context = chatwire::parse_json(kContext);
  ASSERT_TRUE(context.ok());
  RenderOptions options;
  const auto first = compiled->render(*context, options);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  ASSERT_NE(first->output.find("[user:你好][assistant:hi][user:héllo]|user|3|"), std::string::npos)
      << first->output;

  constexpr int kThreads = 4, kRenders = 300;
  std::vector<int> same(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRenders; ++i) {
        const auto again = compiled->render(*context, options);
        if (again.ok() && again->output == first->output) ++same[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(same[t], kRenders) << "thread " << t;

  // The context and the template are intact afterwards, here and on a new thread.
  const auto after = compiled->render(*context, options);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->output, first->output);
  std::string on_other_thread;
  std::thread([&] {
    const auto r = compiled->render(*context, options);
    if (r.ok()) on_other_thread = r->output;
  }).join();
  EXPECT_EQ(on_other_thread, first->output);
}

}  // namespace
