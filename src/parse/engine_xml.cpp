// The engine's states for XML calls: a call element naming the function, one element per parameter.
#include "parse/engine.hpp"

namespace chatwire::parse {

// ---- XML parameters ----
// `name="x"` / `="x"` / `x` -> x
auto Engine::attr_name(std::string_view header) -> std::string {
  header = trim(header);
  if (auto p = header.find("name="); p != std::string_view::npos) {
    std::string_view v = header.substr(p + 5);
    if (!v.empty() && (v[0] == '"' || v[0] == '\'')) {
      char q = v[0];
      v.remove_prefix(1);
      auto e = v.find(q);
      return std::string(v.substr(0, e));
    }
    auto e = v.find_first_of(" \t\n>");
    return std::string(trim(v.substr(0, e)));
  }
  if (!header.empty() && header[0] == '=') header.remove_prefix(1);
  header = trim(header);
  if (header.size() >= 2 && (header[0] == '"' || header[0] == '\'') && header.back() == header[0])
    header = header.substr(1, header.size() - 2);
  return std::string(header);
}

bool Engine::xp_name() {
  MarkerSet::Hit hit = search(name_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!eof_) return false;
    pos_ = buf_.size();
    fallback("truncated", "output ended inside a call name");
    return true;
  }
  std::string name = attr_name(std::string_view(buf_).substr(mark_, hit.at - mark_));
  pos_ = hit.at + (hit.tag == 1 ? hit.len : 0);
  if (!valid_name(name)) {
    fallback("not_a_call", "call marker not followed by a function name");
    return true;
  }
  open_call("", name);
  name_ = std::move(name);
  em_.args("{");
  first_param_ = true;
  go(St::kXpParams);
  return true;
}

void Engine::close_xml_call() {
  em_.args("}");
  close_call(false);  // built by us from escaped values: valid by construction
}

bool Engine::xp_params() {
  if (!skip_ws()) return false;
  if (pos_ == buf_.size()) {
    truncated("a tool call");
    close_xml_call();
    end_block();
    return true;
  }
  Tri t = take(d_.param_open);
  if (t == Tri::kMore) return false;
  if (t == Tri::kYes) {
    mark_ = pos_;
    go(St::kXpParamName);
    return true;
  }
  t = take(d_.call_close);
  if (t == Tri::kMore) return false;
  if (t == Tri::kYes) {
    close_xml_call();
    go(St::kBetweenCalls);
    return true;
  }
  t = at(d_.section_close);
  if (t == Tri::kMore) return false;
  if (t == Tri::kYes) {
    close_xml_call();
    em_.warn("missing_marker", "call not closed with " + std::string(d_.call_close), abs(pos_));
    go(St::kBetweenCalls);
    return true;
  }
  em_.warn("malformed_call", "text inside a call that is not a parameter; kept as content",
           abs(pos_));
  go(St::kXpGarbage);
  return true;
}

bool Engine::xp_garbage() {
  MarkerSet::Hit hit = search(garbage_markers_);
  std::size_t end = hit.kind == MarkerSet::Hit::kFound ? hit.at : emit_end(hit.at);
  if (end > pos_) emit(Route::kContent, std::string_view(buf_).substr(pos_, end - pos_));
  pos_ = end;
  if (hit.kind == MarkerSet::Hit::kFound || eof_) {
    go(St::kXpParams);
    return true;
  }
  return false;
}

bool Engine::xp_param_name() {
  MarkerSet::Hit hit = search(param_name_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!eof_) return false;
    pos_ = buf_.size();
    truncated("a parameter name");
    close_xml_call();
    end_block();
    return true;
  }
  std::string_view header = std::string_view(buf_).substr(mark_, hit.at - mark_);
  param_ = attr_name(header);
  // DeepSeek V3.2 DSML: string="false" marks a JSON-typed value.
  json_value_ = header.find("string=\"false\"") != std::string_view::npos;
  pos_ = hit.at + hit.len;
  types_ = param_types(tools_, name_, param_);
  go(d_.value_open.empty() ? St::kXpValue : St::kXpValueOpen);
  value_started_ = false;
  return true;
}

bool Engine::xp_value_open() {
  std::size_t save = pos_;
  if (!skip_ws()) return false;
  Tri t = take(d_.value_open);
  if (t == Tri::kMore) {
    pos_ = save;
    return false;
  }
  if (t == Tri::kNo) {
    em_.warn("missing_marker", "parameter value without " + std::string(d_.value_open), abs(pos_));
  }
  go(St::kXpValue);
  return true;
}

