// Model directories: where templates and special tokens come from, and how one is chosen.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chatwire/chat.hpp"

namespace {

using chatwire::Value;
using chatwire::chat::Model;

const std::string kModels = std::string(CHATWIRE_DATA_DIR) + "/models/";

Model load(const std::string& name) {
  auto model = Model::load(kModels + name);
  EXPECT_TRUE(model.ok()) << name << ": " << (model.ok() ? "" : model.error().to_string());
  return std::move(model.value());
}

std::string token(const Model& model, std::string_view key) {
  const Value* v = model.special_tokens().dict_find(key);
  if (v == nullptr) return "<absent>";
  if (v->is_none()) return "<None>";
  if (v->is_string()) return std::string(v->as_string());
  return chatwire::to_repr(*v);
}

std::vector<std::string> token_keys(const Model& model) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : model.special_tokens().dict_entries()) keys.emplace_back(k.as_string());
  return keys;
}

TEST(ChatModel, SingleJinjaFileWinsOverTheConfigTemplate) {
  Model m = load("jinja-file");
  EXPECT_TRUE(m.has_template());
  EXPECT_TRUE(m.template_names().empty());
  auto t = m.select(std::nullopt, false);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_TRUE((*t)->uses_generation());  // SmolLM3's file, not the stale config string
  EXPECT_EQ(token(m, "bos_token"), "<|im_start|>");
}

TEST(ChatModel, AdditionalTemplatesMakeANamedSetWithDefault) {
  Model m = load("jinja-additional");
  EXPECT_EQ(m.template_names(), (std::vector<std::string>{"default", "rag", "tool_use"}));
  auto with_tools = m.select(std::nullopt, true);
  auto without = m.select(std::nullopt, false);
  auto rag = m.select(std::string("rag"), false);
  ASSERT_TRUE(with_tools.ok() && without.ok() && rag.ok());
  EXPECT_NE(with_tools->get(), without->get());
  EXPECT_NE(rag->get(), without->get());
  auto unknown = m.select(std::string("nope"), false);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().type, "ValueError");
  EXPECT_EQ(unknown.error().message,
            "The specified chat template 'nope' is not available. Available template names are "
            "['default', 'rag', 'tool_use'].");
}

TEST(ChatModel, NamedSetWithoutDefaultNeedsANameOrTools) {
  for (const char* dir : {"jinja-additional-only", "legacy-list-no-default"}) {
    Model m = load(dir);
    EXPECT_EQ(m.template_names(), (std::vector<std::string>{"chatml", "tool_use"})) << dir;
    auto none = m.select(std::nullopt, false);
    ASSERT_FALSE(none.ok()) << dir;
    EXPECT_EQ(none.error().type, "ValueError");
    EXPECT_NE(none.error().message.find("Available template names are ['chatml', 'tool_use']."),
              std::string::npos);
    EXPECT_TRUE(m.select(std::nullopt, true).ok()) << dir;  // tools -> tool_use
    EXPECT_TRUE(m.select(std::string("chatml"), false).ok()) << dir;
  }
}

TEST(ChatModel, OneAdditionalTemplateNamedDefaultIsASingleTemplate) {
  Model m = load("jinja-additional-default");
  EXPECT_TRUE(m.template_names().empty());
  EXPECT_TRUE(m.has_template());
}

TEST(ChatModel, LegacyListBecomesNamedTemplates) {
  Model m = load("legacy-list");
  EXPECT_EQ(m.template_names(), (std::vector<std::string>{"default", "rag", "tool_use"}));
  EXPECT_EQ(token(m, "bos_token"), "<BOS_TOKEN>");
}

TEST(ChatModel, MappingsOfNamedTemplatesAreNamedSets) {
  Model config = load("config-dict");
  EXPECT_EQ(config.template_names(), (std::vector<std::string>{"default", "tool_use"}));
  Model json = load("chat-template-json-named");
  EXPECT_EQ(json.template_names(), (std::vector<std::string>{"default", "rag"}));
  auto rag = json.select(std::string("rag"), false);
  EXPECT_TRUE(rag.ok());
}

TEST(ChatModel, JinjaFileBeatsALegacyList) {
  Model m = load("jinja-beats-legacy-list");
  EXPECT_TRUE(m.template_names().empty());  // one file: a single template, not the list
  EXPECT_TRUE(m.has_template());
}

