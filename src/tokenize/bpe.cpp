// The models: BPE (HF's merge order: lowest merge rank first, leftmost on ties, exactly as
// tokenizers' Word::merge_all) and WordLevel. A per-thread cache remembers the tokens of
// recently seen words, keyed by the tokenizer's serial number.
//
// Speed: the words of a pre-tokenized segment are handled in chunks. Each merge of a word waits for
// one lookup in the merge table, and on a large vocabulary (Gemma 3: 16 MB) that lookup misses the
// cache, so a word merged on its own is a chain of memory latencies. Instead the cache misses of a
// chunk become jobs that are merged round-robin, a few in flight: each job prefetches its next
// pairs and yields, so that by the time it runs again its lookups have arrived. The word cache is
// probed the same way, a few words ahead.
#include <algorithm>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// a[0, n) == b[0, n) for the short keys of the word cache: up to 16 bytes without a libc call.
inline bool equal_bytes(const unsigned char* a, const char* b, std::size_t n) {
  if (n >= 8 && n <= 16) return equal_ends<std::uint64_t>(a, b, n);
  if (n >= 4 && n < 8) return equal_ends<std::uint32_t>(a, b, n);
  if (n < 4) {
    for (std::size_t i = 0; i < n; ++i) {
      if (a[i] != static_cast<unsigned char>(b[i])) return false;
    }
    return true;
  }
  return std::memcmp(a, b, n) == 0;
}

// Word -> tokens, open addressing over one arena that holds each entry's tokens followed by its
// key, so that checking the key and copying the tokens touch one place. No allocation per word.
// When full it starts again empty (a bounded memory footprint per thread).
class WordCache {
 public:
  static constexpr std::uint32_t kSlots = 1u << 17;
  static constexpr std::uint32_t kMaxEntries = kSlots / 2;
  static constexpr std::size_t kMaxArena = std::size_t{32} << 20;
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  void prefetch(std::uint64_t h) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & (kSlots - 1)]);
  }
  // The first slot whose tag and length match (a candidate, to be confirmed by same_key), or kNone.
  std::uint32_t candidate(std::size_t len, std::uint64_t h) const {
    return probe(len, h, [&](std::uint32_t i) {
      __builtin_prefetch(arena_.data() + slots_[i].offset);
      return true;
    });
  }
  bool same_key(std::uint32_t slot, std::string_view word) const {
    const Slot& s = slots_[slot];
    return equal_bytes(arena_.data() + s.offset + s.count * sizeof(TokenPiece), word.data(),
                       word.size());
  }
  // Full lookup (used when a candidate's key differs, which a 32-bit tag makes rare).
  std::uint32_t find(std::string_view word, std::uint64_t h) const {
    return probe(word.size(), h, [&](std::uint32_t i) { return same_key(i, word); });
  }
  std::uint32_t count(std::uint32_t slot) const { return slots_[slot].count; }
  void copy_tokens(std::uint32_t slot, TokenList& out) const {
    const Slot& s = slots_[slot];
    const unsigned char* from = arena_.data() + s.offset;
    for (std::uint32_t k = 0; k < s.count; ++k, from += sizeof(TokenPiece)) {
      TokenPiece t;
      std::memcpy(&t, from, sizeof t);
      out.push_back(t);
    }
  }
  // Room for `words` more entries? Else the caller clears first.
  bool has_room(std::size_t words) const {
    return !slots_.empty() && entries_ + words <= kMaxEntries && arena_.size() <= kMaxArena;
  }
  void insert(std::string_view word, std::uint64_t h, const TokenPiece* tokens,
              std::uint32_t count) {
    std::uint32_t i = static_cast<std::uint32_t>(h) & (kSlots - 1);
    while (slots_[i].key_len != kEmpty) i = (i + 1) & (kSlots - 1);
    slots_[i] = Slot{static_cast<std::uint32_t>(h >> 32), static_cast<std::uint32_t>(arena_.size()),
                     static_cast<std::uint32_t>(word.size()), count};
    const std::size_t at = arena_.size();
    arena_.resize(at + count * sizeof(TokenPiece) + word.size());
    std::memcpy(arena_.data() + at, tokens, count * sizeof(TokenPiece));
    std::memcpy(arena_.data() + at + count * sizeof(TokenPiece), word.data(), word.size());
    ++entries_;
  }
  void clear() {
    slots_.assign(kSlots, Slot{});
    // Room up front (address space; pages are touched as entries arrive): growing by doubling
    // copied the arena through every size, fresh pages each time.
    if (arena_.capacity() == 0) arena_.reserve(kInitialArena);
    arena_.clear();
    entries_ = 0;
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  struct Slot {
    std::uint32_t hash = 0, offset = 0, key_len = kEmpty, count = 0;
  };
  // The first slot from h's home whose tag and length match and that `accept` takes, or kNone
  // (at an empty slot). A template, not a callback: both uses sit in the per-word loop.
  template <class Accept>
  std::uint32_t probe(std::size_t len, std::uint64_t h, Accept accept) const {
    if (slots_.empty()) return kNone;
    const auto tag = static_cast<std::uint32_t>(h >> 32);
    for (std::uint32_t i = static_cast<std::uint32_t>(h) & (kSlots - 1);;
         i = (i + 1) & (kSlots - 1)) {
      const Slot& s = slots_[i];
      if (s.key_len == kEmpty) return kNone;
      if (s.hash == tag && s.key_len == len && accept(i)) return i;
    }
  }
  static constexpr std::size_t kInitialArena = std::size_t{8} << 20;
  // Huge pages: 2 MB of slots are 512 page faults with 4 KB pages, paid by every fresh process.
  HugeVector<Slot> slots_;
  HugeVector<unsigned char> arena_;
  std::uint32_t entries_ = 0;
};

