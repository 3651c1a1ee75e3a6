// The survey: the probe over a directory of templates and model directories, and the
// survey's tables (the findings of the first source document, measured on every template).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "chatwire/probe_json.hpp"
#include "util/utf8.hpp"

namespace chatwire::probe {

using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

bool is_model_dir(const fs::path& dir) {
  std::error_code ec;
  for (const char* file : {"tokenizer_config.json", "chat_template.jinja", "chat_template.json"})
    if (fs::exists(dir / file, ec)) return true;
  return false;
}

// Verbatim text in a Markdown table cell: newlines shown as \n, pipes escaped, in a code
// span wide enough for any backticks inside.
// The line of `text` where `escaped` (the same text, or its escaped form) has its first
// HTML entity, cut to 160 bytes at a character boundary: the table's evidence (the profile
// JSON keeps the whole text).
std::string escaped_line(std::string_view text, std::string_view escaped = {}) {
  if (escaped.empty()) escaped = text;
  std::size_t at = escaped.find('&');
  std::size_t line = 0;  // the line number of the entity
  for (std::size_t i = 0; i < at && i < escaped.size(); ++i) line += escaped[i] == '\n';
  std::size_t begin = 0;
  for (std::size_t n = 0; n < line && begin != std::string_view::npos; ++n) {
    begin = text.find('\n', begin);
    if (begin != std::string_view::npos) ++begin;
  }
  if (begin == std::string_view::npos) begin = 0;
  std::string_view rest = text.substr(begin);
  rest = rest.substr(0, rest.find('\n'));
  if (rest.size() <= 160) return std::string(rest);
  return std::string(rest.substr(0, util::utf8::char_start(rest, 160))) + "…";
}

std::string code(std::string_view s) {
  std::string body;
  for (char c : s) {
    if (c == '\n') {
      body += "\\n";
    } else if (c == '|') {
      body += "\\|";
    } else if (c == '\r') {
      body += "\\r";
    } else if (c == '\t') {
      body += "\\t";
    } else {
      body += c;
    }
  }
  if (body.empty()) return "(empty)";
  std::string fence = body.find('`') != std::string::npos ? "`` " : "`";
  std::string close = fence == "`` " ? " ``" : "`";
  return fence + body + close;
}

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string_view text_strip(std::string_view s) {
  const std::string_view ws = " \t\n\r\f\v";
  std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

// At most 80 bytes (cut at a character boundary, "…" appended): a table cell, not the evidence.
std::string shorten(std::string_view s) {
  if (s.size() <= 80) return std::string(s);
  return std::string(s.substr(0, util::utf8::char_start(s, 80))) + "…";
}

std::string stem(const std::string& name) {
  return name.ends_with(".jinja") ? name.substr(0, name.size() - 6) : name;
}

struct Ok {
  const std::string* name;
  const Profile* profile;
};

std::vector<Ok> probed(const std::vector<SurveyEntry>& entries) {
  std::vector<Ok> ok;
  for (const auto& e : entries)
    if (e.profile) ok.push_back({&e.name, &*e.profile});
  return ok;
}

std::string yes_no(bool b) {
  return b ? "yes" : "no";
}

// The tables of issue 21's capability axes: assistant masks, thinking controls, documents,
// content parts, the clock and bos_token.
std::string capability_tables(const std::vector<Ok>& ok) {
  std::string md;
  // Assistant masks.
  md +=
      "\n## Assistant masks ({% generation %} in training mode)\n\n| template | content covered | "
      "only assistant text | misses | also covers |\n|---|---|---|---|---|\n";
  std::size_t masked = 0, exact = 0;
  for (const auto& [name, p] : ok) {
    const AssistantMasks& m = p->assistant_masks;
    if (!m.generation_blocks) continue;
    ++masked;
    exact +=
        m.content_covered.value_or(false) && m.only_assistant.value_or(false) && m.missed.empty();
    md += "| " + stem(*name) + " | " + yes_no(m.content_covered.value_or(false)) + " | " +
          yes_no(m.only_assistant.value_or(false)) + " | " + join(m.missed) + " | " +
          join(m.includes) + " |\n";
  }
  md += "\n" + std::to_string(masked) + " of " + std::to_string(ok.size()) +
        " templates have generation blocks; " + std::to_string(exact) +
        " cover exactly the assistant turns and miss nothing.\n";

  // Thinking controls.
  md +=
      "\n## Thinking controls (template variables set to true, false, a string)\n\nPrompt: the "
      "reasoning state the generation prompt leaves (open, closed = an empty block, none); past: "
      "a past turn's reasoning is rendered.\n\n| template | variable | unset | = true | = false "
      "| = a string |\n|---|---|---|---|---|---|\n";
  auto state = [](const std::string& prompt, bool past) {
    return "prompt " + prompt + (past ? ", past kept" : ", past dropped");
  };
  auto value = [&](const ControlValue& v) {
    if (v.error) return std::string("raises");
    return (v.changed ? "" : "(same) ") + state(v.prompt, v.past_reasoning);
  };
  std::map<std::string, std::size_t> control_count;
  for (const auto& [name, p] : ok) {
    const ThinkingControls& t = p->thinking_controls;
    for (const auto& c : t.controls) {
      ++control_count[c.name];
      md += "| " + stem(*name) + " | `" + c.name + "` | " +
            state(t.prompt.value_or("none"), t.past_reasoning.value_or(false)) + " | " +
            value(c.true_value) + " | " + value(c.false_value) + " | " + value(c.string_value) +
            " |\n";
    }
  }
  std::vector<std::string> counts;
  for (const auto& [name, n] : control_count)
    counts.push_back("`" + name + "` " + std::to_string(n));
  md += "\nControls found: " + (counts.empty() ? std::string("none") : join(counts)) + ".\n";
  md +=
      "\nOther template variables that change the rendering (not reasoning):\n\n| template | "
      "variables |\n|---|---|\n";
  for (const auto& [name, p] : ok) {
    std::vector<std::string> vars;
    for (const auto& [var, where] : p->thinking_controls.other_variables)
      vars.push_back("`" + var + "` (" + where + ")");
    if (!vars.empty()) md += "| " + stem(*name) + " | " + join(vars) + " |\n";
  }

  // Documents.
  md += "\n## Documents (RAG)\n\n| location | count | templates |\n|---|---|---|\n";
  std::map<std::string, std::vector<std::string>> doc_locations;
  for (const auto& [name, p] : ok)
    doc_locations[p->documents.error ? std::string("raises") : p->documents.location].push_back(
        stem(*name) + (p->documents.rendered && !p->documents.title_rendered ? " (no title)" : ""));
  for (const auto& [location, names] : doc_locations) {
    std::string list = location == "not_rendered" && names.size() > 12
                           ? std::to_string(names.size()) + " templates"
                           : join(names);
    md += "| " + location + " | " + std::to_string(names.size()) + " | " + list + " |\n";
  }

  // Content parts.
  md +=
      "\n## Multimodal content parts (between two text parts of a user message)\n\n| part type | "
      "placeholder | printed as data (repr/JSON) | dropped silently | raises | placeholders seen "
      "|\n"
      "|---|---|---|---|---|---|\n";
  std::vector<std::string> types;
  for (const auto& [name, p] : ok)
    for (const auto& part : p->multimodal.parts)
      if (std::find(types.begin(), types.end(), part.type) == types.end())
        types.push_back(part.type);
  for (const auto& type : types) {
    std::map<std::string, std::size_t> status;
    std::map<std::string, std::size_t> seen;
    for (const auto& [name, p] : ok)
      for (const auto& part : p->multimodal.parts) {
        if (part.type != type) continue;
        ++status[part.status];
        if (part.status == "placeholder" && part.placeholder)
          ++seen[std::string(text_strip(*part.placeholder))];
      }
    std::vector<std::pair<std::size_t, std::string>> order;
    for (const auto& [ph, n] : seen) order.emplace_back(n, ph);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::vector<std::string> shown;
    for (std::size_t i = 0; i < order.size() && i < 5; ++i)
      shown.push_back(code(shorten(order[i].second)) + " " + std::to_string(order[i].first));
    md += "| " + type + " | " + std::to_string(status["placeholder"]) + " | " +
          std::to_string(status["printed"]) + " | " + std::to_string(status["dropped"]) + " | " +
          std::to_string(status["error"]) + " | " + join(shown) + " |\n";
  }

  // The clock and bos_token.
  md +=
      "\n## Date dependence\n\n| template | the clock (rendered at two times) | a `date_string` "
      "variable is written |\n|---|---|---|\n";
  std::size_t clock = 0;
  std::vector<std::string> bos;
  for (const auto& [name, p] : ok) {
    clock += p->date.depends_on_clock;
    if (p->bos_token.writes_bos_token)
      bos.push_back(
          stem(*name) + (p->bos_token.at_start ? "" : " (not at the start)") +
          (p->bos_token.count > 1 ? " (" + std::to_string(p->bos_token.count) + " times)" : ""));
    if (!p->date.depends_on_clock && !p->date.date_string) continue;
    std::string c = p->date.rendered
                        ? code(p->date.rendered->first) + " / " + code(p->date.rendered->second)
                        : "";
    md += "| " + stem(*name) + " | " + c + " | " + (p->date.date_string ? "yes" : "") + " |\n";
  }
  md += "\n" + std::to_string(clock) + " templates read the clock.\n";
  md +=
      "\n## bos_token written by the template\n\n" + std::to_string(bos.size()) +
      " templates write bos_token themselves (the tokenizer must not add it again): " + join(bos) +
      ".\n";
  return md;
}

bool renders_tool_messages(const Profile& p) {
  return p.renders && (p.baseline.conversation == "full" || p.baseline.conversation == "no_system");
}

}  // namespace

std::vector<SurveyEntry> survey(
    const fs::path& dir, const Options& options,
    const std::function<void(std::size_t, std::size_t, std::string_view)>& progress) {
  std::vector<fs::path> inputs;
  std::error_code ec;
  if (fs::is_regular_file(dir, ec) || is_model_dir(dir)) {
    inputs.push_back(dir);
  } else {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const fs::path& path = entry.path();
      if ((entry.is_regular_file(ec) && path.extension() == ".jinja") ||
          (entry.is_directory(ec) && is_model_dir(path)))
        inputs.push_back(path);
    }
    std::sort(inputs.begin(), inputs.end());
  }
  std::vector<SurveyEntry> entries;
  if (ec && inputs.empty()) {
    entries.push_back({dir.string(), Error{"FileNotFoundError", ec.message(), 0, 0, dir.string()}});
    return entries;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const fs::path& path = inputs[i];
    SurveyEntry e;
    e.name = path.filename().string();
    e.profile = fs::is_directory(path, ec) ? probe_model(path, options) : probe_file(path, options);
    entries.push_back(std::move(e));
    if (progress) progress(i + 1, inputs.size(), entries.back().name);
  }
  return entries;
}

