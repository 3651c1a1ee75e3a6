// Binds a call's positional and keyword arguments to a filter's / global's
// parameter list, the way Python binds a def's signature.
#pragma once

#include <array>
#include <initializer_list>
#include <string>
#include <string_view>

#include "chatwire/value.hpp"
#include "jinja/state.hpp"

namespace chatwire::jinja {

template <std::size_t N>
struct Bound {
  std::array<const Value*, N> slot{};
  bool has(std::size_t i) const { return slot[i] != nullptr; }
  const Value& get(std::size_t i, const Value& fallback) const {
    return slot[i] ? *slot[i] : fallback;
  }
};

// `fn` names the Python function in messages (e.g. "do_indent").
template <std::size_t N>
Bound<N> bind_args(std::string_view fn, const CallArgs& args,
                   const std::array<std::string_view, N>& names) {
  Bound<N> b;
  if (args.positional.size() > N)
    raise("TypeError", std::string(fn) + "() takes from 1 to " + std::to_string(N + 1) +
                           " positional arguments but " +
                           std::to_string(args.positional.size() + 1) + " were given");
  for (std::size_t i = 0; i < args.positional.size(); ++i) b.slot[i] = &args.positional[i];
  for (const auto& kw : args.keyword) {
    std::size_t i = 0;
    while (i < N && names[i] != kw.name) ++i;
    if (i == N)
      raise("TypeError", std::string(fn) + "() got an unexpected keyword argument '" +
                             std::string(kw.name) + "'");
    if (b.slot[i])
      raise("TypeError",
            std::string(fn) + "() got multiple values for argument '" + std::string(kw.name) + "'");
    b.slot[i] = &kw.value;
  }
  return b;
}

}  // namespace chatwire::jinja
