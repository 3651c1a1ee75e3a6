// Value construction, payload access, dict storage, hashing and equality,
// Undefined details and the default behaviour of Object.
#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <functional>

#include "value/internal.hpp"

namespace chatwire {

using detail::DictData;
using detail::ListData;
using detail::StringData;
using detail::UndefinedData;

// ---------------------------------------------------------------------------------
// Payload allocation: a per-thread cache of free blocks
// ---------------------------------------------------------------------------------

// Under AddressSanitizer blocks go straight back to the allocator so that a use after
// the last release is still reported.
#if defined(__SANITIZE_ADDRESS__)
#define CHATWIRE_BLOCK_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHATWIRE_BLOCK_CACHE 0
#endif
#endif
#ifndef CHATWIRE_BLOCK_CACHE
#define CHATWIRE_BLOCK_CACHE 1
#endif

namespace detail {

constinit thread_local std::uint32_t render_depth = 0;
constinit thread_local std::uint32_t local_build_depth = 0;

#if CHATWIRE_BLOCK_CACHE
namespace {

// Size classes are multiples of 16 bytes up to 256; every block of a class is allocated
// with the class's full size, so a block freed by any thread can serve any request of
// its class on the thread that freed it. Each list is bounded so that a burst of frees
// (a large list released at once) returns memory to the allocator.
constexpr std::size_t kGranule = 16;
constexpr std::size_t kClasses = 16;
constexpr std::size_t kMaxCachedSize = kGranule * kClasses;
constexpr std::uint32_t kMaxCachedPerClass = 128;

struct FreeBlock {
  FreeBlock* next;
};

// Plain data (no constructor or destructor) so that access needs no initialisation
// guard; `closed` is set when the thread's flusher has run, after which releases go
// straight to the allocator (values freed by later thread_local destructors).
struct BlockCache {
  FreeBlock* head[kClasses];
  std::uint32_t count[kClasses];
  bool flusher_registered;
  bool closed;
};
constinit thread_local BlockCache block_cache{};

void flush_block_cache() noexcept {
  BlockCache& cache = block_cache;
  for (std::size_t c = 0; c < kClasses; ++c) {
    while (FreeBlock* b = cache.head[c]) {
      cache.head[c] = b->next;
      ::operator delete(b);
    }
    cache.count[c] = 0;
  }
}

// Returns the cached blocks when the thread exits. Constructed on the first release into
// the cache, which registers its destructor with the thread.
struct BlockCacheFlusher {
  BlockCacheFlusher() { block_cache.flusher_registered = true; }
  BlockCacheFlusher(const BlockCacheFlusher&) = delete;
  BlockCacheFlusher& operator=(const BlockCacheFlusher&) = delete;
  ~BlockCacheFlusher() {
    flush_block_cache();
    block_cache.closed = true;
  }
};

[[gnu::noinline]] void register_flusher() noexcept {
  thread_local BlockCacheFlusher flusher;
  (void)flusher;
}

// The main thread registers its flusher while the library loads: registration is a
// one-time cost (symbol binding, an allocation) that would otherwise land in the first
// render.
[[maybe_unused]] const bool main_thread_flusher = (register_flusher(), true);

}  // namespace
#endif  // CHATWIRE_BLOCK_CACHE

void* allocate_block(std::size_t size) {
#if CHATWIRE_BLOCK_CACHE
  if (size <= kMaxCachedSize) {
    const std::size_t c = (size - 1) / kGranule;  // size > 0: payloads have a vtable
    BlockCache& cache = block_cache;
    if (FreeBlock* b = cache.head[c]) {
      cache.head[c] = b->next;
      --cache.count[c];
      return b;
    }
    return ::operator new((c + 1) * kGranule);
  }
#endif
  return ::operator new(size);
}

void release_block(void* block, std::size_t size) noexcept {
#if CHATWIRE_BLOCK_CACHE
  if (size <= kMaxCachedSize) {
    const std::size_t c = (size - 1) / kGranule;
    BlockCache& cache = block_cache;
    if (cache.count[c] < kMaxCachedPerClass && !cache.closed) {
      if (!cache.flusher_registered) register_flusher();
      auto* b = static_cast<FreeBlock*>(block);
      b->next = cache.head[c];
      cache.head[c] = b;
      ++cache.count[c];
      return;
    }
    ::operator delete(block);  // unsized: clang before 19 has no sized delete by default
    return;
  }
#endif
  (void)size;
  ::operator delete(block);
}

void* RefCounted::operator new(std::size_t size) {
  return allocate_block(size);
}

void RefCounted::operator delete(void* block, std::size_t size) noexcept {
  release_block(block, size);
}

}  // namespace detail

// ---------------------------------------------------------------------------------
// Construction
// ---------------------------------------------------------------------------------

namespace {

// Bytes of the block holding a string payload.
inline std::size_t string_block_size(const StringData& data) noexcept {
  return sizeof(StringData) + (data.trailing_bytes ? data.size : 0);
}

// Builds a payload with the bytes right after it in the same block: one allocation
// instead of a payload plus a std::string buffer.
StringData* string_with_trailing_bytes(std::string_view s) {
  void* block = detail::allocate_block(sizeof(StringData) + s.size());
  auto* data = ::new (block) StringData;
  char* bytes = reinterpret_cast<char*>(data + 1);
  if (!s.empty()) std::memcpy(bytes, s.data(), s.size());
  data->begin = bytes;
  data->size = s.size();
  data->trailing_bytes = true;
  return data;
}

}  // namespace

Value::Value(std::string_view s) : kind_(Kind::String) {
  StringData* data = string_with_trailing_bytes(s);
  data->ascii = utf8::all_ascii(s);
  data->code_points = data->ascii ? s.size() : utf8::code_points(s);
  u_.ptr = data;
}

// Keeps the string and so its heap buffer, if it has one.
Value::Value(std::string&& s) : kind_(Kind::String) {
  auto* data = new StringData;
  data->ascii = utf8::all_ascii(s);
  data->code_points = data->ascii ? s.size() : utf8::code_points(s);
  data->owned = std::move(s);
  data->begin = data->owned.data();
  data->size = data->owned.size();
  u_.ptr = data;
}

namespace detail {
Value string_copy_known(std::string_view s, bool ascii, std::size_t code_points) {
  StringData* data = string_with_trailing_bytes(s);
  data->ascii = ascii;
  data->code_points = code_points;
  return ValueAccess::from_payload(Kind::String, data);
}
}  // namespace detail

Value Value::string_known(std::string&& s, bool ascii, std::size_t code_points) {
  auto* data = new StringData;
  data->ascii = ascii;
  data->code_points = code_points;
  data->owned = std::move(s);
  data->begin = data->owned.data();
  data->size = data->owned.size();
  return ValueAccess::from_payload(Kind::String, data);
}

Value Value::markup(std::string&& s) {
  Value v(std::move(s));
  static_cast<StringData*>(v.u_.ptr)->markup = true;  // just built: not shared yet
  return v;
}

Value Value::markup(std::string_view s) {
  Value v(s);
  static_cast<StringData*>(v.u_.ptr)->markup = true;
  return v;
}

Value Value::as_markup(const Value& str) {
  if (str.is_markup()) return str;
  const StringData* from = ValueAccess::str(str);
  StringData* data = string_with_trailing_bytes(str.as_string());
  data->ascii = from->ascii;
  data->code_points = from->code_points;
  data->markup = true;
  return ValueAccess::from_payload(Kind::String, data);
}

Value Value::list(std::vector<Value> items) {
  auto* data = new ListData;
  data->items = std::move(items);
  data->view = data->items;
  return ValueAccess::from_payload(Kind::List, data);
}

Value Value::tuple(std::vector<Value> items) {
  auto* data = new ListData;
  data->items = std::move(items);
  data->view = data->items;
  return ValueAccess::from_payload(Kind::Tuple, data);
}

Value Value::window(const Value& sequence, std::size_t start, std::size_t count) {
  assert(sequence.is_sequence() && start + count <= sequence.as_list().size());
  auto* data = new ListData;
  const auto* from = static_cast<const ListData*>(sequence.u_.ptr);
  // A window of a window shares the first list: no chain of windows builds up.
  data->base = from->base.is_undefined() ? sequence : from->base;
  data->view = sequence.as_list().subspan(start, count);
  return ValueAccess::from_payload(sequence.kind_, data);
}

Value Value::empty_list() {
  return list({});
}

Value Value::empty_dict() {
  return ValueAccess::from_payload(Kind::Dict, new DictData);
}

namespace {

// Fills a new dict, taking the entries as they are and only falling back to inserting
// them one by one when a duplicate key shows up (JSON and dict literals rarely have
// them). With `checked`, returns the type name of the first unhashable key ("" when
// there is none); without, keys are known to be hashable.
std::string_view fill_dict(DictData& data, std::vector<std::pair<Value, Value>>&& entries,
                           bool checked) {
  data.entries = std::move(entries);
  std::size_t n = data.entries.size();
  data.hashes.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Value& key = data.entries[i].first;
    std::uint64_t hash = 0;
    if (!hash_value(key, hash) && checked) return type_name(key);
    data.hashes[i] = hash;
  }
  bool duplicate = false;
  if (n <= DictData::kLinearMax) {
    for (std::size_t i = 1; i < n && !duplicate; ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (data.hashes[i] == data.hashes[j] &&
            equals(data.entries[i].first, data.entries[j].first)) {
          duplicate = true;
          break;
        }
  } else {
    duplicate = !data.build_unique_index();
  }
  if (duplicate) {
    std::vector<std::pair<Value, Value>> pending = std::move(data.entries);
    std::vector<std::uint64_t> hashes(data.hashes.data(), data.hashes.data() + n);
    data.entries.clear();
    data.hashes.clear();
    data.index.clear();
    for (std::size_t i = 0; i < pending.size(); ++i)
      data.set(std::move(pending[i].first), std::move(pending[i].second), hashes[i]);
  }
  return {};
}

}  // namespace

Result<Value> Value::dict(std::vector<std::pair<Value, Value>> entries) {
  auto* data = new DictData;
  Value result = ValueAccess::from_payload(Kind::Dict, data);
  std::string_view unhashable = fill_dict(*data, std::move(entries), true);
  if (!unhashable.empty()) return type_error("unhashable type: '" + std::string(unhashable) + "'");
  return result;
}

Value Value::dict_unchecked(std::vector<std::pair<Value, Value>> entries) {
  auto* data = new DictData;
  Value result = ValueAccess::from_payload(Kind::Dict, data);
  fill_dict(*data, std::move(entries), false);
  return result;
}

namespace detail {
Value dict_borrowing_keys(std::vector<std::pair<Value, Value>> entries, RefCounted* owner) {
  assert(entries.size() <= DictData::kLinearMax);
  auto* data = new DictData;
  data->key_owner = owner;
  Value result = ValueAccess::from_payload(Kind::Dict, data);
  // Distinct keys: fill_dict keeps every entry where it is (it releases keys only when it
  // merges duplicates).
  fill_dict(*data, std::move(entries), false);
  return result;
}

DictData::~DictData() {
  if (key_owner == nullptr) return;
  for (auto& entry : entries) ValueAccess::forget(entry.first);
  if (key_owner->drop_ref()) delete key_owner;
}
}  // namespace detail

Value Value::undefined(Value name, std::string object_type, std::string hint,
                       std::string error_type) {
  auto* data = new UndefinedData;
  Value result = ValueAccess::from_payload(Kind::Undefined, data);  // owns it from here
  data->name = std::move(name);
  if (error_type == "UndefinedError") error_type.clear();
  if (!object_type.empty() || !hint.empty() || !error_type.empty())
    data->extra =
        new detail::UndefinedExtra{std::move(object_type), std::move(hint), std::move(error_type)};
  return result;
}

namespace {

// Keeps the name in the payload when it fits, else as a string Value.
void set_undefined_name(UndefinedData& data, std::string_view name) {
  if (name.size() <= UndefinedData::kInlineName) {
    if (!name.empty()) std::memcpy(data.name_bytes, name.data(), name.size());
    data.name_size = static_cast<std::uint8_t>(name.size());
    data.name_inline = true;
  } else {
    data.name = Value(name);
  }
}

// Records what the message needs of the object `on`: its kind (the repr follows from it
// when the message is built), or for an Object its type_repr(), which only the Object
// can tell and which it might not outlive.
void set_undefined_object(UndefinedData& data, const Value& on) {
  if (on.is_object())
    data.extra = new detail::UndefinedExtra{on.as_object()->type_repr(), {}, {}};
  else if (on.is_markup())
    data.extra = new detail::UndefinedExtra{"markupsafe.Markup object", {}, {}};
  else {
    data.on_known = true;
    data.on_kind = on.kind();
  }
}

// object_type_repr() of a non-Object value of kind `kind`.
std::string_view object_type_repr_of(Kind kind) noexcept {
  switch (kind) {
    case Kind::Undefined:
      return "jinja2.runtime.Undefined object";
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "bool object";
    case Kind::Int:
      return "int object";
    case Kind::Float:
      return "float object";
    case Kind::String:
      return "str object";
    case Kind::List:
      return "list object";
    case Kind::Tuple:
      return "tuple object";
    case Kind::Dict:
      return "dict object";
    case Kind::Object:
      break;
  }
  return "object";
}

}  // namespace

Value Value::undefined_attribute(std::string_view name, const Value& on) {
  auto* data = new UndefinedData;
  Value result = ValueAccess::from_payload(Kind::Undefined, data);
  set_undefined_name(*data, name);
  set_undefined_object(*data, on);
  return result;
}

Value Value::undefined_item(const Value& key, const Value& on) {
  auto* data = new UndefinedData;
  Value result = ValueAccess::from_payload(Kind::Undefined, data);
  data->name = key;
  set_undefined_object(*data, on);
  return result;
}

Value Value::undefined_variable(std::string_view name) {
  auto* data = new UndefinedData;
  Value result = ValueAccess::from_payload(Kind::Undefined, data);
  set_undefined_name(*data, name);
  return result;
}

Value Value::unsafe_attribute(std::string_view name, const Value& on) {
  std::string hint = "access to attribute '";
  hint += name;
  hint += "' of '";
  hint += type_name(on);
  hint += "' object is unsafe.";
  Value result = undefined_attribute(name, on);
  UndefinedData* data = ValueAccess::undef(result);
  if (!data->extra) data->extra = new detail::UndefinedExtra;
  data->extra->hint = std::move(hint);
  data->extra->error_type = "SecurityError";
  return result;
}

Value Value::adopt(Object* object) noexcept {
  return ValueAccess::from_payload(Kind::Object, object);
}

// Freeing a payload frees what it holds, so a list nested a million deep would recurse
// a million times and overflow the stack. Only the outermost destroy() on a thread
// deletes; payloads freed while it runs are queued on its stack and deleted by its loop,
// which keeps the depth at one level whatever the nesting. The thread_local is a plain
// pointer (no destructor) so that values freed during process exit still work.
namespace {
struct DestroyQueue {
  static constexpr std::size_t kInline = 32;
  detail::RefCounted* inline_items[kInline];
  std::size_t inline_count = 0;
  std::vector<detail::RefCounted*> more;
  bool push(detail::RefCounted* p) noexcept {
    if (inline_count < kInline) {
      inline_items[inline_count++] = p;
      return true;
    }
    try {
      more.push_back(p);
      return true;
    } catch (...) {
      return false;
    }
  }
  detail::RefCounted* pop() noexcept {
    if (!more.empty()) {
      detail::RefCounted* p = more.back();
      more.pop_back();
      return p;
    }
    return inline_count ? inline_items[--inline_count] : nullptr;
  }
};
thread_local DestroyQueue* destroy_queue = nullptr;
}  // namespace

void Value::destroy() noexcept {
  if (kind_ == Kind::String) {  // holds no values: nothing can nest
    // Not `delete`: the block may be longer than the struct (trailing bytes).
    auto* data = static_cast<StringData*>(u_.ptr);
    const std::size_t size = string_block_size(*data);
    data->~StringData();
    detail::release_block(data, size);
    return;
  }
  if (destroy_queue) {
    if (!destroy_queue->push(u_.ptr)) delete u_.ptr;  // out of memory: recurse instead
    return;
  }
  DestroyQueue queue;
  destroy_queue = &queue;
  delete u_.ptr;
  while (detail::RefCounted* next = queue.pop()) delete next;
  destroy_queue = nullptr;
}

// ---------------------------------------------------------------------------------
// Accessors
// ---------------------------------------------------------------------------------

double Value::to_double() const noexcept {
  switch (kind_) {
    case Kind::Bool:
      return u_.b ? 1.0 : 0.0;
    case Kind::Int:
      return static_cast<double>(u_.i);
    case Kind::Float:
      return u_.f;
    default:
      return 0.0;
  }
}

std::uint64_t Value::string_hash_slow() const noexcept {
  const StringData* data = ValueAccess::str(*this);
  // Racing threads compute the same number; relaxed order is enough.
  std::uint64_t h = hash_string(std::string_view(data->begin, data->size));
  data->hash.store(h, std::memory_order_relaxed);
  return h;
}

const Value* Value::dict_find_other(const Value& key) const noexcept {
  std::uint64_t hash;
  if (!hash_value(key, hash)) return nullptr;
  const DictData* d = ValueAccess::dict(*this);
  long pos = d->find(key, hash);
  return pos < 0 ? nullptr : &d->entries[pos].second;
}
const Value* Value::dict_find(std::string_view key) const noexcept {
  return dict_find(key, hash_string(key));
}
const Value* Value::dict_find_indexed(std::string_view key, std::uint64_t hash) const noexcept {
  const DictData* d = ValueAccess::dict(*this);
  long pos = d->find_str(key, hash);
  return pos < 0 ? nullptr : &d->entries[pos].second;
}

Object* Value::as_object() const noexcept {
  assert(kind_ == Kind::Object);
  return static_cast<Object*>(u_.ptr);
}

// ---------------------------------------------------------------------------------
// Undefined details (Jinja2's Undefined._undefined_message)
// ---------------------------------------------------------------------------------

bool Value::undefined_has_error() const noexcept {
  return u_.ptr && ValueAccess::undef(*this)->extra &&
         !ValueAccess::undef(*this)->extra->error_type.empty();
}

std::string Value::undefined_message() const {
  if (!u_.ptr) return "None is undefined";  // Jinja2's Undefined() with nothing set
  const UndefinedData* d = ValueAccess::undef(*this);
  if (d->extra && !d->extra->hint.empty()) return d->extra->hint;
  std::string_view object_type;  // "" = not looked up on an object
  if (d->extra && !d->extra->object_type.empty())
    object_type = d->extra->object_type;
  else if (d->on_known)
    object_type = object_type_repr_of(d->on_kind);
  const Value name = d->name_value();
  if (object_type.empty()) {
    if (name.is_undefined()) return "None is undefined";
    return to_repr(name) + " is undefined";
  }
  if (!name.is_string()) return std::string(object_type) + " has no element " + to_repr(name);
  return to_repr(Value(object_type)) + " has no attribute " + to_repr(name);
}

Error Value::undefined_error() const {
  Error e;
  e.type = undefined_has_error() ? ValueAccess::undef(*this)->extra->error_type
                                 : std::string("UndefinedError");
  e.message = undefined_message();
  return e;
}

Value Value::undefined_name() const {
  if (!u_.ptr) return Value();
  return ValueAccess::undef(*this)->name_value();
}

// ---------------------------------------------------------------------------------
// Dict storage
// ---------------------------------------------------------------------------------

namespace detail {

namespace {
inline std::size_t slot_of(std::uint64_t hash, std::size_t mask) noexcept {
  // Mix the high bits in: string hashes are good, small-int hashes are not.
  return static_cast<std::size_t>((hash ^ (hash >> 29)) * 0x9E3779B97F4A7C15ull >> 20) & mask;
}
inline bool str_key_equals(const Value& key, std::string_view s) noexcept {
  return key.is_string() && detail::same_bytes(key.as_string(), s);
}
}  // namespace

void DictHashes::grow(std::size_t needed) {
  std::size_t capacity = std::max(needed, capacity_ * 2);
  auto* grown = static_cast<std::uint64_t*>(::operator new(capacity * sizeof(std::uint64_t)));
  std::memcpy(grown, data_, size_ * sizeof(std::uint64_t));
  if (data_ != inline_) ::operator delete(data_);
  data_ = grown;
  capacity_ = capacity;
}

long DictData::find(const Value& key, std::uint64_t hash) const noexcept {
  if (key.is_string()) return find_str(key.as_string(), hash);
  if (index.empty()) {
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (hashes[i] == hash && equals(entries[i].first, key)) return static_cast<long>(i);
    return -1;
  }
  std::size_t mask = index.size() - 1;
  for (std::size_t slot = slot_of(hash, mask);; slot = (slot + 1) & mask) {
    std::uint32_t pos = index[slot];
    if (pos == 0) return -1;
    if (hashes[pos - 1] == hash && equals(entries[pos - 1].first, key))
      return static_cast<long>(pos - 1);
  }
}

long DictData::find_str(std::string_view key, std::uint64_t hash) const noexcept {
  if (index.empty()) {
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (hashes[i] == hash && str_key_equals(entries[i].first, key)) return static_cast<long>(i);
    return -1;
  }
  std::size_t mask = index.size() - 1;
  for (std::size_t slot = slot_of(hash, mask);; slot = (slot + 1) & mask) {
    std::uint32_t pos = index[slot];
    if (pos == 0) return -1;
    if (hashes[pos - 1] == hash && str_key_equals(entries[pos - 1].first, key))
      return static_cast<long>(pos - 1);
  }
}

void DictData::rebuild_index() {
  std::size_t size = 16;
  while (size < entries.size() * 2) size <<= 1;
  index.assign(size, 0);
  std::size_t mask = size - 1;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::size_t slot = slot_of(hashes[i], mask);
    while (index[slot] != 0) slot = (slot + 1) & mask;
    index[slot] = static_cast<std::uint32_t>(i + 1);
  }
}

bool DictData::build_unique_index() {
  std::size_t size = 16;
  while (size < entries.size() * 2) size <<= 1;
  index.assign(size, 0);
  std::size_t mask = size - 1;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::size_t slot = slot_of(hashes[i], mask);
    while (index[slot] != 0) {
      std::uint32_t other = index[slot] - 1;
      if (hashes[other] == hashes[i] && equals(entries[other].first, entries[i].first))
        return false;
      slot = (slot + 1) & mask;
    }
    index[slot] = static_cast<std::uint32_t>(i + 1);
  }
  return true;
}

