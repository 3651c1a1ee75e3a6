// A small, fast JSON reader for tokenizer.json: one pass over the caller's text (never written),
// nodes in one array. nlohmann::json needs seconds for Gemma 3's 33 MB file. It keeps what the
// loader needs and nothing more: the two large members, model.vocab and model.merges, are read by
// dedicated scanners into flat arrays of entries (no node per token or merge), which is most of the
// file and, as nodes, was most of the load's memory and page faults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/error.hpp"
#include "tokenize/flat_map.hpp"

namespace chatwire::tokenize::json {

enum class Kind : std::uint8_t { kNull, kFalse, kTrue, kNumber, kString, kArray, kObject };

struct Node {
  Kind kind = Kind::kNull;
  bool flat = false;              // model.vocab / model.merges read into Document's flat arrays
  std::uint32_t first_child = 0;  // index into Document::nodes; 0 = none (node 0 is the root)
  std::uint32_t next = 0;         // next sibling; 0 = none
  std::uint32_t count = 0;        // children of an array/object
  std::string_view key;           // member name when the parent is an object
  std::string_view text;          // string contents (unescaped) or number text
};

// One member of model.vocab read flat: the token and its id.
struct VocabEntry {
  const char* key;
  std::uint32_t key_len;
  bool id_ok;        // the value is a non-negative integer that fits 64 bits (as_uint)
  std::uint64_t id;  // when id_ok
  std::string_view token() const { return {key, key_len}; }
};

// One element of model.merges read flat: "a b" or [a, b] (a "..." without a space: b == nullptr),
// or anything else (a == nullptr).
struct MergeEntry {
  const char* a;
  const char* b;
  std::uint32_t a_len, b_len;
};

class Document {
 public:
  // Parses `text`, which must outlive the Document (its strings are views into it unless they had
  // escapes). Errors are TokenizerError with line/column.
  static Result<Document> parse(std::string_view text, std::size_t max_depth);

  const Node& root() const { return nodes_[0]; }
  const Node& node(std::uint32_t index) const { return nodes_[index]; }
  // Member of an object, or nullptr.
  const Node* get(const Node& object, std::string_view key) const;
  // Children in order: for (const Node* c = first(n); c; c = next(*c)). A flat node has none here:
  // read vocab_entries() / merge_entries() instead.
  const Node* first(const Node& parent) const {
    return parent.first_child ? &nodes_[parent.first_child] : nullptr;
  }
  const Node* next(const Node& child) const { return child.next ? &nodes_[child.next] : nullptr; }
  // The entries of the flat model.vocab / model.merges node (n.flat).
  const HugeVector<VocabEntry>& vocab_entries() const { return vocab_; }
  const HugeVector<MergeEntry>& merge_entries() const { return merges_; }
  std::size_t vocab_key_bytes() const { return vocab_key_bytes_; }

 private:
  // On huge pages, as the flat arrays: reserved for the worst case of the text's size, touched
  // for what it holds (Gemma 3's added tokens and config: about 1,100 page faults on 4 KB pages).
  HugeVector<Node> nodes_;
  HugeVector<VocabEntry> vocab_;
  HugeVector<MergeEntry> merges_;
  std::size_t vocab_key_bytes_ = 0;
  // Unescaped strings (those with a backslash), in blocks that never move.
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* block_at_ = nullptr;
  std::size_t block_left_ = 0;
  char* reserve_chars(std::size_t n);
  friend class Parser;
};

bool is_string(const Node* n);
bool as_bool(const Node* n, bool fallback);
// Integer value of a number node, when it is a non-negative integer that fits.
bool as_uint(const Node* n, std::uint64_t& out);
bool as_int(const Node* n, std::int64_t& out);

}  // namespace chatwire::tokenize::json
