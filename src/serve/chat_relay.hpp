// A chat completion without the sockets: the request planned into a backend request (CPU
// work: read, check, adapt, render, tokenize), then the backend's streamed events turned into
// OpenAI's chunks (streaming) or one chat.completion (non-streaming). The server moves bytes;
// everything it sends is decided here.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/endpoint.hpp"
#include "serve/chat_params.hpp"
#include "serve/models.hpp"
#include "serve/openai_shapes.hpp"

namespace chatwire::serve {

struct ChatJob {
  const ServedModel* model = nullptr;
  ChatParams params;
  endpoint::Prompt prompt;
  std::string backend_path;  // the API's path, appended to the backend URL's prefix
  std::string backend_body;  // JSON text (the first choice's)
  BackendRequest backend_request;
  ResponseHead head;

  // The backend request of choice `choice` (n > 1): the same, with seed + choice when the
  // request gave a seed (the same seed would give the same choice n times).
  std::string backend_body_for(std::size_t choice) const;
};

// Errors: RequestError and the template's errors (400, with the field path), ModelNotFound.
// check_context: refuse a prompt or a token limit past the configured max_model_len (false for
// /v1/chat/render, which shows any prompt).
Result<ChatJob> plan_chat(const LoadedModels& models, std::string_view body,
                          std::size_t max_json_depth = 512,
                          std::size_t max_choices = Limits{}.max_choices,
                          bool check_context = true);

// length when the backend stopped on its token limit, else tool_calls when the message's calls
// are whole (endpoint::calls_are_whole), else stop.
std::string_view finish_reason(bool whole_calls, std::string_view backend_finish) noexcept;

class ChatRelay {
 public:
  // One relay per choice (`choice` < job.params.n). Streaming: the last choice's relay ends the
  // stream (usage chunk, [DONE]).
  static Result<ChatRelay> start(const ChatJob& job, const Limits& limits, std::size_t choice = 0);
  // The completion tokens of the earlier choices, counted in the usage the last one reports.
  void add_earlier_completion_tokens(const Usage& earlier) { earlier_.add_completion(earlier); }

  // One `data:` payload of the backend's reply. Returns the text to send the client now:
  // SSE events when streaming (the first call starts with the role chunk), "" otherwise.
  // Errors: BackendError (garbage, an unknown token id, an error event, too much output).
  Result<std::string> on_event(std::string_view data);
  // The backend's body ended. Streaming: the last deltas, the finish chunk, the usage chunk
  // (with include_usage) and [DONE]; non-streaming: the chat.completion body. Error
  // (BackendError) when the reply ended before its last event.
  Result<std::string> finish();

  bool backend_finished() const noexcept { return backend_finish_.has_value(); }
  // The reply is complete before the backend's is: the generation stopped at a stop id or stop
  // string the backend went past (one it does not stop at, such as a turn-end token llama.cpp
  // does not count as end of generation), or parallel_tool_calls is false and a second call
  // began. The backend request can be cancelled.
  bool ended_early() const noexcept { return ended_early_; }
  bool saw_output() const noexcept { return saw_output_; }
  const Usage& usage() const noexcept { return usage_; }
  bool streaming() const noexcept { return job_->params.stream; }

  // A failure after the stream began: `data: {"error": ...}` then `data: [DONE]`.
  static std::string stream_error(const HttpError& e);

 private:
  ChatRelay(const ChatJob& job, endpoint::Generation generation, const Limits& limits,
            std::size_t choice);
  bool last_choice() const noexcept { return head_.choice + 1 >= job_->params.n; }
  Result<std::string> emit(Result<std::vector<endpoint::Delta>> deltas);
  // The backend's log probabilities as OpenAI's entries (pending_logprobs_ and all_logprobs_).
  Status take_logprobs(const std::vector<TokenLogprob>& entries);
  json token_entry(const TokenLogprob& t, std::size_t depth) const;
  // {"content": entries} and the entries cleared; null when logprobs were not asked for.
  json take_pending_logprobs();

  const ChatJob* job_;
  ResponseHead head_;  // the job's, with this choice's index
  Usage earlier_;      // n > 1: the completion and reasoning tokens of the choices before this one
  endpoint::Generation generation_;
  std::size_t max_completion_bytes_;
  std::size_t completion_bytes_ = 0;
  std::size_t generated_ids_ = 0;
  bool ids_seen_ = false;
  // The text a backend sent without ids (counted by the tokenizer where it reports no count).
  std::string generated_text_;
  std::optional<std::size_t> backend_completion_tokens_;
  std::optional<std::string> backend_finish_;
  StreamState stream_state_;
  bool role_sent_ = false;
  bool saw_output_ = false;
  std::vector<std::string> streamed_arguments_;  // per call index
  json pending_logprobs_ = json::array();        // not sent yet (streaming)
  json all_logprobs_ = json::array();            // the whole reply's (non-streaming)
  bool logprobs_ended_ = false;                  // a stop id was reported: nothing after it counts
  bool ended_early_ = false;
  Usage usage_;
};

}  // namespace chatwire::serve
