// Loading tokenizer.json (+ tokenizer_config.json) into TokenizerData. One table per kind of
// pipeline step maps the JSON "type" to a parser; anything unknown is a clear "not supported".
#include <algorithm>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <atomic>
#include <cstdio>
#if defined(__unix__)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "tokenize/json.hpp"
#include "tokenize/pipeline.hpp"
#include "tokenize/unicode.hpp"
#include "util/file_bytes.hpp"

namespace chatwire::tokenize {
namespace {

using json::Document;
using json::Kind;
using json::Node;

Error tokenizer_error(std::string path, std::string message) {
  return Error{"TokenizerError", std::move(message), 0, 0, std::move(path)};
}

// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others for U+0100 onwards.
struct ByteLevelAlphabet {
  std::array<char32_t, 256> byte_to_char{};
  std::array<std::int16_t, 324> char_to_byte{};  // index = code point (all are < 324)
  ByteLevelAlphabet() {
    char_to_byte.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      char32_t c = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      byte_to_char[b] = c;
      char_to_byte[c] = static_cast<std::int16_t>(b);
    }
  }
  // Raw bytes of a byte-level token; false when a character is outside the alphabet. Every
  // character of the alphabet is below U+0144: one byte, or two with a lead byte 0xC2-0xC5.
  bool to_bytes(std::string_view token, std::string& out) const {
    out.resize(token.size());  // a character is at least one byte
    const std::size_t n = to_bytes(token, out.data());
    if (n == kUnmapped) {
      out.clear();
      return false;
    }
    out.resize(n);
    return true;
  }
  // The same into out (room for token.size() bytes): the length, or kUnmapped.
  static constexpr std::size_t kUnmapped = ~std::size_t{0};
  std::size_t to_bytes(std::string_view token, char* out) const {
    char* w = out;
    const auto* s = reinterpret_cast<const unsigned char*>(token.data());
    const std::size_t n = token.size();
    std::size_t i = 0;
    while (i < n) {
      char32_t cp = s[i];
      if (cp >= 0x80) {
        if (cp < 0xC2 || cp > 0xC5 || i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return kUnmapped;
        cp = ((cp & 0x1F) << 6) | (s[i + 1] & 0x3F);
        ++i;
      }
      ++i;
      if (cp >= char_to_byte.size() || char_to_byte[cp] < 0) return kUnmapped;
      *w++ = static_cast<char>(char_to_byte[cp]);
    }
    return static_cast<std::size_t>(w - out);
  }
};

// Copies the first and the last w bytes of n (w <= n <= 2w, so all of them) for a word of w bytes.
template <typename Word>
inline void copy_ends(char* to, const char* from, std::size_t n) {
  Word a, b;
  std::memcpy(&a, from, sizeof(Word));
  std::memcpy(&b, from + n - sizeof(Word), sizeof(Word));
  std::memcpy(to, &a, sizeof(Word));
  std::memcpy(to + n - sizeof(Word), &b, sizeof(Word));
}

// Copies n bytes without a libc call when n is small (the tokens of a vocabulary mostly are).
inline void copy_bytes(char* to, const char* from, std::size_t n) {
  if (n >= 8 && n <= 16) {
    copy_ends<std::uint64_t>(to, from, n);
  } else if (n >= 4 && n < 8) {
    copy_ends<std::uint32_t>(to, from, n);
  } else if (n < 4) {
    for (std::size_t i = 0; i < n; ++i) to[i] = from[i];
  } else {
    std::memcpy(to, from, n);
  }
}

// a[0, n) == b[0, n), without a libc call when n is small.
inline bool same_bytes(const char* a, const char* b, std::size_t n) {
  return n <= 16 ? equal_short(a, b, n) : std::memcmp(a, b, n) == 0;
}

// Bytes appended at the end of one reused buffer (the keys of a batch).
class ByteBuffer {
 public:
  // Room for n more bytes at the end; commit() what was written.
  char* room(std::size_t n) {
    if (used_ + n > bytes_.size()) bytes_.resize(std::max(bytes_.size() * 2, used_ + n + 4096));
    return bytes_.data() + used_;
  }
  void commit(std::size_t n) { used_ += n; }
  void append(std::string_view s) {
    copy_bytes(room(s.size()), s.data(), s.size());
    used_ += s.size();
  }
  const char* data() const { return bytes_.data(); }
  std::size_t size() const { return used_; }
  void clear() { used_ = 0; }

 private:
  std::string bytes_;
  std::size_t used_ = 0;
};

const ByteLevelAlphabet& alphabet() {
  static const ByteLevelAlphabet a;
  return a;
}

std::string_view str_or(const Document& doc, const Node& obj, std::string_view key,
                        std::string_view fallback) {
  const Node* n = doc.get(obj, key);
  return json::is_string(n) ? n->text : fallback;
}

class Loader {
 public:
  Loader(const Document& doc, const LoadOptions& options, TokenizerData& d)
      : doc_(doc), opt_(options), d_(d) {}

  Result<bool> run() {
    const Node& root = doc_.root();
    if (root.kind != Kind::kObject)
      return tokenizer_error("", "tokenizer.json is not a JSON object");
    // Pre-tokenizers first: they decide whether the vocabulary is byte-level.
    if (const Node* n = doc_.get(root, "pre_tokenizer"); n && n->kind != Kind::kNull) {
      if (auto r = pre_tokenizer(*n, "pre_tokenizer"); !r) return r;
    }
    for (const auto& step : d_.pre_tokenizers) {
      if (step.kind == PreTokenizerKind::kByteLevel) d_.byte_level = true;
    }
    if (const Node* n = doc_.get(root, "normalizer"); n && n->kind != Kind::kNull) {
      if (auto r = normalizer(*n, "normalizer"); !r) return r;
    }
    const Node* model = doc_.get(root, "model");
    if (!model || model->kind != Kind::kObject)
      return tokenizer_error("model", "missing model object");
    if (auto r = load_model(*model); !r) return r;
    if (const Node* n = doc_.get(root, "added_tokens"); n && n->kind != Kind::kNull) {
      if (auto r = added_tokens(*n); !r) return r;
    }
    if (const Node* n = doc_.get(root, "decoder"); n && n->kind != Kind::kNull) {
      if (auto r = decoder(*n, "decoder"); !r) return r;
    }
    if (const Node* n = doc_.get(root, "post_processor"); n && n->kind != Kind::kNull) {
      if (auto r = post_processor(*n, "post_processor"); !r) return r;
    }
    return true;
  }

 private:
  Result<bool> count_step(const std::string& path) {
    if (++steps_ > opt_.max_pipeline_steps) {
      return Error{"LimitError", "more pipeline steps than max_pipeline_steps", 0, 0, path};
    }
    return true;
  }

