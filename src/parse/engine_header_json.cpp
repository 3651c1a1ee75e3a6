// The engine's states for sections of calls and header + JSON arguments: name<sep>{..}.
#include "parse/engine.hpp"

namespace chatwire::parse {

// Before a call, between calls, or after the last call of a header-JSON or XML block.
// Whitespace after a call is layout only if another call follows: looks before consuming.
bool Engine::between_calls() {
  const std::size_t before_ws = pos_;
  auto need_more = [&] {
    pos_ = before_ws;
    return false;
  };
  std::size_t p = pos_;
  while (p < buf_.size() && is_ws(buf_[p])) ++p;
  if (p == buf_.size() && !eof_) return false;
  pos_ = p;
  if (pos_ == buf_.size()) {
    if (in_section_) truncated("a tool-call section");
    end_block_or_fallback();
    return true;
  }
  Tri t = at(d_.section_open);
  if (t == Tri::kMore) return need_more();
  if (t == Tri::kYes && !in_section_) {
    pos_ += d_.section_open.size();
    in_section_ = true;
    return true;
  }
  t = take(d_.call_open);
  if (t == Tri::kMore) return need_more();
  if (t == Tri::kYes) {
    mark_ = pos_;
    name_.clear();
    id_.clear();
    go(d_.syntax == CallSyntax::kXmlParams ? St::kXpName : St::kHjHeader);
    return true;
  }
  if (!in_section_) {
    pos_ = before_ws;  // what follows the call is text, with its layout
    end_block_or_fallback();
    return true;
  }
  t = take(d_.section_close);
  if (t == Tri::kMore) return need_more();
  if (t == Tri::kYes) {
    end_block_or_fallback();
    return true;
  }
  for (auto noise : d_.noise) {
    t = take(noise);
    if (t == Tri::kMore) return need_more();
    if (t == Tri::kYes) return true;
  }
  if (d_.syntax == CallSyntax::kXmlParams) {
    t = skip_function_line();
    if (t == Tri::kMore) return need_more();
    if (t == Tri::kYes) return true;
    if (committed_) em_.warn("missing_marker", "tool-call section not closed", abs(pos_));
  } else {
    em_.warn("malformed_call", "unexpected text inside the tool-call section", abs(pos_));
  }
  end_block_or_fallback();
  return true;
}

// A function-name line before the invoke (step3: `function<sep>name\n<steptml:invoke`): kYes
// leaves pos_ at the call marker, kNo leaves pos_ where it was.
auto Engine::skip_function_line() -> Tri {
  std::size_t q = pos_;
  while (q < buf_.size() && q - pos_ < 256 &&
         (std::isalnum(static_cast<unsigned char>(buf_[q])) || buf_[q] == '_' || buf_[q] == '-' ||
          buf_[q] == '.' || is_ws(buf_[q])))
    ++q;
  if (q == pos_) return Tri::kNo;
  if (q == buf_.size() && !eof_) return Tri::kMore;
  std::size_t save = pos_;
  pos_ = q;
  Tri t = at(d_.call_open);
  if (t == Tri::kNo) pos_ = save;
  return t;
}

// ---- header + JSON arguments ----
void Engine::end_block_or_fallback() {
  if (committed_ || cand_ == kNone) {
    end_block();
  } else {
    fallback("not_a_call", "tool-call section without a call");
  }
}

bool Engine::hj_header() {
  if (d_.json_list_calls && pos_ == mark_) {
    // Mistral: `[TOOL_CALLS][{"name": .., "arguments": ..}]` after the same marker.
    std::size_t p = pos_;
    while (p < buf_.size() && is_ws(buf_[p])) ++p;
    if (p == buf_.size() && !eof_) return false;
    if (p < buf_.size() && (buf_[p] == '[' || buf_[p] == '{')) {
      pos_ = p;
      jo_close_ = {};
      jo_bare_ = false;
      jo_builtin_ = false;
      go(St::kJoBody);
      return true;
    }
  }
  MarkerSet::Hit hit = search(header_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!eof_) return false;
    pos_ = buf_.size();
    if (!d_.content_name.empty() && trim(std::string_view(buf_).substr(mark_)) == d_.content_name) {
      end_block();
      return true;
    }
    fallback("truncated", "output ended inside a call header");
    return true;
  }
  std::string header(trim(std::string_view(buf_).substr(mark_, hit.at - mark_)));
  pos_ = hit.at + hit.len;
  if (d_.id_first && hit.tag == 2 && !hj_id_done_) {
    // `id<id_marker>name<header_end>`: the id came first; the name follows.
    id_ = std::move(header);
    hj_id_done_ = true;
    mark_ = pos_;
    return true;
  }
  hj_id_done_ = false;
  if (!d_.content_name.empty() && header == d_.content_name) {
    // Functionary's "all" recipient: what follows is content.
    in_reasoning_ = false;
    back_to_text();
    return true;
  }
  infer_name_ = false;
  if (d_.id_in_header) {
    // Kimi: the header is the id "functions.name:index"; a bare counter "0" names no function,
    // which is then inferred from the tools by the argument keys.
    id_ = header;
    auto all_digits = [](std::string_view v) {
      return !v.empty() &&
             std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    std::string_view name = header;
    if (name.starts_with("functions.")) name.remove_prefix(10);
    auto colon = name.rfind(':');
    if (all_digits(header)) {
      infer_name_ = true;
      infer_args_.clear();
      name = "inferred";
    } else if (colon == std::string_view::npos || !all_digits(name.substr(colon + 1))) {
      fallback("not_a_call", "call id is not of the form name:index");
      return true;
    } else {
      name = name.substr(0, colon);
    }
    name_.assign(name);
  } else {
    name_ = header;
    if (!d_.type_separator.empty()) {
      if (auto p = name_.find(d_.type_separator); p != std::string::npos)
        name_ = std::string(trim(std::string_view(name_).substr(p + d_.type_separator.size())));
    }
  }
  if (!valid_name(name_)) {
    fallback("not_a_call", "call header is not a function name");
    return true;
  }
  if (hit.tag == 2 && !d_.id_first) {
    mark_ = pos_;
    go(St::kHjId);
    return true;
  }
  go(St::kHjArgsStart);
  return true;
}

bool Engine::hj_id() {
  MarkerSet::Hit hit = search(header_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!eof_) return false;
    pos_ = buf_.size();
    fallback("truncated", "output ended inside a call id");
    return true;
  }
  id_.assign(trim(std::string_view(buf_).substr(mark_, hit.at - mark_)));
  pos_ = hit.at + hit.len;
  go(St::kHjArgsStart);
  return true;
}

