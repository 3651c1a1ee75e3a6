// The Responses API over the chat path: a Responses request as the chat request it maps to
// (input items, tools, the field table, refusals naming the field), errors of the chat path in
// the Responses request's words, and the relay's output as a response object and as events (the
// stream read back into items equals the whole response).
#include "serve/responses.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cs = chatwire::serve;
using cs::json;

namespace {

cs::ResponsesRequest mapped(const std::string& text) {
  auto r = cs::to_chat_request(json::parse(text));
  EXPECT_TRUE(r) << text << ": " << (r ? "" : r.error().to_string());
  return r ? std::move(*r) : cs::ResponsesRequest{};
}

TEST(ResponsesRequest, InputItemsBecomeChatMessages) {
  auto r = mapped(R"({"model": "qwen3", "instructions": "Be brief.", "input": [
      {"role": "user", "content": "Weather?"},
      {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "Two."}]},
      {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "On it."}]},
      {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
      {"type": "function_call", "call_id": "c2", "name": "get_weather", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "c1", "output": "21"},
      {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "18"}]},
      {"role": "developer", "content": [{"type": "input_text", "text": "More."},
                                        {"type": "input_image", "image_url": "data:image/png;base64,AA"}]}]})");
  const json expected = json::parse(R"([
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": "On it.", "reasoning_content": "Two.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
        {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "21"},
      {"role": "tool", "tool_call_id": "c2", "content": "18"},
      {"role": "developer", "content": [{"type": "text", "text": "More."},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]}])");
  EXPECT_EQ(json::parse(r.chat["messages"].dump()), expected) << r.chat["messages"].dump(1);
  EXPECT_EQ(r.message_sources, (std::vector<std::string>{"instructions", "input[0]", "input[1]",
                                                         "input[5]", "input[6]", "input[7]"}));
  EXPECT_EQ(r.chat["model"], "qwen3");
  EXPECT_EQ(r.chat["stream"], false);
  EXPECT_EQ(r.echo["instructions"], "Be brief.");
}

TEST(ResponsesRequest, ATurnStartsAgainAfterItsCallsOrAtANewReasoning) {
  // Two assistant turns with no user message between them stay two messages.
  auto r = mapped(R"({"input": [
      {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
      {"role": "assistant", "content": "after"},
      {"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}]},
      {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "r"}]},
      {"type": "reasoning", "summary": [{"type": "summary_text", "text": "t"}], "content": []}]})");
  const json& m = r.chat["messages"];
  ASSERT_EQ(m.size(), 5u) << m.dump(1);
  EXPECT_EQ(m[0]["tool_calls"].size(), 1u);
  EXPECT_EQ(m[1]["content"], "after");
  EXPECT_EQ(m[2]["reasoning_content"], "s");  // a summary stands in for the text
  EXPECT_EQ(m[3]["reasoning_content"], "r");
  EXPECT_EQ(m[4]["reasoning_content"], "t");  // no text in content: the summary
}

TEST(ResponsesRequest, FieldsAreMappedEchoedOrPassedToChat) {
  auto r = mapped(R"({"input": "hi", "stream": true, "max_output_tokens": 64, "temperature": 0.5,
      "top_p": 0.9, "parallel_tool_calls": false, "tool_choice": {"type": "function", "name": "f"},
      "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"},
                 "description": "d", "strict": true}],
      "text": {"format": {"type": "json_schema", "name": "out", "schema": {"type": "object"}, "strict": true}},
      "reasoning": {"effort": "high", "summary": "auto"}, "metadata": {"k": "v"}, "store": false,
      "user": "u", "top_k": 20, "seed": 7, "chat_template_kwargs": {"enable_thinking": false},
      "include": [], "truncation": "disabled", "background": false})");
  EXPECT_TRUE(r.stream);
  const json& c = r.chat;
  EXPECT_EQ(c["stream_options"], json::parse(R"({"include_usage": true})"));
  EXPECT_EQ(c["max_completion_tokens"], 64);
  EXPECT_EQ(c["temperature"], 0.5);
  EXPECT_EQ(c["top_p"], 0.9);
  EXPECT_EQ(c["parallel_tool_calls"], false);
  EXPECT_EQ(c["tool_choice"], json::parse(R"({"type": "function", "function": {"name": "f"}})"));
  // The function keeps the client's key order (a template may write it with tojson).
  EXPECT_EQ(c["tools"][0].dump(),
            R"({"type":"function","function":{"name":"f","parameters":{"type":"object"},)"
            R"("description":"d","strict":true}})");
  EXPECT_EQ(c["response_format"],
            json::parse(R"({"type": "json_schema", "json_schema": {"name": "out",
                "schema": {"type": "object"}, "strict": true}})"));
  EXPECT_EQ(c["reasoning_effort"], "high");
  EXPECT_EQ(c["top_k"], 20);
  EXPECT_EQ(c["seed"], 7);
  EXPECT_EQ(c["chat_template_kwargs"]["enable_thinking"], false);
  EXPECT_FALSE(c.contains("metadata"));
  EXPECT_EQ(r.echo["metadata"]["k"], "v");
  EXPECT_EQ(r.echo["store"], false);
  EXPECT_EQ(r.echo["tools"][0]["name"], "f");
  EXPECT_EQ(r.echo["tool_choice"]["name"], "f");
  EXPECT_EQ(mapped(R"({"input": "x", "text": {"format": {"type": "json_object"}}})")
                .chat["response_format"],
            json::parse(R"({"type": "json_object"})"));
}

