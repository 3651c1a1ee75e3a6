// The header + JSON family: a call marker, a name (and id) header, a separator, JSON arguments,
// an optional end marker (`<tool_call>name<sep>{..}</tool_call>`, Kimi's ids, DeepSeek's fenced
// arguments, Mistral's `name[ARGS]{..}`, Functionary's `>>>name\n{..}`).
#include "parse/engine_section.hpp"

namespace chatwire::parse {

namespace {

class HeaderJsonFamily final : public SectionFamily {
 public:
  explicit HeaderJsonFamily(Core& core) : SectionFamily(core) {
    const Dialect& d = c_.d;
    for (auto m : d.header_end) header_markers_.add(m, 1);
    header_markers_.add(d.id_marker, 2);
    if (d.header_recovery) header_markers_.add("[{", 3);
    raw_args_markers_.add(d.call_close, 1);
    raw_args_markers_.add(d.section_close, 1);
    raw_args_markers_.add(d.call_open, 1);
    end_markers_.add(d.call_close, 1);
    end_markers_.add(d.section_close, 1);
    if (d.fenced_args) raw_args_markers_.add("```", 1);
  }

  void on_header() override {
    c_.mark = c_.pos;
    name_.clear();
    id_.clear();
    in_section_ = false;
    go(St::kHeader);
  }

  bool step() override {
    switch (st_) {
      case St::kBetweenCalls:
        return between_calls();
      case St::kHeader:
        return hj_header();
      case St::kId:
        return hj_id();
      case St::kArgsStart:
        return hj_args_start();
      case St::kArgs:
        return hj_args();
      case St::kRaw:
        return hj_raw();
      case St::kAfterArgs:
        return hj_after_args();
    }
    return false;
  }

 private:
  enum class St {
    kBetweenCalls,
    kHeader,     // the name (or id) header, up to its end marker
    kId,         // an id after the name (Mistral)
    kArgsStart,  // fences and layout before the arguments
    kArgs,       // a JSON value, streamed as it is lexed
    kRaw,        // the text up to the end marker, streamed
    kAfterArgs,  // the call's end marker
  };

  void go(St state) {
    st_ = state;
    c_.enter(this);
  }
  void go_between_calls() override { go(St::kBetweenCalls); }
  void begin_call() override {
    c_.mark = c_.pos;
    name_.clear();
    id_.clear();
    go(St::kHeader);
  }

  bool hj_header();
  bool hj_label_header();
  bool hj_id();
  bool hj_args_start();
  bool hj_args();
  bool hj_raw();
  bool hj_after_args();
  // The one tool whose parameters hold every argument key and that requires no other (or the
  // only tool); "" if none or several.
  std::string infer_tool_name(const std::string& args) const;
  // Opens the call to the inferred function; false when none is, and then the call is text:
  // after earlier calls of the block, its marker, header and arguments are written as content
  // (the caller writes its close too); with none, the block so far is text (Core::fallback).
  bool resolve_inferred();

