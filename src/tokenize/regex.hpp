// The regexes of tokenizer.json (Split pre-tokenizers, Replace normalizers/decoders), with HF's
// semantics: Oniguruma syntax, leftmost-first alternation, Unicode 16 classes.
// - The common pre-tokenizer patterns (GPT-2, cl100k/Llama 3, Qwen 2/3, o200k/gpt-oss, DeepSeek V3)
//   and any pattern that is one character class repeated (X+, X{1,n}) run on hand-written
//   scanners (much faster than any regex engine); tests check them against the PCRE2 path.
// - Every other pattern runs on PCRE2 (JIT) after \p{..}, \s, \d, \w are rewritten into explicit
//   Unicode 16 ranges, so that PCRE2's older tables do not change the splits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chatwire/error.hpp"
#include "tokenize/flat_map.hpp"

namespace chatwire::tokenize {

using Span = std::pair<std::uint32_t, std::uint32_t>;  // [begin, end) byte offsets
// Lists of spans grow to a few per byte of a large input: huge pages once they are large.
using SpanVector = HugeVector<Span>;

enum class RegexScanner {
  kNone,
  kGpt2,
  kCl100k,
  kO200k,
  kDeepseek,  // DeepSeek V3's word pattern
  kClassRun,  // one character class, repeated: X+ or X{1,n} (X = \p{..} or [chars and ranges])
};

struct RegexOptions {
  bool hand_scanners = true;               // false: always PCRE2 (used by tests to compare)
  std::uint32_t match_limit = 10'000'000;  // PCRE2 backtracking limit per match attempt
};

class Regex {
 public:
  static Result<std::shared_ptr<Regex>> compile(std::string_view pattern,
                                                const RegexOptions& options = {});
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends every non-overlapping match of `text`, left to right (Oniguruma find_iter: after an
  // empty match the search moves on by one character). Text must be valid UTF-8.
  Result<bool> find_all(std::string_view text, SpanVector& out) const;

  const std::string& pattern() const { return pattern_; }
  RegexScanner scanner() const { return scanner_; }

 private:
  Regex() = default;
  std::string pattern_;
  RegexScanner scanner_ = RegexScanner::kNone;
  unsigned max_digits_ = 0;  // cl100k family: \p{N}{1,max}; 0 = unbounded
  // kClassRun: the class (sorted code point ranges, and ASCII as a bit set) and the longest run
  // one match takes (0 = unbounded).
  std::vector<std::pair<char32_t, char32_t>> class_ranges_;
  std::uint64_t class_ascii_[2] = {0, 0};
  std::size_t class_max_ = 0;
  bool parse_class_run(std::string_view pattern);
  bool in_class(char32_t cp) const;
  void* code_ = nullptr;  // pcre2_code_8*
  std::uint32_t match_limit_ = 0;
};

// The regex with Oniguruma's class escapes replaced by explicit Unicode 16 ranges (exposed for
// tests). Errors on an unknown \p{..} name.
Result<std::string> rewrite_unicode_classes(std::string_view pattern);

}  // namespace chatwire::tokenize
