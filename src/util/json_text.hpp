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

// Where to look for a key an object holds twice: the top-level object's keys, those of the
// objects inside it, or both.
enum class RepeatedKeys { kIgnore, kTopLevel, kNested, kAnyLevel };

// Follows a parse's callback events and records the first key an object holds twice, where
// asked (the parsed value keeps one value per key: the caller reports the other or keeps the
// text). `member` is the top-level member the key was found in (for kNested).
struct RepeatedKeyWatch {
  explicit RepeatedKeyWatch(RepeatedKeys looked_for) : where(looked_for) {}
  RepeatedKeys where;
  std::string key, member;
  void operator()(int depth, nlohmann::ordered_json::parse_event_t event,
                  const nlohmann::ordered_json& parsed) {
    if (where == RepeatedKeys::kIgnore || !key.empty()) return;
    const auto at = static_cast<std::size_t>(depth);
    if (event == nlohmann::ordered_json::parse_event_t::object_start) {
      // (an object's start comes at its parent's depth, its keys at the next one)
      if (keys_.size() < at + 2) keys_.resize(at + 2);
      keys_[at + 1].clear();
      return;
    }
    if (event != nlohmann::ordered_json::parse_event_t::key || !parsed.is_string() ||
        at >= keys_.size())
      return;
    const std::string& k = parsed.get_ref<const std::string&>();
    if (depth == 1) current_ = k;
    const bool looked =
        where == RepeatedKeys::kAnyLevel ||
        (depth == 1 ? where == RepeatedKeys::kTopLevel : where == RepeatedKeys::kNested);
    if (!keys_[at].insert(k).second && looked) {
      key = k;
      member = current_;
    }
  }

 private:
  std::vector<std::unordered_set<std::string>> keys_;  // per depth, the open object's keys
  std::string current_;                                // the top-level member being read
};

inline BoundedJson parse_bounded_json(std::string_view text, std::size_t max_depth,
                                      RepeatedKeys repeated = RepeatedKeys::kIgnore) {
  BoundedJson out;
  bool too_deep = false;
  RepeatedKeyWatch watch(repeated);
  const auto depth_check = [&](int depth, nlohmann::ordered_json::parse_event_t event,
                               nlohmann::ordered_json& parsed) {
    if (static_cast<std::size_t>(depth) > max_depth) too_deep = true;
    if (!too_deep) watch(depth, event, parsed);
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
  out.repeated_key = std::move(watch.key);
  return out;
}

}  // namespace chatwire::util