  St st_ = St::kBetweenCalls;
  MarkerSet header_markers_, raw_args_markers_;
  MarkerSet end_markers_;  // the call's and section's closes (a cut-off one ends the arguments)
  JsonScanner scanner_;
  std::string name_, id_;
  std::string call_type_;     // the header's text before Dialect::type_separator (`function`)
  bool id_done_ = false;      // id_first: the id of the header being read is taken
  bool infer_name_ = false;   // Kimi bare counter id: name inferred once the arguments are read
  bool raw_warned_ = false;   // the raw arguments did not start as JSON: invalid_arguments given
  bool raw_wrapped_ = false;  // Dialect::raw_args_key: the raw text is that parameter's value
  std::string infer_args_;
  std::string infer_header_;  // the inferred call's marker and header as written
};

bool HeaderJsonFamily::hj_header() {
  if (!c_.d.label_close.empty()) return hj_label_header();
  if (c_.d.json_list_calls && c_.pos == c_.mark) {
    // Mistral: `[TOOL_CALLS][{"name": .., "arguments": ..}]` after the same marker.
    std::size_t p = c_.pos;
    while (p < c_.buf.size() && is_ws(c_.buf[p])) ++p;
    if (p == c_.buf.size() && !c_.eof) return false;
    if (p < c_.buf.size() && (c_.buf[p] == '[' || c_.buf[p] == '{')) {
      c_.pos = p;
      c_.family(CallSyntax::kJsonObject).on_list();
      return true;
    }
  }
  if (c_.d.header_recovery && c_.pos == c_.mark && !id_done_) {
    // `name{..}`: a name followed by its arguments' `{`, the separator lost.
    std::size_t p = c_.pos;
    while (p < c_.buf.size() && p - c_.pos <= 256 && is_name_char(c_.buf[p])) ++p;
    if (p == c_.buf.size() && !c_.eof) return false;
    if (p > c_.pos && p < c_.buf.size() && c_.buf[p] == '{') {
      name_.assign(std::string_view(c_.buf).substr(c_.pos, p - c_.pos));
      id_.clear();
      infer_name_ = false;
      c_.pos = p;
      go(St::kArgsStart);
      return true;
    }
  }
  MarkerSet::Hit hit = c_.search(header_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!c_.eof) return false;
    c_.pos = c_.buf.size();
    if (!c_.d.content_name.empty() &&
        trim(std::string_view(c_.buf).substr(c_.mark)) == c_.d.content_name) {
      c_.end_block();
      return true;
    }
    not_a_call("truncated", "output ended inside a call header");
    return true;
  }
  if (hit.tag == 3) {
    // Text, then a JSON call list: the text is content, the list is read as calls.
    c_.em.warn("malformed_call", "text between the call marker and the call list, kept as content",
               c_.abs(c_.mark));
    c_.emit(Route::kContent, c_.bytes(c_.mark, hit.at));
    c_.cand = hit.at;
    c_.pos = hit.at;
    c_.family(CallSyntax::kJsonObject).on_list();
    return true;
  }
  std::string header(trim(std::string_view(c_.buf).substr(c_.mark, hit.at - c_.mark)));
  c_.pos = hit.at + hit.len;
  if (c_.d.id_first && hit.tag == 2 && !id_done_) {
    // `id<id_marker>name<header_end>`: the id came first; the name follows.
    id_ = std::move(header);
    id_done_ = true;
    c_.mark = c_.pos;
    return true;
  }
  id_done_ = false;
  if (!c_.d.content_name.empty() && header == c_.d.content_name) {
    // Functionary's "all" recipient: what follows is content.
    c_.in_reasoning = false;
    c_.back_to_text();
    return true;
  }
  infer_name_ = false;
  if (c_.d.id_in_header) {
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
    if (colon != std::string_view::npos && all_digits(name.substr(colon + 1)) && colon > 0) {
      name = name.substr(0, colon);
    } else if (!c_.lists(name)) {
      // An id with no function name in it (a bare counter "0", `call_9`, a UUID): the name is
      // inferred from the arguments, as SGLang resolves such ids. A bare declared name is that
      // function.
      infer_name_ = true;
      infer_args_.clear();
      // The marker and header as written, for the content if no function is inferred.
      std::size_t from = c_.mark;
      const std::string_view open = c_.d.call_open;
      if (from >= open.size() && c_.buf.compare(from - open.size(), open.size(), open) == 0)
        from -= open.size();
      infer_header_.assign(c_.bytes(from, c_.pos));
      name = "inferred";
    }
    name_.assign(name);
  } else {
    name_ = header;
    call_type_.clear();
    if (!c_.d.type_separator.empty()) {
      if (auto p = name_.find(c_.d.type_separator); p != std::string::npos) {
        call_type_.assign(trim(std::string_view(name_).substr(0, p)));
        name_ = std::string(trim(std::string_view(name_).substr(p + c_.d.type_separator.size())));
      }
    }
  }
  if (!c_.valid_name(name_)) {
    not_a_call("not_a_call", "call header is not a function name");
    return true;
  }
  // The call's type before the separator is read, not kept: the templates write the OpenAI
  // call's type there, which is always `function`.
  if (!call_type_.empty() && call_type_ != "function")
    c_.em.warn("malformed_call",
               "call type '" + quoted_start(call_type_) +
                   (is_word(call_type_) ? "' is not function; read as a function call"
                                        : "' is not one word; left out"),
               c_.abs(c_.mark));
  if (hit.tag == 2 && !c_.d.id_first) {
    c_.mark = c_.pos;
    go(St::kId);
    return true;
  }
  go(St::kArgsStart);
  return true;
}

// Dialect::label_close: `label<label_close> name` or, without the close, `label` as the name.
bool HeaderJsonFamily::hj_label_header() {
  constexpr std::size_t kLongest = 256;  // a label or name longer than this is not a header
  const std::string_view buf(c_.buf);
  const std::string_view close = c_.d.label_close;
  const std::size_t size = buf.size();
  auto skip_ws = [&](std::size_t p) {
    while (p < size && is_ws(buf[p])) ++p;
    return p;
  };
  auto word_end = [&](std::size_t p, std::string_view stop) {
    const std::size_t limit = std::min(size, p + kLongest + 1);
    while (p < limit && !is_ws(buf[p]) && !buf.substr(p).starts_with(stop) &&
           !buf.substr(p).starts_with(c_.d.call_close))
      ++p;
    return p;
  };
  auto waits = [&](std::size_t p) { return p == size && !c_.eof; };
  const std::size_t label = skip_ws(c_.mark);
  const std::size_t label_end = word_end(label, close);
  if (waits(label_end)) return false;
  std::size_t name = label, name_end = label_end;
  std::size_t args_from = kNone;  // where the arguments start, when not right after the name
  std::string label_warning;      // given once the header is read (this state may run again)
  std::size_t after = skip_ws(label_end);
  if (waits(after)) return false;
  const std::string_view rest = buf.substr(after);
  if (rest.size() < close.size() && close.starts_with(rest) && !c_.eof) return false;
  if (const std::string_view text = buf.substr(label, label_end - label);
      rest.starts_with(close) && Core::valid_name(text) && !c_.d.call_label.empty() &&
      text != c_.d.call_label) {
    // The label names the tool and the block's body is its input (`<tool: bash>\nls\n</tool>`,
    // CWM's own form in Meta's prompting guide and its RL harness's parser).
    args_from = after + close.size();
  } else if (rest.starts_with(close)) {
    // The label the template writes (`function`) is informational: the name is the first word
    // after its close. A label that is no name is read for nothing, which a warning says.
    if (!Core::valid_name(text))  // (`function`, `web-search`, `functions.search`)
      label_warning = "call label '" + quoted_start(text) + "' is not a name; left out";
    name = skip_ws(after + close.size());
    if (waits(name)) return false;
    name_end = word_end(name, c_.d.call_close);
    if (waits(name_end)) return false;
  } else if (after == label_end && after < size) {
    name_end = label;  // no space after the label: not a header
  }
  if (name_end - name > kLongest || name_end == name) {
    c_.pos = name_end;
    if (c_.eof && name_end == size) {
      not_a_call("truncated", "output ended inside a call header");
    } else {
      not_a_call("not_a_call", "call marker not followed by a function name");
    }
    return true;
  }
  name_.assign(buf.substr(name, name_end - name));
  id_.clear();
  infer_name_ = false;
  c_.pos = args_from != kNone ? args_from : name_end;
  if (!c_.valid_name(name_)) {
    not_a_call("not_a_call", "call header is not a function name");
    return true;
  }
  if (!label_warning.empty()) c_.em.warn("malformed_call", label_warning, c_.abs(label));
  go(St::kArgsStart);
  return true;
}

bool HeaderJsonFamily::hj_id() {
  MarkerSet::Hit hit = c_.search(header_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!c_.eof) return false;
    c_.pos = c_.buf.size();
    not_a_call("truncated", "output ended inside a call id");
    return true;
  }
  id_.assign(trim(std::string_view(c_.buf).substr(c_.mark, hit.at - c_.mark)));
  c_.pos = hit.at + hit.len;
  go(St::kArgsStart);
  return true;
}

