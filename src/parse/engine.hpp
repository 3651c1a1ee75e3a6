// The engine behind parse() and StreamParser: the shared core (the buffer and its cursor, the
// marker sets, the JSON scanner, the emitter, the text/reasoning routing) and the interface of a
// call-syntax family. The driver and the text states are engine.cpp; each family is one file,
// engine_<family>.cpp, holding its class, its states and its fields, and one row of the family
// table in engine.cpp. See engine.cpp for why it is linear and chunking-invariant.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <memory>

#include "parse/internal.hpp"
#include "parse/markdown_literals.hpp"
#include "util/utf8.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace chatwire::parse {

inline constexpr std::size_t kNone = std::string::npos;

// A character of a bare function or role name (`get-weather.v2`).
inline bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}
// One word of an attribute or label value (`object`, `tool_call`): letters, digits, '_'.
inline bool is_word(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}
// The kinds a call object's "type" key names that are read quietly: what templates and models
// write for a call (`function` in OpenAI's form and Llama 3's, `tool_call` in RWKV's legacy
// form, `function_call`, `tool_use`). Another kind is left out, which a warning says.
inline bool is_call_kind(std::string_view kind) {
  for (std::string_view k : {"function", "tool_call", "function_call", "tool_use"})
    if (kind == k) return true;
  return false;
}
// Whether `key` is one of `keys` (a dialect's name, argument or id keys).
inline bool one_of(const std::vector<std::string_view>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}
// Appends `word` to a space-separated list (the text a warning names).
inline void append_word(std::string& list, std::string_view word) {
  if (!list.empty()) list += ' ';
  list.append(word);
}
// The start of `text`, at most 64 bytes, for a warning that names removed bytes (cut before a
// UTF-8 character, not inside one).
inline std::string quoted_start(std::string_view text) {
  constexpr std::size_t kShown = 64;
  if (text.size() <= kShown) return std::string(text);
  return std::string(text.substr(0, util::utf8::char_start(text, kShown))) + "...";
}

// A marker as a warning shows it: layout characters escaped (a name ended by "\n").
inline std::string shown_marker(std::string_view marker) {
  std::string out;
  for (char ch : marker) {
    if (ch == '\n')
      out += "\\n";
    else if (ch == '\r')
      out += "\\r";
    else if (ch == '\t')
      out += "\\t";
    else
      out += ch;
  }
  return out;
}

inline bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

inline std::string_view trim_front(std::string_view s) {
  while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
  return s;
}
inline std::string_view trim(std::string_view s) {
  s = trim_front(s);
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

// The output bytes the states read: owned (streaming: chunks appended, the decided prefix erased
// by compaction) or, for a one-shot parse, a view of the caller's text, so an output of many
// megabytes is not copied (nor its fresh pages faulted in) before it is parsed.
class Buffer {
 public:
  std::size_t size() const { return view_.size(); }
  const char* data() const { return view_.data(); }
  char operator[](std::size_t i) const { return view_[i]; }
  operator std::string_view() const { return view_; }
  int compare(std::size_t pos, std::size_t n, std::string_view s) const {
    return view_.compare(pos, n, s);
  }
  std::size_t find(std::string_view s, std::size_t from) const { return view_.find(s, from); }

  // Views `text` (empty buffer only); it must outlive the reading. A later append copies.
  void borrow(std::string_view text) {
    owned_.clear();
    view_ = text;
    borrowed_ = true;
  }
  void append(std::string_view s) {
    if (borrowed_) {
      owned_.assign(view_);
      borrowed_ = false;
    }
    owned_.append(s);
    view_ = owned_;
  }
  void erase_prefix(std::size_t n) {
    if (borrowed_) {
      view_.remove_prefix(n);
      return;
    }
    owned_.erase(0, n);
    view_ = owned_;
  }

 private:
  std::string owned_;
  std::string_view view_;
  bool borrowed_ = false;
};

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
    const auto first = static_cast<unsigned char>(marker[0]);
    if (!first_[first]) {
      first_[first] = true;
      if (distinct_ < kVectorFirsts) firsts_[distinct_] = static_cast<char>(first);
      ++distinct_;
    }
  }
  bool empty() const { return items_.empty(); }

  // First marker occurring in hay[from..). A suffix of hay that is a proper prefix of a marker is
  // reported as kPartial unless `eof`.
  Hit find(std::string_view hay, std::size_t from, bool eof) const {
    const std::size_t n = hay.size();
    for (std::size_t i = from; i < n; ++i) {
      if (!first_[static_cast<unsigned char>(hay[i])]) {
        i = next_first(hay, i + 1) - 1;  // the loop's ++i lands on it
        continue;
      }
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
  // The first index >= from whose byte can start a marker (hay.size() if none): one marker's
  // first byte by memchr, up to kVectorFirsts of them 16 bytes a step, more byte by byte. A long
  // value or text between markers is skipped at memory speed instead of a table lookup a byte.
  std::size_t next_first(std::string_view hay, std::size_t from) const {
    const std::size_t n = hay.size();
    if (from >= n || distinct_ == 0) return n;
    const char* p = hay.data();
    std::size_t i = from;
#if defined(__SSE2__)
    if (distinct_ <= kVectorFirsts) {
      __m128i want[kVectorFirsts];
      for (std::size_t k = 0; k < kVectorFirsts; ++k)  // unused lanes repeat the first byte
        want[k] = _mm_set1_epi8(firsts_[k < distinct_ ? k : 0]);
      // One first byte: only the next few blocks here, then memchr. A marker's first byte is
      // often near (a newline, in a value of many short lines), where a memchr call per line
      // cost more than the scan.
      const std::size_t stop = distinct_ == 1 ? std::min(n, from + 64) : n;
      for (; i + 16 <= stop; i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, want[0]), _mm_cmpeq_epi8(v, want[1]));
        hit =
            _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(v, want[2]), _mm_cmpeq_epi8(v, want[3])));
        const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
        if (mask != 0) return i + static_cast<std::size_t>(std::countr_zero(mask));
      }
    }
