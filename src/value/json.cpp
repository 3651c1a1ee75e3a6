// json.dumps exactly as Python's json module writes it, a JSON parser that builds
// values directly (no intermediate DOM), and nlohmann interop.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "chatwire/value_json.hpp"
#include "util/json_escape.hpp"
#include "value/internal.hpp"
#include "value/scan.hpp"

namespace chatwire {

// ---------------------------------------------------------------------------------
// json.dumps
// ---------------------------------------------------------------------------------

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// The second character of the escapes both of Python's encoders share (0: written as \u00XX).
struct ShortEscapes {
  char second[128];
  constexpr ShortEscapes() : second{} {
    second[static_cast<unsigned char>('"')] = '"';
    second[static_cast<unsigned char>('\\')] = '\\';
    second[static_cast<unsigned char>('\n')] = 'n';
    second[static_cast<unsigned char>('\r')] = 'r';
    second[static_cast<unsigned char>('\t')] = 't';
    second[static_cast<unsigned char>('\b')] = 'b';
    second[static_cast<unsigned char>('\f')] = 'f';
  }
};
constexpr ShortEscapes kShortEscapes;

void append_json_float(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "NaN";
  } else if (std::isinf(d)) {
    out += d < 0 ? "-Infinity" : "Infinity";
  } else {
    append_float_repr(out, d);
  }
}

// Bytes json.dumps escapes: control bytes, '"', '\\' and, with ensure_ascii, >= 0x7F.
// Eight bytes as one word: 0x80 is set in the lane of the first such byte and in no lane
// below it (a borrow or carry only moves upwards from a byte that is itself flagged), so
// the lowest set bit locates it on a little-endian machine; lanes above may be false hits.
// Zero bytes count as control bytes, which lets a short tail padded with zeros stop there.
// Only builds without SSE2 call it.
[[maybe_unused]] inline std::uint64_t special_bytes8(std::uint64_t w, bool ensure_ascii) {
  constexpr std::uint64_t k01 = 0x0101010101010101ull, k80 = 0x8080808080808080ull;
  const std::uint64_t quote = w ^ (k01 * '"'), backslash = w ^ (k01 * '\\');
  std::uint64_t bad =
      ((w - k01 * 0x20) & ~w) | ((quote - k01) & ~quote) | ((backslash - k01) & ~backslash);
  if (ensure_ascii) bad |= (w + k01) | w;  // a byte above 0x7E
  return bad & k80;
}

#if defined(__SSE2__)
// The same bytes over a 16-byte block, one mask bit per byte: bytes below 0x20 compare
// less than 0x20 as signed values only together with the ones >= 0x80, which are told
// apart by the sign bit.
inline unsigned special_bytes16(__m128i v, bool ensure_ascii) {
  const __m128i high = _mm_cmplt_epi8(v, _mm_setzero_si128());                   // >= 0x80
  __m128i bad = _mm_andnot_si128(high, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));  // control
  bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
  bad = _mm_or_si128(bad, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
  if (ensure_ascii)
    bad = _mm_or_si128(bad, _mm_or_si128(high, _mm_cmpgt_epi8(v, _mm_set1_epi8(0x7E))));
  return static_cast<unsigned>(_mm_movemask_epi8(bad));
}
#endif

// Text written whole many times (separators, newline and indentation), kept with 16
// readable bytes past its end so that Sink::put_padded copies it in 16-byte steps.
struct PaddedText {
  const char* data = nullptr;
  std::size_t size = 0;
  char small[48];
  std::string large;

  void assign(std::string_view s) {
    size = s.size();
    if (size + 16 <= sizeof small) {
      std::memcpy(small, s.data(), size);
      std::memset(small + size, 0, 16);
      data = small;
    } else {
      large.reserve(size + 16);
      large.assign(s);
      large.append(16, '\0');
      data = large.data();
    }
  }
};

// Output cursor over a std::string: the string is resized ahead of the writes and cut
// back to what was written when the sink goes away, so that writing is a store through
// a pointer instead of a push_back that checks size and capacity for every character.
// Every write has 16 bytes of slack after it, which lets short copies move whole
// 16-byte blocks.
class Sink {
 public:
  explicit Sink(std::string& out) : out_(out) {
    std::size_t used = out.size();
    // Room up to the capacity, but at most kFirstRoom bytes of it: resize() zero-fills
    // what it adds, and a buffer reused for many small dumps (a render's scratch text)
    // would otherwise fill all of its capacity on every call.
    out.resize(std::max(std::min(out.capacity(), used + kFirstRoom), used + 256));
    p_ = out.data() + used;
    end_ = out.data() + out.size();
  }
  ~Sink() { out_.resize(size()); }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  static constexpr std::size_t kFirstRoom = 2048;
  std::size_t size() const { return static_cast<std::size_t>(p_ - out_.data()); }

