// The incremental output parser. One engine runs every dialect: a buffer of the output with a
// cursor, a state per syntax element, and an emitter that turns decisions into OpenAI deltas.
//
// Why it is linear and chunking-invariant:
//  - every state either consumes bytes it has decided, or stops ("need more") when the bytes it
//    has could still become a marker; the decision depends on the bytes only, never on where a
//    chunk ended, so parse(text) == the concatenation of the deltas of any chunking;
//  - text is searched for markers from where the last search stopped (held-back suffixes are at
//    most one marker long), JSON values are lexed by a resumable scanner, and buffered elements
//    (headers, typed values, pythonic lists) are parsed once when their end is found.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

#include "parse/internal.hpp"

namespace chatwire::parse {

namespace {

constexpr std::size_t kNone = std::string::npos;

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

// Length of `s` without a trailing incomplete UTF-8 sequence (so no delta splits a character).
std::size_t utf8_complete_prefix(std::string_view s) {
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

}  // namespace

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
    if (!d_.recipient_open.empty() && !d_.recipient_close.empty()) st_ = St::kRecipient;
  }

  std::vector<Delta> feed(std::string_view chunk) {
    if (finished_) return {};
    if (overflow_) {
      em_.content(chunk);
      return take();
    }
    if (total_ + chunk.size() > opt_.max_output_bytes) {
      std::size_t room = opt_.max_output_bytes - total_;
      buf_.append(chunk.substr(0, room));
      total_ += room;
      em_.warn("limit", "output longer than max_output_bytes; the rest is content unparsed",
               total_);
      eof_ = true;
      run();
      overflow_ = true;
      em_.content(chunk.substr(room));
      return take();
    }
    total_ += chunk.size();
    buf_.append(chunk);
    run();
    return take();
  }

  std::vector<Delta> finish() {
    if (finished_) return {};
    finished_ = true;
    if (!overflow_) {
      eof_ = true;
      run();
    }
    return take();
  }

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
  void build_markers() {
    auto add_common = [this](MarkerSet& set) {
      for (std::size_t i = 0; i < triggers_.size(); ++i)
        set.add(triggers_[i], kTagTrigger + static_cast<int>(i));
      for (auto m : d_.dropped) set.add(m, kTagDrop);
    };
    switch (d_.syntax) {
      case CallSyntax::kNone:
        break;
      case CallSyntax::kJsonObject:
        for (const auto& s : d_.sections) triggers_.push_back(s.open);
        break;
      case CallSyntax::kHeaderJson:
      case CallSyntax::kXmlParams:
        if (!d_.section_open.empty()) triggers_.push_back(d_.section_open);
        if (!d_.call_open.empty()) triggers_.push_back(d_.call_open);
        break;
      case CallSyntax::kPythonic:
      case CallSyntax::kKeyValue:
        for (const auto& s : d_.pythonic_sections) triggers_.push_back(s.open);
        break;
      case CallSyntax::kHarmony:
        triggers_.push_back("<|start|>");
        triggers_.push_back("<|channel|>");
        break;
    }
    add_common(content_markers_);
    if (d_.bare_anywhere)
      content_markers_.add(d_.syntax == CallSyntax::kPythonic ? "[" : "{", kTagBare);
    content_markers_.add(d_.think_open, kTagThinkOpen);
    content_markers_.add(d_.think_close, kTagThinkClose);
    reasoning_markers_.add(d_.think_close, kTagThinkClose);
    if (d_.call_ends_reasoning) add_common(reasoning_markers_);
    for (auto m : d_.dropped) reasoning_markers_.add(m, kTagDrop);

    for (auto m : d_.header_end) header_markers_.add(m, 1);
    header_markers_.add(d_.id_marker, 2);
    for (auto m : d_.name_end) name_markers_.add(m, 1);
    for (auto m : d_.name_stop) name_markers_.add(m, 2);
    param_name_markers_.add(d_.param_name_end, 1);
    value_markers_.add(d_.value_close, 1);
    value_markers_.add(d_.param_open, 2);
    value_markers_.add(d_.call_close, 2);
    value_markers_.add(d_.section_close, 2);
    garbage_markers_.add(d_.param_open, 1);
    garbage_markers_.add(d_.call_close, 1);
    garbage_markers_.add(d_.section_close, 1);
    raw_args_markers_.add(d_.call_close, 1);
    raw_args_markers_.add(d_.section_close, 1);
    raw_args_markers_.add(d_.call_open, 1);
    if (d_.fenced_args) raw_args_markers_.add("```", 1);
    hm_header_markers_.add("<|message|>", 1);
    for (auto m : {"<|start|>", "<|end|>", "<|call|>", "<|return|>"}) hm_header_markers_.add(m, 2);
    for (auto m : {"<|end|>", "<|call|>", "<|return|>"}) hm_body_markers_.add(m, 1);
    for (auto m : {"<|start|>", "<|channel|>"}) hm_body_markers_.add(m, 2);
  }

