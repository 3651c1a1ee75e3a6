// The pythonic family: Python call lists (`[f(a=1)]`, `f(a=1)\ng(b=2)`), bare or inside
// markers, and key-value calls (`call:f{k:<q>v<q>}`, Gemma 4), which share its states.
#include "parse/engine.hpp"

namespace chatwire::parse {

namespace {

class PythonicFamily final : public Family {
 public:
  using Family::Family;

  void add_triggers(std::vector<std::string_view>& triggers) const override {
    for (const auto& s : c_.d.pythonic_sections) triggers.push_back(s.open);
    for (const auto& s : c_.d.loose_sections) triggers.push_back(s.open);
  }
  void on_marker(std::size_t index, std::size_t len) override {
    if (index >= c_.d.pythonic_sections.size()) {
      // A key-value call written without its markers (Dialect::loose_sections).
      c_.pos += len;
      c_.mark = c_.pos;
      scan_ = c_.mark;
      depth_ = 0;
      go(St::kLooseKeyValue);
      return;
    }
    close_ = c_.d.pythonic_sections[index].close;
    c_.pos += len;
    c_.mark = c_.pos;
    go(St::kWrapped);
  }
  void on_bare() override { start_py_bare(); }
  void on_line() override {
    literal_.reset();
    checked_ = false;
    call_len_ = kNone;
    go(St::kLine);
    c_.scan = c_.cand;  // the name's scan resumes here (shifted with the buffer, as cand is)
  }

  bool step() override {
    switch (st_) {
      case St::kBare:
        return py_bare();
      case St::kWrapped:
        return py_wrapped();
      case St::kLooseKeyValue:
        return loose_key_value();
      case St::kLine:
        return py_line();
    }
    return false;
  }

 private:
  enum class St {
    kBare,           // `[f(a=1), ...]` without a marker, held until the list closes
    kWrapped,        // the calls between the section's markers
    kLooseKeyValue,  // `name{k:v}` after a loose opener (`call:`), held until its brace closes
    kLine,  // `name(k=v)` alone on its line (Dialect::pythonic_lines), held to the line's end
  };

  void go(St state) {
    st_ = state;
    c_.enter(this);
  }

  void start_py_bare();
  // Bare `[f(a=1), ...]`: held until the list closes (strings and brackets tracked), parsed once.
  bool py_bare();
  bool py_emit(std::string_view body, bool unterminated, bool in_section = false);
  bool py_wrapped();
  bool loose_key_value();
  bool py_line();
  BareAsString strings_by_schema() const;

