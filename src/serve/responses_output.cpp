// The chat relay's output as the Responses output (see responses.hpp). The relay's chunks are
// read back as they are written: reasoning, text and each tool call become output items in the
// order the model wrote them, each opened (output_item.added, content_part.added), filled by
// deltas and closed (.done events) before the next one begins.
#include <algorithm>
#include <random>
#include <string_view>
#include <vector>

#include "chatwire/endpoint.hpp"
#include "serve/responses.hpp"

namespace chatwire::serve {

namespace {

std::string random_id(std::string_view prefix) {
  static constexpr std::string_view kAlphanumerics =
      "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  thread_local std::mt19937_64 random{std::random_device{}()};
  std::uniform_int_distribution<std::size_t> pick(0, kAlphanumerics.size() - 1);
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kAlphanumerics[pick(random)];
  return id;
}

// The items, complete.
// `cut`: the output's token limit ended the response inside this item, the last one (OpenAI
// marks it "incomplete", as the response).
json reasoning_item(const std::string& id, const std::string& text, bool cut = false) {
  return {{"id", id},
          {"type", "reasoning"},
          {"summary", json::array()},
          {"content", json::array({{{"type", "reasoning_text"}, {"text", text}}})},
          {"status", cut ? "incomplete" : "completed"}};
}
json text_part(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", json::array()}};
}
json message_item(const std::string& id, const std::string& text, bool cut = false) {
  return {{"id", id},
          {"type", "message"},
          {"role", "assistant"},
          {"status", cut ? "incomplete" : "completed"},
          {"content", json::array({text_part(text)})}};
}
// A call whose arguments are no JSON object (cut off by the output's end, or malformed) is
// "incomplete": kept as written, but not one a client can run.
json call_item(const std::string& id, const json& call_id, const json& name,
               const std::string& arguments) {
  const bool whole = endpoint::arguments_are_whole(arguments);
  return {
      {"id", id},     {"type", "function_call"}, {"call_id", call_id},
      {"name", name}, {"arguments", arguments},  {"status", whole ? "completed" : "incomplete"}};
}

// The Responses usage of a chat usage: the details objects are required by the API's clients
// (openai-python's and async-openai's types): cached_tokens 0 where the backend did not report
// its cache.
json usage_of(const json& usage) {
  const auto in = usage.value("prompt_tokens", std::size_t{0});
  const auto out = usage.value("completion_tokens", std::size_t{0});
  const json none = json::object();
  const json& prompt =
      usage.contains("prompt_tokens_details") ? usage["prompt_tokens_details"] : none;
  const json& completion =
      usage.contains("completion_tokens_details") ? usage["completion_tokens_details"] : none;
  return {
      {"input_tokens", in},
      {"input_tokens_details", {{"cached_tokens", prompt.value("cached_tokens", std::size_t{0})}}},
      {"output_tokens", out},
      {"output_tokens_details",
       {{"reasoning_tokens", completion.value("reasoning_tokens", std::size_t{0})}}},
      {"total_tokens", in + out}};
}

Error internal(std::string message) {
  return Error{"InternalError", std::move(message), 0, 0, {}};
}

}  // namespace

ResponsesWriter::ResponsesWriter(const ResponsesRequest& request, std::string model,
                                 long long created_at, std::vector<std::string> reasoning_fields)
    : echo_(request.echo),
      id_(random_id("resp_")),
      model_(std::move(model)),
      created_at_(created_at),
      reasoning_fields_(std::move(reasoning_fields)) {}

// The reasoning of a chat message or delta: the first of the fields the relay writes it to.
const json* ResponsesWriter::reasoning_of(const json& message) const {
  for (const auto& key : reasoning_fields_)
    if (auto it = message.find(key); it != message.end() && it->is_string()) return &*it;
  return nullptr;
}

json ResponsesWriter::response(std::string_view status) const {
  json r = {{"id", id_},        {"object", "response"}, {"created_at", created_at_},
            {"status", status}, {"error", nullptr},     {"incomplete_details", nullptr},
            {"model", model_},  {"output", output_},    {"previous_response_id", nullptr},
            {"usage", usage_}};
  if (status == "incomplete") r["incomplete_details"] = {{"reason", "max_output_tokens"}};
  for (auto it = echo_.begin(); it != echo_.end(); ++it) r[it.key()] = it.value();
  // What the output parser reported (a call cut off, text that looked like a call), as the
  // chat choice carries it: a field OpenAI does not define, present only when there is one.
  if (!warnings_.is_null()) r["warnings"] = warnings_;
  return r;
}

std::string ResponsesWriter::event(json body) {
  body["sequence_number"] = sequence_++;
  const std::string type = body["type"].get<std::string>();
  return "event: " + type + "\ndata: " + body.dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n\n";
}

std::string ResponsesWriter::begin() {
  // One statement each: the events are numbered in the order they are made.
  std::string out = event({{"type", "response.created"}, {"response", response("in_progress")}});
  out += event({{"type", "response.in_progress"}, {"response", response("in_progress")}});
  return out;
}

std::size_t ResponsesWriter::open_item(json item, std::string& out) {
  const std::size_t index = output_.size();
  out += event({{"type", "response.output_item.added"}, {"output_index", index}, {"item", item}});
  const std::string type = item["type"].get<std::string>();
  if (type != "function_call") {
    json part = type == "message" ? text_part("") : json{{"type", "reasoning_text"}, {"text", ""}};
    out += event({{"type", "response.content_part.added"},
                  {"item_id", item["id"]},
                  {"output_index", index},
                  {"content_index", 0},
                  {"part", std::move(part)}});
  }
  output_.push_back(std::move(item));
  return index;
}

std::string ResponsesWriter::close_item(const OpenItem& open) {
  json& item = output_[open.index];
  const std::string type = item["type"].get<std::string>();
  const json id = item["id"];
  std::string out;
  if (type == "function_call") {
    out += event({{"type", "response.function_call_arguments.done"},
                  {"item_id", id},
                  {"output_index", open.index},
                  {"name", item["name"]},
                  {"arguments", open.text}});
    item = call_item(id, item["call_id"], item["name"], open.text);
  } else {
    const bool message = type == "message";
    json part =
        message ? text_part(open.text) : json{{"type", "reasoning_text"}, {"text", open.text}};
    json done = {{"type", message ? "response.output_text.done" : "response.reasoning_text.done"},
                 {"item_id", id},
                 {"output_index", open.index},
                 {"content_index", 0},
                 {"text", open.text}};
    if (message) done["logprobs"] = json::array();
    out += event(std::move(done));
    out += event({{"type", "response.content_part.done"},
                  {"item_id", id},
                  {"output_index", open.index},
                  {"content_index", 0},
                  {"part", std::move(part)}});
    const bool cut = finish_reason_ == "length" && open.index + 1 == output_.size();
    item = message ? message_item(id, open.text, cut) : reasoning_item(id, open.text, cut);
  }
  out +=
      event({{"type", "response.output_item.done"}, {"output_index", open.index}, {"item", item}});
  return out;
}

std::string ResponsesWriter::close_text() {
  if (!text_) return "";
  std::string out = close_item(*text_);
  text_.reset();
  return out;
}

std::string ResponsesWriter::close_all() {
  std::vector<const OpenItem*> open;
  if (text_) open.push_back(&*text_);
  for (const auto& [chat_index, item] : calls_) open.push_back(&item);
  std::sort(open.begin(), open.end(),
            [](const OpenItem* a, const OpenItem* b) { return a->index < b->index; });
  std::string out;
  for (const OpenItem* item : open) out += close_item(*item);
  text_.reset();
  calls_.clear();
  return out;
}

Result<std::string> ResponsesWriter::on_chunk(const json& chunk) {
  std::string out;
  if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) usage_ = usage_of(*u);
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array() || choices->empty()) return out;
  const json& choice = (*choices)[0];
  const json& delta = choice.contains("delta") ? choice["delta"] : json::object();
  // A text delta of the reply's reasoning or answer: into the open item of its kind, opened
  // (the other kind's closed first) when none is.
  auto text_delta = [&](const json& text, bool reasoning) {
    if (!text.is_string() || text.get_ref<const std::string&>().empty()) return;
    const char* type = reasoning ? "reasoning" : "message";
    if (text_ && output_[text_->index]["type"] != type) out += close_text();
    if (!text_)
      text_ = OpenItem{open_item(reasoning ? json{{"id", random_id("rs_")},
                                                  {"type", "reasoning"},
                                                  {"summary", json::array()},
                                                  {"content", json::array()}}
                                           : json{{"id", random_id("msg_")},
                                                  {"type", "message"},
                                                  {"role", "assistant"},
                                                  {"status", "in_progress"},
                                                  {"content", json::array()}},
                                 out),
                       ""};
    text_->text += text.get<std::string>();
    json e = {{"type", reasoning ? "response.reasoning_text.delta" : "response.output_text.delta"},
              {"item_id", output_[text_->index]["id"]},
              {"output_index", text_->index},
              {"content_index", 0},
              {"delta", text}};
    if (!reasoning) e["logprobs"] = json::array();
    out += event(std::move(e));
  };
  if (const json* r = reasoning_of(delta)) text_delta(*r, true);
  if (auto c = delta.find("content"); c != delta.end()) text_delta(*c, false);
  if (auto calls = delta.find("tool_calls"); calls != delta.end() && calls->is_array()) {
    for (const json& call : *calls) {
      const json& function = call.contains("function") ? call["function"] : json::object();
      if (!call.contains("index") || !call["index"].is_number_unsigned())
        return internal("a tool-call delta without its index");
      const auto chat_index = call["index"].get<std::size_t>();
      if (call.contains("id")) {  // a call's first delta: id and name
        out += close_text();
        if (calls_.contains(chat_index)) return internal("a tool call begun twice");
        const std::size_t index = open_item({{"id", random_id("fc_")},
                                             {"type", "function_call"},
                                             {"call_id", call["id"]},
                                             {"name", function.value("name", std::string())},
                                             {"arguments", ""},
                                             {"status", "in_progress"}},
                                            out);
        calls_[chat_index] = OpenItem{index, ""};
      }
      auto a = function.find("arguments");
      if (a == function.end() || !a->is_string() || a->get_ref<const std::string&>().empty())
        continue;
      auto open = calls_.find(chat_index);
      if (open == calls_.end()) return internal("arguments for a tool call not begun");
      open->second.text += a->get<std::string>();
      out += event({{"type", "response.function_call_arguments.delta"},
                    {"item_id", output_[open->second.index]["id"]},
                    {"output_index", open->second.index},
                    {"delta", *a}});
    }
  }
  if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string()) {
    finish_reason_ = f->get<std::string>();
    if (auto w = choice.find("warnings"); w != choice.end()) warnings_ = *w;
    out += close_all();
  }
  return out;
}