// Words up to this many initial symbols are merged by a MergeJob (arrays, a linear scan for the
// best pair: less overhead than the heap on short words); longer ones by merge_heap.
constexpr std::size_t kSmallWord = 48;

// The merge state of one short word. Symbols keep their initial positions (a merge marks its right
// symbol dead and relinks), so a merge moves no data; key[i] is (rank << 32 | i) for the pair that
// starts at symbol i, or kNoKey, so the best pair (lowest rank, leftmost) is a branch-free minimum.
struct MergeJob {
  static constexpr std::uint64_t kNoKey = ~std::uint64_t{0};
  std::uint32_t word = 0;  // index of the word in the chunk
  std::uint32_t n = 0;     // initial symbols
  // Pairs whose rank is not known yet: all of them (fresh job), or the two around the last merge
  // (-1 = none).
  bool fresh = true;
  // A spare symbol slot: the pair "kSpare" is looked up and written when there is no pair to fix.
  static constexpr std::uint32_t kSpare = kSmallWord;
  std::uint32_t fix0 = kSpare, fix1 = kSpare;
  std::uint64_t key[kSmallWord + 1];
  std::uint32_t id[kSmallWord + 1], len[kSmallWord + 1], merged[kSmallWord + 1];
  std::uint8_t next[kSmallWord + 1], prev[kSmallWord + 1];

  void start(const TokenizerData& d, const std::vector<Symbol>& symbols, std::uint32_t w) {
    word = w;
    n = static_cast<std::uint32_t>(symbols.size());
    for (std::uint32_t i = 0; i < n; ++i) {
      id[i] = symbols[i].id;
      len[i] = symbols[i].len;
      next[i] = static_cast<std::uint8_t>(i + 1);
      prev[i] = static_cast<std::uint8_t>(i - 1);  // 255 for the first: never read
    }
    id[kSpare] = 0;
    next[kSpare] = kSpare;
    fresh = true;
    for (std::uint32_t i = 0; i + 1 < n; ++i) d.merges.prefetch(id[i], id[i + 1]);
  }
  void pair_rank(const TokenizerData& d, std::uint32_t i) {
    const std::uint64_t r = d.merges.find(id[i], id[next[i]]);
    merged[i] = static_cast<std::uint32_t>(r);
    key[i] = r == MergeTable::kNone ? kNoKey : ((r >> 32) << 32 | i);
  }
  // One merge. False when no pair merges any more (the job is done).
  bool step(const TokenizerData& d) {
    if (n < 2) return false;
    if (fresh) {
      for (std::uint32_t i = 0; i + 1 < n; ++i) pair_rank(d, i);
      key[n - 1] = kNoKey;
      fresh = false;
    } else {
      // Both always run (the spare slot kSpare stands for "no pair"): no branch to mispredict.
      pair_rank(d, fix0);
      pair_rank(d, fix1);
    }
    // Two running minima: half the dependency chain.
    std::uint64_t best0 = kNoKey, best1 = kNoKey;
    std::uint32_t i = 0;
    for (; i + 1 < n; i += 2) {
      best0 = std::min(best0, key[i]);
      best1 = std::min(best1, key[i + 1]);
    }
    if (i < n) best0 = std::min(best0, key[i]);
    const std::uint64_t best = std::min(best0, best1);
    if (best == kNoKey) return false;
    const auto b = static_cast<std::uint32_t>(best);
    const std::uint32_t r = next[b];
    id[b] = merged[b];
    len[b] += len[r];
    key[r] = kNoKey;
    key[b] = kNoKey;  // until fix1 recomputes it
    const std::uint32_t after = next[r];
    next[b] = static_cast<std::uint8_t>(after);
    prev[after] = static_cast<std::uint8_t>(b);  // after == n: a spare entry
    fix0 = b > 0 ? prev[b] : kSpare;
    fix1 = after < n ? b : kSpare;
    // The two new pairs' lookups miss the cache on large tables: start both loads now.
    d.merges.prefetch(id[fix0], id[next[fix0]]);
    d.merges.prefetch(id[fix1], id[next[fix1]]);
    return true;
  }
  std::uint32_t emit(TokenList& out) const {
    std::uint32_t count = 0;
    for (std::uint32_t i = 0; i < n; i = next[i], ++count) out.push_back({id[i], len[i]});
    return count;
  }
};

