// The engine behind parse() and StreamParser: the class, its cursor, markers and emitter.
// The core (text, markers, emitting) is engine.cpp; each call syntax family's states are
// one file, engine_<family>.cpp. See engine.cpp for why it is linear and chunking-invariant.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <memory>

#include "parse/internal.hpp"

namespace chatwire::parse {

inline constexpr std::size_t kNone = std::string::npos;

inline bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

// Length of `s` without a trailing incomplete UTF-8 sequence (so no delta splits a character).
inline std::size_t utf8_complete_prefix(std::string_view s) {
  std::size_t n = s.size();
  std::size_t back = 0;
  while (back < 3 && back < n && (static_cast<unsigned char>(s[n - 1 - back]) & 0xC0) == 0x80)
    ++back;
  if (back == n) return n;
  unsigned char lead = static_cast<unsigned char>(s[n - 1 - back]);
  std::size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return need > back + 1 ? n - 1 - back : n;
}

// A set of markers searched together.
class MarkerSet {
 public:
  struct Hit {
    enum Kind { kNotFound, kFound, kPartial } kind = kNotFound;
    std::size_t at = 0;
    int tag = 0;
    std::size_t len = 0;
  };

  void add(std::string_view marker, int tag) {
    if (marker.empty()) return;
    for (const auto& item : items_)
      if (item.marker == marker) return;
    items_.push_back({marker, tag});
    first_[static_cast<unsigned char>(marker[0])] = true;
  }
  bool empty() const { return items_.empty(); }

  // First marker occurring in hay[from..). A suffix of hay that is a proper prefix of a marker is
  // reported as kPartial unless `eof`.
  Hit find(std::string_view hay, std::size_t from, bool eof) const {
    const std::size_t n = hay.size();
    for (std::size_t i = from; i < n; ++i) {
      if (!first_[static_cast<unsigned char>(hay[i])]) continue;
      Hit found;
      bool partial = false;
      for (const auto& item : items_) {
        std::size_t len = item.marker.size();
        std::size_t rem = n - i;
        if (rem >= len) {
          if (std::memcmp(hay.data() + i, item.marker.data(), len) == 0 &&
              (found.kind == Hit::kNotFound || len > found.len)) {
            found = {Hit::kFound, i, item.tag, len};
          }
        } else if (!eof && std::memcmp(hay.data() + i, item.marker.data(), rem) == 0) {
          partial = true;
        }
      }
      if (partial) return {Hit::kPartial, i, 0, 0};
      if (found.kind == Hit::kFound) return found;
    }
    return {Hit::kNotFound, n, 0, 0};
  }

 private:
  struct Item {
    std::string_view marker;
    int tag;
  };
  std::vector<Item> items_;
  std::array<bool, 256> first_{};
};

// Resumable structural lexer for one JSON value: finds where it ends without building it.
class JsonScanner {
 public:
  void reset() { *this = JsonScanner(); }
  bool done() const { return done_; }
  bool is_string() const { return top_string_; }

  // Consumes the bytes of p[0..n) that belong to the value; p[0] must not be whitespace when the
  // value has not started.
  std::size_t feed(const char* p, std::size_t n) {
    std::size_t i = 0;
    if (!started_ && n > 0) {
      started_ = true;
      char c = p[0];
      if (c == '{' || c == '[') {
        depth_ = 1;
      } else if (c == '"') {
        in_string_ = top_string_ = true;
      } else {
        scalar_ = true;
      }
      i = 1;
      if (scalar_ && !scalar_char(c)) {
        done_ = true;  // a stray character: a one-byte "value" the caller will reject
        return 1;
      }
    }
    while (i < n) {
      if (in_string_) {
        if (escape_) {
          escape_ = false;
          ++i;
          continue;
        }
        while (i < n && p[i] != '"' && p[i] != '\\') ++i;
        if (i == n) break;
        if (p[i] == '\\') {
          escape_ = true;
          ++i;
          continue;
        }
        in_string_ = false;
        ++i;
        if (top_string_) {
          done_ = true;
          return i;
        }
        continue;
      }
      char c = p[i];
      if (scalar_) {
        if (!scalar_char(c)) {
          done_ = true;
          return i;
        }
        ++i;
        continue;
      }
      if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
        if (depth_ > max_depth_seen_) max_depth_seen_ = depth_;
      } else if (c == '}' || c == ']') {
        if (--depth_ == 0) {
          done_ = true;
          return i + 1;
        }
      }
      ++i;
    }
    return i;
  }
  // End of input: a number or literal ends here; anything else is truncated.
  bool finish() {
    if (scalar_) done_ = true;
    return done_;
  }
  std::size_t max_depth() const { return max_depth_seen_; }

