// The incremental output parser. One engine runs every dialect: a buffer of the output with a
// cursor, the text states (content, reasoning, a recipient header), one family per call syntax
// whose states read the calls, and an emitter that turns decisions into OpenAI deltas.
//
// Why it is linear and chunking-invariant:
//  - every state either consumes bytes it has decided, or stops ("need more") when the bytes it
//    has could still become a marker; the decision depends on the bytes only, never on where a
//    chunk ended, so parse(text) == the concatenation of the deltas of any chunking;
//  - text is searched for markers from where the last search stopped (held-back suffixes are at
//    most one marker long), JSON values are lexed by a resumable scanner, and buffered elements
//    (headers, typed values, pythonic lists) are parsed once when their end is found.
#include "parse/engine.hpp"

#include <algorithm>
#include <iterator>

namespace chatwire::parse {

// ---- the families ----

namespace {
// Which family reads which call syntax. A new family is its file (engine_<family>.cpp, defining
// its make_<family>_family) and one row here.
struct FamilyRow {
  CallSyntax syntax;
  FamilyFactory make;
};
constexpr FamilyRow kFamilies[] = {
    {CallSyntax::kJsonObject, make_json_family},
    {CallSyntax::kHeaderJson, make_header_json_family},
    {CallSyntax::kXmlParams, make_xml_family},
    {CallSyntax::kPythonic, make_pythonic_family},
    {CallSyntax::kKeyValue, make_pythonic_family},  // key-value calls share the pythonic states
    {CallSyntax::kHarmony, make_harmony_family},
};

FamilyFactory factory_of(CallSyntax syntax) {
  for (const auto& row : kFamilies)
    if (row.syntax == syntax) return row.make;
  return nullptr;
}

// A family that reads nothing: every entry point makes its candidate text.
class NoFamily final : public Family {
 public:
  using Family::Family;
  bool step() override { return false; }
};
}  // namespace

Family& Core::family(CallSyntax syntax) {
  FamilyFactory make = factory_of(syntax);
  for (auto& made : families_)
    if (made.make == make) return *made.family;
  std::unique_ptr<Family> family =
      make ? make(*this) : std::unique_ptr<Family>(std::make_unique<NoFamily>(*this));
  families_.push_back({make, std::move(family)});
  return *families_.back().family;
}

void Family::add_triggers(std::vector<std::string_view>&) const {}
void Family::on_marker(std::size_t, std::size_t) {
  c_.fallback("not_a_call", "no reader for this call marker");
}
void Family::on_bare() {
  c_.fallback("not_a_call", "no reader for a call list here");
}
void Family::on_line() {
  c_.fallback_quietly();  // no reader for a call line: the line is text
}
void Family::on_header() {
  c_.fallback("not_a_call", "no reader for a call header here");
}
void Family::on_list() {
  c_.fallback("not_a_call", "no reader for a JSON call list here");
}

// ---- the core ----

// Whether `text` is made only of the dialect's own markers (its section, call, parameter and
// reasoning markers, header ends and framing tokens), the last perhaps cut off, and begins with
// one of Dialect::cut_frame_prefixes: a frame the model had not yet written anything into.
bool Core::frame_only(std::string_view text) const {
  if (!frame_prefixed(text)) return false;
  std::vector<std::string_view> markers = {d.section_open, d.section_close, d.call_open,
                                           d.call_close,   d.param_open,    d.value_close,
                                           d.think_open,   d.think_close};
  for (const auto* list : {&d.header_end, &d.name_end, &d.dropped, &d.end_tokens})
    markers.insert(markers.end(), list->begin(), list->end());
  for (const Section& s : d.sections) markers.insert(markers.end(), {s.open, s.close});
  while (!text.empty()) {
    std::size_t longest = 0;
    bool cut = false;
    for (std::string_view m : markers) {
      if (m.empty()) continue;
      if (text.starts_with(m))
        longest = std::max(longest, m.size());
      else if (text.size() < m.size() && m.starts_with(text))
        cut = true;
    }
    if (longest == 0) return cut;  // the rest is a marker cut off, or text
    text.remove_prefix(longest);
  }
  return true;
}

// The warning for the bytes from `at` to the end, a frame cut off by the end of the output and
// removed (Dialect::cut_frame_prefixes); not a refusal under Options::strict.
void Core::warn_cut_frame(std::size_t at) {
  em.warn("stray_marker",
          "output ended inside a frame (" + quoted_start(bytes(at, buf.size())) +
              "); its markers removed",
          abs(at));
}

// A block cut off by the end of the output before the model wrote anything but its markers
// (PLaMo 3's `<|plamo:begin_tool_requests:plamo|>` alone, Kimi K3's `<|open|>tools<|sep|>`) is
// a frame, not text (Dialect::cut_frame_prefixes, as vLLM's plamo3 and kimi_k3 parsers drop
// it): removed, and the warnings its bytes raised while being read give way to one that says so.
bool Core::drop_cut_frame() {
  const std::size_t start = cand == kNone ? pos : cand;
  if (committed || !eof || d.cut_frame_prefixes.empty() || !frame_only(bytes(start, buf.size())))
    return false;
  if (em.in_call()) close_call();
  while (!em.warnings.empty() && em.warnings.back().offset >= abs(start)) em.warnings.pop_back();
  warn_cut_frame(start);
  pos = buf.size();
  back_to_text();
  return true;
}

// The candidate is not a call: its bytes so far are content, and a warning says why.
void Core::fallback(std::string code, std::string why) {
  if (drop_cut_frame()) return;
  if (em.in_call()) close_call();
  em.warn(std::move(code), std::move(why), abs(cand == kNone ? pos : cand));
  fallback_quietly();
}

void Core::fallback_quietly() {
  if (drop_cut_frame()) return;
  if (em.in_call()) close_call();
  std::size_t start = cand == kNone ? pos : cand;
  // When calls were already emitted from this block they stay, and the rest continues as text.
  if (!committed) {
    if (pos == start && pos < buf.size()) ++pos;  // always progress: the first byte is text
    // The layout held before a marker that is not a call is text after all.
    if (cand != kNone && abs(cand) == layout_owner) start -= layout_before;
    emit(Route::kContent, bytes(start, pos));
  }
  back_to_text();
}

void Core::emit_python_calls(const std::vector<PyCall>& calls) {
  for (const auto& call : calls) {
    open_call("", call.name);
    em.args(call.arguments);
    close_call();
  }
  end_block();
}

std::string Core::namespaced(std::string name) const {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos || !lists_tools() || lists(name)) return name;
  auto leaf = [](std::string_view n) { return n.substr(n.rfind('.') + 1); };  // npos + 1 == 0
  const std::string_view wanted = std::string_view(name).substr(dot + 1);
  const std::string* found = nullptr;
  for (const auto& listed : tools_holder_.data()->function_names) {
    if (leaf(listed) != wanted) continue;
    if (found) return name;  // two fit: the name stays as written
    found = &listed;
  }
  return found ? *found : name;
}

