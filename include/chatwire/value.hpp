// chatwire's dynamic value with Python semantics: the data model the Jinja engine
// evaluates over and the chat layer fills from request JSON.
//
// Design: `Value` is a 16-byte tagged union. Scalars live inline; strings, lists,
// tuples, dicts, Undefined details and Objects live on the heap behind an intrusive,
// atomic reference count (not touched, or not atomically, during a render: see
// detail::RenderScope). Every heap payload is immutable once built (except the
// engine's own Object subclasses such as namespace()), so a Value can be copied
// cheaply and shared between threads.
//
// Python behaviour reproduced here: str()/repr(), json.dumps, arithmetic and
// comparison operators with Python's results and error messages, `%` formatting,
// str.format, and the table of Python methods that templates call (str.strip, ...).
// Errors are values (chatwire::Error) with Python exception names as types.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "chatwire/error.hpp"

// Copies and destruction of Values happen on every step of an evaluation: GCC's
// size heuristics otherwise leave them as calls inside the evaluator's large functions.
#if defined(__GNUC__)
#define CHATWIRE_INLINE [[gnu::always_inline]] inline
#else
#define CHATWIRE_INLINE inline
#endif

namespace chatwire {

// ---------------------------------------------------------------------------------
// Kinds and limits
// ---------------------------------------------------------------------------------

enum class Kind : std::uint8_t {
  Undefined,  // Jinja2's default Undefined (optionally carrying a name/hint/error)
  None,
  Bool,
  Int,  // int64; overflow is an OverflowError, never wraps
  Float,
  String,  // UTF-8 (WTF-8: lone surrogates survive), code-point semantics
  List,
  Tuple,
  Dict,    // insertion-ordered, O(1) lookup, Python key equality (1 == 1.0 == True)
  Object,  // engine-defined (namespace, loop, macro, cycler, bound method, ...)
};

// Size caps for every operation that builds a string or a container. Hitting one
// gives `LimitError: max_string_bytes=N exceeded` (or max_container_items).
// The engine passes its own jinja::Limits values.
struct ValueLimits {
  std::size_t max_string_bytes = 64u << 20;
  std::size_t max_container_items = 4u << 20;
};

// Empty result for operations that only succeed or fail.
using Status = Result<std::monostate>;
inline Status ok_status() {
  return std::monostate{};
}

class Value;
class Object;

// ---------------------------------------------------------------------------------
// Heap payloads (refcounted, immutable after construction)
// ---------------------------------------------------------------------------------

namespace detail {
// Reference counting and renders. Atomic increments and decrements were the largest single
// cost of a render on a modern CPU (each is a full barrier), and almost all of them are
// avoidable because a render has two kinds of payloads:
//   - payloads created by the render itself ("local"): they never leave the render's
//     thread (a render returns only text) and all die before it returns, so their counts
//     need no atomics;
//   - payloads created outside it (the context, the template's constants): the caller keeps
//     them alive and unchanged for the whole render, so the render does not count them at
//     all (a copy made during the render is released during the render as well).
// `render_depth` says whether this thread is inside a render (RenderScope below); it is
// read when a payload is built (to mark it local) and on every count change.
// Consequence for engine code: a Value built during a render must not outlive it (no
// function-local statics initialised during a render, no caches on shared structures).
extern constinit thread_local std::uint32_t render_depth;
// Whether payloads built now on this thread are local: inside a render, or inside a
// LocalBuildScope (below). One counter for both, so that building a payload reads one
// thread-local, as it did before there were two reasons.
extern constinit thread_local std::uint32_t local_build_depth;

struct RefCounted {
  // The count, and in its top bit whether the payload is local to this thread: built during a
  // render or in a LocalBuildScope (kLocal; the bit lives in the count to keep payloads as
  // small as they were).
  static constexpr std::uint32_t kLocal = 0x8000'0000u;
  mutable std::atomic<std::uint32_t> refs{local_build_depth != 0 ? kLocal | 1u : 1u};
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  // Payloads are created and freed at every step of a render (strings, lists, dicts,
  // the engine's loop and macro objects), and the general-purpose allocator was a large
  // share of render time. Small payloads come from a per-thread cache of free blocks per
  // size class instead (core.cpp); the sized delete finds the class without a header.
  static void* operator new(std::size_t size);
  static void operator delete(void* block, std::size_t size) noexcept;

