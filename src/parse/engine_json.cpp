// The engine's states for JSON call objects: {"name", "arguments"} after a marker, bare, or in a
// list.
#include "parse/engine.hpp"

namespace chatwire::parse {

bool Engine::jo_body() {
  if (!skip_ws()) return false;
  if (pos_ == buf_.size()) {
    fallback("not_a_call", "call marker at the end of the output");
    return true;
  }
  char c = buf_[pos_];
  if (c == '[') {
    jo_array_ = true;
    ++pos_;
    go(St::kJoObjStart);
    return true;
  }
  if (c == '{') {
    jo_array_ = false;
    go(St::kJoObjStart);
    return true;
  }
  if (jo_builtin_) {
    mark_ = pos_;
    go(St::kBuiltin);
    return true;
  }
  if (!d_.header_end.empty() && !jo_bare_) {
    // Mistral: `[TOOL_CALLS]name[ARGS]{..}` after the same marker as the JSON list form.
    mark_ = pos_;
    name_.clear();
    id_.clear();
    in_section_ = false;
    go(St::kHjHeader);
    return true;
  }
  fallback("not_a_call", "expected a JSON object or array after the call marker");
  return true;
}

bool Engine::jo_obj_start() {
  if (!skip_ws()) return false;
  if (pos_ == buf_.size()) {
    if (committed_) {
      truncated("a call list");
      end_block();
    } else {
      fallback("truncated", "output ended inside a call list");
    }
    return true;
  }
  char c = buf_[pos_];
  if (c == '{') {
    obj_start_ = pos_;
    key_.clear();
    name_.clear();
    id_.clear();
    args_raw_.clear();
    has_name_ = has_id_ = has_args_ = streaming_ = false;
    ++pos_;
    go(St::kJoKey);
    return true;
  }
  if (c == ']' && jo_array_) {
    ++pos_;
    go(St::kJoClose);
    return true;
  }
  bad_object("expected '{' in the call list");
  return true;
}

void Engine::bad_object(std::string why) {
  if (streaming_) {
    close_call();
    em_.warn("malformed_call", why, abs(pos_));
    streaming_ = false;
    go(St::kJoClose);
    return;
  }
  if (committed_) {
    // Earlier calls of this block stand; this object's text stays content.
    em_.warn("not_a_call", why, abs(obj_start_));
    emit(Route::kContent, std::string_view(buf_).substr(obj_start_, pos_ - obj_start_));
    end_block();
    return;
  }
  fallback("not_a_call", std::move(why));
}

bool Engine::jo_key() {
  if (!skip_ws()) return false;
  if (pos_ == buf_.size()) return jo_truncated();
  char c = buf_[pos_];
  if (c == '}') {
    ++pos_;
    object_end();
    return true;
  }
  if (c != '"') {
    bad_object("expected a key in the call object");
    return true;
  }
  start_scan(Sink::kKey, St::kJoColon);
  return true;
}

bool Engine::jo_truncated() {
  if (jo_bare_ && !committed_) {
    fallback("truncated", "output ended inside a JSON object");
    return true;
  }
  if (streaming_) {
    truncated("tool call arguments");
    close_call(false);
    streaming_ = false;
    end_block();
    return true;
  }
  if (has_name_ && (has_args_ || !d_.args_required) && !args_raw_.empty()) {
    // The arguments are complete; only the object's end is missing.
    truncated("a call object");
    finish_object_call();
    end_block();
    return true;
  }
  if (committed_) {
    truncated("a call list");
    emit(Route::kContent, std::string_view(buf_).substr(obj_start_, pos_ - obj_start_));
    end_block();
    return true;
  }
  fallback("truncated", "output ended inside a call object");
  return true;
}

void Engine::start_scan(Sink sink, St after) {
  sink_ = sink;
  after_scan_ = after;
  scanner_.reset();
  scan_start_ = pos_;
  go(St::kJoScan);
}

bool Engine::jo_scan() {
  std::size_t n = scanner_.feed(buf_.data() + pos_, buf_.size() - pos_);
  if (sink_ == Sink::kArgsStream) {
    std::size_t end = scanner_.done() ? pos_ + n : emit_end(pos_ + n);
    if (end > pos_) em_.args(std::string_view(buf_).substr(pos_, end - pos_));
    pos_ = end;
  } else {
    pos_ += n;
  }
  if (!scanner_.done()) {
    if (!eof_ || !scanner_.finish()) {
      if (eof_) return jo_truncated();
      return false;
    }
  }
  if (scanner_.max_depth() > opt_.max_json_depth) {
    em_.warn("limit", "JSON nested deeper than max_json_depth", abs(scan_start_));
  }
  std::string_view raw = std::string_view(buf_).substr(scan_start_, pos_ - scan_start_);
  switch (sink_) {
    case Sink::kKey:
      key_ = decode_string(raw);
      break;
    case Sink::kName:
      name_ = decode_string(raw);
      has_name_ = valid_name(name_);
      break;
    case Sink::kId:
      id_ = decode_string(raw);
      has_id_ = true;
      break;
    case Sink::kArgsRaw:
      args_raw_.assign(raw);
      break;
    case Sink::kArgsStream:
    case Sink::kSkip:
      break;
  }
  go(after_scan_);
  return true;
}

auto Engine::decode_string(std::string_view raw) -> std::string {
  if (!raw.empty() && raw.front() == '"' && Json::accept(raw))
    return Json::parse(raw).get<std::string>();
  return std::string(raw);
}

bool Engine::jo_colon() {
  if (!skip_ws()) return false;
  if (pos_ == buf_.size()) return jo_truncated();
  if (buf_[pos_] != ':') {
    bad_object("expected ':' after a key");
    return true;
  }
  ++pos_;
  go(St::kJoValueStart);
  return true;
}

bool Engine::one_of(const std::vector<std::string_view>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

bool Engine::jo_value_start() {
  if (!skip_ws()) return false;
  if (pos_ == buf_.size()) return jo_truncated();
  Sink sink = Sink::kSkip;
  if (one_of(d_.name_keys, key_) && !has_name_ && buf_[pos_] == '"') {
    // (an empty or invalid name makes the object not a call; checked when it is decoded)
    sink = Sink::kName;
  } else if (one_of(d_.id_keys, key_) && !has_id_) {
    sink = Sink::kId;
  } else if (one_of(d_.args_keys, key_) && !has_args_) {
    has_args_ = true;
    bool id_settled = d_.id_keys.empty() || has_id_;
    // Bare JSON (no marker) is only a call once it is complete and valid: never streamed.
    if (has_name_ && id_settled && !jo_bare_ && buf_[pos_] != '"' && buf_[pos_] != 'n') {
      open_call(id_, name_);
      streaming_ = true;
      sink = Sink::kArgsStream;
    } else {
      sink = Sink::kArgsRaw;
    }
  }
  start_scan(sink, St::kJoAfterValue);
  return true;
}

bool Engine::jo_after_value() {
  if (!skip_ws()) return false;
  if (pos_ == buf_.size()) return jo_truncated();
  char c = buf_[pos_];
  if (c == ',') {
    ++pos_;
    go(St::kJoKey);
    return true;
  }
  if (c == '}') {
    ++pos_;
    object_end();
    return true;
  }
  bad_object("expected ',' or '}' in the call object");
  return true;
}

// Arguments written as a JSON string holding JSON (Granite 4) are used as that JSON.
auto Engine::normalize_args(const std::string& raw) -> std::string {
  if (raw.empty() || raw == "null") return "{}";
  if (raw.front() == '"') {
    std::string inner = decode_string(raw);
    if (Json::accept(inner)) {
      Json v = Json::parse(inner);
      if (v.is_object() || v.is_array()) return inner;
    }
  }
  return raw;
}

void Engine::finish_object_call() {
  open_call(id_, name_);
  em_.args(normalize_args(args_raw_));
  close_call();
}

void Engine::object_end() {
  if (streaming_) {
    close_call();
    streaming_ = false;
  } else if (has_name_ && (has_args_ || !d_.args_required)) {
    if (jo_bare_ && !args_raw_.empty() && !Json::accept(args_raw_)) {
      bad_object("call arguments are not valid JSON");
      return;
    }
    finish_object_call();
  } else {
    bad_object(has_name_ ? "call object without arguments" : "JSON object without a call name");
    return;
  }
  go(jo_array_ ? St::kJoArrayNext : St::kJoClose);
}

bool Engine::jo_array_next() {
  if (!skip_ws()) return false;
  if (pos_ == buf_.size()) {
    truncated("a call list");
    end_block();
    return true;
  }
  char c = buf_[pos_];
  if (c == ',') {
    ++pos_;
    go(St::kJoObjStart);
    return true;
  }
  if (c == ']')
    ++pos_;
  else
    em_.warn("malformed_call", "expected ',' or ']' in the call list", abs(pos_));
  go(St::kJoClose);
  return true;
}

bool Engine::jo_close() {
  if (jo_close_.empty()) {
    end_block();
    return true;
  }
  std::size_t save = pos_;
  if (!skip_ws()) {
    pos_ = save;
    return false;
  }
  // Several call objects in one section, one per line (MiniMax-M1's <tool_calls>).
  if (!jo_bare_ && pos_ < buf_.size() && buf_[pos_] == '{') {
    go(St::kJoBody);
    return true;
  }
  Tri t = take(jo_close_);
  if (t == Tri::kMore) {
    pos_ = save;
    return false;
  }
  if (t == Tri::kNo) {
    pos_ = save;
    if (pos_ < buf_.size())
      em_.warn("missing_marker", "call not closed with " + std::string(jo_close_), abs(pos_));
  }
  end_block();
  return true;
}

}  // namespace chatwire::parse