bool Core::valid_name(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (char ch : name) {
    unsigned char u = static_cast<unsigned char>(ch);
    if (!(std::isalnum(u) || ch == '_' || ch == '-' || ch == '.' || ch == ':' || ch == '/' ||
          u >= 0x80))
      return false;
  }
  return true;
}

bool Core::quoted_name(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  return std::none_of(name.begin(), name.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return u < 0x20 || u == 0x7f;
  });
}

// ---- the driver ----

Engine::Engine(std::shared_ptr<const SyntaxData> syntax, Tools tools, Options options)
    : c_(std::move(syntax), std::move(tools), std::move(options)) {
  const Dialect& d = c_.d;
  if (d.syntax != CallSyntax::kNone) calls_ = &c_.family(d.syntax);
  build_markers();
  c_.em.validate_limit = c_.opt.max_validated_argument_bytes;
  if (c_.opt.reasoning_prefilled) {
    c_.in_reasoning = true;
  } else if (c_.opt.enable_thinking.has_value()) {
    c_.in_reasoning = *c_.opt.enable_thinking;
  } else {
    c_.in_reasoning = d.starts_in_reasoning;
  }
  if (d.think_open.empty() && d.think_close.empty()) c_.in_reasoning = false;
  for (auto t : d.end_tokens) longest_end_ = std::max(longest_end_, t.size());
  if (d.reasoning_label.ends_with('\n') && !d.think_close.empty())
    label_then_close_ = std::string(d.reasoning_label.substr(0, d.reasoning_label.size() - 1)) +
                        std::string(d.think_close);
  if (!d.think_close.empty()) reasoning_closes_.push_back(d.think_close);
  for (const Section& block : d.think_alternates) reasoning_closes_.push_back(block.close);
  for (auto close : reasoning_closes_)
    longest_reasoning_close_ = std::max(longest_reasoning_close_, close.size());
  at_call_header_ = !d.call_header_after.empty();
  undecided_ = d.reasoning_until_close && !d.think_close.empty() && !c_.opt.reasoning_prefilled &&
               !c_.opt.enable_thinking.has_value() && c_.opt.separate_reasoning;
  if (undecided_) c_.in_reasoning = false;
  c_.at_reasoning_start = c_.in_reasoning;
  at_answer_open_ = !d.answer_open.empty() && !c_.in_reasoning;
  at_recipient_ =
      (!d.recipient_open.empty() && !d.recipient_close.empty()) || d.syntax == CallSyntax::kHarmony;
  c_.calls_allowed = d.answer_recipient.empty();  // output with no header is the answer
}

std::size_t Engine::end_token_cut(std::string_view chunk) {
  // The earliest end token in the chunk, or one begun by the bytes before it: only the seam
  // (the kept tail and the first bytes of the chunk) is copied.
  std::string seam = end_tail_;
  seam.append(chunk.substr(0, longest_end_ - 1));
  std::size_t cut = std::string_view::npos;  // offset in chunk just past the token
  for (auto t : c_.d.end_tokens) {
    if (t.empty()) continue;  // a parser read from JSON may hold one: it ends nothing
    if (auto at = seam.find(t); at != std::string::npos && at < end_tail_.size())
      cut = std::min(cut, at + t.size() - end_tail_.size());
    if (auto at = chunk.find(t); at != std::string_view::npos) cut = std::min(cut, at + t.size());
  }
  if (cut == std::string_view::npos) {
    // Keep the last longest_end_ - 1 bytes fed: from the chunk alone when it is long enough.
    std::size_t keep = longest_end_ - 1;
    if (chunk.size() >= keep) {
      end_tail_.assign(chunk.substr(chunk.size() - keep));
    } else {
      end_tail_.append(chunk);
      end_tail_.erase(0, end_tail_.size() - std::min(end_tail_.size(), keep));
    }
  }
  return cut;
}

void Engine::count_after_end(std::string_view left_out) {
  after_end_ += left_out.size();
  for (char ch : left_out)
    if (!is_ws(ch)) after_end_text_ = true;
}

auto Engine::feed(std::string_view chunk) -> std::vector<Delta> {
  if (finished_) return {};
  std::vector<Delta> out;
  auto append = [&out](std::vector<Delta> more) {
    if (out.empty())
      out = std::move(more);
    else
      out.insert(out.end(), std::make_move_iterator(more.begin()),
                 std::make_move_iterator(more.end()));
  };
  for (;;) {
    if (ended_) {
      count_after_end(chunk);
      return out;
    }
    const std::size_t cut = longest_end_ == 0 ? std::string_view::npos : end_token_cut(chunk);
    if (cut == std::string_view::npos) {
      append(feed_kept(chunk));
      return out;
    }
    // The bytes up to and with the token are read first: a token inside a call (a value that
    // quotes it, as a model writing chat-template code does) is the call's text, since a
    // backend stops generating at the real token; anywhere else it ends the output.
    append(feed_kept(chunk.substr(0, cut)));
    end_tail_.clear();
    chunk = chunk.substr(cut);
    if (c_.em.in_call()) continue;
    ended_ = true;
    ended_at_ = total_;
  }
}

auto Engine::feed_kept(std::string_view chunk) -> std::vector<Delta> {
  if (chunk.empty()) return {};
  if (overflow_) {
    c_.em.content(chunk);
    return take();
  }
  if (total_ + chunk.size() > c_.opt.max_output_bytes) {
    std::size_t room = c_.opt.max_output_bytes - total_;
    c_.buf.append(chunk.substr(0, room));
    total_ += room;
    c_.em.warn("limit", "output longer than max_output_bytes; the rest is content unparsed",
               total_);
    c_.eof = true;
    run();
    overflow_ = true;
    c_.em.content(chunk.substr(room));
    return take();
  }
  total_ += chunk.size();
  c_.buf.append(chunk);
  run();
  return take();
}

void Engine::feed_whole(std::string_view text) {
  if (finished_) return;
  // The whole output is read in place when it holds no end token and fits the limit; with an end
  // token, feed() decides where the output ends.
  const bool token = longest_end_ != 0 &&
                     std::any_of(c_.d.end_tokens.begin(), c_.d.end_tokens.end(),
                                 [&](auto t) { return !t.empty() && text.find(t) != text.npos; });
  if (!token && !overflow_ && total_ == 0 && c_.buf.size() == 0 &&
      text.size() <= c_.opt.max_output_bytes) {
    total_ = text.size();
    c_.buf.borrow(text);
    run();
    take();  // as feed() does (one-shot collects no deltas)
    return;
  }
  feed(text);
}

