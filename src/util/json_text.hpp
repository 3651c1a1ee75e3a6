// JSON text from outside (requests, tools, cached profiles and parsers, config files) parsed
// with a nesting limit checked while parsing, so no caller reads untrusted JSON unbounded. One
// header, inline, for the components that take JSON text (parse links no library of ours).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace chatwire::util {

struct BoundedJson {
  enum class Failure { kNone, kSyntax, kTooDeep };
  nlohmann::ordered_json value;  // discarded unless failure is kNone
  Failure failure = Failure::kNone;
  std::string what;  // the parser's message for kSyntax (it names the byte position)
  // The first key an object holds twice (looked for on request): the reader keeps one value, so
  // the caller may report the other or keep the text (empty: none).
  std::string repeated_key;
  explicit operator bool() const { return failure == Failure::kNone; }
};

// Where parse_bounded_json looks for a key an object holds twice.
enum class RepeatedKeys { kIgnore, kTopLevel, kAnyLevel };

inline BoundedJson parse_bounded_json(std::string_view text, std::size_t max_depth,
                                      RepeatedKeys repeated = RepeatedKeys::kIgnore) {
  BoundedJson out;
  bool too_deep = false;
  std::vector<std::unordered_set<std::string>> keys;  // per nesting depth, the open object's
  const auto depth_check = [&](int depth, nlohmann::ordered_json::parse_event_t event,
                               nlohmann::ordered_json& parsed) {
    if (static_cast<std::size_t>(depth) > max_depth) too_deep = true;
    if (too_deep || repeated == RepeatedKeys::kIgnore || !out.repeated_key.empty())
      return !too_deep;
    const auto at = static_cast<std::size_t>(depth);
    if (event == nlohmann::ordered_json::parse_event_t::object_start) {
      // Reported at the parent's depth: the object's keys come at the next one.
      if (keys.size() < at + 2) keys.resize(at + 2);
      keys[at + 1].clear();
    } else if (event == nlohmann::ordered_json::parse_event_t::key && parsed.is_string() &&
               (repeated == RepeatedKeys::kAnyLevel || depth == 1) && at < keys.size() &&
               !keys[at].insert(parsed.get_ref<const std::string&>()).second) {
      out.repeated_key = parsed.get<std::string>();
    }
    return true;
  };
  try {
    out.value = nlohmann::ordered_json::parse(text.begin(), text.end(), depth_check);
  } catch (const nlohmann::ordered_json::exception& e) {
    if (!too_deep) {
      out.failure = BoundedJson::Failure::kSyntax;
      out.what = e.what();
    }
  }
  if (too_deep) out.failure = BoundedJson::Failure::kTooDeep;
  return out;
}

}  // namespace chatwire::util