void DictData::set(Value key, Value value, std::uint64_t hash) {
  long pos = find(key, hash);
  if (pos >= 0) {
    entries[pos].second = std::move(value);
    return;
  }
  entries.emplace_back(std::move(key), std::move(value));
  hashes.push_back(hash);
  if (entries.size() > kLinearMax) {
    if (index.size() < entries.size() * 2) {
      rebuild_index();
    } else {
      std::size_t mask = index.size() - 1;
      std::size_t slot = slot_of(hash, mask);
      while (index[slot] != 0) slot = (slot + 1) & mask;
      index[slot] = static_cast<std::uint32_t>(entries.size());
    }
  }
}

}  // namespace detail

// ---------------------------------------------------------------------------------
// Hashing and equality
// ---------------------------------------------------------------------------------

std::uint64_t hash_string(std::string_view s) noexcept {
  // FNV-1a, then a final avalanche; never 0 (0 marks "not computed").
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h == 0 ? 1 : h;
}

namespace {

std::uint64_t hash_int(std::int64_t i) noexcept {
  std::uint64_t h = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 31) ^ 0x5bd1e995u;
}

// Int vs float exactly as Python compares them (no rounding through double).
bool int_equals_float(std::int64_t i, double d) noexcept {
  if (!std::isfinite(d) || d != std::trunc(d)) return false;
  if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return false;
  return static_cast<std::int64_t>(d) == i;
}

}  // namespace

