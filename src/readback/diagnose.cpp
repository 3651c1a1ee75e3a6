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

struct Check {
  const char* cause;
  std::optional<std::string> (*find)(std::string_view generated);
};
constexpr Check kChecks[] = {
    {"html_escaped", html_escaped},           {"python_repr_arguments", python_repr_arguments},
    {"unescaped_quote", unescaped_quote},     {"unquoted_string", unquoted_string},
    {"quoted_non_string", quoted_non_string},
};

}  // namespace

std::optional<UnreadableCalls> diagnose_unreadable(const RoundTrip& trip) {
  if (!trip.applicable || trip.expected.tool_calls.empty()) return std::nullopt;
  std::string_view g = trip.generated;
  if (g.find(trip.expected.tool_calls[0].name) == std::string_view::npos) {
    std::string_view rest = std::string_view(trip.full).substr(trip.prompt.size());
    if (auto at = rest.find(trip.expected.tool_calls[0].name); at != std::string_view::npos)
      return UnreadableCalls{"calls_after_turn_end", around(rest, at, 0), trip.generated};
    return std::nullopt;
  }
  for (const auto& check : kChecks)
    if (auto evidence = check.find(g))
      return UnreadableCalls{check.cause, *evidence, trip.generated};
  return std::nullopt;
}

}  // namespace chatwire::readback
