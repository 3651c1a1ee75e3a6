// The loaded, immutable form of a tokenizer.json (internal). One struct per kind of pipeline step;
// Sequence steps are flattened at load (applying a Sequence = applying its members in order).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/tokenize.hpp"
#include "tokenize/flat_map.hpp"
#include "tokenize/regex.hpp"

namespace chatwire::tokenize {

constexpr std::uint32_t kNoId = 0xFFFFFFFFu;

// ---- normalizers ----
enum class NormalizerKind {
  kNfc,
  kNfd,
  kNfkc,
  kNfkd,
  kLowercase,
  kStrip,
  kReplace,
  kPrepend,
  kStripAccents,
};
struct NormalizerStep {
  NormalizerKind kind;
  std::string pattern;           // Replace: literal pattern (when regex is null)
  std::shared_ptr<Regex> regex;  // Replace: regex pattern
  std::string content;           // Replace: replacement; Prepend: prefix
  bool strip_left = false, strip_right = false;
};

// ---- pre-tokenizers ----
enum class PreTokenizerKind {
  kByteLevel,
  kSplit,
  kMetaspace,
  kDigits,
  kWhitespace,
  kWhitespaceSplit,
  kPunctuation,
  kCharDelimiterSplit,
};
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
enum class PrependScheme { kAlways, kFirst, kNever };
struct PreTokenizerStep {
  PreTokenizerKind kind;
  // ByteLevel
  bool add_prefix_space = false;
  bool use_regex = true;
  // Split / Punctuation / CharDelimiterSplit / Digits
  std::string literal;           // Split with a String pattern; CharDelimiterSplit delimiter
  std::shared_ptr<Regex> regex;  // Split with a Regex pattern; ByteLevel's GPT-2 regex
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  bool individual_digits = false;
  // Metaspace
  std::string replacement = "\xE2\x96\x81";  // U+2581
  PrependScheme prepend_scheme = PrependScheme::kAlways;
  bool split = true;
};

// ---- post-processors (only with add_special_tokens) ----
struct TemplatePiece {
  bool is_sequence = false;                // $A (else a special token)
  std::vector<std::uint32_t> special_ids;  // ids of the special token
};

// ---- decoders ----
enum class DecoderKind {
  kByteLevel,
  kMetaspace,
  kByteFallback,
  kFuse,
  kStrip,
  kReplace,
  kWordPiece
};
struct DecoderStep {
  DecoderKind kind;
  std::string pattern, content;  // Replace (literal), Strip content char (UTF-8)
  std::shared_ptr<Regex> regex;  // Replace with a Regex pattern
  std::size_t strip_start = 0, strip_stop = 0;
  std::string replacement = "\xE2\x96\x81";  // Metaspace
  bool prepend = true;                       // Metaspace: prepend_scheme != never
  std::string prefix = "##";                 // WordPiece
  bool cleanup = true;                       // WordPiece
};

// Added tokens matcher: a byte trie with leftmost-longest matching (HF's aho-corasick
// MatchKind::LeftmostLongest over the token contents).
struct AddedTrie {
  struct Node {
    std::uint32_t token = kNoId;  // index into TokenizerData::added (a match ends here)
    std::vector<std::pair<unsigned char, std::uint32_t>> children;  // sorted by byte
  };
  std::vector<Node> nodes{1};
  std::array<std::uint32_t, 256> root_child{};  // 0 = none
  // A filter in front of the trie, so that the scan rarely walks it: per first byte, bit 0 = some
  // token shorter than 4 bytes starts with it, bit 1 = some longer one does; for the longer ones, a
  // hashed bit set of their first 4 bytes. (Llama 2's normalized "\u2581<s>" would otherwise send
  // every U+2581, i.e. every space, into the trie.)
  std::array<std::uint8_t, 256> first_kind{};
  std::vector<unsigned char> first_bytes;  // the distinct first bytes
  std::vector<std::uint64_t> prefix_bits = std::vector<std::uint64_t>(kPrefixBits / 64);
  static constexpr std::size_t kPrefixBits = std::size_t{1} << 16;
  static std::uint32_t prefix_hash(std::uint32_t first4) { return (first4 * 0x9E3779B1u) >> 16; }
  bool empty() const { return nodes.size() == 1; }
  void insert(std::string_view key, std::uint32_t token);
  // Longest match starting at text[pos]: returns the added index and sets len, or kNoId.
  std::uint32_t longest_at(std::string_view text, std::size_t pos, std::size_t& len) const;
  // The first position in [pos, to) where a token of the trie may start (to if none): every
  // position it skips has no match within text[0, to).
  std::size_t next_candidate(std::string_view text, std::size_t pos, std::size_t to) const;
};

struct AddedToken {
  std::string content;
  std::uint32_t id = 0;
  bool special = false, normalized = false, lstrip = false, rstrip = false, single_word = false;
};

enum class ModelKind { kBpe, kWordLevel };

struct TokenizerData {
  // ---- model ----
  ModelKind model = ModelKind::kBpe;
  bool byte_level = false;  // vocab keys are raw bytes (a ByteLevel pre-tokenizer is present)
  StringIdMap vocab;        // token bytes (raw for byte-level) -> id
  // Distinct tokens of the vocabulary and the added tokens together (tokenizers'
  // get_vocab_size(true): an added token whose content is a vocabulary key counts once).
  std::size_t vocab_with_added = 0;
  MergeTable merges;  // (left, right) -> (rank, merged id)
  std::uint32_t unk_id = kNoId;
  bool fuse_unk = false, byte_fallback = false, ignore_merges = false;
  std::string continuing_subword_prefix, end_of_word_suffix;
  std::array<std::uint32_t, 256> byte_id{};           // byte-level: the token of one raw byte
  std::array<std::uint32_t, 256> byte_fallback_id{};  // "<0xXX>" tokens
  std::array<std::uint32_t, 128> ascii_id{};          // SentencePiece-style: one ASCII char
  bool simple_bpe = false;  // no prefix/suffix: the fast symbol path applies
  // SentencePiece-style files have no pre-tokenizer: the whole text is one BPE word. When no vocab
  // token holds U+2581 after a character c (except the few in `metaspace_glue`), no merge can cross
  // "c|U+2581", so the word is cut there into independent (and cacheable) words: same result,
  // linear.
  bool metaspace_split = false;
  std::vector<char32_t> metaspace_glue;
  bool is_glue(char32_t c) const {
    if (c < 128) return (metaspace_glue_ascii[c >> 6] >> (c & 63)) & 1;
    return std::find(metaspace_glue.begin(), metaspace_glue.end(), c) != metaspace_glue.end();
  }
  std::array<std::uint64_t, 2> metaspace_glue_ascii{};  // the ASCII members of metaspace_glue
  // Hard word boundaries (SentencePiece-style BPE without a pre-tokenizer, where the "words" are
  // long): bit join_bucket(c1) << 8 | join_bucket(c2) of join_bits is set when some merge joins a
  // symbol ending in c1 to one starting with c2. Where it is clear, no merge can ever cross between
  // the two characters, so the word is cut there: the parts' BPE, concatenated, is the whole's (the
  // merges of the two sides never interact), and short words merge faster and repeat more. Only
  // when no merge involves unk or a byte-fallback token, and fuse_unk cannot join unknown
  // characters across a cut.
  bool split_words = false;
  std::array<std::uint64_t, 1024> join_bits{};
  static unsigned join_bucket(char32_t c) {
    return c < 128 ? static_cast<unsigned>(c)
                   : 128 + ((static_cast<std::uint32_t>(c) * 0x9E3779B1u) >> 25);
  }
  bool may_join(unsigned left_bucket, unsigned right_bucket) const {
    const unsigned bit = left_bucket << 8 | right_bucket;
    return (join_bits[bit >> 6] >> (bit & 63)) & 1;
  }