  // Room for n more bytes plus the 16 of slack.
  void reserve(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n + 16) grow(n + 16);
  }

  template <std::size_t N>
  void put(const char (&literal)[N]) {
    reserve(N);
    std::memcpy(p_, literal, N - 1);
    p_ += N - 1;
  }

  void put(std::string_view s) {
    reserve(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }

  // n bytes of text that stays readable for n rounded up to 16.
  void put_padded(const char* text, std::size_t n) {
    reserve(n);
    char* p = p_;
    for (std::size_t k = 0; k < n; k += 16) std::memcpy(p + k, text + k, 16);
    p_ = p + n;
  }

  void put_int(std::int64_t i) {
    reserve(24);
    p_ = std::to_chars(p_, p_ + 24, i).ptr;
  }

  // json.dumps of a str.
  [[gnu::always_inline]] void json_string(std::string_view s, bool ensure_ascii) {
    const char* in = s.data();
    const char* const stop = in + s.size();
    reserve(s.size() + 2);
    // The cursor in a local: stores through char* could alias p_, which would make the
    // compiler reload it after each one.
    char* p = p_;
    *p++ = '"';
    p = copy_plain(in, stop, p, ensure_ascii);
    if (in != stop) {
      p_ = p;
      escaped_rest(s, in, ensure_ascii);
      p = p_;
    }
    *p++ = '"';
    p_ = p;
  }

 private:
  std::string& out_;
  char* p_;
  char* end_;

  // The rest of a string from the first byte needing an escape at `in`. Out of line: most
  // strings have none, and their path then saves fewer registers.
  [[gnu::noinline]] void escaped_rest(std::string_view s, const char* in, bool ensure_ascii) {
    const char* const stop = s.data() + s.size();
#if defined(__SSE2__)
    if (!ensure_ascii) {
      in = escaped_blocks(in, stop);
      reserve(static_cast<std::size_t>(stop - in) + 13);
      p_ = copy_plain(in, stop, p_, false);
      if (in == stop) return;
    }
#endif
    do {
      // At most 12 bytes for this character, then the rest as it is and the quote.
      reserve(static_cast<std::size_t>(stop - in) + 13);
      auto byte = static_cast<unsigned char>(*in);
      if (byte < 0x80) {
        ++in;
        if (char second = kShortEscapes.second[byte]) {
          p_[0] = '\\';
          p_[1] = second;
          p_ += 2;
        } else {
          u_escape(byte);
        }
      } else {
        std::size_t i = static_cast<std::size_t>(in - s.data());
        char32_t c = utf8::decode(s, i);  // ensure_ascii only
        in = s.data() + i;
        if (c >= 0x10000) {
          char32_t v = c - 0x10000;
          u_escape(0xD800 | ((v >> 10) & 0x3FF));
          u_escape(0xDC00 | (v & 0x3FF));
        } else {
          u_escape(static_cast<unsigned>(c));
        }
      }
      p_ = copy_plain(in, stop, p_, ensure_ascii);
    } while (in != stop);
  }

#if defined(__SSE2__)
  // Without ensure_ascii, 32 bytes a step while 64 remain: both blocks are stored whole when
  // neither has a byte to escape; otherwise the mask's bits are walked, each plain stretch
  // copied as 32 bytes (the cursor then moves past its length only) and each flagged byte
  // replaced by its escape from the table. Text such as a tool list printed as JSON has an
  // escaped quote every few bytes, where restarting the block scan after each escape cost
  // several times this. Returns where it stopped (fewer than 64 bytes before `stop`).
  const char* escaped_blocks(const char* in, const char* stop) {
    constexpr std::size_t kMaxGrowth = 32 * 6 + 32;  // every byte \u00XX, then one 32-byte copy
    auto copy32 = [](char* to, const char* from) {
      std::memcpy(to, from, 16);
      std::memcpy(to + 16, from + 16, 16);
    };
    while (stop - in >= 64) {
      reserve(static_cast<std::size_t>(stop - in) + kMaxGrowth);
      const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
      const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16));
      std::uint32_t mask = special_bytes16(lo, false) | (special_bytes16(hi, false) << 16);
      char* p = p_;
      if (mask == 0) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), lo);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 16), hi);
        p_ = p + 32;
        in += 32;
        continue;
      }
      std::size_t done = 0;
      do {
        const auto k = static_cast<std::size_t>(std::countr_zero(mask));
        copy32(p, in + done);
        p += k - done;
        const util::JsonEscape& e = util::kJsonEscapes.of[static_cast<unsigned char>(in[k])];
        std::memcpy(p, e.text, 8);
        p += e.size;
        done = k + 1;
        mask &= mask - 1;
      } while (mask != 0);
      copy32(p, in + done);
      p_ = p + (32 - done);
      in += 32;
    }
    return in;
  }
#endif

  [[gnu::noinline]] void grow(std::size_t n) {
    std::size_t used = size();
    out_.resize(used);                 // the bytes past the cursor need no copying
    if (out_.capacity() < used + n) {  // else the rest of the capacity is enough
      // Quadrupling while small: a tool list outgrows the caller's first guess by a few
      // times, and each step copies what was written.
      std::size_t factor = out_.capacity() < 4096 ? 4 : 2;
      out_.reserve(std::max(out_.capacity() * factor, used + n));
    }
    out_.resize(out_.capacity());
    p_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  void u_escape(unsigned code) {
    p_[0] = '\\';
    p_[1] = 'u';
    p_[2] = kHexDigits[(code >> 12) & 0xF];
    p_[3] = kHexDigits[(code >> 8) & 0xF];
    p_[4] = kHexDigits[(code >> 4) & 0xF];
    p_[5] = kHexDigits[code & 0xF];
    p_ += 6;
  }

  // Copies the bytes before the next one needing an escape (or the end). Blocks are stored
  // whole, escaped bytes included, into the reserved room; the cursor then moves only past
  // the plain ones. The caller reserved room for all of [in, stop) plus the slack.
  [[gnu::always_inline]] static char* copy_plain(const char*& in, const char* stop, char* out,
                                                 bool ensure_ascii) {
    if constexpr (std::endian::native != std::endian::little) {
      while (in < stop) {
        auto c = static_cast<unsigned char>(*in);
        if (c < 0x20 || c == '"' || c == '\\' || (ensure_ascii && c >= 0x7F)) return out;
        *out++ = *in++;
      }
      return out;
    }
#if defined(__SSE2__)
    // One instance per ensure_ascii value: the mask then has no branch inside the loop.
    if (ensure_ascii)
      return scan::copy_unflagged(in, stop, out,
                                  [](__m128i v) { return special_bytes16(v, true); });
    return scan::copy_unflagged(in, stop, out, [](__m128i v) { return special_bytes16(v, false); });
#else
    while (stop - in >= 8) {
      std::uint64_t w;
      std::memcpy(&w, in, 8);
      std::memcpy(out, &w, 8);
      if (std::uint64_t bad = special_bytes8(w, ensure_ascii)) {
        auto k = static_cast<std::size_t>(std::countr_zero(bad) >> 3);
        in += k;
        out += k;
        return out;
      }
      in += 8;
      out += 8;
    }
    if (in == stop) return out;
    // Under eight bytes left: the zero lanes above them are flagged, so a bit is always set.
    std::uint64_t w = scan::load_tail(in, static_cast<std::size_t>(stop - in));
    std::memcpy(out, &w, 8);
    auto k = static_cast<std::size_t>(std::countr_zero(special_bytes8(w, ensure_ascii)) >> 3);
    in += k;
    out += k;
    return out;
#endif
  }
};