  // ---- buffer helpers ----
  std::size_t avail() const { return buf_.size() - pos_; }
  std::size_t abs(std::size_t rel) const { return base_ + rel; }

  // Advances over whitespace; false = ran out of bytes before the input ended.
  bool skip_ws() {
    while (pos_ < buf_.size() && is_ws(buf_[pos_])) ++pos_;
    return pos_ < buf_.size() || eof_;
  }
  Tri at(std::string_view lit) const {
    if (lit.empty()) return Tri::kNo;
    std::size_t n = std::min(avail(), lit.size());
    if (buf_.compare(pos_, n, lit.substr(0, n)) != 0) return Tri::kNo;
    if (n == lit.size()) return Tri::kYes;
    return eof_ ? Tri::kNo : Tri::kMore;
  }
  // at(lit), consuming the literal when it is there.
  Tri take(std::string_view lit) {
    Tri t = at(lit);
    if (t == Tri::kYes) pos_ += lit.size();
    return t;
  }
  // Searches `set` from the resumable scan position (never behind pos_).
  MarkerSet::Hit search(const MarkerSet& set) {
    std::size_t from = std::max(scan_, pos_);
    MarkerSet::Hit hit = set.find(buf_, from, eof_);
    scan_ = hit.kind == MarkerSet::Hit::kFound ? hit.at : hit.at;
    return hit;
  }
  // End of the bytes from pos_ that can be emitted now (whole UTF-8 characters only).
  std::size_t emit_end(std::size_t end) const {
    if (eof_) return end;
    return pos_ + utf8_complete_prefix(std::string_view(buf_).substr(pos_, end - pos_));
  }
  void go(St st) {
    st_ = st;
    scan_ = 0;
  }

  void emit(Route route, std::string_view s) {
    switch (route) {
      case Route::kContent:
        em_.content(s);
        if (content_start_)
          for (char c : s)
            if (!is_ws(c)) {
              content_start_ = false;
              break;
            }
        break;
      case Route::kReasoning:
        em_.reasoning(s);
        break;
      case Route::kArgs:
        em_.args(s);
        break;
    }
  }
  Route text_route() const { return in_reasoning_ ? Route::kReasoning : Route::kContent; }

  std::vector<Delta> take() {
    std::vector<Delta> out;
    out.swap(em_.out);
    return out;
  }

  void compact() {
    std::size_t keep = cand_ == kNone ? pos_ : std::min(pos_, cand_);
    if (keep < (std::size_t{1} << 16) || keep * 2 < buf_.size()) return;
    buf_.erase(0, keep);
    base_ += keep;
    pos_ -= keep;
    if (cand_ != kNone) cand_ -= keep;
    scan_ = scan_ > keep ? scan_ - keep : 0;
    mark_ = mark_ > keep ? mark_ - keep : 0;
  }

  // ---- call lifecycle ----
  void open_call(std::string id, std::string name) {
    if (id.empty()) id = opt_.id_prefix + std::to_string(em_.msg.tool_calls.size());
    em_.begin_call(std::move(id), std::move(name));
    committed_ = true;
  }
  void close_call(bool checked = true) { em_.end_call(abs(pos_), checked); }

  // Drops the block being read (a candidate or emitted calls) and reads text again.
  void back_to_text() {
    cand_ = kNone;
    committed_ = false;
    go(St::kText);
  }
  // Leaves a call block and returns to text.
  void end_block() {
    back_to_text();
    content_start_ = true;
    after_call_ = true;
  }
  // The candidate is not a call: its bytes so far are content, and a warning says why.
  void fallback(std::string code, std::string why) {
    if (em_.in_call()) close_call();
    std::size_t start = cand_ == kNone ? pos_ : cand_;
    em_.warn(std::move(code), std::move(why), abs(start));
    // When calls were already emitted from this block they stay, and the rest continues as text.
    if (!committed_) {
      if (pos_ == start && pos_ < buf_.size()) ++pos_;  // always progress: the first byte is text
      emit(Route::kContent, std::string_view(buf_).substr(start, pos_ - start));
    }
    back_to_text();
  }
  void truncated(std::string_view what) {
    em_.warn("truncated", "output ended inside " + std::string(what), abs(pos_));
  }

