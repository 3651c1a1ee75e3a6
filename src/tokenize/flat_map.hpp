// Open-addressing hash maps for the two hot lookups: token bytes -> id and (left id, right id) ->
// merge. Built once at load, read-only afterwards (so safe to share between threads).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace chatwire::tokenize {

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
  std::uint64_t tail = 0;
  std::memcpy(&tail, p, n);
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

// Bytes -> uint32 value. Keys live in one arena owned by the map.
class StringIdMap {
 public:
  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
  }
  // Inserts or overwrites (the last writer wins, as HF's HashMap collect does).
  void put(std::string_view key, std::uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::uint64_t h = hash_bytes(key.data(), key.size());
    std::size_t i = h & mask_;
    while (true) {
      Slot& s = slots_[i];
      if (s.len == kEmpty) {
        s.offset = static_cast<std::uint32_t>(arena_.size());
        s.len = static_cast<std::uint32_t>(key.size());
        s.hash = static_cast<std::uint32_t>(h >> 32);
        s.value = value;
        arena_.append(key);
        ++size_;
        return;
      }
      if (s.hash == static_cast<std::uint32_t>(h >> 32) && s.len == key.size() &&
          std::memcmp(arena_.data() + s.offset, key.data(), key.size()) == 0) {
        s.value = value;
        return;
      }
      i = (i + 1) & mask_;
    }
  }
  bool get(std::string_view key, std::uint32_t& value) const {
    if (slots_.empty()) return false;
    std::uint64_t h = hash_bytes(key.data(), key.size());
    std::size_t i = h & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.len == kEmpty) return false;
      if (s.hash == static_cast<std::uint32_t>(h >> 32) && s.len == key.size() &&
          std::memcmp(arena_.data() + s.offset, key.data(), key.size()) == 0) {
        value = s.value;
        return true;
      }
      i = (i + 1) & mask_;
    }
  }
  // Looks up n keys at once, prefetching slots and key bytes in stages so that the cache misses of
  // a large table overlap (loading Gemma 3's 515k merges is 1.5M random lookups).
  void get_batch(const std::string_view* keys, std::size_t n, std::uint32_t* values,
                 bool* found) const {
    constexpr std::size_t kMaxBatch = 512;
    std::uint64_t hashes[kMaxBatch];
    std::size_t slot[kMaxBatch];
    for (std::size_t start = 0; start < n; start += kMaxBatch) {
      std::size_t m = std::min(kMaxBatch, n - start);
      for (std::size_t k = 0; k < m; ++k) {
        found[start + k] = false;
        if (slots_.empty()) continue;
        hashes[k] = hash_bytes(keys[start + k].data(), keys[start + k].size());
        __builtin_prefetch(&slots_[hashes[k] & mask_]);
      }
      if (slots_.empty()) continue;
      for (std::size_t k = 0; k < m; ++k) {
        // First slot whose tag matches (or the empty slot ending the probe).
        std::size_t i = hashes[k] & mask_;
        const auto tag = static_cast<std::uint32_t>(hashes[k] >> 32);
        while (slots_[i].len != kEmpty &&
               !(slots_[i].hash == tag && slots_[i].len == keys[start + k].size())) {
          i = (i + 1) & mask_;
        }
        slot[k] = i;
        if (slots_[i].len != kEmpty) __builtin_prefetch(arena_.data() + slots_[i].offset);
      }
      for (std::size_t k = 0; k < m; ++k) {
        std::string_view key = keys[start + k];
        std::size_t i = slot[k];
        const auto tag = static_cast<std::uint32_t>(hashes[k] >> 32);
        while (slots_[i].len != kEmpty) {
          const Slot& s = slots_[i];
          if (s.hash == tag && s.len == key.size() &&
              std::memcmp(arena_.data() + s.offset, key.data(), key.size()) == 0) {
            values[start + k] = s.value;
            found[start + k] = true;
            break;
          }
          i = (i + 1) & mask_;
        }
      }
    }
  }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  struct Slot {
    std::uint32_t offset = 0;
    std::uint32_t len = kEmpty;
    std::uint32_t hash = 0;
    std::uint32_t value = 0;
  };
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    std::size_t cap = old.empty() ? 16 : old.size() * 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const Slot& s : old) {
      if (s.len == kEmpty) continue;
      std::uint64_t h = hash_bytes(arena_.data() + s.offset, s.len);
      std::size_t i = h & mask_;
      while (slots_[i].len != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::string arena_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

// uint64 key -> uint64 value; key ~0 is reserved (never a valid pair of 32-bit ids below 2^32-1).
class U64Map {
 public:
  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
  }
  void put(std::uint64_t key, std::uint64_t value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = mix64(key) & mask_;
    while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & mask_;
    if (slots_[i].key == kEmpty) ++size_;
    slots_[i] = Slot{key, value};
  }
  // Starts loading the slot of `key` so that a later get() does not wait for memory.
  void prefetch(std::uint64_t key) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[mix64(key) & mask_]);
  }
  bool get(std::uint64_t key, std::uint64_t& value) const {
    if (slots_.empty()) return false;
    std::size_t i = mix64(key) & mask_;
    while (true) {
      const Slot& s = slots_[i];
      if (s.key == key) {
        value = s.value;
        return true;
      }
      if (s.key == kEmpty) return false;
      i = (i + 1) & mask_;
    }
  }
  std::size_t size() const { return size_; }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  struct Slot {
    std::uint64_t key = kEmpty;
    std::uint64_t value = 0;
  };
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    std::size_t cap = old.empty() ? 16 : old.size() * 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (const Slot& s : old) {
      if (s.key == kEmpty) continue;
      std::size_t i = mix64(s.key) & mask_;
      while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

// BPE merges: (left id, right id) -> (rank, merged id), stored per left id (compressed sparse
// rows) rather than hashed: the merges of frequent tokens stay together in cache, which a hash
// table over Gemma 3's 515k merges (16 MB of random probes) does not allow.
class MergeTable {
 public:
  void reserve(std::size_t n) { pending_.reserve(n); }
  void put(std::uint32_t left, std::uint32_t right, std::uint32_t rank, std::uint32_t merged) {
    pending_.push_back({left, right, rank, merged});
  }
  // Builds the rows. A pair listed twice keeps its last rank (HF collects the merges into a
  // HashMap, where the last insertion wins).
  void finish() {
    std::sort(pending_.begin(), pending_.end(), [](const Pending& x, const Pending& y) {
      if (x.left != y.left) return x.left < y.left;
      if (x.right != y.right) return x.right < y.right;
      return x.rank < y.rank;
    });
    std::uint32_t rows = pending_.empty() ? 0 : pending_.back().left + 1;
    start_.assign(rows + 1, 0);
    entries_.clear();
    entries_.reserve(pending_.size());
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      const Pending& p = pending_[i];
      if (i + 1 < pending_.size() && pending_[i + 1].left == p.left &&
          pending_[i + 1].right == p.right)
        continue;
      entries_.push_back({p.right, p.rank, p.merged});
      ++start_[p.left + 1];
    }
    for (std::uint32_t r = 0; r < rows; ++r) start_[r + 1] += start_[r];
    pending_.clear();
    pending_.shrink_to_fit();
    build_pair_hash(rows);
  }
  bool get(std::uint32_t left, std::uint32_t right, std::uint32_t& rank,
           std::uint32_t& merged) const {
    if (left + 1 >= start_.size()) return false;
    const Entry* b = entries_.data() + start_[left];
    const Entry* e = entries_.data() + start_[left + 1];
    if (e - b > kRowScan) {
      // A long row (Gemma 3's U+2581 has thousands of merges): a binary search there costs a cache
      // miss per step, one probe of the pair hash costs about one.
      const std::uint64_t key = pair_key(left, right);
      if (!maybe_pair(key)) return false;
      for (std::size_t i = pair_slot(key);; i = (i + 1) & pair_mask_) {
        const PairSlot& s = pairs_[i];
        if (s.key == key) {
          rank = s.rank;
          merged = s.merged;
          return true;
        }
        if (s.key == kNoPair) return false;
      }
    }
    for (; b != e; ++b) {
      if (b->right == right) {
        rank = b->rank;
        merged = b->merged;
        return true;
      }
    }
    return false;
  }
  void prefetch(std::uint32_t left) const {
    if (left + 1 < start_.size()) __builtin_prefetch(entries_.data() + start_[left]);
  }
  // Starts loading whatever get(left, right) will read first: the row or the pair's hash slot.
  void prefetch(std::uint32_t left, std::uint32_t right) const {
    if (left + 1 >= start_.size()) return;
    if (start_[left + 1] - start_[left] > kRowScan) {
      const std::uint64_t key = pair_key(left, right);
      if (maybe_pair(key)) __builtin_prefetch(&pairs_[pair_slot(key)]);
    } else {
      __builtin_prefetch(entries_.data() + start_[left]);
    }
  }
  std::size_t size() const { return entries_.size(); }

 private:
  struct Pending {
    std::uint32_t left, right, rank, merged;
  };
  struct Entry {
    std::uint32_t right, rank, merged;
  };
  // Rows up to this long are scanned (they span at most two cache lines); longer rows are also
  // stored in the pair hash.
  static constexpr std::ptrdiff_t kRowScan = 8;
  static constexpr std::uint64_t kNoPair = ~std::uint64_t{0};  // left id 2^32-1 is never valid
  struct PairSlot {
    std::uint64_t key = kNoPair;
    std::uint32_t rank = 0, merged = 0;
  };
  static std::uint64_t pair_key(std::uint32_t left, std::uint32_t right) {
    return (std::uint64_t{left} << 32) | right;
  }
  // Fibonacci hashing: the top bits of key * 2^64/phi spread consecutive ids over the table.
  std::size_t pair_slot(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> pair_shift_);
  }
  // One bit per filter position, about 8 per hashed pair: small enough to stay in L2, so that
  // most pairs without a merge (the common case next to a fresh merge) are answered without a
  // miss on the pair table. A clear bit means absent; a set bit means "probe".
  std::size_t filter_bit(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0xD6E8FEB86659FD93ull) >> filter_shift_);
  }
  bool maybe_pair(std::uint64_t key) const {
    const std::size_t b = filter_bit(key);
    return (filter_[b >> 6] >> (b & 63)) & 1;
  }
  void build_pair_hash(std::uint32_t rows) {
    std::size_t n = 0;
    for (std::uint32_t r = 0; r < rows; ++r) {
      if (start_[r + 1] - start_[r] > kRowScan) n += start_[r + 1] - start_[r];
    }
    pairs_.clear();
    if (n == 0) return;
    std::size_t cap = 16;
    int bits = 4;
    while (cap < n * 2) {
      cap <<= 1;
      ++bits;
    }
    pairs_.assign(cap, PairSlot{});
    pair_mask_ = cap - 1;
    pair_shift_ = 64 - bits;
    // Filter: 4 bits per table slot (cap >= 2n, so at least 8 per pair), at least one word.
    filter_.assign(std::max<std::size_t>(1, cap / 16), 0);
    filter_shift_ = 64 - (bits + 2);
    for (std::uint32_t r = 0; r < rows; ++r) {
      if (start_[r + 1] - start_[r] <= kRowScan) continue;
      for (std::uint32_t k = start_[r]; k < start_[r + 1]; ++k) {
        const std::uint64_t key = pair_key(r, entries_[k].right);
        std::size_t i = pair_slot(key);
        while (pairs_[i].key != kNoPair) i = (i + 1) & pair_mask_;
        pairs_[i] = PairSlot{key, entries_[k].rank, entries_[k].merged};
        const std::size_t b = filter_bit(key);
        filter_[b >> 6] |= std::uint64_t{1} << (b & 63);
      }
    }
  }
  std::vector<PairSlot> pairs_;
  std::size_t pair_mask_ = 0;
  int pair_shift_ = 64;
  std::vector<std::uint64_t> filter_;
  int filter_shift_ = 64;
  std::vector<std::uint32_t> start_;  // row r = entries_[start_[r], start_[r + 1])
  std::vector<Entry> entries_;
  std::vector<Pending> pending_;
};

}  // namespace chatwire::tokenize