void Engine::param_prefix() {
  std::string s = first_param_ ? "" : ", ";
  first_param_ = false;
  append_json_quoted(s, param_);
  s += ": ";
  em_.args(s);
}

bool Engine::streams_as_string() const {
  if (json_value_ && !types_.known) return false;
  if (types_.known) return types_.first == &ParamTypes::string;
  return d_.untyped == UntypedValues::kString;
}

// End of buf_[from..end) without the value's trailing layout (see ValueFraming).
auto Engine::without_trailing_layout(std::size_t from, std::size_t end) const -> std::size_t {
  if (d_.framing == ValueFraming::kStripOneNewline) {
    if (end > from && buf_[end - 1] == '\n') --end;
    if (end > from && buf_[end - 1] == '\r') --end;
  } else if (d_.framing == ValueFraming::kTrim) {
    while (end > from && is_ws(buf_[end - 1])) --end;
  }
  return end;
}

bool Engine::xp_value() {
  if (!value_started_) {
    // Leading layout of the value.
    if (d_.framing == ValueFraming::kStripOneNewline) {
      if (pos_ == buf_.size() && !eof_) return false;
      if (pos_ < buf_.size() && buf_[pos_] == '\n')
        ++pos_;
      else if (buf_.compare(pos_, 2, "\r\n") == 0)
        pos_ += 2;
      else if (pos_ + 1 == buf_.size() && buf_[pos_] == '\r' && !eof_)
        return false;
    } else if (d_.framing == ValueFraming::kTrim) {
      if (!skip_ws()) return false;
    }
    value_started_ = true;
    streaming_value_ = streams_as_string();
    mark_ = pos_;
    quote_open_ = false;
    if (streaming_value_) param_prefix();
  }
  MarkerSet::Hit hit = search(value_markers_);
  bool found = hit.kind == MarkerSet::Hit::kFound;
  if (!found && !eof_) {
    if (streaming_value_) {
      // Emit what cannot be trailing layout or the start of the end marker.
      std::size_t end = emit_end(without_trailing_layout(pos_, hit.at));
      // A string value is held until it cannot be the literal null (read as JSON null).
      if (end > pos_ && (quote_open_ || end - mark_ > 4)) {
        std::string escaped = quote_open_ ? "" : "\"";
        quote_open_ = true;
        append_json_escaped(escaped, std::string_view(buf_).substr(pos_, end - pos_));
        em_.args(escaped);
        pos_ = end;
      }
    }
    return false;
  }
  std::size_t end = found ? hit.at : buf_.size();
  std::size_t stop = without_trailing_layout(streaming_value_ ? pos_ : mark_, end);
  if (!found) truncated("a parameter value");
  if (streaming_value_) {
    std::string_view rest = std::string_view(buf_).substr(pos_, stop - pos_);
    std::string escaped;
    if (!quote_open_ && (trim(rest) == "null" || trim(rest) == "None") && types_.known) {
      escaped = "null";
    } else {
      if (!quote_open_) escaped = "\"";
      append_json_escaped(escaped, rest);
      escaped += '"';
    }
    em_.args(escaped);
  } else {
    std::string_view raw = std::string_view(buf_).substr(mark_, stop - mark_);
    std::string value;
    if (json_value_ && !types_.known) {
      std::string_view t = trim(raw);
      if (Json::accept(t)) {
        value.assign(t);
      } else {
        em_.warn("coercion", "parameter " + param_ + " is marked JSON but is not; kept as a string",
                 abs(mark_));
        append_json_quoted(value, raw);
      }
    } else {
      bool ok = true;
      value = coerce_value(types_.known ? trim(raw) : raw, types_, d_.untyped, &ok);
      if (!ok)
        em_.warn("coercion",
                 "parameter " + param_ + " does not match its schema type; kept as a string",
                 abs(mark_));
    }
    param_prefix();
    em_.args(value);
  }
  pos_ = end;
  if (found && hit.tag == 1)
    pos_ += hit.len;
  else if (found)
    em_.warn("missing_marker", "parameter not closed with " + std::string(d_.value_close),
             abs(end));
  go(St::kXpParams);
  return true;
}

}  // namespace chatwire::parse
