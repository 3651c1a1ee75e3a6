// The models: BPE (HF's merge order: lowest merge rank first, leftmost on ties, exactly as
// tokenizers' Word::merge_all) and WordLevel. A per-thread cache remembers the tokens of
// recently seen words, keyed by the tokenizer's serial number.
#include <algorithm>
#include <cstring>
#include <string>

#include "tokenize/pipeline.hpp"
#include "tokenize/unicode.hpp"

namespace chatwire::tokenize {
namespace {

struct Symbol {
  std::uint32_t id;
  std::uint32_t len;  // bytes; 0 = merged away
  std::int32_t prev, next;
};

struct HeapEntry {
  std::uint32_t rank;
  std::uint32_t pos;
  std::uint32_t new_id;
  std::uint32_t left, right;  // the pair it was made for (a cheap validity check)
};
// std::push_heap builds a max-heap: "less" means lower priority (higher rank, then higher pos).
struct HeapLess {
  bool operator()(const HeapEntry& a, const HeapEntry& b) const {
    if (a.rank != b.rank) return a.rank > b.rank;
    return a.pos > b.pos;
  }
};

// Word -> tokens, open addressing over one key arena and one token pool: no allocation per word.
// When full it starts again empty (a bounded memory footprint per thread).
class WordCache {
 public:
  static constexpr std::uint32_t kSlots = 1u << 17;
  static constexpr std::uint32_t kMaxEntries = kSlots / 2;
  const TokenPiece* find(std::string_view word, std::uint64_t h, std::uint32_t& count) const {
    if (slots_.empty()) return nullptr;
    for (std::uint32_t i = static_cast<std::uint32_t>(h) & (kSlots - 1);;
         i = (i + 1) & (kSlots - 1)) {
      const Slot& s = slots_[i];
      if (s.key_len == kEmpty) return nullptr;
      if (s.hash == static_cast<std::uint32_t>(h >> 32) && s.key_len == word.size() &&
          std::memcmp(keys_.data() + s.key_off, word.data(), word.size()) == 0) {
        count = s.pool_len;
        return pool_.data() + s.pool_off;
      }
    }
  }
  void insert(std::string_view word, std::uint64_t h, const TokenPiece* tokens,
              std::uint32_t count) {
    if (slots_.empty() || entries_ >= kMaxEntries) clear();
    std::uint32_t i = static_cast<std::uint32_t>(h) & (kSlots - 1);
    while (slots_[i].key_len != kEmpty) i = (i + 1) & (kSlots - 1);
    slots_[i] = Slot{static_cast<std::uint32_t>(h >> 32), static_cast<std::uint32_t>(keys_.size()),
                     static_cast<std::uint32_t>(word.size()),
                     static_cast<std::uint32_t>(pool_.size()), count};
    keys_.append(word);
    pool_.insert(pool_.end(), tokens, tokens + count);
    ++entries_;
  }
  void clear() {
    slots_.assign(kSlots, Slot{});
    keys_.clear();
    pool_.clear();
    entries_ = 0;
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  struct Slot {
    std::uint32_t hash = 0, key_off = 0, key_len = kEmpty, pool_off = 0, pool_len = 0;
  };
  std::vector<Slot> slots_;
  std::string keys_;
  std::vector<TokenPiece> pool_;
  std::uint32_t entries_ = 0;
};

struct Scratch {
  std::vector<Symbol> symbols;
  std::vector<HeapEntry> heap;
  std::string key;
  std::uint64_t serial = 0;  // the tokenizer the cache belongs to
  WordCache cache;
};

constexpr std::size_t kCacheMaxWordBytes = 256;

inline bool lookup_merge(const TokenizerData& d, std::uint32_t a, std::uint32_t b,
                         std::uint32_t& rank, std::uint32_t& new_id) {
  return d.merges.get(a, b, rank, new_id);
}

void push_unk(const TokenizerData& d, std::vector<Symbol>& symbols, std::uint32_t len) {
  if (d.unk_id == kNoId) return;  // HF: no unk token -> the character is dropped
  if (d.fuse_unk && !symbols.empty() && symbols.back().id == d.unk_id) {
    symbols.back().len += len;
    return;
  }
  symbols.push_back({d.unk_id, len, 0, 0});
}

// Initial symbols: one per character (SentencePiece-style) or per byte (byte-level).
void initial_symbols(const TokenizerData& d, std::string_view word, Scratch& sc) {
  auto& symbols = sc.symbols;
  symbols.clear();
  const auto* s = reinterpret_cast<const unsigned char*>(word.data());
  const std::size_t n = word.size();
  if (d.byte_level && d.simple_bpe) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t id = d.byte_id[s[i]];
      if (id != kNoId) {
        symbols.push_back({id, 1, 0, 0});
      } else {
        push_unk(d, symbols, 1);
      }
    }
    return;
  }
  std::size_t i = 0;
  while (i < n) {
    std::size_t len = unicode::utf8_length(s[i]);
    if (i + len > n) len = n - i;
    std::uint32_t id = kNoId;
    bool found;
    if (d.simple_bpe) {
      if (s[i] < 0x80) {
        id = d.ascii_id[s[i]];
        found = id != kNoId;
      } else {
        found = d.vocab.get(word.substr(i, len), id);
      }
    } else {
      sc.key.clear();
      if (i > 0) sc.key += d.continuing_subword_prefix;
      sc.key.append(word.substr(i, len));
      if (i + len == n) sc.key += d.end_of_word_suffix;
      found = d.vocab.get(sc.key, id);
    }
    if (found) {
      symbols.push_back({id, static_cast<std::uint32_t>(len), 0, 0});
    } else if (d.byte_fallback) {
      bool all = true;
      for (std::size_t k = 0; k < len; ++k) all = all && d.byte_fallback_id[s[i + k]] != kNoId;
      if (all) {
        for (std::size_t k = 0; k < len; ++k)
          symbols.push_back({d.byte_fallback_id[s[i + k]], 1, 0, 0});
      } else {
        push_unk(d, symbols, static_cast<std::uint32_t>(len));
      }
    } else {
      push_unk(d, symbols, static_cast<std::uint32_t>(len));
    }
    i += len;
  }
}

// Small words: repeatedly merge the best adjacent pair (same result as the heap, less overhead).
// The rank of every adjacent pair is kept, so a merge costs two lookups, not a rescan.
constexpr std::size_t kSmallWord = 48;
void merge_small(const TokenizerData& d, std::vector<Symbol>& sy) {
  constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  std::uint32_t rank[kSmallWord], merged[kSmallWord];
  std::size_t n = sy.size();
  auto pair_rank = [&](std::size_t i) {
    if (!lookup_merge(d, sy[i].id, sy[i + 1].id, rank[i], merged[i])) rank[i] = kNone;
  };
  // The merge table is large (Gemma 3: 16 MB): start all the first lookups' loads at once.
  for (std::size_t i = 0; i + 1 < n; ++i) d.merges.prefetch(sy[i].id, sy[i + 1].id);
  for (std::size_t i = 0; i + 1 < n; ++i) pair_rank(i);
  while (n > 1) {
    std::size_t best = 0;
    for (std::size_t i = 1; i + 1 < n; ++i) {
      if (rank[i] < rank[best]) best = i;
    }
    if (rank[best] == kNone) break;
    sy[best].id = merged[best];
    sy[best].len += sy[best + 1].len;
    // The two new pairs' lookups miss the cache on large tables: start both loads now, so that
    // they overlap each other and the shift below.
    if (best > 0) d.merges.prefetch(sy[best - 1].id, sy[best].id);
    if (best + 2 < n) d.merges.prefetch(sy[best].id, sy[best + 2].id);
    for (std::size_t i = best + 1; i + 1 < n; ++i) {
      sy[i] = sy[i + 1];
      rank[i] = rank[i + 1];
      merged[i] = merged[i + 1];
    }
    --n;
    if (best > 0) pair_rank(best - 1);
    if (best + 1 < n) pair_rank(best);
  }
  sy.resize(n);
}

// Long words: HF's priority queue over a linked list, O(n log n).
void merge_heap(const TokenizerData& d, Scratch& sc) {
  auto& sy = sc.symbols;
  auto& heap = sc.heap;
  heap.clear();
  const auto count = static_cast<std::int32_t>(sy.size());
  for (std::int32_t i = 0; i < count; ++i) {
    sy[i].prev = i - 1;
    sy[i].next = i + 1 < count ? i + 1 : -1;
  }
  for (std::int32_t i = 0; i + 1 < count; ++i) {
    if (i + 16 + 1 < count) d.merges.prefetch(sy[i + 16].id, sy[i + 17].id);
    std::uint32_t rank, id;
    if (lookup_merge(d, sy[i].id, sy[i + 1].id, rank, id)) {
      heap.push_back({rank, static_cast<std::uint32_t>(i), id, sy[i].id, sy[i + 1].id});
    }
  }
  std::make_heap(heap.begin(), heap.end(), HeapLess{});
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), HeapLess{});
    HeapEntry top = heap.back();
    heap.pop_back();
    Symbol& cur = sy[top.pos];
    if (cur.len == 0 || cur.next < 0) continue;
    Symbol right = sy[cur.next];
    std::uint32_t rank, id;
    // Stale entry? HF re-looks the pair up and compares the merged id; when the pair is the one
    // the entry was made for, that lookup cannot fail, so it is skipped.
    if (!(cur.id == top.left && right.id == top.right) &&
        (!lookup_merge(d, cur.id, right.id, rank, id) || id != top.new_id)) {
      continue;
    }
    std::int32_t right_pos = cur.next;
    cur.id = top.new_id;
    cur.len += right.len;
    cur.next = right.next;
    sy[right_pos].len = 0;
    if (right.next >= 0) sy[right.next].prev = static_cast<std::int32_t>(top.pos);
    if (cur.prev >= 0 && lookup_merge(d, sy[cur.prev].id, cur.id, rank, id)) {
      heap.push_back({rank, static_cast<std::uint32_t>(cur.prev), id, sy[cur.prev].id, cur.id});
      std::push_heap(heap.begin(), heap.end(), HeapLess{});
    }
    if (cur.next >= 0 && lookup_merge(d, cur.id, sy[cur.next].id, rank, id)) {
      heap.push_back({rank, top.pos, id, cur.id, sy[cur.next].id});
      std::push_heap(heap.begin(), heap.end(), HeapLess{});
    }
  }
  std::size_t w = 0;
  for (std::size_t i = 0; i < sy.size(); ++i) {
    if (sy[i].len != 0) sy[w++] = sy[i];
  }
  sy.resize(w);
}