Error not_serializable(const Value& v) {
  return type_error("Object of type " + std::string(type_name(v)) + " is not JSON serializable");
}

// CPython's list.sort comparison order for small lists (count_run + binary insertion),
// so that a mixed-type sort fails on the same pair, with the same message, as Python.
Status python_sort_keys(std::vector<const std::pair<Value, Value>*>& items) {
  auto less = [](const std::pair<Value, Value>* a,
                 const std::pair<Value, Value>* b) -> Result<bool> {
    return compare(CompareOp::Lt, a->first, b->first);
  };
  std::size_t n = items.size();
  if (n < 2) return ok_status();
  // Fast paths: all keys of one orderable kind.
  bool all_str = true, all_num = true;
  for (auto* item : items) {
    all_str &= item->first.is_string();
    all_num &=
        item->first.is_number() && !(item->first.is_float() && std::isnan(item->first.as_float()));
  }
  if (all_str || all_num) {
    std::stable_sort(items.begin(), items.end(), [&](auto* a, auto* b) { return *less(a, b); });
    return ok_status();
  }
  // count_run
  std::size_t run = 1;
  auto first = less(items[1], items[0]);
  if (!first) return first.error();
  bool descending = *first;
  for (run = 2; run < n; ++run) {
    auto r = less(items[run], items[run - 1]);
    if (!r) return r.error();
    if (descending ? !*r : *r) break;
  }
  if (descending) std::reverse(items.begin(), items.begin() + static_cast<long>(run));
  // binary insertion of the rest
  for (std::size_t start = run; start < n; ++start) {
    auto* pivot = items[start];
    std::size_t lo = 0, hi = start;
    while (lo < hi) {
      std::size_t mid = lo + ((hi - lo) >> 1);
      auto r = less(pivot, items[mid]);
      if (!r) return r.error();
      if (*r)
        hi = mid;
      else
        lo = mid + 1;
    }
    for (std::size_t k = start; k > lo; --k) items[k] = items[k - 1];
    items[lo] = pivot;
  }
  return ok_status();
}

// Each step answers true/false and keeps the first error in `error`: a Status (a variant
// holding an Error) built and checked at every value cost more than writing the value.
struct Dumper {
  Sink sink;  // held here, not by reference: one indirection less on every write
  const JsonDumpOptions& options;
  const ValueLimits& limits;
  std::size_t depth = 0;
  std::optional<Error> error;
  // The item separator, then (with an indent) a newline and `indent_levels` indents:
  // an item after the first copies a prefix of it, the first item and a closing bracket
  // the part after the separator.
  PaddedText separator_line;
  std::size_t separator_size = 0;
  std::size_t indent_levels = 0;
  PaddedText key_separator;

  Dumper(std::string& out, const JsonDumpOptions& o, const ValueLimits& l,
         std::string_view item_sep, std::string_view key_sep)
      : sink(out), options(o), limits(l), separator_size(item_sep.size()) {
    separator_line.assign(item_sep);
    key_separator.assign(key_sep);
  }
  Dumper(const Dumper&) = delete;
  Dumper& operator=(const Dumper&) = delete;

  bool fail(Error e) {
    error = std::move(e);
    return false;
  }

  // Makes separator_line hold at least `level` indents (a few more for the next levels
  // while the indent is short).
  void cover_level(std::size_t level) {
    const std::string& indent = *options.indent;
    std::size_t levels = level + (indent.size() <= 16 ? 8 : 0);
    std::string line(separator_line.data, separator_size);
    line.reserve(separator_size + 1 + levels * indent.size());
    line += '\n';
    for (std::size_t i = 0; i < levels; ++i) line += indent;
    separator_line.assign(line);
    indent_levels = levels;
  }

  void newline_indent(std::size_t level) {
    if (level > indent_levels) cover_level(level);
    sink.put_padded(separator_line.data + separator_size, 1 + level * options.indent->size());
  }

  // The separator before every item but the first, and with an indent the new line.
  void item_start(std::size_t i) {
    if (!options.indent) {
      if (i) sink.put_padded(separator_line.data, separator_size);
      return;
    }
    if (depth > indent_levels) cover_level(depth);
    std::size_t skip = i ? 0 : separator_size;
    sink.put_padded(separator_line.data + skip,
                    separator_size - skip + 1 + depth * options.indent->size());
  }

  bool check_size() {
    if (sink.size() > limits.max_string_bytes)
      return fail(limit_error("max_string_bytes", limits.max_string_bytes));
    return true;
  }

  bool finite_or_allowed(double d) {
    if (!options.allow_nan && !std::isfinite(d))
      return fail(value_error("Out of range float values are not JSON compliant"));
    return true;
  }

  void json_float(double d) {
    std::string text;  // Python's repr layout lives in print.cpp; floats are rare here
    append_json_float(text, d);
    sink.put(text);
  }