  CHATWIRE_INLINE void add_ref() const noexcept {
    const std::uint32_t r = refs.load(std::memory_order_relaxed);
    if (r & kLocal) {
      refs.store(r + 1, std::memory_order_relaxed);
    } else if (render_depth == 0) {
      refs.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // True when the last reference is gone and the payload must be destroyed.
  CHATWIRE_INLINE bool drop_ref() const noexcept {
    const std::uint32_t r = refs.load(std::memory_order_relaxed);
    if (r & kLocal) {
      refs.store(r - 1, std::memory_order_relaxed);
      return r == (kLocal | 1u);
    }
    return render_depth == 0 && refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
};

// Marks the calling thread as rendering for its lifetime (nests).
class RenderScope {
 public:
  RenderScope() noexcept {
    ++render_depth;
    ++local_build_depth;
  }
  ~RenderScope() {
    --render_depth;
    --local_build_depth;
  }
  RenderScope(const RenderScope&) = delete;
  RenderScope& operator=(const RenderScope&) = delete;
};

// Payloads built during its lifetime are local, counted without atomics as a render's own are,
// and live as long as their references, as any payload does. For a tree that its caller keeps
// on this thread from construction to release: a batch line's request, parsed, rendered and
// freed in one call, where counting the request's payloads atomically (a full barrier per
// release) cost 2-7% of `render --batch`. Such a tree must never be shared with another
// thread, not even read there while this one releases a copy.
class LocalBuildScope {
 public:
  LocalBuildScope() noexcept { ++local_build_depth; }
  ~LocalBuildScope() { --local_build_depth; }
  LocalBuildScope(const LocalBuildScope&) = delete;
  LocalBuildScope& operator=(const LocalBuildScope&) = delete;
};
// The same cache for payloads whose size is known only at run time;
// `size` must be the same at allocation and release.
void* allocate_block(std::size_t size);
void release_block(void* block, std::size_t size) noexcept;
struct StringData;
struct ListData;
struct DictData;
struct UndefinedData;
}  // namespace detail

// ---------------------------------------------------------------------------------
// Value
// ---------------------------------------------------------------------------------

class Value {
 public:
  // Construction ------------------------------------------------------------------
  Value() noexcept : kind_(Kind::Undefined) { u_.ptr = nullptr; }  // plain Undefined
  static Value none() noexcept {
    Value v;
    v.kind_ = Kind::None;
    return v;
  }
  Value(bool b) noexcept : kind_(Kind::Bool) { u_.b = b; }                                 // NOLINT
  Value(int i) noexcept : kind_(Kind::Int) { u_.i = i; }                                   // NOLINT
  Value(long i) noexcept : kind_(Kind::Int) { u_.i = i; }                                  // NOLINT
  Value(long long i) noexcept : kind_(Kind::Int) { u_.i = static_cast<std::int64_t>(i); }  // NOLINT
  Value(double d) noexcept : kind_(Kind::Float) { u_.f = d; }                              // NOLINT
  Value(std::string_view s);                                   // NOLINT: copies the bytes
  Value(const char* s) : Value(std::string_view(s)) {}         // NOLINT
  Value(std::string&& s);                                      // NOLINT: takes the buffer
  Value(const std::string& s) : Value(std::string_view(s)) {}  // NOLINT

  // Strings whose bytes are known to be valid WTF-8 (no check, no copy of the flag scan
  // when `ascii` is given). Use for text produced by this library or already validated.
  static Value string_known(std::string&& s, bool ascii, std::size_t code_points);

  // markupsafe.Markup, the str subclass Jinja2 uses for text marked safe for HTML (`|safe`,
  // `|escape`, macro results under autoescape). It is a String whose payload carries the
  // mark: everything that reads a str reads it, and the operators and methods where Python
  // calls Markup's own versions (`str + Markup` escapes the str, Markup.join escapes the
  // items, ...) check is_markup(). Markup(s) is a new object in Python too (not `s`).
  static Value markup(std::string&& s);
  static Value markup(std::string_view s);
  // Markup(v) for a str v: v itself when it is Markup already, else a marked copy.
  static Value as_markup(const Value& str);

  static Value list(std::vector<Value> items);
  static Value tuple(std::vector<Value> items);
  // items[start, start + count) of a list or tuple, as the same kind, sharing its items.
  static Value window(const Value& sequence, std::size_t start, std::size_t count);
  // Builds a dict: duplicate keys keep the first position and the last value (as Python).
  // Unhashable keys (list, dict, Undefined) give TypeError "unhashable type: 'list'".
  static Result<Value> dict(std::vector<std::pair<Value, Value>> entries);
  // Same, for keys already known to be hashable (e.g. strings from JSON).
  static Value dict_unchecked(std::vector<std::pair<Value, Value>> entries);
  static Value empty_dict();
  static Value empty_list();

  // Undefined carrying Jinja2's details. `name` is the missing name/key; `object_type`
  // is object_type_repr() of the object it was looked up on ("" = a plain missing
  // variable); `hint` replaces the generated message; `error_type` is the exception
  // raised when the Undefined is used ("UndefinedError", or "SecurityError" for the
  // sandbox's unsafe attributes).
  static Value undefined(Value name, std::string object_type = {}, std::string hint = {},
                         std::string error_type = "UndefinedError");
  static Value undefined_attribute(std::string_view name, const Value& on);  // x.name missing
  static Value undefined_item(const Value& key, const Value& on);            // x[key] missing
  static Value undefined_variable(std::string_view name);                    // 'name' is undefined
  // Sandbox: Undefined(exc=SecurityError) with Jinja2's exact message,
  // "access to attribute 'append' of 'list' object is unsafe."
  static Value unsafe_attribute(std::string_view name, const Value& on);

  // Takes ownership of a freshly `new`ed Object (its refcount starts at 1).
  static Value adopt(Object* object) noexcept;
  template <typename T, typename... Args>
  static Value make_object(Args&&... args) {
    return adopt(new T(std::forward<Args>(args)...));
  }

  // Copy/move (atomic refcount) ---------------------------------------------------
  CHATWIRE_INLINE Value(const Value& other) noexcept : kind_(other.kind_), u_(other.u_) {
    retain();
  }
  CHATWIRE_INLINE Value(Value&& other) noexcept : kind_(other.kind_), u_(other.u_) {
    other.kind_ = Kind::Undefined;
    other.u_.ptr = nullptr;
  }
  CHATWIRE_INLINE Value& operator=(const Value& other) noexcept {
    if (this != &other) {
      other.retain();
      release();
      kind_ = other.kind_;
      u_ = other.u_;
    }
    return *this;
  }
  CHATWIRE_INLINE Value& operator=(Value&& other) noexcept {
    if (this != &other) {
      release();
      kind_ = other.kind_;
      u_ = other.u_;
      other.kind_ = Kind::Undefined;
      other.u_.ptr = nullptr;
    }
    return *this;
  }
  CHATWIRE_INLINE ~Value() { release(); }

  // Inspection --------------------------------------------------------------------
  Kind kind() const noexcept { return kind_; }
  bool is_undefined() const noexcept { return kind_ == Kind::Undefined; }
  bool is_none() const noexcept { return kind_ == Kind::None; }
  bool is_bool() const noexcept { return kind_ == Kind::Bool; }
  bool is_int() const noexcept { return kind_ == Kind::Int; }  // not bool
  bool is_float() const noexcept { return kind_ == Kind::Float; }
  bool is_number() const noexcept {  // bool, int or float (Python: bool is an int)
    return kind_ == Kind::Bool || kind_ == Kind::Int || kind_ == Kind::Float;
  }
  bool is_string() const noexcept { return kind_ == Kind::String; }
  bool is_list() const noexcept { return kind_ == Kind::List; }
  bool is_tuple() const noexcept { return kind_ == Kind::Tuple; }
  bool is_sequence() const noexcept { return kind_ == Kind::List || kind_ == Kind::Tuple; }
  bool is_dict() const noexcept { return kind_ == Kind::Dict; }
  bool is_object() const noexcept { return kind_ == Kind::Object; }

  // Accessors: only valid for the matching kind (checked by assert in debug builds).
  bool as_bool() const noexcept { return u_.b; }
  std::int64_t as_int() const noexcept { return u_.i; }  // Int only
  double as_float() const noexcept { return u_.f; }
  // Int or Bool as int64 (Python: True == 1).
  std::int64_t as_integer() const noexcept { return kind_ == Kind::Bool ? u_.b : u_.i; }
  // Bool, Int or Float as double.
  double to_double() const noexcept;

  // String (kind String only)
  std::string_view as_string() const noexcept;
  bool string_is_ascii() const noexcept;
  std::size_t string_length() const noexcept;  // code points
  std::uint64_t string_hash() const noexcept;  // cached; equals hash_string(as_string())
  bool is_markup() const noexcept;             // a String marked as markupsafe.Markup

  // List or Tuple
  std::span<const Value> as_list() const noexcept;

  // Dict
  std::size_t dict_size() const noexcept;
  // Entries in insertion order.
  std::span<const std::pair<Value, Value>> dict_entries() const noexcept;
  // O(1) lookup with Python key equality. nullptr when absent (or key unhashable).
  const Value* dict_find(const Value& key) const noexcept;  // inline below
  // Fast path for attribute-style string keys; `hash` = hash_string(key).
  const Value* dict_find(std::string_view key) const noexcept;
  const Value* dict_find(std::string_view key, std::uint64_t hash) const noexcept;  // inline below
  const Value* dict_find(const char* key) const noexcept {
    return dict_find(std::string_view(key));
  }
  const Value* dict_find(const std::string& key) const noexcept {
    return dict_find(std::string_view(key));
  }

  // Object
  Object* as_object() const noexcept;

  // Undefined details
  bool undefined_has_error() const noexcept;  // carries an error type other than default
  // The error raised when this Undefined is used, with Jinja2's message
  // ("'x' is undefined", "'dict object' has no attribute 'x'", hint, ...).
  Error undefined_error() const;
  std::string undefined_message() const;
  Value undefined_name() const;  // Undefined() when unknown

  // Identity: same heap payload (Python `is` for containers; for scalars, equal bits).
  bool same(const Value& other) const noexcept {
    return kind_ == other.kind_ && u_.i == other.u_.i;
  }

 private:
  CHATWIRE_INLINE void retain() const noexcept {
    if (kind_ >= Kind::String || (kind_ == Kind::Undefined && u_.ptr)) u_.ptr->add_ref();
  }
  CHATWIRE_INLINE void release() noexcept {
    if ((kind_ >= Kind::String || (kind_ == Kind::Undefined && u_.ptr)) && u_.ptr->drop_ref())
      destroy();
  }
  void destroy() noexcept;
  std::uint64_t string_hash_slow() const noexcept;
  const Value* dict_find_other(const Value& key) const noexcept;  // keys other than str
  const Value* dict_find_indexed(std::string_view key, std::uint64_t hash) const noexcept;

  Kind kind_;
  union Payload {
    bool b;
    std::int64_t i;
    double f;
    detail::RefCounted* ptr;
  } u_;

  friend struct ValueAccess;
};

static_assert(sizeof(Value) == 16, "Value is a 16-byte tagged union");

namespace detail {
// Byte equality with word-sized loads inline instead of a memcmp call, which dominated
// attribute lookups and comparisons on short strings such as "role" and "user".
CHATWIRE_INLINE bool same_bytes(std::string_view a, std::string_view b) noexcept {
  std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  auto load8 = [](const char* at) {
    std::uint64_t w;
    __builtin_memcpy(&w, at, 8);
    return w;
  };
  auto load4 = [](const char* at) {
    std::uint32_t w;
    __builtin_memcpy(&w, at, 4);
    return w;
  };
  if (n >= 8) {
    for (; n > 8; n -= 8, p += 8, q += 8)
      if (load8(p) != load8(q)) return false;
    return load8(p + n - 8) == load8(q + n - 8);  // the last 8 bytes (overlapping)
  }
  if (n >= 4) return load4(p) == load4(q) && load4(p + n - 4) == load4(q + n - 4);
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != q[i]) return false;
  return true;
}
// `s in items` for a str: a str equals only a str with the same bytes (Python's == on
// each item, without a Result per element).
inline bool contains_str(std::span<const Value> items, std::string_view s) noexcept {
  for (const Value& v : items)
    if (v.is_string() && same_bytes(v.as_string(), s)) return true;
  return false;
}
}  // namespace detail

// Heap payload layouts, visible so that the accessors on hot paths inline.
// Treat as private: build values through Value's constructors.
namespace detail {
// A string built from a view has its bytes right after the payload (one allocation,
// see Value::Value(std::string_view)); one built from a std::string keeps that
// string's buffer. Value::destroy frees both kinds.
struct StringData final : RefCounted {
  const char* begin = nullptr;  // into `owned` or just past this struct
  std::size_t size = 0;
  std::size_t code_points = 0;
  bool ascii = true;
  bool trailing_bytes = false;                 // the bytes follow the struct in its block
  bool markup = false;                         // a markupsafe.Markup (Value::markup)
  mutable std::atomic<std::uint64_t> hash{0};  // 0 = not computed yet
  std::string owned;
};
struct ListData final : RefCounted {
  std::vector<Value> items;     // the items, unless this list is a window of `base`
  std::span<const Value> view;  // what as_list() reads: `items`, or the window of `base`
  // A slice with step 1 (`messages[1:]`) is a window of the sliced list or tuple, which
  // it keeps alive, instead of a copy of its items: nothing can change either.
  Value base;
};
// The key hashes of a dict, parallel to its entries. Dicts of up to `kInline` keys (most
// of those a template builds or reads) keep them inside the payload, which saves an
// allocation per dict.
class DictHashes {
 public:
  static constexpr std::size_t kInline = 8;
  DictHashes() noexcept : data_(inline_) {}
  DictHashes(const DictHashes&) = delete;
  DictHashes& operator=(const DictHashes&) = delete;
  ~DictHashes() {
    if (data_ != inline_) ::operator delete(data_);
  }
  std::uint64_t operator[](std::size_t i) const noexcept { return data_[i]; }
  std::uint64_t& operator[](std::size_t i) noexcept { return data_[i]; }
  const std::uint64_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  void push_back(std::uint64_t hash) {
    if (size_ == capacity_) grow(size_ + 1);
    data_[size_++] = hash;
  }
  // New elements are left for the caller to fill.
  void resize(std::size_t n) {
    if (n > capacity_) grow(n);
    size_ = n;
  }
  void clear() noexcept { size_ = 0; }