bool HeaderJsonFamily::hj_args_start() {
  if (!c_.skip_ws()) return false;
  if (c_.d.fenced_args) {
    for (std::string_view fence : {std::string_view("```json"), std::string_view("```")}) {
      Tri t = c_.take(fence);
      if (t == Tri::kMore) return false;
      if (t == Tri::kYes) break;
    }
    if (!c_.skip_ws()) return false;
  }
  if (!infer_name_) c_.open_call(id_, name_);
  if (c_.pos == c_.buf.size()) {
    c_.truncated("a tool call");
    if (!resolve_inferred()) return true;
    c_.close_call(false);
    c_.end_block();
    return true;
  }
  char c = c_.buf[c_.pos];
  raw_warned_ = false;
  raw_wrapped_ = !c_.d.raw_args_key.empty() && c != '{' && c != '[' && !infer_name_ &&
                 (c_.d.raw_args_function.empty() || name_ == c_.d.raw_args_function);
  if (raw_wrapped_) {
    c_.em.args_escaped("{\"", c_.d.raw_args_key, "\": \"");
    go(St::kRaw);
    return true;
  }
  // With an end marker (special tokens that cannot occur in JSON) the arguments are the text
  // up to it, valid JSON or not; without one, a JSON value ends them.
  if (!c_.d.call_close.empty() || c_.d.fenced_args) {
    go(St::kRaw);
    return true;
  }
  if (c == '{' || c == '[' || c == '"') {
    scanner_.reset();
    go(St::kArgs);
  } else {
    c_.em.warn("invalid_arguments", "arguments are not JSON; kept as written", c_.abs(c_.pos));
    raw_warned_ = true;
    go(St::kRaw);
  }
  return true;
}