TEST(ResponsesRequest, WhatCannotBeServedIsRefusedNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> refusals = {
      {R"({"input": "x", "previous_response_id": "resp_1"})", "previous_response_id"},
      {R"({"input": "x", "conversation": "conv_1"})", "conversation"},
      {R"({"input": "x", "background": true})", "background"},
      {R"({"input": "x", "truncation": "auto"})", "truncation"},
      {R"({"input": "x", "include": ["reasoning.encrypted_content"]})", "include[0]"},
      {R"({"input": "x", "prompt": {"id": "p"}})", "prompt"},
      {R"({"input": "x", "max_tool_calls": 2})", "max_tool_calls"},
      {R"({"input": "x", "frobnicate": 1})", "frobnicate"},
      {R"({"input": "x", "tools": [{"type": "web_search"}]})", "tools[0].type"},
      {R"({"input": "x", "tools": [{"type": "function"}]})", "tools[0].name"},
      {R"({"input": "x", "tool_choice": {"type": "file_search"}})", "tool_choice"},
      {R"({"input": "x", "text": {"verbosity": "low"}})", "text.verbosity"},
      {R"({"input": "x", "text": {"format": {"type": "xml"}}})", "text.format.type"},
      {R"({"input": "x", "stream": "yes"})", "stream"},
      {R"({"input": "x", "store": true})", "store"},
      {R"({"input": "x", "stream_options": {"include_usage": true}})",
       "stream_options.include_usage"},
      {R"({"input": "x", "text": {"formt": {"type": "text"}}})", "text.formt"},
      {R"({"input": "x", "text": {"format": {"type": "json_schema", "schema": {}, "name": 5}}})",
       "text.format.name"},
      {R"({"instructions": "x"})", "input"},
      {R"({"input": 3})", "input"},
      {R"({"input": [{"type": "item_reference", "id": "msg_1"}]})", "input[0].type"},
      {R"({"input": [{"type": "web_search_call"}]})", "input[0].type"},
      {R"({"input": [{"role": "tool", "content": "x"}]})", "input[0].role"},
      {R"({"input": [{"role": "user"}]})", "input[0].content"},
      {R"({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]})",
       "input[0].content[0].type"},
      {R"({"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "f"}]}]})",
       "input[0].content[0].image_url"},
      {R"({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]})",
       "input[0].call_id"},
      {R"({"input": [{"type": "function_call_output", "call_id": "c"}]})", "input[0].output"},
      {R"({"input": [{"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}]})",
       "input[0].encrypted_content"},
  };
  for (const auto& [text, path] : refusals) {
    auto r = cs::to_chat_request(json::parse(text));
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().type, "RequestError") << text;
    EXPECT_EQ(r.error().path, path) << text << ": " << r.error().to_string();
    EXPECT_FALSE(r.error().message.empty());
  }
}

