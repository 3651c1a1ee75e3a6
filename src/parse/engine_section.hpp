// What the header + JSON and XML families share: a call section (`<tool_calls>` ...
// `</tool_calls>`, optional) holding calls that each start with the call marker. The state before,
// between and after calls is read here; the family reads each call from its marker on.
#pragma once

#include "parse/engine.hpp"

namespace chatwire::parse {

class SectionFamily : public Family {
 public:
  using Family::Family;

  void add_triggers(std::vector<std::string_view>& triggers) const override {
    if (!c_.d.section_open.empty()) triggers.push_back(c_.d.section_open);
    if (!c_.d.call_open.empty()) triggers.push_back(c_.d.call_open);
  }
  void on_marker(std::size_t, std::size_t) override {
    in_section_ = false;
    function_line_.clear();
    go_between_calls();
  }

 protected:
  // Before a call, between calls, or after the last call of a block.
  // Whitespace after a call is layout only if another call follows: looks before consuming.
  bool between_calls();
  // The block ends; without a call it was text.
  void end_block_or_fallback();
  // A call marker that starts no call: before the block's first call the block is text
  // (Core::fallback); after one, the calls stand and this marker and the bytes read after it, up
  // to the cursor, are content (they were dropped before).
  void not_a_call(std::string code, std::string why);

  // Makes between_calls() the family's current state.
  virtual void go_between_calls() = 0;
  // The call marker was consumed: the call's name starts at the cursor.
  virtual void begin_call() = 0;
  // Whether a function-name line may stand before a call marker (step3's XML).
  virtual bool has_function_lines() const { return false; }
  // Inside a section, a call marker the model misspelt that the family repairs: kYes leaves the
  // cursor at the function name (begin_call follows), kNo where it was.
  virtual Tri take_slipped_call_open() { return Tri::kNo; }
  // Inside a section, a call written another way the family reads (a JSON call object where
  // an XML call stands): kYes leaves the cursor past the call, kNo where it was.
  virtual Tri take_json_call() { return Tri::kNo; }

  bool in_section_ = false;
  MarkerSet section_text_end_;  // what ends text inside a section: a call, the section's end
  // Where the run of Dialect::noise tokens before the cursor began, with the whitespace before
  // it (kNone: none since the last call or section marker): text that ends the section goes back
  // there, so the tokens that opened it (step3's `<tool_call_begin>` before an entry that is no
  // call) stay with it rather than being dropped as markup.
  std::size_t noise_from_ = kNone;
  // Where the call being read begins: its marker, or the noise tokens framing it.
  std::size_t call_at_ = kNone;
  // The function-name line before the call marker (step3), and where it stood: read, not kept;
  // a name that is not the call's is reported.
  std::string function_line_;
  std::size_t function_line_at_ = kNone;

 private:
  // A function-name line before the invoke (step3: `function<sep>name\n<steptml:invoke`): kYes
  // leaves the cursor at the call marker, kNo leaves it where it was.
  Tri skip_function_line();
  // Where text inside a section ends before a call marker at `end`: before the tokens framing
  // that call (step3's `<tool_call_begin>function<tool_sep>name\n`), not after them.
  // A function-name line among them is kept aside (function_line_) as skip_function_line keeps one.
  std::size_t before_call_framing(std::size_t from, std::size_t end);
  // Both read the same shape, a name then the whitespace before the call marker, one forward
  // as it streams in and one backward over text already read; both keep it aside here.
  void hold_function_line(std::size_t from, std::size_t to);
};

}  // namespace chatwire::parse
