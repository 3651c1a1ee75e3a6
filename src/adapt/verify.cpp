#include "adapt/verify.hpp"

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace chatwire::adapt {

namespace {

using json = nlohmann::ordered_json;

std::string_view strip(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Where `piece` first occurs in `rendered` at or after `from`, verbatim or as a JSON string body
// (templates that write a message with tojson): its offset and the length of the form found.
struct Found {
  std::size_t at = std::string_view::npos, length = 0;
  explicit operator bool() const { return at != std::string_view::npos; }
};
Found find_piece(std::string_view piece, std::string_view rendered, std::size_t from = 0) {
  Found best;
  auto consider = [&](std::string_view form) {
    const std::size_t at = rendered.find(form, from);
    if (at != std::string_view::npos && at < best.at) best = {at, form.size()};
  };
  consider(piece);
  for (bool ascii : {false, true}) {
    JsonDumpOptions options;
    options.ensure_ascii = ascii;
    auto dumped = to_json_string(Value(piece), options);
    if (!dumped || dumped->size() < 2) continue;
    consider(std::string_view(dumped->data() + 1, dumped->size() - 2));
  }
  return best;
}

bool found_once(std::string_view piece, std::string_view rendered) {
  return static_cast<bool>(find_piece(piece, rendered));
}

// Where `text` occurs at or after `from`, when that is its only occurrence in `rendered` (an
// empty text, or one written twice, places nothing).
Found found_once_only(std::string_view text, std::string_view rendered, std::size_t from) {
  text = strip(text);
  if (text.empty()) return {};
  const Found at = find_piece(text, rendered, from);
  if (!at || find_piece(text, rendered, 0).at != at.at || find_piece(text, rendered, at.at + 1))
    return {};
  return at;
}

struct Piece {
  std::string path;
  std::string text;
};

void text_pieces(const json& content, const std::string& path, std::vector<Piece>& out) {
  if (content.is_string()) {
    out.push_back({path, content.get<std::string>()});
  } else if (content.is_array()) {
    for (std::size_t k = 0; k < content.size(); ++k)
      if (content[k].is_object() && content[k].value("type", "") == "text" &&
          content[k].contains("text") && content[k]["text"].is_string())
        out.push_back(
            {path + "[" + std::to_string(k) + "].text", content[k]["text"].get<std::string>()});
  }
}

void argument_pieces(const json& value, const std::string& path, std::vector<Piece>& out) {
  if (value.is_string()) {
    out.push_back({path, value.get<std::string>()});
  } else if (value.is_object()) {
    for (auto& [k, v] : value.items()) argument_pieces(v, path + "." + k, out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      argument_pieces(value[i], path + "[" + std::to_string(i) + "]", out);
  }
}

// A message's text as it is looked for in the render: its string content, or its last text
// part with text (the part the next message follows).
std::string message_text(const json& m) {
  std::vector<Piece> texts;
  if (m.is_object() && m.contains("content")) text_pieces(m["content"], "", texts);
  for (auto it = texts.rbegin(); it != texts.rend(); ++it)
    if (!strip(it->text).empty()) return std::move(it->text);
  return {};
}

}  // namespace

bool survives(std::string_view text, std::string_view rendered) {
  std::string_view t = strip(text);
  if (t.empty() || found_once(t, rendered)) return true;
  // Line by line: every non-empty line must be there.
  std::size_t start = 0;
  while (start <= t.size()) {
    std::size_t end = t.find('\n', start);
    if (end == std::string_view::npos) end = t.size();
    std::string_view line = strip(t.substr(start, end - start));
    if (!line.empty() && !found_once(line, rendered)) return false;
    start = end + 1;
  }
  return true;
}

Status verify_survivors(const json& request, std::string_view rendered,
                        bool check_tool_descriptions) {
  std::vector<Piece> pieces;
  std::vector<Piece> lost_calls;  // call pieces found only before the turn they answer
  const json& messages = request["messages"];
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    std::string path = "messages[" + std::to_string(i) + "]";
    if (m.contains("content")) text_pieces(m["content"], path + ".content", pieces);
    const std::size_t calls_from = pieces.size();
    if (m.contains("tool_calls") && m["tool_calls"].is_array())
      for (std::size_t j = 0; j < m["tool_calls"].size(); ++j) {
        const json& call = m["tool_calls"][j];
        if (!call.is_object() || !call.contains("function")) continue;
        const json& fn = call["function"];
        std::string cpath = path + ".tool_calls[" + std::to_string(j) + "].function";
        if (fn.contains("name") && fn["name"].is_string())
          pieces.push_back({cpath + ".name", fn["name"].get<std::string>()});
        if (fn.contains("arguments")) {
          json args = fn["arguments"];
          if (args.is_string()) {
            json parsed = json::parse(args.get<std::string>(), nullptr, false);
            if (!parsed.is_discarded()) args = std::move(parsed);
          }
          argument_pieces(args, cpath + ".arguments", pieces);
        }
      }
    // A call's name and argument values also occur in the tool definitions, the question and the
    // tool result (`get_weather`, "Paris"): found anywhere, they prove nothing. They must occur
    // after the message the calls follow and before the message after them, where each one's
    // text occurs once (a template that drops the calls of a turn with content, DeepSeek V3's,
    // would otherwise pass).
    if (i > 0 && pieces.size() > calls_from) {
      const Found at = found_once_only(message_text(messages[i - 1]), rendered, 0);
      if (at) {
        const std::size_t after = at.at + at.length;
        std::size_t until = rendered.size();
        if (i + 1 < messages.size())
          if (const Found next = found_once_only(message_text(messages[i + 1]), rendered, after))
            until = next.at;
        const std::string_view window = rendered.substr(0, until);
        for (std::size_t k = calls_from; k < pieces.size(); ++k) {
          std::string_view t = strip(pieces[k].text);
          if (!t.empty() && find_piece(t, rendered) && !find_piece(t, window, after))
            lost_calls.push_back(pieces[k]);
        }
      }
    }
  }
  if (check_tool_descriptions && request.contains("tools") && request["tools"].is_array())
    for (std::size_t k = 0; k < request["tools"].size(); ++k) {
      const json& tool = request["tools"][k];
      const json& fn = tool.contains("function") ? tool["function"] : tool;
      std::string path =
          "tools[" + std::to_string(k) + "]" + (tool.contains("function") ? ".function" : "");
      if (fn.is_object() && fn.contains("name") && fn["name"].is_string())
        pieces.push_back({path + ".name", fn["name"].get<std::string>()});
      if (fn.is_object() && fn.contains("description") && fn["description"].is_string())
        pieces.push_back({path + ".description", fn["description"].get<std::string>()});
    }
  std::vector<std::string> lost;
  for (const auto& piece : pieces)
    if (!survives(piece.text, rendered)) lost.push_back(piece.path);
  for (const auto& piece : lost_calls) lost.push_back(piece.path);
  if (lost.empty()) return Status{std::monostate{}};
  std::string message = "the template does not render this text even after adaptation";
  if (lost.size() > 1) {
    message += " (" + std::to_string(lost.size()) + " pieces lost:";
    for (const auto& l : lost) message += " " + l;
    message += ")";
  }
  return Error{"CannotRepresent", std::move(message), 0, 0, lost.front()};
}

}  // namespace chatwire::adapt