 private:
  static bool scalar_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+';
  }
  bool started_ = false, done_ = false, in_string_ = false, escape_ = false, scalar_ = false,
       top_string_ = false;
  std::size_t depth_ = 0, max_depth_seen_ = 0;
};

// Marker tags of the text state.
enum Tag : int {
  kTagThinkOpen = 1,
  kTagThinkClose,
  kTagDrop,
  kTagBare,
  kTagTrigger = 100,  // + index into Engine::triggers_
};

// Collects decisions into the message and into the deltas of the current feed.
class Emitter {
 public:
  Message msg;
  std::vector<Warning> warnings;
  std::vector<Delta> out;
  bool collect_deltas = true;  // false for one-shot parses: only the message is wanted
  std::size_t validate_limit = 0;

  void content(std::string_view s) { text(s, false); }
  void reasoning(std::string_view s) { text(s, true); }

  void begin_call(std::string id, std::string name) {
    ToolCall call;
    call.id = std::move(id);
    call.name = std::move(name);
    if (collect_deltas) {
      Delta d;
      ToolCallDelta td;
      td.index = msg.tool_calls.size();
      td.id = call.id;
      td.name = call.name;
      d.tool_calls.push_back(std::move(td));
      out.push_back(std::move(d));
    }
    msg.tool_calls.push_back(std::move(call));
    in_call_ = true;
  }
  bool in_call() const { return in_call_; }
  void args(std::string_view s) {
    if (s.empty() || !in_call_) return;
    msg.tool_calls.back().arguments.append(s);
    if (!collect_deltas) return;
    if (!out.empty() && !out.back().tool_calls.empty() &&
        out.back().tool_calls.back().index == msg.tool_calls.size() - 1) {
      out.back().tool_calls.back().arguments.append(s);
      return;
    }
    Delta nd;
    ToolCallDelta td;
    td.index = msg.tool_calls.size() - 1;
    td.arguments.assign(s);
    nd.tool_calls.push_back(std::move(td));
    out.push_back(std::move(nd));
  }
  // Closes the open call; `checked` = validate the arguments as JSON.
  void end_call(std::size_t offset, bool checked) {
    if (!in_call_) return;
    ToolCall& call = msg.tool_calls.back();
    if (trim(call.arguments).empty()) {
      call.arguments.clear();
      args("{}");
    } else if (checked && call.arguments.size() <= validate_limit &&
               !Json::accept(call.arguments)) {
      warn("invalid_arguments",
           "arguments of call " + std::to_string(msg.tool_calls.size() - 1) + " (" + call.name +
               ") are not valid JSON; kept as written",
           offset);
    }
    in_call_ = false;
  }
  void warn(std::string code, std::string message, std::size_t offset) {
    warnings.push_back({std::move(code), std::move(message), offset});
  }
  bool content_seen() const { return content_started_; }

 private:
  // Whitespace-only content or reasoning is no content: a leading whitespace run is held until
  // something else follows it.
  void text(std::string_view s, bool reasoning) {
    if (s.empty()) return;
    bool& started = reasoning ? reasoning_started_ : content_started_;
    std::string& pending = reasoning ? reasoning_ws_ : content_ws_;
    std::string joined;
    if (!started) {
      std::size_t k = 0;
      while (k < s.size() && is_ws(s[k])) ++k;
      if (k == s.size()) {
        pending.append(s);
        return;
      }
      started = true;
      joined = std::move(pending);
      joined.append(s);
      pending.clear();
      s = joined;
    }
    (reasoning ? msg.reasoning_content : msg.content).append(s);
    if (!collect_deltas) return;
    if (!out.empty() && out.back().tool_calls.empty()) {
      Delta& last = out.back();
      if (reasoning && last.content.empty()) {
        last.reasoning_content.append(s);
        return;
      }
      if (!reasoning && last.reasoning_content.empty()) {
        last.content.append(s);
        return;
      }
    }
    Delta d;
    (reasoning ? d.reasoning_content : d.content).assign(s);
    out.push_back(std::move(d));
  }

  bool in_call_ = false;
  bool content_started_ = false, reasoning_started_ = false;
  std::string content_ws_, reasoning_ws_;
};

