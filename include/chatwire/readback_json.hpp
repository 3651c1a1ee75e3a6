// Readback's nlohmann forms: the round trips and the parser choice over any renderer (a
// probe::RenderFunction takes the chat request as JSON), the round trip's tools as a JSON
// array, and the choice as JSON. chatwire/readback.hpp itself does not pull in nlohmann.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chatwire/parse_json.hpp"
#include "chatwire/probe_json.hpp"
#include "chatwire/readback.hpp"

namespace chatwire::readback {

// round_trip_tools() as the JSON array it was read from.
const parse::Json& round_trip_tools_json();

// Renders the round trips ("calls" where the template renders tool calls, "reasoning" where it
// renders reasoning) with the profile's input conventions. `end_markers` adds markers (e.g.
// the eos token) to the ones measured from the frame.
std::vector<RoundTrip> round_trips(const probe::RenderFunction& render,
                                   const probe::Profile& profile,
                                   const std::vector<std::string>& end_markers = {});

// Derives parser candidates from the round trips and proves them. Never throws; a template
// whose renders fail gets a choice that says so.
ParserChoice choose_parser(const probe::RenderFunction& render, const probe::Profile& profile,
                           const std::vector<std::string>& end_markers = {});

// {syntax, calls_read_back, ..., verdict, trips: [...], tried: [...]}
parse::Json to_json(const ParserChoice& choice);

}  // namespace chatwire::readback
