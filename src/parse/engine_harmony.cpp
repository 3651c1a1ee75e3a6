// The Harmony family (gpt-oss): messages with a channel and a recipient; a message to a
// function is a call, the analysis channel is reasoning, the rest is content.
#include "parse/engine.hpp"

namespace chatwire::parse {

namespace {

class HarmonyFamily final : public Family {
 public:
  explicit HarmonyFamily(Core& core) : Family(core) {
    header_markers_.add("<|message|>", 1);
    for (auto m : {"<|start|>", "<|end|>", "<|call|>", "<|return|>"}) header_markers_.add(m, 2);
    for (auto m : {"<|end|>", "<|call|>", "<|return|>"}) body_markers_.add(m, 1);
    for (auto m : {"<|start|>", "<|channel|>"}) body_markers_.add(m, 2);
  }

  void add_triggers(std::vector<std::string_view>& triggers) const override {
    triggers.push_back("<|start|>");
    triggers.push_back("<|channel|>");
  }
  // The header is read from the marker on (or from a recipient at the output's start).
  void on_marker(std::size_t, std::size_t) override { go(St::kHeader); }

  bool step() override {
    switch (st_) {
      case St::kHeader:
        return hm_header();
      case St::kBody:
        return hm_body();
      case St::kAfter:
        return hm_after();
    }
    return false;
  }

 private:
  enum class St {
    kHeader,  // `<|start|>assistant<|channel|>commentary to=functions.f json<|message|>`
    kBody,    // the message, up to its end marker
    kAfter,   // after a message's end marker, where the next header's <|start|> belongs
  };

  void go(St state) {
    st_ = state;
    c_.enter(this);
  }

  bool hm_header();
  bool headerless_message(const MarkerSet::Hit& end);
  bool hm_body();
  bool hm_after();

  // The words of a header no field reads: a role, then after each <|channel|> a channel name,
  // a `to=` recipient anywhere (written again the same), one content type after the channel and
  // its recipient (`json`) in a message to a recipient where no <|constrain|> follows, and one
  // word after the last <|constrain|>, each a plain word. Anything else (a word split by a space,
  // markup glued on by '<' or written into a word, a second recipient, text the model wrote
  // there) is left out of the message, which a warning says.
  static std::string unread_header_words(std::string_view header, bool to_recipient);

  // A message's body text. Two messages of content (a commentary preamble, then the final
  // answer) are two paragraphs: a newline stands between them, as vLLM joins them; so are two
  // analysis messages of reasoning (vLLM's one-shot parse joins them so too).
  void body_text(std::string_view text);