// Jobs merged round-robin: enough for each one's prefetches to arrive before it runs again.
constexpr std::size_t kJobsInFlight = 12;
// Words per chunk (probed, merged, then emitted in order).
constexpr std::size_t kChunk = 256;
// The word cache is probed this many words ahead of use.
constexpr std::size_t kProbeAhead = 8;
constexpr std::size_t kCacheMaxWordBytes = 256;
// metaspace_split words longer than this are also cut at hard boundaries (split_words).
constexpr std::size_t kSplitMinBytes = 20;

// Word::slot of a word that missed the cache earlier in the same chunk.
constexpr std::uint32_t kRepeat = 0xFFFFFFFEu;
constexpr std::uint32_t kNoWord = 0xFFFFFFFFu;

struct Word {
  std::uint32_t begin, end;  // bytes of the text
  std::uint32_t piece;       // the pre-token it belongs to
  std::uint64_t hash;
  std::uint32_t slot;           // cache slot (a hit) or WordCache::kNone
  std::uint32_t result, count;  // a miss: its tokens in Scratch::results
};

struct Scratch {
  std::vector<Symbol> symbols;
  std::vector<HeapEntry> heap;
  std::string key;
  std::vector<Word> words;
  std::vector<std::uint32_t> misses;  // chunk word indices to merge
  TokenList results;                  // the misses' tokens
  std::vector<MergeJob> jobs;
  static constexpr std::size_t kMissTable = 2 * kChunk;  // power of two
  std::uint32_t first_miss[kMissTable];  // chunk index of each distinct miss, by hash
  std::uint64_t serial = 0;              // the tokenizer the cache belongs to
  WordCache cache;
};

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
    if (d.merges.get(sy[i].id, sy[i + 1].id, rank, id)) {
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
        (!d.merges.get(cur.id, right.id, rank, id) || id != top.new_id)) {
      continue;
    }
    std::int32_t right_pos = cur.next;
    cur.id = top.new_id;
    cur.len += right.len;
    cur.next = right.next;
    sy[right_pos].len = 0;
    if (right.next >= 0) sy[right.next].prev = static_cast<std::int32_t>(top.pos);
    if (cur.prev >= 0 && d.merges.get(sy[cur.prev].id, cur.id, rank, id)) {
      heap.push_back({rank, static_cast<std::uint32_t>(cur.prev), id, sy[cur.prev].id, cur.id});
      std::push_heap(heap.begin(), heap.end(), HeapLess{});
    }
    if (cur.next >= 0 && d.merges.get(cur.id, sy[cur.next].id, rank, id)) {
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

// ignore_merges: a word that is a vocab token is that token, whatever the merges say.
bool whole_word_token(const TokenizerData& d, std::string_view word, TokenList& out) {
  std::uint32_t id;
  if (!d.ignore_merges || !d.vocab.get(word, id)) return false;
  out.push_back({id, static_cast<std::uint32_t>(word.size())});
  return true;
}

// Tokenizes one word on its own (no job interleaving): words too long for a job or the cache.
void bpe_word(const TokenizerData& d, std::string_view word, Scratch& sc, TokenList& out) {
  if (whole_word_token(d, word, out)) return;
  initial_symbols(d, word, sc);
  if (sc.symbols.size() <= kSmallWord) {
    MergeJob& job = sc.jobs[0];
    job.start(d, sc.symbols, 0);
    while (job.step(d)) {
    }
    job.emit(out);
    return;
  }
  merge_heap(d, sc);
  for (const Symbol& s : sc.symbols) out.push_back({s.id, s.len});
}

// Merges the chunk's misses, kJobsInFlight at a time, into sc.results.
void merge_misses(const TokenizerData& d, std::string_view text, Scratch& sc, Word* chunk) {
  std::size_t next = 0;  // next miss to start
  std::size_t active = 0;
  // The jobs in flight, by pointer (a finished one is replaced by the last: no 1 KB copies).
  MergeJob* jobs[kJobsInFlight];
  for (std::size_t k = 0; k < kJobsInFlight; ++k) jobs[k] = &sc.jobs[k];
  // Starts the next miss that needs a job in jobs[k]; false when none is left. Misses that do not
  // need one (whole-word tokens, long words) are finished on the spot.
  auto start = [&](MergeJob& job) {
    while (next < sc.misses.size()) {
      const std::uint32_t w = sc.misses[next++];
      Word& word = chunk[w];
      std::string_view s = text.substr(word.begin, word.end - word.begin);
      word.result = static_cast<std::uint32_t>(sc.results.size());
      if (whole_word_token(d, s, sc.results)) {
        word.count = 1;
        continue;
      }
      initial_symbols(d, s, sc);
      if (sc.symbols.size() > kSmallWord) {
        merge_heap(d, sc);
        for (const Symbol& sy : sc.symbols) sc.results.push_back({sy.id, sy.len});
        word.count = static_cast<std::uint32_t>(sc.results.size() - word.result);
        continue;
      }
      job.start(d, sc.symbols, w);
      return true;
    }
    return false;
  };
  while (active < kJobsInFlight && start(*jobs[active])) ++active;
  while (active > 0) {
    for (std::size_t k = 0; k < active;) {
      MergeJob& job = *jobs[k];
      if (job.step(d)) {
        ++k;
        continue;
      }
      Word& word = chunk[job.word];
      word.result = static_cast<std::uint32_t>(sc.results.size());
      word.count = job.emit(sc.results);
      if (!start(job)) {
        // No more work: move the last active job here.
        --active;
        if (k != active) std::swap(jobs[k], jobs[active]);
      } else {
        ++k;
      }
    }
  }
}

// One chunk of words: probe the cache (a few words ahead), merge the misses, emit in order.
void run_chunk(const TokenizerData& d, std::string_view text, Scratch& sc, Word* chunk,
               std::size_t n, TokenList& out, HugeVector<std::uint32_t>& piece_end,
               std::uint32_t& next_piece) {
  WordCache& cache = sc.cache;
  if (!cache.has_room(n)) cache.clear();
  auto cacheable = [&](const Word& w) { return w.end - w.begin <= kCacheMaxWordBytes; };
  for (std::size_t i = 0; i < n && i < kProbeAhead; ++i) {
    Word& w = chunk[i];
    w.hash = hash_bytes(text.data() + w.begin, w.end - w.begin);
    cache.prefetch(w.hash);
  }
  // Pass 1: each word's candidate slot (which also prefetches its entry).
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kProbeAhead < n) {
      Word& ahead = chunk[i + kProbeAhead];
      ahead.hash = hash_bytes(text.data() + ahead.begin, ahead.end - ahead.begin);
      cache.prefetch(ahead.hash);
    }
    Word& w = chunk[i];
    w.slot = cacheable(w) ? cache.candidate(w.end - w.begin, w.hash) : WordCache::kNone;
  }
  // Pass 2: confirm the keys; the rest are misses. A word that misses twice in the chunk is merged
  // once: the later ones point at the first (in a small table of the chunk's misses).
  sc.misses.clear();
  sc.results.clear();
  std::fill(std::begin(sc.first_miss), std::end(sc.first_miss), kNoWord);
  for (std::size_t i = 0; i < n; ++i) {
    Word& w = chunk[i];
    std::string_view s = text.substr(w.begin, w.end - w.begin);
    if (w.slot != WordCache::kNone && !cache.same_key(w.slot, s)) w.slot = cache.find(s, w.hash);
    if (w.slot != WordCache::kNone) continue;
    if (cacheable(w)) {
      std::uint32_t* seen = nullptr;
      for (std::size_t k = w.hash & (Scratch::kMissTable - 1);;
           k = (k + 1) & (Scratch::kMissTable - 1)) {
        if (sc.first_miss[k] == kNoWord) {
          seen = &sc.first_miss[k];
          break;
        }
        const Word& f = chunk[sc.first_miss[k]];
        if (f.hash == w.hash && f.end - f.begin == w.end - w.begin &&
            text.compare(f.begin, f.end - f.begin, s) == 0) {
          break;
        }
      }
      if (seen == nullptr) {  // a repeat: pass 3 copies the first one's tokens
        w.slot = kRepeat;
        continue;
      }
      *seen = static_cast<std::uint32_t>(i);
      sc.misses.push_back(static_cast<std::uint32_t>(i));
    } else {
      w.result = static_cast<std::uint32_t>(sc.results.size());
      bpe_word(d, s, sc, sc.results);
      w.count = static_cast<std::uint32_t>(sc.results.size() - w.result);
    }
  }
  merge_misses(d, text, sc, chunk);
  // Pass 3: emit in order, and remember the misses (each distinct one once: see pass 2).
  for (std::size_t i = 0; i < n; ++i) {
    Word& w = chunk[i];
    while (next_piece < w.piece) piece_end[next_piece++] = static_cast<std::uint32_t>(out.size());
    if (w.slot == kRepeat) {
      // The first occurrence was emitted (and cached) earlier in this pass.
      w.slot = cache.find(text.substr(w.begin, w.end - w.begin), w.hash);
    }
    if (w.slot != WordCache::kNone) {
      cache.copy_tokens(w.slot, out);
      continue;
    }
    const TokenPiece* tokens = sc.results.data() + w.result;
    out.insert(out.end(), tokens, tokens + w.count);
    if (!cacheable(w)) continue;
    std::string_view s = text.substr(w.begin, w.end - w.begin);
    cache.insert(s, w.hash, tokens, w.count);  // absent: pass 2 found it missing, once per chunk
  }
}