bool Engine::hj_args_start() {
  if (!skip_ws()) return false;
  if (d_.fenced_args) {
    for (std::string_view fence : {std::string_view("```json"), std::string_view("```")}) {
      Tri t = take(fence);
      if (t == Tri::kMore) return false;
      if (t == Tri::kYes) break;
    }
    if (!skip_ws()) return false;
  }
  if (!infer_name_) open_call(id_, name_);
  if (pos_ == buf_.size()) {
    truncated("a tool call");
    resolve_inferred();
    close_call(false);
    end_block();
    return true;
  }
  // With an end marker (special tokens that cannot occur in JSON) the arguments are the text
  // up to it, valid JSON or not; without one, a JSON value ends them.
  if (!d_.call_close.empty() || d_.fenced_args) {
    go(St::kHjRaw);
    return true;
  }
  char c = buf_[pos_];
  if (c == '{' || c == '[' || c == '"') {
    scanner_.reset();
    go(St::kHjArgs);
  } else {
    em_.warn("invalid_arguments", "arguments are not JSON; kept as written", abs(pos_));
    go(St::kHjRaw);
  }
  return true;
}

bool Engine::hj_args() {
  std::size_t n = scanner_.feed(buf_.data() + pos_, buf_.size() - pos_);
  std::size_t end = scanner_.done() ? pos_ + n : emit_end(pos_ + n);
  if (end > pos_) em_.args(std::string_view(buf_).substr(pos_, end - pos_));
  pos_ = end;
  if (scanner_.done()) {
    go(St::kHjAfterArgs);
    return true;
  }
  if (!eof_) return false;
  truncated("tool call arguments");
  close_call(false);
  end_block();
  return true;
}