  bool key(const Value& k) {
    switch (k.kind()) {
      case Kind::String:
        sink.json_string(k.as_string(), options.ensure_ascii);
        return true;
      case Kind::Float:
        if (!finite_or_allowed(k.as_float())) return false;
        sink.put("\"");
        json_float(k.as_float());
        sink.put("\"");
        return true;
      case Kind::Bool:
        if (k.as_bool())
          sink.put("\"true\"");
        else
          sink.put("\"false\"");
        return true;
      case Kind::None:
        sink.put("\"null\"");
        return true;
      case Kind::Int:
        sink.put("\"");
        sink.put_int(k.as_int());
        sink.put("\"");
        return true;
      default:
        return fail(type_error("keys must be str, int, float, bool or None, not " +
                               std::string(type_name(k))));
    }
  }

  bool value(const Value& v) {
    switch (v.kind()) {
      case Kind::None:
        sink.put("null");
        return true;
      case Kind::Bool:
        if (v.as_bool())
          sink.put("true");
        else
          sink.put("false");
        return true;
      case Kind::Int:
        sink.put_int(v.as_int());
        return true;
      case Kind::Float:
        if (!finite_or_allowed(v.as_float())) return false;
        json_float(v.as_float());
        return true;
      case Kind::String:
        sink.json_string(v.as_string(), options.ensure_ascii);
        return check_size();
      case Kind::List:
      case Kind::Tuple:
        return sequence(v.as_list());
      case Kind::Dict:
        return mapping(v);
      case Kind::Object: {
        Object* o = v.as_object();
        if (!o->json_serializable()) return fail(not_serializable(v));
        return value(o->json_value());
      }
      case Kind::Undefined:
        return fail(not_serializable(v));
    }
    return fail(not_serializable(v));
  }

  // A container's item: strings, the common leaf, are written here rather than through
  // value(), whose call is costlier than a short string.
  bool element(const Value& v) {
    if (v.kind() != Kind::String) return value(v);
    sink.json_string(v.as_string(), options.ensure_ascii);
    return check_size();
  }

  bool enter() {
    if (++depth > options.max_depth)
      return fail(make_error("RecursionError",
                             "maximum recursion depth exceeded while encoding a JSON object"));
    return true;
  }

  bool leave(const char (&close)[2]) {
    if (options.indent) newline_indent(depth - 1);
    sink.put(close);
    --depth;
    return check_size();
  }

  bool sequence(std::span<const Value> items) {
    if (items.empty()) {
      sink.put("[]");
      return true;
    }
    if (!enter()) return false;
    sink.put("[");
    for (std::size_t i = 0; i < items.size(); ++i) {
      item_start(i);
      if (!element(items[i])) return false;
    }
    return leave("]");
  }

  bool item(std::size_t i, const std::pair<Value, Value>& entry) {
    item_start(i);
    // String keys, nearly all of them, without the call.
    if (entry.first.kind() == Kind::String)
      sink.json_string(entry.first.as_string(), options.ensure_ascii);
    else if (!key(entry.first))
      return false;
    sink.put_padded(key_separator.data, key_separator.size);
    return element(entry.second);
  }

  bool mapping(const Value& d) {
    auto entries = d.dict_entries();
    if (entries.empty()) {
      sink.put("{}");
      return true;
    }
    if (!enter()) return false;
    sink.put("{");
    if (options.sort_keys) {
      std::vector<const std::pair<Value, Value>*> order;
      order.reserve(entries.size());
      for (const auto& e : entries) order.push_back(&e);
      if (auto s = python_sort_keys(order); !s) return fail(std::move(s.error()));
      for (std::size_t i = 0; i < order.size(); ++i)
        if (!item(i, *order[i])) return false;
    } else {
      for (std::size_t i = 0; i < entries.size(); ++i)
        if (!item(i, entries[i])) return false;
    }
    return leave("}");
  }
};

}  // namespace

Status dump_json(std::string& out, const Value& v, const JsonDumpOptions& options,
                 const ValueLimits& limits) {
  std::string_view item_sep = options.item_separator ? std::string_view(*options.item_separator)
                              : options.indent       ? std::string_view(",")
                                                     : std::string_view(", ");
  std::string_view key_sep =
      options.key_separator ? std::string_view(*options.key_separator) : std::string_view(": ");
  Dumper dumper(out, options, limits, item_sep, key_sep);
  if (dumper.value(v)) return ok_status();
  return std::move(*dumper.error);
}

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  Sink sink(out);
  sink.json_string(s, ensure_ascii);
}

Result<std::string> to_json_string(const Value& v, const JsonDumpOptions& options) {
  std::string out;
  if (auto s = dump_json(out, v, options); !s) return s.error();
  return out;
}

// ---------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------

namespace {

// Escape-free object keys ("role", "content", ...) shared instead of one string per object:
// an open-addressing table of the keys seen, each an allocation whose hash is computed once.
// Outside a render a thread keeps its table from one document to the next, so a stream of
// requests with the same keys (a batch, a server) neither allocates, hashes nor frees them per
// request; that table is emptied when it fills, so it follows the keys in use. A render may
// not keep what it builds past its end (detail::RenderScope): there a document has a table of
// its own.
class KeyTable {
 public:
  static constexpr std::size_t kSlots = 256, kMaxKeys = 192, kMaxKeyBytes = 64;

  // The keys of one filling of the table. Dicts that borrow their keys (DictData::key_owner)
  // count the block, which keeps the keys alive after the table is emptied.
  struct Block final : detail::RefCounted {
    std::vector<Value> keys;  // reserved for kMaxKeys: slots point into it
  };

  KeyTable() = default;
  KeyTable(const KeyTable&) = delete;
  KeyTable& operator=(const KeyTable&) = delete;
  ~KeyTable() { drop_block(); }