json survey_json(const std::vector<SurveyEntry>& entries) {
  json profiles = json::object();
  for (const auto& e : entries) {
    if (e.profile) {
      profiles[e.name] = to_json(*e.profile);
    } else {
      profiles[e.name] = json{{"error", e.profile.error().to_string()}};
    }
  }
  json summary = json::object();
  auto ok = probed(entries);
  std::map<std::string, std::map<std::string, int>> conventions;
  for (const auto& [name, p] : ok)
    for (const auto& c : p->conventions) conventions[c.key][std::string(status_name(c.status))]++;
  summary["templates"] = entries.size();
  summary["probed"] = ok.size();
  summary["render_tool_conversation"] = std::count_if(
      ok.begin(), ok.end(), [](const Ok& o) { return renders_tool_messages(*o.profile); });
  json conv = json::object();
  for (const auto& [key, counts] : conventions) conv[key] = counts;
  summary["conventions"] = std::move(conv);
  std::map<std::string, int> silent;
  for (const auto& [name, p] : ok)
    for (const auto& s : p->silent_failures) silent[s]++;
  summary["silent_failures"] = silent;
  std::map<std::string, int> axes;
  std::map<std::string, int> controls, parts;
  for (const auto& [name, p] : ok) {
    axes["generation_blocks"] += p->assistant_masks.generation_blocks;
    axes["documents_rendered"] += p->documents.rendered;
    axes["depends_on_clock"] += p->date.depends_on_clock;
    axes["date_string"] += p->date.date_string;
    axes["writes_bos_token"] += p->bos_token.writes_bos_token;
    axes["prefill_supported"] += p->prefill.supported;
    for (const auto& c : p->thinking_controls.controls) controls[c.name]++;
    for (const auto& part : p->multimodal.parts) parts[part.type + ":" + part.status]++;
  }
  summary["capabilities"] = axes;
  summary["thinking_controls"] = controls;
  summary["content_parts"] = parts;
  std::map<std::string, int> bugs;
  for (const auto& [name, p] : ok)
    for (const auto& b : p->template_bugs) bugs[b.kind]++;
  summary["template_bugs"] = bugs;
  return json{{"templates", entries.size()},
              {"summary", std::move(summary)},
              {"profiles", std::move(profiles)}};
}

