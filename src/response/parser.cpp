// The streaming region parser (transformers' ResponseParser): one region open at a time; in the
// implicit (or null) region every field's open and the implicit field's close are watched, in an
// explicit region only its own close. Bytes that may still become a delimiter are held (PCRE2's
// hard partial match plays the part of the `regex` module's partial=True), so any chunking of
// the same output gives the same events' concatenation and the same message.
#include <algorithm>

#include "response/internal.hpp"
#include "util/utf8.hpp"

namespace chatwire::response {

struct Parser::State {
  std::shared_ptr<const Template::Impl> t;
  ToolParams tools;
  std::string buffer;   // everything fed since the prefix's anchor (positions index it)
  std::size_t pos = 0;  // bytes before pos are routed
  std::string pending;  // an incomplete UTF-8 sequence at the end of the last chunk
  Json output;
  std::optional<std::size_t> current;  // the open field; nullopt = the null sink
  std::vector<std::pair<std::string, std::string>> captures;
  std::string body;
  bool opened = false;
  bool finalized = false;
  std::optional<Error> failed;  // an error poisons the parser (later calls repeat it)
  std::vector<Event> initial;

  const Field& field(std::size_t k) const { return t->fields[k]; }

  void reset_to_implicit() {
    current = t->implicit;
    captures.clear();
    body.clear();
    opened = false;
  }

  void accumulate(std::vector<Event>& events, std::string_view text) {
    if (text.empty() || !current) return;
    const Field& f = field(*current);
    if (!opened) {
      events.push_back(Event{Event::Kind::kOpen, f.name, {}, false, {}});
      opened = true;
    }
    body.append(text);
    events.push_back(
        Event{Event::Kind::kChunk, f.name, std::string(text), !streamable(f.content.kind), {}});
  }

  void open_explicit(std::vector<Event>& events, std::size_t k, Regex::Match& m) {
    current = k;
    captures = std::move(m.named);
    body.clear();
    opened = true;
    events.push_back(Event{Event::Kind::kOpen, field(k).name, {}, false, {}});
  }

  Result<bool> close_current(std::vector<Event>& events) {
    if (!current || !opened) {
      reset_to_implicit();
      return true;
    }
    const Field& f = field(*current);
    auto value = process_field(f, body, captures, t->limits);
    if (!value) return value.error();
    if (!tools.empty()) {
      auto ok = coerce_tool_calls(*value, tools);
      if (!ok) return ok.error();
    }
    const std::string where = "fields." + f.name;
    if (f.join) {
      if (!value->is_string())
        return Error{"ValueError",
                     "Field '" + f.name +
                         "': 'join' requires each match to parse to a string, got " +
                         py_type_name(*value) + ".",
                     0, 0, where};
      auto it = output.find(f.name);
      if (it == output.end() || it->is_null()) {
        output[f.name] = *value;
      } else if (!it->is_string()) {
        return Error{
            "TypeError",
            "can only concatenate " + py_type_name(*it) + " (not \"str\") to " + py_type_name(*it),
            0, 0, where};
      } else {
        *it = it->get<std::string>() + *f.join + value->get<std::string>();
      }
    } else if (f.repeats) {
      auto it = output.find(f.name);
      if (it == output.end()) {
        output[f.name] = Json::array({*value});
      } else if (!it->is_array()) {
        return Error{"AttributeError",
                     "'" + py_type_name(*it) + "' object has no attribute 'append'", 0, 0, where};
      } else {
        it->push_back(*value);
      }
    } else {
      output[f.name] = *value;
    }
    events.push_back(Event{Event::Kind::kClose, f.name, {}, false, std::move(*value)});
    reset_to_implicit();
    return true;
  }

  struct Watched {
    bool open;
    std::size_t field;
  };

  std::vector<Watched> watchlist() const {
    std::vector<Watched> watch;
    if (current && current != t->implicit) {
      if (field(*current).close) watch.push_back({false, *current});
      return watch;
    }
    for (std::size_t k = 0; k < t->fields.size(); ++k)
      if (t->fields[k].open) watch.push_back({true, k});
    if (t->implicit && field(*t->implicit).close) watch.push_back({false, *t->implicit});
    return watch;
  }

  bool can_grow(const Delimiter& d, const Regex::Match& m) const {
    if (m.end != buffer.size()) return false;
    if (m.start == m.end) return true;  // $ and \Z are real only at the end of the stream
    return !d.literal || d.can_extend;
  }

  struct Best {
    Watched w;
    Regex::Match m;
  };