namespace {

constexpr std::uint64_t kTupleSeed = 0x27d4eb2f165667c5ull;
inline std::uint64_t tuple_combine(std::uint64_t h, std::uint64_t item) {
  return (h ^ item) * 0x100000001b3ull + 0x9E3779B97F4A7C15ull;
}

// hash_value of anything but a tuple; false for the unhashable kinds.
bool hash_scalar(const Value& v, std::uint64_t& hash) noexcept {
  switch (v.kind()) {
    case Kind::Undefined:
      hash = 0x7a3c1e5d9b2f4a61ull;  // Jinja2: every Undefined hashes alike
      return true;
    case Kind::None:
      hash = 0x2545F4914F6CDD1Dull;
      return true;
    case Kind::Bool:
    case Kind::Int:
      hash = hash_int(v.as_integer());
      return true;
    case Kind::Float: {
      double d = v.as_float();
      if (std::isfinite(d) && d == std::trunc(d) && d >= -9223372036854775808.0 &&
          d < 9223372036854775808.0) {
        hash = hash_int(static_cast<std::int64_t>(d));
      } else {
        hash = std::bit_cast<std::uint64_t>(d) * 0xff51afd7ed558ccdull;
      }
      return true;
    }
    case Kind::String:
      hash = v.string_hash();
      return true;
    case Kind::Object:
      hash = hash_int(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(v.as_object())));
      return true;
    case Kind::Tuple:
    case Kind::List:
    case Kind::Dict:
      return false;
  }
  return false;
}