  // ---- the driver ----
  void run() {
    while (step()) {
    }
  }

  bool step() {
    if (cand_ != kNone && !committed_ && pos_ > cand_ && pos_ - cand_ > opt_.max_held_bytes) {
      fallback("limit", "held more than max_held_bytes while deciding whether this is a call");
      return true;
    }
    switch (st_) {
      case St::kRecipient:
        return recipient();
      case St::kText:
        return text();
      case St::kJoOpen:
        return jo_open();
      case St::kJoBody:
        return jo_body();
      case St::kJoObjStart:
        return jo_obj_start();
      case St::kJoKey:
        return jo_key();
      case St::kJoScan:
        return jo_scan();
      case St::kJoColon:
        return jo_colon();
      case St::kJoValueStart:
        return jo_value_start();
      case St::kJoAfterValue:
        return jo_after_value();
      case St::kJoArrayNext:
        return jo_array_next();
      case St::kJoClose:
        return jo_close();
      case St::kBuiltin:
        return builtin();
      case St::kBetweenCalls:
        return between_calls();
      case St::kHjHeader:
        return hj_header();
      case St::kHjId:
        return hj_id();
      case St::kHjArgsStart:
        return hj_args_start();
      case St::kHjArgs:
        return hj_args();
      case St::kHjRaw:
        return hj_raw();
      case St::kHjAfterArgs:
        return hj_after_args();
      case St::kXpName:
        return xp_name();
      case St::kXpParams:
        return xp_params();
      case St::kXpGarbage:
        return xp_garbage();
      case St::kXpParamName:
        return xp_param_name();
      case St::kXpValueOpen:
        return xp_value_open();
      case St::kXpValue:
        return xp_value();
      case St::kPyBare:
        return py_bare();
      case St::kPyWrapped:
        return py_wrapped();
      case St::kHmHeader:
        return hm_header();
      case St::kHmBody:
        return hm_body();
    }
    return false;
  }