#endif
    if (distinct_ == 1) {
      const void* hit = std::memchr(p + i, firsts_[0], n - i);
      return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - p) : n;
    }
    for (; i < n; ++i)
      if (first_[static_cast<unsigned char>(p[i])]) return i;
    return n;
  }

  static constexpr std::size_t kVectorFirsts = 4;
  struct Item {
    std::string_view marker;
    int tag;
  };
  std::vector<Item> items_;
  std::array<bool, 256> first_{};
  std::array<char, kVectorFirsts> firsts_{};  // the first kVectorFirsts distinct first bytes
  std::size_t distinct_ = 0;                  // distinct first bytes in all
};

// Resumable bracket matcher for one Python literal that opens with a bracket (`[f(a='x')]`,
// `{'k': "v"}`): brackets are counted outside strings in either quote, with escapes.
class PythonLiteralScanner {
 public:
  void reset() { *this = PythonLiteralScanner(); }
  // Reads s[from..): one past the bracket that closes the literal, or npos when s ends first
  // (the next call goes on from where this one stopped).
  std::size_t feed(std::string_view s, std::size_t from) {
    for (std::size_t i = from; i < s.size(); ++i) {
      const char c = s[i];
      if (quote_) {
        if (escape_)
          escape_ = false;
        else if (c == '\\')
          escape_ = true;
        else if (c == quote_)
          quote_ = 0;
      } else if (c == '\'' || c == '"') {
        quote_ = c;
      } else if (c == '[' || c == '(' || c == '{') {
        ++depth_;
      } else if ((c == ']' || c == ')' || c == '}') && --depth_ == 0) {
        return i + 1;
      }
    }
    return std::string_view::npos;
  }

 private:
  int depth_ = 0;
  char quote_ = 0;
  bool escape_ = false;
};

