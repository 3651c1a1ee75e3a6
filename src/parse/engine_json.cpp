// The JSON call-object family: {"name", "arguments"} after a marker, bare, or in a list; and
// Llama's builtin calls (`<|python_tag|>name.call(k=v)`), which follow the same marker.
#include <unordered_set>

#include "parse/engine.hpp"
#include "util/json_text.hpp"

namespace chatwire::parse {

namespace {

class JsonFamily final : public Family {
 public:
  explicit JsonFamily(Core& core) : Family(core) {}

  void add_triggers(std::vector<std::string_view>& triggers) const override {
    for (const auto& s : c_.d.sections) triggers.push_back(s.open);
    for (const auto& s : c_.d.loose_sections) triggers.push_back(s.open);
  }
  void on_marker(std::size_t index, std::size_t len) override {
    bare_ = false;
    outer_close_ = {};
    loose_ = index >= c_.d.sections.size();
    if (loose_) {
      const Section& s = c_.d.loose_sections[index - c_.d.sections.size()];
      close_ = s.close;
      array_ = builtin_ = false;
      c_.pos += len;
      go(s.open.ends_with('=') ? St::kLooseName : St::kBody);
      return;
    }
    close_ = c_.d.sections[index].close;
    builtin_ = c_.d.builtin_calls && c_.d.sections[index].close.empty();
    c_.pos += len;
    if (c_.d.sections[index].open.ends_with('[')) {
      // The marker ends with the call list's '[' (Phi-4-mini's `functools[`): the list is open.
      array_ = true;
      go(St::kObjStart);
      return;
    }
    go(St::kBody);
  }
  void on_bare() override {
    close_ = outer_close_ = {};
    bare_ = true;
    loose_ = c_.d.loose_bare && !c_.d.bare_json;  // a loose call object alone
    go(St::kBody);
  }
  void on_list() override {
    close_ = outer_close_ = {};
    bare_ = loose_ = false;
    builtin_ = false;
    go(St::kBody);
  }

  bool step() override {
    switch (st_) {
      case St::kBody:
        return jo_body();
      case St::kObjStart:
        return jo_obj_start();
      case St::kKey:
        return jo_key();
      case St::kScan:
        return jo_scan();
      case St::kColon:
        return jo_colon();
      case St::kValueStart:
        return jo_value_start();
      case St::kAfterValue:
        return jo_after_value();
      case St::kArrayNext:
        return array_next();
      case St::kClose:
        return jo_close();
      case St::kBuiltin:
        return builtin();
      case St::kSkipElement:
        return skip_element();
      case St::kLooseName:
        return loose_name();
      case St::kLooseArgs:
        return loose_args();
      case St::kPyDict:
        return py_dict();
    }
    return false;
  }

 private:
  enum class St {
    kBody,      // after the marker: an object, a list, a builtin call or a name header
    kObjStart,  // a call object (or the list's end)
    kKey,
    kScan,  // a JSON value being lexed; its sink decides what it becomes
    kColon,
    kValueStart,
    kAfterValue,
    kArrayNext,
    kClose,  // the section's close marker
    kBuiltin,
    kSkipElement,  // an element of a section of call objects that is not a call: content
    kLooseName,    // a loose wrapper's name header (`<function=NAME>`)
    kLooseArgs,    // ... its arguments object, read
    kPyDict,       // a call object written as a Python dict (Dialect::python_dicts)
  };
  // What a scanned value is for.
  enum class Sink { kSkip, kKey, kName, kId, kArgsRaw, kArgsStream };

  void go(St state) {
    st_ = state;
    c_.enter(this);
  }

  bool jo_body();
  bool jo_obj_start();
  // `text_from`: where the text after a streamed call's broken object begins (the whitespace
  // before the offending byte is kept with it); kNone: at the cursor.
  void bad_object(std::string why, std::size_t text_from = kNone);
  bool skip_element();
  bool jo_key();
  bool jo_truncated();
  void start_scan(Sink sink, St after);
  bool jo_scan();
  static std::string decode_string(std::string_view raw);
  bool jo_colon();
  bool jo_value_start();
  bool jo_after_value();
  // Arguments written as a JSON string holding JSON (Granite 4) are used as that JSON.
  static std::string normalize_args(const std::string& raw);
  void finish_object_call();
  void object_end();
  bool array_next();
  bool jo_close();
  // `<|python_tag|>name.call(k="v")`: buffered to the end of the output, parsed once.
  bool builtin();
  // Dialect::loose_sections: `<function=NAME>{args}`, and whether what was read is a whole call.
  bool loose_name();
  bool loose_args();
  bool loose_call() const;
  bool py_dict();
  std::size_t close_limit() const;
  bool args_cut_by_close();
  // Not streamed: a call only once it is complete and valid (bare JSON, loose wrappers).
  bool buffered() const { return bare_ || loose_; }

