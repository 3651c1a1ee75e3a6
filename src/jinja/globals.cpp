// The global functions of the environment transformers builds: Jinja2's defaults
// (range with the sandbox cap, dict, namespace, cycler, joiner, lipsum) plus
// transformers' raise_exception and strftime_now. One table, name -> function.
#include <ctime>
#include <string>

#include "jinja/args.hpp"
#include "jinja/objects.hpp"
#include "jinja/strftime.hpp"

namespace chatwire::jinja {

namespace {

std::int64_t as_index(const Value& v) {
  if (v.is_int() || v.is_bool()) return v.as_integer();
  raise("TypeError",
        "'" + std::string(type_name(v)) + "' object cannot be interpreted as an integer");
}

Result<Value> global_range(RenderState& state, const CallArgs& args) {
  if (!args.keyword.empty()) raise("TypeError", "range() takes no keyword arguments");
  std::size_t n = args.positional.size();
  if (n == 0) raise("TypeError", "range expected at least 1 argument, got 0");
  if (n > 3) raise("TypeError", "range expected at most 3 arguments, got " + std::to_string(n));
  std::int64_t start = 0, stop = 0, step = 1;
  if (n == 1) {
    stop = as_index(args.positional[0]);
  } else {
    start = as_index(args.positional[0]);
    stop = as_index(args.positional[1]);
    if (n == 3) step = as_index(args.positional[2]);
  }
  if (step == 0) raise("ValueError", "range() arg 3 must not be zero");
  __int128 count = 0;
  if (step > 0 && stop > start) count = ((__int128)stop - start + step - 1) / step;
  if (step < 0 && stop < start) count = ((__int128)start - stop - step - 1) / -step;
  if (count > state.lim.max_range)
    raise("OverflowError", "Range too big. The sandbox blocks ranges larger than MAX_RANGE (" +
                               std::to_string(state.lim.max_range) + ").");
  return Value::make_object<RangeObject>(start, stop, step, static_cast<std::size_t>(count));
}

// dict(mapping_or_pairs?, **kwargs)
std::vector<std::pair<Value, Value>> dict_entries(const CallArgs& args, const char* fn) {
  std::vector<std::pair<Value, Value>> entries;
  if (args.positional.size() > 1)
    raise("TypeError", std::string(fn) + " expected at most 1 argument, got " +
                           std::to_string(args.positional.size()));
  if (args.positional.size() == 1) {
    const Value& src = args.positional[0];
    if (src.is_dict()) {
      for (const auto& kv : src.dict_entries()) entries.push_back(kv);
    } else {
      Value items = check(iterate(src));
      std::size_t i = 0;
      for (const auto& item : items.as_list()) {
        Value pair = check(iterate(item));
        if (pair.as_list().size() != 2)
          raise("ValueError", "dictionary update sequence element #" + std::to_string(i) +
                                  " has length " + std::to_string(pair.as_list().size()) +
                                  "; 2 is required");
        entries.emplace_back(pair.as_list()[0], pair.as_list()[1]);
        ++i;
      }
    }
  }
  for (const auto& kw : args.keyword) entries.emplace_back(Value(kw.name), kw.value);
  return entries;
}

Result<Value> global_dict(RenderState&, const CallArgs& args) {
  return Value::dict(dict_entries(args, "dict"));
}

Result<Value> global_namespace(RenderState&, const CallArgs& args) {
  auto* ns = new NamespaceObject;
  Value holder = Value::adopt(ns);
  if (args.positional.empty()) {  // namespace(a=1, b=[]): keywords in order, no dict built
    for (const auto& kw : args.keyword) ns->set_attr(kw.name, kw.value);
    return holder;
  }
  Value d = check(Value::dict(dict_entries(args, "dict")));
  for (const auto& [k, v] : d.dict_entries())
    ns->set_attr(k.is_string() ? k.as_string() : to_str(k), v);
  return holder;
}

Result<Value> global_cycler(RenderState&, const CallArgs& args) {
  auto* c = new CyclerObject;
  Value holder = Value::adopt(c);
  c->items.assign(args.positional.begin(), args.positional.end());
  if (c->items.empty()) raise("RuntimeError", "at least one item has to be provided");
  return holder;
}

Result<Value> global_joiner(RenderState&, const CallArgs& args) {
  auto b = bind_args<1>("Joiner", args, {"sep"});
  auto* j = new JoinerObject;
  Value holder = Value::adopt(j);
  j->sep = b.get(0, Value(", "));
  return holder;
}

// Deterministic stand-in for Jinja2's random lorem ipsum, with the same shape
// (n paragraphs, html wrapping) and the output limits applied.
Result<Value> global_lipsum(RenderState& state, const CallArgs& args) {
  auto b = bind_args<4>("generate_lorem_ipsum", args, {"n", "html", "min", "max"});
  std::int64_t n = b.has(0) ? as_index(*b.slot[0]) : 5;
  bool html = b.has(1) ? truthy(*b.slot[1]) : true;
  std::int64_t max_words = b.has(3) ? as_index(*b.slot[3]) : 100;
  std::int64_t min_words = b.has(2) ? as_index(*b.slot[2]) : 20;
  if (max_words < min_words) max_words = min_words;
  static constexpr std::string_view kWords[] = {"lorem", "ipsum",       "dolor",      "sit",
                                                "amet",  "consectetur", "adipiscing", "elit"};
  std::string out;
  for (std::int64_t p = 0; p < n; ++p) {
    state.step();
    std::string para;
    for (std::int64_t w = 0; w < min_words; ++w) {
      if (w) para += ' ';
      std::string_view word = kWords[static_cast<std::size_t>(w) % 8];
      if (w == 0) {
        para += static_cast<char>(word[0] - 32);
        para += word.substr(1);
      } else {
        para += word;
      }
      if (para.size() > state.lim.max_string_bytes)
        raise(limit_error("max_string_bytes", state.lim.max_string_bytes));
    }
    para += '.';
    if (p) out += html ? "\n" : "\n\n";
    std::string piece = html ? "<p>" + para + "</p>" : para;
    check(append_checked(out, piece, state.limits));
  }
  return Value(std::move(out));
}

Result<Value> global_raise_exception(RenderState&, const CallArgs& args) {
  if (args.positional.empty() && args.keyword.empty())
    raise("TypeError", "raise_exception() missing 1 required positional argument: 'message'");
  const Value& message = args.positional.empty() ? args.keyword[0].value : args.positional[0];
  raise("TemplateError", to_str(message));
}

// Parses "YYYY-MM-DD[?HH:MM[:SS[.ffffff]]]" (? = any one character; text after that is ignored)
// into a broken-down UTC time with weekday and day of the year. Out-of-range fields are refused
// (Python's fromisoformat raises ValueError for them). By hand: this runs on every render of
// templates that print the date, and sscanf + timegm cost more than the rest of such a render.
bool parse_iso(const std::string& s, std::tm& tm, long& micros) {
  std::size_t pos = 0;
  auto digits = [&](int count, int& out) {
    out = 0;
    for (int i = 0; i < count; ++i, ++pos) {
      if (pos >= s.size() || s[pos] < '0' || s[pos] > '9') return false;
      out = out * 10 + (s[pos] - '0');
    }
    return true;
  };
  auto literal = [&](char c) {
    if (pos >= s.size() || s[pos] != c) return false;
    ++pos;
    return true;
  };
  int y, mo, d, h = 0, mi = 0, sec = 0;
  micros = 0;
  if (!digits(4, y) || !literal('-') || !digits(2, mo) || !literal('-') || !digits(2, d))
    return false;
  if (pos < s.size()) {
    // Python 3.11+ takes any single character between date and time ('T', ' ', ...).
    const unsigned char lead = static_cast<unsigned char>(s[pos]);
    pos += lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    if (!digits(2, h) || !literal(':') || !digits(2, mi)) return false;
    if (literal(':')) {
      if (!digits(2, sec)) return false;
      if (literal('.')) {
        long scale = 100000;
        for (; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, scale /= 10)
          if (scale > 0) micros += (s[pos] - '0') * scale;
      }
    }
  }
  auto leap = [](int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; };
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59) return false;
  if (d > kDays[mo - 1] + (mo == 2 && leap(y) ? 1 : 0)) return false;
  // Days before each month in a common year.
  static constexpr int kBefore[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  const int yday = kBefore[mo - 1] + (mo > 2 && leap(y) ? 1 : 0) + d - 1;
  // Days since 1970-01-01 (civil calendar), for the weekday; 1970-01-01 was a Thursday.
  const long yy = y - (mo <= 2 ? 1 : 0);
  const long era = (yy >= 0 ? yy : yy - 399) / 400;
  const long yoe = yy - era * 400;
  const long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const long days = era * 146097 + doe - 719468;
  tm = {};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  tm.tm_yday = yday;
  tm.tm_wday = static_cast<int>(((days % 7) + 11) % 7);  // 0 = Sunday
  tm.tm_isdst = 0;
  return true;
}

Result<Value> global_strftime_now(RenderState& state, const CallArgs& args) {
  if (args.positional.empty())
    raise("TypeError", "strftime_now() missing 1 required positional argument: 'format'");
  const Value& fmt_value = args.positional[0];
  if (!fmt_value.is_string())
    raise("TypeError",
          "strftime() argument 1 must be str, not " + std::string(type_name(fmt_value)));
  std::tm tm{};
  long micros = 0;
  if (!state.options.now.empty()) {
    // The frozen clock is parsed once per render (templates call strftime_now more
    // than once, and the parse costs more than the formatting).
    if (!state.now_parsed) {
      if (!parse_iso(state.options.now, state.now_tm, state.now_micros))
        raise("ValueError", "Invalid isoformat string: '" + state.options.now + "'");
      state.now_parsed = true;
    }
    tm = state.now_tm;
    micros = state.now_micros;
  } else {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    micros = ts.tv_nsec / 1000;
  }
  return Value(format_time(fmt_value.as_string(), tm, micros));
}

struct GlobalEntry {
  std::string_view name;
  BuiltinFn fn;
};

constexpr GlobalEntry kGlobals[] = {
    {"range", global_range},
    {"dict", global_dict},
    {"namespace", global_namespace},
    {"cycler", global_cycler},
    {"joiner", global_joiner},
    {"lipsum", global_lipsum},
    {"raise_exception", global_raise_exception},
    {"strftime_now", global_strftime_now},
};

}  // namespace

BuiltinFn find_global(std::string_view name) {
  for (const auto& g : kGlobals)
    if (g.name == name) return g.fn;
  return nullptr;
}

}  // namespace chatwire::jinja
