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
  }
  void on_marker(std::size_t index, std::size_t len) override {
    close_ = c_.d.pythonic_sections[index].close;
    c_.pos += len;
    c_.mark = c_.pos;
    go(St::kWrapped);
  }
  void on_bare() override { start_py_bare(); }

  bool step() override {
    switch (st_) {
      case St::kBare:
        return py_bare();
      case St::kWrapped:
        return py_wrapped();
    }
    return false;
  }

 private:
  enum class St {
    kBare,     // `[f(a=1), ...]` without a marker, held until the list closes
    kWrapped,  // the calls between the section's markers
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

  St st_ = St::kBare;
  std::string_view close_;  // the section's close marker ("" = to the end of the output)
  // The bare list's lexer: bracket depth, the open quote, an escape inside it.
  int depth_ = 0;
  char quote_ = 0;
  bool escape_ = false;
  bool checked_ = false;  // the list starts like a call (`[name(`)
};

void PythonicFamily::start_py_bare() {
  depth_ = 0;
  quote_ = 0;
  escape_ = false;
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
  while (c_.pos < c_.buf.size()) {
    char c = c_.buf[c_.pos++];
    if (quote_) {
      if (escape_)
        escape_ = false;
      else if (c == '\\')
        escape_ = true;
      else if (c == quote_)
        quote_ = 0;
      continue;
    }
    if (c == '\'' || c == '"')
      quote_ = c;
    else if (c == '[' || c == '(' || c == '{')
      ++depth_;
    else if ((c == ']' || c == ')' || c == '}') && --depth_ == 0) {
      return py_emit(std::string_view(c_.buf).substr(c_.cand, c_.pos - c_.cand), false);
    }
  }
  if (!c_.eof) return false;
  return py_emit(std::string_view(c_.buf).substr(c_.cand, c_.pos - c_.cand), true);
}

bool PythonicFamily::py_emit(std::string_view body, bool unterminated, bool in_section) {
  std::vector<PyCall> calls;
  std::string error;
  if (c_.d.syntax == CallSyntax::kKeyValue) {
    PyCall call;
    if (!parse_key_value_call(body, c_.d.kv_prefix, c_.d.kv_quote, call, error,
                              c_.opt.max_json_depth)) {
      c_.fallback("not_a_call", "not a key-value call: " + error);
      return true;
    }
    calls.push_back(std::move(call));
  } else if (!parse_python_calls(body, calls, error, c_.opt.max_json_depth)) {
    // Inside its markers, a JSON list of call objects is a call list too (LFM2 with JSON tools).
    if (!in_section || !parse_json_call_list(body, calls, c_.opt.max_json_depth)) {
      c_.fallback("not_a_call", "not a Python call list: " + error);
      return true;
    }
    error.clear();
  }
  if (unterminated) c_.truncated("a call list");
  if (!error.empty())
    c_.em.warn("invalid_call", "a call was dropped: " + error,
               c_.abs(c_.cand == kNone ? c_.pos : c_.cand));
  c_.emit_python_calls(calls);
  return true;
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
    return py_emit(std::string_view(c_.buf).substr(c_.mark), true, true);
  }
  std::string_view body = std::string_view(c_.buf).substr(c_.mark, hit.at - c_.mark);
  c_.pos = hit.at + hit.len;
  return py_emit(body, false, true);
}

}  // namespace

std::unique_ptr<Family> make_pythonic_family(Core& core) {
  return std::make_unique<PythonicFamily>(core);
}

}  // namespace chatwire::parse