  St st_ = St::kHeader;
  MarkerSet header_markers_, body_markers_;
  Route route_ = Route::kContent;   // where the message's body goes
  bool body_started_ = false;       // the current message's body has text
  bool content_message_ = false;    // a message of content has had text
  bool reasoning_message_ = false;  // ... and one of reasoning (joined the same way)
};

void HarmonyFamily::body_text(std::string_view text) {
  if (text.empty()) return;
  if (route_ != Route::kArgs) {
    bool& earlier = route_ == Route::kContent ? content_message_ : reasoning_message_;
    if (!body_started_ && earlier) c_.emit(route_, "\n");
    earlier = true;
  }
  body_started_ = true;
  c_.emit(route_, text);
}

bool HarmonyFamily::hm_header() {
  if (c_.at("<|start|>") == Tri::kYes && c_.pos == c_.cand) {
    c_.pos += 9;
    c_.mark = c_.pos;
  } else if (c_.pos == c_.cand) {
    c_.mark = c_.pos;
  }
  MarkerSet::Hit hit = c_.search(header_markers_);
  if (hit.kind == MarkerSet::Hit::kFound && hit.tag == 2 && headerless_message(hit)) return true;
  if (hit.kind != MarkerSet::Hit::kFound || hit.tag != 1) {
    if (hit.kind != MarkerSet::Hit::kFound && !c_.eof) return false;
    // No <|message|>: the header is not a message; it stays text.
    c_.pos = hit.kind == MarkerSet::Hit::kFound ? hit.at : c_.buf.size();
    c_.fallback("malformed_message", "harmony header without <|message|>");
    return true;
  }
  std::string_view header = std::string_view(c_.buf).substr(c_.mark, hit.at - c_.mark);
  c_.pos = hit.at + hit.len;
  std::string recipient, channel;
  if (auto p = header.find("to="); p != std::string_view::npos) {
    std::string_view v = header.substr(p + 3);
    auto e = v.find_first_of(" \t\n<");
    recipient.assign(v.substr(0, e));
  }
  // The last channel names the message: a header restarted within itself
  // (`<|channel|>commentary to=assistant<|channel|>analysis<|message|>`) is the later one's.
  if (auto p = header.rfind("<|channel|>"); p != std::string_view::npos) {
    std::string_view v = trim_front(header.substr(p + 11));  // LLM-jp writes `<|channel|> final`
    auto e = v.find_first_of(" \t\n<");
    channel.assign(v.substr(0, e));
  }
  if (std::string unread = unread_header_words(header, !recipient.empty()); !unread.empty())
    c_.em.warn("malformed_message",
               "harmony header text '" + quoted_start(unread) + "' not read; left out",
               c_.abs(c_.mark));
  // The role (the header's first word, when it has one before <|channel|>) is the model's own.
  // A tool's reply (`functions.f to=assistant`) names the tool there: the model wrote what only
  // the tool can, and an assistant message has no place for the tool's name, so it is reported
  // too (SGLang reads the reply's text as content, which it stays).
  const std::string_view head = trim_front(header);
  if (const std::string_view role = head.substr(0, head.find_first_of(" \t\r\n<"));
      !role.empty() && !role.starts_with("to=") && role != "assistant")
    c_.em.warn("malformed_message",
               "harmony header role '" + quoted_start(role) + "' is not assistant" +
                   (recipient == "assistant" ? " (a tool's reply the model wrote)" : "") +
                   "; read as assistant",
               c_.abs(c_.mark));
  c_.cand = kNone;
  body_started_ = false;
  // A message to the assistant is not a call (a tool's reply, or a header addressed back to
  // the model): it goes where its channel says.
  if (recipient == "assistant") recipient.clear();
  std::string name = recipient;
  if (name.starts_with("functions.")) name.erase(0, 10);
  if (!recipient.empty() && !c_.valid_name(name)) {
    c_.em.warn("not_a_call",
               "harmony recipient '" + quoted_start(recipient) +
                   "' is not a function name; body kept as content",
               c_.abs(c_.mark));
    route_ = Route::kContent;
  } else if (!recipient.empty()) {
    c_.open_call("", name);
    route_ = Route::kArgs;
  } else if (channel == "analysis") {
    route_ = Route::kReasoning;
  } else {
    route_ = Route::kContent;
  }
  // Harmony's channels are analysis, commentary and final; a message on any other (`fnal`) is
  // read as if on commentary (content, or the call its recipient names), which a warning says.
  if (!channel.empty() && channel != "analysis" && channel != "commentary" && channel != "final")
    c_.em.warn("malformed_message",
               "harmony channel '" + quoted_start(channel) +
                   "' is not analysis, commentary or final; read as commentary",
               c_.abs(c_.mark));
  go(St::kBody);
  return true;
}

// A plain header word: a name's characters, `+` and `/` (`assistant`, `functions.f`,
// `commentary`, `json`); markup written into a word makes it none.
static bool is_header_word(std::string_view word) {
  return std::all_of(word.begin(), word.end(),
                     [](char ch) { return is_name_char(ch) || ch == '+' || ch == '/'; });
}

std::string HarmonyFamily::unread_header_words(std::string_view header, bool to_recipient) {
  std::string unread;
  // Per segment (split at the tokens): how many plain words it may hold.
  // The role before the first <|channel|>, unless the header begins with its recipient (the
  // prompt wrote `<|start|>assistant`).
  std::size_t allowed = trim_front(header).starts_with("to=") ? 0 : 1;
  bool restarted = false;
  // The first recipient is the message's; another (`to=functions.f to=functions.g`) is reported.
  std::string_view recipient;
  // The content type or format read so far: a later one (`<|constrain|>x<|channel|>commentary
  // json`) is the header's, and this one is reported.
  std::string_view format;
  bool after_constrain = false;  // the segment follows <|constrain|> (its word is a format)
  while (true) {
    const std::size_t channel = header.find("<|channel|>");
    const std::size_t constrain = header.find("<|constrain|>");
    const std::size_t cut = std::min(channel, constrain);
    std::string_view segment = header.substr(0, cut);
    std::size_t words = 0;
    // The content type is the header's last word: one in its slot before this segment's
    // recipient (`commentary X to=functions.f`) is no content type, and is reported once the
    // recipient shows it.
    std::string_view content_type;
    // gpt-oss restarts a header after a recipient (`commentary to=assistant<|channel|>..`).
    const bool restart_after_recipient = restarted && segment.find("to=") != std::string_view::npos;
    bool glued = false;  // the word follows a recipient without a space (`to=functions.f<x`)
    while (true) {
      segment = trim_front(segment);
      if (segment.empty()) break;
      // A word ends at whitespace, or where a '<' glues markup to it (`assistant<|chanXnel|>`).
      const std::size_t e =
          std::min({segment.find_first_of(" \t\r\n"), segment.find('<', 1), segment.size()});
      const std::string_view word = segment.substr(0, e);
      segment.remove_prefix(e);
      if (std::exchange(glued, false)) {
        append_word(unread, word);  // markup glued to the recipient is no field's
        continue;
      }
      if (word.starts_with("to=") && word.size() > 3) {
        if (recipient.empty()) recipient = word;
        if (word != recipient) append_word(unread, word);
        if (!content_type.empty()) {
          append_word(unread, content_type);
          if (format.data() == content_type.data()) format = {};
          content_type = {};
          --words;
        }
        // It ends at a '<' (`to=functions.f<x`): what is glued to it is a word of its own.
        glued = !segment.empty() && !is_ws(segment.front());
        continue;
      }
      if (restart_after_recipient && words == 0 &&
          (word == "analysis" || word == "commentary" || word == "final")) {
        ++words;  // a known channel the header then restarts: the model's own repair
        continue;
      }
      // A word in a field's slot is read only when it is a plain word: one with markup written
      // into it (`<|constXions.f`, `jsoX|>json`) is no role, channel or content type. A content
      // type is read only when it is one gpt-oss writes: `json` (its template's, for functions)
      // or `code` (its built-in tools'); another one is no message field's, and is reported.
      const bool format_slot = ++words == 2 || after_constrain;
      if (words <= allowed && is_header_word(word) &&
          (!format_slot || word == "json" || word == "code")) {
        if (words == 2) content_type = word;
        if (format_slot) {
          if (!format.empty()) append_word(unread, format);
          format = word;
        }
        continue;
      }
      append_word(unread, word);
    }
    if (cut == std::string_view::npos) return unread;
    // A channel name and one content type after <|channel|>; one format after <|constrain|>.
    // (the content type stands after the channel only where no <|constrain|> gives it, and
    // after the last <|constrain|> only). A channel a later <|channel|> restarts is not read:
    // its words are reported, but for a channel name (gpt-oss writes
    // `commentary to=assistant<|channel|>analysis`).
    restarted = cut == channel && header.find("<|channel|>", cut + 11) != std::string_view::npos;
    const bool constrained_later =
        header.find("<|constrain|>", cut == channel ? cut : cut + 13) != std::string_view::npos;
    allowed = restarted                                              ? 0
              : cut == channel && to_recipient && !constrained_later ? 2
              : cut == constrain && constrained_later                ? 0
                                                                     : 1;
    after_constrain = cut == constrain;
    header.remove_prefix(cut + (cut == channel ? 11 : 13));
  }
}

// A message whose header lacks <|message|> and which ends at an end marker
// (`<|channel|>commentary Hello<|end|>`): the word after the last <|channel|> is its channel and
// the text after it the message, as openai/harmony's non-strict parser reads it, with a
// malformed_message warning. A header with no channel stays text (hm_header's fallback).
bool HarmonyFamily::headerless_message(const MarkerSet::Hit& end) {
  std::string_view marker = std::string_view(c_.buf).substr(end.at, end.len);
  if (marker == "<|start|>") return false;
  std::string_view header = std::string_view(c_.buf).substr(c_.mark, end.at - c_.mark);
  auto p = header.rfind("<|channel|>");
  if (p == std::string_view::npos) return false;
  std::string_view rest = trim_front(header.substr(p + 11));
  auto e = rest.find_first_of(" \t\n");
  std::string_view channel = rest.substr(0, e);
  std::string_view body = e == std::string_view::npos ? std::string_view() : rest.substr(e + 1);
  // The channel is named, and where its text goes: a word the model wrote where the channel
  // stands is read as one.
  route_ = channel == "analysis" ? Route::kReasoning : Route::kContent;
  c_.em.warn("malformed_message",
             "harmony header without <|message|>; read as a message on channel '" +
                 quoted_start(channel) + "' (" +
                 (route_ == Route::kReasoning ? "reasoning" : "content") + ")",
             c_.abs(c_.mark));
  c_.cand = kNone;
  body_started_ = false;
  body_text(body);
  c_.pos = end.at + end.len;
  c_.back_to_text();
  go(St::kAfter);
  return true;
}

bool HarmonyFamily::hm_body() {
  MarkerSet::Hit hit = c_.search(body_markers_);
  if (hit.kind != MarkerSet::Hit::kFound) {
    std::size_t end = c_.emit_end(hit.at);
    if (end > c_.pos) body_text(std::string_view(c_.buf).substr(c_.pos, end - c_.pos));
    c_.pos = end;
    if (!c_.eof) return false;
  } else {
    if (hit.at > c_.pos) body_text(std::string_view(c_.buf).substr(c_.pos, hit.at - c_.pos));
    c_.pos = hit.at + (hit.tag == 1 ? hit.len : 0);
  }
  if (route_ == Route::kArgs) c_.close_call();
  c_.back_to_text();
  if (hit.kind == MarkerSet::Hit::kFound && hit.tag == 1) go(St::kAfter);
  return true;
}

// A word directly before <|channel|> after a message's end is the next header's role, its
// <|start|> lost (gpt-oss writing `<|call|>commentary<|channel|>commentary to=...`): it is read
// with the header, as `<|start|>assistant` is, not as content. Anything else is text.
bool HarmonyFamily::hm_after() {
  constexpr std::size_t kMaxRole = 32;
  std::size_t p = c_.pos;
  while (p < c_.buf.size() && p - c_.pos < kMaxRole && is_name_char(c_.buf[p])) ++p;
  if (p == c_.buf.size() && !c_.eof) return false;
  if (p > c_.pos) {
    const std::size_t start = c_.pos;
    c_.pos = p;
    Tri t = c_.at("<|channel|>");
    c_.pos = start;
    if (t == Tri::kMore) return false;
    if (t == Tri::kYes) {
      c_.cand = start;
      go(St::kHeader);
      return true;
    }
    // A word directly before the next message's <|start|> is a header's residue (gpt-oss
    // writing `<|call|>commentary<|start|>assistant..`, as SGLang's harmony tests show): not
    // content; the warning keeps it.
    c_.pos = p;
    t = c_.at("<|start|>");
    c_.pos = start;
    if (t == Tri::kMore) return false;
    if (t == Tri::kYes) {
      c_.em.warn("malformed_message",
                 "'" + std::string(c_.bytes(start, p)) +
                     "' between a message's end and the next <|start|> is header residue, not "
                     "content",
                 c_.abs(start));
      c_.pos = p;
      c_.back_to_text();
      return true;
    }
  }
  c_.back_to_text();
  return true;
}

}  // namespace

std::unique_ptr<Family> make_harmony_family(Core& core) {
  return std::make_unique<HarmonyFamily>(core);
}

}  // namespace chatwire::parse