Result<std::string> ResponsesWriter::on_chat_sse(std::string_view sse) {
  std::string out;
  while (!sse.empty()) {
    const auto end = sse.find("\n\n");
    std::string_view event_text = sse.substr(0, end);
    sse = end == std::string_view::npos ? std::string_view() : sse.substr(end + 2);
    constexpr std::string_view kData = "data: ";
    if (!event_text.starts_with(kData)) return internal("not a chat chunk event");
    const std::string_view data = event_text.substr(kData.size());
    if (data == "[DONE]") {
      out += close_all();
      const bool incomplete = finish_reason_ == "length";
      out += event({{"type", incomplete ? "response.incomplete" : "response.completed"},
                    {"response", response(incomplete ? "incomplete" : "completed")}});
      continue;
    }
    json chunk = json::parse(data, nullptr, false);
    if (!chunk.is_object()) return internal("a chat chunk that is not a JSON object");
    auto events = on_chunk(chunk);
    if (!events) return events.error();
    out += *events;
  }
  return out;
}

Result<std::string> ResponsesWriter::from_completion(std::string_view completion) {
  const json c = json::parse(completion, nullptr, false);
  if (!c.is_object() || !c.contains("choices") || !c["choices"].is_array() || c["choices"].empty())
    return internal("not a chat.completion");
  const json& choice = c["choices"][0];
  const json& message = choice.contains("message") ? choice["message"] : json::object();
  if (const json* r = reasoning_of(message);
      r != nullptr && !r->get_ref<const std::string&>().empty())
    output_.push_back(reasoning_item(random_id("rs_"), r->get<std::string>()));
  if (auto t = message.find("content");
      t != message.end() && t->is_string() && !t->get_ref<const std::string&>().empty())
    output_.push_back(message_item(random_id("msg_"), t->get<std::string>()));
  if (auto calls = message.find("tool_calls"); calls != message.end() && calls->is_array())
    for (const json& call : *calls)
      output_.push_back(call_item(random_id("fc_"), call["id"], call["function"]["name"],
                                  call["function"].value("arguments", std::string("{}"))));
  finish_reason_ = choice.value("finish_reason", std::string());
  // Cut by the token limit inside its last item (a call's own status says whether it is whole).
  if (finish_reason_ == "length" && !output_.empty() && output_.back()["type"] != "function_call")
    output_.back()["status"] = "incomplete";
  if (auto w = choice.find("warnings"); w != choice.end()) warnings_ = *w;
  if (auto u = c.find("usage"); u != c.end() && u->is_object()) usage_ = usage_of(*u);
  return response(finish_reason_ == "length" ? "incomplete" : "completed")
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ResponsesWriter::stream_error(const HttpError& e) {
  json error = {{"type", "error"},
                {"code", e.code.empty() ? json(nullptr) : json(e.code)},
                {"message", e.message},
                {"param", e.param.empty() ? json(nullptr) : json(e.param)}};
  json failed = response("failed");
  failed["error"] = {{"code", e.code.empty() ? json("server_error") : json(e.code)},
                     {"message", e.message}};
  std::string out = event(std::move(error));
  out += event({{"type", "response.failed"}, {"response", std::move(failed)}});
  return out;
}

}  // namespace chatwire::serve