TEST(ResponsesRequest, ChatPathErrorsNameTheResponsesField) {
  auto r = mapped(R"({"instructions": "s", "input": [{"role": "user", "content": "a"},
      {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{"}]})");
  auto path = [&](std::string p) {
    return cs::responses_error_path(chatwire::Error{"RequestError", "m", 0, 0, std::move(p)}, r)
        .path;
  };
  EXPECT_EQ(path("messages[2].tool_calls[0].function.arguments"),
            "input[1].tool_calls[0].function.arguments");
  EXPECT_EQ(path("messages[0].content"), "instructions.content");
  EXPECT_EQ(path("messages[9].content"), "messages[9].content");  // no such message: as it is
  EXPECT_EQ(path("tools[1].function.parameters"), "tools[1].parameters");
  EXPECT_EQ(path("max_completion_tokens"), "max_output_tokens");
  EXPECT_EQ(path("response_format.json_schema"), "text.format.json_schema");
  EXPECT_EQ(path("tool_choice.function.name"), "tool_choice.name");
}

// The relay's chunks of one reply: reasoning, text, two calls (arguments in pieces), the finish
// chunk with a warning, the usage chunk, [DONE].
std::string chunk(const std::string& delta, const std::string& finish = "null",
                  const std::string& extra = "") {
  return "data: "
         "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
         "\"delta\":" +
         delta + ",\"finish_reason\":" + finish + extra + "}]}\n\n";
}

const std::vector<std::string> kChunks = {
    chunk(R"({"role":"assistant","content":""})"),
    chunk(R"({"reasoning_content":"Two ","reasoning":"Two "})"),
    chunk(R"({"reasoning_content":"calls.","reasoning":"calls."})"),
    chunk(R"({"content":"Checking"})") + chunk(R"({"content":"."})"),
    chunk(
        R"({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]})"),
    chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":"}}]})") +
        chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]})"),
    chunk(
        R"({"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]})"),
    chunk("{}", "\"tool_calls\"",
          R"(,"warnings":[{"code":"stray_marker","message":"m","offset":3}])") +
        "data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,"
        "\"completion_tokens\":7,\"total_tokens\":17}}\n\n" +
        "data: [DONE]\n\n",
};

const char* kCompletion = R"({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{
    "index": 0, "message": {"role": "assistant", "content": "Checking.", "reasoning_content": "Two calls.",
    "reasoning": "Two calls.", "tool_calls": [
      {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}},
      {"id": "call_b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
    "finish_reason": "tool_calls", "warnings": [{"code": "stray_marker", "message": "m", "offset": 3}]}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17}})";

// The events of a stream: (type, data).
std::vector<json> events_of(const std::string& sse) {
  std::vector<json> out;
  std::size_t at = 0;
  while (at < sse.size()) {
    const auto end = sse.find("\n\n", at);
    const std::string e = sse.substr(at, end - at);
    at = end + 2;
    const auto newline = e.find('\n');
    EXPECT_TRUE(e.starts_with("event: ")) << e;
    json data = json::parse(e.substr(newline + 7));
    EXPECT_EQ(e.substr(7, newline - 7), data["type"].get<std::string>());
    out.push_back(std::move(data));
  }
  return out;
}

// The ids are random: the items without them.
json without_ids(json items) {
  for (auto& i : items) i.erase("id");
  return items;
}

// The chat usage's details carry over: reasoning tokens counted by the Endpoint, cached tokens
// the backend reported.
TEST(ResponsesWriter, UsageDetailsCarryOver) {
  json completion = json::parse(kCompletion);
  completion["usage"]["completion_tokens_details"] = {{"reasoning_tokens", 5}};
  completion["usage"]["prompt_tokens_details"] = {{"cached_tokens", 4}};
  cs::ResponsesWriter writer(mapped(R"({"input": "weather?"})"), "qwen3", 1700000000);
  auto whole = writer.from_completion(completion.dump());
  ASSERT_TRUE(whole) << whole.error().to_string();
  const json usage = json::parse(*whole)["usage"];
  EXPECT_EQ(usage["output_tokens_details"]["reasoning_tokens"], 5);
  EXPECT_EQ(usage["input_tokens_details"]["cached_tokens"], 4);
}