bool HeaderJsonFamily::hj_args() {
  std::size_t n = scanner_.feed(c_.buf.data() + c_.pos, c_.buf.size() - c_.pos);
  std::size_t end = scanner_.done() ? c_.pos + n : c_.emit_end(c_.pos + n);
  if (end > c_.pos) c_.em.args(std::string_view(c_.buf).substr(c_.pos, end - c_.pos));
  c_.pos = end;
  if (scanner_.done()) {
    go(St::kAfterArgs);
    return true;
  }
  if (!c_.eof) return false;
  c_.truncated("tool call arguments");
  c_.close_call(false);
  c_.end_block();
  return true;
}

bool HeaderJsonFamily::hj_raw() {
  MarkerSet::Hit hit = c_.search(raw_args_markers_);
  std::size_t end = hit.kind == MarkerSet::Hit::kNotFound ? c_.emit_end(c_.buf.size()) : hit.at;
  // At the output's end, the beginning of the call's end marker cut off by it (`{..}<|end_`) is
  // not part of the arguments: it is kept as content (free-text arguments keep every byte).
  std::size_t cut_marker = c_.buf.size();
  if (hit.kind == MarkerSet::Hit::kNotFound && c_.eof && !raw_wrapped_) {
    // Searched as if more could come: a partial hit is where the cut-off marker begins.
    const MarkerSet::Hit cut = end_markers_.find(c_.buf, c_.pos, false);
    if (cut.kind == MarkerSet::Hit::kPartial) cut_marker = end = cut.at;
  }
  std::size_t stop = end;
  if (hit.kind == MarkerSet::Hit::kFound || cut_marker < c_.buf.size()) {
    while (stop > c_.pos && is_ws(c_.buf[stop - 1])) --stop;  // layout before the end marker
  } else if (!c_.eof) {
    while (stop > c_.pos && is_ws(c_.buf[stop - 1])) --stop;  // might be layout: hold
  }
  if (stop > c_.pos) {
    std::string_view piece = std::string_view(c_.buf).substr(c_.pos, stop - c_.pos);
    if (infer_name_) {
      infer_args_.append(piece);
    } else if (raw_wrapped_) {
      c_.em.args_escaped("", piece, "");
    } else {
      c_.em.args(piece);
    }
  }
  c_.pos = stop;
  if (hit.kind != MarkerSet::Hit::kFound && !c_.eof) return false;
  if (raw_wrapped_) c_.em.args("\"}");
  raw_wrapped_ = false;
  if (hit.kind == MarkerSet::Hit::kFound) {
    c_.pos = hit.at;
    go(St::kAfterArgs);
    return true;
  }
  c_.pos = c_.buf.size();
  // The output ended before the call's end marker: the call is kept, cut off, and its arguments
  // checked (a JSON object cut short gets its invalid_arguments warning).
  if (!c_.d.call_close.empty()) c_.truncated("a tool call");
  if (!resolve_inferred()) {
    if (c_.active != this) return true;  // the block became text, to the end of the output
    c_.end_block();
    if (cut_marker < c_.buf.size()) c_.emit(Route::kContent, c_.bytes(cut_marker, c_.buf.size()));
    return true;
  }
  c_.close_call(!raw_warned_);
  raw_warned_ = false;
  c_.end_block();
  if (cut_marker < c_.buf.size()) c_.emit(Route::kContent, c_.bytes(cut_marker, c_.buf.size()));
  return true;
}