// 1 equal, 0 different, 2 two containers of the same kind and size still to compare
// element by element (the caller walks them without recursion).
int equals_shallow(const Value& a, const Value& b) noexcept {
  Kind ka = a.kind(), kb = b.kind();
  if (a.is_number() && b.is_number()) {
    if (ka == Kind::Float || kb == Kind::Float) {
      if (ka == Kind::Float && kb == Kind::Float) return a.as_float() == b.as_float();
      if (ka == Kind::Float) return int_equals_float(b.as_integer(), a.as_float());
      return int_equals_float(a.as_integer(), b.as_float());
    }
    return a.as_integer() == b.as_integer();
  }
  if (ka != kb) return 0;
  switch (ka) {
    case Kind::Undefined:
    case Kind::None:
      return 1;
    case Kind::String:
      return a.same(b) || a.as_string() == b.as_string();
    case Kind::List:
    case Kind::Tuple:
      if (a.same(b)) return 1;
      return a.as_list().size() == b.as_list().size() ? 2 : 0;
    case Kind::Dict:
      if (a.same(b)) return 1;
      return a.dict_size() == b.dict_size() ? 2 : 0;
    case Kind::Object:
      return a.same(b);
    default:
      return 0;
  }
}

}  // namespace

// Tuples inside tuples are hashed with an explicit stack: a template can build a tuple
// nested a million deep, and recursion would exhaust the C++ stack.
bool hash_value(const Value& v, std::uint64_t& hash) noexcept {
  if (v.kind() != Kind::Tuple) return hash_scalar(v, hash);
  struct Level {
    std::span<const Value> items;
    std::size_t next;
    std::uint64_t h;
  };
  std::vector<Level> stack;
  stack.push_back({v.as_list(), 0, kTupleSeed});
  while (true) {
    Level& top = stack.back();
    if (top.next == top.items.size()) {
      const std::uint64_t done = top.h;
      stack.pop_back();
      if (stack.empty()) {
        hash = done;
        return true;
      }
      stack.back().h = tuple_combine(stack.back().h, done);
      continue;
    }
    const Value& item = top.items[top.next++];
    if (item.kind() == Kind::Tuple) {
      stack.push_back({item.as_list(), 0, kTupleSeed});  // `top` is not used after this
      continue;
    }
    std::uint64_t item_hash;
    if (!hash_scalar(item, item_hash)) return false;
    top.h = tuple_combine(top.h, item_hash);
  }
}

