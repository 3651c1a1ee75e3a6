// JSON text from outside (requests, tools, cached profiles and parsers, config files) parsed
// with a nesting limit checked while parsing, so no caller reads untrusted JSON unbounded. One
// header, inline, for the components that take JSON text (parse links no library of ours).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace chatwire::util {

struct BoundedJson {
  enum class Failure { kNone, kSyntax, kTooDeep };
  nlohmann::ordered_json value;  // discarded unless failure is kNone
  Failure failure = Failure::kNone;
  std::string what;  // the parser's message for kSyntax (it names the byte position)
  explicit operator bool() const { return failure == Failure::kNone; }
};

inline BoundedJson parse_bounded_json(std::string_view text, std::size_t max_depth) {
  BoundedJson out;
  bool too_deep = false;
  const auto depth_check = [&](int depth, nlohmann::ordered_json::parse_event_t,
                               nlohmann::ordered_json&) {
    if (static_cast<std::size_t>(depth) > max_depth) too_deep = true;
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