 private:
  void grow(std::size_t needed);  // keeps the elements
  std::uint64_t* data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = kInline;
  std::uint64_t inline_[kInline];
};

// Insertion-ordered dict. Small dicts are scanned linearly (hashes compared first);
// larger ones get an open-addressing index of entry positions.
struct DictData final : RefCounted {
  static constexpr std::size_t kLinearMax = DictHashes::kInline;
  ~DictData() override;
  std::vector<std::pair<Value, Value>> entries;
  DictHashes hashes;                 // parallel to entries
  std::vector<std::uint32_t> index;  // slot -> entry position + 1; 0 = empty
  // When set, the keys are borrowed from this payload, which keeps them alive and which the
  // dict counts once: the keys themselves are not counted by the dict. The JSON parser builds
  // small objects this way from its table of shared keys, where counting each key (an atomic
  // increment and decrement per entry) was a tenth of a request's parse and free.
  RefCounted* key_owner = nullptr;
  long find(const Value& key, std::uint64_t hash) const noexcept;  // position or -1
  long find_str(std::string_view key, std::uint64_t hash) const noexcept;
  void set(Value key, Value value, std::uint64_t hash);  // keeps the first position
  void rebuild_index();
  bool build_unique_index();  // false when two keys are equal
};
}  // namespace detail

inline std::string_view Value::as_string() const noexcept {
  const auto* d = static_cast<const detail::StringData*>(u_.ptr);
  return {d->begin, d->size};
}
inline bool Value::string_is_ascii() const noexcept {
  return static_cast<const detail::StringData*>(u_.ptr)->ascii;
}
inline bool Value::is_markup() const noexcept {
  return kind_ == Kind::String && static_cast<const detail::StringData*>(u_.ptr)->markup;
}
inline std::size_t Value::string_length() const noexcept {
  return static_cast<const detail::StringData*>(u_.ptr)->code_points;
}
inline std::uint64_t Value::string_hash() const noexcept {
  std::uint64_t h =
      static_cast<const detail::StringData*>(u_.ptr)->hash.load(std::memory_order_relaxed);
  return h != 0 ? h : string_hash_slow();
}
// Dict lookups by string key inline: templates read a few keys of small dicts
// (message.role, message['content']) at every step, and a call per lookup costs more
// than the scan of a dict with a handful of entries.
CHATWIRE_INLINE const Value* Value::dict_find(std::string_view key,
                                              std::uint64_t hash) const noexcept {
  const auto* d = static_cast<const detail::DictData*>(u_.ptr);
  if (!d->index.empty()) return dict_find_indexed(key, hash);
  const std::size_t n = d->entries.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (d->hashes[i] != hash) continue;
    const Value& k = d->entries[i].first;
    // Equal 64-bit hashes: the keys are almost surely equal; confirm the bytes.
    if (k.kind_ == Kind::String && detail::same_bytes(k.as_string(), key))
      return &d->entries[i].second;
  }
  return nullptr;
}
inline const Value* Value::dict_find(const Value& key) const noexcept {
  if (key.kind_ == Kind::String) return dict_find(key.as_string(), key.string_hash());
  return dict_find_other(key);
}
inline std::span<const Value> Value::as_list() const noexcept {
  return static_cast<const detail::ListData*>(u_.ptr)->view;
}
inline std::size_t Value::dict_size() const noexcept {
  return static_cast<const detail::DictData*>(u_.ptr)->entries.size();
}
inline std::span<const std::pair<Value, Value>> Value::dict_entries() const noexcept {
  return static_cast<const detail::DictData*>(u_.ptr)->entries;
}

// Keyword argument of a call.
struct NamedArg {
  std::string_view name;
  Value value;
};

// Arguments of a call: positional then keyword.
struct CallArgs {
  std::span<const Value> positional;
  std::span<const NamedArg> keyword;
};

// Per-call state handed to Object::call; the engine derives from it (render state,
// output buffer, ...). Library Objects only read `limits`.
class CallContext {
 public:
  virtual ~CallContext() = default;
  ValueLimits limits;
};

// ---------------------------------------------------------------------------------
// Object: the extensible kind. The engine subclasses it for namespace(), loop, macros,
// cycler, joiner, caller, bound methods, ... Defaults behave like a plain Python object.
// An Object placed in a render's context is called during the render: it must not keep a
// Value it receives or builds in such a call beyond the call (see detail::RenderScope).
// ---------------------------------------------------------------------------------

class Object : public detail::RefCounted {
 public:
  ~Object() override = default;