// Containers are compared with an explicit stack of pending pairs (same reason as
// hash_value: nesting a template can build is not bounded by the C++ stack).
bool equals(const Value& a, const Value& b) noexcept {
  int first = equals_shallow(a, b);
  if (first != 2) return first == 1;
  std::vector<std::pair<const Value*, const Value*>> pending;
  pending.emplace_back(&a, &b);
  while (!pending.empty()) {
    auto [x, y] = pending.back();
    pending.pop_back();
    int r = equals_shallow(*x, *y);
    if (r == 0) return false;
    if (r == 1) continue;
    if (x->is_dict()) {
      for (const auto& [key, value] : x->dict_entries()) {
        const Value* other = y->dict_find(key);
        if (!other) return false;
        pending.emplace_back(&value, other);
      }
    } else {
      auto xs = x->as_list(), ys = y->as_list();
      for (std::size_t i = xs.size(); i-- > 0;) pending.emplace_back(&xs[i], &ys[i]);
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------
// Builtins: type names, truthiness, len
// ---------------------------------------------------------------------------------

std::string_view type_name(const Value& v) noexcept {
  switch (v.kind()) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return v.is_markup() ? "Markup" : "str";
    case Kind::List:
      return "list";
    case Kind::Tuple:
      return "tuple";
    case Kind::Dict:
      return "dict";
    case Kind::Object:
      return v.as_object()->type_name();
  }
  return "object";
}

std::string object_type_repr(const Value& v) {
  if (v.is_object()) return v.as_object()->type_repr();
  if (v.is_markup()) return "markupsafe.Markup object";  // not a builtins type
  return std::string(object_type_repr_of(v.kind()));
}

bool truthy(const Value& v) noexcept {
  switch (v.kind()) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return v.as_bool();
    case Kind::Int:
      return v.as_int() != 0;
    case Kind::Float:
      return v.as_float() != 0.0;
    case Kind::String:
      return !v.as_string().empty();
    case Kind::List:
    case Kind::Tuple:
      return !v.as_list().empty();
    case Kind::Dict:
      return v.dict_size() != 0;
    case Kind::Object:
      return v.as_object()->truthy();
  }
  return false;
}

Result<std::size_t> length(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
      return std::size_t{0};
    case Kind::String:
      return v.string_length();
    case Kind::List:
    case Kind::Tuple:
      return v.as_list().size();
    case Kind::Dict:
      return v.dict_size();
    case Kind::Object:
      return v.as_object()->length();
    default:
      return type_error("object of type '" + std::string(type_name(v)) + "' has no len()");
  }
}