TEST(ResponsesWriter, TheStreamReadBackIsTheWholeResponse) {
  auto request = mapped(R"({"input": "weather?", "metadata": {"k": "v"}})");
  cs::ResponsesWriter whole_writer(request, "qwen3", 1700000000);
  auto whole = whole_writer.from_completion(kCompletion);
  ASSERT_TRUE(whole) << whole.error().to_string();
  const json response = json::parse(*whole);
  EXPECT_EQ(response["object"], "response");
  EXPECT_EQ(response["status"], "completed");
  EXPECT_EQ(response["model"], "qwen3");
  EXPECT_EQ(response["created_at"], 1700000000);
  EXPECT_EQ(response["metadata"]["k"], "v");
  // The details objects are always there (openai-python's and async-openai's types require
  // them); the chat usage here reports neither a cache nor reasoning counts.
  EXPECT_EQ(response["usage"], json::parse(R"({"input_tokens": 10,
      "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 7,
      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 17})"));
  EXPECT_EQ(response["warnings"][0]["code"], "stray_marker");
  const json items = json::parse(R"([
      {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "Two calls."}], "status": "completed"},
      {"type": "message", "role": "assistant", "status": "completed",
       "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
      {"type": "function_call", "call_id": "call_a", "name": "f", "arguments": "{\"x\":1}", "status": "completed"},
      {"type": "function_call", "call_id": "call_b", "name": "g", "arguments": "{}", "status": "completed"}])");
  EXPECT_EQ(without_ids(response["output"]), items) << response["output"].dump(1);
  EXPECT_TRUE(response["output"][0]["id"].get<std::string>().starts_with("rs_"));
  EXPECT_TRUE(response["output"][1]["id"].get<std::string>().starts_with("msg_"));
  EXPECT_TRUE(response["output"][2]["id"].get<std::string>().starts_with("fc_"));

  cs::ResponsesWriter writer(request, "qwen3", 1700000000);
  std::string sse = writer.begin();
  for (const auto& piece : kChunks) {
    auto events = writer.on_chat_sse(piece);
    ASSERT_TRUE(events) << events.error().to_string();
    sse += *events;
  }
  const auto events = events_of(sse);
  std::vector<std::string> types;
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i]["sequence_number"], i);
    types.push_back(events[i]["type"]);
  }
  const std::vector<std::string> expected_types = {
      "response.created", "response.in_progress", "response.output_item.added",
      "response.content_part.added", "response.reasoning_text.delta",
      "response.reasoning_text.delta", "response.reasoning_text.done", "response.content_part.done",
      "response.output_item.done", "response.output_item.added", "response.content_part.added",
      "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
      "response.content_part.done", "response.output_item.done",
      // the calls: open until the reply ends
      "response.output_item.added", "response.function_call_arguments.delta",
      "response.function_call_arguments.delta", "response.output_item.added",
      "response.function_call_arguments.delta", "response.function_call_arguments.done",
      "response.output_item.done", "response.function_call_arguments.done",
      "response.output_item.done", "response.completed"};
  EXPECT_EQ(types, expected_types);
  EXPECT_EQ(events[0]["response"]["status"], "in_progress");
  EXPECT_EQ(events[0]["response"]["output"], json::array());
  const json& final = events.back()["response"];
  EXPECT_EQ(without_ids(final["output"]), items) << final["output"].dump(1);
  EXPECT_EQ(final["usage"], response["usage"]);
  EXPECT_EQ(final["warnings"], response["warnings"]);
  // Each item's events name it by its id and output index.
  EXPECT_EQ(events[4]["item_id"], final["output"][0]["id"]);
  EXPECT_EQ(events[17]["output_index"], 2);
  EXPECT_EQ(events[17]["delta"], "{\"x\":");
}

// The relay finishes every call's arguments at the end: a call without parameters gets its "{}"
// after later calls began. Each call is its own item until the reply finishes, so the catch-up
// goes to its call, and the stream agrees with the whole response.
TEST(ResponsesWriter, AnEarlierCallsArgumentsAfterALaterCallGoToItsOwnItem) {
  auto request = mapped(R"({"input": "x"})");
  cs::ResponsesWriter writer(request, "m", 1);
  std::string sse;
  for (
      const auto& piece :
      {chunk(
           R"({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"now","arguments":""}}]})"),
       chunk(
           R"({"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"wx","arguments":"{\"city\":\"Paris\"}"}}]})"),
       chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]})"),
       chunk("{}", "\"tool_calls\"") + "data: [DONE]\n\n"}) {
    auto events = writer.on_chat_sse(piece);
    ASSERT_TRUE(events) << events.error().to_string();
    sse += *events;
  }
  const auto events = events_of(sse);
  const json& output = events.back()["response"]["output"];
  ASSERT_EQ(output.size(), 2u) << output.dump(1);
  EXPECT_EQ(output[0]["name"], "now");
  EXPECT_EQ(output[0]["arguments"], "{}");
  EXPECT_EQ(output[1]["name"], "wx");
  EXPECT_EQ(output[1]["arguments"], "{\"city\":\"Paris\"}");
  // Arguments for a call that never began are the gateway's own bug, reported.
  cs::ResponsesWriter confused(request, "m", 1);
  EXPECT_FALSE(
      confused.on_chat_sse(chunk(R"({"tool_calls":[{"index":3,"function":{"arguments":"{}"}}]})")));
}