std::string survey_markdown(const std::vector<SurveyEntry>& entries) {
  auto ok = probed(entries);
  std::string md;
  std::size_t tool_conv = std::count_if(
      ok.begin(), ok.end(), [](const Ok& o) { return renders_tool_messages(*o.profile); });
  std::size_t renders =
      std::count_if(ok.begin(), ok.end(), [](const Ok& o) { return o.profile->renders; });
  md += "# Chat template survey\n\n";
  md += std::to_string(entries.size()) + " templates, " + std::to_string(ok.size()) + " probed, " +
        std::to_string(renders) + " render a sentinel conversation, " + std::to_string(tool_conv) +
        " render the whole tool-calling conversation (system, question, assistant tool call with "
        "reasoning, "
        "tool result, answer, follow-up question).\n";
  std::vector<std::string> failed;
  for (const auto& e : entries)
    if (!e.profile) failed.push_back(stem(e.name) + " (" + e.profile.error().type + ")");
  if (!failed.empty())
    md += "\nCould not be probed (no template, or it does not compile): " + join(failed) + ".\n";

  // 1. Turn frames by family.
  md +=
      "\n## Turn frames by family\n\n| family | templates | assistant turn prefix (most common) | "
      "suffix | which (generic families) |\n|---|---|---|---|---|\n";
  std::map<std::string, std::vector<const Profile*>> by_family;
  std::map<std::string, std::vector<std::string>> family_names;
  for (const auto& o : ok) {
    by_family[o.profile->frame.family].push_back(o.profile);
    family_names[o.profile->frame.family].push_back(stem(*o.name));
  }
  for (const auto& [family, profiles] : by_family) {
    std::map<std::string, int> prefixes, suffixes;
    for (const auto* p : profiles) {
      prefixes[p->frame.assistant_prefix.value_or("")]++;
      suffixes[p->frame.assistant_suffix.value_or("")]++;
    }
    auto most = [](const std::map<std::string, int>& m) {
      return std::max_element(m.begin(), m.end(),
                              [](auto& a, auto& b) { return a.second < b.second; })
          ->first;
    };
    const bool generic = family == "other" || family == "unknown";
    md += "| " + family + " | " + std::to_string(profiles.size()) + " | " + code(most(prefixes)) +
          " | " + code(most(suffixes)) + " | " + (generic ? join(family_names[family]) : "") +
          " |\n";
  }

  // 2. Reasoning.
  md +=
      "\n## Reasoning\n\n| template | style | open | close | past reasoning kept | prompt opens "
      "reasoning |\n|---|---|---|---|---|---|\n";
  std::size_t kept = 0, with_reasoning = 0;
  for (const auto& [name, p] : ok) {
    const Reasoning& r = p->reasoning;
    if (r.style == "none" && !r.history_kept && !r.prompt_opens) continue;
    ++with_reasoning;
    kept += r.history_kept;
    md += "| " + stem(*name) + " | " + r.style + " | " + (r.open ? code(*r.open) : "") + " | " +
          (r.close ? code(*r.close) : "") + " | " + (r.history_kept ? "**yes**" : "no") + " | " +
          (r.prompt_opens ? "yes" : "no") + " |\n";
  }
  md += "\n" + std::to_string(kept) + " of " + std::to_string(tool_conv) +
        " templates that render the tool conversation replay a past turn's reasoning.\n";

  // 3. Where tool definitions go.
  md += "\n## Where tool definitions go\n\n| location | count | templates |\n|---|---|---|\n";
  std::map<std::string, std::vector<std::string>> locations;
  for (const auto& [name, p] : ok) locations[p->tools.definitions_location].push_back(stem(*name));
  for (const auto& [location, names] : locations)
    md += "| " + location + " | " + std::to_string(names.size()) + " | " + join(names) + " |\n";

  // 4. Call syntax.
  md += "\n## Call syntax (verbatim from the rendered history)\n\n| template | call |\n|---|---|\n";
  for (const auto& [name, p] : ok)
    if (p->tool_calls.example)
      md += "| " + stem(*name) + " | " + code(*p->tool_calls.example) + " |\n";

  // 5. Tool-result role.
  md += "\n## Tool-result role\n\n| role | count | templates |\n|---|---|---|\n";
  std::map<std::string, std::vector<std::string>> roles;
  for (const auto& [name, p] : ok)
    if (p->tool_results.role) roles[*p->tool_results.role].push_back(stem(*name));
  for (const auto& [role, names] : roles)
    md += "| " + code(role) + " | " + std::to_string(names.size()) + " | " + join(names) + " |\n";

  // 6. Input conventions.
  md +=
      "\n## Input conventions (each flipped alone from the baseline)\n\n"
      "Counted over the " +
      std::to_string(tool_conv) +
      " templates that render the tool conversation.\n\n| convention | ok | lossy | error | "
      "rejected or lossy in |\n|---|---|---|---|---|\n";
  if (!ok.empty()) {
    for (const auto& c0 : ok.front().profile->conventions) {
      int counts[3] = {0, 0, 0};
      std::vector<std::string> bad;
      for (const auto& [name, p] : ok) {
        if (!renders_tool_messages(*p)) continue;
        const Convention* c = p->convention(c0.key);
        if (c == nullptr) continue;
        counts[static_cast<int>(c->status)]++;
        if (c->status != Status::ok) bad.push_back(stem(*name));
      }
      std::string list =
          bad.size() > 12 ? join({bad.begin(), bad.begin() + 12}) + ", ..." : join(bad);
      md += "| " + c0.key + " | " + std::to_string(counts[0]) + "/" + std::to_string(tool_conv) +
            " | " + std::to_string(counts[2]) + " | " + std::to_string(counts[1]) + " | " + list +
            " |\n";
    }
  }

  // 7. Silent failures.
  md +=
      "\n## Silent failures (renders without an error, content lost)\n\n| failure | count | "
      "templates |\n|---|---|---|\n";
  std::map<std::string, std::vector<std::string>> silent;
  for (const auto& [name, p] : ok)
    for (const auto& s : p->silent_failures) silent[s].push_back(stem(*name));
  for (const auto& [failure, names] : silent)
    md += "| " + failure + " | " + std::to_string(names.size()) + " | " + join(names) + " |\n";

  md += capability_tables(ok);

  // 8. Template bugs.
  md += "\n## Template bugs\n\n| template | bug | detail |\n|---|---|---|\n";
  std::size_t bug_count = 0;
  for (const auto& o : ok) bug_count += o.profile->template_bugs.size();
  if (bug_count == 0) md += "| (none found) | | |\n";
  for (const auto& [name, p] : ok) {
    for (const auto& bug : p->template_bugs) {
      std::string detail =
          bug.kind == "tool_result_under_assistant"
              ? "result header " + code(bug.header) + ": " + code(bug.rendered)
          : bug.kind == "tool_result_without_role"
              ? "the result right after the previous turn's end: " + code(bug.rendered)
          : bug.kind == "user_message_read_as_tool_result"
              ? "a user message " + code(bug.wrapped) + " changes how the rest renders"
          : bug.kind == "duplicate_system_block"
              ? "one system message, two " + code(bug.header) + " blocks before the user turn"
          : bug.kind.starts_with("html_escaped_")
              ? "renders " + code(escaped_line(bug.rendered)) + " for " +
                    code(escaped_line(bug.decoded, bug.rendered))
              : "renders " + code(bug.rendered) + ", instructions teach " +
                    code(join(bug.taught, " "));
      md += "| " + stem(*name) + " | " + bug.kind + " | " + detail + " |\n";
    }
  }
  return md;
}

std::string survey_json_text(const std::vector<SurveyEntry>& entries, int indent) {
  return survey_json(entries).dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace chatwire::probe
