// Text measurements the probe makes on rendered prompts: atoms (markers stay whole),
// the differing region of two renders, markers, turn-header patterns. Internal to probe;
// scripts/probe-oracle.py holds the same rules in Python, and both must agree.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chatwire::probe::text {

// ASCII whitespace only, so that both implementations strip the same characters.
inline constexpr std::string_view kWhitespace = " \t\n\r\f\v";
std::string_view strip(std::string_view s);
std::string_view lstrip(std::string_view s);
std::string_view rstrip(std::string_view s);
bool contains(std::string_view haystack, std::string_view needle);
bool is_word_char(char c);  // ASCII letter, digit or underscore

// Byte length of the marker starting at `pos` (<...> without whitespace or angle brackets
// inside, 1-64 code points; or [UPPER_CASE], 2-32 characters), 0 when none starts there.
std::size_t marker_at(std::string_view s, std::size_t pos);
// Every marker of `s`, scanning left to right.
std::vector<std::string> markers(std::string_view s);
// The marker with its bracket characters (<>[]|｜) stripped from both ends.
std::string marker_core(std::string_view marker);

// Where the atoms of `s` start (whole markers or single code points), then s.size().
std::vector<std::size_t> atom_starts(std::string_view s);

// The region where a and b differ once their common prefix and suffix (counted in atoms:
// whole markers or single code points) are removed.
struct DiffRegion {
  std::size_t start = 0, end_a = 0, end_b = 0;
};
DiffRegion diff_region(std::string_view a, std::string_view b);

// A turn header with any role word, derived from a user-turn prefix.
class HeaderPattern {
 public:
  // nullptr when the prefix names no role ("user", any case).
  static std::unique_ptr<HeaderPattern> from_user_prefix(std::string_view user_prefix);
  ~HeaderPattern();
  HeaderPattern(const HeaderPattern&) = delete;
  HeaderPattern& operator=(const HeaderPattern&) = delete;

  struct Match {
    std::size_t begin = 0, end = 0;
    std::string role;  // the first role capture
  };
  // The header starting last in [lo, hi) that ends at or before hi.
  std::optional<Match> last(std::string_view output, std::size_t lo, std::size_t hi) const;

 private:
  HeaderPattern() = default;
  std::string lead_;
  void* code_ = nullptr;  // pcre2_code_8
};

}  // namespace chatwire::probe::text