Error limit_error(std::string_view limit_name, std::size_t limit_value) {
  return make_error("LimitError",
                    std::string(limit_name) + "=" + std::to_string(limit_value) + " exceeded");
}

Status append_checked(std::string& out, std::string_view piece, const ValueLimits& limits) {
  if (out.size() + piece.size() > limits.max_string_bytes)
    return limit_error("max_string_bytes", limits.max_string_bytes);
  out.append(piece);
  return ok_status();
}

// ---------------------------------------------------------------------------------
// Object defaults: a plain Python object
// ---------------------------------------------------------------------------------

std::string Object::type_repr() const {
  std::string s(type_name());
  s += " object";
  return s;
}

Result<Value> Object::get_attr(std::string_view name) const {
  return Value::undefined(Value(name), type_repr());
}

Result<Value> Object::get_item(const Value&) const {
  return type_error(std::string("'") + std::string(type_name()) + "' object is not subscriptable");
}

Result<Value> Object::call(const CallArgs&, CallContext&) const {
  return type_error(std::string("'") + std::string(type_name()) + "' object is not callable");
}

void Object::str(std::string& out) const {
  repr(out);
}

void Object::repr(std::string& out) const {
  out += '<';
  out += type_name();
  out += " object>";
}

Result<std::size_t> Object::length() const {
  return type_error("object of type '" + std::string(type_name()) + "' has no len()");
}

Result<Value> Object::iterate() const {
  return type_error(std::string("'") + std::string(type_name()) + "' object is not iterable");
}

Result<bool> Object::contains(const Value& item) const {
  auto items = iterate();
  if (!items)
    return type_error("argument of type '" + std::string(type_name()) + "' is not iterable");
  for (const Value& v : items->as_list())
    if (equals(v, item)) return true;
  return false;
}

}  // namespace chatwire