// Resumable structural lexer for one JSON value: finds where it ends without building it.
class JsonScanner {
 public:
  void reset() { *this = JsonScanner(); }
  bool done() const { return done_; }
  bool is_string() const { return top_string_; }
  bool in_string() const { return in_string_; }  // the bytes fed so far end inside a string

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
        // A stray character: a "value" of that one character, which the caller will reject;
        // a multi-byte UTF-8 character is taken whole, never split (its bytes may come later).
        stray_left_ = utf8_continuations(c);
        if (stray_left_ == 0) {
          done_ = true;
          return 1;
        }
      }
    }
    if (stray_left_ > 0) {
      while (i < n && stray_left_ > 0 && (static_cast<unsigned char>(p[i]) & 0xC0) == 0x80) {
        ++i;
        --stray_left_;
      }
      // Whole, or cut short by a byte that continues nothing (invalid UTF-8, left as it is).
      if (stray_left_ == 0 || i < n) {
        stray_left_ = 0;
        done_ = true;
      }
      return i;
    }
    while (i < n) {
      if (in_string_) {
        if (escape_) {
          escape_ = false;
          ++i;
          continue;
        }
        i = string_blocks_end(p, i, n);
        if (escape_) continue;  // ended on a block boundary before an escaped byte
        i = string_run_end(p, i, n);
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
  // How many continuation bytes follow a UTF-8 lead byte (0 for any other byte).
  static int utf8_continuations(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0xF0 && u < 0xF8) return 3;
    if (u >= 0xE0) return u < 0xF0 ? 2 : 0;
    if (u >= 0xC0) return 1;
    return 0;
  }
  // Inside a string, from a byte that is not escaped: 64 bytes a step, whatever their escapes, up
  // to the block holding the string's closing quote (returned: that block's start) or the last
  // whole block (returned: where it ends, with escape_ set when the next byte is escaped). A
  // backslash escapes the next byte, so a byte is escaped after an odd run of backslashes; the
  // runs are found for all 64 bytes at once (simdjson's find_escaped), so code or JSON text that
  // escapes every few bytes costs no branch per escape.
  std::size_t string_blocks_end(const char* p, std::size_t i, std::size_t n) {
#if defined(__SSE2__)
    std::uint64_t carry = 0;  // 1: the block's first byte is escaped
    while (i + 64 <= n) {
      std::uint64_t quote = 0, backslash = 0;
      for (int k = 0; k < 4; ++k) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 16 * k));
        quote |= static_cast<std::uint64_t>(static_cast<unsigned>(
                     _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')))))
                 << (16 * k);
        backslash |= static_cast<std::uint64_t>(static_cast<unsigned>(
                         _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')))))
                     << (16 * k);
      }
      constexpr std::uint64_t kEven = 0x5555555555555555ull;
      backslash &= ~carry;
      const std::uint64_t follows_escape = (backslash << 1) | carry;
      const std::uint64_t odd_starts = backslash & ~kEven & ~follows_escape;
      std::uint64_t even_starts;
      const bool overflow = __builtin_add_overflow(odd_starts, backslash, &even_starts);
      const std::uint64_t escaped = (kEven ^ (even_starts << 1)) & follows_escape;
      if ((quote & ~escaped) != 0) {  // the closing quote is in this block: bytewise from its start
        escape_ = carry != 0;
        return i;
      }
      carry = overflow ? 1 : 0;
      i += 64;
    }
    escape_ = carry != 0;
#endif
    return i;
  }
  // The first '"' or '\\' in p[i..n), or n: 16 bytes a step, since argument strings are long
  // runs of text (a file being written).
  static std::size_t string_run_end(const char* p, std::size_t i, std::size_t n) {
#if defined(__SSE2__)
    while (i + 16 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                       _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
      if (mask != 0) return i + static_cast<std::size_t>(std::countr_zero(mask));
      i += 16;
    }
#endif
    while (i < n && p[i] != '"' && p[i] != '\\') ++i;
    return i;
  }
  static bool scalar_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+';
  }
  bool started_ = false, done_ = false, in_string_ = false, escape_ = false, scalar_ = false,
       top_string_ = false;
  std::size_t depth_ = 0, max_depth_seen_ = 0;
  int stray_left_ = 0;  // continuation bytes of a stray UTF-8 character still to come
};

