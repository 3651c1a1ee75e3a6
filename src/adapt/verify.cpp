#include "adapt/verify.hpp"

#include <algorithm>
#include <cctype>
#include <map>
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
    // Once a form is found, another counts only if it starts before it: the search ends there
    // (a form not in the render would otherwise be looked for to the end, every time).
    const std::string_view where =
        best ? rendered.substr(0, std::min(rendered.size(), best.at + form.size())) : rendered;
    const std::size_t at = where.find(form, from);
    if (at != std::string_view::npos && at < best.at) best = {at, form.size()};
  };
  consider(piece);
  std::string last;
  for (bool ascii : {false, true}) {
    JsonDumpOptions options;
    options.ensure_ascii = ascii;
    auto dumped = to_json_string(Value(piece), options);
    if (!dumped || dumped->size() < 2) continue;
    std::string_view body(dumped->data() + 1, dumped->size() - 2);
    if (body == piece || body == last) continue;  // the same form again
    consider(body);
    last = body;
  }
  return best;
}

// The render searched for the request's pieces in the request's order. Templates write the
// messages in order, so a search starts where the last piece found ends and falls back to the
// whole render only when the piece is not there: linear in the render for a template that keeps
// the order (searching from the start for every piece made a 0.8 MB request of 20,000 short
// turns take 10 s; the answer, found or not, is the same).
class InOrder {
 public:
  explicit InOrder(std::string_view rendered) : rendered_(rendered) {}
  Found find(std::string_view piece) {
    if (Found at = find_piece(piece, rendered_, cursor_)) {
      cursor_ = at.at + at.length;
      return at;
    }
    return cursor_ == 0 ? Found{} : find_piece(piece, rendered_, 0);
  }
  std::size_t cursor() const { return cursor_; }

 private:
  std::string_view rendered_;
  std::size_t cursor_ = 0;
};

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

namespace {

bool survives_in_order(std::string_view text, InOrder& render) {
  std::string_view t = strip(text);
  if (t.empty() || render.find(t)) return true;
  // Line by line: every non-empty line must be there.
  std::size_t start = 0;
  while (start <= t.size()) {
    std::size_t end = t.find('\n', start);
    if (end == std::string_view::npos) end = t.size();
    std::string_view line = strip(t.substr(start, end - start));
    if (!line.empty() && !render.find(line)) return false;
    start = end + 1;
  }
  return true;
}

// How many times `name` stands in `window` as a name (not inside a longer identifier).
std::size_t name_occurrences(std::string_view name, std::string_view window) {
  // OpenAI's function names hold letters, digits, '_' and '-': `roll` inside `roll-2` is not
  // `roll` (a '.' before a name is a namespace: `functions.roll`).
  auto ident = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  };
  std::size_t n = 0;
  for (std::size_t at = window.find(name); at != std::string_view::npos;
       at = window.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    n += (at == 0 || !ident(window[at - 1])) && (end == window.size() || !ident(window[end]));
  }
  return n;
}

}  // namespace

bool survives(std::string_view text, std::string_view rendered) {
  InOrder render(rendered);
  return survives_in_order(text, render);
}

namespace {

// A turn's calls must stand between the message before them and the message after them: a
// call's name and argument values also occur in the tool definitions, the question and the tool
// result (`get_weather`, "Paris"), so found anywhere they prove nothing (a template that drops the
// calls of a turn with content, DeepSeek V3's, would pass). Each call's name must stand there as
// often as the turn calls it, and its integer values too: gpt-oss's template writes only a turn's
// first call, and the second one's name is the first one's (`roll` twice, `{"sides": 6}` and
// `{"sides": 20}`). The window is placed where the message before occurs once.
// They are counted in that window without the turn's own content, which may name them ("a d20
// with roll").
struct TurnCalls {
  std::vector<Piece> pieces;   // names and string argument values
  std::vector<Piece> numbers;  // integer argument values, as JSON writes them
  std::map<std::string, std::vector<std::string>> names;  // each name's calls (their paths)
  std::string content;  // the turn's own text (message_text), stripped
};

void number_pieces(const json& value, const std::string& path, std::vector<Piece>& out) {
  if (value.is_number_integer()) {
    out.push_back({path, value.dump()});
  } else if (value.is_object()) {
    for (auto& [k, v] : value.items()) number_pieces(v, path + "." + k, out);
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i)
      number_pieces(value[i], path + "[" + std::to_string(i) + "]", out);
  }
}

// The render from `after` to `until` without the turn's own content (its first occurrence).
std::string calls_window(std::string_view rendered, std::size_t after, std::size_t until,
                         const std::string& content) {
  std::string out(rendered.substr(after, until - after));
  if (const auto at = content.empty() ? std::string::npos : out.find(content);
      at != std::string::npos)
    out.erase(at, content.size());
  return out;
}