  Result<bool> scan(const std::vector<Watched>& watch, bool eos, std::optional<Best>& best,
                    std::size_t& hold_start) const {
    hold_start = buffer.size();
    best.reset();
    for (const auto& w : watch) {
      const Field& f = field(w.field);
      const Delimiter& d = w.open ? *f.open : *f.close;
      auto m = d.re.search(buffer, pos, !eos);
      if (!m) return m.error();
      if (m->found == Regex::Found::kNone) continue;
      if (!eos && (m->found == Regex::Found::kPartial || can_grow(d, *m))) {
        hold_start = std::min(hold_start, m->start);
        continue;
      }
      // Earliest start, then longest, then opens before closes, then the field name.
      const auto key = [&](const Best& b) {
        return std::make_tuple(b.m.start, -static_cast<long long>(b.m.end - b.m.start),
                               b.w.open ? 0 : 1, std::string_view(field(b.w.field).name));
      };
      Best candidate{w, std::move(*m)};
      if (!best || key(candidate) < key(*best)) best = std::move(candidate);
    }
    if (best && best->m.start >= hold_start) best.reset();
    return true;
  }

  Result<bool> process(std::vector<Event>& events, bool eos) {
    std::size_t stalled = 0;
    while (true) {
      std::optional<Best> best;
      std::size_t hold_start = 0;
      auto ok = scan(watchlist(), eos, best, hold_start);
      if (!ok) return ok;
      if (best) {
        const std::size_t before = pos;
        if (best->m.start > pos)
          accumulate(events, std::string_view(buffer).substr(pos, best->m.start - pos));
        pos = best->m.end;
        if (best->w.open) {
          auto closed = close_current(events);
          if (!closed) return closed;
          open_explicit(events, best->w.field, best->m);
        } else {
          const bool had_content = opened;
          auto closed = close_current(events);
          if (!closed) return closed;
          // A zero-width close of an empty region would fire again at once: stop here.
          if (!had_content && best->m.start == best->m.end) break;
        }
        // transformers loops forever when empty delimiters keep opening and closing regions at
        // one position; this stops with an error instead.
        stalled = pos == before ? stalled + 1 : 0;
        if (stalled > 2 * t->fields.size() + 2)
          return error_of("LimitError", "the template's delimiters match empty text at byte " +
                                            std::to_string(pos) +
                                            " again and again (transformers would not terminate)");
        continue;
      }
      if (eos) {
        if (pos < buffer.size()) accumulate(events, std::string_view(buffer).substr(pos));
        pos = buffer.size();
        auto closed = close_current(events);
        if (!closed) return closed;
        break;
      }
      if (hold_start > pos) {
        accumulate(events, std::string_view(buffer).substr(pos, hold_start - pos));
        pos = hold_start;
      }
      break;
    }
    return true;
  }

  // Moves the complete UTF-8 characters of `pending` into the buffer; an incomplete sequence at
  // the end waits for the next chunk. Returns the error for an invalid sequence (or a buffer
  // over the limit), which the caller reports after processing the valid bytes before it, so
  // that errors come in stream order however the output is chunked.
  std::optional<Error> take_pending() {
    const std::size_t bad = util::utf8::first_invalid(pending);
    std::size_t complete = pending.size();
    std::optional<Error> error;
    if (bad != pending.size()) {
      const std::string_view tail = std::string_view(pending).substr(bad);
      const auto b0 = static_cast<unsigned char>(tail[0]);
      const std::size_t need = b0 >= 0xF0 && b0 <= 0xF4   ? 4
                               : b0 >= 0xE0 && b0 <= 0xEF ? 3
                               : b0 >= 0xC2 && b0 <= 0xDF ? 2
                                                          : 0;
      bool incomplete = need != 0 && tail.size() < need;
      for (std::size_t k = 1; incomplete && k < tail.size(); ++k) {
        const auto c = static_cast<unsigned char>(tail[k]);
        unsigned char lo = 0x80, hi = 0xBF;
        if (k == 1 && b0 == 0xE0) lo = 0xA0;
        if (k == 1 && b0 == 0xED) hi = 0x9F;
        if (k == 1 && b0 == 0xF0) lo = 0x90;
        if (k == 1 && b0 == 0xF4) hi = 0x8F;
        incomplete = c >= lo && c <= hi;
      }
      if (!incomplete)
        error = error_of("ValueError", "model output is not valid UTF-8 at byte " +
                                           std::to_string(buffer.size() + bad));
      complete = bad;
    }
    if (buffer.size() + complete > t->limits.max_output_bytes) {
      complete = t->limits.max_output_bytes - buffer.size();
      while (complete > 0 && (static_cast<unsigned char>(pending[complete]) & 0xC0) == 0x80)
        --complete;
      error = error_of("LimitError", "output longer than max_output_bytes=" +
                                         std::to_string(t->limits.max_output_bytes));
    }
    buffer.append(pending, 0, complete);
    pending.erase(0, complete);
    return error;
  }

  Result<bool> check_usable() const {
    if (finalized) return error_of("RuntimeError", "ResponseParser already finalized");
    if (failed) return *failed;
    return true;
  }

