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
#include "parse/engine.hpp"

namespace chatwire::parse {

auto Engine::feed(std::string_view chunk) -> std::vector<Delta> {
  if (finished_) return {};
  if (overflow_) {
    em_.content(chunk);
    return take();
  }
  if (total_ + chunk.size() > opt_.max_output_bytes) {
    std::size_t room = opt_.max_output_bytes - total_;
    buf_.append(chunk.substr(0, room));
    total_ += room;
    em_.warn("limit", "output longer than max_output_bytes; the rest is content unparsed", total_);
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

auto Engine::finish() -> std::vector<Delta> {
  if (finished_) return {};
  finished_ = true;
  if (!overflow_) {
    eof_ = true;
    run();
  }
  return take();
}

// ---- setup ----
void Engine::build_markers() {
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

// Advances over whitespace; false = ran out of bytes before the input ended.
bool Engine::skip_ws() {
  while (pos_ < buf_.size() && is_ws(buf_[pos_])) ++pos_;
  return pos_ < buf_.size() || eof_;
}

auto Engine::at(std::string_view lit) const -> Tri {
  if (lit.empty()) return Tri::kNo;
  std::size_t n = std::min(avail(), lit.size());
  if (buf_.compare(pos_, n, lit.substr(0, n)) != 0) return Tri::kNo;
  if (n == lit.size()) return Tri::kYes;
  return eof_ ? Tri::kNo : Tri::kMore;
}

// at(lit), consuming the literal when it is there.
auto Engine::take(std::string_view lit) -> Tri {
  Tri t = at(lit);
  if (t == Tri::kYes) pos_ += lit.size();
  return t;
}

// Searches `set` from the resumable scan position (never behind pos_).
auto Engine::search(const MarkerSet& set) -> MarkerSet::Hit {
  std::size_t from = std::max(scan_, pos_);
  MarkerSet::Hit hit = set.find(buf_, from, eof_);
  scan_ = hit.kind == MarkerSet::Hit::kFound ? hit.at : hit.at;
  return hit;
}

// End of the bytes from pos_ that can be emitted now (whole UTF-8 characters only).
auto Engine::emit_end(std::size_t end) const -> std::size_t {
  if (eof_) return end;
  return pos_ + utf8_complete_prefix(std::string_view(buf_).substr(pos_, end - pos_));
}

void Engine::go(St st) {
  st_ = st;
  scan_ = 0;
}

void Engine::emit(Route route, std::string_view s) {
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

auto Engine::take() -> std::vector<Delta> {
  std::vector<Delta> out;
  out.swap(em_.out);
  return out;
}

void Engine::compact() {
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
void Engine::open_call(std::string id, std::string name) {
  if (id.empty()) id = opt_.id_prefix + std::to_string(em_.msg.tool_calls.size());
  em_.begin_call(std::move(id), std::move(name));
  committed_ = true;
}

// Drops the block being read (a candidate or emitted calls) and reads text again.
void Engine::back_to_text() {
  cand_ = kNone;
  committed_ = false;
  go(St::kText);
}

// Leaves a call block and returns to text.
void Engine::end_block() {
  back_to_text();
  content_start_ = true;
  after_call_ = true;
}

// The candidate is not a call: its bytes so far are content, and a warning says why.
void Engine::fallback(std::string code, std::string why) {
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

void Engine::truncated(std::string_view what) {
  em_.warn("truncated", "output ended inside " + std::string(what), abs(pos_));
}

// ---- the driver ----
void Engine::run() {
  while (step()) {
  }
}

bool Engine::step() {
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
bool Engine::text() {
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
void Engine::start_bare(bool json) {
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

bool Engine::valid_name(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '_' || c == '-' || c == '.' || c == ':' || c == '/' || u >= 0x80))
      return false;
  }
  return true;
}

// ---- a recipient header at the start: `to=name<|message|>` is skipped ----
bool Engine::recipient() {
  constexpr std::size_t kLongest = 256;  // a header longer than this is text
  std::size_t p = pos_;
  while (p < buf_.size() && is_ws(buf_[p])) ++p;
  std::string_view rest = std::string_view(buf_).substr(p);
  // Harmony: the prompt ended with `<|start|>assistant`, so the output may begin inside that
  // header with the recipient (` to=functions.f<|channel|>commentary json<|message|>...`).
  std::string_view open = d_.syntax == CallSyntax::kHarmony ? "to=" : d_.recipient_open;
  if (rest.size() < open.size() && open.substr(0, rest.size()) == rest && !eof_) return false;
  if (rest.substr(0, open.size()) != open) {
    go(St::kText);
    return true;
  }
  if (d_.syntax == CallSyntax::kHarmony) {
    pos_ = p;
    cand_ = pos_;
    committed_ = false;
    in_reasoning_ = false;
    at_reasoning_start_ = false;
    go(St::kHmHeader);
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
  return std::make_unique<Engine>(syntax.shared(), tools_json(tools), options);
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
  (*engine)->feed(text);
  (*engine)->finish();
  return (*engine)->take_result();
}
}  // namespace

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
const std::vector<Warning>& StreamParser::warnings() const {
  return engine_->warnings();
}

}  // namespace chatwire::parse