// The reasoning is read from the fields the model's relay writes it to.
TEST(ResponsesWriter, ReasoningFromTheConfiguredField) {
  auto request = mapped(R"({"input": "x"})");
  cs::ResponsesWriter writer(request, "m", 1, {"thinking"});
  auto body = writer.from_completion(
      R"({"choices": [{"index": 0, "message": {"role": "assistant", "content": "A", "thinking": "T"},
          "finish_reason": "stop"}]})");
  ASSERT_TRUE(body);
  const json r = json::parse(*body);
  ASSERT_EQ(r["output"].size(), 2u);
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "T");
}

TEST(ResponsesWriter, ALengthStopIsIncompleteAndAFailureIsAnErrorThenFailed) {
  auto request = mapped(R"({"input": "x"})");
  cs::ResponsesWriter whole(request, "m", 1);
  auto body = whole.from_completion(
      R"({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hel"},
          "finish_reason": "length"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}})");
  ASSERT_TRUE(body);
  const json r = json::parse(*body);
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"], json::parse(R"({"reason": "max_output_tokens"})"));
  // The message the limit cut is incomplete too, as OpenAI marks it (it said completed).
  EXPECT_EQ(r["output"].back()["status"], "incomplete");

  cs::ResponsesWriter streamed(request, "m", 1);
  auto sse = streamed.on_chat_sse(chunk(R"({"content":"Hel"})") + chunk("{}", "\"length\"") +
                                  "data: [DONE]\n\n");
  ASSERT_TRUE(sse);
  EXPECT_EQ(events_of(*sse).back()["type"], "response.incomplete");
  EXPECT_EQ(events_of(*sse).back()["response"]["status"], "incomplete");
  EXPECT_EQ(events_of(*sse).back()["response"]["output"].back()["status"], "incomplete");
  for (const auto& e : events_of(*sse))
    if (e["type"] == "response.output_item.done") {
      EXPECT_EQ(e["item"]["status"], "incomplete");
    }

  cs::ResponsesWriter failing(request, "m", 1);
  cs::HttpError e;
  e.status = 502;
  e.code = "backend_error";
  e.message = "the backend went away";
  const auto failed = events_of(failing.stream_error(e));
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[0]["type"], "error");
  EXPECT_EQ(failed[0]["code"], "backend_error");
  EXPECT_EQ(failed[1]["type"], "response.failed");
  EXPECT_EQ(failed[1]["response"]["status"], "failed");
  EXPECT_EQ(failed[1]["response"]["error"]["message"], "the backend went away");

  // A call cut off inside its arguments (by a stop, or malformed) is kept as written, in an
  // item marked incomplete: a client runs completed calls only.
  cs::ResponsesWriter cut(request, "m", 1);
  auto cut_body = cut.from_completion(
      R"({"choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls":
          [{"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
           {"id": "call_b", "type": "function", "function": {"name": "g", "arguments": "{\"x\": "}}]},
          "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}})");
  ASSERT_TRUE(cut_body);
  const json items = json::parse(*cut_body)["output"];
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0]["status"], "completed");
  EXPECT_EQ(items[1]["status"], "incomplete");
  EXPECT_EQ(items[1]["arguments"], "{\"x\": ");
  cs::ResponsesWriter cut_streamed(request, "m", 1);
  auto cut_sse = cut_streamed.on_chat_sse(
      chunk(
          R"({"tool_calls":[{"index":0,"id":"call_b","type":"function","function":{"name":"g","arguments":"{\"x\": "}}]})") +
      chunk("{}", "\"stop\"") + "data: [DONE]\n\n");
  ASSERT_TRUE(cut_sse);
  bool done = false;
  for (const auto& e : events_of(*cut_sse))
    if (e["type"] == "response.output_item.done") {
      EXPECT_EQ(e["item"]["status"], "incomplete") << e.dump();
      done = true;
    }
  EXPECT_TRUE(done);

  // Text that is not the relay's chunks is the gateway's own bug, reported, never a crash.
  cs::ResponsesWriter confused(request, "m", 1);
  EXPECT_FALSE(confused.on_chat_sse("event: x\n\n"));
  EXPECT_FALSE(confused.on_chat_sse("data: [1]\n\n"));
  EXPECT_FALSE(confused.from_completion("{}"));
}

}  // namespace