void boundary_words(const TokenizerData& d, std::string_view text, std::uint32_t b, std::uint32_t e,
                    std::uint32_t piece, std::vector<Word>& words);

// Cuts a SentencePiece-style piece before each U+2581 that no token can join to what precedes it
// (and, with split_words, words over kSplitMinBytes at their hard boundaries).
void metaspace_words(const TokenizerData& d, std::string_view text, std::uint32_t b,
                     std::uint32_t e, std::uint32_t piece, std::vector<Word>& words) {
  std::string_view word = text.substr(b, e - b);
  const auto* u = reinterpret_cast<const unsigned char*>(word.data());
  // The next U+2581 at or after `from` (an inline scan: they are a few bytes apart, too close for
  // a memchr call to pay off).
  auto next_meta = [&](std::size_t from) {
    std::size_t j = from;
#if defined(__SSE2__)
    const __m128i lead = _mm_set1_epi8(static_cast<char>(0xE2));
    while (j + 16 + 2 <= word.size()) {
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(
          _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(u + j)), lead)));
      while (mask != 0) {
        const std::size_t k = j + static_cast<std::size_t>(__builtin_ctz(mask));
        if (u[k + 1] == 0x96 && u[k + 2] == 0x81) return k;
        mask &= mask - 1;
      }
      j += 16;
    }