  // A Sequence step: `load` on each element of the array n[key], in order.
  Result<bool> sequence(const Node& n, const std::string& path, std::string_view key,
                        Result<bool> (Loader::*load)(const Node&, const std::string&)) {
    const Node* list = doc_.get(n, key);
    if (!list || list->kind != Kind::kArray)
      return tokenizer_error(path, "Sequence without " + std::string(key));
    std::size_t i = 0;
    for (const Node* c = doc_.first(*list); c; c = doc_.next(*c), ++i) {
      const std::string item = path + "." + std::string(key) + "[" + std::to_string(i) + "]";
      if (auto r = (this->*load)(*c, item); !r) return r;
    }
    return true;
  }

  Result<std::shared_ptr<Regex>> pattern(const Node& obj, const std::string& path,
                                         std::string& literal) {
    const Node* p = doc_.get(obj, "pattern");
    if (!p || p->kind != Kind::kObject)
      return tokenizer_error(path + ".pattern", "missing pattern");
    if (const Node* s = doc_.get(*p, "String"); json::is_string(s)) {
      literal = std::string(s->text);
      return std::shared_ptr<Regex>();
    }
    const Node* r = doc_.get(*p, "Regex");
    if (!json::is_string(r))
      return tokenizer_error(path + ".pattern", "pattern is neither String nor Regex");
    if (r->text.size() > opt_.max_regex_bytes) {
      return Error{"LimitError", "regex longer than max_regex_bytes", 0, 0, path + ".pattern"};
    }
    auto re = Regex::compile(r->text);
    if (!re) {
      Error e = re.error();
      e.path = path + ".pattern";
      return e;
    }
    return *re;
  }

  // ---- normalizers ----
  Result<bool> normalizer(const Node& n, const std::string& path) {
    if (auto r = count_step(path); !r) return r;
    if (n.kind != Kind::kObject) return tokenizer_error(path, "normalizer is not an object");
    std::string_view type = str_or(doc_, n, "type", "");
    NormalizerStep step{};
    if (type == "Sequence") return sequence(n, path, "normalizers", &Loader::normalizer);
    struct Simple {
      std::string_view name;
      NormalizerKind kind;
    };
    static constexpr Simple kSimple[] = {
        {"NFC", NormalizerKind::kNfc},
        {"NFD", NormalizerKind::kNfd},
        {"NFKC", NormalizerKind::kNfkc},
        {"NFKD", NormalizerKind::kNfkd},
        {"Lowercase", NormalizerKind::kLowercase},
        {"StripAccents", NormalizerKind::kStripAccents},
    };
    for (const auto& s : kSimple) {
      if (type == s.name) {
        step.kind = s.kind;
        d_.normalizers.push_back(step);
        return true;
      }
    }
    if (type == "Strip") {
      step.kind = NormalizerKind::kStrip;
      step.strip_left = json::as_bool(doc_.get(n, "strip_left"), true);
      step.strip_right = json::as_bool(doc_.get(n, "strip_right"), true);
    } else if (type == "Replace") {
      step.kind = NormalizerKind::kReplace;
      auto re = pattern(n, path, step.pattern);
      if (!re) return re.error();
      step.regex = *re;
      step.content = std::string(str_or(doc_, n, "content", ""));
    } else if (type == "Prepend") {
      step.kind = NormalizerKind::kPrepend;
      step.content = std::string(str_or(doc_, n, "prepend", ""));
    } else if (type == "Precompiled") {
      // Only an empty charsmap is a no-op we can honour.
      const Node* map = doc_.get(n, "precompiled_charsmap");
      if (map && map->kind != Kind::kNull && !(json::is_string(map) && map->text.empty())) {
        return tokenizer_error(path,
                               "normalizer Precompiled (SentencePiece charsmap) is not supported");
      }
      return true;
    } else {
      return tokenizer_error(path, "normalizer type '" + std::string(type) + "' is not supported");
    }
    d_.normalizers.push_back(std::move(step));
    return true;
  }

  // ---- pre-tokenizers ----
  static bool behavior_of(std::string_view name, SplitBehavior& out) {
    static constexpr std::pair<std::string_view, SplitBehavior> kNames[] = {
        {"Removed", SplitBehavior::kRemoved},
        {"Isolated", SplitBehavior::kIsolated},
        {"MergedWithPrevious", SplitBehavior::kMergedWithPrevious},
        {"MergedWithNext", SplitBehavior::kMergedWithNext},
        {"Contiguous", SplitBehavior::kContiguous},
    };
    for (const auto& [n, b] : kNames) {
      if (n == name) {
        out = b;
        return true;
      }
    }
    return false;
  }

  static bool prepend_scheme_of(const Document& doc, const Node& n, PrependScheme& out) {
    std::string_view scheme = str_or(doc, n, "prepend_scheme", "");
    if (scheme.empty()) {
      // Older files: add_prefix_space true/false.
      out = json::as_bool(doc.get(n, "add_prefix_space"), true) ? PrependScheme::kAlways
                                                                : PrependScheme::kNever;
      return true;
    }
    if (scheme == "always")
      out = PrependScheme::kAlways;
    else if (scheme == "first")
      out = PrependScheme::kFirst;
    else if (scheme == "never")
      out = PrependScheme::kNever;
    else
      return false;
    return true;
  }

