// Reading back what a template writes: the output parser is derived from the template's own
// renders, not picked by a model name, and it is accepted only when it returns the template's
// own calls and reasoning exactly (the round trip).
//
//   auto loaded = chatwire::readback::choose_parser_file("template.jinja");
//   const auto& choice = loaded->choice;
//   if (choice.syntax) parse::parse(model_output, *choice.syntax, tools, choice.options);
//
// The round trip: a conversation whose last assistant turn makes two tool calls (a string
// with quotes and non-ASCII, an integer, a boolean; reasoning first where the template renders
// it) is rendered with and without that turn; the text the model would generate is the
// difference, cut at the first end-of-turn marker (where a serving loop stops). A parser
// candidate is derived per syntax family from where the known names and values sit in that
// text (its markers exactly as rendered), then run on it, one-shot and streamed; the first
// that gives both calls back (JSON-equal arguments, in order, no stray content) and the
// reasoning is chosen. scripts/readback-oracle.py renders the same conversations through the
// reference renderer; tests/readback/ checks every bundled template against those texts.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "chatwire/parse.hpp"
#include "chatwire/probe.hpp"

namespace chatwire::readback {

// One rendered round trip.
struct RoundTrip {
  // "calls" (two tool calls, reasoning first), "reasoning" (+ answer) or "answer" (content only)
  std::string kind;
  bool applicable = false;  // rendered, and the turn's text could be cut out of the render
  // The prompt is a prefix of the conversation: `generated` is exactly what follows the prompt
  // (the round trip proper). When it is not (the template rewrites history, e.g. drops past
  // reasoning), `generated` is the render after the longest prefix the two share: the
  // template's own writing of the turn, still enough to derive and prove a parser.
  bool prefix = false;
  std::string why_not;      // when not applicable: the template's error
  std::string prompt;       // the conversation without the turn, with the generation prompt
  std::string full;         // the conversation with the turn
  std::string generated;    // full minus prompt, cut at the first end-of-turn marker
  std::size_t turn_at = 0;  // where `generated` starts in `full`
  std::string end_marker;   // the marker it was cut at ("" = not cut)
  std::vector<std::string> turn_ends;  // every end-of-turn marker it would be cut at
  // Those of `turn_ends` the template also writes inside a turn (in some trip's generated text:
  // HyperCLOVA X's `<|im_end|>` ends each message of a turn): framing, not the output's end.
  std::vector<std::string> inner_ends;
  std::size_t calls = 0;  // calls in the turn: 2, or 1 where the template takes one per turn
  std::vector<std::string> call_ids;  // the ids the turn's calls carried
  // The id rule that renders: "long" (call_ + 24), "short" (9 alphanumerics), or "named"
  // (functions.NAME:index, where the template writes the id in place of the name).
  std::string id_rule;
  parse::Message expected;           // what parsing `generated` must give
  bool reasoning_prefilled = false;  // the prompt leaves a reasoning block open
};

// The fixed tools of the round trip (get_weather(city: string, days: integer),
// set_alarm(enabled: boolean)); chatwire/readback_json.hpp has them as a JSON array.
const parse::Tools& round_trip_tools();

// The round trips are rendered through a probe::RenderFunction: round_trips() in
// chatwire/readback_json.hpp.

// Whether `message` is what `trip` expects; "" when it is, else what differs.
std::string compare(const parse::Message& message, const RoundTrip& trip);

struct Candidate {
  std::string origin;  // "derived" or "table"
  parse::Syntax syntax;
  std::string verdict;  // "" = passed every trip, else the first difference
};

// A template whose own rendering of a call cannot be read by any parser: the cause and the
// evidence (the rendered snippet), found by looking at how the known values were written.
struct UnreadableCalls {
  // "unquoted_string" (a string argument written without quotes), "unescaped_quote" (quoted,
  // but its own quotes not escaped), "python_repr_arguments" (a Python dict repr, not JSON),
  // "quoted_non_string" (an integer or boolean written as a string), "html_escaped" (entities
  // in the call), "missing_argument_separator" (f(a="x"b=3)), "unopened_call" (a closer after
  // every call, the opener only before the first), "calls_after_turn_end" (the calls follow the
  // end-of-turn marker), "calls_dropped_in_last_turn" (rendered only when a tool result follows)
  std::string cause;
  std::string evidence;  // the rendered text around the value
  std::string rendered;  // the whole generated text
};
std::optional<UnreadableCalls> diagnose_unreadable(const RoundTrip& calls_trip);

struct ParserChoice {
  // The parser to run on this template's output; nullopt = plain content (nothing to parse).
  // When calls cannot be read back it parses reasoning only and `calls_read_back` is false.
  std::optional<parse::Syntax> syntax;
  bool calls_rendered = false;   // the template renders tool calls at all
  bool calls_read_back = false;  // proven on the "calls" round trip
  bool reasoning_rendered = false;
  bool reasoning_read_back = false;
  bool answer_rendered = false;   // the plain-answer round trip applies (the answer is rendered)
  bool answer_read_back = false;  // ... and the parser gives the answer back as content, alone
  std::string answer_verdict;     // when not read back: the first difference
  // Measured, not required of the choice: a turn holding content and a call (the "content_calls"
  // round trip) read back by the chosen parser; templates that move the content elsewhere
  // (gpt-oss's analysis message) do not.
  bool content_calls_rendered = false;
  bool content_calls_read_back = false;
  std::string content_calls_verdict;  // when not read back: the first difference
  // The parse options the prompt implies (reasoning already opened by the generation prompt).
  parse::Options options;
  // "read back", or why not (e.g. "tool calls of this template cannot be read back: ...").
  std::string verdict;
  std::vector<RoundTrip> trips;
  std::vector<Candidate> tried;  // every candidate, in the order tried
  // Set when calls are rendered, not read back, and the rendering itself is the reason.
  std::optional<UnreadableCalls> template_bug;
  // {syntax, calls_read_back, ..., verdict, trips: [...]} (indent < 0 = one line); the nlohmann
  // form is to_json(choice) in chatwire/readback_json.hpp.
  std::string to_json_text(int indent = -1) const;
};

// choose_parser(render, profile): the choice over any renderer, in chatwire/readback_json.hpp.

// The choice for a .jinja file (special tokens <s> and </s>) or for a model directory's
// template (the one transformers picks when tools are given, with the directory's special
// tokens); the eos token is an end-of-turn marker. The profile is probed on the way.
struct LoadedChoice {
  probe::Profile profile;
  ParserChoice choice;
};
Result<LoadedChoice> choose_parser_file(const std::filesystem::path& file,
                                        const probe::Options& options = {});
Result<LoadedChoice> choose_parser_model(const std::filesystem::path& dir,
                                         const probe::Options& options = {});

// The candidates derived from one "calls" round trip, family by family (the derivation table
// in src/readback/derive.cpp), with the reasoning markers the profile measured.
std::vector<parse::Syntax> derive_candidates(const RoundTrip& calls_trip,
                                             const probe::Profile& profile);

}  // namespace chatwire::readback