auto Engine::finish() -> std::vector<Delta> {
  if (finished_) return {};
  finished_ = true;
  if (!overflow_) {
    c_.eof = true;
    run();
  }
  end_tool_message();
  c_.em.flush_whitespace_content();
  // Layout after the token (the template's newline after it) is not text left out.
  if (after_end_text_)
    c_.em.warn("after_end",
               std::to_string(after_end_) + " bytes after the end-of-turn token left out",
               ended_at_);
  return take();
}

// The text states' markers: the family's triggers, reasoning and dropped tokens.
void Engine::build_markers() {
  const Dialect& d = c_.d;
  // Loose wrappers (Dialect::loose_sections) are read in the content only.
  auto loose = [&](std::string_view trigger) {
    return std::any_of(d.loose_sections.begin(), d.loose_sections.end(),
                       [&](const Section& s) { return s.open == trigger; });
  };
  auto add_common = [&](MarkerSet& set, bool with_loose) {
    for (std::size_t i = 0; i < triggers_.size(); ++i)
      if (with_loose || !loose(triggers_[i]))
        set.add(triggers_[i], kTagTrigger + static_cast<int>(i));
    for (auto m : d.dropped) set.add(m, kTagDrop);
    for (auto m : d.end_tokens) set.add(m, kTagDrop);  // the token that ended the output
  };
  if (calls_) calls_->add_triggers(triggers_);
  add_common(content_markers_, true);
  if (d.bare_anywhere)
    content_markers_.add(d.syntax == CallSyntax::kPythonic ? "[" : "{", kTagBare);
  if (d.pythonic_lines) content_markers_.add("\n", kTagLineEnd);
  content_markers_.add(d.think_open, kTagThinkOpen);
  content_markers_.add(d.damaged_marker_prefix, kTagDamaged);
  content_markers_.add(d.think_close, kTagThinkClose);
  reasoning_markers_.add(d.think_close, kTagThinkClose);
  for (const Section& block : d.think_alternates) {
    content_markers_.add(block.open, kTagThinkOpen);
    content_markers_.add(block.close, kTagThinkClose);
    reasoning_markers_.add(block.close, kTagThinkClose);
  }
  // A new message's header ends the reasoning message too.
  content_markers_.add(d.recipient_header, kTagRecipient);
  reasoning_markers_.add(d.recipient_header, kTagRecipient);
  if (d.call_ends_reasoning) add_common(reasoning_markers_, false);
  for (auto m : d.dropped) reasoning_markers_.add(m, kTagDrop);
  for (auto m : d.end_tokens) reasoning_markers_.add(m, kTagDrop);
}

auto Engine::take() -> std::vector<Delta> {
  std::vector<Delta> out;
  out.swap(c_.em.out);
  return out;
}

void Engine::compact() {
  std::size_t keep = c_.cand == kNone ? c_.pos : std::min(c_.pos, c_.cand);
  if (keep < (std::size_t{1} << 16) || keep * 2 < c_.buf.size()) return;
  --keep;  // the byte before pos stays: whether pos starts a line is read from it
  c_.buf.erase_prefix(keep);
  c_.base += keep;
  c_.pos -= keep;
  if (c_.cand != kNone) c_.cand -= keep;
  c_.scan = c_.scan > keep ? c_.scan - keep : 0;
  c_.mark = c_.mark > keep ? c_.mark - keep : 0;
}

void Engine::run() {
  while (step()) {
  }
}

bool Engine::step() {
  // Held: what is buffered past the candidate's start, whether or not the state has moved its
  // cursor (a header searched for its end marker keeps it at the header's start).
  if (c_.cand != kNone && !c_.committed && c_.buf.size() > c_.cand &&
      c_.buf.size() - c_.cand > c_.opt.max_held_bytes) {
    c_.fallback("limit", "held more than max_held_bytes while deciding whether this is a call");
    return true;
  }
  if (c_.active) return c_.active->step();
  if (at_recipient_) return recipient();
  return text();
}

