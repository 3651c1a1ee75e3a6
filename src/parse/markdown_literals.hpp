// Where Markdown makes text literal: fenced code blocks (a line of three or more ``` or ~~~, up
// to three spaces in, opens one; a line of at least as many of the same character with nothing
// after it closes it), inline code spans (a backtick run opens one, a run of the same width
// closes it, across lines) and blockquote lines (first non-blank character '>').
//
// A model that explains its own call syntax writes the call markers inside such spans, and they
// are text. DeepSeek V4 does (Dialect::markdown_literals): SGLang's V4 detector blanks these
// spans before it looks for a call, and so does chatwire, as the content streams: the tracker
// is fed the content once, in order, and says whether a marker found next would be inside one.
// Quotes are not spans here: an apostrophe left open would hide every later call.
#pragma once

#include <string_view>

namespace chatwire::parse {

class MarkdownLiterals {
 public:
  void feed(std::string_view s) {
    for (char ch : s) step(ch);
  }
  // Whether a marker whose first byte is `next`, written right after the content fed so far, is
  // inside a literal span (the tracker itself does not move: the marker is fed if it is text).
  bool masks(char next) const {
    MarkdownLiterals probe = *this;
    probe.step(next);
    return probe.line_literal_ || probe.ticks_ > 0;
  }

 private:
  enum class Line { kLead, kFenceToken, kBody };

  void step(char ch) {
    if (ch == '\n') {
      end_line();
      return;
    }
    switch (line_) {
      case Line::kLead:
        if (ch == ' ') {
          ++lead_spaces_;
          return;
        }
        if (ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f') {
          lead_other_ = true;
          return;
        }
        if ((ch == '`' || ch == '~') && ticks_ == 0 && !lead_other_ && lead_spaces_ <= 3) {
          line_ = Line::kFenceToken;
          token_char_ = ch;
          token_len_ = 1;
          return;
        }
        begin_body(ch == '>' && ticks_ == 0);
        body(ch);
        return;
      case Line::kFenceToken:
        if (ch == token_char_) {
          ++token_len_;
          return;
        }
        end_token();
        body(ch);
        return;
      case Line::kBody:
        body(ch);
        return;
    }
  }

  // The line's first non-blank character decides: inside an open fence or a blockquote, the
  // whole line is literal.
  void begin_body(bool blockquote) {
    line_ = Line::kBody;
    line_literal_ = fence_len_ > 0 || blockquote;
  }

  // The run of ` or ~ that began the line ended: three or more make it a fence line.
  void end_token() {
    if (token_len_ >= 3) {
      line_ = Line::kBody;
      line_literal_ = true;
      fence_line_ = true;
      if (fence_len_ == 0) {  // opens a fence; a fence line inside one may close it at its end
        fence_char_ = token_char_;
        fence_len_ = token_len_;
        opened_here_ = true;
      }
      return;
    }
    begin_body(false);
    if (!line_literal_ && token_char_ == '`') run_ = token_len_;
  }

  void body(char ch) {
    if (line_literal_) {
      if (fence_line_ && ch != ' ' && ch != '\t' && ch != '\r') suffix_blank_ = false;
      return;
    }
    if (ch == '`') {
      ++run_;
      return;
    }
    end_run();
  }

  void end_run() {
    if (run_ == 0) return;
    if (ticks_ == 0)
      ticks_ = run_;
    else if (ticks_ == run_)
      ticks_ = 0;
    run_ = 0;
  }

  void end_line() {
    if (line_ == Line::kFenceToken) end_token();
    if (line_ == Line::kLead) begin_body(false);
    end_run();
    if (fence_line_ && !opened_here_ && token_char_ == fence_char_ && token_len_ >= fence_len_ &&
        suffix_blank_)
      fence_len_ = 0;
    line_ = Line::kLead;
    lead_spaces_ = 0;
    lead_other_ = false;
    line_literal_ = fence_line_ = opened_here_ = false;
    suffix_blank_ = true;
    token_len_ = 0;
  }

  Line line_ = Line::kLead;
  std::size_t lead_spaces_ = 0;
  bool lead_other_ = false;    // a blank other than a space before the first character
  bool line_literal_ = false;  // the current line is literal throughout
  bool fence_line_ = false;    // ... because it is a fence line
  bool opened_here_ = false;   // ... which opened the fence
  bool suffix_blank_ = true;   // nothing but blanks after the fence line's run
  char token_char_ = 0;        // the line's leading run of ` or ~
  std::size_t token_len_ = 0;
  char fence_char_ = 0;  // the open fence (fence_len_ 0: none)
  std::size_t fence_len_ = 0;
  std::size_t run_ = 0;    // backticks just read in a line that is not literal
  std::size_t ticks_ = 0;  // the open code span's run width (0: none)
};

}  // namespace chatwire::parse
