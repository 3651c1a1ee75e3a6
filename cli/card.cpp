// The capability card: the probe profile, the readback parser and one rendered example per
// row, as JSON and Markdown. Nothing here decides anything from a name: every verdict is read
// from the profile or from a render.
#include "card.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chatwire/chat.hpp"
#include "chatwire/jinja.hpp"
#include "chatwire/probe_json.hpp"
#include "chatwire/readback_json.hpp"
#include "chatwire/value_json.hpp"

namespace chatwire::cli {

namespace {

using json = nlohmann::ordered_json;

constexpr int kCardVersion = 1;

// The template(s) a card renders with: the one transformers picks with tools, and without.
struct Target {
  std::string name;
  std::shared_ptr<const jinja::Template> with_tools, without_tools;
  Value special_tokens;
};

Result<Target> load_target(const std::filesystem::path& path, bool model) {
  Target t;
  t.name = path.filename().string();
  if (t.name.empty()) t.name = path.parent_path().filename().string();
  if (model) {
    auto m = chat::Model::load(path);
    if (!m) return m.error();
    auto with = m->select(std::nullopt, /*tools_given=*/true);
    if (!with) return with.error();
    auto without = m->select(std::nullopt, /*tools_given=*/false);
    t.with_tools = *with;
    t.without_tools = without ? *without : *with;
    t.special_tokens = m->special_tokens();
    return t;
  }
  auto source = chat::read_text_file(path);
  if (!source) return source.error();
  auto tmpl = jinja::Template::compile(*source);
  if (!tmpl) return tmpl.error();
  t.with_tools = t.without_tools = std::make_shared<const jinja::Template>(std::move(*tmpl));
  t.special_tokens = Value::dict_unchecked(
      {{Value("bos_token"), Value("<s>")}, {Value("eos_token"), Value("</s>")}});
  return t;
}

json message(std::string_view role, std::string_view text, bool parts) {
  json content = std::string(text);
  if (parts) content = json::array({json{{"type", "text"}, {"text", text}}});
  return json{{"role", role}, {"content", std::move(content)}};
}

std::string convention(const probe::Profile& p, std::string_view axis, std::string_view fallback) {
  for (const auto& [a, v] : p.baseline.conventions)
    if (a == axis) return v;
  return std::string(fallback);
}

// Renders one example with the model's template, as transformers does (the tool_use template
// when tools are given).
json render_example(const Target& t, json chat) {
  chat::ChatRequest request;
  request.messages = from_json(chat["messages"]);
  if (chat.contains("tools")) request.tools = from_json(chat["tools"]);
  if (chat.contains("documents")) request.documents = from_json(chat["documents"]);
  request.add_generation_prompt = chat.value("add_generation_prompt", false);
  request.continue_final_message = chat.value("continue_final_message", false);
  chat::RenderOptions options;
  options.validate = false;
  options.now = probe::Options{}.now;
  const jinja::Template& tmpl = request.tools.is_none() ? *t.without_tools : *t.with_tools;
  auto result = chat::render(tmpl, request, t.special_tokens, options);
  json example = std::move(chat);
  if (result) {
    example["rendered"] = result->text;
  } else {
    example["rendered"] = nullptr;
    example["error"] = result.error().type + ": " + result.error().message;
  }
  return example;
}

struct Row {
  std::string row, verdict;
  bool ok = true;
  json measured;
  std::optional<json> example;  // a chat request; rendered when the card is built
};

// Appends `item` to a `sep`-separated list.
void add(std::string& list, std::string_view sep, std::string_view item) {
  if (!list.empty()) list += sep;
  list += item;
}

std::string yes_no(bool b) {
  return b ? "yes" : "no";
}

// What a row builder reads: the profile (typed and as JSON) and the content shape that renders.
struct Input {
  const probe::Profile& p;
  const json& profile;
  bool parts;  // the baseline sends content as text parts