  // The shared string for `k` (1 to kMaxKeyBytes bytes of ASCII), kept by block().
  const Value& get(std::string_view k) {
    for (std::size_t i = slot_of(k);; i = (i + 1) % kSlots) {
      Slot& slot = slots_[i];
      if (slot.value == nullptr) {
        if (block_ == nullptr || block_->keys.size() == kMaxKeys) {
          if (block_ != nullptr) clear();
          block_ = new Block;
          block_->keys.reserve(kMaxKeys);
          return get(k);
        }
        block_->keys.push_back(detail::string_copy_known(k, true, k.size()));
        slot.value = &block_->keys.back();
        slot.text = slot.value->as_string();  // the value's own bytes
        return *slot.value;
      }
      if (detail::same_bytes(slot.text, k)) return *slot.value;
    }
  }
  Block* block() const { return block_; }

 private:
  struct Slot {
    std::string_view text;
    const Value* value = nullptr;  // nullptr: free
  };
  // A mix of the length and the first and last eight bytes.
  static std::size_t slot_of(std::string_view k) {
    std::uint64_t head, tail = 0;
    if (k.size() >= 8) {
      std::memcpy(&head, k.data(), 8);
      std::memcpy(&tail, k.data() + k.size() - 8, 8);
    } else {
      head = scan::load_tail(k.data(), k.size());  // a memcpy of a variable size is a call
    }
    std::uint64_t h = (head ^ (tail * 0x9E3779B97F4A7C15ull) ^ k.size()) * 0xff51afd7ed558ccdull;
    return static_cast<std::size_t>(h >> 56);  // 256 slots
  }
  void clear() {
    for (Slot& slot : slots_) slot = Slot{};
    drop_block();
  }
  void drop_block() {
    if (block_ != nullptr && block_->drop_ref()) delete block_;
    block_ = nullptr;
  }

  Slot slots_[kSlots];
  Block* block_ = nullptr;  // counted once by the table
};

// The keys of one object being parsed, while they are borrowed from a key table's block (see
// DictData::key_owner): every key in stack[base, end) is then an uncounted alias of a key of
// `owner`, of which this holds one count for the dict to take over. A key that cannot be
// borrowed (not from the table, from a newer block after the table was emptied, a ninth key)
// turns the aliases into counted references for good. An object that fails leaves no alias
// behind: its entries are dropped here.
class BorrowedKeys {
 public:
  using Entries = std::vector<std::pair<Value, Value>>;
  BorrowedKeys(Entries& stack, std::size_t base) : stack_(stack), base_(base) {}
  BorrowedKeys(const BorrowedKeys&) = delete;
  BorrowedKeys& operator=(const BorrowedKeys&) = delete;
  ~BorrowedKeys() {
    if (done_) return;
    if (owner_ != nullptr) {
      for (std::size_t i = base_; i < stack_.size(); ++i) ValueAccess::forget(stack_[i].first);
      drop_owner();
    }
    stack_.resize(base_);
  }

  // Whether the next key, a key of `block`, may be borrowed.
  bool accept(KeyTable::Block* block) {
    if (counted_) return false;
    if (owner_ == nullptr) {
      owner_ = block;
      owner_->add_ref();
      return true;
    }
    if (owner_ == block && stack_.size() - base_ < detail::DictData::kLinearMax) return true;
    to_counted();
    return false;
  }
  // The next key is not a table key.
  void reject() { to_counted(); }

  // The object, from its entries on the stack.
  Value finish() {
    done_ = true;
    Entries entries(std::make_move_iterator(stack_.begin() + static_cast<long>(base_)),
                    std::make_move_iterator(stack_.end()));
    stack_.resize(base_);
    if (owner_ != nullptr && distinct(entries)) {
      KeyTable::Block* owner = std::exchange(owner_, nullptr);
      return detail::dict_borrowing_keys(std::move(entries), owner);
    }
    if (owner_ != nullptr) {  // a repeated key: dict_unchecked merges and releases
      for (auto& entry : entries) ValueAccess::add_ref(entry.first);
      drop_owner();
    }
    return Value::dict_unchecked(std::move(entries));
  }

 private:
  // Keys of one block are equal only when they are the same string.
  static bool distinct(const Entries& entries) {
    for (std::size_t i = 1; i < entries.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (entries[i].first.same(entries[j].first)) return false;
    return true;
  }
  void to_counted() {
    counted_ = true;
    if (owner_ == nullptr) return;
    for (std::size_t i = base_; i < stack_.size(); ++i) ValueAccess::add_ref(stack_[i].first);
    drop_owner();
  }
  void drop_owner() {
    if (owner_->drop_ref()) delete owner_;
    owner_ = nullptr;
  }

  Entries& stack_;
  std::size_t base_;
  KeyTable::Block* owner_ = nullptr;
  bool counted_ = false;
  bool done_ = false;
};

struct Parser {
  Parser(std::string_view json, const JsonParseOptions& parse_options, KeyTable& key_table)
      : text(json), options(parse_options), keys(key_table) {}

  std::string_view text;
  const JsonParseOptions& options;
  std::size_t pos = 0;
  std::size_t depth = 0;
  // Where object keys are shared (KeyTable): the thread's own outside a render, else one of
  // this document's.
  KeyTable& keys;
  // Scratch stacks shared by all nesting levels: a container's items are collected
  // here and moved into one exactly-sized vector when it closes.
  std::vector<Value> item_stack;
  std::vector<std::pair<Value, Value>> entry_stack;
  // The bytes of a string with escapes or non-ASCII text, reused from string to string.
  std::string scratch;