// Marker tags of the text state.
enum Tag : int {
  kTagThinkOpen = 1,
  kTagThinkClose,
  kTagDrop,
  kTagBare,
  kTagRecipient,      // a message header mid-output (Dialect::recipient_header)
  kTagDamaged,        // the prefix of a marker that may be damaged (Dialect::damaged_marker_prefix)
  kTagLineEnd,        // a newline: the next line may be a call (Dialect::pythonic_lines)
  kTagTrigger = 100,  // + index into the family's triggers
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
    dropping_ = false;
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
    args_started_ = false;
    args_ws_.clear();
  }
  // A call to a function the request did not declare (Options::forward_unknown_tools off): read
  // like any call, then reported whole in a warning when it ends, not in the message.
  void begin_dropped_call(std::string name, std::size_t offset) {
    ++dropped_calls_;
    dropped_ = ToolCall{};
    dropped_.name = std::move(name);
    dropped_offset_ = offset;
    dropping_ = true;
    in_call_ = true;
  }
  bool in_call() const { return in_call_; }
  // The calls read so far, those not returned (undeclared, dropped) included.
  std::size_t calls_read() const { return msg.tool_calls.size() + dropped_calls_; }
  void args(std::string_view s) {
    if (s.empty() || !in_call_) return;
    std::string& arguments = call_arguments();
    reserve_growing(arguments, arguments.size() + s.size());
    arguments.append(s);
    delta_args(s);
  }
  // prefix, then `raw` escaped as the inside of a JSON string, then suffix: escaped straight into
  // the call's arguments (a value of many megabytes is not built in a string of its own first).
  void args_escaped(std::string_view prefix, std::string_view raw, std::string_view suffix) {
    if (!in_call_) return;
    std::string& arguments = call_arguments();
    const std::size_t start = arguments.size();
    arguments.append(prefix);
    append_json_escaped(arguments, raw);
    arguments.append(suffix);
    if (arguments.size() > start) delta_args(std::string_view(arguments).substr(start));
  }
  // The same bytes into the current feed's deltas. Leading whitespace is held until something
  // else follows: arguments of only whitespace are `{}` when the call ends (end_call), and a
  // stream must not have sent the whitespace before them.
  void delta_args(std::string_view s) {
    if (!collect_deltas || dropping_) return;
    std::string joined;
    if (!args_started_) {
      if (std::all_of(s.begin(), s.end(), [](char ch) { return is_ws(ch); })) {
        args_ws_.append(s);
        return;
      }
      args_started_ = true;
      if (!args_ws_.empty()) {
        joined = std::move(args_ws_);
        args_ws_.clear();
        joined.append(s);
        s = joined;
      }
    }
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
    if (dropping_) {
      std::string arguments(trim(dropped_.arguments));
      warn("unknown_tool",
           "call to '" + dropped_.name +
               "', a function the request's tools do not declare, not returned; its arguments: " +
               (arguments.empty() ? std::string("{}") : arguments),
           dropped_offset_);
      dropping_ = false;
      in_call_ = false;
      return;
    }
    ToolCall& call = msg.tool_calls.back();
    if (trim(call.arguments).empty()) {
      call.arguments.clear();
      args_ws_.clear();
      args("{}");
    } else if (checked && call.arguments.size() <= validate_limit &&
               !Json::accept(call.arguments)) {
      warn("invalid_arguments",
           "arguments of call " + std::to_string(msg.tool_calls.size() - 1) + " (" + call.name +
               ") are not valid JSON; kept as written",
           offset);
    } else if (checked && trim(call.arguments).front() != '{') {
      // Valid JSON, but OpenAI's arguments are an object ("string_args", [1, 2]).
      warn("invalid_arguments",
           "arguments of call " + std::to_string(msg.tool_calls.size() - 1) + " (" + call.name +
               ") are not a JSON object; kept as written",
           offset);
    }
    in_call_ = false;
  }
  void warn(std::string code, std::string message, std::size_t offset) {
    warnings.push_back({std::move(code), std::move(message), offset});
  }
  bool content_seen() const { return content_started_; }
  // At the end of the output: whitespace-only content is the answer when the message has no
  // call (the model answered "\n\n", as vLLM and SGLang return it); beside calls it is layout.
  void flush_whitespace_content() {
    if (content_started_ || content_ws_.empty() || !msg.tool_calls.empty()) return;
    content_started_ = true;
    std::string s = std::move(content_ws_);
    content_ws_.clear();
    msg.content.append(s);
    if (!collect_deltas) return;
    Delta d;
    d.content = s;
    out.push_back(std::move(d));
  }

 private:
  std::size_t dropped_calls_ = 0;
  bool args_started_ = false;  // the open call's arguments have had more than whitespace
  std::string args_ws_;        // ... the whitespace before, held from the deltas
  std::string& call_arguments() {
    return dropping_ ? dropped_.arguments : msg.tool_calls.back().arguments;
  }
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
      if (!pending.empty()) {  // held leading layout goes out with the text after it
        joined = std::move(pending);
        joined.append(s);
        pending.clear();
        s = joined;
      }  // (none held: `s` as it is, not copied; one-shot it is the whole text)
    }
    std::string& target = reasoning ? msg.reasoning_content : msg.content;
    reserve_growing(target, target.size() + s.size());
    target.append(s);
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
  bool dropping_ = false;  // the open call is one begin_dropped_call opened
  ToolCall dropped_;
  std::size_t dropped_offset_ = 0;
  bool content_started_ = false, reasoning_started_ = false;
  std::string content_ws_, reasoning_ws_;
};

// A literal at the cursor: there, not there, or not decidable yet (the bytes so far are a prefix
// of it and more may come).
enum class Tri { kYes, kNo, kMore };
// Where emitted text goes: the message's content, its reasoning, or the open call's arguments.
enum class Route { kContent, kReasoning, kArgs };

class Core;

// One call-syntax family: its states, its fields and the entry points the text state (or
// another family) uses to hand it the bytes at the cursor. A family reads and decides through
// the Core it is given; what it keeps is the element it is decoding (a key, a name, a value).
//
// Every entry point the family does not support makes the candidate text (so a table row that
// names the wrong family degrades to content instead of looping).
class Family {
 public:
  explicit Family(Core& core) : c_(core) {}
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;
  virtual ~Family() = default;

