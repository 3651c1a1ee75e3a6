// Why a template's own rendering of a call cannot be read back, when the cause is the
// rendering: each check looks at how one known value was written. One row per cause.
#include "readback/internal.hpp"

namespace chatwire::readback {

namespace {

constexpr std::string_view kStringValue = "São Paulo \"SP\"";  // the first call's city

std::string around(std::string_view text, std::size_t at, std::size_t len) {
  std::size_t from = at > 24 ? at - 24 : 0;
  return std::string(text.substr(from, len + (at - from) + 24));
}

// The first occurrence of the raw string value whose previous character is one of `before`.
std::optional<std::size_t> value_after(std::string_view g, std::string_view before) {
  for (std::size_t at = g.find(kStringValue); at != std::string_view::npos;
       at = g.find(kStringValue, at + 1)) {
    std::size_t p = at;
    while (p > 0 && g[p - 1] == ' ') --p;
    if (p > 0 && before.find(g[p - 1]) != std::string_view::npos) return at;
  }
  return std::nullopt;
}

std::optional<std::string> unquoted_string(std::string_view g) {
  if (auto at = value_after(g, "=:")) return around(g, *at, kStringValue.size());
  return std::nullopt;
}
std::optional<std::string> unescaped_quote(std::string_view g) {
  if (auto at = value_after(g, "\"")) {
    std::size_t end = *at + kStringValue.size();
    if (end < g.size() && g[end] == '"') return around(g, *at, kStringValue.size());
  }
  return std::nullopt;
}
std::optional<std::string> python_repr_arguments(std::string_view g) {
  for (std::string_view key : {"{'city': ", "{'enabled': "})
    if (auto at = g.find(key); at != std::string_view::npos) return around(g, at, key.size());
  return std::nullopt;
}
std::optional<std::string> quoted_non_string(std::string_view g) {
  for (std::string_view v : {"days=\"3\"", "days='3'", "\"days\": \"3\"", "enabled=\"True\"",
                             "enabled='True'", "\"enabled\": \"true\""})
    if (auto at = g.find(v); at != std::string_view::npos) return around(g, at, v.size());
  return std::nullopt;
}
std::optional<std::string> html_escaped(std::string_view g) {
  for (std::string_view e : {"&#34;", "&quot;", "&#39;", "&lt;", "&gt;"})
    if (auto at = g.find(e); at != std::string_view::npos) return around(g, at, e.size());
  return std::nullopt;
}

// The string value's closing quote directly followed by the next argument's key: the template
// writes no separator between arguments (f(city="x"days=3)).
std::optional<std::string> missing_argument_separator(std::string_view g) {
  constexpr std::string_view kKey = "days";  // the first call's second argument
  constexpr std::string_view kBeforeQuote = " \t\n{,(";
  for (std::size_t at = g.find(kKey); at != std::string_view::npos; at = g.find(kKey, at + 1)) {
    if (at < 2 || at + kKey.size() >= g.size()) continue;
    const char quote = g[at - 1], before = g[at - 2], after = g[at + kKey.size()];
    if ((quote == '"' || quote == '\'') && (after == '=' || after == ':') &&
        kBeforeQuote.find(before) == std::string_view::npos)
      return around(g, at, kKey.size());
  }
  return std::nullopt;
}

// A call closer </X> written after every call while its opener <X> is not: between two
// closers the second call's name appears with no opener before it.
std::optional<std::string> unopened_call(std::string_view g) {
  constexpr std::string_view kSecondCall = "set_alarm";
  for (std::size_t c1 = g.find("</"); c1 != std::string_view::npos; c1 = g.find("</", c1 + 1)) {
    std::size_t end = g.find('>', c1);
    if (end == std::string_view::npos || end - c1 > 66) continue;
    std::string_view tag = g.substr(c1 + 2, end - c1 - 2);
    if (tag.empty() || tag.find_first_of(" \t\n<\"'") != std::string_view::npos) continue;
    std::string closer = "</";
    closer.append(tag).push_back('>');
    std::size_t c2 = g.find(closer, end);
    if (c2 == std::string_view::npos) continue;
    std::string_view between = g.substr(end + 1, c2 - end - 1);
    if (between.find(kSecondCall) == std::string_view::npos) continue;
    bool opened = false;
    std::string opener = "<";
    opener.append(tag);
    for (std::size_t o = between.find(opener); o != std::string_view::npos && !opened;
         o = between.find(opener, o + 1)) {
      const std::size_t next = o + opener.size();
      opened = next < between.size() &&
               std::string_view("> =\n").find(between[next]) != std::string_view::npos;
    }
    if (!opened) return around(g, end + 1, between.size());
  }
  return std::nullopt;
}

struct Check {
  const char* cause;
  std::optional<std::string> (*find)(std::string_view generated);
};
constexpr Check kChecks[] = {
    {"html_escaped", html_escaped},
    {"python_repr_arguments", python_repr_arguments},
    {"unescaped_quote", unescaped_quote},
    {"unquoted_string", unquoted_string},
    {"quoted_non_string", quoted_non_string},
    {"missing_argument_separator", missing_argument_separator},
    {"unopened_call", unopened_call},
};

}  // namespace

std::optional<UnreadableCalls> diagnose_unreadable(const RoundTrip& trip) {
  if (!trip.applicable || trip.expected.tool_calls.empty()) return std::nullopt;
  std::string_view g = trip.generated;
  if (g.find(trip.expected.tool_calls[0].name) == std::string_view::npos) {
    std::string_view rest = std::string_view(trip.full).substr(trip.turn_at);
    if (auto at = rest.find(trip.expected.tool_calls[0].name); at != std::string_view::npos)
      return UnreadableCalls{"calls_after_turn_end", around(rest, at, 0), trip.generated};
    // Rendered elsewhere (the caller asks only where the probe saw calls rendered), but not
    // in the last assistant turn, which is what the model generates.
    return UnreadableCalls{"calls_dropped_in_last_turn",
                           "the turn renders as \"" + std::string(rest.substr(0, 120)) +
                               "\" without its calls (get_weather, set_alarm)",
                           trip.generated};
  }
  for (const auto& check : kChecks)
    if (auto evidence = check.find(g))
      return UnreadableCalls{check.cause, *evidence, trip.generated};
  return std::nullopt;
}

}  // namespace chatwire::readback