void bpe_word(const TokenizerData& d, std::string_view word, Scratch& sc,
              std::vector<TokenPiece>& out) {
  if (d.ignore_merges) {
    std::uint32_t id;
    if (d.vocab.get(word, id)) {
      out.push_back({id, static_cast<std::uint32_t>(word.size())});
      return;
    }
  }
  initial_symbols(d, word, sc);
  if (sc.symbols.size() <= kSmallWord) {
    merge_small(d, sc.symbols);
  } else {
    merge_heap(d, sc);
  }
  for (const Symbol& s : sc.symbols) out.push_back({s.id, s.len});
}

void run_cached(const TokenizerData& d, std::string_view word, std::vector<TokenPiece>& out);

// Cuts a SentencePiece-style text before each U+2581 that no token can join to what precedes it.
void run_metaspace_split(const TokenizerData& d, std::string_view word,
                         std::vector<TokenPiece>& out) {
  static constexpr std::string_view kMeta = "\xE2\x96\x81";
  std::size_t start = 0;
  std::size_t pos = word.find(kMeta, 1);
  while (pos != std::string_view::npos) {
    std::size_t prev = pos - 1;
    while (prev > start && (static_cast<unsigned char>(word[prev]) & 0xC0) == 0x80) --prev;
    std::size_t len;
    char32_t before = unicode::decode_utf8(word, prev, len);
    if (before != 0x2581 && std::find(d.metaspace_glue.begin(), d.metaspace_glue.end(), before) ==
                                d.metaspace_glue.end()) {
      run_cached(d, word.substr(start, pos - start), out);
      start = pos;
    }
    pos = word.find(kMeta, pos + kMeta.size());
  }
  run_cached(d, word.substr(start), out);
}

}  // namespace