  // The markers that open a call block of this family, in the order on_marker() numbers them.
  virtual void add_triggers(std::vector<std::string_view>& triggers) const;
  // Text found trigger `index` at the cursor (`len` bytes, not consumed); the Core has made the
  // cursor the candidate's start.
  virtual void on_marker(std::size_t index, std::size_t len);
  // A call list without a marker may start at the cursor (bare_json / pythonic_bare).
  virtual void on_bare();
  // A line that may be one whole call starts at the cursor (Dialect::pythonic_lines).
  virtual void on_line();
  // A call header (name, then arguments) starts at the cursor (Functionary, Mistral's name form).
  virtual void on_header();
  // A JSON call list starts at the cursor, after a marker with no closer (Mistral).
  virtual void on_list();

  // Runs the current state once (the driver's contract: false = needs more bytes).
  virtual bool step() = 0;

 protected:
  // Each family keeps its own state enum; its go(state) sets it and calls c_.enter(this).
  Core& c_;
};

// The factory of a family; the table in engine.cpp maps each CallSyntax to one.
using FamilyFactory = std::unique_ptr<Family> (*)(Core&);
std::unique_ptr<Family> make_json_family(Core& core);
std::unique_ptr<Family> make_header_json_family(Core& core);
std::unique_ptr<Family> make_xml_family(Core& core);
std::unique_ptr<Family> make_pythonic_family(Core& core);
std::unique_ptr<Family> make_harmony_family(Core& core);

// What every family shares: the buffer and its cursor, the emitter, the text/reasoning routing,
// the call lifecycle and the limits. The helpers the families call per byte are defined here so
// they inline into each family's file.
class Core {
 public:
  Core(std::shared_ptr<const SyntaxData> syntax, Tools tools, Options options)
      : syntax_(std::move(syntax)),
        tools_holder_(std::move(tools)),
        d(syntax_->dialect),
        tools(tools_json(tools_holder_)),
        opt(std::move(options)) {}

  // ---- buffer helpers ----
  std::size_t avail() const { return buf.size() - pos; }
  std::size_t abs(std::size_t rel) const { return base + rel; }

  // Advances over whitespace; false = ran out of bytes before the input ended.
  bool skip_ws() {
    while (pos < buf.size() && is_ws(buf[pos])) ++pos;
    return pos < buf.size() || eof;
  }
  Tri at(std::string_view lit) const {
    if (lit.empty()) return Tri::kNo;
    std::size_t n = std::min(avail(), lit.size());
    if (buf.compare(pos, n, lit.substr(0, n)) != 0) return Tri::kNo;
    if (n == lit.size()) return Tri::kYes;
    return eof ? Tri::kNo : Tri::kMore;
  }
  // at(lit), consuming the literal when it is there.
  Tri take(std::string_view lit) {
    Tri t = at(lit);
    if (t == Tri::kYes) pos += lit.size();
    return t;
  }
  // Searches `set` from the resumable scan position (never behind pos).
  MarkerSet::Hit search(const MarkerSet& set) { return search_before(set, buf.size()); }
  // The same within buf[.., end): beyond it nothing is found (and a marker cut off by `end` is
  // only partial).
  MarkerSet::Hit search_before(const MarkerSet& set, std::size_t end) {
    end = std::min(end, buf.size());
    const std::string_view window = std::string_view(buf).substr(0, end);
    MarkerSet::Hit hit =
        set.find(window, std::min(std::max(scan, pos), end), eof && end == buf.size());
    scan = hit.at;
    return hit;
  }
  // The latest relative offset at or after `from` where a marker of `marker_len` bytes, not
  // found in buf[from, buf.size()), could still start once more bytes arrive.
  std::size_t marker_tail(std::size_t from, std::size_t marker_len) const {
    const std::size_t partial = marker_len == 0 ? 0 : marker_len - 1;
    return std::max(from, buf.size() - std::min(buf.size(), partial));
  }
  // End of the bytes from pos that can be emitted now (whole UTF-8 characters only).
  std::size_t emit_end(std::size_t end) const {
    if (eof) return end;
    return pos + util::utf8::complete_prefix(std::string_view(buf).substr(pos, end - pos));
  }
  std::string_view bytes(std::size_t from, std::size_t to) const {
    return std::string_view(buf).substr(from, to - from);
  }

