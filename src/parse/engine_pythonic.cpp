// The engine's states for Python call lists ([f(a=1)], f(a=1)\ng(b=2)), builtin calls and key-value
// calls.
#include "parse/engine.hpp"

namespace chatwire::parse {

// Calls read from Python syntax (builtin or pythonic) end their block.
void Engine::emit_python_calls(const std::vector<PyCall>& calls) {
  for (const auto& c : calls) {
    open_call("", c.name);
    em_.args(c.arguments);
    close_call();
  }
  end_block();
}

// `<|python_tag|>name.call(k="v")`: buffered to the end of the output, parsed once.
bool Engine::builtin() {
  if (!eof_) return false;
  std::vector<PyCall> calls;
  std::string error;
  std::string_view body = trim(std::string_view(buf_).substr(mark_));
  pos_ = buf_.size();
  if (!parse_python_calls(body, calls, error, opt_.max_json_depth)) {
    fallback("not_a_call", "builtin tool call: " + error);
    return true;
  }
  // A call with an argument JSON cannot hold (bytes, inf) is dropped, never silently.
  if (!error.empty()) em_.warn("invalid_call", "a call was dropped: " + error, abs(mark_));
  emit_python_calls(calls);
  return true;
}

// ---- pythonic ----
void Engine::start_py_bare() {
  py_depth_ = 0;
  py_quote_ = 0;
  py_escape_ = false;
  py_checked_ = false;
  go(St::kPyBare);
}

// Bare `[f(a=1), ...]`: held until the list closes (strings and brackets tracked), parsed once.
bool Engine::py_bare() {
  if (!py_checked_) {
    // Cheap early exit for prose: `[` must be followed by a name and `(`.
    std::size_t p = cand_ + 1;
    while (p < buf_.size() && is_ws(buf_[p])) ++p;
    std::size_t name_start = p;
    while (p < buf_.size() &&
           (std::isalnum(static_cast<unsigned char>(buf_[p])) || buf_[p] == '_' || buf_[p] == '.'))
      ++p;
    if (p == buf_.size() && !eof_) return false;
    bool ok = p > name_start && !std::isdigit(static_cast<unsigned char>(buf_[name_start]));
    while (ok && p < buf_.size() && is_ws(buf_[p])) ++p;
    if (ok && p == buf_.size() && !eof_) return false;
    if (!ok || p == buf_.size() || buf_[p] != '(') {
      pos_ = cand_;
      cand_ = kNone;
      content_start_ = false;
      emit(Route::kContent, std::string_view(buf_).substr(pos_, 1));  // the '[' is text
      ++pos_;
      go(St::kText);
      return true;
    }
    py_checked_ = true;
  }
  while (pos_ < buf_.size()) {
    char c = buf_[pos_++];
    if (py_quote_) {
      if (py_escape_)
        py_escape_ = false;
      else if (c == '\\')
        py_escape_ = true;
      else if (c == py_quote_)
        py_quote_ = 0;
      continue;
    }
    if (c == '\'' || c == '"')
      py_quote_ = c;
    else if (c == '[' || c == '(' || c == '{')
      ++py_depth_;
    else if ((c == ']' || c == ')' || c == '}') && --py_depth_ == 0) {
      return py_emit(std::string_view(buf_).substr(cand_, pos_ - cand_), false);
    }
  }
  if (!eof_) return false;
  return py_emit(std::string_view(buf_).substr(cand_, pos_ - cand_), true);
}

bool Engine::py_emit(std::string_view body, bool unterminated) {
  std::vector<PyCall> calls;
  std::string error;
  if (d_.syntax == CallSyntax::kKeyValue) {
    PyCall call;
    if (!parse_key_value_call(body, d_.kv_prefix, d_.kv_quote, call, error, opt_.max_json_depth)) {
      fallback("not_a_call", "not a key-value call: " + error);
      return true;
    }
    calls.push_back(std::move(call));
  } else if (!parse_python_calls(body, calls, error, opt_.max_json_depth)) {
    fallback("not_a_call", "not a Python call list: " + error);
    return true;
  }
  if (unterminated) truncated("a call list");
  if (!error.empty())
    em_.warn("invalid_call", "a call was dropped: " + error, abs(cand_ == kNone ? pos_ : cand_));
  emit_python_calls(calls);
  return true;
}

bool Engine::py_wrapped() {
  if (py_close_.empty()) {
    if (!eof_) return false;
    pos_ = buf_.size();
    return py_emit(std::string_view(buf_).substr(mark_), false);
  }
  MarkerSet close;
  close.add(py_close_, 1);
  MarkerSet::Hit hit = search(close);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!eof_) return false;
    pos_ = buf_.size();
    return py_emit(std::string_view(buf_).substr(mark_), true);
  }
  std::string_view body = std::string_view(buf_).substr(mark_, hit.at - mark_);
  pos_ = hit.at + hit.len;
  return py_emit(body, false);
}

}  // namespace chatwire::parse