#endif
    for (; j + 2 < word.size(); ++j) {
      if (u[j] == 0xE2 && u[j + 1] == 0x96 && u[j + 2] == 0x81) return j;
    }
    return std::string_view::npos;
  };
  auto emit = [&](std::uint32_t from, std::uint32_t to) {
    if (d.split_words && to - from > kSplitMinBytes) {
      boundary_words(d, text, from, to, piece, words);
    } else {
      words.push_back({from, to, piece, 0, 0, 0, 0});
    }
  };
  std::size_t start = 0;
  std::size_t pos = next_meta(1);
  while (pos != std::string_view::npos) {
    std::size_t prev = pos - 1;
    while (prev > start && (static_cast<unsigned char>(word[prev]) & 0xC0) == 0x80) --prev;
    std::size_t len;
    char32_t before = unicode::decode_utf8(word, prev, len);
    if (before != 0x2581 && !d.is_glue(before)) {
      emit(b + static_cast<std::uint32_t>(start), b + static_cast<std::uint32_t>(pos));
      start = pos;
    }
    pos = next_meta(pos + 3);
  }
  emit(b + static_cast<std::uint32_t>(start), e);
}

// Cuts a piece wherever no merge can join the characters on either side (split_words), and, for
// SentencePiece-style files, before each U+2581 that no token joins to what precedes it
// (metaspace_split: the bucket bitmap alone would rarely cut there, U+2581 sharing its bucket with
// other characters).
void boundary_words(const TokenizerData& d, std::string_view text, std::uint32_t b, std::uint32_t e,
                    std::uint32_t piece, std::vector<Word>& words) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  std::uint32_t start = b;
  unsigned before = 0;
  char32_t before_cp = 0;
  for (std::uint32_t i = b; i < e;) {
    char32_t cp;
    std::size_t len = 1;
    if (s[i] < 0x80) {
      cp = s[i];
    } else {
      cp = unicode::decode_utf8(s, e, i, len);
    }
    const unsigned bucket = TokenizerData::join_bucket(cp);
    if (i > b) {
      bool cut = !d.may_join(before, bucket);
      if (!cut && cp == 0x2581 && d.metaspace_split && before_cp != 0x2581) {
        cut = !d.is_glue(before_cp);
      }
      if (cut) {
        words.push_back({start, i, piece, 0, 0, 0, 0});
        start = i;
      }
    }
    before = bucket;
    before_cp = cp;
    i += static_cast<std::uint32_t>(len);
  }
  words.push_back({start, e, piece, 0, 0, 0, 0});
}

}  // namespace

