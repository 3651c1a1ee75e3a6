// Pre-tokenizers: each step turns the current pieces into finer pieces (and, for ByteLevel's
// prefix space and Metaspace, rewrites the text). Split behaviours follow HF's
// NormalizedString::split exactly, including the dropping of empty pieces.
#include "tokenize/pipeline.hpp"
#include "tokenize/unicode.hpp"

namespace chatwire::tokenize {
namespace {

struct Match {
  Span span;
  bool is_match;
};

// HF: the matches of a pattern inside a piece become alternating (non-match, match) ranges,
// then the behaviour decides what is kept and merged. The forward behaviours go through
// apply_behavior_direct; this is MergedWithNext, a match joined to the range after it, read
// backwards over the ranges. Appends the kept non-empty pieces.
void merged_with_next(const std::vector<Match>& ranges, bool invert, SpanVector& out) {
  thread_local SpanVector acc;  // reused: no allocation per piece
  acc.clear();
  bool previous_match = false;
  for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) {
    const bool is_match = it->is_match != invert;
    if (is_match && !previous_match && !acc.empty()) {
      acc.back().first = it->span.first;
    } else {
      acc.push_back(it->span);
    }
    previous_match = is_match;
  }
  for (auto it = acc.rbegin(); it != acc.rend(); ++it) {
    if (it->second > it->first) out.push_back(*it);
  }
}

// The forward behaviours applied as the ranges are produced (no list of ranges: for a large piece
// it was 12 bytes a range of fresh pages). MergedWithNext (false) goes through merged_with_next.
bool apply_behavior_direct(const SpanVector& matches, std::uint32_t b, std::uint32_t e,
                           SplitBehavior behavior, bool invert, SpanVector& out) {
  if (behavior == SplitBehavior::kMergedWithNext) return false;
  auto push = [&out](Span s) {
    if (s.second > s.first) out.push_back(s);
  };
  bool have = false;  // MergedWithPrevious / Contiguous: `last` is pending (may still grow)
  Span last{0, 0};
  bool previous_match = false;
  auto range = [&](Span span, bool is_match) {
    if (invert) is_match = !is_match;
    switch (behavior) {
      case SplitBehavior::kIsolated:
        push(span);
        return;
      case SplitBehavior::kRemoved:
        if (!is_match) push(span);
        return;
      case SplitBehavior::kMergedWithPrevious:
      case SplitBehavior::kContiguous:
        // The range joins the pending one: a match after a non-match (MergedWithPrevious), or a
        // range of the same kind (Contiguous).
        if (have && (behavior == SplitBehavior::kContiguous ? is_match == previous_match
                                                            : is_match && !previous_match)) {
          last.second = span.second;
        } else {
          if (have) push(last);
          last = span;
          have = true;
        }
        previous_match = is_match;
        return;
      case SplitBehavior::kMergedWithNext:
        return;
    }
  };
  std::uint32_t start = b;
  for (auto [mb, me] : matches) {
    if (start != mb) range({start, mb}, false);
    range({mb, me}, true);
    start = me;
  }
  if (start != e) range({start, e}, false);
  if (have) push(last);
  return true;
}

// Whether the matches cover [b, e) end to end with no gap and none empty: then the Isolated
// behaviour keeps exactly them.
bool tiles(const SpanVector& matches, std::uint32_t b, std::uint32_t e) {
  std::uint32_t at = b;
  for (auto [mb, me] : matches) {
    if (mb != at || me <= mb) return false;
    at = me;
  }
  return at == e;
}

// Matches (absolute offsets) -> alternating ranges covering [b, e).
void to_ranges(const SpanVector& matches, std::uint32_t b, std::uint32_t e,
               std::vector<Match>& ranges) {
  ranges.clear();
  std::uint32_t start = b;
  for (auto [mb, me] : matches) {
    if (start != mb) ranges.push_back({{start, mb}, false});
    ranges.push_back({{mb, me}, true});
    start = me;
  }
  if (start != e) ranges.push_back({{start, e}, false});
}

template <typename Predicate>
void char_matches(const std::string& s, std::uint32_t b, std::uint32_t e, Predicate pred,
                  SpanVector& out) {
  out.clear();
  std::size_t i = b;
  while (i < e) {
    std::size_t len;
    char32_t cp = unicode::decode_utf8(s, i, len);
    if (pred(cp))
      out.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + len));
    i += len;
  }
}

bool is_ascii_punctuation(char32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

}  // namespace