TEST(ChatModel, ChatTemplateJsonIsReadOnlyWithoutAConfigTemplate) {
  Model m = load("chat-template-json");
  ASSERT_TRUE(m.has_template());
  EXPECT_TRUE(
      (*m.select(std::nullopt, false))->uses_generation());  // the LLaVA template in the .json
  Model loses = load("chat-template-json-loses");
  ASSERT_TRUE(loses.has_template());
  EXPECT_FALSE((*loses.select(std::nullopt, false))->uses_generation());
}

TEST(ChatModel, AddedTokenObjectsGiveTheirContent) {
  Model m = load("config-string-added-tokens");
  EXPECT_EQ(token(m, "bos_token"), "<s>");
  EXPECT_EQ(token(m, "unk_token"), "<unk>");
  EXPECT_EQ(token(m, "pad_token"), "<None>");    // an AddedToken without content
  EXPECT_EQ(token(m, "sep_token"), "<absent>");  // null in the config
  EXPECT_EQ(token(m, "mask_token"), "<mask>");
  EXPECT_EQ(token(m, "additional_special_tokens"), "['[INST]', '[/INST]', '[TOOL_CALLS]']");
  EXPECT_EQ(token_keys(m),
            (std::vector<std::string>{"bos_token", "eos_token", "unk_token", "pad_token",
                                      "mask_token", "additional_special_tokens"}));
}

TEST(ChatModel, SpecialTokensMapOverridesTheConfig) {
  Model m = load("special-tokens-map");
  EXPECT_EQ(token(m, "bos_token"), "<|begin_of_text|>");
  EXPECT_EQ(token(m, "eos_token"), "<|eot_id|>");
  EXPECT_EQ(token(m, "pad_token"), "<|finetune_right_pad_id|>");
  EXPECT_EQ(token(m, "unk_token"), "<absent>");  // null in the map does not override
  EXPECT_EQ(token(m, "additional_special_tokens"), "['<|python_tag|>', '<|eom_id|>']");
  Model empty_extra = load("special-tokens-map-empty-extra");
  EXPECT_EQ(token(empty_extra, "bos_token"), "<map-bos>");
  EXPECT_EQ(token(empty_extra, "additional_special_tokens"), "['<cfg-extra>']");
}

TEST(ChatModel, RealConfigsLoad) {
  Model qwen = load("hf-qwen3");
  EXPECT_TRUE(qwen.has_template());
  EXPECT_EQ(token(qwen, "bos_token"), "<absent>");
  EXPECT_EQ(token(qwen, "eos_token"), "<|im_end|>");
  Model llama = load("hf-llama3_1");
  EXPECT_EQ(token(llama, "bos_token"), "<|begin_of_text|>");
  Model gemma = load("hf-gemma3");  // 1 MB config with added_tokens_decoder
  EXPECT_EQ(token(gemma, "eos_token"), "<end_of_turn>");
  Model llama2 = load("hf-llama2");  // AddedToken objects, no template
  EXPECT_FALSE(llama2.has_template());
  EXPECT_EQ(token(llama2, "unk_token"), "<unk>");
}

TEST(ChatModel, NoTemplateIsAClearErrorAndNeverAGuess) {
  for (const char* dir : {"no-template", "empty", "hf-gpt2", "hf-llama2", "hf-mistral7b_v01"}) {
    Model m = load(dir);
    EXPECT_FALSE(m.has_template()) << dir;
    auto t = m.select(std::nullopt, false);
    ASSERT_FALSE(t.ok()) << dir;
    EXPECT_EQ(t.error().type, "ValueError");
    EXPECT_NE(t.error().message.find(std::string(dir) + " has no chat template"), std::string::npos)
        << t.error().message;
  }
}

TEST(ChatModel, ExplicitSourceForASingleTemplateDirectory) {
  Model m = load("hf-llama2");
  auto t = m.select(std::string("{{ bos_token }}!"), false);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  auto again = m.select(std::string("{{ bos_token }}!"), false);
  EXPECT_EQ(t->get(), again->get());  // compiled once, cached
}

TEST(ChatModel, BrokenDirectoriesAreErrors) {
  auto missing = Model::load(kModels + "does-not-exist");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().type, "ValueError");
  EXPECT_NE(missing.error().message.find("does-not-exist"), std::string::npos);

  auto bad = Model::load(kModels + "bad-config-json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().type, "JSONDecodeError");
  EXPECT_NE(bad.error().message.find("tokenizer_config.json"), std::string::npos);

  Model syntax = load("syntax-error");  // loads; the error surfaces when the template is chosen
  auto t = syntax.select(std::nullopt, false);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().type, "TemplateSyntaxError");
}

}  // namespace