  Result<bool> pre_tokenizer(const Node& n, const std::string& path) {
    if (auto r = count_step(path); !r) return r;
    if (n.kind != Kind::kObject) return tokenizer_error(path, "pre_tokenizer is not an object");
    std::string_view type = str_or(doc_, n, "type", "");
    PreTokenizerStep step{};
    if (type == "Sequence") return sequence(n, path, "pretokenizers", &Loader::pre_tokenizer);
    if (type == "ByteLevel") {
      step.kind = PreTokenizerKind::kByteLevel;
      step.add_prefix_space = json::as_bool(doc_.get(n, "add_prefix_space"), true);
      step.use_regex = json::as_bool(doc_.get(n, "use_regex"), true);
      if (step.use_regex) {
        auto re = Regex::compile(
            R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
        if (!re) return re.error();
        step.regex = *re;
      }
    } else if (type == "Split") {
      step.kind = PreTokenizerKind::kSplit;
      auto re = pattern(n, path, step.literal);
      if (!re) return re.error();
      step.regex = *re;
      if (!behavior_of(str_or(doc_, n, "behavior", ""), step.behavior)) {
        return tokenizer_error(path + ".behavior", "unknown split behavior");
      }
      step.invert = json::as_bool(doc_.get(n, "invert"), false);
    } else if (type == "Metaspace") {
      step.kind = PreTokenizerKind::kMetaspace;
      step.replacement = std::string(str_or(doc_, n, "replacement", "\xE2\x96\x81"));
      if (step.replacement.empty())
        return tokenizer_error(path + ".replacement", "empty replacement");
      if (!prepend_scheme_of(doc_, n, step.prepend_scheme)) {
        return tokenizer_error(path + ".prepend_scheme", "unknown prepend_scheme");
      }
      step.split = json::as_bool(doc_.get(n, "split"), true);
    } else if (type == "Digits") {
      step.kind = PreTokenizerKind::kDigits;
      step.individual_digits = json::as_bool(doc_.get(n, "individual_digits"), false);
    } else if (type == "Whitespace") {
      step.kind = PreTokenizerKind::kWhitespace;
      auto re = Regex::compile(R"(\w+|[^\w\s]+)");
      if (!re) return re.error();
      step.regex = *re;
    } else if (type == "WhitespaceSplit") {
      step.kind = PreTokenizerKind::kWhitespaceSplit;
    } else if (type == "Punctuation") {
      step.kind = PreTokenizerKind::kPunctuation;
      if (!behavior_of(str_or(doc_, n, "behavior", "Isolated"), step.behavior)) {
        return tokenizer_error(path + ".behavior", "unknown split behavior");
      }
    } else if (type == "CharDelimiterSplit") {
      step.kind = PreTokenizerKind::kCharDelimiterSplit;
      step.literal = std::string(str_or(doc_, n, "delimiter", ""));
      if (step.literal.empty()) return tokenizer_error(path + ".delimiter", "missing delimiter");
    } else if (type == "BertPreTokenizer") {
      step.kind = PreTokenizerKind::kWhitespaceSplit;
      d_.pre_tokenizers.push_back(step);
      step.kind = PreTokenizerKind::kPunctuation;
      step.behavior = SplitBehavior::kIsolated;
    } else {
      return tokenizer_error(path,
                             "pre_tokenizer type '" + std::string(type) + "' is not supported");
    }
    d_.pre_tokenizers.push_back(std::move(step));
    return true;
  }

  // ---- decoders ----
  Result<bool> decoder(const Node& n, const std::string& path) {
    if (auto r = count_step(path); !r) return r;
    if (n.kind != Kind::kObject) return tokenizer_error(path, "decoder is not an object");
    std::string_view type = str_or(doc_, n, "type", "");
    DecoderStep step{};
    if (type == "Sequence") return sequence(n, path, "decoders", &Loader::decoder);
    if (type == "ByteLevel") {
      step.kind = DecoderKind::kByteLevel;
    } else if (type == "ByteFallback") {
      step.kind = DecoderKind::kByteFallback;
    } else if (type == "Fuse") {
      step.kind = DecoderKind::kFuse;
    } else if (type == "Strip") {
      step.kind = DecoderKind::kStrip;
      step.content = std::string(str_or(doc_, n, "content", " "));
      std::uint64_t v = 0;
      if (json::as_uint(doc_.get(n, "start"), v)) step.strip_start = v;
      if (json::as_uint(doc_.get(n, "stop"), v)) step.strip_stop = v;
    } else if (type == "Replace") {
      step.kind = DecoderKind::kReplace;
      auto re = pattern(n, path, step.pattern);
      if (!re) return re.error();
      step.regex = *re;
      step.content = std::string(str_or(doc_, n, "content", ""));
    } else if (type == "Metaspace") {
      step.kind = DecoderKind::kMetaspace;
      step.replacement = std::string(str_or(doc_, n, "replacement", "\xE2\x96\x81"));
      PrependScheme scheme;
      if (!prepend_scheme_of(doc_, n, scheme))
        return tokenizer_error(path, "unknown prepend_scheme");
      step.prepend = scheme != PrependScheme::kNever;
    } else if (type == "WordPiece") {
      step.kind = DecoderKind::kWordPiece;
      step.prefix = std::string(str_or(doc_, n, "prefix", "##"));
      step.cleanup = json::as_bool(doc_.get(n, "cleanup"), true);
    } else {
      return tokenizer_error(path, "decoder type '" + std::string(type) + "' is not supported");
    }
    d_.decoders.push_back(std::move(step));
    return true;
  }

  // ---- post-processors ----
  Result<bool> special_ids(std::string_view name, std::vector<std::uint32_t>& ids,
                           const Node* specials, const std::string& path) {
    // TemplateProcessing names a special token; its ids are in special_tokens.
    if (specials) {
      if (const Node* entry = doc_.get(*specials, name)) {
        const Node* list = doc_.get(*entry, "ids");
        if (!list || list->kind != Kind::kArray)
          return tokenizer_error(path, "special token without ids");
        for (const Node* c = doc_.first(*list); c; c = doc_.next(*c)) {
          std::uint64_t v;
          if (!json::as_uint(c, v) || v >= 0xFFFFFFFFull)
            return tokenizer_error(path, "invalid special token id");
          ids.push_back(static_cast<std::uint32_t>(v));
        }
        return true;
      }
    }
    return tokenizer_error(path, "special token '" + std::string(name) + "' not in special_tokens");
  }

  Result<bool> post_processor(const Node& n, const std::string& path) {
    if (auto r = count_step(path); !r) return r;
    std::string_view type = str_or(doc_, n, "type", "");
    if (type == "Sequence") return sequence(n, path, "processors", &Loader::post_processor);
    if (type == "ByteLevel") return true;  // changes offsets only
    if (type == "TemplateProcessing") {
      const Node* single = doc_.get(n, "single");
      const Node* specials = doc_.get(n, "special_tokens");
      if (!single || single->kind != Kind::kArray)
        return tokenizer_error(path + ".single", "missing template");
      std::vector<TemplatePiece> pieces;
      for (const Node* c = doc_.first(*single); c; c = doc_.next(*c)) {
        TemplatePiece piece;
        if (const Node* seq = doc_.get(*c, "Sequence")) {
          (void)seq;
          piece.is_sequence = true;
        } else if (const Node* sp = doc_.get(*c, "SpecialToken")) {
          const Node* id = doc_.get(*sp, "id");
          if (!json::is_string(id))
            return tokenizer_error(path + ".single", "SpecialToken without id");
          if (auto r = special_ids(id->text, piece.special_ids, specials, path + ".special_tokens");
              !r)
            return r;
        } else {
          return tokenizer_error(path + ".single", "unknown template piece");
        }
        pieces.push_back(std::move(piece));
      }
      d_.post_single = std::move(pieces);
      d_.has_post_template = true;
      return true;
    }
    if (type == "BertProcessing" || type == "RobertaProcessing") {
      // cls $A sep, each given as [token, id].
      std::vector<TemplatePiece> pieces;
      for (const char* key : {"cls", "sep"}) {
        const Node* pair = doc_.get(n, key);
        const Node* id = pair && pair->kind == Kind::kArray ? doc_.first(*pair) : nullptr;
        id = id ? doc_.next(*id) : nullptr;
        std::uint64_t v;
        if (!json::as_uint(id, v) || v >= 0xFFFFFFFFull)
          return tokenizer_error(path + "." + key, "invalid token");
        TemplatePiece piece;
        piece.special_ids.push_back(static_cast<std::uint32_t>(v));
        pieces.push_back(piece);
        if (std::string_view(key) == "cls") {
          TemplatePiece seq;
          seq.is_sequence = true;
          pieces.push_back(seq);
        }
      }
      d_.post_single = std::move(pieces);
      d_.has_post_template = true;
      return true;
    }
    return tokenizer_error(path,
                           "post_processor type '" + std::string(type) + "' is not supported");
  }

  // ---- model ----
  void set_text(std::uint32_t id, std::string_view text) {
    if (id >= d_.id_text.size()) {
      d_.id_text.resize(id + 1);
      d_.id_flags.resize(id + 1, 0);
    }
    d_.id_text[id] = text;  // a view into the parsed document until finish() copies it
  }

  Result<bool> load_model(const Node& model) {
    std::string_view type = str_or(doc_, model, "type", "");
    if (type.empty() && doc_.get(model, "merges")) type = "BPE";
    if (type == "WordLevel") {
      d_.model = ModelKind::kWordLevel;
    } else if (type != "BPE") {
      return tokenizer_error("model.type", "model type '" + std::string(type) +
                                               "' is not supported (BPE and WordLevel are)");
    }
    if (const Node* dropout = doc_.get(model, "dropout");
        dropout && dropout->kind == Kind::kNumber) {
      std::string_view t = dropout->text;
      if (t != "0" && t != "0.0" && t != "1" && t != "1.0") {
        return tokenizer_error("model.dropout", "BPE dropout is not supported (it is random)");
      }
    }
    d_.fuse_unk = json::as_bool(doc_.get(model, "fuse_unk"), false);
    d_.byte_fallback = json::as_bool(doc_.get(model, "byte_fallback"), false);
    d_.ignore_merges = json::as_bool(doc_.get(model, "ignore_merges"), false);
    d_.continuing_subword_prefix =
        std::string(str_or(doc_, model, "continuing_subword_prefix", ""));
    d_.end_of_word_suffix = std::string(str_or(doc_, model, "end_of_word_suffix", ""));
    d_.simple_bpe = d_.continuing_subword_prefix.empty() && d_.end_of_word_suffix.empty();

    const Node* vocab = doc_.get(model, "vocab");
    if (!vocab || vocab->kind != Kind::kObject)
      return tokenizer_error("model.vocab", "missing vocab object");
    if (vocab->count > opt_.max_vocab) {
      return Error{"LimitError", "vocab has more entries than max_vocab", 0, 0, "model.vocab"};
    }
    d_.vocab.reserve(vocab->count, vocab->flat ? doc_.vocab_key_bytes() : 0);
    d_.id_text.resize(vocab->count);
    d_.id_flags.resize(vocab->count, 0);
    std::string raw;
    const auto& ab = alphabet();
    auto add = [&](std::string_view key, bool id_ok, std::uint64_t id) -> Result<bool> {
      if (!id_ok) {
        return tokenizer_error(
            "model.vocab", "id of token '" + std::string(key) + "' is not a non-negative integer");
      }
      if (id >= opt_.max_vocab + opt_.max_added_tokens) {
        return Error{"LimitError",
                     "token id " + std::to_string(id) + " beyond max_vocab + max_added_tokens", 0,
                     0, "model.vocab"};
      }
      if (key.size() > opt_.max_token_bytes) {
        return Error{"LimitError", "token longer than max_token_bytes", 0, 0, "model.vocab"};
      }
      auto id32 = static_cast<std::uint32_t>(id);
      if (d_.byte_level && ab.to_bytes(key, raw)) {
        d_.vocab.put(raw, id32);
      } else {
        d_.vocab.put(key, id32);
      }
      set_text(id32, key);
      return true;
    };
    if (vocab->flat) {
      // In blocks, two in flight: a block is checked, keyed and hashed with each key's slot
      // prefetched while the block before it is inserted (in order: the same puts as one at a
      // time, but the slot loads overlap instead of stalling each insert).
      const auto& entries = doc_.vocab_entries();
      constexpr std::size_t kBlock = 64;
      constexpr std::size_t kNoRaw = ~std::size_t{0};
      struct Block {
        ByteBuffer raw;
        std::array<std::string_view, kBlock> keys;
        std::array<std::uint64_t, kBlock> hashes;
        std::array<std::size_t, kBlock> raw_at, raw_len;
        std::size_t start = 0, n = 0;
      };
      std::array<Block, 2> blocks;
      // Checks and keys entries [start, start + n) into `b`; an error for the first bad entry.
      auto prepare = [&](Block& b, std::size_t start) -> Result<bool> {
        b.start = start;
        b.n = std::min(kBlock, entries.size() - start);
        b.raw.clear();
        for (std::size_t k = 0; k < b.n; ++k) {
          const json::VocabEntry& e = entries[start + k];
          if (!e.id_ok || e.id >= opt_.max_vocab + opt_.max_added_tokens ||
              e.key_len > opt_.max_token_bytes) [[unlikely]] {
            return add(e.token(), e.id_ok, e.id);
          }
          b.raw_at[k] = kNoRaw;
          if (d_.byte_level) {
            const std::size_t len = ab.to_bytes(e.token(), b.raw.room(e.key_len));
            if (len != ByteLevelAlphabet::kUnmapped) {
              b.raw_at[k] = b.raw.size();
              b.raw_len[k] = len;
              b.raw.commit(len);
            }
          }
        }
        for (std::size_t k = 0; k < b.n; ++k) {
          b.keys[k] = b.raw_at[k] == kNoRaw
                          ? entries[start + k].token()
                          : std::string_view(b.raw.data() + b.raw_at[k], b.raw_len[k]);
          b.hashes[k] = StringIdMap::hash_of(b.keys[k]);
          d_.vocab.prefetch(b.hashes[k]);
        }
        return true;
      };
      if (!entries.empty()) {
        if (auto r = prepare(blocks[0], 0); !r) return r;
      }
      for (std::size_t start = 0, i = 0; start < entries.size(); start += kBlock, i ^= 1) {
        if (start + kBlock < entries.size()) {
          if (auto r = prepare(blocks[i ^ 1], start + kBlock); !r) return r;
        }
        const Block& b = blocks[i];
        for (std::size_t k = 0; k < b.n; ++k) {
          const json::VocabEntry& e = entries[b.start + k];
          const auto id32 = static_cast<std::uint32_t>(e.id);
          d_.vocab.put_hashed(b.keys[k], b.hashes[k], id32);
          set_text(id32, e.token());
        }
      }
    } else {
      for (const Node* c = doc_.first(*vocab); c; c = doc_.next(*c)) {
        std::uint64_t id = 0;
        const bool id_ok = json::as_uint(c, id);
        if (auto r = add(c->key, id_ok, id); !r) return r;
      }
    }
    // Token lookups by their file spelling (unk, <0xXX>, merges) go through key_of().
    if (const Node* unk = doc_.get(model, "unk_token"); json::is_string(unk)) {
      std::uint32_t id;
      if (!d_.vocab.get(key_of(unk->text, raw), id)) {
        return tokenizer_error("model.unk_token",
                               "unk_token '" + std::string(unk->text) + "' is not in the vocab");
      }
      d_.unk_id = id;
    }
    d_.byte_id.fill(kNoId);
    d_.byte_fallback_id.fill(kNoId);
    d_.ascii_id.fill(kNoId);
    for (int b = 0; b < 256; ++b) {
      std::uint32_t id;
      std::string one(1, static_cast<char>(b));
      if (d_.byte_level) {
        if (d_.vocab.get(one, id)) d_.byte_id[b] = id;
      } else if (b < 128 && d_.vocab.get(one, id)) {
        d_.ascii_id[b] = id;
      }
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      if (d_.vocab.get(key_of(name, raw), id)) d_.byte_fallback_id[b] = id;
    }
    if (d_.model == ModelKind::kBpe) {
      if (auto r = load_merges(model); !r) return r;
    }
    return true;
  }

  // Records which characters merge (a, b) joins, for TokenizerData::split_words.
  void note_join(std::string_view a, std::string_view b, std::uint32_t a_id, std::uint32_t b_id) {
    auto fallback = [&](std::string_view t, std::uint32_t id) {
      return id == d_.unk_id || (t.size() == 6 && t.substr(0, 3) == "<0x" && t[5] == '>');
    };
    if (fallback(a, a_id) || fallback(b, b_id) || a.empty() || b.empty()) {
      merges_join_special_ = true;
      return;
    }
    std::size_t last = a.size() - 1, len;
    while (last > 0 && (static_cast<unsigned char>(a[last]) & 0xC0) == 0x80) --last;
    const unsigned left = TokenizerData::join_bucket(unicode::decode_utf8(a, last, len));
    const unsigned right = TokenizerData::join_bucket(unicode::decode_utf8(b, 0, len));
    const unsigned bit = left << 8 | right;
    d_.join_bits[bit >> 6] |= std::uint64_t{1} << (bit & 63);
  }

  // Whether a word may be cut (at a U+2581, or where no merge joins) without changing its
  // tokens: an unknown character must stay a token of its own. It does with byte_fallback over
  // all 256 bytes, or as unk without fuse_unk; fuse_unk would join two unks across a cut, and
  // without an unk token it is dropped, so its neighbours merge as if adjacent (HF).
  bool unknowns_keep_their_place() const {
    bool every_byte = d_.byte_fallback;
    for (std::uint32_t id : d_.byte_fallback_id) every_byte = every_byte && id != kNoId;
    return every_byte || (!d_.fuse_unk && d_.unk_id != kNoId);
  }

  void enable_split_words() {
    if (merges_join_special_) return;
    d_.split_words = true;
  }

  void find_metaspace_glue() {
    static constexpr std::string_view kMeta = "\xE2\x96\x81";
    std::vector<char32_t> glue;
    for (std::string_view text : d_.id_text) {
      std::size_t pos = text.find(kMeta, 1);
      while (pos != std::string_view::npos) {
        std::size_t start = pos - 1;
        while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        std::size_t len;
        char32_t before = unicode::decode_utf8(text, start, len);
        if (before != 0x2581 && std::find(glue.begin(), glue.end(), before) == glue.end()) {
          glue.push_back(before);
          if (glue.size() > 64) return;  // not SentencePiece-like: keep whole words
        }
        pos = text.find(kMeta, pos + kMeta.size());
      }
    }
    for (char32_t c : glue) {
      if (c < 128) d_.metaspace_glue_ascii[c >> 6] |= std::uint64_t{1} << (c & 63);
    }
    d_.metaspace_glue = std::move(glue);
    d_.metaspace_split = true;
  }

  // The vocab key of a token as spelled in the file.
  std::string_view key_of(std::string_view token, std::string& buf) const {
    if (d_.byte_level && alphabet().to_bytes(token, buf)) return buf;
    return token;
  }

  Result<bool> load_merges(const Node& model) {
    const Node* merges = doc_.get(model, "merges");
    if (!merges || merges->kind == Kind::kNull) return true;
    if (merges->kind != Kind::kArray)
      return tokenizer_error("model.merges", "merges is not an array");
    if (merges->count > opt_.max_merges) {
      return Error{"LimitError", "more merges than max_merges", 0, 0, "model.merges"};
    }
    d_.merges.reserve(merges->count);
    // In batches: the two vocab lookups of a merge's parts go through get_batch (prefetched), then
    // the batch's buckets of the merge table are prefetched before its inserts. The merged token's
    // id is nearly always the previous merge's or the one after it (ids follow the merges: 99.7% of
    // Gemma 3's, all but a handful of Llama 3's), so it is guessed and checked against that id's
    // spelling, which is in the cache, instead of a vocab lookup that nearly always missed; the
    // check proves the id only while no vocab key was given twice (then each spelling has one id).
    constexpr std::size_t kBatch = 256;
    std::array<std::string_view, kBatch> as, bs;                // the merge's tokens as spelled
    std::array<std::string_view, 2 * kBatch> keys;              // vocab keys: a, b
    std::array<std::uint32_t, 2 * kBatch> key_at{}, key_len{};  // in keys_buffer, when buffered
    std::array<bool, 2 * kBatch> buffered{};                    // the key is in keys_buffer
    std::array<std::uint32_t, 2 * kBatch> ids{};
    std::array<bool, 2 * kBatch> found{};
    std::array<std::uint32_t, kBatch> merged_ids{};
    std::array<bool, kBatch> merged_found{};
    ByteBuffer keys_buffer;
    std::string joined, key_buf;
    std::size_t n = 0;
    std::uint32_t rank = 0, batch_rank = 0;
    const ByteLevelAlphabet& ab = alphabet();
    const std::size_t prefix_len = d_.continuing_subword_prefix.size();
    const bool guess = !d_.vocab.overwritten();
    // The joins are read only by split_words, which finish() may enable only for these models.
    const bool note_joins = !d_.byte_level && d_.simple_bpe && !d_.ignore_merges;
    std::uint32_t last_merged = kNoId;
    // The vocab key of a token as spelled (byte-level: its raw bytes when it maps).
    auto add_key = [&](std::size_t k, std::string_view token) {
      if (d_.byte_level) {
        const std::size_t len = ab.to_bytes(token, keys_buffer.room(token.size()));
        if (len != ByteLevelAlphabet::kUnmapped) {
          key_at[k] = static_cast<std::uint32_t>(keys_buffer.size());
          key_len[k] = static_cast<std::uint32_t>(len);
          buffered[k] = true;
          keys_buffer.commit(len);
          return;
        }
      }
      keys[k] = token;
      buffered[k] = false;
    };
    // Whether id's spelling is a followed by rest.
    auto spelled = [&](std::uint32_t id, std::string_view a, std::string_view rest) {
      if (id >= d_.id_text.size()) return false;
      const std::string_view t = d_.id_text[id];
      return t.size() == a.size() + rest.size() && same_bytes(t.data(), a.data(), a.size()) &&
             same_bytes(t.data() + a.size(), rest.data(), rest.size());
    };
    auto flush = [&]() -> Result<bool> {
      for (std::size_t k = 0; k < 2 * n; ++k) {
        if (buffered[k]) keys[k] = std::string_view(keys_buffer.data() + key_at[k], key_len[k]);
      }
      d_.vocab.get_batch(keys.data(), 2 * n, ids.data(), found.data());
      for (std::size_t i = 0; i < n; ++i) {
        if (!found[2 * i] || !found[2 * i + 1] || !merged_found[i]) [[unlikely]] {
          const std::string path = "model.merges[" + std::to_string(batch_rank + i) + "]";
          if (!found[2 * i] || !found[2 * i + 1]) {
            return tokenizer_error(path, "merge token not in the vocab: '" + std::string(as[i]) +
                                             "' '" + std::string(bs[i]) + "'");
          }
          return tokenizer_error(path, "merged token not in the vocab: '" + std::string(as[i]) +
                                           std::string(bs[i]) + "'");
        }
      }
      // The table's buckets prefetched kAhead merges before their insert.
      constexpr std::size_t kAhead = 32;
      for (std::size_t i = 0; i < n && i < kAhead; ++i) {
        d_.merges.prefetch_put(ids[2 * i], ids[2 * i + 1]);
      }
      for (std::size_t i = 0; i < n; ++i) {
        if (i + kAhead < n)
          d_.merges.prefetch_put(ids[2 * (i + kAhead)], ids[2 * (i + kAhead) + 1]);
        d_.merges.put(ids[2 * i], ids[2 * i + 1], batch_rank + static_cast<std::uint32_t>(i),
                      merged_ids[i]);
        if (note_joins && !merges_join_special_)
          note_join(keys[2 * i], keys[2 * i + 1], ids[2 * i], ids[2 * i + 1]);
      }
      n = 0;
      keys_buffer.clear();
      return true;
    };
    auto take = [&](std::string_view a, std::string_view b) -> Result<bool> {
      if (n == 0) batch_rank = rank;
      as[n] = a;
      bs[n] = b;
      add_key(2 * n, a);
      add_key(2 * n + 1, b);
      const std::string_view rest = prefix_len > 0 && b.size() >= prefix_len &&
                                            b.substr(0, prefix_len) == d_.continuing_subword_prefix
                                        ? b.substr(prefix_len)
                                        : b;
      std::uint32_t merged = kNoId;
      bool ok = false;
      if (guess && last_merged != kNoId && a.size() + rest.size() > 0) {
        if (spelled(last_merged, a, rest)) {
          merged = last_merged;
          ok = true;
        } else if (spelled(last_merged + 1, a, rest)) {
          merged = last_merged + 1;
          ok = true;
        }
      }
      if (!ok) {
        // Looked up: the key of the joined spelling (a byte-level key maps the whole spelling or
        // none of it, so it is not always the keys of a and rest joined).
        joined.assign(a);
        joined.append(rest);
        ok = d_.vocab.get(key_of(joined, key_buf), merged);
      }
      merged_ids[n] = merged;
      merged_found[n] = ok;
      last_merged = ok ? merged : kNoId;
      if (++n == kBatch) return flush();
      return true;
    };
    if (merges->flat) {
      for (const json::MergeEntry& m : doc_.merge_entries()) {
        std::string_view a, b;
        if (m.a == nullptr) {
          return tokenizer_error("model.merges[" + std::to_string(rank) + "]",
                                 "merge is neither \"a b\" nor [a, b]");
        }
        if (m.b == nullptr) {
          const std::string_view text(m.a, m.a_len);
          std::size_t space = text.find(' ');
          if (space == std::string_view::npos) {
            return tokenizer_error("model.merges[" + std::to_string(rank) + "]",
                                   "merge '" + std::string(text) + "' is not two tokens");
          }
          a = text.substr(0, space);
          b = text.substr(space + 1);
        } else {
          a = std::string_view(m.a, m.a_len);
          b = std::string_view(m.b, m.b_len);
        }
        if (auto r = take(a, b); !r) return r;
        ++rank;
      }
    } else {
      for (const Node* c = doc_.first(*merges); c; c = doc_.next(*c), ++rank) {
        std::string_view a, b;
        if (c->kind == Kind::kString) {
          std::size_t space = c->text.find(' ');
          if (space == std::string_view::npos) {
            return tokenizer_error("model.merges[" + std::to_string(rank) + "]",
                                   "merge '" + std::string(c->text) + "' is not two tokens");
          }
          a = c->text.substr(0, space);
          b = c->text.substr(space + 1);
        } else if (c->kind == Kind::kArray && c->count == 2 && json::is_string(doc_.first(*c)) &&
                   json::is_string(doc_.next(*doc_.first(*c)))) {
          a = doc_.first(*c)->text;
          b = doc_.next(*doc_.first(*c))->text;
        } else {
          return tokenizer_error("model.merges[" + std::to_string(rank) + "]",
                                 "merge is neither \"a b\" nor [a, b]");
        }
        if (auto r = take(a, b); !r) return r;
      }
    }
    if (n > 0) {
      if (auto r = flush(); !r) return r;
    }
    d_.merges.finish();
    return true;
  }

  // ---- added tokens ----
  Result<bool> added_tokens(const Node& list) {
    if (list.kind != Kind::kArray)
      return tokenizer_error("added_tokens", "added_tokens is not an array");
    if (list.count > opt_.max_added_tokens) {
      return Error{"LimitError", "more added tokens than max_added_tokens", 0, 0, "added_tokens"};
    }
    // HF re-assigns the ids as it adds the tokens (the file's ids are only checked, with a
    // warning): a content already in the vocab keeps its vocab id, a new one gets the next id
    // after max(vocab size - 1, largest added id); an empty or repeated content is ignored.
    const auto vocab_len = static_cast<std::uint32_t>(d_.vocab.size());
    std::optional<std::uint32_t> max_added;
    std::string key;
    std::size_t i = 0;
    for (const Node* c = doc_.first(list); c; c = doc_.next(*c), ++i) {
      std::string path = "added_tokens[" + std::to_string(i) + "]";
      if (c->kind != Kind::kObject) return tokenizer_error(path, "added token is not an object");
      AddedToken t;
      const Node* content = doc_.get(*c, "content");
      if (!json::is_string(content)) return tokenizer_error(path + ".content", "missing content");
      if (content->text.size() > opt_.max_token_bytes) {
        return Error{"LimitError", "token longer than max_token_bytes", 0, 0, path};
      }
      std::uint32_t id;
      if (content->text.empty() || d_.added_content.get(content->text, id)) continue;
      // In the vocab only as the file spells it: a byte-level vocab is keyed by raw bytes, and
      // the content "\n" (no alphabet character, kept as written) has the key of "Ċ", the
      // byte 0x0A, yet is not that token (HF gives it a new id).
      if (!d_.vocab.get(key_of(content->text, key), id) || id >= d_.id_text.size() ||
          d_.id_text[id] != content->text) {
        id = !max_added ? vocab_len : (*max_added >= vocab_len ? *max_added + 1 : vocab_len);
        ++added_outside_vocab_;
      }
      if (id >= opt_.max_vocab + opt_.max_added_tokens) {
        return Error{"LimitError", "added token id beyond max_vocab + max_added_tokens", 0, 0,
                     path};
      }
      max_added = max_added ? std::max(*max_added, id) : id;
      t.content = std::string(content->text);
      t.id = id;
      t.special = json::as_bool(doc_.get(*c, "special"), false);
      t.normalized = json::as_bool(doc_.get(*c, "normalized"), !t.special);
      t.lstrip = json::as_bool(doc_.get(*c, "lstrip"), false);
      t.rstrip = json::as_bool(doc_.get(*c, "rstrip"), false);
      t.single_word = json::as_bool(doc_.get(*c, "single_word"), false);
      set_text(t.id, content->text);
      d_.added_content.put(t.content, t.id);
      d_.added.push_back(std::move(t));
    }
    return true;
  }

 public:
  // Called after everything is read: id texts into the arena, tries, flags.
  Result<bool> finish() {
    std::size_t total = 0;
    for (std::string_view text : d_.id_text) total += text.size();
    d_.arena.resize(total);
    char* at = d_.arena.data();
    for (std::string_view& text : d_.id_text) {
      if (!text.empty()) std::memcpy(at, text.data(), text.size());
      text = std::string_view(at, text.size());
      at += text.size();
    }
    if (!d_.byte_level && d_.model == ModelKind::kBpe && d_.simple_bpe && !d_.ignore_merges &&
        unknowns_keep_their_place()) {
      find_metaspace_glue();
      enable_split_words();
    }
    d_.vocab_with_added = d_.vocab.size() + added_outside_vocab_;
    for (std::uint32_t i = 0; i < d_.added.size(); ++i) {
      const AddedToken& t = d_.added[i];
      d_.id_flags[t.id] |= 2;
      if (t.special) d_.id_flags[t.id] |= 1;
      if (t.special) d_.special_content.put(t.content, t.id);
      if (t.content.empty()) continue;
      if (t.normalized && !d_.normalizers.empty()) {
        auto n = normalize_string(d_.normalizers, t.content);
        if (!n) return n.error();
        if (!n->empty()) d_.normalized_trie.insert(*n, i);
      } else {
        d_.raw_trie.insert(t.content, i);
      }
    }
    return true;
  }

 private:
  const Document& doc_;
  const LoadOptions& opt_;
  TokenizerData& d_;
  std::size_t added_outside_vocab_ = 0;  // added tokens given ids of their own (len() counts them)
  bool merges_join_special_ = false;     // a merge involves unk or a byte-fallback token
  std::size_t steps_ = 0;
};

std::atomic<std::uint64_t> g_serial{1};

// A file's contents: a regular file's read onto huge pages (util::FileBytes: Gemma 3's 33 MB
// load is cheaper so than through a mapping of its 4 KB pages), anything else read into a string.
class FileText {
 public:
  std::string_view view() const {
#if defined(__unix__)
    if (copy_.empty()) return bytes_.view();
#endif
    return copy_;
  }