  template <typename T>
  Result<T> poison(Result<T> r) {
    if (!r) failed = r.error();
    return r;
  }
};

namespace {

// The prefix past the last match of the start anchor (the whole prefix when there is none).
Result<std::string_view> truncate_past_last_anchor(const Template::Impl& t, std::string_view text) {
  std::optional<std::size_t> last_end;
  std::size_t pos = 0;
  bool after_empty = false;
  while (pos <= text.size()) {
    auto m = t.anchor.re.search(text, pos, false, after_empty);
    if (!m) return m.error();
    if (m->found != Regex::Found::kComplete) break;
    last_end = m->end;
    after_empty = m->start == m->end;
    pos = m->end;
  }
  return last_end ? text.substr(*last_end) : text;
}

}  // namespace

Result<Parser> Parser::create(const Template& tmpl, std::optional<std::string_view> prefix,
                              const Json& tools) {
  if (!prefix)
    return Error{"ValueError",
                 "`ResponseParser`/`parse_response` requires `prefix` (the chat prompt sent to the "
                 "model before generation); pass prefix=\"\" when the generation already holds "
                 "the complete message",
                 0, 0, "prefix"};
  auto state = std::make_unique<State>();
  state->t = tmpl.impl;
  auto params = tool_params(tools);
  if (!params) return params.error();
  state->tools = std::move(*params);
  state->output = state->t->defaults;
  state->current = state->t->implicit;
  if (!prefix->empty()) {
    if (util::utf8::first_invalid(*prefix) != prefix->size())
      return Error{"ValueError", "prefix is not valid UTF-8", 0, 0, "prefix"};
    if (prefix->size() > state->t->limits.max_output_bytes)
      return Error{"LimitError", "prefix longer than max_output_bytes", 0, 0, "prefix"};
    auto truncated = truncate_past_last_anchor(*state->t, *prefix);
    if (!truncated) return truncated.error();
    if (!truncated->empty()) {
      state->buffer = std::string(*truncated);
      auto ok = state->process(state->initial, false);
      if (!ok) {
        Error e = ok.error();
        if (e.path.empty()) e.path = "prefix";
        return e;
      }
    }
  }
  return Parser(std::move(state));
}

Parser::Parser(std::unique_ptr<State> state) : state_(std::move(state)) {}
Parser::Parser(Parser&&) noexcept = default;
Parser& Parser::operator=(Parser&&) noexcept = default;
Parser::~Parser() = default;

const std::vector<Event>& Parser::initial_events() const {
  return state_->initial;
}

Result<std::vector<Event>> Parser::feed(std::string_view text) {
  State& s = *state_;
  if (auto ok = s.check_usable(); !ok) return ok.error();
  s.pending.append(text);
  const std::optional<Error> invalid = s.take_pending();
  std::vector<Event> events;
  if (auto ok = s.poison(s.process(events, false)); !ok) return ok.error();
  if (invalid) {
    s.failed = *invalid;
    return *invalid;
  }
  return events;
}

Result<Finished> Parser::finalize() {
  State& s = *state_;
  if (auto ok = s.check_usable(); !ok) return ok.error();
  if (!s.pending.empty()) {
    s.failed = error_of("ValueError", "model output ends inside a UTF-8 sequence at byte " +
                                          std::to_string(s.buffer.size()));
    return *s.failed;
  }
  Finished done;
  if (auto ok = s.poison(s.process(done.events, true)); !ok) return ok.error();
  std::vector<std::string> missing;
  for (const auto& f : s.t->fields)
    if (!f.optional && !s.output.contains(f.name)) missing.push_back(py_repr(f.name));
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    s.failed =
        error_of("ValueError",
                 "Required response_template fields missing from parsed output: [" + list + "]");
    return *s.failed;
  }
  Json message = Json::object();
  for (auto& [key, value] : s.output.items())
    if (s.t->defaults.contains(key) || !py_is_empty(value)) message[key] = value;
  s.finalized = true;
  done.message = std::move(message);
  return done;
}

Result<Json> parse_response(std::string_view text, const Template& tmpl,
                            std::optional<std::string_view> prefix, const Json& tools) {
  auto parser = Parser::create(tmpl, prefix, tools);
  if (!parser) return parser.error();
  auto fed = parser->feed(text);
  if (!fed) return fed.error();
  auto done = parser->finalize();
  if (!done) return done.error();
  return std::move(done->message);
}

Json to_json(const Event& event) {
  Json j = Json::object();
  switch (event.kind) {
    case Event::Kind::kOpen:
      j["type"] = "region_open";
      break;
    case Event::Kind::kChunk:
      j["type"] = "region_chunk";
      break;
    case Event::Kind::kClose:
      j["type"] = "region_close";
      break;
  }
  j["field"] = event.field;
  if (event.kind == Event::Kind::kChunk) {
    j["text"] = event.text;
    j["dirty"] = event.dirty;
  }
  if (event.kind == Event::Kind::kClose) j["value"] = event.value;
  return j;
}

}  // namespace chatwire::response