Result<bool> run_model(const TokenizerData& d, std::string_view word,
                       std::vector<TokenPiece>& out) {
  if (word.empty()) return true;
  if (d.model == ModelKind::kWordLevel) {
    std::uint32_t id;
    if (d.vocab.get(word, id)) {
      out.push_back({id, static_cast<std::uint32_t>(word.size())});
    } else if (d.unk_id != kNoId) {
      out.push_back({d.unk_id, static_cast<std::uint32_t>(word.size())});
    } else {
      return Error{
          "TokenizerError", "WordLevel: word not in the vocabulary and no unk_token", 0, 0, {}};
    }
    return true;
  }
  if (d.metaspace_split) {
    run_metaspace_split(d, word, out);
  } else {
    run_cached(d, word, out);
  }
  return true;
}

namespace {

void run_cached(const TokenizerData& d, std::string_view word, std::vector<TokenPiece>& out) {
  if (word.empty()) return;
  thread_local Scratch sc;
  if (sc.serial != d.serial) {
    sc.cache.clear();
    sc.serial = d.serial;
  }
  if (word.size() > kCacheMaxWordBytes) {
    bpe_word(d, word, sc, out);
    return;
  }
  std::uint64_t h = hash_bytes(word.data(), word.size());
  std::uint32_t count = 0;
  if (const TokenPiece* hit = sc.cache.find(word, h, count)) {
    out.insert(out.end(), hit, hit + count);
    return;
  }
  std::size_t before = out.size();
  bpe_word(d, word, sc, out);
  sc.cache.insert(word, h, out.data() + before, static_cast<std::uint32_t>(out.size() - before));
}

}  // namespace
}  // namespace chatwire::tokenize
