// JSON text from outside (requests, tools, cached profiles and parsers, config files) parsed
// with a nesting limit checked while parsing, so no caller reads untrusted JSON unbounded. One
// header, inline, for the components that take JSON text (parse links no library of ours).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>

namespace chatwire::util {

struct BoundedJson {
  enum class Failure { kNone, kSyntax, kTooDeep };
  nlohmann::ordered_json value;  // discarded unless failure is kNone
  Failure failure = Failure::kNone;
  std::string what;  // the parser's message for kSyntax (it names the byte position)
  // The first key the top-level object holds twice: the reader keeps one value, so the caller
  // may report the other (empty: none).
  std::string repeated_key;
  explicit operator bool() const { return failure == Failure::kNone; }
};

// `find_repeated_key`: also look for a key the top-level object holds twice (repeated_key).
inline BoundedJson parse_bounded_json(std::string_view text, std::size_t max_depth,
                                      bool find_repeated_key = false) {
  BoundedJson out;
  bool too_deep = false;
  std::unordered_set<std::string> top_keys;
  const auto depth_check = [&](int depth, nlohmann::ordered_json::parse_event_t event,
                               nlohmann::ordered_json& parsed) {
    if (static_cast<std::size_t>(depth) > max_depth) too_deep = true;
    if (find_repeated_key && event == nlohmann::ordered_json::parse_event_t::key && depth == 1 &&
        out.repeated_key.empty() && parsed.is_string() &&
        !top_keys.insert(parsed.get_ref<const std::string&>()).second)
      out.repeated_key = parsed.get<std::string>();
    return !too_deep;
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