  St st_ = St::kBare;
  std::string_view close_;        // the section's close marker ("" = to the end of the output)
  PythonLiteralScanner literal_;  // the bare list's end, or a call line's call's
  bool checked_ = false;          // the list starts like a call (`[name(`)
  std::size_t call_len_ = kNone;  // a call line's call, from cand, once its parenthesis closed
  // A loose key-value call: where its name or brace scan resumes, and the brace depth.
  std::size_t scan_ = 0;
  int depth_ = 0;
};

void PythonicFamily::start_py_bare() {
  literal_.reset();
  checked_ = false;
  go(St::kBare);
}

bool PythonicFamily::py_bare() {
  if (!checked_) {
    // Cheap early exit for prose: `[` must be followed by a name and `(`.
    std::size_t p = c_.cand + 1;
    while (p < c_.buf.size() && is_ws(c_.buf[p])) ++p;
    std::size_t name_start = p;
    while (p < c_.buf.size() && (std::isalnum(static_cast<unsigned char>(c_.buf[p])) ||
                                 c_.buf[p] == '_' || c_.buf[p] == '.'))
      ++p;
    if (p == c_.buf.size() && !c_.eof) return false;
    bool ok = p > name_start && !std::isdigit(static_cast<unsigned char>(c_.buf[name_start]));
    while (ok && p < c_.buf.size() && is_ws(c_.buf[p])) ++p;
    if (ok && p == c_.buf.size() && !c_.eof) return false;
    if (!ok || p == c_.buf.size() || c_.buf[p] != '(') {
      c_.pos = c_.cand;
      c_.cand = kNone;
      c_.content_start = false;
      c_.emit(Route::kContent, std::string_view(c_.buf).substr(c_.pos, 1));  // the '[' is text
      ++c_.pos;
      c_.enter(nullptr);
      return true;
    }
    checked_ = true;
  }
  const std::size_t end = literal_.feed(c_.buf, c_.pos);
  if (end != std::string_view::npos) {
    c_.pos = end;
    return py_emit(std::string_view(c_.buf).substr(c_.cand, c_.pos - c_.cand), false);
  }
  c_.pos = c_.buf.size();
  if (!c_.eof) return false;
  return py_emit(std::string_view(c_.buf).substr(c_.cand, c_.pos - c_.cand), true);
}

bool PythonicFamily::py_emit(std::string_view body, bool unterminated, bool in_section) {
  std::vector<PyCall> calls;
  std::string error;
  if (c_.d.syntax == CallSyntax::kKeyValue) {
    PyCall call;
    if (!parse_key_value_call(body, c_.d.kv_prefix, c_.d.kv_quote, call, error,
                              c_.opt.max_json_depth, strings_by_schema())) {
      c_.fallback("not_a_call", "not a key-value call: " + error);
      return true;
    }
    calls.push_back(std::move(call));
  } else if (!parse_python_calls(body, calls, error, c_.opt.max_json_depth)) {
    // Inside its markers, a JSON list of call objects is a call list too (LFM2 with JSON tools).
    std::string repeated;
    if (!in_section || !parse_json_call_list(body, calls, c_.opt.max_json_depth, &repeated)) {
      c_.fallback("not_a_call", "not a Python call list: " + error);
      return true;
    }
    error.clear();
    if (!repeated.empty())
      c_.em.warn("malformed_call",
                 "key \"" + quoted_start(repeated) +
                     "\" given twice in a call object; the last value is used, the other left out",
                 c_.abs(c_.cand == kNone ? c_.pos : c_.cand));
  }
  if (unterminated) c_.truncated("a call list");
  if (!error.empty())
    c_.em.warn("invalid_call", "a call was dropped: " + error,
               c_.abs(c_.cand == kNone ? c_.pos : c_.cand));
  c_.emit_python_calls(calls);
  return true;
}

// A bare value (`zipcode:12345`, `label:null`) of a parameter the schema types as a string only is
// that string, as its text (vLLM's Gemma 4 parser types bare values by the schema).
BareAsString PythonicFamily::strings_by_schema() const {
  return [this](std::string_view function, std::string_view argument, const Json& literal) {
    const ParamTypes types = param_types(c_.tools, function, argument);
    return types.string_decides() && !(literal.is_null() && types.null);
  };
}

bool PythonicFamily::py_wrapped() {
  if (close_.empty()) {
    if (!c_.eof) return false;
    c_.pos = c_.buf.size();
    return py_emit(std::string_view(c_.buf).substr(c_.mark), false, true);
  }
  MarkerSet close;
  close.add(close_, 1);
  MarkerSet::Hit hit = c_.search(close);
  if (hit.kind != MarkerSet::Hit::kFound) {
    if (!c_.eof) return false;
    c_.pos = c_.buf.size();
    // The section was left open: framing tokens that end the output (Gemma 4's <turn|>) are not
    // part of the calls.
    std::string_view body = std::string_view(c_.buf).substr(c_.mark);
    for (bool trimmed = true; trimmed;) {
      trimmed = false;
      while (!body.empty() && is_ws(body.back())) body.remove_suffix(1);
      for (const auto* tokens : {&c_.d.dropped, &c_.d.end_tokens})
        for (std::string_view token : *tokens)
          if (!token.empty() && body.ends_with(token)) {
            body.remove_suffix(token.size());
            trimmed = true;
          }
    }
    return py_emit(body, true, true);
  }
  std::string_view body = std::string_view(c_.buf).substr(c_.mark, hit.at - c_.mark);
  c_.pos = hit.at + hit.len;
  return py_emit(body, false, true);
}

// Dialect::pythonic_lines: a line that is `name(..)` and nothing else (whitespace aside) is the
// call, parsed once as a whole, for a name the request lists; any other line is text, quietly,
// as prose that starts with a word is. Resumed at c_.scan, which moves with the buffer.
bool PythonicFamily::py_line() {
  const std::string_view buf(c_.buf);
  constexpr std::size_t kLongestName = 256;  // a longer word is no function name
  if (!checked_) {
    std::size_t p = c_.scan;
    while (p < buf.size() && p - c_.cand <= kLongestName && is_name_char(buf[p])) ++p;
    c_.scan = p;
    if (p == buf.size() && !c_.eof) return false;
    if (p == buf.size() || buf[p] != '(') {
      c_.fallback_quietly();
      return true;
    }
    checked_ = true;
  }
  if (call_len_ == kNone) {
    // One call per line (as vLLM's granite_pythonic parser reads them): the parentheses close
    // before the line ends, so a line that leaves them open is text once it ends, and no
    // candidate reads past its own line.
    const std::size_t newline = buf.find('\n', c_.scan);
    const std::size_t end = literal_.feed(
        buf.substr(0, newline == std::string_view::npos ? buf.size() : newline), c_.scan);
    if (end == std::string_view::npos) {
      if (newline == std::string_view::npos && !c_.eof) {
        c_.scan = buf.size();
        return false;
      }
      c_.fallback_quietly();  // the line (or the output) ended inside the parentheses
      return true;
    }
    call_len_ = end - c_.cand;
    c_.scan = end;
  }
  std::size_t p = c_.scan;
  while (p < buf.size() && (buf[p] == ' ' || buf[p] == '\t' || buf[p] == '\r')) ++p;
  c_.scan = p;
  if (p == buf.size() && !c_.eof) return false;
  std::vector<PyCall> calls;
  std::string error;
  if ((p < buf.size() && buf[p] != '\n') ||
      !parse_python_calls(buf.substr(c_.cand, call_len_), calls, error, c_.opt.max_json_depth) ||
      !error.empty() || calls.size() != 1 || !c_.listed(calls.front().name)) {
    c_.fallback_quietly();
    return true;
  }
  c_.pos = c_.cand + call_len_;
  c_.emit_python_calls(calls);
  return true;
}

// `call:name{k:<q>v<q>}` outside the call markers (vLLM's Gemma 4 parser reads these outside
// strict mode): a call only as a whole, for a listed name; anything else is text, quietly.
bool PythonicFamily::loose_key_value() {
  const std::string_view buf(c_.buf);
  const std::string_view quote = c_.d.kv_quote;
  if (depth_ == 0) {
    std::size_t p = scan_;  // the name, resumed where the last chunk ended
    while (p < buf.size() && is_name_char(buf[p])) ++p;
    if (p == buf.size() && !c_.eof) {
      scan_ = p;
      return false;
    }
    if (p == c_.mark || p == buf.size() || buf[p] != '{') {
      c_.fallback_quietly();
      return true;
    }
    scan_ = p;
  }
  // The braces, with quoted strings skipped; resumed where the last chunk ended.
  std::size_t i = scan_;
  while (i < buf.size()) {
    if (!quote.empty() && buf[i] == quote[0]) {
      if (buf.size() - i < quote.size() && !c_.eof && quote.starts_with(buf.substr(i))) break;
      if (buf.compare(i, quote.size(), quote) == 0) {
        const std::size_t end = buf.find(quote, i + quote.size());
        if (end == std::string_view::npos) break;
        i = end + quote.size();
        continue;
      }
    }
    const char ch = buf[i++];
    if (ch == '{' || ch == '[') {
      ++depth_;
    } else if ((ch == '}' || ch == ']') && depth_ > 0 && --depth_ == 0) {
      PyCall call;
      std::string error;
      const std::string text = std::string(c_.d.kv_prefix).append(buf.substr(c_.mark, i - c_.mark));
      if (!parse_key_value_call(text, c_.d.kv_prefix, quote, call, error, c_.opt.max_json_depth,
                                strings_by_schema()) ||
          !c_.listed(call.name)) {
        c_.fallback_quietly();
        return true;
      }
      c_.pos = i;
      c_.emit_python_calls({call});
      return true;
    }
  }
  scan_ = i;
  if (!c_.eof) return false;
  c_.fallback_quietly();
  return true;
}

}  // namespace

std::unique_ptr<Family> make_pythonic_family(Core& core) {
  return std::make_unique<PythonicFamily>(core);
}

}  // namespace chatwire::parse