  // id -> token text as in the file (for decode and id_to_token).
  // Huge pages: for Gemma 3's 262k tokens these are 4 MB and 2.5 MB, 1600 page faults otherwise.
  HugeVector<std::string_view> id_text;
  std::vector<std::uint8_t> id_flags;  // bit 0: special added token, bit 1: added token
  HugeVector<char> arena;              // storage for id_text

  // ---- added tokens ----
  std::vector<AddedToken> added;
  StringIdMap
      added_content;  // content -> id, every added token (the ByteLevel decoder passes them raw)
  StringIdMap special_content;  // content -> id: special added tokens and config's
                                // additional_special_tokens
  AddedTrie raw_trie;           // normalized:false tokens, matched on the input
  AddedTrie normalized_trie;    // normalized:true tokens, matched on normalized text (their content
                                // normalized)

  // ---- pipeline ----
  std::vector<NormalizerStep> normalizers;
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::vector<DecoderStep> decoders;
  std::vector<TemplatePiece> post_single;  // empty: the post-processor adds nothing
  bool has_post_template = false;

  // ---- tokenizer_config.json ----
  bool clean_up_tokenization_spaces = false;
  std::optional<std::string> bos_token, eos_token;

  std::uint64_t serial = 0;  // distinguishes tokenizers in the per-thread word caches
};

}  // namespace chatwire::tokenize