class Engine {
 public:
  Engine(std::shared_ptr<const SyntaxData> syntax, Json tools, Options options)
      : syntax_(std::move(syntax)),
        d_(syntax_->dialect),
        tools_(std::move(tools)),
        opt_(std::move(options)) {
    build_markers();
    em_.validate_limit = opt_.max_validated_argument_bytes;
    if (opt_.reasoning_prefilled) {
      in_reasoning_ = true;
    } else if (opt_.enable_thinking.has_value()) {
      in_reasoning_ = *opt_.enable_thinking;
    } else {
      in_reasoning_ = d_.starts_in_reasoning;
    }
    if (d_.think_open.empty() && d_.think_close.empty()) in_reasoning_ = false;
    at_reasoning_start_ = in_reasoning_;
    if ((!d_.recipient_open.empty() && !d_.recipient_close.empty()) ||
        d_.syntax == CallSyntax::kHarmony)
      st_ = St::kRecipient;
  }

  std::vector<Delta> feed(std::string_view chunk);

  std::vector<Delta> finish();

  const Message& message() const { return em_.msg; }
  const std::vector<Warning>& warnings() const { return em_.warnings; }
  void one_shot() { em_.collect_deltas = false; }
  ParseResult take_result() { return ParseResult{std::move(em_.msg), std::move(em_.warnings)}; }

 private:
  enum class St {
    kRecipient,  // the start of the output, where a recipient header may stand
    kText,
    // JSON call objects
    kJoOpen,
    kJoBody,
    kJoObjStart,
    kJoKey,
    kJoScan,
    kJoColon,
    kJoValueStart,
    kJoAfterValue,
    kJoArrayNext,
    kJoClose,
    kBuiltin,
    // between calls (header + JSON arguments, XML parameters)
    kBetweenCalls,
    // header + JSON arguments
    kHjHeader,
    kHjId,
    kHjArgsStart,
    kHjArgs,
    kHjRaw,
    kHjAfterArgs,
    // XML parameters
    kXpName,
    kXpParams,
    kXpGarbage,
    kXpParamName,
    kXpValueOpen,
    kXpValue,
    // pythonic
    kPyBare,
    kPyWrapped,
    // harmony
    kHmHeader,
    kHmBody,
  };
  enum class Sink { kSkip, kKey, kName, kId, kArgsRaw, kArgsStream };
  enum class Tri { kYes, kNo, kMore };
  enum class Route { kContent, kReasoning, kArgs };

  // ---- setup ----
  void build_markers();

  // ---- buffer helpers ----
  std::size_t avail() const { return buf_.size() - pos_; }
  std::size_t abs(std::size_t rel) const { return base_ + rel; }

  // Advances over whitespace; false = ran out of bytes before the input ended.
  bool skip_ws();
  Tri at(std::string_view lit) const;
  // at(lit), consuming the literal when it is there.
  Tri take(std::string_view lit);
  // Searches `set` from the resumable scan position (never behind pos_).
  MarkerSet::Hit search(const MarkerSet& set);
  // End of the bytes from pos_ that can be emitted now (whole UTF-8 characters only).
  std::size_t emit_end(std::size_t end) const;
  void go(St st);

  void emit(Route route, std::string_view s);
  Route text_route() const { return in_reasoning_ ? Route::kReasoning : Route::kContent; }

  std::vector<Delta> take();

  void compact();

  // ---- call lifecycle ----
  void open_call(std::string id, std::string name);
  void close_call(bool checked = true) { em_.end_call(abs(pos_), checked); }

  // Drops the block being read (a candidate or emitted calls) and reads text again.
  void back_to_text();
  // Leaves a call block and returns to text.
  void end_block();
  // The candidate is not a call: its bytes so far are content, and a warning says why.
  void fallback(std::string code, std::string why);
  void truncated(std::string_view what);

  // ---- the driver ----
  void run();

  bool step();

  // ---- text: content or reasoning, looking for markers ----
  bool text();

  // A call list without a marker (JSON or pythonic) may start at pos_: it is a candidate until
  // it parses.
  void start_bare(bool json);

  // ---- JSON call objects ----
  bool jo_open() { return false; }

  bool jo_body();

  bool jo_obj_start();

  void bad_object(std::string why);

  bool jo_key();

  bool jo_truncated();

  void start_scan(Sink sink, St after);

  bool jo_scan();

  static std::string decode_string(std::string_view raw);

  bool jo_colon();

  static bool one_of(const std::vector<std::string_view>& keys, std::string_view key);

  bool jo_value_start();

  bool jo_after_value();

  // Arguments written as a JSON string holding JSON (Granite 4) are used as that JSON.
  static std::string normalize_args(const std::string& raw);

  void finish_object_call();

  void object_end();

