// Writes an nlohmann JSON value exactly as dump(-1, ' ', false, error_handler_t::replace) does,
// straight into the output writer, with strings escaped 16 bytes at a time: `chatwire parse`
// prints messages of many megabytes, and nlohmann's serializer decodes and checks them one
// byte at a time. Strings that are not valid UTF-8 (model output may hold any bytes) are left
// to nlohmann, whose replacement of bad bytes by U+FFFD this does not reimplement.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "chatwire/parse_json.hpp"
#include "io.hpp"
#include "util/json_escape.hpp"
#include "util/utf8.hpp"

namespace chatwire::cli {

namespace json_writer_detail {

// A valid UTF-8 string as nlohmann writes it without ensure_ascii, escaped straight into the
// writer's buffer a piece at a time. Each piece is as long as the buffer's room holds at the
// worst case (6 bytes a byte), so pieces shrink as the buffer fills, and the buffer is written
// out only when less than a sixteenth of it is left: it goes out nearly full. (A fixed piece of
// a sixth of the buffer wrote it out for every piece, about a fifth full: 1,466 write calls for
// the 18 MB message of a 16 MB hermes output instead of 293.)
inline void write_valid_string(io::Writer& out, std::string_view s) {
  out.put('"');
  if (out.capacity() < 256) {  // a tiny buffer: through a string
    std::string escaped(s.size() * 6 + 16, '\0');
    escaped.resize(util::escape_json_into(escaped.data(), s));
    out.write(escaped);
    out.put('"');
    return;
  }
  const std::size_t min_room = std::max<std::size_t>(out.capacity() / 16, 64);
  for (std::size_t at = 0; at < s.size();) {
    if (out.room() < min_room) out.reserve(out.capacity());  // writes the buffer out
    const std::size_t piece = std::min(s.size() - at, (out.room() - 16) / 6);
    out.commit(util::escape_json_into(out.reserve(piece * 6 + 16), s.substr(at, piece)));
    at += piece;
  }
  out.put('"');
}

}  // namespace json_writer_detail

// One string as a JSON string, as nlohmann writes it.
inline void write_json_string(io::Writer& out, std::string_view s) {
  if (util::utf8::first_invalid(s) == s.size())
    json_writer_detail::write_valid_string(out, s);
  else
    out.write(nlohmann::json(std::string(s))
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

template <typename BasicJson>
void write_json(io::Writer& out, const BasicJson& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      out.put('{');
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) out.put(',');
        first = false;
        write_json_string(out, it.key());
        out.put(':');
        write_json(out, it.value());
      }
      out.put('}');
      return;
    }
    case nlohmann::json::value_t::array: {
      out.put('[');
      bool first = true;
      for (const auto& item : j) {
        if (!first) out.put(',');
        first = false;
        write_json(out, item);
      }
      out.put(']');
      return;
    }
    case nlohmann::json::value_t::string:
      write_json_string(out, j.template get_ref<const std::string&>());
      return;
    default:
      break;
  }
  out.write(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// parse::message_to_json(message) written without building it: the JSON value would copy
// every string of a message of many megabytes once more.
inline void write_message(io::Writer& out, const parse::Message& message) {
  out.write("{\"role\":\"assistant\",\"content\":");
  if (message.content.empty())
    out.write("null");
  else
    write_json_string(out, message.content);
  if (!message.reasoning_content.empty()) {
    out.write(",\"reasoning_content\":");
    write_json_string(out, message.reasoning_content);
  }
  if (!message.tool_calls.empty()) {
    out.write(",\"tool_calls\":[");
    for (std::size_t i = 0; i < message.tool_calls.size(); ++i) {
      const auto& call = message.tool_calls[i];
      out.write(i ? ",{\"id\":" : "{\"id\":");
      write_json_string(out, call.id);
      out.write(",\"type\":\"function\",\"function\":{\"name\":");
      write_json_string(out, call.name);
      out.write(",\"arguments\":");
      write_json_string(out, call.arguments);
      out.write("}}");
    }
    out.put(']');
  }
  out.put('}');
}

}  // namespace chatwire::cli