  // ---- text: content or reasoning, looking for markers ----
  bool text() {
    compact();
    if (d_.header_at_start && pos_ == 0 && base_ == 0 && !started_) {
      // Functionary v3.2: the prompt ends with ">>>", so the output starts with a header.
      started_ = true;
      if (!in_reasoning_) {
        cand_ = pos_;
        mark_ = pos_;
        committed_ = false;
        go(St::kHjHeader);
        return true;
      }
    }
    started_ = true;
    if (in_reasoning_ && at_reasoning_start_) {
      // The output may still open the reasoning block the options already assumed open.
      std::size_t p = pos_;
      while (p < buf_.size() && is_ws(buf_[p])) ++p;
      if (p == buf_.size() && !eof_) return false;
      std::size_t save = pos_;
      pos_ = p;
      Tri t = take(d_.think_open);  // leading whitespace before the tag is layout
      if (t == Tri::kMore) {
        pos_ = save;
        return false;
      }
      if (t == Tri::kNo) pos_ = save;
      at_reasoning_start_ = false;
      return true;
    }
    if (!in_reasoning_ && content_start_ && (d_.bare_json || d_.pythonic_bare)) {
      std::size_t p = pos_;
      while (p < buf_.size() &&
             (is_ws(buf_[p]) || (after_call_ && d_.bare_separators && buf_[p] == ';')))
        ++p;
      if (p == buf_.size() && !eof_) return false;
      if (p < buf_.size()) {
        char c = buf_[p];
        bool json = d_.bare_json && (c == '{' || c == '[');
        if (json || (d_.pythonic_bare && c == '[')) {
          if (!after_call_) emit(Route::kContent, std::string_view(buf_).substr(pos_, p - pos_));
          pos_ = p;
          start_bare(json);
          content_start_ = false;
          return true;
        }
      }
      content_start_ = false;
      after_call_ = false;
      return true;
    }
    after_call_ = false;
    const MarkerSet& set = in_reasoning_ ? reasoning_markers_ : content_markers_;
    MarkerSet::Hit hit = set.find(buf_, pos_, eof_);
    if (hit.kind != MarkerSet::Hit::kFound) {
      std::size_t end = hit.kind == MarkerSet::Hit::kPartial ? hit.at : buf_.size();
      end = emit_end(end);
      if (end > pos_) emit(text_route(), std::string_view(buf_).substr(pos_, end - pos_));
      pos_ = end;
      return false;
    }
    if (hit.at > pos_) emit(text_route(), std::string_view(buf_).substr(pos_, hit.at - pos_));
    pos_ = hit.at;
    if (hit.tag == kTagThinkOpen) {
      pos_ += hit.len;
      in_reasoning_ = true;
      at_reasoning_start_ = false;
      return true;
    }
    if (hit.tag == kTagThinkClose) {
      if (!in_reasoning_)
        em_.warn("stray_marker",
                 "reasoning end marker without an open reasoning block (was the reasoning opened "
                 "by the prompt? see reasoning_prefilled); marker removed",
                 abs(pos_));
      pos_ += hit.len;
      in_reasoning_ = false;
      content_start_ = true;
      return true;
    }
    if (hit.tag == kTagDrop) {
      pos_ += hit.len;
      return true;
    }
    if (hit.tag == kTagBare) {
      start_bare(d_.syntax != CallSyntax::kPythonic);
      return true;
    }
    // A call marker.
    if (em_.msg.tool_calls.size() >= opt_.max_tool_calls) {
      em_.warn("limit", "more calls than max_tool_calls; the marker stays text", abs(pos_));
      emit(Route::kContent, std::string_view(buf_).substr(pos_, hit.len));
      pos_ += hit.len;
      return true;
    }
    in_reasoning_ = false;
    at_reasoning_start_ = false;
    cand_ = pos_;
    committed_ = false;
    std::size_t index = static_cast<std::size_t>(hit.tag - kTagTrigger);
    switch (d_.syntax) {
      case CallSyntax::kJsonObject:
        jo_bare_ = false;
        jo_close_ = d_.sections[index].close;
        jo_builtin_ = d_.builtin_calls && d_.sections[index].close.empty();
        pos_ += hit.len;
        go(St::kJoBody);
        break;
      case CallSyntax::kHeaderJson:
      case CallSyntax::kXmlParams:
        in_section_ = false;
        go(St::kBetweenCalls);
        break;
      case CallSyntax::kPythonic:
      case CallSyntax::kKeyValue:
        py_close_ = d_.pythonic_sections[index].close;
        pos_ += hit.len;
        mark_ = pos_;
        go(St::kPyWrapped);
        break;
      case CallSyntax::kHarmony:
        go(St::kHmHeader);
        break;
      case CallSyntax::kNone:
        break;
    }
    return true;
  }

  // A call list without a marker (JSON or pythonic) may start at pos_: it is a candidate until
  // it parses.
  void start_bare(bool json) {
    cand_ = pos_;
    committed_ = false;
    if (!json) {
      start_py_bare();
      return;
    }
    jo_close_ = {};
    jo_bare_ = true;
    go(St::kJoBody);
  }

  // ---- JSON call objects ----
  bool jo_open() { return false; }