  bool jo_array_next();

  bool jo_close();

  // Calls read from Python syntax (builtin or pythonic) end their block.
  void emit_python_calls(const std::vector<PyCall>& calls);

  // `<|python_tag|>name.call(k="v")`: buffered to the end of the output, parsed once.
  bool builtin();

  // ---- sections of calls (header + JSON arguments, XML parameters) ----

  // Before a call, between calls, or after the last call of a header-JSON or XML block.
  // Whitespace after a call is layout only if another call follows: looks before consuming.
  bool between_calls();

  // A function-name line before the invoke (step3: `function<sep>name\n<steptml:invoke`): kYes
  // leaves pos_ at the call marker, kNo leaves pos_ where it was.
  Tri skip_function_line();

  // ---- header + JSON arguments ----
  void end_block_or_fallback();

  static bool valid_name(std::string_view name);

  bool hj_header();

  bool hj_id();

  bool hj_args_start();

  bool hj_args();

  bool hj_raw();

  bool hj_after_args();

  // The one tool whose parameters hold every argument key (or the only tool); "" if ambiguous.
  std::string infer_tool_name(const std::string& args) const;

  void resolve_inferred();

  // ---- XML parameters ----
  // `name="x"` / `="x"` / `x` -> x
  static std::string attr_name(std::string_view header);

  bool xp_name();

  void close_xml_call();

  bool xp_params();

  bool xp_garbage();

  bool xp_param_name();

  bool xp_value_open();

  void param_prefix();

  bool streams_as_string() const;

  // End of buf_[from..end) without the value's trailing layout (see ValueFraming).
  std::size_t without_trailing_layout(std::size_t from, std::size_t end) const;

  bool xp_value();

  // ---- pythonic ----
  void start_py_bare();

  // Bare `[f(a=1), ...]`: held until the list closes (strings and brackets tracked), parsed once.
  bool py_bare();

  bool py_emit(std::string_view body, bool unterminated);

  bool py_wrapped();

  // ---- a recipient header at the start: `to=name<|message|>` is skipped ----
  bool recipient();

  // ---- harmony ----
  bool hm_header();

  bool hm_body();

  // ---- state ----
  std::shared_ptr<const SyntaxData> syntax_;  // keeps the dialect's strings alive
  const Dialect& d_;
  Json tools_;
  Options opt_;
  Emitter em_;

  std::string buf_;
  std::size_t base_ = 0;      // absolute offset of buf_[0]
  std::size_t pos_ = 0;       // first undecided byte
  std::size_t scan_ = 0;      // where the current state's marker search resumes
  std::size_t mark_ = 0;      // start of the element being read (header, value, body)
  std::size_t cand_ = kNone;  // start of a call block not yet known to be one
  std::size_t total_ = 0;
  bool eof_ = false, finished_ = false, overflow_ = false, started_ = false;
  St st_ = St::kText;  // kRecipient at the start when the dialect has a recipient header

  bool in_reasoning_ = false, at_reasoning_start_ = false;
  bool content_start_ = true, after_call_ = false;
  bool committed_ = false;  // a call of the current block was emitted

  std::vector<std::string_view> triggers_;
  MarkerSet content_markers_, reasoning_markers_, header_markers_, name_markers_,
      param_name_markers_, value_markers_, garbage_markers_, raw_args_markers_, hm_header_markers_,
      hm_body_markers_;

  // JSON objects
  std::string_view jo_close_;
  bool jo_array_ = false, jo_builtin_ = false, jo_bare_ = false;
  JsonScanner scanner_;
  Sink sink_ = Sink::kSkip;
  St after_scan_ = St::kText;
  std::size_t scan_start_ = 0, obj_start_ = 0;
  std::string key_, name_, id_, args_raw_;
  bool has_name_ = false, has_id_ = false, has_args_ = false, streaming_ = false;

  // sections (header JSON, XML)
  bool in_section_ = false;
  bool infer_name_ = false;  // Kimi bare counter id: name inferred once the arguments are read
  std::string infer_args_;
  // XML parameters
  std::string param_;
  ParamTypes types_;
  bool first_param_ = true, json_value_ = false, value_started_ = false, streaming_value_ = false,
       quote_open_ = false;
  // pythonic
  std::string_view py_close_;
  int py_depth_ = 0;
  char py_quote_ = 0;
  bool hj_id_done_ = false;  // id_first: the id of the header being read is taken
  bool py_escape_ = false, py_checked_ = false;
  // harmony
  Route hm_route_ = Route::kContent;
};

}  // namespace chatwire::parse