  Result<bool> read(const std::string& path, std::size_t limit) {
#if defined(__unix__)
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error{"TokenizerError", "cannot open " + path, 0, 0, {}};
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      const auto size = static_cast<std::size_t>(st.st_size);
      if (size > limit) {
        ::close(fd);
        return Error{"LimitError", path + " is larger than max_file_bytes", 0, 0, {}};
      }
      std::string error;
      const bool ok = bytes_.read(fd, size, error);
      ::close(fd);
      if (!ok) return Error{"TokenizerError", "cannot read " + path + ": " + error, 0, 0, {}};
      return true;
    }
    ::close(fd);
#endif
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{"TokenizerError", "cannot open " + path, 0, 0, {}};
    in.seekg(0, std::ios::end);
    auto size = static_cast<std::size_t>(in.tellg());
    if (size > limit) return Error{"LimitError", path + " is larger than max_file_bytes", 0, 0, {}};
    in.seekg(0, std::ios::beg);
    copy_.resize(size);
    in.read(copy_.data(), static_cast<std::streamsize>(size));
    if (!in) return Error{"TokenizerError", "cannot read " + path, 0, 0, {}};
    return true;
  }

 private:
#if defined(__unix__)
  util::FileBytes bytes_;  // a regular file's bytes, on huge pages
#endif
  std::string copy_;
};

std::optional<std::string> token_string(const Document& doc, const Node* n) {
  if (json::is_string(n)) return std::string(n->text);
  if (n && n->kind == Kind::kObject) {
    const Node* c = doc.get(*n, "content");
    if (json::is_string(c)) return std::string(c->text);
  }
  return std::nullopt;
}

}  // namespace

void AddedTrie::insert(std::string_view key, std::uint32_t token) {
  if (key.empty()) return;
  const auto first = static_cast<unsigned char>(key[0]);
  if (first_kind[first] == 0) first_bytes.push_back(first);
  if (key.size() < 4) {
    first_kind[first] |= 1;
  } else {
    first_kind[first] |= 2;
    std::uint32_t first4;
    std::memcpy(&first4, key.data(), 4);
    const std::uint32_t bit = prefix_hash(first4);
    prefix_bits[bit >> 6] |= std::uint64_t{1} << (bit & 63);
  }
  std::uint32_t node = 0;
  for (std::size_t i = 0; i < key.size(); ++i) {
    auto byte = static_cast<unsigned char>(key[i]);
    std::uint32_t child = 0;
    if (node == 0) {
      child = root_child[byte];
    } else {
      for (auto& [b, c] : nodes[node].children) {
        if (b == byte) child = c;
      }
    }
    if (child == 0) {
      child = static_cast<std::uint32_t>(nodes.size());
      nodes.emplace_back();
      if (node == 0) {
        root_child[byte] = child;
      } else {
        auto& ch = nodes[node].children;
        auto it = std::lower_bound(ch.begin(), ch.end(), byte,
                                   [](const std::pair<unsigned char, std::uint32_t>& p,
                                      unsigned char v) { return p.first < v; });
        ch.insert(it, {byte, child});
      }
    }
    node = child;
  }
  // HF builds the automaton from the tokens in order; a later duplicate content keeps the first.
  if (nodes[node].token == kNoId) nodes[node].token = token;
}

std::size_t AddedTrie::next_candidate(std::string_view text, std::size_t pos,
                                      std::size_t to) const {
  if (first_bytes.empty()) return to;  // no added token can start anywhere
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  auto passes = [&](std::size_t p) {
    const std::uint8_t kind = first_kind[s[p]];
    if (kind & 1) return true;
    if (!(kind & 2) || p + 4 > to) return false;
    std::uint32_t first4;
    std::memcpy(&first4, s + p, 4);
    const std::uint32_t bit = prefix_hash(first4);
    return ((prefix_bits[bit >> 6] >> (bit & 63)) & 1) != 0;
  };
#if defined(__SSE2__)
  // Few distinct first bytes (the usual case: '<', '\n', ...): 16 bytes per step.
  if (first_bytes.size() <= 8) {
    __m128i want[8];
    for (std::size_t k = 0; k < 8; ++k) {
      want[k] = _mm_set1_epi8(static_cast<char>(first_bytes[k < first_bytes.size() ? k : 0]));
    }
    while (pos + 16 <= to) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + pos));
      __m128i hit = _mm_cmpeq_epi8(v, want[0]);
      for (std::size_t k = 1; k < first_bytes.size(); ++k) {
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, want[k]));
      }
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
      while (mask != 0) {
        const std::size_t p = pos + static_cast<std::size_t>(__builtin_ctz(mask));
        if (passes(p)) return p;
        mask &= mask - 1;
      }
      pos += 16;
    }
  }
