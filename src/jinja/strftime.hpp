// strftime_now's formatting: Python's datetime.strftime for a naive datetime, which hands
// most directives to the C library's strftime (the oracle runs in the C locale).
#pragma once

#include <cstddef>
#include <ctime>
#include <string>
#include <string_view>

namespace chatwire::jinja {

// Writes what glibc's strftime prints for "%<conv>" (no flags, no E/O modifier) in the C
// locale to buf (room for kMaxCConversion bytes) and returns its length; returns 0 for a
// conversion or a field value it does not format by hand (the caller then asks
// std::strftime). No conversion handled here expands to nothing.
inline constexpr std::size_t kMaxCConversion = 32;
std::size_t c_conversion(char conv, const std::tm& tm, char* buf);

// datetime.strftime(fmt) for the naive time tm + micros: %f is the microseconds, %z and %Z
// print nothing, the rest is the C library's strftime (by hand where c_conversion
// knows the conversion).
std::string format_time(std::string_view fmt, const std::tm& tm, long micros);

}  // namespace chatwire::jinja