Result<bool> run_model(const TokenizerData& d, std::string_view text, const SpanVector& pieces,
                       TokenList& out, HugeVector<std::uint32_t>& piece_end) {
  piece_end.assign(pieces.size(), 0);
  if (d.model == ModelKind::kWordLevel) {
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      auto [b, e] = pieces[p];
      std::string_view word = text.substr(b, e - b);
      std::uint32_t id;
      if (word.empty()) {
      } else if (d.vocab.get(word, id)) {
        out.push_back({id, static_cast<std::uint32_t>(word.size())});
      } else if (d.unk_id != kNoId) {
        out.push_back({d.unk_id, static_cast<std::uint32_t>(word.size())});
      } else {
        return Error{
            "TokenizerError", "WordLevel: word not in the vocabulary and no unk_token", 0, 0, {}};
      }
      piece_end[p] = static_cast<std::uint32_t>(out.size());
    }
    return true;
  }
  thread_local Scratch sc;
  if (sc.serial != d.serial || !sc.cache.has_room(0)) {
    sc.cache.clear();
    sc.serial = d.serial;
  }
  if (sc.jobs.size() < kJobsInFlight) sc.jobs.resize(kJobsInFlight);
  sc.words.clear();
  std::uint32_t next_piece = 0;
  // The words are cut and run a few chunks at a time, so that the list stays small (it was 40
  // bytes per word of the whole text, fresh pages that a one-shot encode paid to fault in). The
  // chunking does not change the result: the cache only remembers.
  auto run_full_chunks = [&] {
    const std::size_t full = sc.words.size() / kChunk * kChunk;
    for (std::size_t at = 0; at < full; at += kChunk) {
      run_chunk(d, text, sc, sc.words.data() + at, kChunk, out, piece_end, next_piece);
    }
    sc.words.erase(sc.words.begin(), sc.words.begin() + static_cast<std::ptrdiff_t>(full));
  };
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    auto [b, e] = pieces[p];
    if (e == b) continue;
    const auto piece = static_cast<std::uint32_t>(p);
    if (d.metaspace_split) {
      // The U+2581 cuts first (a fast search); then only the longer words are read character by
      // character for hard boundaries: short words gain little from a cut, and the scan costs
      // every encode, cached words included.
      metaspace_words(d, text, b, e, piece, sc.words);
    } else if (d.split_words) {
      boundary_words(d, text, b, e, piece, sc.words);
    } else {
      sc.words.push_back({b, e, static_cast<std::uint32_t>(p), 0, 0, 0, 0});
    }
    if (sc.words.size() >= 4 * kChunk) run_full_chunks();
  }
  for (std::size_t at = 0; at < sc.words.size(); at += kChunk) {
    run_chunk(d, text, sc, sc.words.data() + at, std::min(kChunk, sc.words.size() - at), out,
              piece_end, next_piece);
  }
  while (next_piece < pieces.size())
    piece_end[next_piece++] = static_cast<std::uint32_t>(out.size());
  return true;
}

}  // namespace chatwire::tokenize