  void emit(Route route, std::string_view s) {
    switch (route) {
      case Route::kContent:
        if (d.markdown_literals) literals.feed(s);
        em.content(s);
        if (content_start)
          for (char ch : s)
            if (!is_ws(ch)) {
              content_start = false;
              break;
            }
        break;
      case Route::kReasoning:
        if (d.markdown_literals) reasoning_literals.feed(s);
        if (opt.separate_reasoning)
          em.reasoning(s);
        else
          emit(Route::kContent, s);  // the block stays in the content, as written
        break;
      case Route::kArgs:
        em.args(s);
        break;
    }
  }
  Route text_route() const { return in_reasoning ? Route::kReasoning : Route::kContent; }

  // ---- states ----
  // Makes `family` the one the driver steps; its own state says which of its states runs.
  void enter(Family* family) {
    active = family;
    scan = 0;
  }
  // The family that reads `syntax` (made on first use: a family may hand over to another, as
  // Mistral's JSON list and name forms share one marker).
  Family& family(CallSyntax syntax);

  // ---- call lifecycle ----
  void open_call(std::string id, std::string name) {
    if (!committed && !held_text.empty()) emit(held_route, held_text);
    held_text.clear();
    committed = true;
    if (!call_header.empty()) {
      // The call's own name wins over its message header (as SGLang's inkling detector reads
      // them); a header naming another function is read for nothing, which a warning says.
      if (call_header != name)
        em.warn("malformed_call",
                "message header '" + quoted_start(call_header) + "' is not the call's name '" +
                    quoted_start(name) + "'; left out",
                call_header_at);
      call_header.clear();
    }
    if (!message_recipient.empty()) message_call_names.push_back(name);
    if (d.namespaced_names) {
      // A namespace the mapping leaves out (`foo.get_weather` for the one listed `get_weather`,
      // as vLLM's parser reads it) is the model's when its message's recipient is written the
      // same; another (`to=foo.get_weather` holding `bar.get_weather`) is read for nothing.
      std::string mapped = namespaced(name);
      if (mapped != name && !message_recipient.empty() && name != message_recipient)
        em.warn("malformed_call",
                "call name '" + quoted_start(name) + "' read as '" + mapped +
                    "'; its namespace is not its message's ('" + quoted_start(message_recipient) +
                    "'), left out",
                abs(pos));
      name = std::move(mapped);
    }
    if (!declared(name)) {
      em.begin_dropped_call(std::move(name), abs(pos));
      return;
    }
    if (id.empty()) id = opt.id_prefix + std::to_string(em.msg.tool_calls.size());
    em.begin_call(std::move(id), std::move(name));
  }
  // Dialect::namespaced_names: `ns.f` for the one listed function named `f` (or `x.f`).
  std::string namespaced(std::string name) const;
  // Whether a call to `name` is returned (Options::forward_unknown_tools).
  bool declared(std::string_view name) const {
    return opt.forward_unknown_tools.value_or(!d.drops_unknown_tools) || listed(name);
  }
  // Whether the request lists `name` among its tools (true when it lists none).
  bool listed(std::string_view name) const { return !lists_tools() || lists(name); }
  bool lists_tools() const {
    return tools_holder_.data() && !tools_holder_.data()->function_names.empty();
  }
  bool lists(std::string_view name) const {
    if (!tools_holder_.data()) return false;
    const auto& names = tools_holder_.data()->function_names;
    return std::find(names.begin(), names.end(), name) != names.end();
  }
  void close_call(bool checked = true) { em.end_call(abs(pos), checked); }
  // Calls read from Python syntax (builtin or pythonic) end their block.
  void emit_python_calls(const std::vector<PyCall>& calls);

  // Drops the block being read (a candidate or emitted calls) and reads text again.
  void back_to_text() {
    cand = kNone;
    committed = false;
    held_text.clear();
    call_header.clear();
    layout_before = 0;
    enter(nullptr);
  }
  // The `len` bytes right before the candidate at `at` are layout if it is a call, and content
  // again if it is not (see layout_before).
  void hold_layout(std::size_t len, std::size_t at) {
    layout_before = len;
    layout_owner = abs(at);
  }
  // Leaves a call block and returns to text.
  void end_block() {
    back_to_text();
    content_start = true;
    after_call = true;
  }
  // The candidate is not a call: its bytes so far are content, and a warning says why.
  void fallback(std::string code, std::string why);
  // ... without a warning: what was read is text in the first place (Dialect::loose_sections).
  void fallback_quietly();
  bool drop_cut_frame();
  void warn_cut_frame(std::size_t at);
  bool frame_only(std::string_view text) const;
  // Whether `text` begins with one of Dialect::cut_frame_prefixes.
  bool frame_prefixed(std::string_view text) const {
    for (std::string_view p : d.cut_frame_prefixes)
      if (text.starts_with(p)) return true;
    return false;
  }
  void truncated(std::string_view what) {
    em.warn("truncated", "output ended inside " + std::string(what), abs(pos));
  }

