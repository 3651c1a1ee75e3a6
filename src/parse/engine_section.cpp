// The state before, between and after the calls of a section (header + JSON and XML families).
#include "parse/engine_section.hpp"

namespace chatwire::parse {

bool SectionFamily::between_calls() {
  const std::size_t before_ws = c_.pos;
  auto need_more = [&] {
    c_.pos = before_ws;
    return false;
  };
  std::size_t p = c_.pos;
  while (p < c_.buf.size() && is_ws(c_.buf[p])) ++p;
  if (p == c_.buf.size() && !c_.eof) return false;
  c_.pos = p;
  if (c_.pos == c_.buf.size()) {
    if (in_section_) c_.truncated("a tool-call section");
    end_block_or_fallback();
    return true;
  }
  Tri t = c_.at(c_.d.section_open);
  if (t == Tri::kMore) return need_more();
  if (t == Tri::kYes && !in_section_) {
    c_.pos += c_.d.section_open.size();
    in_section_ = true;
    noise_from_ = kNone;
    return true;
  }
  t = c_.take(c_.d.call_open);
  if (t == Tri::kMore) return need_more();
  if (t == Tri::kYes) {
    // The call's text, should it start no call, begins with the tokens framing it (step3's
    // `<tool_call_begin>function<tool_sep>`).
    call_at_ = noise_from_ != kNone ? noise_from_ : before_ws;
    noise_from_ = kNone;
    begin_call();
    return true;
  }
  if (!in_section_ && c_.committed && !c_.d.section_close.empty()) {
    // The section's closer after calls whose opener is missing (Qwen3-Coder writing
    // `<function=f>...</function>` without `<tool_call>`): layout, not content.
    t = c_.take(c_.d.section_close);
    if (t == Tri::kMore) return need_more();
    if (t == Tri::kYes) {
      c_.em.warn("missing_marker",
                 "tool-call section closed without " + std::string(c_.d.section_open),
                 c_.abs(c_.pos - c_.d.section_close.size()));
      return true;
    }
  }
  if (!in_section_) {
    c_.pos = before_ws;  // what follows the call is text, with its layout
    end_block_or_fallback();
    return true;
  }
  t = c_.take(c_.d.section_close);
  if (t == Tri::kMore) return need_more();
  if (t == Tri::kYes) {
    end_block_or_fallback();
    return true;
  }
  t = take_json_call();
  if (t == Tri::kMore) return need_more();
  if (t == Tri::kYes) {
    noise_from_ = kNone;
    return true;
  }
  t = take_slipped_call_open();
  if (t == Tri::kMore) return need_more();
  if (t == Tri::kYes) {
    call_at_ = noise_from_ != kNone ? noise_from_ : before_ws;
    noise_from_ = kNone;
    begin_call();
    return true;
  }
  for (auto noise : c_.d.noise) {
    t = c_.take(noise);
    if (t == Tri::kMore) return need_more();
    if (t == Tri::kYes) {
      // The token that ends a call (Dialect::noise_call_end) belongs to it: a run of the tokens
      // framing what comes next starts after it; any other token starts one where none is open.
      if (noise == c_.d.noise_call_end)
        noise_from_ = c_.pos;
      else if (noise_from_ == kNone)
        noise_from_ = before_ws;
      return true;
    }
  }
  // A function-name line stands only after the tokens framing an entry (step3's
  // `function<tool_sep>name\n` before `<steptml:invoke`); anywhere else such a line is text.
  const std::string_view call_end = c_.d.noise_call_end;
  const bool after_call_end = !call_end.empty() && before_ws >= call_end.size() &&
                              c_.bytes(before_ws - call_end.size(), before_ws) == call_end;
  if (has_function_lines() && noise_from_ != kNone && !after_call_end) {
    t = skip_function_line();
    if (t == Tri::kMore) return need_more();
    if (t == Tri::kYes) return true;
  }
  // Text inside the section where a call should start (Kimi-K2 writing prose after the section
  // opener, Qwen3-Coder before its `<function=`, a step3 entry that is no call): when a call
  // marker follows before the section ends, the text is content (nothing the model wrote is
  // dropped), the markers are not, and the section goes on. An entry ended by the token that ends
  // a call (Dialect::noise_call_end) is such text through that token.
  if (section_text_end_.empty()) {
    section_text_end_.add(c_.d.call_open, 1);
    section_text_end_.add(c_.d.section_close, 2);
    if (!c_.d.noise_call_end.empty()) section_text_end_.add(c_.d.noise_call_end, 3);
    // Another section opener: the text is no section's (Qwen3-Coder's prose quoting
    // `<tool_call>` before writing one), and the section ends before it.
    if (!c_.d.section_open.empty() && c_.d.section_open != c_.d.call_open)
      section_text_end_.add(c_.d.section_open, 4);
  }
  // Looked for within a few KiB only: longer text is not noise before a call, and streamed
  // text is not held for it.
  constexpr std::size_t kMaxSectionText = 4096;
  // The search itself stays within that window (and a marker's length past it), so a section
  // opener repeated all through a long output costs the window each time, not the output.
  const std::size_t slack = std::max({c_.d.call_open.size(), c_.d.section_close.size(),
                                      c_.d.noise_call_end.size(), c_.d.section_open.size()});
  MarkerSet::Hit hit = c_.search_before(section_text_end_, c_.pos + kMaxSectionText + slack);
  const bool found = hit.kind == MarkerSet::Hit::kFound;
  const bool near = hit.at - c_.pos <= kMaxSectionText;
  if (!found && !c_.eof && near) return need_more();
  if (found && near && (hit.tag == 1 || hit.tag == 3)) {
    // The entry's text begins with the tokens framing it; the layout before them is not text.
    std::size_t from = noise_from_ != kNone ? noise_from_ : c_.pos;
    while (from < c_.pos && is_ws(c_.buf[from])) ++from;
    std::size_t end = hit.tag == 3 ? hit.at + c_.d.noise_call_end.size() : hit.at;
    if (hit.tag == 1) end = before_call_framing(from, end);
    while (end > from && is_ws(c_.buf[end - 1])) --end;  // layout before the call
    if (end > from) {
      c_.em.warn("malformed_call", "text inside the tool-call section, kept as content",
                 c_.abs(from));
      if (c_.committed) {
        c_.emit(c_.text_route(), c_.bytes(from, end));
      } else {
        c_.held_route = c_.text_route();
        c_.held_text.append(c_.bytes(from, end));
      }
    }
    c_.pos = hit.tag == 3 ? end : hit.at;
    // The call after it begins with the tokens framing it: its text, should it start no call.
    noise_from_ = hit.tag == 1 && end < hit.at ? end : kNone;
    return true;
  }
  if (found && hit.tag == 2)
    c_.em.warn("malformed_call", "unexpected text inside the tool-call section", c_.abs(c_.pos));
  else if (c_.committed)
    c_.em.warn("missing_marker", "tool-call section not closed", c_.abs(c_.pos));
  // Text, not a call, ends the section after its calls: it is content from where the tokens
  // before it began, with the whitespace before them (what follows the calls is text, with its
  // layout). Without a call, the whole block is text (end_block_or_fallback).
  if (c_.committed) c_.pos = noise_from_ != kNone ? noise_from_ : before_ws;
  noise_from_ = kNone;
  end_block_or_fallback();
  return true;
}

std::size_t SectionFamily::before_call_framing(std::size_t from, std::size_t end) {
  // The Dialect::noise tokens other than the one ending a call frame the call that follows, and
  // so does a function-name line right before the call marker after them (step3's
  // `<tool_call_begin>function<tool_sep>name\n`): markup, not the text's. Only that one line
  // is a name; a word before the tokens is the text's.
  auto framing_token_before = [&](std::size_t at) -> std::size_t {
    for (std::string_view noise : c_.d.noise)
      if (noise != c_.d.noise_call_end && at - from >= noise.size() &&
          c_.bytes(at - noise.size(), at) == noise)
        return noise.size();
    return 0;
  };
  auto before_layout = [&](std::size_t at) {
    while (at > from && is_ws(c_.buf[at - 1])) --at;
    return at;
  };
  std::size_t at = before_layout(end);
  std::size_t name = at;
  while (name > from && is_name_char(c_.buf[name - 1])) --name;
  if (has_function_lines() && name < at && framing_token_before(name)) {
    // Read as skip_function_line reads one: kept aside, checked against the call's name.
    hold_function_line(name, at);
    end = name;
  }
  while (true) {
    at = before_layout(end);
    const std::size_t n = framing_token_before(at);
    if (n == 0) return end;
    end = at - n;
  }
}

void SectionFamily::hold_function_line(std::size_t from, std::size_t to) {
  function_line_.assign(trim(c_.bytes(from, to)));
  function_line_at_ = c_.abs(from);
}

auto SectionFamily::skip_function_line() -> Tri {
  // One name, then the whitespace before the call marker.
  std::size_t q = c_.pos;
  while (q < c_.buf.size() && q - c_.pos < 256 && is_name_char(c_.buf[q])) ++q;
  if (q == c_.pos) return Tri::kNo;
  while (q < c_.buf.size() && q - c_.pos < 256 && is_ws(c_.buf[q])) ++q;
  if (q == c_.buf.size() && !c_.eof) return Tri::kMore;
  std::size_t save = c_.pos;
  c_.pos = q;
  Tri t = c_.at(c_.d.call_open);
  if (t == Tri::kNo) c_.pos = save;
  if (t == Tri::kYes) {
    hold_function_line(save, q);
  }
  return t;
}

void SectionFamily::not_a_call(std::string code, std::string why) {
  function_line_.clear();  // (it was this call's)
  if (!c_.committed || call_at_ == kNone || call_at_ > c_.pos) {
    c_.fallback(std::move(code), std::move(why));
    return;
  }
  // The calls before it stand; this marker and what was read after it are text.
  c_.em.warn(std::move(code), std::move(why), c_.abs(call_at_));
  c_.emit(Route::kContent, c_.bytes(call_at_, c_.pos));
  call_at_ = kNone;
  c_.back_to_text();
}

void SectionFamily::end_block_or_fallback() {
  if (c_.committed || c_.cand == kNone) {
    c_.end_block();
  } else {
    c_.fallback("not_a_call", "tool-call section without a call");
  }
}

}  // namespace chatwire::parse
