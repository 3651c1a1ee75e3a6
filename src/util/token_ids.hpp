// Token ids read from JSON (a request's, a backend's, a command's input): an array of integers
// from 0 to 2^32-1. Anything else is refused, naming the element, never converted (1.7, -1 and
// 4294967297 are no ids). Header-only, for any nlohmann basic_json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace chatwire::util {

// Whether `j` is one token id.
template <typename Json>
bool is_token_id(const Json& j) {
  return j.is_number_unsigned() && j.template get<std::uint64_t>() <= 0xffffffffu;
}

// The ids of `j`; nullopt when it is not such an array, with `bad` the index of the first
// element that is no id (0 when `j` is not an array at all: check is_array() to tell).
template <typename Json>
std::optional<std::vector<std::uint32_t>> token_ids(const Json& j, std::size_t& bad) {
  bad = 0;
  if (!j.is_array()) return std::nullopt;
  std::vector<std::uint32_t> ids;
  ids.reserve(j.size());
  for (const auto& id : j) {
    if (!is_token_id(id)) return std::nullopt;
    ids.push_back(static_cast<std::uint32_t>(id.template get<std::uint64_t>()));
    ++bad;
  }
  return ids;
}

}  // namespace chatwire::util