  static bool valid_name(std::string_view name);
  // A name its format delimits (a quoted attribute): any text but an empty one, one over
  // valid_name's 256 bytes, or one holding a control character.
  static bool quoted_name(std::string_view name);

  // ---- state ----
 private:
  std::shared_ptr<const SyntaxData> syntax_;  // keeps the dialect's strings alive
  Tools tools_holder_;                        // keeps the request's tools alive for `tools`
  struct Made {
    FamilyFactory make;
    std::unique_ptr<Family> family;
  };
  std::vector<Made> families_;

 public:
  const Dialect& d;
  const Json& tools;  // the request's tools, shared (not copied) by every parser of the request
  const Options opt;
  Emitter em;

  Buffer buf;
  std::size_t base = 0;      // absolute offset of buf[0]
  std::size_t pos = 0;       // first undecided byte
  std::size_t scan = 0;      // where the current state's marker search resumes
  std::size_t mark = 0;      // start of the element being read (header, value, body)
  std::size_t cand = kNone;  // start of a call block not yet known to be one
  bool eof = false;
  Family* active = nullptr;  // the family being stepped; nullptr = the text states

  MarkdownLiterals literals;            // the content's literal spans (Dialect::markdown_literals)
  MarkdownLiterals reasoning_literals;  // ... and the reasoning's
  bool in_reasoning = false, at_reasoning_start = false;
  bool content_start = true, after_call = false;
  bool committed = false;  // a call of the current block was emitted
  // Bytes right before the candidate that are layout if it is a call (Dialect::
  // layout_before_calls), content if it is not; for the candidate at absolute offset
  // layout_owner only (a family may move the candidate past text it has emitted).
  std::size_t layout_before = 0, layout_owner = kNone;
  // Dialect::call_header_after: the function name written right before the call marker, and
  // where (checked against the call's name by open_call; "" once used).
  std::string call_header;
  std::size_t call_header_at = kNone;
  // Dialect::answer_recipient: the recipient of the message to a tool being read, as written
  // (`weather.get`); "" outside one. A call name's namespace is checked against it.
  std::string message_recipient;
  std::vector<std::string> message_call_names;  // its calls' names as written
  // Text inside a block before its first call (prose after a section opener): content once the
  // block holds a call (open_call emits it first), part of the block's text if it holds none
  // (fallback emits the block whole, from `cand`).
  std::string held_text;
  Route held_route = Route::kContent;
  // Call markers are calls here (Dialect::answer_recipient: only in a message to a tool).
  bool calls_allowed = true;
};

// Where a streamed forward search that ran out of bytes resumes, past everything it already
// ruled out, so reading an element fed in small chunks stays linear. Kept as an absolute offset:
// the buffer drops its consumed front between chunks.
class ResumePoint {
 public:
  // The relative offset to search from: `floor` (usually the cursor) or past what was ruled out.
  std::size_t from(const Core& c, std::size_t floor) const {
    return std::max(floor, abs_ > c.base ? abs_ - c.base : 0);
  }
  // The search from `from` did not find a marker of `marker_len` bytes: resume where one could
  // still start.
  void hold(const Core& c, std::size_t from, std::size_t marker_len) {
    hold_at(c, c.marker_tail(from, marker_len));
  }
  void hold_at(const Core& c, std::size_t rel) { abs_ = c.base + rel; }
  void clear() { abs_ = 0; }

 private:
  std::size_t abs_ = 0;  // 0: nothing ruled out
};

// The driver: feeds bytes, runs the text states (the recipient header, text, reasoning) and
// steps the active family.
class Engine {
 public:
  Engine(std::shared_ptr<const SyntaxData> syntax, Tools tools, Options options);

  std::vector<Delta> feed(std::string_view chunk);
  // One-shot: the whole output, read in place (it must outlive the engine's reading, i.e. this
  // call and finish()); the same as feed(text) on a fresh engine.
  void feed_whole(std::string_view text);

  std::vector<Delta> finish();

  const Message& message() const { return c_.em.msg; }
  const std::vector<Warning>& warnings() const { return c_.em.warnings; }
  void one_shot() { c_.em.collect_deltas = false; }
  // Options::strict: the first malformed call as an error (nullopt when none or not strict).
  std::optional<Error> strict_failure() const;
  ParseResult take_result() { return ParseResult{std::move(c_.em.msg), std::move(c_.em.warnings)}; }

