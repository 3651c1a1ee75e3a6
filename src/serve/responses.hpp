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
  ResponsesWriter(const ResponsesRequest& request, std::string model, long long created_at);

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
  json response(std::string_view status) const;  // the object with what is known so far
  std::string event(json body);                  // one SSE event, numbered
  std::string open_item(json item);              // output_item.added (+ content_part.added)
  std::string close_item();                      // the open item's .done events
  std::string on_chunk(const json& chunk);

  json echo_;
  std::string id_, model_;
  long long created_at_;
  std::size_t sequence_ = 0;
  json output_ = json::array();  // items done
  json open_;                    // the item being streamed (null = none)
  std::string open_text_;        // its text or arguments so far
  std::string finish_reason_;
  json usage_;
  json warnings_;
};

}  // namespace chatwire::serve