  // Python's JSONDecodeError position: line, column and char counted in code points
  // (the text is the str json.loads saw). Invalid UTF-8 bytes count one each.
  Error error_at(std::size_t at, std::string what, std::string type = "JSONDecodeError") {
    std::size_t line = 1, column = 1, chars = 0;
    for (std::size_t i = 0; i < at && i < text.size(); ++i) {
      if (utf8::is_continuation(static_cast<unsigned char>(text[i]))) continue;
      ++chars;
      ++column;
      if (text[i] == '\n') {
        ++line;
        column = 1;
      }
    }
    Error e;
    e.type = std::move(type);
    e.message = what + ": line " + std::to_string(line) + " column " + std::to_string(column) +
                " (char " + std::to_string(chars) + ")";
    e.line = line;
    e.column = column;
    return e;
  }

  void skip_ws() {
    while (pos < text.size()) {
      char c = text[pos];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos;
    }
  }

  bool match(std::string_view word) {
    if (text.substr(pos, word.size()) == word) {
      pos += word.size();
      return true;
    }
    return false;
  }

  // The whole text as one JSON value.
  Result<Value> document() {
    auto v = value();
    if (!v) return v.error();
    skip_ws();
    if (pos != text.size()) return error_at(pos, "Extra data");
    return v;
  }

  Result<Value> value() {
    skip_ws();
    if (pos >= text.size()) return error_at(pos, "Expecting value");
    char c = text[pos];
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"': {
        auto s = string();
        if (!s) return s.error();
        return std::move(*s);
      }
      case 't':
        if (match("true")) return Value(true);
        break;
      case 'f':
        if (match("false")) return Value(false);
        break;
      case 'n':
        if (match("null")) return Value::none();
        break;
      case 'N':
        if (options.allow_nan && match("NaN")) return Value(std::nan(""));
        break;
      case 'I':
        if (options.allow_nan && match("Infinity"))
          return Value(std::numeric_limits<double>::infinity());
        break;
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        break;
    }
    return error_at(pos, "Expecting value");
  }

  Result<Value> number() {
    std::size_t start = pos;
    if (text[pos] == '-') {
      ++pos;
      if (options.allow_nan && match("Infinity"))
        return Value(-std::numeric_limits<double>::infinity());
    }
    if (pos >= text.size() || !(text[pos] >= '0' && text[pos] <= '9'))
      return error_at(start, "Expecting value");
    if (text[pos] == '0') {
      ++pos;
    } else {
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    }
    bool is_float = false;
    // Python's NUMBER_RE: a fraction or exponent must have digits, else the number ends.
    if (pos + 1 < text.size() && text[pos] == '.' && text[pos + 1] >= '0' && text[pos + 1] <= '9') {
      is_float = true;
      pos += 1;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      std::size_t e = pos + 1;
      if (e < text.size() && (text[e] == '+' || text[e] == '-')) ++e;
      if (e < text.size() && text[e] >= '0' && text[e] <= '9') {
        is_float = true;
        pos = e;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
      }
    }
    const char* first = text.data() + start;
    const char* last = text.data() + pos;
    if (!is_float) {
      std::int64_t i = 0;
      auto res = std::from_chars(first, last, i);
      if (res.ec == std::errc()) return Value(i);
      if (options.big_int == JsonParseOptions::BigInt::Error)
        return error_at(start, "integer does not fit in 64 bits", "OverflowError");
    }
    double d = 0;
    auto res = std::from_chars(first, last, d);
    if (res.ec == std::errc::result_out_of_range) {
      // Python's float(): overflow gives inf, underflow gives 0.0.
      std::string_view digits(first, static_cast<std::size_t>(last - first));
      std::size_t e = digits.find_first_of("eE");
      bool negative_exponent =
          e != std::string_view::npos && e + 1 < digits.size() && digits[e + 1] == '-';
      bool huge = !negative_exponent;
      d = huge ? std::numeric_limits<double>::infinity() : 0.0;
      if (digits[0] == '-') d = -d;
    } else if (res.ec != std::errc()) {
      return error_at(start, "Expecting value");
    }
    return Value(d);
  }