// ---- text: content or reasoning, looking for markers ----
bool Engine::text() {
  compact();
  const Dialect& d = c_.d;
  const Buffer& buf = c_.buf;
  std::size_t& pos = c_.pos;
  if (undecided_ && !undecided_start()) return false;
  if (at_call_header_ && !c_.in_reasoning) {
    // Dialect::call_header_after: a function name right before a call marker is its header.
    constexpr std::size_t kLongestName = 256;
    std::size_t p = pos;
    while (p < buf.size() && p - pos < kLongestName && is_name_char(buf[p])) ++p;
    if (p == buf.size() && !c_.eof) return false;
    const Tri call = p > pos ? trigger_at(p) : Tri::kNo;
    if (call == Tri::kMore) return false;
    at_call_header_ = false;
    if (call == Tri::kYes) {
      // Layout if the marker starts a call (whose own name is checked against it), the
      // block's text if it does not: held with the marker, not dropped.
      c_.call_header.assign(c_.bytes(pos, p));
      c_.call_header_at = c_.abs(pos);
      pos = p;
    }
    return true;
  }
  if (d.header_at_start && pos == 0 && c_.base == 0 && !started_) {
    // Functionary v3.2: the prompt ends with ">>>", so the output starts with a header; an
    // output that writes the marker itself (a prompt without it) starts with a marked header.
    const Tri marked = c_.at(d.call_open);
    if (marked == Tri::kMore) return false;
    started_ = true;
    if (!c_.in_reasoning && marked == Tri::kNo) {
      c_.cand = pos;
      c_.committed = false;
      c_.family(CallSyntax::kHeaderJson).on_header();
      return true;
    }
  }
  started_ = true;
  if (at_answer_open_) {
    // The opener the template writes before a plain answer is layout (leading whitespace too).
    std::size_t p = pos;
    while (p < buf.size() && is_ws(buf[p])) ++p;
    if (p == buf.size() && !c_.eof) return false;
    std::size_t save = pos;
    pos = p;
    Tri t = c_.take(d.answer_open);
    if (t == Tri::kMore) {
      pos = save;
      return false;
    }
    if (t == Tri::kNo) pos = save;
    at_answer_open_ = false;
    return true;
  }
  if (at_reasoning_label_) {
    // An opening tag repeated directly after the block's opening tag opens the same block
    // (llama.cpp's Gemma 4 parser reads `<|channel><|channel>thought` so).
    const Tri again = d.think_open.empty() ? Tri::kNo : c_.at(d.think_open);
    if (again == Tri::kMore) return false;
    if (again == Tri::kNo && drop_cut_open(pos)) {  // as at the block's start
      at_reasoning_label_ = false;
      return true;
    }
    if (again == Tri::kYes) {
      marker_text(pos, pos + d.think_open.size());
      pos += d.think_open.size();
      return true;
    }
    // The label a block may begin with (Gemma 4's `thought\n` after <|channel>) is markup, also
    // when the block closes right after it, its newline left out (`<|channel>thought<channel|>`,
    // an empty thought, as vLLM and llama.cpp read it).
    std::size_t label = 0;
    const Tri t = c_.at(d.reasoning_label);
    if (t == Tri::kMore) return false;
    if (t == Tri::kYes) label = d.reasoning_label.size();
    if (t == Tri::kNo && !label_then_close_.empty()) {
      const Tri bare = c_.at(label_then_close_);
      if (bare == Tri::kMore) return false;
      if (bare == Tri::kYes) label = d.reasoning_label.size() - 1;
    }
    at_reasoning_label_ = false;
    marker_text(pos, pos + label);
    pos += label;
    return true;
  }
  if (skip_newlines_ > 0) {
    // Held, not emitted, while only newlines have come: a streamed answer's first delta is then
    // the same as the one-shot content.
    while (skip_newlines_ > 0 && pos < buf.size() &&
           (buf[pos] == '\n' || (skip_any_space_ && is_ws(buf[pos])))) {
      ++pos;
      --skip_newlines_;
    }
    if (skip_newlines_ > 0 && pos == buf.size() && !c_.eof) return false;
    skip_newlines_ = 0;
    return true;
  }
  if (c_.in_reasoning && c_.at_reasoning_start) {
    // The output may still open the reasoning block the options already assumed open.
    std::size_t p = pos;
    while (p < buf.size() && is_ws(buf[p])) ++p;
    if (p == buf.size() && !c_.eof) return false;
    std::size_t save = pos;
    pos = p;
    Tri t = c_.take(d.think_open);  // leading whitespace before the tag is layout
    for (std::size_t i = 0; t == Tri::kNo && i < d.think_alternates.size(); ++i)
      t = c_.take(d.think_alternates[i].open);
    if (t == Tri::kMore) {
      pos = save;
      return false;
    }
    if (t == Tri::kNo && drop_cut_open(p)) {
      marker_text(save, p);  // the whitespace before it is what it is before a whole tag
      c_.at_reasoning_start = false;
      return true;
    }
    if (t == Tri::kNo) pos = save;
    if (t == Tri::kYes) marker_text(save, pos);
    at_reasoning_label_ = t == Tri::kYes;
    c_.at_reasoning_start = false;
    skip_reasoning_lead();
    return true;
  }
  if (c_.after_call && !c_.in_reasoning) {
    // Whitespace between a call block and the next one is layout: the template writes it between
    // the calls it renders one after another. Held (a few lines at most) until the next bytes say.
    constexpr std::size_t kLongestGap = 256;
    if (pos == buf.size() && !c_.eof) return false;
    std::size_t p = pos;
    while (p < buf.size() && p - pos <= kLongestGap && is_ws(buf[p])) ++p;
    if (p > pos && p - pos <= kLongestGap) {
      if (p == buf.size() && !c_.eof) return false;
      const Tri marker = p < buf.size() ? trigger_at(p) : Tri::kNo;
      if (marker == Tri::kMore) return false;
      // Left out where the marker starts a call; content again if it turns out not to.
      if (marker == Tri::kYes) call_gap_end_ = c_.abs(p);
    }
  }
  if (!c_.in_reasoning && c_.content_start &&
      (d.bare_json || d.loose_bare || d.pythonic_bare || d.pythonic_lines)) {
    std::size_t p = pos;
    while (p < buf.size() &&
           (is_ws(buf[p]) || (c_.after_call && d.bare_separators && buf[p] == ';')))
      ++p;
    // Dialect::pythonic_lines: this whitespace is content whatever follows it (blank lines, the
    // next line's indent); emitted now, so a long run is read once however it streams in.
    if (d.pythonic_lines && !c_.after_call && p > pos) {
      c_.emit(Route::kContent, c_.bytes(pos, p));
      pos = p;
    }
    if (p == buf.size() && !c_.eof) return false;
    if (p < buf.size()) {
      const char ch = buf[p];
      const bool json = (d.bare_json && (ch == '{' || ch == '[')) || (d.loose_bare && ch == '{');
      const bool list = json || (d.pythonic_bare && ch == '[');
      // A line that starts with a name may be one whole call (Dialect::pythonic_lines).
      const bool line =
          !list && d.pythonic_lines && (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_');
      // A call marker there (one starting with '[') is read by the marker search below.
      const Tri marker = list || line ? trigger_at(p) : Tri::kNo;
      if (marker == Tri::kMore) return false;
      // After a call, what stands between it and the next is layout if that is a call too, and
      // content again if it is not (Core::layout_before).
      const std::size_t gap_from = pos;
      auto hold_gap = [&] {
        if (c_.after_call && p != gap_from) c_.hold_layout(p - gap_from, p);
      };
      if (list && marker == Tri::kNo) {
        if (!c_.after_call) c_.emit(Route::kContent, c_.bytes(pos, p));
        pos = p;
        start_bare(json);
        hold_gap();
        c_.content_start = false;
        return true;
      }
      if (line && marker == Tri::kNo) {
        if (!c_.after_call) c_.emit(Route::kContent, c_.bytes(pos, p));
        pos = p;
        c_.content_start = false;
        c_.after_call = false;
        start_line();
        return true;
      }
    }
    c_.content_start = false;
    c_.after_call = false;
    return true;
  }
  c_.after_call = false;
  const MarkerSet& set = c_.in_reasoning ? reasoning_markers_ : content_markers_;
  MarkerSet::Hit hit = set.find(buf, pos, c_.eof);
  if (hit.kind == MarkerSet::Hit::kFound && hit.tag == kTagThinkClose && !c_.in_reasoning) {
    // A reasoning close with no block open that begins the layout before a call is that layout
    // (HyperCLOVAX SEED Think 14B ends the answer's turn and opens the call's with its reasoning
    // close); the call marker after it is the hit, decided once the bytes say whether one follows.
    const Tri layout = layout_then_trigger(hit.at);
    if (layout == Tri::kMore) return false;
    if (layout == Tri::kYes) {
      const MarkerSet::Hit call = set.find(buf, hit.at + d.layout_before_calls.size(), c_.eof);
      if (call.kind == MarkerSet::Hit::kFound && call.tag >= kTagTrigger &&
          call.at == hit.at + d.layout_before_calls.size())
        hit = call;
    }
  }
  if (hit.kind != MarkerSet::Hit::kFound) {
    std::size_t end = hit.kind == MarkerSet::Hit::kPartial ? hit.at : buf.size();
    if (!c_.eof) end = std::min(end, cut_open_at(pos));
    const std::size_t cut = c_.eof ? cut_frame_at(set, pos) : buf.size();
    if (cut < end) {
      c_.warn_cut_frame(cut);
      end = cut;
    }
    end = c_.emit_end(end);
    // Newlines at the end of what has come are held while they may end the reasoning block, and
    // the start of the layout before a call while a call marker may follow.
    const std::size_t to = held_layout_end(pos, trimmed_reasoning_end(pos, end));
    if (to > pos) c_.emit(c_.text_route(), c_.bytes(pos, to));
    pos = c_.eof ? end : to;
    return false;
  }
  // Dialect::reasoning_newlines_trimmed: the newlines before a call marker in the reasoning are
  // held; they are layout if the call ends the reasoning (DeepSeek V4's engine strips them),
  // reasoning text if the marker turns out to be text.
  std::size_t layout_from = hit.at;
  if (hit.tag >= kTagTrigger && c_.in_reasoning && c_.opt.separate_reasoning &&
      d.reasoning_newlines_trimmed)
    while (layout_from > pos && buf[layout_from - 1] == '\n') --layout_from;
  const std::string_view gap = c_.bytes(pos, hit.at);
  const bool at_gap_end = std::exchange(call_gap_end_, kNone) == c_.abs(hit.at);  // used once
  const bool gap_layout = hit.tag >= kTagTrigger && !c_.in_reasoning && at_gap_end &&
                          std::all_of(gap.begin(), gap.end(), [](char ch) { return is_ws(ch); });
  const bool content_layout =
      gap_layout || (hit.tag >= kTagTrigger && !c_.in_reasoning && !d.layout_before_calls.empty() &&
                     gap.ends_with(d.layout_before_calls));
  if (gap_layout)
    layout_from = pos;  // only whitespace since the previous call block
  else if (content_layout)
    layout_from = hit.at - d.layout_before_calls.size();
  const std::size_t to =
      hit.tag == kTagThinkClose ? trimmed_reasoning_end(pos, hit.at) : layout_from;
  if (to > pos) c_.emit(c_.text_route(), c_.bytes(pos, to));
  pos = hit.at;
  if (hit.tag == kTagThinkOpen) {
    marker_text(pos, pos + hit.len);
    pos += hit.len;
    c_.in_reasoning = true;
    at_reasoning_label_ = true;
    c_.at_reasoning_start = false;
    skip_reasoning_lead();
    return true;
  }
  if (hit.tag == kTagThinkClose) {
    if (!c_.in_reasoning) {
      // A close written twice (`</think></think>`) is one close, as SGLang dedupes it; any other
      // close with no block open is text the model wrote (vLLM and llama.cpp keep it), unless
      // the dialect's close is a control token (stray_close_dropped), and the warning says the
      // prompt may have opened the block. With separate_reasoning off the block stays in the
      // content as written, so the repeated close stays too.
      const bool repeated = c_.abs(pos) == think_closed_at_;
      const bool removed = (repeated || d.stray_close_dropped) && c_.opt.separate_reasoning;
      // The question about the prompt only where no block was read: after one the output
      // opened and closed, the prompt did not open it.
      std::string why = repeated                    ? "reasoning end marker repeated"
                        : think_closed_at_ != kNone ? "reasoning end marker after the reasoning "
                                                      "block closed"
                                                    : "reasoning end marker without an open "
                                                      "reasoning block (was the reasoning opened "
                                                      "by the prompt? see reasoning_prefilled)";
      why += removed                     ? "; removed"
             : c_.opt.separate_reasoning ? "; kept as text"
                                         : "; kept as written (separate_reasoning off)";
      c_.em.warn("stray_marker", std::move(why), c_.abs(pos));
      if (!removed) c_.emit(Route::kContent, c_.bytes(pos, pos + hit.len));
      pos += hit.len;
      // A close written again right after this one is a repetition of it.
      if (repeated || removed) think_closed_at_ = c_.abs(pos);
      return true;
    }
    marker_text(pos, pos + hit.len);
    pos += hit.len;
    think_closed_at_ = c_.abs(pos);
    c_.in_reasoning = false;
    c_.content_start = true;
    skip_any_space_ = false;
    skip_newlines_ = layout_newlines(d.newlines_after_think_close ? kAllNewlines
                                     : d.think_close_newline      ? 1
                                                                  : 0);
    return true;
  }
  if (hit.tag == kTagDrop) {
    at_call_header_ = d.call_header_after == c_.bytes(pos, pos + hit.len);
    pos += hit.len;
    message_ended_ = true;
    end_tool_message();
    return true;
  }
  if (hit.tag == kTagRecipient && !d.answer_recipient.empty() && !message_ended_) {
    // Muse Glimmer: a header inside a message's body, with no end of message before it, is
    // text the model quotes (as SGLang's muse parser reads it).
    c_.emit(c_.text_route(), c_.bytes(pos, pos + hit.len));
    pos += hit.len;
    return true;
  }
  if (hit.tag == kTagRecipient) {
    // Read by recipient() from pos: the header, the recipient, then recipient_close.
    at_recipient_ = mid_header_ = true;
    return true;
  }
  if (hit.tag == kTagBare) {
    start_bare(d.syntax != CallSyntax::kPythonic);
    return true;
  }
  if (hit.tag == kTagLineEnd) {  // the newline is text; the next line may be a call
    c_.emit(Route::kContent, c_.bytes(pos, pos + hit.len));
    pos += hit.len;
    c_.content_start = true;
    return true;
  }
  // The literal spans as they stand right before the marker: with the held layout, which may end
  // the line a fence or a blockquote is on.
  auto literals_at_marker = [&] {
    MarkdownLiterals literals = c_.in_reasoning ? c_.reasoning_literals : c_.literals;
    literals.feed(c_.bytes(layout_from, pos));
    return literals;
  };
  if ((hit.tag == kTagDamaged || hit.tag >= kTagTrigger) && d.markdown_literals &&
      literals_at_marker().masks(buf[pos])) {
    // A marker the model quotes inside a code block, code span or blockquote: text (of the
    // reasoning too, where a model explains the call it is about to make).
    c_.emit(c_.text_route(), c_.bytes(layout_from, pos + hit.len));
    pos += hit.len;
    return true;
  }
  if (hit.tag == kTagDamaged) {
    const Tri damaged = damaged_marker();
    if (damaged == Tri::kMore) return false;
    if (damaged == Tri::kNo) {
      c_.emit(c_.text_route(), c_.bytes(pos, pos + hit.len));
      pos += hit.len;
    }
    return true;
  }
  // A call marker inside reasoning: a model thinking about a call may write one there and close
  // the block later; then it is reasoning (as vLLM's and SGLang's reasoning parsers, which run
  // first, keep it). A model that calls without closing its reasoning never closes it: the call
  // ends the reasoning. Held until the block closes or the output ends (or max_held_bytes).
  if (c_.in_reasoning && !d.think_close.empty()) {
    const std::size_t from = think_close_search_.from(c_, pos + hit.len);
    const bool closes = std::any_of(reasoning_closes_.begin(), reasoning_closes_.end(),
                                    [&](auto c) { return buf.find(c, from) != std::string::npos; });
    if (closes) {
      c_.emit(Route::kReasoning, c_.bytes(layout_from, pos + hit.len));
      pos += hit.len;
      think_close_search_.clear();
      return true;
    }
    if (!c_.eof && buf.size() - pos <= c_.opt.max_held_bytes) {
      think_close_search_.hold(c_, from, longest_reasoning_close_);
      pos = layout_from;  // the held newlines stay in the buffer
      return false;
    }
    think_close_search_.clear();
  }
  // A call marker where the message's recipient makes it text (Dialect::answer_recipient).
  if (!c_.calls_allowed) {
    c_.emit(c_.text_route(), c_.bytes(layout_from, pos + hit.len));
    pos += hit.len;
    return true;
  }
  // A call marker.
  if (c_.em.msg.tool_calls.size() >= c_.opt.max_tool_calls) {
    c_.em.warn("limit", "more calls than max_tool_calls; the marker stays text", c_.abs(pos));
    if (!c_.call_header.empty()) {  // a message header before it is text with it
      if (c_.call_header_at + c_.call_header.size() == c_.abs(layout_from))
        c_.emit(c_.text_route(), c_.call_header);
      c_.call_header.clear();
    }
    if (layout_from < pos) c_.emit(c_.text_route(), c_.bytes(layout_from, pos));
    c_.emit(Route::kContent, c_.bytes(pos, pos + hit.len));
    pos += hit.len;
    return true;
  }
  c_.in_reasoning = false;
  c_.at_reasoning_start = false;
  c_.cand = pos;
  c_.committed = false;
  // Only the content's layout comes back as text if the marker is not a call (the reasoning's
  // trimmed newlines stay out, as before there was content layout); so does a message header
  // right before it (Dialect::call_header_after).
  std::size_t held = content_layout ? pos - layout_from : 0;
  if (!c_.call_header.empty() && c_.call_header_at + c_.call_header.size() == c_.abs(pos))
    held += c_.call_header.size();
  c_.hold_layout(held, pos);
  calls_->on_marker(static_cast<std::size_t>(hit.tag - kTagTrigger), hit.len);
  return true;
}

// The newlines around the reasoning markers the dialect takes as layout (`n`), none where the
// block stays in the content as written (Options::separate_reasoning off).
std::size_t Engine::layout_newlines(std::size_t n) const {
  return c_.opt.separate_reasoning ? n : 0;
}

// Where, at the end of the output, a frame cut off after one of the dialect's control tokens
// begins (Dialect::cut_frame_prefixes: the rest of the text is a proper prefix of one of `set`'s
// markers and starts with such a token); the text's end when there is none.
std::size_t Engine::cut_frame_at(const MarkerSet& set, std::size_t from) const {
  const std::string_view buf = c_.buf;
  if (c_.d.cut_frame_prefixes.empty()) return buf.size();
  const MarkerSet::Hit tail = set.find(buf, from, false);
  if (tail.kind == MarkerSet::Hit::kPartial && c_.frame_prefixed(buf.substr(tail.at)))
    return tail.at;
  return cut_open_at(from);
}

// Inside the reasoning, where the text's end may be the opening tag written again and cut off
// (a frame too, though none of the reasoning's markers): held like a marker's start, removed if
// the output ends there. The text's end when there is none.
std::size_t Engine::cut_open_at(std::size_t from) const {
  const std::string_view buf = c_.buf;
  const std::string_view open = c_.d.think_open;
  if (!c_.in_reasoning || open.empty() || c_.d.cut_frame_prefixes.empty()) return buf.size();
  std::size_t at = std::max(from, buf.size() - std::min(buf.size(), open.size() - 1));
  for (; (at = buf.find(open.front(), at)) != std::string_view::npos; ++at)
    if (open.starts_with(buf.substr(at)) && c_.frame_prefixed(buf.substr(at))) return at;
  return buf.size();
}

// At the end of the output, the text from `from` on being the reasoning opening tag written
// again and cut off, beginning with one of Dialect::cut_frame_prefixes (a frame the model had not
// written into; vLLM's plamo3 parser drops it): removed with the cut-frame warning.
bool Engine::drop_cut_open(std::size_t from) {
  const std::string_view rest = std::string_view(c_.buf).substr(from);
  const std::string_view open = c_.d.think_open;
  if (!c_.eof || rest.empty() || rest.size() >= open.size() || !open.starts_with(rest) ||
      !c_.frame_prefixed(rest))
    return false;
  c_.warn_cut_frame(from);
  c_.pos = c_.buf.size();
  return true;
}

// The layout at the start of a reasoning block: its newlines (reasoning_newlines_trimmed), or
// all its whitespace (reasoning_lead_trimmed).
void Engine::skip_reasoning_lead() {
  const Dialect& d = c_.d;
  skip_any_space_ = d.reasoning_lead_trimmed;
  skip_newlines_ =
      layout_newlines(d.reasoning_newlines_trimmed || d.reasoning_lead_trimmed ? kAllNewlines : 0);
}

// A reasoning marker read as syntax: with Options::separate_reasoning off it is also written to the
// content, where the block it frames goes.
void Engine::marker_text(std::size_t from, std::size_t to) {
  if (!c_.opt.separate_reasoning) c_.emit(Route::kContent, c_.bytes(from, to));
}

// `end`, or before the longest end of the content [from, end) that may begin the layout before a
// call (Dialect::layout_before_calls), held until the next bytes say whether a marker follows.
std::size_t Engine::held_layout_end(std::size_t from, std::size_t end) const {
  const std::string_view layout = c_.d.layout_before_calls;
  if (layout.empty() || c_.in_reasoning || c_.eof) return end;
  const std::string_view text = c_.bytes(from, end);
  for (std::size_t k = std::min(layout.size(), text.size()); k > 0; --k)
    if (text.ends_with(layout.substr(0, k))) return end - k;
  return end;
}

// `end`, or before the newlines that end [from, end) where the dialect trims the reasoning's.
std::size_t Engine::trimmed_reasoning_end(std::size_t from, std::size_t end) const {
  if (!c_.in_reasoning || !c_.opt.separate_reasoning) return end;
  if (c_.d.reasoning_newlines_trimmed)
    while (end > from && c_.buf[end - 1] == '\n') --end;
  else if (c_.d.think_close_newline && end > from && c_.buf[end - 1] == '\n')
    --end;
  return end;
}

// Whether a call marker starts at `p` (kMore: the bytes end inside one's beginning). A marker that
// itself starts with '[' (xLAM's [TOOL_CALLS]) is that marker, not a bare list.
Tri Engine::trigger_at(std::size_t p) const {
  const std::string_view rest = std::string_view(c_.buf).substr(p);
  Tri found = Tri::kNo;
  for (std::string_view trigger : triggers_) {
    if (trigger.empty()) continue;
    if (rest.starts_with(trigger)) return Tri::kYes;
    if (!c_.eof && rest.size() < trigger.size() && trigger.starts_with(rest)) found = Tri::kMore;
  }
  return found;
}

// Whether Dialect::layout_before_calls and then a call marker start at `p` (kMore: the bytes end
// inside them).
Tri Engine::layout_then_trigger(std::size_t p) const {
  const std::string_view layout = c_.d.layout_before_calls;
  const std::string_view rest = std::string_view(c_.buf).substr(p);
  if (layout.empty()) return Tri::kNo;
  if (rest.size() < layout.size())
    return !c_.eof && layout.starts_with(rest) ? Tri::kMore : Tri::kNo;
  if (!rest.starts_with(layout)) return Tri::kNo;
  return trigger_at(p + layout.size());
}

Tri Engine::damaged_marker() {
  // Bounds: a damaged marker is one short line; what follows it is whitespace up to the marker.
  constexpr std::size_t kLongestLine = 256, kLongestGap = 1024;
  const Buffer& buf = c_.buf;
  const std::size_t p = c_.pos;
  const bool line_start = p == 0 ? c_.base == 0 : buf[p - 1] == '\n';
  if (!line_start) return Tri::kNo;
  const std::size_t limit = std::min(buf.size(), p + kLongestLine);
  const std::size_t nl = c_.bytes(p, limit).find('\n');
  if (nl == std::string_view::npos)
    return !c_.eof && limit == buf.size() && limit - p < kLongestLine ? Tri::kMore : Tri::kNo;
  std::size_t q = p + nl;
  while (q < buf.size() && q - p < kLongestGap && is_ws(buf[q])) ++q;
  if (q == buf.size()) return c_.eof ? Tri::kNo : Tri::kMore;
  const Tri marker = trigger_at(q);
  if (marker != Tri::kYes) return marker;
  std::string line(c_.bytes(p, p + nl));
  c_.em.warn("malformed_call", "damaged call marker '" + line + "' before the call marker; removed",
             c_.abs(p));
  c_.pos = q;
  return Tri::kYes;
}

bool Engine::undecided_start() {
  // Dialect::reasoning_until_close, the prompt's state unknown: the output is reasoning the
  // prompt opened if a reasoning close comes before any other marker (framing tokens aside),
  // else content. Held, not emitted, until that is known, so streaming equals one-shot.
  const Buffer& buf = c_.buf;
  std::size_t from = std::max(c_.pos, undecided_scan_ > c_.base ? undecided_scan_ - c_.base : 0);
  for (;;) {
    MarkerSet::Hit hit = content_markers_.find(buf, from, c_.eof);
    if (hit.kind == MarkerSet::Hit::kFound && hit.tag == kTagDrop) {
      from = hit.at + hit.len;
      continue;
    }
    if (hit.kind == MarkerSet::Hit::kFound || c_.eof ||
        buf.size() - c_.pos > c_.opt.max_held_bytes) {
      undecided_ = false;
      if (hit.kind == MarkerSet::Hit::kFound && hit.tag == kTagThinkClose) c_.in_reasoning = true;
      return true;
    }
    undecided_scan_ = c_.abs(hit.kind == MarkerSet::Hit::kPartial ? hit.at : buf.size());
    return false;
  }
}

void Engine::start_line() {
  c_.cand = c_.pos;
  c_.committed = false;
  c_.family(CallSyntax::kPythonic).on_line();
}

void Engine::start_bare(bool json) {
  c_.cand = c_.pos;
  c_.committed = false;
  c_.family(json ? CallSyntax::kJsonObject : CallSyntax::kPythonic).on_bare();
}

bool Engine::recipient() {
  constexpr std::size_t kLongest = 256;  // a header longer than this is text
  const Dialect& d = c_.d;
  std::size_t p = c_.pos;
  while (p < c_.buf.size() && is_ws(c_.buf[p])) ++p;
  std::string_view rest = std::string_view(c_.buf).substr(p);
  // Harmony: the prompt ended with `<|start|>assistant`, so the output may begin inside that
  // header with the recipient (` to=functions.f<|channel|>commentary json<|message|>...`).
  const bool mid = mid_header_;
  std::string_view open = mid                                ? d.recipient_header
                          : d.syntax == CallSyntax::kHarmony ? std::string_view("to=")
                                                             : d.recipient_open;
  auto cut_off = [&](std::string_view lit) {
    return rest.size() < lit.size() && lit.substr(0, rest.size()) == rest;
  };
  // The output's first header may have no recipient (` <|message|>..`): the answer's, as a
  // header without one is mid-output (vLLM's muse_glimmer engine reads it so).
  const bool bare_first = !mid && !d.answer_recipient.empty() && !d.recipient_close.empty();
  if (!c_.eof && (cut_off(open) || (bare_first && cut_off(d.recipient_close)))) return false;
  const bool bare_header = bare_first && rest.starts_with(d.recipient_close);
  if (bare_header) open = {};
  // A mid-output header that is not followed by a recipient stays text (and is not read again).
  auto not_a_header = [&] {
    if (mid) {
      c_.emit(c_.text_route(), c_.bytes(p, p + open.size()));
      c_.pos = p + open.size();
    }
    return true;
  };
  at_recipient_ = mid_header_ = false;
  if (rest.substr(0, open.size()) != open) return not_a_header();
  if (d.syntax == CallSyntax::kHarmony && !mid) {
    // The header is a message's header: the family reads it as after a marker.
    c_.pos = p;
    c_.cand = c_.pos;
    c_.committed = false;
    c_.in_reasoning = false;
    c_.at_reasoning_start = false;
    calls_->on_marker(0, 0);
    return true;
  }
  std::size_t close = rest.find(d.recipient_close, open.size());
  if (close == std::string_view::npos || close > kLongest) {
    if (!c_.eof && rest.size() < kLongest + d.recipient_close.size()) {
      at_recipient_ = true;
      mid_header_ = mid;
      return false;
    }
    return not_a_header();
  }
  std::string_view body = trim(rest.substr(open.size(), close - open.size()));
  std::string name(body);
  if ((mid || bare_header) && !d.answer_recipient.empty()) {
    // `<|start|>[role][ to=R]<|message|>`: the recipient follows recipient_open; a header
    // without one is the answer's.
    const auto to = body.find(d.recipient_open);
    name = to == std::string_view::npos
               ? std::string(d.answer_recipient)
               : std::string(trim(body.substr(to + d.recipient_open.size())));
    // The role is the model's own: any other word there is not read, which a warning says.
    if (const std::string_view role = trim(body.substr(0, to));
        !role.empty() && role != "assistant" && Core::valid_name(name))
      c_.em.warn("malformed_message",
                 "header role '" + quoted_start(role) + "' is not assistant; read as assistant",
                 c_.abs(p));
  }
  if (!Core::valid_name(name)) return not_a_header();
  message_ended_ = false;
  c_.pos = p + close + d.recipient_close.size();
  if (!d.reasoning_recipient.empty()) {
    // The message's recipient routes its body: reasoning to itself, else content and calls.
    // Two reasoning messages are two paragraphs (as SGLang's muse parser joins them).
    const bool reasoning = name == d.reasoning_recipient;
    if (reasoning && c_.opt.separate_reasoning && !c_.em.msg.reasoning_content.empty())
      c_.emit(Route::kReasoning, "\n");
    c_.in_reasoning = reasoning;
    c_.at_reasoning_start = false;
    if (!d.answer_recipient.empty()) c_.calls_allowed = !reasoning && name != d.answer_recipient;
    end_tool_message();  // (a header restarting the message ends it)
    if (c_.calls_allowed && !d.answer_recipient.empty()) {
      c_.message_recipient = name;
      tool_message_at_ = c_.abs(p);
      calls_before_tool_message_ = c_.em.calls_read();
      returned_before_tool_message_ = c_.em.msg.tool_calls.size();
    }
  }
  return true;
}

void Engine::end_tool_message() {
  const std::string& recipient = c_.message_recipient;
  if (recipient.empty()) return;
  const auto& calls = c_.em.msg.tool_calls;
  const std::size_t read = c_.em.calls_read() - calls_before_tool_message_;
  if (read == 0) {
    c_.em.warn("malformed_message", "message to '" + quoted_start(recipient) + "' holds no call",
               tool_message_at_);
  } else if (read == calls.size() - returned_before_tool_message_) {
    // Its calls are returned: one of them is to the recipient, else the recipient (a function
    // named differently, `to=get_weathr`) was read for nothing.
    const std::string to = c_.d.namespaced_names ? c_.namespaced(recipient) : recipient;
    // (a namespaced recipient, `weather.get_weather`, is its last part's call without tools too)
    auto to_it = [&](const ToolCall& call) {
      return call.name == to || (to.size() > call.name.size() && to.ends_with(call.name) &&
                                 to[to.size() - call.name.size() - 1] == '.');
    };
    const auto& written = c_.message_call_names;
    if (std::none_of(calls.begin() + static_cast<std::ptrdiff_t>(returned_before_tool_message_),
                     calls.end(), to_it))
      c_.em.warn("malformed_message",
                 "message to '" + quoted_start(recipient) +
                     "' holds calls to other functions; its recipient left out",
                 tool_message_at_);
    else if (to != recipient &&
             std::find(written.begin(), written.end(), recipient) == written.end())
      // The recipient is a listed function's only through its last part (`x.get_weather`), and
      // no call in it is written so: its namespace is read for nothing.
      c_.em.warn("malformed_message",
                 "message to '" + quoted_start(recipient) + "' read as to '" + to +
                     "'; its namespace, written by none of its calls, left out",
                 tool_message_at_);
  }
  c_.message_recipient.clear();
  c_.message_call_names.clear();
}

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
Result<std::unique_ptr<Engine>> make_engine(const Syntax& syntax, const Tools& tools,
                                            const Options& options) {
  return std::make_unique<Engine>(syntax.shared(), tools, options);
}
Result<std::unique_ptr<Engine>> make_engine(std::string_view dialect, const Tools& tools,
                                            const Options& options) {
  auto syntax = Syntax::named(dialect);
  if (!syntax) return syntax.error();
  return make_engine(*syntax, tools, options);
}
template <typename SyntaxOrName>
Result<ParseResult> parse_with(std::string_view text, const SyntaxOrName& syntax,
                               const Tools& tools, const Options& options) {
  auto engine = make_engine(syntax, tools, options);
  if (!engine) return engine.error();
  (*engine)->one_shot();
  (*engine)->feed_whole(text);
  (*engine)->finish();
  if (auto failure = (*engine)->strict_failure()) return *failure;
  return (*engine)->take_result();
}
}  // namespace