 private:
  void build_markers();
  void marker_text(std::size_t from, std::size_t to);
  std::size_t layout_newlines(std::size_t n) const;
  void skip_reasoning_lead();
  std::size_t cut_frame_at(const MarkerSet& set, std::size_t from) const;
  std::size_t cut_open_at(std::size_t from) const;
  bool drop_cut_open(std::size_t from);
  std::size_t held_layout_end(std::size_t from, std::size_t end) const;
  std::vector<Delta> take();
  void compact();
  void run();
  bool step();

  // ---- text: content or reasoning, looking for markers ----
  bool text();
  // Dialect::reasoning_until_close: whether the start is reasoning is decided (true), or waits
  // for more output (false).
  bool undecided_start();
  bool undecided_ = false;
  bool at_call_header_ = false;     // at the output's start or after Dialect::call_header_after
  std::size_t undecided_scan_ = 0;  // absolute offset the search for a marker resumes at
  // A call list without a marker (JSON or pythonic) may start at pos: it is a candidate until
  // it parses.
  void start_bare(bool json);
  void start_line();
  Tri trigger_at(std::size_t p) const;
  Tri layout_then_trigger(std::size_t p) const;
  // At pos, a damaged marker line before a call marker: removed (kYes), not one (kNo), or undecided
  // until more output comes (kMore).
  Tri damaged_marker();
  std::size_t trimmed_reasoning_end(std::size_t from, std::size_t end) const;
  // ---- a recipient header at the start: `to=name<|message|>` is skipped ----
  bool recipient();

  Core c_;
  Family* calls_ = nullptr;  // the family of the dialect's call syntax (nullptr: none)
  std::size_t total_ = 0;
  bool finished_ = false, overflow_ = false, started_ = false;
  // Dialect::end_tokens: the offset in `chunk` just past the first end token (one begun by the
  // bytes fed before it too), or npos; after the token that ends the output, nothing is read
  // (counted in after_end_, reported at finish).
  std::size_t end_token_cut(std::string_view chunk);
  void count_after_end(std::string_view left_out);
  // feed() between end tokens: reads a part of a chunk.
  std::vector<Delta> feed_kept(std::string_view chunk);
  std::size_t longest_end_ = 0;  // the longest end token's size (0: the dialect has none)
  bool ended_ = false;
  std::size_t ended_at_ = 0, after_end_ = 0;  // offset just past the end token; bytes left out
  bool after_end_text_ = false;               // ... some of them not whitespace
  std::string end_tail_;       // the last bytes fed, where an end token split by a chunk may start
  bool at_recipient_ = false;  // the output's start, where a recipient header may stand
  // Dialect::answer_recipient: no message has begun since the last message end (or the start).
  bool message_ended_ = true;
  // A message addressed to a tool (neither reasoning_recipient nor answer_recipient): where its
  // header stood and the calls before it (its recipient is Core::message_recipient). A message to
  // a tool that holds no call is content, and its recipient read for nothing: end_tool_message()
  // says so.
  std::size_t tool_message_at_ = 0, calls_before_tool_message_ = 0,
              returned_before_tool_message_ = 0;
  void end_tool_message();
  bool at_answer_open_ = false;  // the output's start, where the answer opener may stand
  // Just past a reasoning marker whose following newlines are layout (newlines_after_think_close,
  // reasoning_newlines_trimmed).
  // Newlines (any whitespace while skip_any_space_) still to skip at the cursor, after the
  // reasoning block's markers; kAllNewlines: all.
  static constexpr std::size_t kAllNewlines = ~std::size_t{0};
  std::size_t skip_newlines_ = 0;
  // Dialect::reasoning_lead_trimmed: the layout being skipped is any whitespace, not only newlines.
  bool skip_any_space_ = false;
  bool at_reasoning_label_ =
      false;  // just past an opening tag: Dialect::reasoning_label may follow
  std::size_t think_closed_at_ = kNone;  // absolute offset just after the last reasoning close
  // Where the whitespace after a call block ends, a call marker following it: that whitespace is
  // layout if the marker starts a call (absolute offset; kNone: none pending).
  std::size_t call_gap_end_ = kNone;
  // A call marker held inside reasoning: where the search for the reasoning's close resumes.
  ResumePoint think_close_search_;
  // Every close that ends a reasoning block (Dialect::think_close and the think_alternates'),
  // and the longest one's size: found once here, searched for at each call marker in reasoning.
  std::vector<std::string_view> reasoning_closes_;
  // Dialect::reasoning_label without its newline, then think_close: an empty labelled block.
  std::string label_then_close_;
  std::size_t longest_reasoning_close_ = 0;
  bool mid_header_ = false;  // ... or a recipient_header found mid-output, at pos

  std::vector<std::string_view> triggers_;
  MarkerSet content_markers_, reasoning_markers_;
};

}  // namespace chatwire::parse