  Status string_into(std::string& out, bool& ascii, std::size_t& code_points) {
    std::size_t start = pos;  // at the opening quote
    ++pos;
    ascii = true;
    code_points = 0;
    while (true) {
      std::size_t run = plain_run_end(pos);
      out.append(text.data() + pos, run - pos);
      code_points += run - pos;
      pos = run;
      if (pos >= text.size()) return error_at(start, "Unterminated string starting at");
      auto c = static_cast<unsigned char>(text[pos]);
      if (c == '"') {
        ++pos;
        break;
      }
      if (c < 0x20) return error_at(pos, "Invalid control character at");
      if (c >= 0x80) {
        if (auto s = utf8_sequence(out); !s) return s;
        ascii = false;
        ++code_points;
        continue;
      }
      // Backslash escape.
      if (pos + 1 >= text.size()) return error_at(start, "Unterminated string starting at");
      char e = text[pos + 1];
      char plain = 0;
      switch (e) {
        case '"':
          plain = '"';
          break;
        case '\\':
          plain = '\\';
          break;
        case '/':
          plain = '/';
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'u':
          break;
        default:
          return error_at(pos, "Invalid \\escape");
      }
      if (plain) {
        out += plain;
        ++code_points;
        pos += 2;
        continue;
      }
      auto unit = hex4(pos + 2);
      if (unit < 0) return error_at(pos + 1, "Invalid \\uXXXX escape");
      pos += 6;
      char32_t cp = static_cast<char32_t>(unit);
      if (cp >= 0xD800 && cp <= 0xDBFF && pos + 1 < text.size() && text[pos] == '\\' &&
          text[pos + 1] == 'u') {
        auto low = hex4(pos + 2);
        if (low < 0) return error_at(pos + 1, "Invalid \\uXXXX escape");
        if (low >= 0xDC00 && low <= 0xDFFF) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<char32_t>(low) - 0xDC00);
          pos += 6;
        }
      }
      // A lone surrogate stays as its WTF-8 encoding, as Python keeps it in the str.
      utf8::encode(out, cp);
      if (cp >= 0x80) ascii = false;
      ++code_points;
    }
    if (out.size() > options.max_string_bytes)
      return error_at(start,
                      "max_string_bytes=" + std::to_string(options.max_string_bytes) +
                          " exceeded by string starting at",
                      "LimitError");
    return ok_status();
  }

  // End of the bytes from `at` that a string copies as they are: up to the first '"', '\\',
  // control byte or non-ASCII byte. 16 bytes per step: request strings are long runs of text.
  std::size_t plain_run_end(std::size_t at) const {
    const char* p = text.data();
    const std::size_t n = text.size();
#if defined(__SSE2__)
    while (at + 16 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
      // Signed compare: the bytes >= 0x80 are negative, so they count as below 0x20 too.
      __m128i stop = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
      stop = _mm_or_si128(stop, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
      stop = _mm_or_si128(stop, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(stop));
      if (mask != 0) return at + static_cast<std::size_t>(std::countr_zero(mask));
      at += 16;
    }
#endif
    while (at < n) {
      auto c = static_cast<unsigned char>(p[at]);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
      ++at;
    }
    return at;
  }

  long hex4(std::size_t at) const {
    if (at + 4 > text.size()) return -1;
    long v = 0;
    for (std::size_t i = at; i < at + 4; ++i) {
      char c = text[i];
      int d = (c >= '0' && c <= '9')   ? c - '0'
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                       : -1;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  }

  // One strictly valid UTF-8 sequence (no overlongs, no encoded surrogates).
  Status utf8_sequence(std::string& out) {
    auto b0 = static_cast<unsigned char>(text[pos]);
    int extra;
    char32_t min;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      extra = 1;
      min = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      extra = 2;
      min = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      extra = 3;
      min = 0x10000;
    } else {
      return error_at(pos, "Invalid UTF-8 byte 0x" + hex_byte(b0));
    }
    if (pos + static_cast<std::size_t>(extra) >= text.size())
      return error_at(pos, "Invalid UTF-8 sequence");
    char32_t cp = b0 & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) {
      auto b = static_cast<unsigned char>(text[pos + k]);
      if ((b & 0xC0) != 0x80) return error_at(pos, "Invalid UTF-8 sequence");
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return error_at(pos, "Invalid UTF-8 sequence");
    out.append(text.data() + pos, static_cast<std::size_t>(extra) + 1);
    pos += static_cast<std::size_t>(extra) + 1;
    return ok_status();
  }

  static std::string hex_byte(unsigned char b) {
    std::string s;
    s += kHexDigits[b >> 4];
    s += kHexDigits[b & 0xF];
    return s;
  }

  // Strings up to this size are copied into their payload's own block (one allocation);
  // a longer one with escapes keeps the scratch buffer it was decoded into (no second copy).
  static constexpr std::size_t kCopiedStringBytes = 4096;

  Result<Value> string() {
    // Most strings of a request are plain ASCII: found by one scan and copied once, straight
    // into the payload. One that goes over max_string_bytes takes the general path, which
    // reports it.
    const std::size_t end = plain_run_end(pos + 1);
    if (end < text.size() && text[end] == '"' && end - pos - 1 <= options.max_string_bytes) {
      std::string_view s = text.substr(pos + 1, end - pos - 1);
      pos = end + 1;
      return detail::string_copy_known(s, true, s.size());
    }
    scratch.clear();
    bool ascii;
    std::size_t n;
    if (auto st = string_into(scratch, ascii, n); !st) return st.error();
    if (scratch.size() <= kCopiedStringBytes) return detail::string_copy_known(scratch, ascii, n);
    return Value::string_known(std::exchange(scratch, std::string()), ascii, n);
  }

  // An escape-free ASCII key from the key table (pos moves past it), or nullptr (pos stays).
  const Value* table_key() {
    const std::size_t start = pos + 1;
    const std::size_t end = plain_run_end(start);
    if (end < text.size() && text[end] == '"' && end > start &&
        end - start <= KeyTable::kMaxKeyBytes) {
      pos = end + 1;
      return &keys.get(text.substr(start, end - start));
    }
    return nullptr;
  }

  Status enter(std::size_t at) {
    if (++depth > options.max_depth)
      return error_at(at, "max_depth=" + std::to_string(options.max_depth) + " exceeded",
                      "LimitError");
    return ok_status();
  }

  Result<Value> array() {
    std::size_t start = pos;
    if (auto s = enter(start); !s) return s.error();
    ++pos;
    std::size_t base = item_stack.size();
    skip_ws();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      --depth;
      return Value::list({});
    }
    while (true) {
      auto v = value();
      if (!v) return v.error();
      item_stack.push_back(std::move(*v));
      if (item_stack.size() - base > options.max_container_items)
        return error_at(start,
                        "max_container_items=" + std::to_string(options.max_container_items) +
                            " exceeded by array starting at",
                        "LimitError");
      skip_ws();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        break;
      }
      return error_at(pos, "Expecting ',' delimiter");
    }
    --depth;
    std::vector<Value> items(std::make_move_iterator(item_stack.begin() + static_cast<long>(base)),
                             std::make_move_iterator(item_stack.end()));
    item_stack.resize(base);
    return Value::list(std::move(items));
  }

  Result<Value> object() {
    std::size_t start = pos;
    if (auto s = enter(start); !s) return s.error();
    ++pos;
    std::size_t base = entry_stack.size();
    skip_ws();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      --depth;
      return Value::empty_dict();
    }
    BorrowedKeys borrowed(entry_stack, base);
    while (true) {
      skip_ws();
      if (pos >= text.size() || text[pos] != '"')
        return error_at(pos, "Expecting property name enclosed in double quotes");
      // The key: an alias of a table key (decided now, while its block is surely alive), or
      // a counted string.
      Value key;
      detail::RefCounted* alias = nullptr;
      if (const Value* shared = table_key()) {
        if (borrowed.accept(keys.block()))
          alias = ValueAccess::str(*shared);
        else
          key = *shared;
      } else {
        borrowed.reject();
        auto k = string();
        if (!k) return k.error();
        key = std::move(*k);
      }
      skip_ws();
      if (pos >= text.size() || text[pos] != ':') return error_at(pos, "Expecting ':' delimiter");
      ++pos;
      auto v = value();
      if (!v) return v.error();
      if (alias != nullptr) key = ValueAccess::from_payload(Kind::String, alias);
      entry_stack.emplace_back(std::move(key), std::move(*v));
      if (entry_stack.size() - base > options.max_container_items)
        return error_at(start,
                        "max_container_items=" + std::to_string(options.max_container_items) +
                            " exceeded by object starting at",
                        "LimitError");
      skip_ws();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        break;
      }
      return error_at(pos, "Expecting ',' delimiter");
    }
    --depth;
    return borrowed.finish();
  }
};

}  // namespace

