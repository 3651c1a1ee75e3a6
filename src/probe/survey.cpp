// The survey: the probe over a directory of templates and model directories, and the
// survey's tables (the findings of the first source document, measured on every template).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "chatwire/probe.hpp"

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
  std::size_t cut = 160;
  while (cut > 0 && (static_cast<unsigned char>(rest[cut]) & 0xC0) == 0x80) --cut;
  return std::string(rest.substr(0, cut)) + "…";
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
      profiles[e.name] = e.profile->to_json();
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
      "suffix |\n|---|---|---|---|\n";
  std::map<std::string, std::vector<const Profile*>> by_family;
  for (const auto& o : ok) by_family[o.profile->frame.family].push_back(o.profile);
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
    md += "| " + family + " | " + std::to_string(profiles.size()) + " | " + code(most(prefixes)) +
          " | " + code(most(suffixes)) + " |\n";
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

  // 8. Template bugs.
  md += "\n## Template bugs\n\n| template | bug | detail |\n|---|---|---|\n";
  std::size_t bug_count = 0;
  for (const auto& o : ok) bug_count += o.profile->template_bugs.size();
  if (bug_count == 0) md += "| (none found) | | |\n";
  for (const auto& [name, p] : ok) {
    for (const auto& bug : p->template_bugs) {
      std::string detail =
          bug.kind == "tool_result_under_assistant" ? "result header " + code(bug.header)
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

}  // namespace chatwire::probe
