// Rendering chat requests: modes, continue_final_message, variables, masks, threads.
// Expected texts follow transformers' rules (checked against the oracle by goldens_test).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "chatwire/chat.hpp"

namespace {

using chatwire::Value;
using chatwire::chat::ChatRequest;
using chatwire::chat::Mode;
using chatwire::chat::Model;
using chatwire::chat::RenderOptions;
using chatwire::jinja::Template;

const std::string kModels = std::string(CHATWIRE_DATA_DIR) + "/models/";

// Keeps every message, marks the generation prompt.
constexpr const char* kKeepAll =
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}";

Template compile(const char* source) {
  auto t = Template::compile(source);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().to_string());
  return std::move(t.value());
}

ChatRequest request(const char* json) {
  auto r = chatwire::chat::parse_request_json(json);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return std::move(r.value());
}

std::string render_text(const Template& t, const ChatRequest& r, RenderOptions options = {}) {
  auto result = chatwire::chat::render(t, r, Value::empty_dict(), options);
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().to_string());
  return result.ok() ? result->text : std::string();
}

const char* kPrefill =
    R"({"messages": [{"role": "user", "content": "Write JSON"}, {"role": "assistant", "content": "{\"answer\": "}]})";

TEST(ChatRender, ModesSetTheTwoFlags) {
  Template t = compile(kKeepAll);
  ChatRequest r = request(kPrefill);
  RenderOptions reply, prefill, training;
  reply.mode = Mode::reply;
  prefill.mode = Mode::prefill;
  training.mode = Mode::training;
  EXPECT_EQ(render_text(t, r, training),
            "<user>Write JSON</user><assistant>{\"answer\": </assistant>");
  EXPECT_EQ(render_text(t, r, prefill), "<user>Write JSON</user><assistant>{\"answer\": ");
  auto replied = chatwire::chat::render(t, r, Value::empty_dict(), reply);
  ASSERT_TRUE(replied.ok());
  EXPECT_EQ(replied->text,
            "<user>Write JSON</user><assistant>{\"answer\": </assistant><assistant>");
  EXPECT_FALSE(replied->warnings.empty());  // a reply after an assistant message is unusual
}

TEST(ChatRender, PrefillNeedsAnAssistantMessageLast) {
  Template t = compile(kKeepAll);
  ChatRequest r = request(
      R"({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]})");
  RenderOptions prefill;
  prefill.mode = Mode::prefill;
  auto result = chatwire::chat::render(t, r, Value::empty_dict(), prefill);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, "RequestError");
  EXPECT_EQ(result.error().path, "messages[1].role");
}

TEST(ChatRender, ContinueWithGenerationPromptIsAnError) {
  Template t = compile(kKeepAll);
  ChatRequest r = request(kPrefill);
  r.add_generation_prompt = true;
  r.continue_final_message = true;
  auto result = chatwire::chat::render(t, r, Value::empty_dict());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, "ValueError");
  EXPECT_EQ(result.error().message,
            "continue_final_message and add_generation_prompt are not compatible.");
}

TEST(ChatRender, ContinueCutsWithTheTrailingSpaceRule) {
  ChatRequest r = request(kPrefill);
  r.continue_final_message = true;
  // The marker survives with its space: cut exactly there, keeping the message's own space.
  EXPECT_EQ(render_text(compile(kKeepAll), r), "<user>Write JSON</user><assistant>{\"answer\": ");
  // The template trims content, so the marker's space is gone: cut and rstrip.
  Template trims = compile("{% for m in messages %}[{{ m.content | trim }}]{% endfor %}");
  EXPECT_EQ(render_text(trims, r), "[Write JSON][{\"answer\":");
}

TEST(ChatRender, ContinueUsesTheLastTextPart) {
  ChatRequest r =
      request(R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content":
      [{"type": "text", "text": "one"}, {"type": "text", "text": "two "}, {"type": "image"}]}],
      "continue_final_message": true})");
  Template t = compile(
      "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}"
      "{% for p in m.content %}({{ p.text }}){% endfor %}{% endif %}{% endfor %}");
  EXPECT_EQ(render_text(t, r), "hi(one)(two ");
  // The request itself is not modified (the marker goes on a copy).
  EXPECT_EQ(r.messages.as_list()[1]
                .dict_find(std::string_view("content"))
                ->as_list()[1]
                .dict_find(std::string_view("text"))
                ->as_string(),
            "two ");
}