  bool jo_body() {
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

  bool jo_obj_start() {
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

  void bad_object(std::string why) {
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

  bool jo_key() {
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

  bool jo_truncated() {
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

  void start_scan(Sink sink, St after) {
    sink_ = sink;
    after_scan_ = after;
    scanner_.reset();
    scan_start_ = pos_;
    go(St::kJoScan);
  }

  bool jo_scan() {
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

  static std::string decode_string(std::string_view raw) {
    if (!raw.empty() && raw.front() == '"' && Json::accept(raw))
      return Json::parse(raw).get<std::string>();
    return std::string(raw);
  }

  bool jo_colon() {
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

  static bool one_of(const std::vector<std::string_view>& keys, std::string_view key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  }

  bool jo_value_start() {
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

  bool jo_after_value() {
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
  static std::string normalize_args(const std::string& raw) {
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

  void finish_object_call() {
    open_call(id_, name_);
    em_.args(normalize_args(args_raw_));
    close_call();
  }

  void object_end() {
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

  bool jo_array_next() {
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

  bool jo_close() {
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

  // Calls read from Python syntax (builtin or pythonic) end their block.
  void emit_python_calls(const std::vector<PyCall>& calls) {
    for (const auto& c : calls) {
      open_call("", c.name);
      em_.args(c.arguments);
      close_call();
    }
    end_block();
  }

  // `<|python_tag|>name.call(k="v")`: buffered to the end of the output, parsed once.
  bool builtin() {
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

  // ---- sections of calls (header + JSON arguments, XML parameters) ----

  // Before a call, between calls, or after the last call of a header-JSON or XML block.
  // Whitespace after a call is layout only if another call follows: looks before consuming.
  bool between_calls() {
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
  Tri skip_function_line() {
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
  void end_block_or_fallback() {
    if (committed_ || cand_ == kNone) {
      end_block();
    } else {
      fallback("not_a_call", "tool-call section without a call");
    }
  }

  static bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > 256) return false;
    for (char c : name) {
      unsigned char u = static_cast<unsigned char>(c);
      if (!(std::isalnum(u) || c == '_' || c == '-' || c == '.' || c == ':' || c == '/' ||
            u >= 0x80))
        return false;
    }
    return true;
  }

  bool hj_header() {
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
      if (!d_.content_name.empty() &&
          trim(std::string_view(buf_).substr(mark_)) == d_.content_name) {
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

  bool hj_id() {
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

  bool hj_args_start() {
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

  bool hj_args() {
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

  bool hj_raw() {
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

  bool hj_after_args() {
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
  std::string infer_tool_name(const std::string& args) const {
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

  void resolve_inferred() {
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

  // ---- XML parameters ----
  // `name="x"` / `="x"` / `x` -> x
  static std::string attr_name(std::string_view header) {
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

  bool xp_name() {
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

  void close_xml_call() {
    em_.args("}");
    close_call(false);  // built by us from escaped values: valid by construction
  }

  bool xp_params() {
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

  bool xp_garbage() {
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

  bool xp_param_name() {
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

  bool xp_value_open() {
    std::size_t save = pos_;
    if (!skip_ws()) return false;
    Tri t = take(d_.value_open);
    if (t == Tri::kMore) {
      pos_ = save;
      return false;
    }
    if (t == Tri::kNo) {
      em_.warn("missing_marker", "parameter value without " + std::string(d_.value_open),
               abs(pos_));
    }
    go(St::kXpValue);
    return true;
  }

  void param_prefix() {
    std::string s = first_param_ ? "" : ", ";
    first_param_ = false;
    append_json_quoted(s, param_);
    s += ": ";
    em_.args(s);
  }

  bool streams_as_string() const {
    if (json_value_ && !types_.known) return false;
    if (types_.known) return types_.first == &ParamTypes::string;
    return d_.untyped == UntypedValues::kString;
  }

  // End of buf_[from..end) without the value's trailing layout (see ValueFraming).
  std::size_t without_trailing_layout(std::size_t from, std::size_t end) const {
    if (d_.framing == ValueFraming::kStripOneNewline) {
      if (end > from && buf_[end - 1] == '\n') --end;
      if (end > from && buf_[end - 1] == '\r') --end;
    } else if (d_.framing == ValueFraming::kTrim) {
      while (end > from && is_ws(buf_[end - 1])) --end;
    }
    return end;
  }

  bool xp_value() {
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
          em_.warn("coercion",
                   "parameter " + param_ + " is marked JSON but is not; kept as a string",
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

  // ---- pythonic ----
  void start_py_bare() {
    py_depth_ = 0;
    py_quote_ = 0;
    py_escape_ = false;
    py_checked_ = false;
    go(St::kPyBare);
  }

  // Bare `[f(a=1), ...]`: held until the list closes (strings and brackets tracked), parsed once.
  bool py_bare() {
    if (!py_checked_) {
      // Cheap early exit for prose: `[` must be followed by a name and `(`.
      std::size_t p = cand_ + 1;
      while (p < buf_.size() && is_ws(buf_[p])) ++p;
      std::size_t name_start = p;
      while (p < buf_.size() && (std::isalnum(static_cast<unsigned char>(buf_[p])) ||
                                 buf_[p] == '_' || buf_[p] == '.'))
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

  bool py_emit(std::string_view body, bool unterminated) {
    std::vector<PyCall> calls;
    std::string error;
    if (d_.syntax == CallSyntax::kKeyValue) {
      PyCall call;
      if (!parse_key_value_call(body, d_.kv_prefix, d_.kv_quote, call, error,
                                opt_.max_json_depth)) {
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

  bool py_wrapped() {
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

  // ---- a recipient header at the start: `to=name<|message|>` is skipped ----
  bool recipient() {
    constexpr std::size_t kLongest = 256;  // a header longer than this is text
    std::size_t p = pos_;
    while (p < buf_.size() && is_ws(buf_[p])) ++p;
    std::string_view rest = std::string_view(buf_).substr(p);
    std::string_view open = d_.recipient_open;
    if (rest.size() < open.size() && open.substr(0, rest.size()) == rest && !eof_) return false;
    if (rest.substr(0, open.size()) != open) {
      go(St::kText);
      return true;
    }
    std::size_t close = rest.find(d_.recipient_close, open.size());
    if (close == std::string_view::npos || close > kLongest) {
      if (!eof_ && rest.size() < kLongest + d_.recipient_close.size()) return false;
      go(St::kText);
      return true;
    }
    std::string name(trim(rest.substr(open.size(), close - open.size())));
    if (valid_name(name)) pos_ = p + close + d_.recipient_close.size();
    go(St::kText);
    return true;
  }

  // ---- harmony ----
  bool hm_header() {
    if (at("<|start|>") == Tri::kYes && pos_ == cand_) {
      pos_ += 9;
      mark_ = pos_;
    } else if (pos_ == cand_) {
      mark_ = pos_;
    }
    MarkerSet::Hit hit = search(hm_header_markers_);
    if (hit.kind != MarkerSet::Hit::kFound || hit.tag != 1) {
      if (hit.kind != MarkerSet::Hit::kFound && !eof_) return false;
      // No <|message|>: the header is not a message; it stays text.
      pos_ = hit.kind == MarkerSet::Hit::kFound ? hit.at : buf_.size();
      fallback("malformed_message", "harmony header without <|message|>");
      return true;
    }
    std::string_view header = std::string_view(buf_).substr(mark_, hit.at - mark_);
    pos_ = hit.at + hit.len;
    std::string recipient, channel;
    if (auto p = header.find("to="); p != std::string_view::npos) {
      std::string_view v = header.substr(p + 3);
      auto e = v.find_first_of(" \t\n<");
      recipient.assign(v.substr(0, e));
    }
    if (auto p = header.find("<|channel|>"); p != std::string_view::npos) {
      std::string_view v = header.substr(p + 11);
      auto e = v.find_first_of(" \t\n<");
      channel.assign(v.substr(0, e));
    }
    cand_ = kNone;
    std::string name = recipient;
    if (name.starts_with("functions.")) name.erase(0, 10);
    if (!recipient.empty() && !valid_name(name)) {
      em_.warn("not_a_call",
               "harmony recipient '" + recipient + "' is not a function name; body kept as content",
               abs(mark_));
      hm_route_ = Route::kContent;
    } else if (!recipient.empty()) {
      open_call("", name);
      hm_route_ = Route::kArgs;
    } else if (channel == "analysis") {
      hm_route_ = Route::kReasoning;
    } else {
      hm_route_ = Route::kContent;
    }
    go(St::kHmBody);
    return true;
  }

  bool hm_body() {
    MarkerSet::Hit hit = search(hm_body_markers_);
    if (hit.kind != MarkerSet::Hit::kFound) {
      std::size_t end = emit_end(hit.at);
      if (end > pos_) emit(hm_route_, std::string_view(buf_).substr(pos_, end - pos_));
      pos_ = end;
      if (!eof_) return false;
    } else {
      if (hit.at > pos_) emit(hm_route_, std::string_view(buf_).substr(pos_, hit.at - pos_));
      pos_ = hit.at + (hit.tag == 1 ? hit.len : 0);
    }
    if (hm_route_ == Route::kArgs) close_call();
    back_to_text();
    return true;
  }

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

// ---- public API ----

const std::vector<DialectInfo>& dialects() {
  static const std::vector<DialectInfo> infos = [] {
    std::vector<DialectInfo> out;
    for (const auto& d : dialect_table()) out.push_back({d.name, d.summary});
    return out;
  }();
  return infos;
}

bool has_dialect(std::string_view name) {
  return find_dialect(name) != nullptr;
}

namespace {
Result<std::unique_ptr<Engine>> make_engine(const Syntax& syntax, const Json& tools,
                                            const Options& options) {
  if (!tools.is_null() && !tools.is_array())
    return Error{"ValueError", "tools must be a JSON array of tool definitions", 0, 0, "tools"};
  return std::make_unique<Engine>(syntax.shared(), tools, options);
}
Result<std::unique_ptr<Engine>> make_engine(std::string_view dialect, const Json& tools,
                                            const Options& options) {
  auto syntax = Syntax::named(dialect);
  if (!syntax) return syntax.error();
  return make_engine(*syntax, tools, options);
}
template <typename SyntaxOrName>
Result<ParseResult> parse_with(std::string_view text, const SyntaxOrName& syntax, const Json& tools,
                               const Options& options) {
  auto engine = make_engine(syntax, tools, options);
  if (!engine) return engine.error();
  (*engine)->one_shot();
  (*engine)->feed(text);
  (*engine)->finish();
  return (*engine)->take_result();
}
}  // namespace

Result<ParseResult> parse(std::string_view text, std::string_view dialect, const Json& tools,
                          const Options& options) {
  return parse_with(text, dialect, tools, options);
}
Result<ParseResult> parse(std::string_view text, const Syntax& syntax, const Json& tools,
                          const Options& options) {
  return parse_with(text, syntax, tools, options);
}

StreamParser::StreamParser(std::unique_ptr<Engine> engine) : engine_(std::move(engine)) {}
StreamParser::StreamParser(StreamParser&&) noexcept = default;
StreamParser& StreamParser::operator=(StreamParser&&) noexcept = default;
StreamParser::~StreamParser() = default;

Result<StreamParser> StreamParser::create(std::string_view dialect, const Json& tools,
                                          const Options& options) {
  auto engine = make_engine(dialect, tools, options);
  if (!engine) return engine.error();
  return StreamParser(std::move(*engine));
}
Result<StreamParser> StreamParser::create(const Syntax& syntax, const Json& tools,
                                          const Options& options) {
  auto engine = make_engine(syntax, tools, options);
  if (!engine) return engine.error();
  return StreamParser(std::move(*engine));
}

std::vector<Delta> StreamParser::feed(std::string_view chunk) {
  return engine_->feed(chunk);
}
std::vector<Delta> StreamParser::finish() {
  return engine_->finish();
}
const Message& StreamParser::message() const {
  return engine_->message();
}
const std::vector<Warning>& StreamParser::warnings() const {
  return engine_->warnings();
}

namespace {
// Model output may hold invalid UTF-8; JSON output replaces it instead of failing.
Json text_json(const std::string& s) {
  return s;
}
}  // namespace

Json message_to_json(const Message& message) {
  Json j = Json::object();
  j["role"] = "assistant";
  j["content"] = message.content.empty() ? Json(nullptr) : text_json(message.content);
  if (!message.reasoning_content.empty())
    j["reasoning_content"] = text_json(message.reasoning_content);
  if (!message.tool_calls.empty()) {
    Json calls = Json::array();
    for (const auto& c : message.tool_calls) {
      Json call = Json::object();
      call["id"] = c.id;
      call["type"] = "function";
      call["function"] = Json{{"name", c.name}, {"arguments", c.arguments}};
      calls.push_back(std::move(call));
    }
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

Json delta_to_json(const Delta& delta) {
  Json j = Json::object();
  if (!delta.reasoning_content.empty()) j["reasoning_content"] = delta.reasoning_content;
  if (!delta.content.empty()) j["content"] = delta.content;
  if (!delta.tool_calls.empty()) {
    Json calls = Json::array();
    for (const auto& t : delta.tool_calls) {
      Json call = Json::object();
      call["index"] = t.index;
      if (!t.id.empty()) {
        call["id"] = t.id;
        call["type"] = "function";
      }
      Json fn = Json::object();
      if (!t.name.empty()) fn["name"] = t.name;
      fn["arguments"] = t.arguments;
      call["function"] = std::move(fn);
      calls.push_back(std::move(call));
    }
    j["tool_calls"] = std::move(calls);
  }
  return j;
}

Json warnings_to_json(const std::vector<Warning>& warnings) {
  Json out = Json::array();
  for (const auto& w : warnings)
    out.push_back(Json{{"code", w.code}, {"message", w.message}, {"offset", w.offset}});
  return out;
}

}  // namespace chatwire::parse