bool Engine::hj_raw() {
  MarkerSet::Hit hit = search(raw_args_markers_);
  std::size_t end = hit.kind == MarkerSet::Hit::kNotFound ? emit_end(buf_.size()) : hit.at;
  std::size_t stop = end;
  if (hit.kind == MarkerSet::Hit::kFound) {
    while (stop > pos_ && is_ws(buf_[stop - 1])) --stop;  // layout before the end marker
  } else if (!eof_) {
    while (stop > pos_ && is_ws(buf_[stop - 1])) --stop;  // might be layout: hold
  }
  if (stop > pos_) {
    std::string_view piece = std::string_view(buf_).substr(pos_, stop - pos_);
    if (infer_name_) {
      infer_args_.append(piece);
    } else {
      em_.args(piece);
    }
  }
  pos_ = stop;
  if (hit.kind == MarkerSet::Hit::kFound) {
    pos_ = hit.at;
    go(St::kHjAfterArgs);
    return true;
  }
  if (!eof_) return false;
  pos_ = buf_.size();
  resolve_inferred();
  close_call(false);
  end_block();
  return true;
}

bool Engine::hj_after_args() {
  std::size_t save = pos_;
  if (!skip_ws()) {
    pos_ = save;
    return false;
  }
  if (d_.fenced_args) {
    if (take("```") == Tri::kMore) {
      pos_ = save;
      return false;
    }
    if (!skip_ws()) {
      pos_ = save;
      return false;
    }
  }
  Tri t = at(d_.call_close);
  if (t == Tri::kMore) {
    pos_ = save;
    return false;
  }
  resolve_inferred();
  close_call();
  if (t == Tri::kYes) {
    pos_ += d_.call_close.size();
  } else {
    if (!d_.call_close.empty() && pos_ < buf_.size())
      em_.warn("missing_marker", "call not closed with " + std::string(d_.call_close), abs(pos_));
    if (d_.call_close.empty() || !in_section_) pos_ = save;  // what follows is text
  }
  if (in_section_) {
    go(St::kBetweenCalls);
  } else {
    end_block();
  }
  return true;
}

// The one tool whose parameters hold every argument key (or the only tool); "" if ambiguous.
auto Engine::infer_tool_name(const std::string& args) const -> std::string {
  if (!tools_.is_array()) return "";
  auto fn_of = [](const Json& tool) -> const Json& {
    auto it = tool.find("function");
    return it != tool.end() && it->is_object() ? *it : tool;
  };
  if (tools_.size() == 1) return fn_of(tools_[0]).value("name", "");
  Json parsed = Json::parse(args, nullptr, false);
  if (!parsed.is_object()) return "";
  std::string found;
  for (const auto& tool : tools_) {
    if (!tool.is_object()) continue;
    const Json& fn = fn_of(tool);
    const Json* props = nullptr;
    if (auto p = fn.find("parameters"); p != fn.end() && p->is_object())
      if (auto q = p->find("properties"); q != p->end() && q->is_object()) props = &*q;
    bool fits = props != nullptr;
    for (auto it = parsed.begin(); fits && it != parsed.end(); ++it)
      fits = props->contains(it.key());
    if (!fits) continue;
    if (!found.empty()) return "";  // ambiguous
    found = fn.value("name", "");
  }
  return found;
}

void Engine::resolve_inferred() {
  if (!infer_name_) return;
  infer_name_ = false;
  std::string name = infer_tool_name(infer_args_);
  if (name.empty()) {
    em_.warn("not_a_call",
             "call id '" + id_ +
                 "' names no function and the tools do not identify one; kept as content",
             abs(pos_));
    // Lossless: with no call yet, the whole block becomes content when it ends.
    if (committed_) emit(Route::kContent, infer_args_);
  } else {
    open_call(id_, name);
    em_.args(infer_args_);
  }
  infer_args_.clear();
}

}  // namespace chatwire::parse