// The pieces a turn's calls miss in `window` (calls_window), by path.
std::vector<std::string> missing_in(const TurnCalls& turn, std::string_view window,
                                    bool anywhere_too, std::string_view rendered) {
  std::vector<std::string> out;
  for (const auto& piece : turn.pieces) {
    std::string_view t = strip(piece.text);
    if (t.empty() || find_piece(t, window)) continue;
    // Not found anywhere, it is lost anyway (the survivors' check names it).
    if (!anywhere_too || find_piece(t, rendered)) out.push_back(piece.path);
  }
  for (const auto& piece : turn.numbers)
    if (name_occurrences(piece.text, window) == 0) out.push_back(piece.path);
  // The first call of a name beyond as many as stand there is the one lost.
  for (const auto& [name, calls] : turn.names)
    if (const std::size_t written = name_occurrences(name, window); written < calls.size())
      out.push_back(calls[written]);
  return out;
}

}  // namespace

Status verify_survivors(const json& request, std::string_view rendered,
                        bool check_tool_descriptions) {
  // A refusal is certain after this many lost pieces; looking for more costs whole-render
  // searches each (one per piece not found).
  constexpr std::size_t kLostNamed = 16;
  const json& messages = request["messages"];
  std::vector<Piece> pieces;
  std::vector<TurnCalls> turns(messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const json& m = messages[i];
    std::string path = "messages[" + std::to_string(i) + "]";
    if (m.contains("content")) text_pieces(m["content"], path + ".content", pieces);
    TurnCalls& turn = turns[i];
    turn.content = std::string(strip(message_text(m)));
    if (m.contains("tool_calls") && m["tool_calls"].is_array())
      for (std::size_t j = 0; j < m["tool_calls"].size(); ++j) {
        const json& call = m["tool_calls"][j];
        if (!call.is_object() || !call.contains("function")) continue;
        const json& fn = call["function"];
        std::string cpath = path + ".tool_calls[" + std::to_string(j) + "].function";
        if (fn.contains("name") && fn["name"].is_string()) {
          const std::string& name = fn["name"].get_ref<const std::string&>();
          turn.pieces.push_back({cpath + ".name", name});
          if (!strip(name).empty()) turn.names[std::string(strip(name))].push_back(cpath + ".name");
        }
        if (fn.contains("arguments")) {
          json args = fn["arguments"];
          if (args.is_string()) {
            json parsed = json::parse(args.get<std::string>(), nullptr, false);
            if (!parsed.is_discarded()) args = std::move(parsed);
          }
          argument_pieces(args, cpath + ".arguments", turn.pieces);
          number_pieces(args, cpath + ".arguments", turn.numbers);
        }
      }
    pieces.insert(pieces.end(), turn.pieces.begin(), turn.pieces.end());
  }
  // Where each message's text stands, found in order (the fast placement of call windows); a
  // turn's call pieces are found too, so that the next message is looked for after them (a
  // tool result repeating a call's argument would be found inside the call).
  std::vector<Found> placed(messages.size());
  {
    InOrder order(rendered);
    for (std::size_t i = 0; i < messages.size(); ++i) {
      if (!turns[i].content.empty()) placed[i] = order.find(turns[i].content);
      for (const auto& piece : turns[i].pieces)
        if (std::string_view t = strip(piece.text); !t.empty()) order.find(t);
    }
  }
  std::vector<std::string> lost_calls;  // call pieces not where their turn is
  for (std::size_t i = 1; i < messages.size(); ++i) {
    const TurnCalls& turn = turns[i];
    if (turn.pieces.empty() && turn.names.empty()) continue;
    if (lost_calls.size() >= kLostNamed) break;
    // First the window between the messages around the turn as found in order: a turn whose
    // calls all stand there stands in the rule's window too (which holds it). Only when
    // something is missing is the window placed as the rule says, with whole-render searches.
    if (const Found before = placed[i - 1]) {
      const std::size_t after = before.at + before.length;
      std::size_t until = rendered.size();
      if (i + 1 < messages.size() && placed[i + 1]) until = placed[i + 1].at;
      if (until >= after &&
          missing_in(turn, calls_window(rendered, after, until, turn.content), false, rendered)
              .empty())
        continue;
    }
    const Found at = found_once_only(message_text(messages[i - 1]), rendered, 0);
    if (!at) continue;
    const std::size_t after = at.at + at.length;
    std::size_t until = rendered.size();
    if (i + 1 < messages.size())
      if (const Found next = found_once_only(message_text(messages[i + 1]), rendered, after))
        until = next.at;
    for (auto& lost :
         missing_in(turn, calls_window(rendered, after, until, turn.content), true, rendered))
      lost_calls.push_back(std::move(lost));
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
  InOrder render(rendered);
  for (const auto& piece : pieces) {
    if (lost.size() >= kLostNamed) break;
    if (!survives_in_order(piece.text, render)) lost.push_back(piece.path);
  }
  for (auto& piece : lost_calls) lost.push_back(std::move(piece));
  if (lost.empty()) return Status{std::monostate{}};
  std::string message = "the template does not render this text even after adaptation";
  if (lost.size() > 1) {
    message += " (" + std::to_string(lost.size()) + (lost.size() >= kLostNamed ? " or more" : "") +
               " pieces lost:";
    for (const auto& l : lost) message += " " + l;
    message += ")";
  }
  return Error{"CannotRepresent", std::move(message), 0, 0, lost.front()};
}

}  // namespace chatwire::adapt