#endif
  for (; pos < to; ++pos) {
    if (first_kind[s[pos]] != 0 && passes(pos)) return pos;
  }
  return to;
}

std::uint32_t AddedTrie::longest_at(std::string_view text, std::size_t pos,
                                    std::size_t& len) const {
  std::uint32_t node = root_child[static_cast<unsigned char>(text[pos])];
  std::uint32_t best = kNoId;
  std::size_t i = pos + 1;
  while (node != 0) {
    if (nodes[node].token != kNoId) {
      best = nodes[node].token;
      len = i - pos;
    }
    if (i >= text.size()) break;
    auto byte = static_cast<unsigned char>(text[i]);
    const auto& ch = nodes[node].children;
    std::uint32_t next = 0;
    auto it = std::lower_bound(ch.begin(), ch.end(), byte,
                               [](const std::pair<unsigned char, std::uint32_t>& p,
                                  unsigned char v) { return p.first < v; });
    if (it != ch.end() && it->first == byte) next = it->second;
    node = next;
    ++i;
  }
  return best;
}

Result<Tokenizer> Tokenizer::load_json(std::string_view tokenizer_json,
                                       std::string_view config_json, const LoadOptions& options) {
  if (tokenizer_json.size() > options.max_file_bytes) {
    return Error{"LimitError", "tokenizer.json is larger than max_file_bytes", 0, 0, {}};
  }
  auto doc = Document::parse(tokenizer_json, options.max_json_depth);
  if (!doc) {
    Error e = doc.error();
    e.message = "tokenizer.json: " + e.message;
    return e;
  }
  auto data = std::make_shared<TokenizerData>();
  Loader loader(*doc, options, *data);
  if (auto r = loader.run(); !r) return r.error();
  if (auto r = loader.finish(); !r) return r.error();
  if (!config_json.empty()) {
    auto config = Document::parse(config_json, options.max_json_depth);
    if (!config) {
      Error e = config.error();
      e.message = "tokenizer_config.json: " + e.message;
      return e;
    }
    const Node& root = config->root();
    if (root.kind == Kind::kObject) {
      // transformers.js (the decode oracle) cleans up unless the config says false.
      data->clean_up_tokenization_spaces =
          json::as_bool(config->get(root, "clean_up_tokenization_spaces"), true);
      data->bos_token = token_string(*config, config->get(root, "bos_token"));
      data->eos_token = token_string(*config, config->get(root, "eos_token"));
      if (const Node* extra = config->get(root, "additional_special_tokens");
          extra && extra->kind == Kind::kArray) {
        for (const Node* c = config->first(*extra); c; c = config->next(*c)) {
          auto s = token_string(*config, c);
          std::uint32_t id;
          if (s && !data->special_content.get(*s, id) && data->added_content.get(*s, id)) {
            data->special_content.put(*s, id);
          }
        }
      }
    }
  } else {
    data->clean_up_tokenization_spaces = true;
  }
  data->serial = g_serial.fetch_add(1);
  return Tokenizer(std::move(data));
}

Result<Tokenizer> Tokenizer::load_dir(const std::string& dir, const LoadOptions& options) {
  FileText tokenizer_json, config_json;
  if (auto r = tokenizer_json.read(dir + "/tokenizer.json", options.max_file_bytes); !r)
    return r.error();
  std::ifstream probe(dir + "/tokenizer_config.json");
  if (probe) {
    if (auto r = config_json.read(dir + "/tokenizer_config.json", options.max_file_bytes); !r)
      return r.error();
  }
  auto t = load_json(tokenizer_json.view(), config_json.view(), options);
  if (!t) {
    Error e = t.error();
    e.message = dir + "/tokenizer.json: " + e.message;
    return e;
  }
  return t;
}

}  // namespace chatwire::tokenize
