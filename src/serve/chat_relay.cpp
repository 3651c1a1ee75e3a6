// Planning a chat completion and relaying the backend's reply (see chat_relay.hpp).
#include "serve/chat_relay.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include "chatwire/endpoint_json.hpp"
#include "serve/http_errors.hpp"
#include "util/json_text.hpp"

namespace chatwire::serve {

namespace {

std::string completion_id() {
  static constexpr std::string_view kAlphanumerics =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  thread_local std::mt19937_64 random{std::random_device{}()};
  std::uniform_int_distribution<std::size_t> pick(0, kAlphanumerics.size() - 1);
  std::string id = "chatcmpl-";
  for (int i = 0; i < 24; ++i) id += kAlphanumerics[pick(random)];
  return id;
}

Error backend_error(std::string message) {
  return gateway_error("BackendError", std::move(message));
}

}  // namespace

std::string_view finish_reason(bool whole_calls, std::string_view backend_finish) noexcept {
  // The token limit first, as OpenAI reports it: a call it cut off is not whole, and a client
  // that sees tool_calls runs the call (vLLM says tool_calls here). For the same reason calls
  // cut off by a stop, or written malformed, leave the reply "stop" (endpoint::calls_are_whole).
  if (backend_finish == "length") return "length";
  if (whole_calls) return "tool_calls";
  return "stop";
}

Result<ChatJob> plan_chat(const LoadedModels& models, std::string_view body,
                          std::size_t max_json_depth, std::size_t max_choices, bool check_context) {
  auto parsed = util::parse_bounded_json(body, max_json_depth);
  if (!parsed)
    return gateway_error("RequestError", parsed.failure == util::BoundedJson::Failure::kTooDeep
                                             ? "the request is nested too deeply"
                                             : "the request body is not JSON: " + parsed.what);
  json request = std::move(parsed.value);
  if (!request.is_object()) return gateway_error("RequestError", "the request is not an object");
  auto name = request.find("model");
  if (name == request.end() || !name->is_string())
    return gateway_error("RequestError", "must be the name of a served model (GET /v1/models)",
                         "model");
  const ServedModel* model = models.find(name->get_ref<const std::string&>());
  if (model == nullptr)
    return gateway_error("ModelNotFound",
                         "the model '" + name->get<std::string>() + "' is not served here",
                         "model");
  if (auto unread = check_request_fields(request, model->template_names)) return *unread;
  if (auto media = check_media_parts(request)) return *media;
  auto params = read_chat_params(request, model->config, max_choices);
  if (!params) return params.error();
  auto prompt = endpoint::prepare(model->endpoint, request);
  if (!prompt) return prompt.error();
  prompt->call_ids = model->call_ids;
  // A call the model writes anyway (its history holds calls) is the content it wrote. So is one
  // written when the request offers no tools: the client has nothing to run it with (vLLM runs
  // its tool parser only for a request with tools; OpenAI calls only the tools it is given).
  const auto tools = request.find("tools");
  const bool no_tools =
      tools == request.end() || tools->is_null() || (tools->is_array() && tools->empty());
  if (params->tool_choice_none || no_tools) prompt->tool_calls_allowed = false;
  // The client's stop strings end the message too, where the gateway reads the output: a backend
  // that stops at one still sends the ids of the tokens that hold it (llama.cpp sends each
  // token's id when it withholds the token's text), and the message is decoded from those ids.
  // OpenAI's reply never holds the stop sequence.
  for (const auto& s : params->stop)
    if (!s.empty() && std::find(prompt->stop_strings.begin(), prompt->stop_strings.end(), s) ==
                          prompt->stop_strings.end())
      prompt->stop_strings.push_back(s);

  // The model's configured context (max_model_len; config.json's max_position_embeddings is
  // not enforced, since rope scaling can extend it): a prompt that fills it, or a client's token
  // limit past it, is refused here as vLLM refuses it, not sent to a backend that fails on it;
  // without a client's limit the reply may take what is left, as vLLM's default. /v1/chat/render
  // shows any prompt (check_context false).
  if (const std::size_t context = model->config.max_model_len;
      check_context && context != 0 && !prompt->ids.empty()) {
    const std::size_t in = prompt->ids.size();
    if (in >= context)
      return gateway_error("RequestError",
                           "the prompt is " + std::to_string(in) +
                               " tokens; this model's context is " + std::to_string(context) +
                               " tokens, which leaves none to generate",
                           "messages");
    if (!params->max_tokens || *params->max_tokens > context - in) {
      if (params->max_tokens_field.empty()) {
        params->max_tokens = context - in;
      } else {
        return gateway_error(
            "RequestError",
            "the prompt is " + std::to_string(in) + " tokens and up to " +
                std::to_string(*params->max_tokens) +
                " more are asked for: " + std::to_string(in + *params->max_tokens) +
                " tokens, over this model's context of " + std::to_string(context) + " tokens",
            params->max_tokens_field);
      }
    }
  }

  ChatJob job;
  job.model = model;
  job.params = std::move(*params);
  job.prompt = std::move(*prompt);
  BackendRequest br;
  br.model = model->config.backend_model.empty() ? model->config.name : model->config.backend_model;
  br.ids = job.prompt.ids;
  br.text = job.prompt.text;
  br.max_tokens = job.params.max_tokens;
  br.stop = job.params.stop;
  // Every backend API stops at ids (vLLM and SGLang at stop_token_ids, llama.cpp at its
  // end-of-generation tokens, and the relay cancels at any other stop id it reads): a stop
  // string that is a stop id's token would also cut where the model quotes that text.
  br.stop.insert(br.stop.end(), job.prompt.engine_stop_strings.begin(),
                 job.prompt.engine_stop_strings.end());
  br.stop_ids = job.prompt.stop_ids;
  br.sampling = job.params.sampling;
  br.response_format = job.params.response_format;
  br.top_logprobs = job.params.top_logprobs;
  if (!job.prompt.constraint_schema.empty())  // tool_choice required / named
    br.response_format = {
        {"type", "json_schema"},
        {"json_schema",
         {{"name", "tool_calls"}, {"schema", json::parse(job.prompt.constraint_schema)}}}};
  const BackendApiRow& row = backend_api_row(model->config.backend_api);
  job.backend_path = std::string(row.path);
  job.backend_body = row.build(br).dump(-1, ' ', false, json::error_handler_t::replace);
  job.backend_request = std::move(br);
  job.head.id = completion_id();
  job.head.created = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  job.head.model = model->config.name;
  job.head.reasoning_fields = &model->config.reasoning_fields;
  return job;
}

std::string ChatJob::backend_body_for(std::size_t choice) const {
  if (choice == 0) return backend_body;
  BackendRequest br = backend_request;
  if (auto seed = br.sampling.find("seed"); seed != br.sampling.end()) {
    if (seed->is_number_integer())  // wrapping, never overflowing: seeds reach INT64_MAX
      *seed = static_cast<std::int64_t>(static_cast<std::uint64_t>(seed->get<std::int64_t>()) +
                                        static_cast<std::uint64_t>(choice));
    else if (seed->is_number())
      *seed = seed->get<double>() + static_cast<double>(choice);
  }
  return backend_api_row(model->config.backend_api)
      .build(br)
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

ChatRelay::ChatRelay(const ChatJob& job, endpoint::Generation generation, const Limits& limits,
                     std::size_t choice)
    : job_(&job),
      head_(job.head),
      generation_(std::move(generation)),
      max_completion_bytes_(limits.max_completion_bytes) {
  usage_.prompt_tokens = job.prompt.ids.size();
  head_.choice = choice;
}

Result<ChatRelay> ChatRelay::start(const ChatJob& job, const Limits& limits, std::size_t choice) {
  auto generation = job.model->endpoint.start(job.prompt);
  if (!generation) return generation.error();
  return ChatRelay(job, std::move(*generation), limits, choice);
}

json ChatRelay::token_entry(const TokenLogprob& t, std::size_t depth) const {
  std::string token = t.text;
  if (t.id) {
    const tokenize::Tokenizer* tokenizer = job_->model->endpoint.tokenizer();
    const std::uint32_t id[] = {*t.id};
    auto text = tokenizer ? tokenizer->decode(id) : Result<std::string>(Error{});
    token = text ? std::move(*text) : std::string();
  }
  json bytes = json::array();
  for (unsigned char ch : token) bytes.push_back(ch);
  json entry{{"token", token}, {"logprob", t.logprob}, {"bytes", std::move(bytes)}};
  if (depth == 0) {
    json top = json::array();
    const std::size_t n = std::min(t.top.size(), job_->params.top_logprobs.value_or(0));
    for (std::size_t i = 0; i < n; ++i) top.push_back(token_entry(t.top[i], 1));
    entry["top_logprobs"] = std::move(top);
  }
  return entry;
}

Status ChatRelay::take_logprobs(const std::vector<TokenLogprob>& entries) {
  if (!job_->params.top_logprobs) return std::monostate{};
  const auto& stops = job_->prompt.stop_ids;
  for (const auto& t : entries) {
    // The stop id ends the message; its probability is not part of it (nor what follows).
    if (t.id && std::find(stops.begin(), stops.end(), *t.id) != stops.end()) logprobs_ended_ = true;
    if (logprobs_ended_ || generation_.stopped()) return std::monostate{};
    json entry = token_entry(t, 0);
    if (streaming())
      pending_logprobs_.push_back(std::move(entry));
    else
      all_logprobs_.push_back(std::move(entry));
  }
  return std::monostate{};
}

json ChatRelay::take_pending_logprobs() {
  if (!job_->params.top_logprobs || pending_logprobs_.empty()) return nullptr;
  json out{{"content", std::move(pending_logprobs_)}, {"refusal", nullptr}};
  pending_logprobs_ = json::array();
  return out;
}

Result<std::string> ChatRelay::emit(Result<std::vector<endpoint::Delta>> deltas) {
  if (!deltas)
    return backend_error("the backend's output could not be read: " + deltas.error().to_string());
  std::string out;
  if (streaming() && !role_sent_) {
    out += sse(chunk_body(head_, endpoint::Delta{}, /*first=*/true));
    role_sent_ = true;
  }
  for (const auto& d : *deltas) {
    completion_bytes_ += d.content.size() + d.reasoning_content.size();
    for (const auto& call : d.tool_calls) {
      completion_bytes_ += call.arguments.size();
      if (streamed_arguments_.size() <= call.index) streamed_arguments_.resize(call.index + 1);
      streamed_arguments_[call.index] += call.arguments;
    }
    if (completion_bytes_ > max_completion_bytes_)
      return backend_error("the generated text exceeds limits.max_completion_bytes (" +
                           std::to_string(max_completion_bytes_) + ")");
    if (!d.content.empty() || !d.reasoning_content.empty() || !d.tool_calls.empty())
      saw_output_ = true;
    if (streaming()) {
      // The log probabilities that arrived so far ride on the next chunk that is sent (an
      // empty delta is not sent).
      if (!d.content.empty() || !d.reasoning_content.empty() || !d.tool_calls.empty())
        out += sse(chunk_body(head_, d, /*first=*/false, take_pending_logprobs()));
    }
  }
  return out;
}

Result<std::string> ChatRelay::on_event(std::string_view data) {
  if (data == "[DONE]") return emit(std::vector<endpoint::Delta>{});
  auto chunk = backend_api_row(job_->model->config.backend_api).read(data, stream_state_);
  if (!chunk) return backend_error(chunk.error().message);
  if (chunk->prompt_tokens && job_->prompt.ids.empty())
    usage_.prompt_tokens = *chunk->prompt_tokens;
  if (chunk->completion_tokens) backend_completion_tokens_ = chunk->completion_tokens;
  if (chunk->cached_tokens) usage_.cached_tokens = chunk->cached_tokens;
  if (backend_finish_) return std::string();  // after the last event (usage): nothing generated
  if (chunk->done) backend_finish_ = chunk->finish;
  if (auto taken = take_logprobs(chunk->logprobs); !taken) return taken.error();
  Result<std::string> out = std::string();
  if (chunk->has_ids) {
    ids_seen_ = true;
    generated_ids_ += chunk->ids.size();
    out = emit(generation_.push(chunk->ids));
  } else {
    generated_text_ += chunk->text;
    out = emit(generation_.push_text(chunk->text));
  }
  // A stop the backend did not stop at, or parallel_tool_calls false and a second call began:
  // the reply ends here.
  if (generation_.stopped() && !backend_finish_) {
    backend_finish_ = "stop";
    ended_early_ = true;
  }
  return out;
}

Result<std::string> ChatRelay::finish() {
  if (!backend_finish_)
    return backend_error("the backend's reply ended before its last event (connection dropped)");
  auto tail = emit(generation_.finish());
  if (!tail) return tail;
  std::string out = std::move(*tail);
  const endpoint::Message& message = generation_.message();
  usage_.completion_tokens = ids_seen_ ? generated_ids_ : backend_completion_tokens_.value_or(0);
  // Text without ids and no count from the backend (the gateway ended the reply before the
  // backend's usage event: a stop it did not honour, a second call with parallel_tool_calls
  // false): the text's tokens, as the tokenizer encodes them (0 was reported).
  if (!ids_seen_ && !backend_completion_tokens_ && !generated_text_.empty())
    if (const tokenize::Tokenizer* tok = job_->model->endpoint.tokenizer())
      if (auto ids = tok->encode_ids(generated_text_)) usage_.completion_tokens = ids->size();
  usage_.reasoning_tokens = generation_.reasoning_tokens();
  const std::string_view reason =
      finish_reason(endpoint::calls_are_whole(message), *backend_finish_);
  const json warnings = warnings_json(generation_.warnings());
  if (!streaming())
    return completion_body(head_, message, reason, usage_,
                           job_->params.top_logprobs
                               ? json{{"content", std::move(all_logprobs_)}, {"refusal", nullptr}}
                               : json(nullptr),
                           warnings);
  // A call whose streamed arguments fall short of the final ones (a parameterless call: "{}").
  for (std::size_t i = 0; i < message.tool_calls.size(); ++i) {
    const std::string& final_args = message.tool_calls[i].arguments.empty()
                                        ? std::string("{}")
                                        : message.tool_calls[i].arguments;
    const std::string streamed = i < streamed_arguments_.size() ? streamed_arguments_[i] : "";
    if (streamed.size() < final_args.size() && final_args.starts_with(streamed)) {
      endpoint::Delta d;
      d.tool_calls.push_back({i, {}, {}, final_args.substr(streamed.size())});
      out += sse(chunk_body(head_, d, false));
    }
  }
  out += sse(finish_chunk_body(head_, reason, take_pending_logprobs(), warnings));
  if (!last_choice()) return out;  // the next choice's chunks follow
  Usage total = usage_;
  total.add_completion(earlier_);
  if (job_->params.include_usage) out += sse(usage_chunk_body(head_, total));
  out += "data: [DONE]\n\n";
  return out;
}

std::string ChatRelay::stream_error(const HttpError& e) {
  return sse(error_body(e)) + "data: [DONE]\n\n";
}

}  // namespace chatwire::serve
