// Open-addressing hash maps for the two hot lookups: token bytes -> id and (left id, right id) ->
// merge. Built once at load, read-only afterwards (so safe to share between threads).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace chatwire::tokenize {

// Allocator for the big lookup tables: blocks of 2 MB and more are 2 MB-aligned and asked to be
// backed by transparent huge pages. Their lookups are random, and with 4 KB pages nearly each one
// also misses the TLB (Gemma 3's merge table alone spans 4096 pages, twice the L2 TLB).
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
    const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = ::operator new (rounded, std::align_val_t{kHuge});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, rounded, MADV_HUGEPAGE);  // advisory: without THP it is a plain allocation
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < kHuge) {
      ::operator delete(p);
    } else {
      ::operator delete (p, std::align_val_t{kHuge});
    }
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};
template <typename T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

inline std::uint64_t hash_bytes(const void* data, std::size_t n) {
  // FNV-1a over 8-byte words, then a final mix: fast for the short keys a vocabulary holds.
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = 0xcbf29ce484222325ull ^ n;
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  // The 0-7 byte tail in at most two fixed-size loads (a variable-size memcpy is a libc call).
  std::uint64_t tail = 0;
  if (n >= 4) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    tail = lo | (std::uint64_t{hi} << (8 * (n - 4)));
  } else if (n > 0) {
    tail = p[0] | (std::uint64_t{p[n / 2]} << 8) | (std::uint64_t{p[n - 1]} << 16);
  }
  h = (h ^ tail) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 32);
}

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// a[0, w) == b[0, w) and a[n - w, n) == b[n - w, n) for a word of w bytes (w <= n <= 2w): the
// whole of both when n <= 2w, in two possibly overlapping loads a side.
// Compared without a branch.
template <typename Word>
inline bool equal_ends(const void* a, const void* b, std::size_t n) {
  const auto* x = static_cast<const char*>(a);
  const auto* y = static_cast<const char*>(b);
  Word a0, a1, b0, b1;
  std::memcpy(&a0, x, sizeof(Word));
  std::memcpy(&b0, y, sizeof(Word));
  std::memcpy(&a1, x + n - sizeof(Word), sizeof(Word));
  std::memcpy(&b1, y + n - sizeof(Word), sizeof(Word));
  return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

// a[0, n) == b[0, n) for short keys (n <= 16) without a libc call.
inline bool equal_short(const char* a, const char* b, std::size_t n) {
  if (n >= 8) return equal_ends<std::uint64_t>(a, b, n);
  if (n >= 4) return equal_ends<std::uint32_t>(a, b, n);
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Bytes -> uint32 value. A key of up to 16 bytes (most tokens) is held in its slot, so that a
// lookup reads one cache line; longer keys live in an arena owned by the map.
class StringIdMap {
 public:
  // Room for n keys of key_bytes bytes in all.
  void reserve(std::size_t n, std::size_t key_bytes = 0) {
    std::size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    arena_.reserve(key_bytes);
  }
  // Inserts or overwrites (the last writer wins, as HF's HashMap collect does).
  void put(std::string_view key, std::uint32_t value) {
    put_hashed(key, hash_bytes(key.data(), key.size()), value);
  }
  // Loading many keys: hash each and prefetch its slot some keys ahead of put_hashed, so that the
  // cache misses of a large table overlap.
  static std::uint64_t hash_of(std::string_view key) { return hash_bytes(key.data(), key.size()); }
  void prefetch(std::uint64_t h) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & mask_], 1);
  }
  void put_hashed(std::string_view key, std::uint64_t h, std::uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = h & mask_;
    while (true) {
      Slot& s = slots_[i];
      if (s.len == kEmpty) {
        s.len = static_cast<std::uint32_t>(key.size());
        s.tag = static_cast<std::uint32_t>(h >> 32);
        s.value = value;
        if (key.size() <= kInline) {
          if (!key.empty()) std::memcpy(s.bytes, key.data(), key.size());
        } else {
          const auto offset = static_cast<std::uint32_t>(arena_.size());
          std::memcpy(s.bytes, &offset, sizeof offset);
          arena_.insert(arena_.end(), key.begin(), key.end());
        }
        ++size_;
        return;
      }
      if (holds(s, static_cast<std::uint32_t>(h >> 32), key)) {
        s.value = value;
        overwritten_ = true;
        return;
      }
      i = (i + 1) & mask_;
    }
  }
  // Whether some put gave a key that was already in (so two spellings may share a key).
  bool overwritten() const { return overwritten_; }
  bool get(std::string_view key, std::uint32_t& value) const {
    if (slots_.empty()) return false;
    return find(key, hash_bytes(key.data(), key.size()), value);
  }
  // Looks up n keys at once: hashed in a first pass, then probed in order with each slot
  // prefetched kAhead keys before its probe, so that a steady number of cache misses is in flight
  // (loading Gemma 3's 515k merges is 1.5M random lookups).
  void get_batch(const std::string_view* keys, std::size_t n, std::uint32_t* values,
                 bool* found) const {
    constexpr std::size_t kMaxBatch = 512, kAhead = 64;
    std::uint64_t hashes[kMaxBatch];
    for (std::size_t start = 0; start < n; start += kMaxBatch) {
      std::size_t m = std::min(kMaxBatch, n - start);
      for (std::size_t k = 0; k < m; ++k) {
        found[start + k] = false;
        hashes[k] = hash_bytes(keys[start + k].data(), keys[start + k].size());
      }
      if (slots_.empty()) continue;
      for (std::size_t k = 0; k < m && k < kAhead; ++k)
        __builtin_prefetch(&slots_[hashes[k] & mask_]);
      for (std::size_t k = 0; k < m; ++k) {
        if (k + kAhead < m) __builtin_prefetch(&slots_[hashes[k + kAhead] & mask_]);
        found[start + k] = find(keys[start + k], hashes[k], values[start + k]);
      }
    }
  }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  static constexpr std::size_t kInline = 16;
  struct Slot {
    std::uint32_t tag = 0;  // the top half of the key's hash
    std::uint32_t len = kEmpty;
    std::uint32_t value = 0;
    std::uint32_t unused = 0;
    char bytes[kInline] = {};  // the key (len <= kInline), else its arena offset
  };
  const char* key_of(const Slot& s) const {
    if (s.len <= kInline) return s.bytes;
    std::uint32_t offset;
    std::memcpy(&offset, s.bytes, sizeof offset);
    return arena_.data() + offset;
  }
  // The value of key (hash h) into value, if the map holds it (slots_ not empty).
  bool find(std::string_view key, std::uint64_t h, std::uint32_t& value) const {
    const auto tag = static_cast<std::uint32_t>(h >> 32);
    for (std::size_t i = h & mask_; slots_[i].len != kEmpty; i = (i + 1) & mask_) {
      if (holds(slots_[i], tag, key)) {
        value = slots_[i].value;
        return true;
      }
    }
    return false;
  }
  // Whether occupied slot s holds key.
  bool holds(const Slot& s, std::uint32_t tag, std::string_view key) const {
    if (s.tag != tag || s.len != key.size()) return false;
    if (key.size() <= kInline) return equal_short(s.bytes, key.data(), key.size());
    return std::memcmp(key_of(s), key.data(), key.size()) == 0;
  }
  void grow() {
    HugeVector<Slot> old = std::move(slots_);
    std::size_t cap = old.empty() ? 16 : old.size() * 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const Slot& s : old) {
      if (s.len == kEmpty) continue;
      std::uint64_t h = hash_bytes(key_of(s), s.len);
      std::size_t i = h & mask_;
      while (slots_[i].len != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  HugeVector<Slot> slots_;
  HugeVector<char> arena_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  bool overwritten_ = false;
};

// BPE merges: (left id, right id) -> (rank, merged id), one open-addressing table keyed by both ids
// in one 64-bit word, in buckets of four slots (one cache line). A lookup reads one bucket whose
// address depends only on the pair, so the encoder can prefetch it, and compares its four keys
// without branches: whether a pair merges is unpredictable, and a mispredicted branch per lookup
// used to cost more than the lookup itself.
class MergeTable {
 public:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};

  // Sizes the table for n pairs (more still fit: they spill).
  void reserve(std::size_t n) {
    std::size_t buckets = 4;
    int bits = 2;
    while (buckets * kBucket * 11 < n * 20) {  // at most 55% full
      buckets <<= 1;
      ++bits;
    }
    slots_.assign(buckets * kBucket, Slot{});
    bucket_mask_ = buckets - 1;
    shift_ = 64 - bits;
    size_ = 0;
    spilled_.clear();
  }
  // Starts loading the bucket put(left, right, ...) writes.
  void prefetch_put(std::uint32_t left, std::uint32_t right) const {
    if (!slots_.empty())
      __builtin_prefetch(slots_.data() + bucket_of(pair_key(left, right)) * kBucket, 1);
  }
  // A pair listed twice keeps its last rank (HF collects the merges into a HashMap, where the last
  // insertion wins; ranks only grow).
  void put(std::uint32_t left, std::uint32_t right, std::uint32_t rank, std::uint32_t merged) {
    if (slots_.empty()) reserve(16);
    const std::uint64_t key = pair_key(left, right);
    const std::uint64_t value = (std::uint64_t{rank} << 32) | (merged & ~kOverflow);
    Slot* home = slots_.data() + bucket_of(key) * kBucket;
    Slot* s = home;
    while (s < home + kBucket && s->key != kNoPair && s->key != key) ++s;
    if (s == home + kBucket) {
      home[0].value |= kOverflow;
      spilled_.push_back(Slot{key, value});  // duplicates resolved in finish()
      return;
    }
    if (s->key == kNoPair) {
      *s = Slot{key, value};
      ++size_;
    } else if ((s->value >> 32) <= rank) {
      s->value = (s->value & kOverflow) | value;
    }
  }
  // Builds the spill table once every pair is in.
  void finish() {
    const HugeVector<Slot> spilled = std::move(spilled_);
    spilled_ = {};
    // The spilled pairs (a few percent) go to a small table of their own, a quarter full, so that a
    // lookup that misses a full bucket costs one more probe, not a walk through the neighbours.
    std::size_t cap = 16;
    while (cap < spilled.size() * 4) cap <<= 1;
    spill_.assign(cap, Slot{});
    spill_mask_ = cap - 1;
    for (const Slot& x : spilled) {
      std::size_t i = mix64(x.key) & spill_mask_;
      while (spill_[i].key != kNoPair && spill_[i].key != x.key) i = (i + 1) & spill_mask_;
      if (spill_[i].key == kNoPair) {
        ++size_;
        spill_[i] = x;
      } else if ((spill_[i].value >> 32) <= (x.value >> 32)) {
        spill_[i].value = x.value;
      }
    }
  }
  // (rank << 32 | merged id), or kNone.
  std::uint64_t find(std::uint32_t left, std::uint32_t right) const {
    if (slots_.empty()) return kNone;
    const std::uint64_t key = pair_key(left, right);
    std::size_t b = bucket_of(key);
    const Slot* s = slots_.data() + b * kBucket;
    std::uint64_t r = kNone;
    for (std::size_t k = 0; k < kBucket; ++k) r = s[k].key == key ? s[k].value : r;
    if (r == kNone) {
      if (s[0].value & kOverflow) [[unlikely]] {
        return find_beyond(key, b);
      }
      return kNone;
    }
    return r & ~kOverflow;
  }
  bool get(std::uint32_t left, std::uint32_t right, std::uint32_t& rank,
           std::uint32_t& merged) const {
    const std::uint64_t r = find(left, right);
    if (r == kNone) return false;
    rank = static_cast<std::uint32_t>(r >> 32);
    merged = static_cast<std::uint32_t>(r);
    return true;
  }
  // Starts loading the bucket find(left, right) reads.
  void prefetch(std::uint32_t left, std::uint32_t right) const {
    if (!slots_.empty())
      __builtin_prefetch(slots_.data() + bucket_of(pair_key(left, right)) * kBucket);
  }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::size_t kBucket = 4;
  static constexpr std::uint64_t kNoPair = ~std::uint64_t{0};  // left id 2^32-1 is never valid
  // Bit 31 of the first slot's value: some pair whose home is this bucket is in the spill table
  // (merged ids are below 2^31). Only then does a miss in the bucket look further.
  static constexpr std::uint64_t kOverflow = std::uint64_t{1} << 31;
  struct alignas(16) Slot {
    std::uint64_t key = kNoPair;
    std::uint64_t value = 0;
  };
  static std::uint64_t pair_key(std::uint32_t left, std::uint32_t right) {
    return (std::uint64_t{left} << 32) | right;
  }
  // Fibonacci hashing: the top bits of key * 2^64/phi spread consecutive ids over the table.
  std::size_t bucket_of(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & bucket_mask_;
  }
  // A miss in a bucket that spilled: the spill table.
  std::uint64_t find_beyond(std::uint64_t key, std::size_t) const {
    for (std::size_t i = mix64(key) & spill_mask_;; i = (i + 1) & spill_mask_) {
      const Slot& s = spill_[i];
      if (s.key == key) return s.value;
      if (s.key == kNoPair) return kNone;
    }
  }
  HugeVector<Slot> slots_;
  HugeVector<Slot> spill_;  // on huge pages too: a large vocabulary's spill is megabytes
  std::size_t spill_mask_ = 0;
  std::size_t bucket_mask_ = 0;
  int shift_ = 64;
  std::size_t size_ = 0;
  HugeVector<Slot> spilled_;  // pairs whose home bucket was full, until finish()
};

}  // namespace chatwire::tokenize