  // Set by an engine in its own subclasses' constructors so that hot paths can recognise
  // them without dynamic_cast (0 = untagged; the values are the engine's to choose).
  std::uint8_t engine_tag = 0;

  // Python type name, used in messages ("'Namespace' object is not iterable").
  virtual std::string_view type_name() const = 0;
  // object_type_repr for Undefined messages; default "<type_name> object".
  virtual std::string type_repr() const;

  // obj.name — return Undefined (e.g. Value::undefined_attribute) when absent.
  virtual Result<Value> get_attr(std::string_view name) const;
  // obj[key] — default: TypeError "'X' object is not subscriptable".
  virtual Result<Value> get_item(const Value& key) const;
  virtual bool is_callable() const { return false; }
  // Default: TypeError "'X' object is not callable".
  virtual Result<Value> call(const CallArgs& args, CallContext& context) const;

  virtual void str(std::string& out) const;   // default: repr
  virtual void repr(std::string& out) const;  // default: "<X object>"
  virtual bool truthy() const { return true; }
  // len(obj) — default TypeError "object of type 'X' has no len()".
  virtual Result<std::size_t> length() const;
  // Iteration as a List value — default TypeError "'X' object is not iterable".
  virtual Result<Value> iterate() const;
  // `item in obj` — default iterates and compares.
  virtual Result<bool> contains(const Value& item) const;
  // json.dumps of the object — default TypeError "Object of type X is not JSON serializable".
  virtual bool json_serializable() const { return false; }
  virtual Value json_value() const { return Value(); }  // when json_serializable()
};

// ---------------------------------------------------------------------------------
// Python builtins over values
// ---------------------------------------------------------------------------------

// type(x).__name__: "int", "str", "Markup", "dict", "list", "NoneType", "float", "bool",
// "tuple", "Undefined", or the Object's type_name().
std::string_view type_name(const Value& v) noexcept;
// Jinja2's object_type_repr: "None", "dict object", "str object", ...
std::string object_type_repr(const Value& v);

bool truthy(const Value& v) noexcept;  // Python bool(x); Undefined is false
// len(x): str (code points), list, tuple, dict, Undefined (0), Object.
Result<std::size_t> length(const Value& v);

// str(x) / repr(x), appended to `out` (no temporaries). Undefined prints as "".
void append_str(std::string& out, const Value& v);
void append_repr(std::string& out, const Value& v);
std::string to_str(const Value& v);
std::string to_repr(const Value& v);
// Python float repr: 1.0, 1e-05, 1e+16, 0.30000000000000004, inf, nan, -0.0.
void append_float_repr(std::string& out, double d);

// Python `==` (1 == 1.0 == True; dicts compare order-insensitively; list != tuple).
bool equals(const Value& a, const Value& b) noexcept;
// Hash consistent with equals() (hash(1) == hash(1.0) == hash(True)); returns false for
// unhashable kinds (list, dict, and tuples containing them). Strings use hash_string.
bool hash_value(const Value& v, std::uint64_t& hash) noexcept;
std::uint64_t hash_string(std::string_view s) noexcept;

enum class BinaryOp : std::uint8_t { Add, Sub, Mul, Div, FloorDiv, Mod, Pow };
enum class CompareOp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

// Python arithmetic: int overflow → OverflowError, /0 → ZeroDivisionError,
// str*int, list+list, tuple*int, ..., TypeError "unsupported operand type(s) for +: 'int' and
// 'str'". An Undefined operand raises its undefined_error().
Result<Value> binary_op(BinaryOp op, const Value& a, const Value& b,
                        const ValueLimits& limits = {});
Result<Value> negate(const Value& v);      // -x
Result<Value> unary_plus(const Value& v);  // +x
// Python comparison. Ordering of unorderable kinds gives TypeError
// "'<' not supported between instances of 'int' and 'str'".
Result<bool> compare(CompareOp op, const Value& a, const Value& b);
// `item in container`: substring, list/tuple membership, dict keys, Object::contains;
// Undefined container → false. TypeError for non-containers
// ("argument of type 'int' is not iterable").
Result<bool> contains(const Value& container, const Value& item);

// Python symbols for messages ("+", "//", "<=", ...).
std::string_view op_symbol(BinaryOp op) noexcept;
std::string_view op_symbol(CompareOp op) noexcept;

// x[key] with Python semantics: negative indexes, IndexError "list index out of range",
// KeyError (message = repr(key)), TypeError "list indices must be integers or slices, not str".
// (Jinja2 turns these errors into Undefined; that is the engine's choice.)
Result<Value> get_item(const Value& container, const Value& key);
// x[start:stop:step] for str (code points), list, tuple. Absent bounds are nullopt;
// step 0 is ValueError "slice step cannot be zero".
Result<Value> slice(const Value& v, std::optional<std::int64_t> start,
                    std::optional<std::int64_t> stop, std::optional<std::int64_t> step,
                    const ValueLimits& limits = {});
// iter(x) materialised as a List/Tuple value: list/tuple → itself, str → its code points,
// dict → its keys, Undefined → empty, Object → Object::iterate().
// TypeError "'int' object is not iterable" otherwise.
// A string longer than limits.max_container_items code points is a LimitError.
Result<Value> iterate(const Value& v, const ValueLimits& limits = {});

// markupsafe's escape(s): & < > ' " as &amp; &lt; &gt; &#39; &#34;, appended to `out`.
void append_html_escaped(std::string& out, std::string_view s);
// markupsafe.escape(v) for a str v: v itself when it is Markup, else its escaped text as a
// new Markup.
Value html_escape(const Value& str);

// Python's html.unescape (HTML5 named and numeric character references).
std::string html_unescape(std::string_view s);
// markupsafe's Markup(s).striptags(): comments, then tags removed, whitespace runs joined
// by one space, then unescaped (a str, not a Markup).
std::string markup_striptags(std::string_view s, const ValueLimits& limits = {});

// Concatenation helper for `~`-style building: checks max_string_bytes.
Status append_checked(std::string& out, std::string_view piece, const ValueLimits& limits);
// A LimitError naming the limit ("LimitError: max_string_bytes=67108864 exceeded").
Error limit_error(std::string_view limit_name, std::size_t limit_value);

// ---------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------

// Python `fmt % args`: %s %r %a %d %i %u %x %X %o %e %E %f %F %g %G %c %%, flags, width,
// precision, `*`, tuple args, dict args with %(name)s. Errors as Python
// ("not enough arguments for format string", "not all arguments converted during string
// formatting").
Result<Value> percent_format(std::string_view fmt, const Value& args,
                             const ValueLimits& limits = {});
// Markup.__mod__: the same, with every argument's str()/repr() HTML-escaped (Markup
// arguments' str() is kept), as a Markup.
Result<Value> markup_percent_format(std::string_view fmt, const Value& args,
                                    const ValueLimits& limits = {});

// str.format(*args, **kwargs) as Jinja2's SandboxedFormatter: {} {0} {name} {0.attr}
// {0[key]} {!r} {!s} {:spec}. Attribute access follows Jinja2's getattr (attribute then
// item); names starting with '_' are unsafe → SecurityError.
Result<Value> str_format(std::string_view fmt, const CallArgs& args,
                         const ValueLimits& limits = {});
// Markup.format (markupsafe's EscapeFormatter): each formatted field HTML-escaped, Markup
// fields written as they are; the result is a Markup.
Result<Value> markup_str_format(std::string_view fmt, const CallArgs& args,
                                const ValueLimits& limits = {});
// format(value, spec) — the format-spec mini-language for str/int/float/bool/None.
Status format_spec(std::string& out, const Value& v, std::string_view spec);

// ---------------------------------------------------------------------------------
// Python methods table (str / dict / list / tuple)
// ---------------------------------------------------------------------------------

// True when `self.name` is a safe Python method that call_method implements
// (e.g. "strip" on str, "items" on dict). Mutators answer false.
bool has_method(const Value& self, std::string_view name) noexcept;
bool has_method(Kind kind, std::string_view name) noexcept;
// The implementation behind call_method for `name` on values of `kind` (nullptr when
// has_method is false), for callers that resolve a method name once and call it often.
using MethodFn = Result<Value> (*)(const Value& self, const CallArgs& args,
                                   const ValueLimits& limits);
MethodFn find_method_fn(Kind kind, std::string_view name) noexcept;
// True for the methods ImmutableSandboxedEnvironment refuses (list append/pop/...,
// dict update/pop/..., set add/...): the engine returns Value::unsafe_attribute.
bool is_unsafe_mutator(Kind kind, std::string_view name) noexcept;
// Calls self.name(*args, **kwargs). Unknown method: AttributeError-like
// UndefinedError; mutators: SecurityError with Jinja2's message.
Result<Value> call_method(const Value& self, std::string_view name, const CallArgs& args,
                          const ValueLimits& limits = {});
// `self.name` without calling: a callable Object that calls call_method (its repr is
// Python's "<built-in method strip of str object>").
Value bound_method(const Value& self, std::string_view name);

// Unicode helpers shared with the engine's filters.
Result<Value> str_upper(const Value& s, const ValueLimits& limits = {});
Result<Value> str_lower(const Value& s, const ValueLimits& limits = {});
Result<Value> str_title(const Value& s, const ValueLimits& limits = {});
Result<Value> str_capitalize(const Value& s, const ValueLimits& limits = {});
// Python str.isspace() for one code point.
bool is_python_whitespace(char32_t c) noexcept;

// ---------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------

// json.dumps(value, ensure_ascii, indent, separators, sort_keys) exactly as Python.
struct JsonDumpOptions {
  bool ensure_ascii = true;           // Python's default (transformers' tojson passes False)
  std::optional<std::string> indent;  // nullopt = None; an int n becomes n spaces
  std::optional<std::string> item_separator;  // default ", " (or "," when indent is set)
  std::optional<std::string> key_separator;   // default ": "
  bool sort_keys = false;
  bool allow_nan = true;         // NaN / Infinity / -Infinity as Python writes them
  std::size_t max_depth = 1000;  // nesting; Python raises RecursionError near here
};
// Appends json.dumps(v, ...) to out. Undefined/Object → TypeError
// "Object of type Undefined is not JSON serializable"; sort_keys with mixed key types →
// TypeError "'<' not supported between instances of 'int' and 'str'".
Status dump_json(std::string& out, const Value& v, const JsonDumpOptions& options = {},
                 const ValueLimits& limits = {});
Result<std::string> to_json_string(const Value& v, const JsonDumpOptions& options = {});
// json.dumps of a str given by its bytes (WTF-8), appended to out: the same text as dump_json
// of a String value holding them, for writers that have the text but no Value of it (building
// one would scan the bytes for its flags first).
void append_json_string(std::string& out, std::string_view s, bool ensure_ascii);

// JSON text → Value (RFC 8259 plus Python's NaN/Infinity/-Infinity). Duplicate keys: last
// value wins at the first position (Python dict). Lone surrogate escapes ("\ud800") are
// kept as WTF-8. Integers beyond int64 follow `big_int`. Errors: type JSONDecodeError,
// message "<what>: line L column C (char N)" with line/column also set in Error.
struct JsonParseOptions {
  enum class BigInt : std::uint8_t { Error, Float };
  BigInt big_int = BigInt::Error;  // Error: OverflowError naming the position
  std::size_t max_depth = 512;
  std::size_t max_string_bytes = 64u << 20;
  std::size_t max_container_items = 4u << 20;
  bool allow_nan = true;  // accept NaN / Infinity / -Infinity like Python's json.loads
};
Result<Value> parse_json(std::string_view text, const JsonParseOptions& options = {});

// JSON conversion to and from nlohmann::ordered_json: chatwire/value_json.hpp (this header does
// not pull in nlohmann).

}  // namespace chatwire
