// The value of one hexadecimal digit, shared by the readers of escapes (Jinja's string
// literals, JSON's \u, a URL's %XX).
#pragma once

namespace chatwire::util {

// 0-15, or -1 when `c` is not a hexadecimal digit.
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace chatwire::util