TEST(ChatRender, ContinueFailsWhenTheTemplateDropsTheMessage) {
  ChatRequest r = request(kPrefill);
  r.continue_final_message = true;
  Template users_only = compile(
      "{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}{% endif %}{% endfor %}");
  auto result = chatwire::chat::render(users_only, r, Value::empty_dict());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().type, "ValueError");
  EXPECT_NE(result.error().message.find("final message does not appear"), std::string::npos);
}

TEST(ChatRender, VariablesOrderTokensThenMapThenKwargs) {
  Template t =
      compile("{{ bos_token }}|{{ eos_token }}|{{ tools }}|{{ documents }}|{{ tools is defined }}");
  ChatRequest r = request(R"({"messages": [{"role": "user", "content": "a"}],
      "special_tokens_map": {"eos_token": "<map-eos>"}, "kwargs": {"bos_token": "<kw-bos>"}})");
  auto tokens = Value::dict_unchecked(
      {{Value("bos_token"), Value("<s>")}, {Value("eos_token"), Value("</s>")}});
  auto result = chatwire::chat::render(t, r, tokens);
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  EXPECT_EQ(result->text, "<kw-bos>|<map-eos>|None|None|True");
}

TEST(ChatRender, GenerationSpansInCodePointsAndBytes) {
  Template t = compile(
      "{% for m in messages %}{% if m.role == 'assistant' %}A:{% generation %}{{ m.content }}"
      "{% endgeneration %}{% else %}{{ m.content }}{% endif %}\n{% endfor %}");
  ChatRequest r = request(R"({"messages": [{"role": "user", "content": "\u00fc\ud83d\ude00"},
      {"role": "assistant", "content": "\u4f60\u597d"}]})");
  auto result = chatwire::chat::render(t, r, Value::empty_dict());
  ASSERT_TRUE(result.ok()) << result.error().to_string();
  EXPECT_TRUE(result->uses_generation);
  ASSERT_EQ(result->generation.size(), 1u);
  // trim_blocks eats the newline after {% endif %}: the output is "ü😀A:你好" (the oracle's
  // spans: [[4, 6]]). "ü😀A:" is 4 code points, 2 + 4 + 2 = 8 bytes; "你好" is 6 bytes.
  EXPECT_EQ(result->text, "\u00fc\U0001F600A:\u4f60\u597d");
  EXPECT_EQ(result->generation[0].begin, 4u);
  EXPECT_EQ(result->generation[0].end, 6u);
  EXPECT_EQ(result->generation[0].begin_byte, 8u);
  EXPECT_EQ(result->generation[0].end_byte, 14u);
}

TEST(ChatRender, MaskWithoutGenerationTagWarns) {
  Template t = compile(kKeepAll);
  RenderOptions options;
  options.assistant_mask = true;
  auto result = chatwire::chat::render(t, request(kPrefill), Value::empty_dict(), options);
  ASSERT_TRUE(result.ok());
  EXPECT_FALSE(result->uses_generation);
  EXPECT_EQ(result->warnings.size(), 1u);
}

TEST(ChatRender, ModelRendersFromManyThreads) {
  auto model = Model::load(kModels + "jinja-file");
  ASSERT_TRUE(model.ok());
  ChatRequest r =
      request(R"({"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q"},
      {"role": "assistant", "content": "A"}, {"role": "user", "content": "Q2"}], "add_generation_prompt": true})");
  RenderOptions options;
  options.now = "2026-08-19T10:00:00";
  auto first = model->render(r, options);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  std::vector<std::thread> threads;
  std::vector<int> same(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < 50; ++i) {
        auto again = model->render(r, options);
        auto explicit_source =
            model->select(std::string("{{ bos_token }}" + std::to_string(i % 3)), false);
        if (again.ok() && again->text == first->text && explicit_source.ok()) ++same[k];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(same[k], 50);
}

TEST(ChatRender, NoTemplateModelRefusesToGuess) {
  auto model = Model::load(kModels + "hf-gpt2");
  ASSERT_TRUE(model.ok());
  auto result = model->render(request(kPrefill));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("has no chat template"), std::string::npos);
}

}  // namespace
