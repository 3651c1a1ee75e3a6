// Choosing the output parser: candidates derived from the template's renders first, then the
// hand-written dialect rows (for behaviour a render cannot show); the first that reads back
// every round trip exactly, one-shot and streamed in several chunkings, is chosen.
#include <functional>

#include "readback/internal.hpp"

namespace chatwire::readback {

void reasoning_markers(const RoundTrip& trip, const probe::Profile& profile, std::string& open,
                       std::string& close);
parse::Syntax reasoning_only(const std::string& open, const std::string& close,
                             const std::vector<std::string>& turn_ends,
                             const std::vector<std::string>& inner_ends);

namespace {

// Chunk sizes the streamed parse is checked with (1 = every byte boundary).
constexpr std::size_t kChunkings[] = {1, 3, 7, 64};

std::string join_message(const parse::Message& m) {
  std::string out = parse::message_to_json(m).dump();
  return out.size() > 400 ? out.substr(0, 400) + "..." : out;
}

// `syntax` reading `trip` one-shot, from where the trip's prompt leaves the reasoning.
auto read_trip(const parse::Syntax& syntax, const RoundTrip& trip, parse::Options options) {
  options.reasoning_prefilled = trip.reasoning_prefilled;
  return parse::parse(trip.generated, syntax, round_trip_tools(), options);
}

bool same_message(const parse::Message& a, const parse::Message& b) {
  if (a.content != b.content || a.reasoning_content != b.reasoning_content ||
      a.tool_calls.size() != b.tool_calls.size())
    return false;
  for (std::size_t i = 0; i < a.tool_calls.size(); ++i)
    if (a.tool_calls[i].name != b.tool_calls[i].name ||
        a.tool_calls[i].arguments != b.tool_calls[i].arguments)
      return false;
  return true;
}

// "" when `syntax` reads `trip` back one-shot and streamed, else the first difference.
std::string check(const parse::Syntax& syntax, const RoundTrip& trip, parse::Options options) {
  options.reasoning_prefilled = trip.reasoning_prefilled;
  auto whole = parse::parse(trip.generated, syntax, round_trip_tools(), options);
  if (!whole) return whole.error().message;
  if (auto diff = compare(whole->message, trip); !diff.empty()) return trip.kind + ": " + diff;
  for (std::size_t n : kChunkings) {
    auto stream = parse::StreamParser::create(syntax, round_trip_tools(), options);
    if (!stream) return stream.error().message;
    std::string_view g = trip.generated;
    for (std::size_t at = 0; at < g.size(); at += n) stream->feed(g.substr(at, n));
    stream->finish();
    if (!same_message(stream->message(), whole->message))
      return trip.kind + ": streamed in chunks of " + std::to_string(n) + " bytes gives " +
             join_message(stream->message());
  }
  return "";
}

std::string check_all(const parse::Syntax& syntax, const std::vector<const RoundTrip*>& trips,
                      const parse::Options& options) {
  for (const RoundTrip* t : trips)
    if (auto v = check(syntax, *t, options); !v.empty()) return v;
  return "";
}

// A table row with the template's measured reasoning markers (the row's own when it has none
// measured).
parse::Syntax with_reasoning(const parse::Syntax& row, const std::string& open,
                             const std::string& close) {
  parse::Dialect d = row.data().dialect;
  if (!close.empty()) {
    d.think_open = open;
    d.think_close = close;
  }
  return parse::make_syntax(d, row.name(), row.summary());
}

// The texts two parsers are compared on: every applicable round trip, cut at the turn's end and
// whole (all the template renders after the prompt, as a caller that does not stop there passes
// it), and the answer's text with a JSON object holding a "name" for its answer (an answer, no
// call: a bare-JSON parser reads it as one).
std::vector<RoundTrip> comparison_texts(const std::vector<RoundTrip>& trips) {
  std::vector<RoundTrip> out;
  for (const auto& t : trips) {
    if (!t.applicable) continue;
    out.push_back(t);
    RoundTrip whole = t;
    whole.generated = t.full.substr(t.turn_at);
    if (whole.generated != t.generated) out.push_back(std::move(whole));
    const std::size_t at = t.generated.find(t.expected.content);
    if (t.kind != "answer" || t.expected.content.empty() || at == std::string::npos) continue;
    RoundTrip json_answer = t;
    json_answer.expected.content = R"({"name": "Bob", "age": 3})";
    json_answer.generated.replace(at, t.expected.content.size(), json_answer.expected.content);
    out.push_back(std::move(json_answer));
  }
  return out;
}

// Answers that look like something else: a call-shaped object bare and in a Markdown fence, a
// pythonic call list, a block in think tags. A bare-JSON or pythonic row reads some as calls, a
// row with think tags the last as reasoning, where the derived parser may read them as the
// answer (a review found EXAONE 4, Granite 4, LFM2 and Llama 4's JSON template changing such
// answers once their rows were chosen).
std::vector<RoundTrip> lookalike_answers(const std::vector<RoundTrip>& trips) {
  static const char* const kAnswers[] = {
      R"({"name": "x", "arguments": {}})",
      "```json\n{\"name\": \"x\", \"arguments\": {}}\n```",
      R"([get_weather(city="Paris")])",
      "<think>\nhmm\n</think>\n\nHi.",
  };
  std::vector<RoundTrip> out;
  for (const auto& t : trips) {
    const std::size_t at = t.generated.find(t.expected.content);
    if (!t.applicable || t.kind != "answer" || t.expected.content.empty() ||
        at == std::string::npos)
      continue;
    for (const char* answer : kAnswers) {
      RoundTrip other = t;
      other.expected.content = answer;
      other.generated.replace(at, t.expected.content.size(), answer);
      out.push_back(std::move(other));
    }
  }
  return out;
}

// The derived parser knows only what the template writes; a model also writes what its template
// never shows (gpt-oss its recipient in the channel header, `<|channel|>commentary to=functions.f`,
// beside the template's `<|start|>assistant to=functions.f<|channel|>commentary`). A table row
// that reads every text the derived parser reads (comparison_texts), alone among the rows, is the
// model's own format as the reference parsers read it, variants included, and replaces the
// derived parser, provided it also reads the look-alike answers the derived parser reads as
// answers (lookalike_answers: a row that would turn such an answer into a call or reasoning
// stays out, and the derived parser stays). Where several rows read them all (generic JSON rows
// beside the model's), none is more the model's than another and the derived parser stays.
// Measured over the bundled templates: see docs/readback.md ("The one row that reads it all").
void prefer_the_one_row_that_reads_it_all(ParserChoice& choice, const std::string& open,
                                          const std::string& close) {
  const std::vector<RoundTrip> texts = comparison_texts(choice.trips);
  std::vector<const RoundTrip*> read;  // the texts the derived parser reads
  for (const auto& t : texts)
    if (check(*choice.syntax, t, choice.options).empty()) read.push_back(&t);
  std::optional<parse::Syntax> only;
  for (const auto& info : parse::dialects()) {
    auto row = parse::Syntax::named(info.name);
    if (!row->has_tool_calls()) continue;
    parse::Syntax candidate = with_reasoning(*row, open, close);
    if (!check_all(candidate, read, choice.options).empty()) continue;
    if (only) return;  // a second one
    only = std::move(candidate);
  }
  if (!only) return;
  const std::vector<RoundTrip> lookalikes = lookalike_answers(choice.trips);
  for (const auto& t : lookalikes)
    if (check(*choice.syntax, t, choice.options).empty() &&
        !check(*only, t, choice.options).empty())
      return;
  choice.tried.push_back(
      {"table (reads all the derived parser reads, the only row that does)", *only, ""});
  choice.syntax = std::move(only);
}

// The text before the answer in the answer round trip, past any reasoning block: the opener the
// template writes before a plain answer, when it is made of markers and words (no sentence of
// the conversation).
std::string answer_lead(const RoundTrip& answer, const parse::Syntax& syntax) {
  std::string_view g = answer.generated;
  std::size_t at = g.find(answer.expected.content);
  if (at == std::string_view::npos) return {};
  const auto& dialect = syntax.data().dialect;
  std::string_view before = trim(after_empty_block(
      g.substr(0, at), dialect.think_open, dialect.think_close, answer.reasoning_prefilled));
  if (before.empty() || before.size() > 64) return {};
  for (std::string_view text : conversation_texts())
    if (before.find(text.substr(0, 12)) != std::string_view::npos) return {};
  return std::string(before);
}

// The chosen parser with `d` in place of its dialect (`added` joins its summary), tried on every
// round trip of `proven` and on `extra` (when given), and recorded as tried: it becomes the
// choice when it reads them all back and `also` (when given) finds nothing wrong with it.
// Returns the verdict.
std::string try_framing(ParserChoice& choice, const parse::Dialect& d, const std::string& added,
                        std::vector<const RoundTrip*> proven, const RoundTrip* extra,
                        const std::function<std::string(const parse::Syntax&)>& also = {}) {
  parse::Syntax framed =
      parse::make_syntax(d, choice.syntax->name(), choice.syntax->summary() + added);
  if (extra != nullptr) proven.push_back(extra);
  std::string verdict = check_all(framed, proven, choice.options);
  if (verdict.empty() && also) verdict = also(framed);
  choice.tried.push_back({"derived", framed, verdict});
  if (verdict.empty()) choice.syntax = std::move(framed);
  return verdict;
}

// The plain-answer round trip on the chosen parser (proven on `proven`); a template that frames
// its answers gets the opener it writes as the parser's answer_open, kept only when every round
// trip still reads back.
void read_answer(ParserChoice& choice, const RoundTrip* answer,
                 std::vector<const RoundTrip*> proven) {
  if (answer == nullptr || !choice.syntax) return;
  choice.answer_rendered = true;
  std::string verdict = check(*choice.syntax, *answer, choice.options);
  if (!verdict.empty()) {
    if (std::string lead = answer_lead(*answer, *choice.syntax); !lead.empty()) {
      parse::Dialect d = choice.syntax->data().dialect;
      // Where the output begins with a header (Functionary v3.2's `>>>` left in the prompt), a
      // header naming the answer (`all\n`) is the content header, not an opener to strip.
      bool header = false;
      if (d.header_at_start)
        for (auto end : d.header_end)
          header = header || answer->generated.find(lead + std::string(end)) == 0;
      (header ? d.content_name : d.answer_open) = lead;
      const std::string added =
          (header ? " content_name=" : " answer=") + nlohmann::json(lead).dump();
      if (try_framing(choice, d, added, proven, answer).empty()) verdict.clear();
    }
  }
  choice.answer_read_back = verdict.empty();
  choice.answer_verdict = std::move(verdict);
}

// A template that takes reasoning out of the content (the probe's style "content": DeepSeek R1)
// and whose generation prompt writes neither marker leaves it to the model to open the block, and
// a thinking model may skip the opener (R1 often does): a close before any other marker ends
// reasoning, as vLLM's deepseek_r1 parser reads it, and output with no close is content (dialect
// field reasoning_until_close; the text is held until that is known, so an answer without
// reasoning streams at its end). Not where the prompt opens the block (then it is prefilled) or
// closes it (thinking off: EXAONE 4, DeepSeek V3.1, Gemma 4 write an empty block or a lone close,
// and their answers stream as they come). Kept only when every proven round trip still reads
// back.
void read_unopened_reasoning(ParserChoice& choice, const probe::Profile& profile,
                             const std::vector<const RoundTrip*>& proven) {
  if (!choice.syntax || profile.reasoning.style != "content") return;
  parse::Dialect d = choice.syntax->data().dialect;
  if (d.think_close.empty() || d.starts_in_reasoning || d.reasoning_until_close) return;
  const std::string prompt = profile.frame.generation_prompt.value_or("");
  const std::string_view open = trim(d.think_open), close = trim(d.think_close);
  if ((!open.empty() && prompt.find(open) != std::string::npos) ||
      prompt.find(close) != std::string::npos)
    return;
  d.reasoning_until_close = true;
  try_framing(choice, d, " reasoning_until_close", proven, nullptr);
}

// Newlines a template writes around a turn's content are layout where the chosen parser leaves
// them in the content (round trips compare content trimmed, so it reads the turn back anyway):
// - between the content and its calls (Qwen3's "\n", Qwen3-Coder's and Seed-OSS's "\n\n"):
//   the parser's layout_before_calls;
// - after the reasoning close (Qwen3's and GLM-4.5's `</think>\n\n`): newlines_after_think_close.
// A framing is kept only if the framed parser gives the content exactly and still reads every
// round trip back.
enum class Layout { kBeforeCalls, kAfterReasoning };

void frame_layout(ParserChoice& choice, Layout where, const RoundTrip& trip,
                  std::vector<const RoundTrip*> proven) {
  if (!choice.syntax) return;
  parse::Dialect d = choice.syntax->data().dialect;
  const bool before_calls = where == Layout::kBeforeCalls;
  if (before_calls ? !d.layout_before_calls.empty() : d.newlines_after_think_close) return;
  auto exact = [&](const parse::Syntax& syntax) -> std::optional<std::string> {
    auto whole = read_trip(syntax, trip, choice.options);
    if (!whole) return std::nullopt;
    return whole->message.content;
  };
  const std::string& want = trip.expected.content;
  const std::optional<std::string> content = exact(*choice.syntax);
  if (!content || content->size() <= want.size()) return;
  const std::size_t extra = content->size() - want.size();
  if (content->compare(before_calls ? 0 : extra, want.size(), want) != 0) return;
  const std::string layout = content->substr(before_calls ? want.size() : 0, extra);
  if (layout.find_first_not_of('\n') != std::string::npos) return;
  std::string added;
  if (before_calls) {
    d.layout_before_calls = layout;
    added = " layout_before_calls=" + nlohmann::json(layout).dump();
  } else {
    d.newlines_after_think_close = true;
    added = " newlines_after_think_close";
  }
  try_framing(choice, d, added, std::move(proven), &trip, [&](const parse::Syntax& framed) {
    return exact(framed) == want ? std::string() : "the content keeps the layout";
  });
}

// A template that writes bare JSON calls right after a turn's content (vLLM's llama4_json:
// `...three days.{"name": ...}`) says they may start anywhere in the content, not only at its
// start, where the parser derived from the calls alone looks for them. Kept only if every round
// trip, the content beside a call included, then reads back.
void read_bare_calls_anywhere(ParserChoice& choice, const RoundTrip& trip,
                              std::vector<const RoundTrip*> proven) {
  if (!choice.syntax || choice.content_calls_read_back) return;
  parse::Dialect d = choice.syntax->data().dialect;
  if (!d.bare_json || d.bare_anywhere) return;
  d.bare_anywhere = true;
  if (!try_framing(choice, d, " bare_anywhere", std::move(proven), &trip).empty()) return;
  choice.content_calls_read_back = true;
  choice.content_calls_verdict.clear();
}

// A template that writes the content beside calls as a turn of its own (HyperCLOVAX SEED Think
// 14B: `ANSWER<|im_end|>\n<|im_start|>assistant -> tool/function_call\n[...]`) ends it with the
// text its reasoning close is: between the content and the calls that text is layout (the
// parser's layout_before_calls), not the content's. Kept only if every round trip, the content
// beside a call included, then reads back.
void read_turn_before_calls(ParserChoice& choice, const RoundTrip& trip,
                            std::vector<const RoundTrip*> proven) {
  if (!choice.syntax || choice.content_calls_read_back) return;
  parse::Dialect d = choice.syntax->data().dialect;
  if (!d.layout_before_calls.empty() || d.think_close.empty()) return;
  auto whole = read_trip(*choice.syntax, trip, choice.options);
  if (!whole) return;
  const std::string& content = whole->message.content;
  const std::string& want = trip.expected.content;
  const std::size_t at = content.find(want);
  if (want.empty() || at == std::string::npos ||
      content.find_first_not_of(" \n", 0) != at)  // only layout before the content
    return;
  const std::string layout = content.substr(at + want.size());
  if (trim(layout) != trim(d.think_close)) return;
  d.layout_before_calls = layout;
  const std::string added = " layout_before_calls=" + nlohmann::json(layout).dump();
  if (!try_framing(choice, d, added, std::move(proven), &trip).empty()) return;
  choice.content_calls_read_back = true;
  choice.content_calls_verdict.clear();
}

}  // namespace

std::string compare(const parse::Message& m, const RoundTrip& trip) {
  const parse::Message& want = trip.expected;
  if (trim(m.content) != trim(want.content))
    return "content " + nlohmann::json(m.content).dump() + ", expected " +
           nlohmann::json(want.content).dump();
  if (trim(m.reasoning_content) != trim(want.reasoning_content))
    return "reasoning " + nlohmann::json(m.reasoning_content).dump() + ", expected " +
           nlohmann::json(want.reasoning_content).dump();
  if (m.tool_calls.size() != want.tool_calls.size())
    return std::to_string(m.tool_calls.size()) + " tool calls, expected " +
           std::to_string(want.tool_calls.size()) + ": " + join_message(m);
  for (std::size_t i = 0; i < m.tool_calls.size(); ++i) {
    const auto& got = m.tool_calls[i];
    const auto& exp = want.tool_calls[i];
    if (got.name != exp.name)
      return "tool_calls[" + std::to_string(i) + "] is '" + got.name + "', expected '" + exp.name +
             "'";
    auto a = nlohmann::json::parse(got.arguments, nullptr, false);
    if (a.is_discarded() || a != nlohmann::json::parse(exp.arguments))
      return "tool_calls[" + std::to_string(i) + "].arguments " + got.arguments + ", expected " +
             exp.arguments;
  }
  return "";
}

ParserChoice choose_parser(const probe::RenderFunction& render, const probe::Profile& profile,
                           const std::vector<std::string>& end_markers) {
  ParserChoice choice;
  choice.trips = round_trips(render, profile, end_markers);
  // The prompt leaves reasoning open when its generation prompt ends with the opener (not when
  // it opens and closes an empty block, as a thinking-off generation prompt does).
  choice.options.reasoning_prefilled =
      leaves_reasoning_open(profile, profile.frame.generation_prompt.value_or(""));
  for (const auto& t : choice.trips)
    if (t.applicable && t.prefix) {
      choice.options.reasoning_prefilled = t.reasoning_prefilled;
      break;
    }
  const RoundTrip* calls = nullptr;
  const RoundTrip* reasoning = nullptr;
  const RoundTrip* answer = nullptr;
  const RoundTrip* content_calls = nullptr;
  for (const auto& t : choice.trips) {
    if (t.kind == "calls") choice.calls_rendered = true;
    if (t.kind == "reasoning") choice.reasoning_rendered = t.applicable;
    if (!t.applicable) continue;
    if (t.kind == "content_calls") {
      content_calls = &t;
      choice.content_calls_rendered = true;
      continue;
    }
    (t.kind == "calls" ? calls : t.kind == "reasoning" ? reasoning : answer) = &t;
  }
  std::string open, close;
  if (calls) reasoning_markers(*calls, profile, open, close);
  if (close.empty() && reasoning) reasoning_markers(*reasoning, profile, open, close);
  // No round trip to read them from (llama.cpp's DeepSeek R1 template renders no turn of the
  // conversation): the markers the probe measured.
  if (close.empty() && profile.reasoning.style != "none") {
    open = std::string(trim(profile.reasoning.open.value_or("")));
    close = std::string(trim(profile.reasoning.close.value_or("")));
  }

  std::vector<const RoundTrip*> all;
  for (const RoundTrip* t : {calls, reasoning})
    if (t) all.push_back(t);
  auto attempt = [&](std::string origin, const parse::Syntax& syntax,
                     const std::vector<const RoundTrip*>& trips) {
    std::string verdict = check_all(syntax, trips, choice.options);
    choice.tried.push_back({std::move(origin), syntax, verdict});
    return verdict.empty();
  };

  if (calls) {
    std::vector<std::pair<std::string, parse::Syntax>> candidates;
    for (auto& s : derive_candidates(*calls, profile)) candidates.emplace_back("derived", s);
    for (const auto& info : parse::dialects()) {
      auto row = parse::Syntax::named(info.name);
      if (!row->has_tool_calls()) continue;
      candidates.emplace_back("table", with_reasoning(*row, open, close));
    }
    for (const auto& [origin, syntax] : candidates) {
      if (!attempt(origin, syntax, all)) continue;
      choice.syntax = syntax;
      choice.calls_read_back = true;
      choice.reasoning_read_back = reasoning != nullptr;
      choice.verdict = "read back";
      read_answer(choice, answer, all);
      std::vector<const RoundTrip*> proven = all;
      if (choice.answer_read_back && answer) proven.push_back(answer);
      if (content_calls) {
        choice.content_calls_verdict = check(*choice.syntax, *content_calls, choice.options);
        choice.content_calls_read_back = choice.content_calls_verdict.empty();
        read_bare_calls_anywhere(choice, *content_calls, proven);
        read_turn_before_calls(choice, *content_calls, proven);
        if (choice.content_calls_read_back) proven.push_back(content_calls);
      }
      // Before the layout is framed: framing is the chosen parser's.
      prefer_the_one_row_that_reads_it_all(choice, open, close);
      // After the reasoning first: a turn with reasoning, content and calls has both.
      if (reasoning) frame_layout(choice, Layout::kAfterReasoning, *reasoning, proven);
      if (choice.content_calls_read_back)
        frame_layout(choice, Layout::kBeforeCalls, *content_calls, proven);
      read_unopened_reasoning(choice, profile, proven);
      return choice;
    }
  }
  // Content and reasoning only.
  std::vector<const RoundTrip*> text_trips;
  if (reasoning) text_trips.push_back(reasoning);
  parse::Syntax text = choice.trips.empty() ? reasoning_only(open, close, {}, {})
                                            : reasoning_only(open, close, choice.trips[0].turn_ends,
                                                             choice.trips[0].inner_ends);
  bool text_ok = attempt("derived", text, text_trips);
  if (text_ok) {
    choice.syntax = text;
    choice.reasoning_read_back = reasoning != nullptr;
  }
  std::string why;
  if (calls) choice.template_bug = diagnose_unreadable(*calls);
  if (choice.calls_rendered) {
    why = "tool calls of this template cannot be read back: ";
    if (choice.template_bug) {
      why += "the template writes them unreadably (" + choice.template_bug->cause + ": " +
             nlohmann::json(choice.template_bug->evidence).dump() + ")";
    } else if (!calls) {
      why += choice.trips[0].why_not;
    } else {
      std::string first;
      for (const auto& c : choice.tried)
        if (c.origin == "derived" && c.syntax.has_tool_calls()) {
          first = c.verdict;
          break;
        }
      why += first.empty() ? "no parser could be derived from the rendered calls" : first;
    }
  }
  if (choice.reasoning_rendered && !text_ok) {
    why += std::string(why.empty() ? "" : "; ") + "reasoning cannot be read back";
    if (reasoning) why += ": " + choice.tried.back().verdict;
  }
  choice.verdict = why.empty() ? "read back" : why;
  if (text_ok) {
    read_answer(choice, answer, text_trips);
    std::vector<const RoundTrip*> proven = text_trips;
    if (choice.answer_read_back && answer) proven.push_back(answer);
    if (reasoning) frame_layout(choice, Layout::kAfterReasoning, *reasoning, proven);
    read_unopened_reasoning(choice, profile, proven);
  }
  return choice;
}

Json to_json(const ParserChoice& choice) {
  const auto& [syntax, calls_rendered, calls_read_back, reasoning_rendered, reasoning_read_back,
               answer_rendered, answer_read_back, answer_verdict, content_calls_rendered,
               content_calls_read_back, content_calls_verdict, options, verdict, trips, tried,
               template_bug] = choice;
  Json out = Json::object();
  out["syntax"] = syntax ? parse::to_json(*syntax) : Json();
  out["calls_rendered"] = calls_rendered;
  out["calls_read_back"] = calls_read_back;
  out["reasoning_rendered"] = reasoning_rendered;
  out["reasoning_read_back"] = reasoning_read_back;
  out["answer_rendered"] = answer_rendered;
  out["answer_read_back"] = answer_read_back;
  if (!answer_verdict.empty()) out["answer_verdict"] = answer_verdict;
  out["content_calls_rendered"] = content_calls_rendered;
  out["content_calls_read_back"] = content_calls_read_back;
  if (!content_calls_verdict.empty()) out["content_calls_verdict"] = content_calls_verdict;
  out["reasoning_prefilled"] = options.reasoning_prefilled;
  out["verdict"] = verdict;
  if (template_bug)
    out["template_bug"] = {{"kind", "unreadable_calls"},
                           {"cause", template_bug->cause},
                           {"evidence", template_bug->evidence},
                           {"rendered", template_bug->rendered}};
  Json trips_json = Json::array();
  for (const auto& t : trips) {
    Json j = {{"kind", t.kind}, {"applicable", t.applicable}, {"prefix", t.prefix}};
    if (!t.applicable) j["why_not"] = t.why_not;
    if (t.kind == "calls") j["calls"] = t.calls;
    if (!t.end_marker.empty()) j["end_marker"] = t.end_marker;
    if (t.applicable) j["generated"] = t.generated;
    trips_json.push_back(std::move(j));
  }
  out["trips"] = std::move(trips_json);
  Json tried_json = Json::array();
  for (const auto& c : tried)
    tried_json.push_back({{"origin", c.origin},
                          {"summary", c.syntax.summary()},
                          {"verdict", c.verdict.empty() ? "read back" : c.verdict},
                          {"syntax", parse::to_json(c.syntax)}});
  out["tried"] = std::move(tried_json);
  return out;
}

std::string ParserChoice::to_json_text(int indent) const {
  return to_json(*this).dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace chatwire::readback