Result<bool> pre_tokenize(const std::vector<PreTokenizerStep>& steps, PreTokenized& state,
                          bool at_input_start, Text& scratch, SpanVector& next,
                          SpanVector& matches) {
  thread_local std::vector<Match> ranges;  // reused: no allocation per call
  for (const PreTokenizerStep& step : steps) {
    Text& text = state.text;
    next.clear();
    // Steps that rewrite the text first build the new text and pieces.
    if ((step.kind == PreTokenizerKind::kByteLevel && step.add_prefix_space) ||
        step.kind == PreTokenizerKind::kMetaspace) {
      scratch.clear();
      scratch.track = text.track;
      for (const auto& piece : state.pieces) {
        // Named copies, not a structured binding: clang 14 cannot capture those in a lambda.
        const auto b = piece.first;
        const auto e = piece.second;
        auto nb = static_cast<std::uint32_t>(scratch.s.size());
        std::uint32_t first_len = static_cast<std::uint32_t>(std::min<std::size_t>(
            unicode::utf8_length(static_cast<unsigned char>(text.s[b])), e - b));
        auto prefix = [&](std::string_view what) {
          if (text.track) {
            scratch.append(what, text.begin[b], text.end[b + first_len - 1]);
          } else {
            scratch.s += what;
          }
        };
        if (step.kind == PreTokenizerKind::kByteLevel) {
          if (text.s[b] != ' ') prefix(" ");
          scratch.append_from(text, b, e);
        } else {
          // Metaspace: spaces become the replacement, then the prefix per prepend_scheme.
          bool starts_with_replacement =
              text.s.compare(b, step.replacement.size(), step.replacement) == 0 || text.s[b] == ' ';
          bool starts_input = text.track ? text.begin[b] == 0 : (at_input_start && b == 0);
          if (!starts_with_replacement &&
              (step.prepend_scheme == PrependScheme::kAlways ||
               (step.prepend_scheme == PrependScheme::kFirst && starts_input))) {
            prefix(step.replacement);
          }
          for (std::uint32_t i = b; i < e; ++i) {
            if (text.s[i] == ' ') {
              if (text.track) {
                scratch.append(step.replacement, text.begin[i], text.end[i]);
              } else {
                scratch.s += step.replacement;
              }
            } else {
              scratch.append_from(text, i, i + 1);
            }
          }
        }
        next.emplace_back(nb, static_cast<std::uint32_t>(scratch.s.size()));
      }
      std::swap(state.text, scratch);
      std::swap(state.pieces, next);
      next.clear();
    }
    Text& t = state.text;
    bool splits = true;
    bool took_matches = false;
    for (auto [b, e] : state.pieces) {
      matches.clear();
      SplitBehavior behavior = SplitBehavior::kIsolated;
      bool invert = false;
      switch (step.kind) {
        case PreTokenizerKind::kByteLevel:
          if (!step.use_regex) {
            splits = false;
            break;
          }
          [[fallthrough]];
        case PreTokenizerKind::kSplit:
        case PreTokenizerKind::kWhitespace: {
          behavior = step.kind == PreTokenizerKind::kSplit        ? step.behavior
                     : step.kind == PreTokenizerKind::kWhitespace ? SplitBehavior::kRemoved
                                                                  : SplitBehavior::kIsolated;
          invert = step.kind == PreTokenizerKind::kWhitespace
                       ? true
                       : (step.kind == PreTokenizerKind::kSplit && step.invert);
          if (step.regex) {
            auto r = step.regex->find_all(std::string_view(t.s).substr(b, e - b), matches);
            if (!r) return r.error();
            for (auto& m : matches) {
              m.first += b;
              m.second += b;
            }
          } else if (!step.literal.empty()) {
            std::size_t pos = b;
            while ((pos = t.s.find(step.literal, pos)) != std::string::npos &&
                   pos + step.literal.size() <= e) {
              matches.emplace_back(static_cast<std::uint32_t>(pos),
                                   static_cast<std::uint32_t>(pos + step.literal.size()));
              pos += step.literal.size();
            }
          }
          break;
        }
        case PreTokenizerKind::kMetaspace:
          if (!step.split) {
            splits = false;
            break;
          }
          behavior = SplitBehavior::kMergedWithNext;
          {
            char32_t rep;
            std::size_t len;
            rep = unicode::decode_utf8(step.replacement, 0, len);
            char_matches(
                t.s, b, e, [rep](char32_t c) { return c == rep; }, matches);
          }
          break;
        case PreTokenizerKind::kDigits:
          behavior = step.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous;
          char_matches(
              t.s, b, e, [](char32_t c) { return unicode::is_number(c); }, matches);
          break;
        case PreTokenizerKind::kWhitespaceSplit:
          behavior = SplitBehavior::kRemoved;
          char_matches(
              t.s, b, e, [](char32_t c) { return unicode::is_white_space(c); }, matches);
          break;
        case PreTokenizerKind::kPunctuation:
          behavior = step.behavior;
          char_matches(
              t.s, b, e,
              [](char32_t c) { return is_ascii_punctuation(c) || unicode::is_punctuation(c); },
              matches);
          break;
        case PreTokenizerKind::kCharDelimiterSplit: {
          behavior = SplitBehavior::kRemoved;
          std::size_t len;
          char32_t delim = unicode::decode_utf8(step.literal, 0, len);
          char_matches(
              t.s, b, e, [delim](char32_t c) { return c == delim; }, matches);
          break;
        }
      }
      if (!splits) break;
      if (b == e) continue;
      if (next.empty() && state.pieces.size() == 1 && behavior == SplitBehavior::kIsolated &&
          !invert && tiles(matches, b, e)) {
        // The matches are the pieces (GPT-2's and Llama 3's patterns match every byte): taken
        // over, not copied into a second list of the same size (for 1 MB of text, 2.4 MB of
        // fresh pages that a one-shot encode pays to fault in).
        std::swap(next, matches);
        took_matches = true;
        continue;
      }
      if (apply_behavior_direct(matches, b, e, behavior, invert, next)) continue;
      to_ranges(matches, b, e, ranges);
      merged_with_next(ranges, invert, next);
    }
    if (splits) std::swap(state.pieces, next);
    // The old pieces' list (written already) is the next matches' list, and the untouched one
    // stays spare: texts between added tokens alternate between two lists instead of three.
    if (took_matches) std::swap(next, matches);
  }
  return true;
}

}  // namespace chatwire::tokenize