  St st_ = St::kBody;
  std::string_view close_;        // the section's close marker ("" = none)
  std::string_view outer_close_;  // a loose fence's close, after the wrapper it holds
  bool array_ = false, builtin_ = false, bare_ = false, loose_ = false;
  bool other_key_ = false;  // the call object has a key that is not its name, id or arguments
  // The keys read and not used, where each stands: their values are left out of the call, which
  // a warning per key says once the call stands (the first kMaxUnreadKeys, then a count).
  // `value_at` is where a streamed value starts in the buffer (kNone: the value is already
  // judged), so that a "type" kind label is read there.
  struct UnreadKey {
    std::string key;
    std::size_t at;
    bool not_a_name;  // a name key whose value names no function
  };
  static constexpr std::size_t kMaxUnreadKeys = 8;
  std::vector<UnreadKey> unread_keys_;
  std::size_t unread_more_ = 0;  // ... and how many more
  void note_other_key(std::string_view key, std::size_t at, std::size_t value_at,
                      bool not_a_name = false) {
    if (!not_a_name) other_key_ = true;  // (a name key is no other key, whatever its value)
    type_value_ = kNone;
    counted_type_ = unread_keys_.size() == kMaxUnreadKeys;
    if (counted_type_)
      ++unread_more_;
    else
      unread_keys_.push_back({std::string(key), at, not_a_name});
    if (key == "type") type_value_ = value_at;
  }
  bool counted_type_ = false;  // the "type" key being judged is counted in unread_more_
  void clear_unread_keys() {
    unread_keys_.clear();
    unread_more_ = 0;
    type_value_ = kNone;
  }
  // A "type" key naming the object's kind ("function" in OpenAI-shaped objects, "tool_call"
  // in RWKV's) is read: where its value starts (kNone: none); it is the last unread key.
  std::size_t type_value_ = kNone;
  // Whether `json` is a string naming a call kind (is_call_kind: `"function"`).
  static bool kind_label(std::string_view json) {
    return json.size() > 2 && json.front() == '"' && json.back() == '"' &&
           is_call_kind(json.substr(1, json.size() - 2));
  }
  // The keys a call object's fields are read from, for a warning: "name", "arguments", ...
  std::string keys_read() const {
    std::string keys;
    for (const auto* list : {&c_.d.name_keys, &c_.d.args_keys, &c_.d.id_keys})
      for (std::string_view k : *list) {
        // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on a chain of +.
        if (!keys.empty()) keys += ", ";
        keys += '"';
        keys.append(k);
        keys += '"';
      }
    return keys;
  }
  void warn_unread_keys() {
    const auto& d = c_.d;
    for (const UnreadKey& u : unread_keys_) {
      const bool again =
          one_of(d.name_keys, u.key) || one_of(d.args_keys, u.key) || one_of(d.id_keys, u.key);
      c_.em.warn("malformed_call",
                 "key \"" + u.key + "\" of the call object " +
                     (u.not_a_name ? "names no function; left out"
                      : again      ? "given again; the first is used, this one left out"
                                   : "is not one of the keys read (" + keys_read() + "); left out"),
                 u.at);
    }
    if (unread_more_ > 0)
      c_.em.warn("malformed_call",
                 std::to_string(unread_more_) + (unread_more_ == 1 ? " more key" : " more keys") +
                     " of the call object left out",
                 unread_keys_.back().at);
    clear_unread_keys();
  }
  JsonScanner scanner_;
  PythonLiteralScanner dict_;  // a call object written as a Python dict
  Sink sink_ = Sink::kSkip;
  St after_scan_ = St::kBody;
  std::size_t scan_start_ = 0, obj_start_ = 0, skip_from_ = 0;
  std::size_t value_end_ = kNone;  // kAfterValue: where the value ended, before any whitespace
  ResumePoint skip_search_;        // where skip_element's search resumes
  std::string key_, name_, id_, args_raw_;
  bool has_name_ = false, has_id_ = false, has_args_ = false, streaming_ = false;
};

bool JsonFamily::jo_body() {
  if (!c_.skip_ws()) return false;
  if (loose_) {
    if (c_.pos < c_.buf.size() && c_.buf[c_.pos] == '{') {
      array_ = false;
      go(St::kObjStart);
      return true;
    }
    if (c_.pos < c_.buf.size() && close_.starts_with("```") && outer_close_.empty()) {
      // A fence around another loose wrapper (```xml\n<response>{..}</response>\n```).
      for (std::size_t i = 0; i < c_.d.loose_sections.size(); ++i) {
        const Section& s = c_.d.loose_sections[i];
        if (s.open.starts_with("```") || s.open.ends_with('=')) continue;
        const Tri t = c_.take(s.open);
        if (t == Tri::kMore) return false;
        if (t == Tri::kYes) {
          outer_close_ = close_;
          close_ = s.close;
          return true;  // kBody again, inside the inner wrapper
        }
      }
    }
    if (c_.pos == c_.buf.size() && !c_.eof) return false;
    c_.fallback_quietly();
    return true;
  }
  if (c_.pos == c_.buf.size()) {
    c_.fallback("not_a_call", "call marker at the end of the output");
    return true;
  }
  char c = c_.buf[c_.pos];
  if (c == '[') {
    array_ = true;
    ++c_.pos;
    go(St::kObjStart);
    return true;
  }
  if (c == '{') {
    array_ = false;
    go(St::kObjStart);
    return true;
  }
  if (builtin_) {
    c_.mark = c_.pos;
    go(St::kBuiltin);
    return true;
  }
  if (!c_.d.header_end.empty() && !bare_) {
    // Mistral: `[TOOL_CALLS]name[ARGS]{..}` after the same marker as the JSON list form.
    c_.family(CallSyntax::kHeaderJson).on_header();
    return true;
  }
  c_.fallback("not_a_call", "expected a JSON object or array after the call marker");
  return true;
}

bool JsonFamily::jo_obj_start() {
  if (!c_.skip_ws()) return false;
  if (c_.pos == c_.buf.size()) {
    if (c_.committed) {
      c_.truncated("a call list");
      c_.end_block();
    } else {
      c_.fallback("truncated", "output ended inside a call list");
    }
    return true;
  }
  char c = c_.buf[c_.pos];
  if (c == '{') {
    obj_start_ = c_.pos;
    value_end_ = kNone;
    key_.clear();
    name_.clear();
    id_.clear();
    args_raw_.clear();
    has_name_ = has_id_ = has_args_ = streaming_ = other_key_ = false;
    clear_unread_keys();
    ++c_.pos;
    go(St::kKey);
    return true;
  }
  if (c == ']' && array_) {
    ++c_.pos;
    go(St::kClose);
    return true;
  }
  bad_object("expected '{' in the call list");
  return true;
}

void JsonFamily::bad_object(std::string why, std::size_t text_from) {
  if (loose_ && !c_.committed) {
    c_.fallback_quietly();
    return;
  }
  if (streaming_) {
    warn_unread_keys();
    c_.close_call();
    c_.em.warn("malformed_call", why, c_.abs(c_.pos));
    if (text_from != kNone) c_.pos = text_from;
    streaming_ = false;
    go(St::kClose);
    return;
  }
  if (c_.committed && !close_.empty() && !array_ && !buffered()) {
    // A section of call objects, one per line (MiniMax-M1's <tool_calls>): an element that is
    // not a call is content, and the section's later calls are still read.
    c_.em.warn("not_a_call", why, c_.abs(obj_start_));
    skip_from_ = obj_start_;
    go(St::kSkipElement);
    return;
  }
  if (c_.committed) {
    // Earlier calls of this block stand; this object's text stays content.
    c_.em.warn("not_a_call", why, c_.abs(obj_start_));
    c_.emit(Route::kContent, std::string_view(c_.buf).substr(obj_start_, c_.pos - obj_start_));
    c_.end_block();
    return;
  }
  c_.fallback("not_a_call", std::move(why));
}

bool JsonFamily::jo_key() {
  if (!c_.skip_ws()) return false;
  if (c_.pos == c_.buf.size()) return jo_truncated();
  char c = c_.buf[c_.pos];
  if (c == '}') {
    ++c_.pos;
    object_end();
    return true;
  }
  if (c == '\'' && c_.d.python_dicts && !streaming_ && !has_name_ && !has_args_ && !other_key_) {
    dict_.reset();
    c_.pos = obj_start_;
    go(St::kPyDict);
    return true;
  }
  if (c != '"') {
    bad_object("expected a key in the call object");
    return true;
  }
  start_scan(Sink::kKey, St::kColon);
  return true;
}

// `{'name': 'f', 'parameters': {..}}` (Dialect::python_dicts), from obj_start_: read whole (the
// scan resumed where the last chunk ended), then taken as the JSON object it converts to.
bool JsonFamily::py_dict() {
  const std::string_view buf(c_.buf);
  const std::size_t end = dict_.feed(buf, c_.pos);
  if (end == std::string_view::npos) {
    c_.pos = buf.size();
    if (!c_.eof && buf.size() - obj_start_ <= c_.opt.max_held_bytes) return false;
    return jo_truncated();
  }
  c_.pos = end;
  std::string json;
  if (!python_literal_json(buf.substr(obj_start_, end - obj_start_), c_.opt.max_json_depth, json)) {
    bad_object("not a Python dict");
    return true;
  }
  // (the reader passes bytes through: text that is not UTF-8 is not JSON, so not a call)
  // The object's members in the order written (the parsed object keeps one value per key): a
  // key given twice is read as the JSON form reads it, the first name that names a function and
  // the first arguments, and the others reported.
  std::vector<std::pair<std::string, Json>> members;
  std::string member_key;
  // A key an object inside a member gives twice keeps one value in the parsed member.
  util::RepeatedKeyWatch repeated(util::RepeatedKeys::kNested);
  const Json value = Json::parse(
      json,
      [&](int depth, Json::parse_event_t event, Json& parsed) {
        repeated(depth, event, parsed);
        if (depth != 1) return true;
        if (event == Json::parse_event_t::key) {
          member_key = parsed.get<std::string>();
        } else if (event == Json::parse_event_t::value ||
                   event == Json::parse_event_t::object_end ||
                   event == Json::parse_event_t::array_end) {
          members.emplace_back(member_key, parsed);
        }
        return true;
      },
      false);
  if (value.is_discarded() || !value.is_object()) {
    bad_object("not a Python dict");
    return true;
  }
  std::unordered_set<std::string> noted;  // other keys reported once (all at the object's start)
  for (const auto& [key, v] : members) {
    if (one_of(c_.d.name_keys, key) && !has_name_) {
      if (v.is_string() && c_.valid_name(v.get_ref<const std::string&>())) {
        name_ = v.get<std::string>();
        has_name_ = true;
      } else {
        note_other_key(key, c_.abs(obj_start_), kNone, true);  // names no function
      }
    } else if (one_of(c_.d.args_keys, key) && v.is_object() && !has_args_) {
      args_raw_ = v.dump();
      has_args_ = true;
      if (!repeated.key.empty() && repeated.member == key)
        c_.em.warn("malformed_call",
                   "key \"" + quoted_start(repeated.key) +
                       "\" given twice in the call's arguments; the last value is used, the "
                       "other left out",
                   c_.abs(obj_start_));
    } else if (key == "type" && kind_label(v.dump())) {
      other_key_ = true;  // the object's kind, read
    } else if (noted.insert(key).second) {
      note_other_key(key, c_.abs(obj_start_), kNone);
    }
  }
  object_end();
  return true;
}

// The arguments reached the section's close marker unclosed: the call ends there, reported.
bool JsonFamily::args_cut_by_close() {
  const std::string why = "call arguments not closed before " + std::string(close_);
  if (streaming_) {
    c_.em.warn("truncated", why, c_.abs(c_.pos));
    warn_unread_keys();  // the call stands: what it left out is said
    c_.close_call(false);
    streaming_ = false;
    go(St::kClose);
    return true;
  }
  bad_object(why);
  return true;
}

bool JsonFamily::jo_truncated() {
  if (loose_) {
    if (!c_.committed) {
      c_.fallback_quietly();
      return true;
    }
    // A later object of a wrapper whose first was a call: its text stays content.
    c_.truncated("a call object");
    c_.emit(Route::kContent, std::string_view(c_.buf).substr(obj_start_, c_.pos - obj_start_));
    c_.end_block();
    return true;
  }
  if (bare_ && !c_.committed) {
    // An object never closed may hold a complete call after its opening brace (Llama 3.2
    // restarting the call: `{"name": "f", "parameters": {{"name": "f", ...}}`, which SGLang
    // reads as the call): only the brace is content, and the text after it is read again.
    // Bounded, so that nested unclosed objects cannot make the output quadratic.
    constexpr std::size_t kRereadBytes = 64 * 1024;
    if (c_.d.bare_anywhere && c_.cand != kNone && c_.buf.size() - c_.cand <= kRereadBytes)
      c_.pos = c_.cand + 1;
    c_.fallback("truncated", "output ended inside a JSON object");
    return true;
  }
  if (streaming_) {
    c_.truncated("tool call arguments");
    warn_unread_keys();
    c_.close_call(false);
    streaming_ = false;
    c_.end_block();
    return true;
  }
  if (has_name_ && (has_args_ || !c_.d.args_required) && !args_raw_.empty()) {
    // The arguments are complete; only the object's end is missing.
    c_.truncated("a call object");
    warn_unread_keys();
    finish_object_call();
    c_.end_block();
    return true;
  }
  if (c_.committed) {
    c_.truncated("a call list");
    c_.emit(Route::kContent, std::string_view(c_.buf).substr(obj_start_, c_.pos - obj_start_));
    c_.end_block();
    return true;
  }
  c_.fallback("truncated", "output ended inside a call object");
  return true;
}

void JsonFamily::start_scan(Sink sink, St after) {
  sink_ = sink;
  after_scan_ = after;
  scanner_.reset();
  scan_start_ = c_.pos;
  go(St::kScan);
}

// Where arguments being scanned must stop for the section's close marker: the marker's first
// occurrence from pos, or where a partial one ends the bytes so far; buf.size() when neither.
std::size_t JsonFamily::close_limit() const {
  const std::string_view buf(c_.buf);
  const std::size_t at = buf.find(close_, c_.pos);
  if (at != std::string_view::npos) return at;
  if (c_.eof) return buf.size();
  for (std::size_t i = std::max(c_.pos, buf.size() - std::min(buf.size(), close_.size() - 1));
       i < buf.size(); ++i)
    if (close_.starts_with(buf.substr(i))) return i;
  return buf.size();
}

bool JsonFamily::jo_scan() {
  // Arguments that never close end at the section's close marker written outside a JSON string
  // (`{"a": 1</tool_call>`): the marker is the model's, not part of the arguments.
  const bool bounded = !close_.empty() && (sink_ == Sink::kArgsStream || sink_ == Sink::kArgsRaw);
  const std::size_t limit = bounded ? close_limit() : c_.buf.size();
  std::size_t n = scanner_.feed(c_.buf.data() + c_.pos, limit - c_.pos);
  bool quoted_close = false;  // the marker is inside a string of the arguments: read on
  if (bounded && !scanner_.done() && c_.pos + n == limit && limit < c_.buf.size() &&
      c_.buf.compare(limit, close_.size(), close_) == 0) {
    if (!scanner_.in_string()) {
      if (sink_ == Sink::kArgsStream) c_.em.args(std::string_view(c_.buf).substr(c_.pos, n));
      c_.pos += n;
      return args_cut_by_close();
    }
    n += scanner_.feed(c_.buf.data() + limit, close_.size());
    quoted_close = true;
  }
  // (A partial marker at the end of the bytes so far is decided when more come.)
  if (sink_ == Sink::kArgsStream) {
    std::size_t end = scanner_.done() ? c_.pos + n : c_.emit_end(c_.pos + n);
    if (end > c_.pos) c_.em.args(std::string_view(c_.buf).substr(c_.pos, end - c_.pos));
    c_.pos = end;
  } else {
    c_.pos += n;
  }
  if (!scanner_.done()) {
    if (quoted_close) return true;  // the bytes after the quoted marker are read next
    if (!c_.eof || !scanner_.finish()) {
      if (c_.eof) return jo_truncated();
      return false;
    }
  }
  if (scanner_.max_depth() > c_.opt.max_json_depth) {
    c_.em.warn("limit", "JSON nested deeper than max_json_depth", c_.abs(scan_start_));
  }
  std::string_view raw = std::string_view(c_.buf).substr(scan_start_, c_.pos - scan_start_);
  switch (sink_) {
    case Sink::kKey:
      key_ = decode_string(raw);
      break;
    case Sink::kName:
      name_ = decode_string(raw);
      has_name_ = c_.valid_name(name_);
      // A name that names no function is left out (a later one may name it), reported.
      if (!has_name_) note_other_key(key_, c_.abs(scan_start_), kNone, true);
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

auto JsonFamily::decode_string(std::string_view raw) -> std::string {
  if (is_json_string(raw)) return Json::parse(raw).get<std::string>();
  return std::string(raw);
}

bool JsonFamily::jo_colon() {
  if (!c_.skip_ws()) return false;
  if (c_.pos == c_.buf.size()) return jo_truncated();
  if (c_.buf[c_.pos] != ':') {
    bad_object("expected ':' after a key");
    return true;
  }
  ++c_.pos;
  go(St::kValueStart);
  return true;
}

bool JsonFamily::jo_value_start() {
  if (!c_.skip_ws()) return false;
  if (c_.pos == c_.buf.size()) return jo_truncated();
  Sink sink = Sink::kSkip;
  if (c_.d.name_as_key && !has_name_ && !one_of(c_.d.name_keys, key_) && c_.buf[c_.pos] == '{' &&
      c_.valid_name(key_)) {
    // {"NAME": {arguments}}: the key names the function and its value holds the arguments.
    name_ = key_;
    has_name_ = has_args_ = true;
    if (!buffered()) {
      c_.open_call(id_, name_);
      streaming_ = true;
      sink = Sink::kArgsStream;
    } else {
      sink = Sink::kArgsRaw;
    }
  } else if (one_of(c_.d.name_keys, key_) && !has_name_ && c_.buf[c_.pos] == '"') {
    // (an empty or invalid name makes the object not a call; checked when it is decoded)
    sink = Sink::kName;
  } else if (one_of(c_.d.id_keys, key_) && !has_id_) {
    sink = Sink::kId;
  } else if (one_of(c_.d.args_keys, key_) && !has_args_) {
    has_args_ = true;
    bool id_settled = c_.d.id_keys.empty() || has_id_;
    // Bare JSON (no marker) is only a call once it is complete and valid: never streamed. Only
    // an object is streamed: a string holding JSON (Granite 4), null and anything else are read
    // whole first (a stray character, not JSON, makes the object no call).
    if (has_name_ && id_settled && !buffered() && c_.buf[c_.pos] == '{') {
      c_.open_call(id_, name_);
      streaming_ = true;
      sink = Sink::kArgsStream;
    } else {
      sink = Sink::kArgsRaw;
    }
  } else {
    note_other_key(key_, c_.abs(c_.pos), c_.pos);
  }
  start_scan(sink, St::kAfterValue);
  return true;
}

bool JsonFamily::jo_after_value() {
  if (value_end_ == kNone) value_end_ = c_.pos;  // kept while the whitespace streams in
  if (!c_.skip_ws()) return false;
  const std::size_t value_end = std::exchange(value_end_, kNone);
  if (type_value_ != kNone) {
    if (kind_label(c_.bytes(type_value_, value_end))) {
      if (counted_type_)
        --unread_more_;
      else
        unread_keys_.pop_back();
    }
    type_value_ = kNone;
  }
  if (c_.pos == c_.buf.size()) return jo_truncated();
  char c = c_.buf[c_.pos];
  if (c == ',') {
    ++c_.pos;
    go(St::kKey);
    return true;
  }
  if (c == '}') {
    ++c_.pos;
    object_end();
    return true;
  }
  bad_object("expected ',' or '}' in the call object", value_end);
  return true;
}

// Arguments written as a JSON string holding JSON (Granite 4) are used as that JSON.
auto JsonFamily::normalize_args(const std::string& raw) -> std::string {
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

void JsonFamily::finish_object_call() {
  c_.open_call(id_, name_);
  c_.em.args(normalize_args(args_raw_));
  c_.close_call();
}

void JsonFamily::object_end() {
  if (loose_ && !loose_call()) {
    bad_object("not a whole call object");
    return;
  }
  if (streaming_) {
    warn_unread_keys();
    c_.close_call();
    streaming_ = false;
  } else if (has_name_ && (has_args_ || !c_.d.args_required)) {
    if (bare_ && !loose_ && !args_raw_.empty() && !Json::accept(args_raw_)) {  // loose_call checked
      bad_object("call arguments are not valid JSON");
      return;
    }
    warn_unread_keys();
    finish_object_call();
  } else {
    bad_object(has_name_ ? "call object without arguments" : "JSON object without a call name");
    return;
  }
  go(array_ ? St::kArrayNext : St::kClose);
}

bool JsonFamily::array_next() {
  if (!c_.skip_ws()) return false;
  if (c_.pos == c_.buf.size()) {
    c_.truncated("a call list");
    c_.end_block();
    return true;
  }
  char c = c_.buf[c_.pos];
  if (c == ',') {
    obj_start_ = c_.pos;  // what is not an object after the comma is content from here
    ++c_.pos;
    go(St::kObjStart);
    return true;
  }
  if (c == ']')
    ++c_.pos;
  else
    c_.em.warn("malformed_call", "expected ',' or ']' in the call list", c_.abs(c_.pos));
  go(St::kClose);
  return true;
}

bool JsonFamily::jo_close() {
  if (close_.empty()) {
    if (!bare_ && !array_) {
      // A call object after a list marker, then `]` or `, {`: the list's `[` was lost
      // (`[TOOL_CALLS]{..}, {..}]`); the rest of the list is read as calls, with a warning.
      std::size_t save = c_.pos;
      if (!c_.skip_ws()) {
        c_.pos = save;
        return false;
      }
      std::size_t p = c_.pos;
      bool lost_open = p < c_.buf.size() && c_.buf[p] == ']';
      if (p < c_.buf.size() && c_.buf[p] == ',') {
        ++p;
        while (p < c_.buf.size() && is_ws(c_.buf[p])) ++p;
        if (p == c_.buf.size() && !c_.eof) {
          c_.pos = save;
          return false;
        }
        lost_open = p < c_.buf.size() && c_.buf[p] == '{';
      }
      if (lost_open) {
        c_.em.warn("malformed_call", "call list without its opening '['", c_.abs(c_.pos));
        array_ = true;
        go(St::kArrayNext);
        return true;
      }
      c_.pos = save;
    }
    if (bare_) {
      // A bare call followed by a section's closer: the model left out the opener (`{..}\n
      // </tool_call>`, Qwen2.5); the closer is markup, as after XML calls whose opener is missing.
      const std::size_t save = c_.pos;
      if (!c_.skip_ws()) {
        c_.pos = save;
        return false;
      }
      for (const Section& s : c_.d.sections) {
        // A tag's closer only: a fence's ``` also begins the next ```json block.
        if (!s.close.starts_with("</")) continue;
        const Tri t = c_.take(s.close);
        if (t == Tri::kMore) {
          c_.pos = save;
          return false;
        }
        if (t == Tri::kYes) {
          c_.em.warn("missing_marker",
                     "call closed with " + std::string(s.close) + " without " + std::string(s.open),
                     c_.abs(c_.pos - s.close.size()));
          c_.end_block();
          return true;
        }
      }
      c_.pos = save;
    }
    c_.end_block();
    return true;
  }
  std::size_t save = c_.pos;
  if (!c_.skip_ws()) {
    c_.pos = save;
    return false;
  }
  // Several call objects in one section, one per line (MiniMax-M1's <tool_calls>).
  if (!bare_ && c_.pos < c_.buf.size() && c_.buf[c_.pos] == '{') {
    go(St::kBody);
    return true;
  }
  Tri t = c_.take(close_);
  if (t == Tri::kMore) {
    c_.pos = save;
    return false;
  }
  if (t == Tri::kNo) {
    c_.pos = save;
    if (c_.pos < c_.buf.size())
      c_.em.warn("missing_marker", "call not closed with " + std::string(close_), c_.abs(c_.pos));
  } else if (!outer_close_.empty()) {
    close_ = std::exchange(outer_close_, {});  // the fence around the wrapper
    go(St::kClose);
    return true;
  }
  c_.end_block();
  return true;
}

// `<function=NAME>` / `<function name="NAME">`, then the arguments object.
bool JsonFamily::loose_name() {
  constexpr std::size_t kMaxHeader = 258;  // a name of valid_name's 256 bytes, quoted
  const std::string_view rest = std::string_view(c_.buf).substr(c_.pos);
  const std::size_t gt = rest.substr(0, kMaxHeader + 1).find('>');
  if (gt == std::string_view::npos) {
    if (rest.size() <= kMaxHeader && !c_.eof) return false;
    c_.fallback_quietly();
    return true;
  }
  std::string_view name = rest.substr(0, gt);
  if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
    name = name.substr(1, name.size() - 2);
  if (!c_.valid_name(name)) {
    c_.fallback_quietly();
    return true;
  }
  name_.assign(name);
  id_.clear();
  args_raw_.clear();
  has_name_ = true;
  has_id_ = other_key_ = streaming_ = false;
  clear_unread_keys();
  const std::size_t header = c_.pos;
  c_.pos += gt + 1;
  if (!c_.skip_ws()) {
    c_.pos = header;
    return false;
  }
  if (c_.pos == c_.buf.size() || c_.buf[c_.pos] != '{') {
    c_.fallback_quietly();
    return true;
  }
  has_args_ = true;
  start_scan(Sink::kArgsRaw, St::kLooseArgs);
  return true;
}

bool JsonFamily::loose_args() {
  if (!loose_call()) {
    c_.fallback_quietly();
    return true;
  }
  finish_object_call();
  go(St::kClose);
  return true;
}

// A loose wrapper holds a call only as a whole: a name the request lists (any, when it lists
// none), object arguments that are valid JSON, and no other key.
bool JsonFamily::loose_call() const {
  return has_name_ && has_args_ && !other_key_ && !args_raw_.empty() && args_raw_.front() == '{' &&
         Json::accept(args_raw_) && c_.listed(name_);
}

// The element ends where a line starts with '{' (the next call object) or at the section's
// close marker; up to there it is content.
bool JsonFamily::skip_element() {
  const std::string_view buf(c_.buf);
  // Streamed, the search resumes where the last one could not decide (linear in the output).
  const std::size_t from = skip_search_.from(c_, c_.pos);
  const std::size_t close = buf.find(close_, from);
  std::size_t next = std::string_view::npos;
  std::size_t undecided = std::string_view::npos;  // a line start the buffer ends at
  for (std::size_t nl = buf.find('\n', from); nl < close && nl != std::string_view::npos;
       nl = buf.find('\n', nl + 1)) {
    std::size_t p = nl + 1;
    while (p < buf.size() && (buf[p] == ' ' || buf[p] == '\t' || buf[p] == '\r')) ++p;
    if (p == buf.size()) {
      undecided = nl;
      break;
    }
    if (buf[p] == '{') {
      next = nl + 1;
      break;
    }
  }
  const bool held_too_long = buf.size() - skip_from_ > c_.opt.max_held_bytes;
  if (next == std::string_view::npos &&
      (close == std::string_view::npos || undecided != std::string_view::npos) && !c_.eof &&
      !held_too_long) {
    skip_search_.hold_at(c_, std::min(undecided, c_.marker_tail(from, close_.size())));
    return false;
  }
  skip_search_.clear();
  std::size_t end = std::min({next, close, buf.size()});
  c_.emit(Route::kContent, buf.substr(skip_from_, end - skip_from_));
  c_.pos = end;
  if (end == next) {
    go(St::kObjStart);
  } else if (end == close) {
    go(St::kClose);
  } else {
    c_.truncated("a call section");
    c_.end_block();
  }
  return true;
}

// `<|python_tag|>name.call(k="v")`: buffered to the end of the output, parsed once.
bool JsonFamily::builtin() {
  if (!c_.eof) return false;
  std::vector<PyCall> calls;
  std::string error;
  std::string_view body = trim(std::string_view(c_.buf).substr(c_.mark));
  c_.pos = c_.buf.size();
  if (!parse_python_calls(body, calls, error, c_.opt.max_json_depth)) {
    c_.fallback("not_a_call", "builtin tool call: " + error);
    return true;
  }
  // Llama 3 writes its builtin tools `name.call(..)` after the tag, and its own functions as JSON;
  // `f(x=1)` there is neither (SGLang flushes it as text).
  for (const auto& call : calls) {
    if (!call.builtin_form) {
      c_.fallback("not_a_call",
                  "'" + call.name + "(..)' after the tag is not a builtin call (name.call(..))");
      return true;
    }
  }
  // A call with an argument JSON cannot hold (bytes, inf) is dropped, never silently.
  if (!error.empty()) c_.em.warn("invalid_call", "a call was dropped: " + error, c_.abs(c_.mark));
  c_.emit_python_calls(calls);
  return true;
}

}  // namespace

std::unique_ptr<Family> make_json_family(Core& core) {
  return std::make_unique<JsonFamily>(core);
}

}  // namespace chatwire::parse