bool HeaderJsonFamily::hj_after_args() {
  std::size_t save = c_.pos;
  if (!c_.skip_ws()) {
    c_.pos = save;
    return false;
  }
  if (c_.d.fenced_args) {
    if (c_.take("```") == Tri::kMore) {
      c_.pos = save;
      return false;
    }
    if (!c_.skip_ws()) {
      c_.pos = save;
      return false;
    }
  }
  Tri t = c_.at(c_.d.call_close);
  if (t == Tri::kMore) {
    c_.pos = save;
    return false;
  }
  const bool is_call = resolve_inferred();
  if (!is_call && c_.active != this) return true;  // the block so far became text
  if (is_call)
    c_.close_call(!raw_warned_);  // raw arguments already warned about are not checked again
  raw_warned_ = false;
  if (t == Tri::kYes) {
    if (!is_call) c_.emit(Route::kContent, c_.d.call_close);
    c_.pos += c_.d.call_close.size();
  } else {
    if (!c_.d.call_close.empty() && c_.pos < c_.buf.size())
      c_.em.warn("missing_marker", "call not closed with " + std::string(c_.d.call_close),
                 c_.abs(c_.pos));
    if (c_.d.call_close.empty() || !in_section_) c_.pos = save;  // what follows is text
  }
  if (in_section_) {
    go(St::kBetweenCalls);
  } else {
    c_.end_block();
  }
  return true;
}

// The one tool whose parameters hold every argument key (or the only tool); "" if ambiguous.
auto HeaderJsonFamily::infer_tool_name(const std::string& args) const -> std::string {
  if (!c_.tools.is_array()) return "";
  auto name_of = [](const Json& tool) {
    const std::string* name = tool_function_name(tool);
    return name ? *name : std::string();
  };
  if (c_.tools.size() == 1) return name_of(c_.tools[0]);
  Json parsed = Json::parse(args, nullptr, false);
  if (!parsed.is_object()) return "";
  std::string found;
  for (const auto& tool : c_.tools) {
    const Json* params = tool_parameters(tool);
    bool fits = params != nullptr && schema_declares_properties(*params);
    if (fits) {
      const std::vector<std::string> names = schema_property_names(*params);
      for (auto it = parsed.begin(); fits && it != parsed.end(); ++it)
        fits = std::binary_search(names.begin(), names.end(), it.key());
      // ... and every key it requires (SGLang validates against the whole schema; the keys
      // tell the tools apart).
      if (auto req = params->find("required"); fits && req != params->end() && req->is_array())
        for (const auto& key : *req)
          fits = fits && key.is_string() && parsed.contains(key.get_ref<const std::string&>());
    }
    if (!fits) continue;
    if (!found.empty()) return "";  // ambiguous
    found = name_of(tool);
  }
  return found;
}

bool HeaderJsonFamily::resolve_inferred() {
  if (!infer_name_) return true;
  infer_name_ = false;
  std::string name = infer_tool_name(infer_args_);
  if (!name.empty()) {
    c_.open_call(id_, name);
    c_.em.args(infer_args_);
    infer_args_.clear();
    return true;
  }
  const std::string why =
      "call id '" + id_ + "' names no function and the tools do not identify one; kept as text";
  if (c_.committed) {
    c_.em.warn("not_a_call", why, c_.abs(c_.pos));
    c_.emit(Route::kContent, infer_header_);
    c_.emit(Route::kContent, infer_args_);
  } else {
    c_.fallback("not_a_call", why);
  }
  infer_args_.clear();
  return false;
}

}  // namespace

std::unique_ptr<Family> make_header_json_family(Core& core) {
  return std::make_unique<HeaderJsonFamily>(core);
}

}  // namespace chatwire::parse