  json user(std::string_view text) const { return message("user", text, parts); }
};

json reply_request(json messages) {
  return json{{"messages", std::move(messages)}, {"add_generation_prompt", true}};
}

Row turn_frame(const Input& in) {
  std::string verdict = "family " + in.p.frame.family;
  if (!in.p.frame.error.empty())
    verdict += " (a plain conversation fails: " + in.p.frame.error + ")";
  return {{},
          verdict,
          in.p.frame.error.empty(),
          in.profile["frame"],
          reply_request(json::array(
              {message("system", "You are a helpful assistant.", in.parts), in.user("Hello!"),
               message("assistant", "Hi! How can I help?", false), in.user("What is 2 + 2?")}))};
}

Row system_role(const Input& in) {
  return {{},
          in.p.system.supported ? "supported" : "not supported: " + in.p.system.error,
          in.p.system.supported,
          in.profile["system"],
          reply_request(json::array({message("system", "", in.parts), in.user("Hello!")}))};
}

Row consecutive_roles(const Input& in) {
  return {{},
          in.p.alternation.required ? "refused (strict alternation): " + in.p.alternation.error
                                    : "two user turns in a row render",
          !in.p.alternation.required,
          in.profile["alternation"],
          reply_request(json::array({in.user("Hello!"), in.user("What is 2 + 2?")}))};
}

// Its verdict is the render's (see capability_card).
Row long_conversation(const Input& in) {
  json messages = json::array({message("system", "You are a helpful assistant.", in.parts)});
  for (int turn = 1; turn <= 6; ++turn) {
    messages.push_back(in.user("Question " + std::to_string(turn) + "?"));
    messages.push_back(message("assistant", "Answer " + std::to_string(turn) + ".", false));
  }
  messages.push_back(in.user("One more question?"));
  return {{}, "", true, json::object(), reply_request(std::move(messages))};
}

Row prefill(const Input& in) {
  const probe::Prefill& f = in.p.prefill;
  std::string verdict = !f.supported ? "not supported" + (f.error ? ": " + *f.error : "")
                        : f.matches_generation_prompt
                            ? "supported; continues where a generated reply starts"
                            : "supported; the template writes something else before the "
                              "continued text";
  return {{},
          verdict,
          f.supported,
          in.profile["prefill"],
          json{{"messages", json::array({in.user("Write a haiku about the sea."),
                                         message("assistant", "Waves fold", false)})},
               {"continue_final_message", true}}};
}

// A tool round trip with the input conventions the baseline found.
Row tools(const Input& in) {
  const probe::Profile& p = in.p;
  json function = {{"name", "get_weather"},
                   {"description", "Get the current weather for a city."},
                   {"parameters",
                    {{"type", "object"},
                     {"properties", {{"city", {{"type", "string"}, {"description", "City"}}}}},
                     {"required", json::array({"city"})}}}};
  json tool = convention(p, "tools", "nested") == "flat"
                  ? function
                  : json{{"type", "function"}, {"function", function}};
  json arguments = {{"city", "Paris"}};
  if (convention(p, "arguments", "dict") == "string") arguments = "{\"city\": \"Paris\"}";
  const std::string id = convention(p, "call_id", "long") == "short"
                             ? std::string(probe::sentinel::kShortCallId)
                             : "call_0123456789abcdef01234567";
  json call = {
      {"role", "assistant"},
      {"content", convention(p, "call_content", "empty") == "null" ? json(nullptr) : json("")},
      {"tool_calls",
       json::array({json{{"id", id},
                         {"type", "function"},
                         {"function", {{"name", "get_weather"}, {"arguments", arguments}}}}})}};
  json result = {{"role", "tool"},
                 {"tool_call_id", id},
                 {"name", "get_weather"},
                 {"content", "22C and sunny"}};
  std::string verdict =
      !p.tools.definitions_rendered && !p.tool_calls.rendered
          ? "no tool support"
          : "definitions " + p.tools.definitions_location + "; calls " +
                (p.tool_calls.rendered ? "rendered" : "DROPPED") + "; results " +
                (p.tool_results.role ? "under " + *p.tool_results.role : "DROPPED");
  json request = {{"messages", json::array({in.user("Weather in Paris?"), call, result})},
                  {"tools", json::array({tool})},
                  {"add_generation_prompt", true}};
  return {{},
          verdict,
          p.tools.definitions_rendered && p.tool_calls.rendered && p.tool_results.rendered,
          json{{"tools", in.profile["tools"]},
               {"tool_calls", in.profile["tool_calls"]},
               {"tool_results", in.profile["tool_results"]}},
          std::move(request)};
}

Row input_conventions(const Input& in) {
  std::string refused;
  for (const auto& c : in.p.conventions)
    if (c.status != probe::Status::ok) add(refused, ", ", c.key);
  return {{},
          refused.empty() ? "every convention accepted" : "not accepted: " + refused,
          refused.empty(),
          in.profile["conventions"],
          std::nullopt};
}

Row reasoning(const Input& in) {
  const probe::Reasoning& r = in.p.reasoning;
  json turn = message("assistant", "4.", false);
  turn["reasoning_content"] = "2 + 2 = 4.";
  std::string verdict = r.style == "none"
                            ? "no reasoning markers"
                            : r.style + " " + r.open.value_or("") + " ... " + r.close.value_or("") +
                                  "; past reasoning " + (r.history_kept ? "KEPT" : "dropped") +
                                  "; the prompt opens reasoning: " + yes_no(r.prompt_opens) +
                                  // and closes it again (thinking off: `<think>\n\n</think>`)
                                  (r.prompt_opens && in.p.thinking_controls.prompt == "closed"
                                       ? " (and closes it: an empty block)"
                                       : "");
  return {{},
          verdict,
          !r.history_kept,
          in.profile["reasoning"],
          reply_request(json::array({in.user("What is 2 + 2?"), turn, in.user("And 3 + 3?")}))};
}

Row thinking_controls(const Input& in) {
  std::string controls;
  for (const auto& c : in.p.thinking_controls.controls) add(controls, ", ", c.name);
  return {{},
          controls.empty() ? "none found" : controls,
          true,
          in.profile["thinking_controls"],
          std::nullopt};
}

// The example sends the first part type the template renders as a placeholder, else an image.
Row multimodal(const Input& in) {
  std::string verdict, part_type;
  for (const auto& part : in.p.multimodal.parts) {
    std::string item = part.type + " " + part.status;
    if (part.placeholder && part.status == "placeholder") item += " " + *part.placeholder;
    add(verdict, "; ", item);
    if (part.status == "placeholder" && part_type.empty()) part_type = part.type;
  }
  const bool placeholders = !part_type.empty();
  if (part_type.empty()) part_type = "image";
  json media =
      part_type == "image_url"
          ? json{{"type", "image_url"}, {"image_url", {{"url", "https://example.com/a.png"}}}}
          : json{{"type", part_type}};
  json content = json::array({json{{"type", "text"}, {"text", "What is in this?"}}, media});
  return {{},
          verdict,
          placeholders,
          in.profile["multimodal"],
          reply_request(json::array({json{{"role", "user"}, {"content", std::move(content)}}}))};
}

Row documents(const Input& in) {
  const probe::Documents& d = in.p.documents;
  std::optional<json> example;
  if (d.rendered) {
    example = json{{"messages", json::array({in.user("What does the report say?")})},
                   {"documents", json::array({json{{"title", "Report"}, {"text", "Sales grew."}}})},
                   {"add_generation_prompt", true}};
  }
  return {{},
          d.rendered ? "rendered in " + d.location : "not rendered",
          d.rendered,
          in.profile["documents"],
          std::move(example)};
}

Row assistant_masks(const Input& in) {
  const probe::AssistantMasks& m = in.p.assistant_masks;
  std::string missed;
  for (const auto& x : m.missed) add(missed, ", ", x);
  return {{},
          !m.generation_blocks
              ? "no {% generation %} blocks (return_assistant_tokens_mask gives nothing)"
          : missed.empty() ? "generation blocks cover the assistant turns"
                           : "generation blocks miss: " + missed,
          m.generation_blocks && missed.empty(),
          in.profile["assistant_masks"],
          std::nullopt};
}

Row date(const Input& in) {
  return {{},
          in.p.date.depends_on_clock ? "the prompt depends on the clock (strftime_now)"
          : in.p.date.date_string    ? "a date_string variable is written"
                                     : "no date in the prompt",
          !in.p.date.depends_on_clock,
          in.profile["date"],
          std::nullopt};
}

Row bos_token(const Input& in) {
  return {{},
          in.p.bos_token.writes_bos_token
              ? "the template writes bos_token: the tokenizer must not add it again"
              : "the template does not write bos_token",
          true,
          in.profile["bos_token"],
          std::nullopt};
}

// The card's rows: ONE table, in the card's order (the parser row, from readback, comes last).
struct RowRule {
  std::string_view name;
  Row (*build)(const Input&);
};
constexpr RowRule kRows[] = {
    {"turn_frame", turn_frame},
    {"system_role", system_role},
    {"consecutive_roles", consecutive_roles},
    {"long_conversation", long_conversation},
    {"prefill", prefill},
    {"tools", tools},
    {"input_conventions", input_conventions},
    {"reasoning", reasoning},
    {"thinking_controls", thinking_controls},
    {"multimodal", multimodal},
    {"documents", documents},
    {"assistant_masks", assistant_masks},
    {"date", date},
    {"bos_token", bos_token},
};

std::vector<Row> rows(const probe::Profile& p, const json& profile) {
  const Input in{p, profile, convention(p, "content", "string") == "parts"};
  std::vector<Row> out;
  for (const auto& rule : kRows) {
    out.push_back(rule.build(in));
    out.back().row = rule.name;
  }
  return out;
}

std::string code_block(const std::string& text) {
  std::string fence = "```";
  while (text.find(fence) != std::string::npos) fence += "`";
  std::string block = fence + "text\n" + text;
  if (!text.ends_with("\n")) block += "\n";
  block += fence;
  block += "\n";
  return block;
}

std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '|') {
      out += "\\|";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Result<json> capability_card(const std::filesystem::path& path, bool model) {
  auto target = load_target(path, model);
  if (!target) return target.error();
  probe::Profile p = probe::probe_template(*target->with_tools, target->special_tokens);
  p.name = target->name;
  json profile = probe::to_json(p);

  json card = json::object();
  card["card_version"] = kCardVersion;
  card["model"] = target->name;
  json tokens = json::object();
  for (const char* key : {"bos_token", "eos_token"})
    if (const Value* v = target->special_tokens.dict_find(key); v && v->is_string())
      tokens[key] = v->as_string();
  card["special_tokens"] = tokens;

  json rows_json = json::array();
  for (auto& row : rows(p, profile)) {
    json r = {
        {"row", row.row}, {"verdict", row.verdict}, {"ok", row.ok}, {"measured", row.measured}};
    if (row.example) {
      json example = render_example(*target, *row.example);
      if (row.row == "long_conversation") {
        r["ok"] = !example["rendered"].is_null();
        r["verdict"] = example["rendered"].is_null()
                           ? "refused: " + example["error"].get<std::string>()
                           : "13 messages render";
      }
      r["example"] = std::move(example);
    }
    rows_json.push_back(std::move(r));
  }

  // The output parser, derived from the template's own renders and proven by the round trip.
  std::vector<std::string> ends;
  if (tokens.contains("eos_token")) ends.push_back(tokens["eos_token"]);
  auto choice = readback::choose_parser(
      probe::template_renderer(*target->with_tools, target->special_tokens), p, ends);
  json parser = readback::to_json(choice);
  json row = {{"row", "parser"},
              {"verdict", choice.verdict},
              {"ok", (!choice.calls_rendered || choice.calls_read_back) &&
                         (!choice.reasoning_rendered || choice.reasoning_read_back)},
              {"measured", parser}};
  rows_json.push_back(std::move(row));
  card["rows"] = std::move(rows_json);
  card["parser"] = {{"syntax", parser["syntax"]},
                    {"calls_read_back", choice.calls_read_back},
                    {"reasoning_read_back", choice.reasoning_read_back},
                    {"verdict", choice.verdict}};
  card["template_bugs"] = profile["template_bugs"];
  if (choice.template_bug) card["template_bugs"].push_back(parser["template_bug"]);
  card["silent_failures"] = profile["silent_failures"];
  card["profile"] = std::move(profile);
  return card;
}

std::string card_markdown(const json& card) {
  std::string md = "# Capability card: " + card["model"].get<std::string>() + "\n\n";
  if (!card["special_tokens"].empty()) {
    md += "Special tokens:";
    for (const auto& [k, v] : card["special_tokens"].items())
      md += " " + k + " `" + v.get<std::string>() + "`";
    md += "\n\n";
  }
  md += "| capability | ok | verdict |\n|---|---|---|\n";
  for (const auto& r : card["rows"])
    md += "| " + r["row"].get<std::string>() + " | " + (r["ok"].get<bool>() ? "yes" : "**no**") +
          " | " + cell(r["verdict"].get<std::string>()) + " |\n";
  md += "\n## Template bugs\n\n";
  if (card["template_bugs"].empty()) md += "None found.\n";
  for (const auto& b : card["template_bugs"]) {
    md += "- **" + b["kind"].get<std::string>() + "**";
    for (const char* key : {"cause", "header", "wrapped"})
      if (b.contains(key) && b[key].is_string() && !b[key].get<std::string>().empty()) {
        md += ' ';
        md += key;
        md += ": `" + cell(b[key].get<std::string>()) + "`";
      }
    md += "\n";
    for (const char* key : {"rendered", "evidence", "as_text", "as_result", "decoded"})
      if (b.contains(key) && b[key].is_string() && !b[key].get<std::string>().empty()) {
        md += "\n  ";
        md += key;
        md += ":\n\n" + code_block(b[key].get<std::string>()) + "\n";
      }
  }
  md += "\n## Silent failures\n\n";
  if (card["silent_failures"].empty()) md += "None found.\n";
  for (const auto& s : card["silent_failures"]) md += "- " + s.get<std::string>() + "\n";
  md += "\n## Compatibility examples (rendered with the model's own template)\n";
  for (const auto& r : card["rows"]) {
    if (!r.contains("example")) continue;
    const json& e = r["example"];
    json request = e;
    request.erase("rendered");
    request.erase("error");
    md += "\n### " + r["row"].get<std::string>() + "\n\nRequest: `" +
          cell(request.dump(-1, ' ', false, json::error_handler_t::replace)) + "`\n\n";
    if (e["rendered"].is_string()) {
      md += code_block(e["rendered"].get<std::string>());
    } else {
      md += "Refused: `" + cell(e.value("error", "")) + "`\n";
    }
  }
  if (card["parser"]["syntax"].is_object() || card["parser"]["syntax"].is_string())
    md += "\n## Output parser\n\n`" +
          cell(card["parser"]["syntax"].dump(-1, ' ', false, json::error_handler_t::replace)) +
          "`\n\nRound trip: " + cell(card["parser"]["verdict"].get<std::string>()) + "\n";
  return md;
}

}  // namespace chatwire::cli
