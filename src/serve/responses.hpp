// OpenAI's Responses API (POST /v1/responses) served over the chat path: a Responses request
// becomes a chat-completions request (to_chat_request, responses_request.cpp), which is planned
// and relayed as any chat is, and what the relay writes becomes the Responses output
// (ResponsesWriter, responses_output.cpp): one `response` object, or its stream of typed events
// (response.created, output items added and done, text / reasoning / arguments deltas,
// response.completed). Nothing is stored, so what needs a stored response
// (previous_response_id, conversation, background) is refused, as are built-in tools: each
// field is mapped, echoed, or refused with a 400 naming it; none is ignored.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"
#include "serve/backend_api.hpp"
#include "serve/chat_relay.hpp"
#include "serve/openai_shapes.hpp"

namespace chatwire::serve {

struct ResponsesRequest {
  json chat;  // the chat-completions request
  bool stream = false;
  // The request fields the response object repeats (instructions, tools in the Responses
  // shape, tool_choice, temperature, ...), already with their defaults.
  json echo = json::object();
  // For each chat message, the Responses field it came from ("instructions", "input[3]"), so
  // an error naming messages[i] names the field the client wrote.
  std::vector<std::string> message_sources;
};

// Errors: RequestError naming the Responses field path (input[2].content[0].type, tools[1].type).
Result<ResponsesRequest> to_chat_request(const json& request);

// An error the chat path found, with its field path in the Responses request's words.
Error responses_error_path(Error e, const ResponsesRequest& request);

struct ResponsesJob {
  ResponsesRequest request;
  ChatJob chat;  // planned as plan_chat plans a chat request
};
// The request body read (its depth bounded), mapped and planned. Errors as plan_chat's, with
// Responses field paths.
Result<ResponsesJob> plan_responses(const LoadedModels& models, std::string_view body,
                                    std::size_t max_json_depth = 512);

// The relay's output (chat.completion JSON, or chat.completion.chunk SSE text) as the
// Responses output.
class ResponsesWriter {
 public:
  // `reasoning_fields`: the chat fields the relay writes reasoning to (the model's
  // ModelConfig::reasoning_fields); the first one present is read.
  ResponsesWriter(const ResponsesRequest& request, std::string model, long long created_at,
                  std::vector<std::string> reasoning_fields = {"reasoning_content", "reasoning"});

  // Streaming: the response.created and response.in_progress events.
  std::string begin();
  // Streaming: SSE text the relay wrote (whole `data:` events) -> Responses events.
  // Errors: InternalError when the text is not the relay's chunks.
  Result<std::string> on_chat_sse(std::string_view sse);
  // Non-streaming: the relay's chat.completion -> the response object.
  Result<std::string> from_completion(std::string_view completion);
  // A failure after the stream began: an `error` event, then response.failed.
  std::string stream_error(const HttpError& e);
  const std::string& id() const noexcept { return id_; }

 private:
  // An output item being streamed: its index in output_ and its text (or arguments) so far.
  struct OpenItem {
    std::size_t index = 0;
    std::string text;
  };
  json response(std::string_view status) const;  // the object with what is known so far
  std::string event(json body);                  // one SSE event, numbered
  // output_item.added (+ content_part.added for text); the item's index in output_.
  std::size_t open_item(json item, std::string& out);
  std::string close_item(const OpenItem& item);  // its .done events; output_ holds it done
  std::string close_text();                      // the open reasoning or message item
  std::string close_all();                       // every open item, in output order
  Result<std::string> on_chunk(const json& chunk);
  const json* reasoning_of(const json& message) const;

  json echo_;
  std::string id_, model_;
  long long created_at_;
  std::vector<std::string> reasoning_fields_;
  std::size_t sequence_ = 0;
  json output_ = json::array();  // every item added, as last written (done once closed)
  // The open reasoning or message item: one at a time, closed when the other kind or a call
  // begins.
  std::optional<OpenItem> text_;
  // The open function calls by the chat tool-call index: open until the reply finishes, as the
  // relay may send an earlier call's arguments after a later call began (its "{}" catch-up).
  std::map<std::size_t, OpenItem> calls_;
  std::string finish_reason_;
  json usage_;
  json warnings_;
};

}  // namespace chatwire::serve