Result<Value> parse_json(std::string_view text, const JsonParseOptions& options) {
  if (detail::render_depth != 0) {  // see KeyTable
    auto own = std::make_unique<KeyTable>();
    return Parser(text, options, *own).document();
  }
  // On the heap: 8 KB of thread-local storage in every thread that loads the library would be
  // a cost for the threads that never parse.
  static thread_local std::unique_ptr<KeyTable> thread_keys;
  // In a LocalBuildScope the keys are local payloads too, from a table of their own: a table
  // shared with trees that may go to other threads must count atomically.
  static thread_local std::unique_ptr<KeyTable> local_keys;
  std::unique_ptr<KeyTable>& keys = detail::local_build_depth != 0 ? local_keys : thread_keys;
  if (!keys) keys = std::make_unique<KeyTable>();
  return Parser(text, options, *keys).document();
}

// ---------------------------------------------------------------------------------
// nlohmann interop
// ---------------------------------------------------------------------------------

Value from_json(const nlohmann::ordered_json& json) {
  using nlohmann::ordered_json;
  switch (json.type()) {
    case ordered_json::value_t::null:
      return Value::none();
    case ordered_json::value_t::boolean:
      return Value(json.get<bool>());
    case ordered_json::value_t::number_integer:
      return Value(json.get<std::int64_t>());
    case ordered_json::value_t::number_unsigned: {
      auto u = json.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return Value(static_cast<std::int64_t>(u));
      return Value(static_cast<double>(u));
    }
    case ordered_json::value_t::number_float:
      return Value(json.get<double>());
    case ordered_json::value_t::string:
      return Value(json.get_ref<const std::string&>());
    case ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case ordered_json::value_t::object: {
      std::vector<std::pair<Value, Value>> entries;
      entries.reserve(json.size());
      for (auto it = json.begin(); it != json.end(); ++it)
        entries.emplace_back(Value(it.key()), from_json(it.value()));
      return Value::dict_unchecked(std::move(entries));
    }
    default:
      return Value::none();
  }
}

namespace {

// nlohmann requires valid UTF-8: lone surrogates become U+FFFD.
std::string to_utf8(const Value& s) {
  if (s.string_is_ascii()) return std::string(s.as_string());
  std::string_view in = s.as_string();
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    std::size_t begin = i;
    char32_t c = utf8::decode(in, i);
    if ((c >= 0xD800 && c <= 0xDFFF) || (i - begin == 1 && c >= 0x80))
      out += "\xEF\xBF\xBD";
    else
      out.append(in.substr(begin, i - begin));
  }
  return out;
}

}  // namespace

Result<nlohmann::ordered_json> to_json(const Value& v) {
  using nlohmann::ordered_json;
  switch (v.kind()) {
    case Kind::None:
      return ordered_json(nullptr);
    case Kind::Bool:
      return ordered_json(v.as_bool());
    case Kind::Int:
      return ordered_json(v.as_int());
    case Kind::Float:
      return ordered_json(v.as_float());
    case Kind::String:
      return ordered_json(to_utf8(v));
    case Kind::List:
    case Kind::Tuple: {
      ordered_json array = ordered_json::array();
      for (const Value& item : v.as_list()) {
        auto j = to_json(item);
        if (!j) return j.error();
        array.push_back(std::move(*j));
      }
      return array;
    }
    case Kind::Dict: {
      ordered_json object = ordered_json::object();
      for (const auto& [key, value] : v.dict_entries()) {
        std::string k;
        if (key.is_string()) {
          k = to_utf8(key);
        } else if (key.is_bool()) {
          k = key.as_bool() ? "true" : "false";
        } else if (key.is_none()) {
          k = "null";
        } else if (key.is_int()) {
          k = to_repr(key);
        } else if (key.is_float()) {
          append_json_float(k, key.as_float());
        } else {
          return type_error("keys must be str, int, float, bool or None, not " +
                            std::string(type_name(key)));
        }
        auto j = to_json(value);
        if (!j) return j.error();
        object[k] = std::move(*j);
      }
      return object;
    }
    case Kind::Object: {
      Object* o = v.as_object();
      if (o->json_serializable()) return to_json(o->json_value());
      return not_serializable(v);
    }
    case Kind::Undefined:
      return not_serializable(v);
  }
  return not_serializable(v);
}

}  // namespace chatwire
