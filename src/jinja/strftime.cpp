// Formatting by hand because glibc's strftime goes through the locale machinery for every
// directive, and templates call strftime_now on every render.
// Each expansion below is what glibc prints in the C locale; tests/jinja/strftime_test.cpp
// compares them with std::strftime over many dates.
#include "jinja/strftime.hpp"

#include <cstdio>
#include <cstring>

namespace chatwire::jinja {

namespace {

constexpr std::string_view kDayNames[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                          "Thursday", "Friday", "Saturday"};
constexpr std::string_view kMonthNames[] = {"January",   "February", "March",    "April",
                                            "May",       "June",     "July",     "August",
                                            "September", "October",  "November", "December"};

// v zero-padded to `width` digits (a space pad, for %e, replaces leading zeros but keeps the
// last digit); 0 for values this does not cover: glibc pads negative and wider numbers its
// own way, so those stay with the C library.
std::size_t number(int v, int width, char* buf, char pad = '0') {
  static constexpr int kLimit[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  if (v < 0 || v >= kLimit[width]) return 0;
  for (int i = width - 1; i >= 0; --i, v /= 10) buf[i] = static_cast<char>('0' + v % 10);
  if (pad != '0')
    for (int i = 0; i < width - 1 && buf[i] == '0'; ++i) buf[i] = pad;
  return static_cast<std::size_t>(width);
}

std::size_t text(std::string_view s, char* buf) {
  s.copy(buf, s.size());
  return s.size();
}

// Four-digit years only: below 1000 glibc does not pad %Y (nor %F, %c), above 9999 it widens.
bool four_digit_year(const std::tm& tm) {
  return tm.tm_year >= 1000 - 1900 && tm.tm_year <= 9999 - 1900;
}

// A composite conversion: the parts in order, '%x' a conversion and anything else itself;
// 0 if any part is refused.
std::size_t composite(std::string_view parts, const std::tm& tm, char* buf) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] != '%') {
      buf[n++] = parts[i];
      continue;
    }
    const std::size_t k = c_conversion(parts[++i], tm, buf + n);
    if (k == 0) return 0;
    n += k;
  }
  return n;
}

}  // namespace

std::size_t c_conversion(char conv, const std::tm& tm, char* buf) {
  const bool day_ok = tm.tm_wday >= 0 && tm.tm_wday <= 6;
  const bool month_ok = tm.tm_mon >= 0 && tm.tm_mon <= 11;
  const bool hour_ok = tm.tm_hour >= 0 && tm.tm_hour <= 23;
  switch (conv) {
    case 'Y':
      return four_digit_year(tm) ? number(tm.tm_year + 1900, 4, buf) : 0;
    case 'C':
      return four_digit_year(tm) ? number((tm.tm_year + 1900) / 100, 2, buf) : 0;
    case 'y':
      return four_digit_year(tm) ? number((tm.tm_year + 1900) % 100, 2, buf) : 0;
    case 'm':
      return number(tm.tm_mon + 1, 2, buf);
    case 'd':
      return number(tm.tm_mday, 2, buf);
    case 'e':
      return number(tm.tm_mday, 2, buf, ' ');
    case 'j':
      return number(tm.tm_yday + 1, 3, buf);
    case 'H':
      return number(tm.tm_hour, 2, buf);
    case 'I':
      return hour_ok ? number(tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12, 2, buf) : 0;
    case 'M':
      return number(tm.tm_min, 2, buf);
    case 'S':
      return number(tm.tm_sec, 2, buf);
    case 'p':
      return hour_ok ? text(tm.tm_hour > 11 ? "PM" : "AM", buf) : 0;
    case 'A':
      return day_ok ? text(kDayNames[tm.tm_wday], buf) : 0;
    case 'a':
      return day_ok ? text(kDayNames[tm.tm_wday].substr(0, 3), buf) : 0;
    case 'B':
      return month_ok ? text(kMonthNames[tm.tm_mon], buf) : 0;
    case 'b':
    case 'h':
      return month_ok ? text(kMonthNames[tm.tm_mon].substr(0, 3), buf) : 0;
    case 'u':
      return day_ok ? number(tm.tm_wday == 0 ? 7 : tm.tm_wday, 1, buf) : 0;
    case 'w':
      return number(tm.tm_wday, 1, buf);
    case '%':
      return text("%", buf);
    case 'n':
      return text("\n", buf);
    case 't':
      return text("\t", buf);
    // The C locale's date and time formats, and glibc's fixed composites.
    case 'F':
      return composite("%Y-%m-%d", tm, buf);
    case 'D':
    case 'x':
      return composite("%m/%d/%y", tm, buf);
    case 'T':
    case 'X':
      return composite("%H:%M:%S", tm, buf);
    case 'R':
      return composite("%H:%M", tm, buf);
    case 'r':
      return composite("%I:%M:%S %p", tm, buf);
    case 'c':
      return composite("%a %b %e %H:%M:%S %Y", tm, buf);
    default:
      return 0;
  }
}

std::string format_time(std::string_view fmt, const std::tm& tm, long micros) {
  // The result is built in a stack buffer and copied out once: typical results
  // ("2026-08-19", "19 August 2026") then cost no allocation beyond the string's inline
  // buffer, and no per-piece std::string appends. Longer results spill into `spill`.
  char buf[256];
  std::size_t n = 0;
  std::string spill;
  auto room = [&](std::size_t need) {
    if (n + need > sizeof buf) {
      spill.append(buf, n);
      n = 0;
    }
  };
  std::size_t i = 0;
  while (i < fmt.size()) {
    const char c = fmt[i];
    // Literal text, and a trailing lone '%' (Python passes it through).
    if (c != '%' || i + 1 >= fmt.size()) {
      room(1);
      buf[n++] = c;
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < fmt.size() && (fmt[j] == '-' || fmt[j] == '_' || fmt[j] == '0' || fmt[j] == '^' ||
                              fmt[j] == '#' || fmt[j] == 'E' || fmt[j] == 'O'))
      ++j;
    if (j >= fmt.size()) {  // flags running off the end: literal text
      spill.append(buf, n);
      n = 0;
      spill.append(fmt.substr(i));
      break;
    }
    const char conv = fmt[j];
    if (conv == 'z' || conv == 'Z') {
      // datetime.now() and fromisoformat() without an offset are naive: Python prints
      // nothing for the zone directives (the C library would print "+0000" / "GMT").
    } else if (conv == 'f') {
      // Python handles %f itself.
      room(24);
      std::size_t k =
          micros >= 0 && micros <= 999999 ? number(static_cast<int>(micros), 6, buf + n) : 0;
      if (k == 0) k = static_cast<std::size_t>(std::snprintf(buf + n, 24, "%06ld", micros));
      n += k;
    } else {
      room(kMaxCConversion);
      const std::size_t k = j == i + 1 ? c_conversion(conv, tm, buf + n) : 0;
      if (k != 0) {
        n += k;
      } else {
        // Flags, modifiers and the other conversions go to the C library, one directive at
        // a time so that an empty expansion is not mistaken for an error.
        const std::string directive(fmt.substr(i, j - i + 1));
        char out[256];
        const std::size_t m = std::strftime(out, sizeof out, directive.c_str(), &tm);
        room(m);
        std::memcpy(buf + n, out, m);
        n += m;
      }
    }
    i = j + 1;
  }
  if (spill.empty()) return std::string(buf, n);
  spill.append(buf, n);
  return spill;
}

}  // namespace chatwire::jinja
