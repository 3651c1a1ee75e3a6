// Request validation: every refusal is a RequestError naming the field path.
#include <gtest/gtest.h>

#include <string>

#include "chatwire/chat.hpp"

namespace {

using chatwire::chat::parse_request_json;

struct BadRequest {
  const char* json;
  const char* type;
  const char* path;  // Error::path
};

// One row per kind of bad request listed in issue 4 §2.
const BadRequest kBadRequests[] = {
    {R"({"messages": []})", "RequestError", "messages"},
    {R"({"messages": "hi"})", "RequestError", "messages"},
    {R"({"tools": []})", "RequestError", "messages"},
    {R"({"messages": ["hi"]})", "RequestError", "messages[0]"},
    {R"({"messages": [{"content": "hi"}]})", "RequestError", "messages[0].role"},
    {R"({"messages": [{"role": "", "content": "hi"}]})", "RequestError", "messages[0].role"},
    {R"({"messages": [{"role": 7, "content": "hi"}]})", "RequestError", "messages[0].role"},
    {R"({"messages": [{"role": "user", "content": 5}]})", "RequestError", "messages[0].content"},
    {R"({"messages": [{"role": "user", "content": {"text": "x"}}]})", "RequestError",
     "messages[0].content"},
    {R"({"messages": [{"role": "user", "content": ["x"]}]})", "RequestError",
     "messages[0].content[0]"},
    {R"({"messages": [{"role": "user", "content": [{"text": "x"}]}]})", "RequestError",
     "messages[0].content[0].type"},
    {R"({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]})",
     "RequestError", "messages[0].content[0].text"},
    {R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "tool_calls": {}}]})",
     "RequestError", "messages[1].tool_calls"},
    {R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "tool_calls": [7]}]})",
     "RequestError", "messages[1].tool_calls[0]"},
    {R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "tool_calls": [{"id": "1"}]}]})",
     "RequestError", "messages[1].tool_calls[0].function"},
    {R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": null,
        "tool_calls": [{"type": "function", "function": {"arguments": "{}"}}]}]})",
     "RequestError", "messages[1].tool_calls[0].function.name"},
    {R"({"messages": [{"role":"user","content":"a"},{"role":"user","content":"b"},{"role": "assistant",
        "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}, {"function": {"name": ""}}]}]})",
     "RequestError", "messages[2].tool_calls[1].function.name"},
    {R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant",
        "tool_calls": [{"function": {"name": "f", "arguments": 3}}]}]})",
     "RequestError", "messages[1].tool_calls[0].function.arguments"},
    {R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant",
        "tool_calls": [{"id": 5, "function": {"name": "f"}}]}]})",
     "RequestError", "messages[1].tool_calls[0].id"},
    {R"({"messages": [{"role": "user", "content": "a"}], "tools": {"type": "function"}})",
     "RequestError", "tools"},
    {R"({"messages": [{"role": "user", "content": "a"}], "tools": ["get_weather"]})",
     "RequestError", "tools[0]"},
    {R"({"messages": [{"role": "user", "content": "a"}], "documents": [1]})", "RequestError",
     "documents[0]"},
    {R"({"messages": [{"role": "user", "content": "a"}], "add_generation_prompt": "yes"})",
     "RequestError", "add_generation_prompt"},
    {R"({"messages": [{"role": "user", "content": "a"}], "continue_final_message": 1})",
     "RequestError", "continue_final_message"},
    {R"({"messages": [{"role": "user", "content": "a"}], "chat_template": 3})", "RequestError",
     "chat_template"},
    {R"({"messages": [{"role": "user", "content": "a"}], "kwargs": []})", "RequestError", "kwargs"},
    {R"({"messages": [{"role": "user", "content": "a"}], "special_tokens_map": "x"})",
     "RequestError", "special_tokens_map"},
    {R"([{"role": "user", "content": "a"}])", "RequestError", ""},
    {R"("just a string")", "RequestError", ""},
};

TEST(ChatRequest, EveryBadRequestNamesItsField) {
  for (const auto& bad : kBadRequests) {
    auto request = parse_request_json(bad.json);
    ASSERT_FALSE(request.ok()) << bad.json;
    EXPECT_EQ(request.error().type, bad.type) << bad.json << "\n" << request.error().to_string();
    EXPECT_EQ(request.error().path, bad.path) << bad.json << "\n" << request.error().to_string();
    EXPECT_FALSE(request.error().message.empty());
  }
}

TEST(ChatRequest, GoodRequestsPass) {
  const char* good[] = {
      R"({"messages": [{"role": "user", "content": "hi"}]})",
      R"({"messages": [{"role": "ipython", "content": "x"}, {"role": "observation", "content": null},
          {"role": "developer"}, {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}]}]})",
      R"({"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
          "function": {"name": "f", "arguments": {"x": 1}}}, {"name": "flat", "arguments": "{}"}]}],
          "tools": [{"type": "function", "function": {"name": "f"}}], "documents": null,
          "add_generation_prompt": true, "kwargs": {"enable_thinking": false}})",
  };
  for (const char* json : good) {
    auto request = parse_request_json(json);
    EXPECT_TRUE(request.ok()) << json << "\n" << (request.ok() ? "" : request.error().to_string());
  }
}

TEST(ChatRequest, InvalidUtf8IsRefusedWithPosition) {
  std::string json = "{\"messages\": [{\"role\": \"user\",\n \"content\": \"caf\xC3\x28\"}]}";
  auto request = parse_request_json(json);
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.error().type, "UnicodeDecodeError");
  EXPECT_EQ(request.error().line, 2u);
  EXPECT_EQ(request.error().column, 17u);
  EXPECT_NE(request.error().message.find("byte 47"), std::string::npos) << request.error().message;

  std::string surrogate = "{\"messages\": \"\xED\xA0\x80\"}";  // a UTF-8-encoded surrogate
  EXPECT_FALSE(parse_request_json(surrogate).ok());
}

TEST(ChatRequest, MalformedJsonIsRefusedWithPosition) {
  auto request = parse_request_json("{\"messages\": [\n  {\"role\": \"user\",}\n]}");
  ASSERT_FALSE(request.ok());
  EXPECT_EQ(request.error().type, "JSONDecodeError");
  EXPECT_EQ(request.error().line, 2u) << request.error().to_string();
}

TEST(ChatRequest, ModesHaveNames) {
  using chatwire::chat::Mode;
  for (Mode m : {Mode::reply, Mode::prefill, Mode::training})
    EXPECT_EQ(chatwire::chat::parse_mode(chatwire::chat::mode_name(m)), m);
  EXPECT_FALSE(chatwire::chat::parse_mode("generate").has_value());
}

}  // namespace