bool is_malformed_call(std::string_view code) noexcept {
  // The codes of a call that is not well formed; limits, reasoning markers and schema types
  // (coercion) are not about the call's form.
  constexpr std::string_view kMalformed[] = {"malformed_call",    "truncated",    "not_a_call",
                                             "invalid_arguments", "invalid_call", "missing_marker",
                                             "malformed_message"};
  return std::find(std::begin(kMalformed), std::end(kMalformed), code) != std::end(kMalformed);
}

std::optional<Error> Engine::strict_failure() const {
  if (!c_.opt.strict) return std::nullopt;
  for (const auto& w : c_.em.warnings) {
    if (!is_malformed_call(w.code)) continue;
    return Error{"ParseError",
                 w.code + " at byte " + std::to_string(w.offset) + " (" +
                     std::string(family_name(c_.d.syntax)) + " family): " + w.message,
                 0, 0, "output"};
  }
  return std::nullopt;
}

Result<ParseResult> parse(std::string_view text, std::string_view dialect, const Tools& tools,
                          const Options& options) {
  return parse_with(text, dialect, tools, options);
}
Result<ParseResult> parse(std::string_view text, const Syntax& syntax, const Tools& tools,
                          const Options& options) {
  return parse_with(text, syntax, tools, options);
}

StreamParser::StreamParser(std::unique_ptr<Engine> engine) : engine_(std::move(engine)) {}
StreamParser::StreamParser(StreamParser&&) noexcept = default;
StreamParser& StreamParser::operator=(StreamParser&&) noexcept = default;
StreamParser::~StreamParser() = default;

Result<StreamParser> StreamParser::create(std::string_view dialect, const Tools& tools,
                                          const Options& options) {
  auto engine = make_engine(dialect, tools, options);
  if (!engine) return engine.error();
  return StreamParser(std::move(*engine));
}
Result<StreamParser> StreamParser::create(const Syntax& syntax, const Tools& tools,
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
std::optional<Error> StreamParser::failure() const {
  return engine_->strict_failure();
}
const std::vector<Warning>& StreamParser::warnings() const {
  return engine_->warnings();
}

}  // namespace chatwire::parse
