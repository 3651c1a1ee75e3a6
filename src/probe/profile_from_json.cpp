// JSON -> Profile: the inverse of to_json(Profile) (profile_json.cpp), so a profile computed
// once can be cached and loaded back. One function per section, in to_json's order; a new
// profile field is one line here and one in to_json.
#include <cstdint>
#include <string>
#include <utility>

#include "chatwire/probe_json.hpp"
#include "util/json_text.hpp"

namespace chatwire::probe {

using json = nlohmann::ordered_json;

namespace {

Error profile_error(const std::string& path, const std::string& message) {
  return Error{"ValueError", "profile JSON: " + message, 0, 0, path};
}

// Reads typed fields of one JSON object; the first problem is kept and reported with its path.
class Reader {
 public:
  Reader(const json& object, std::string path, std::optional<Error>& error)
      : object_(object), path_(std::move(path)), error_(error) {
    if (!object_.is_object()) fail(path_, "must be an object");
  }

  Reader child(const char* key) const { return Reader(get(key), at(key), error_); }
  bool has(const char* key) const { return object_.is_object() && object_.contains(key); }
  void read(const char* key, bool& out) const {
    const json& v = get(key);
    if (v.is_boolean())
      out = v.get<bool>();
    else
      fail(at(key), "must be a boolean");
  }
  void read(const char* key, std::size_t& out) const {
    const json& v = get(key);
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
      out = static_cast<std::size_t>(v.get<std::int64_t>());
    else
      fail(at(key), "must be a non-negative integer");
  }
  void read(const char* key, std::string& out) const {
    const json& v = get(key);
    if (v.is_string())
      out = v.get<std::string>();
    else
      fail(at(key), "must be a string");
  }
  // A string or null; null reads as "" (for fields to_json writes as null when empty).
  void read_or_empty(const char* key, std::string& out) const {
    const json& v = get(key);
    if (v.is_null())
      out.clear();
    else
      read(key, out);
  }
  void read(const char* key, std::optional<std::string>& out) const {
    const json& v = get(key);
    if (v.is_null())
      out.reset();
    else if (v.is_string())
      out = v.get<std::string>();
    else
      fail(at(key), "must be a string or null");
  }
  void read(const char* key, std::vector<std::string>& out) const {
    const json& v = get(key);
    out.clear();
    if (!v.is_array()) return fail(at(key), "must be a list of strings");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string())
        return fail(at(key) + "[" + std::to_string(i) + "]", "must be a string");
      out.push_back(v[i].get<std::string>());
    }
  }
  void read(const char* key, std::optional<bool>& out) const {
    const json& v = get(key);
    if (v.is_null())
      out.reset();
    else if (v.is_boolean())
      out = v.get<bool>();
    else
      fail(at(key), "must be a boolean or null");
  }
  // Optional keys: read only when present.
  template <typename T>
  void read_if(const char* key, T& out) const {
    if (has(key)) read(key, out);
  }
  const json& raw(const char* key) const { return get(key); }
  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  void fail(const std::string& path, const std::string& message) const {
    if (!error_) error_ = profile_error(path, message);
  }

 private:
  const json& get(const char* key) const {
    static const json kNull;
    if (!object_.is_object()) return kNull;
    auto it = object_.find(key);
    if (it == object_.end()) {
      fail(at(key), "is missing");
      return kNull;
    }
    return *it;
  }
  const json& object_;
  std::string path_;
  std::optional<Error>& error_;
};

void read_baseline(const Reader& r, bool renders, Baseline& b) {
  r.read_or_empty("conversation", b.conversation);
  const json& conventions = r.raw("conventions");
  if (conventions.is_object()) {
    for (const auto& [axis, value] : conventions.items()) {
      if (!value.is_string()) return r.fail(r.at("conventions." + axis), "must be a string");
      b.conventions.emplace_back(axis, value.get<std::string>());
    }
  } else if (!conventions.is_null()) {
    r.fail(r.at("conventions"), "must be an object or null");
  }
  r.read("kept", b.kept);
  r.read("lost", b.lost);
  if (!renders) r.read_or_empty("error", b.error);
  if (r.has("full_conversation_error"))
    r.read_or_empty("full_conversation_error", b.full_conversation_error);
}

void read_bug(const Reader& r, TemplateBug& bug) {
  r.read("kind", bug.kind);
  if (bug.kind == "instruction_history_marker_mismatch") {
    r.read("rendered", bug.rendered);
    r.read("taught", bug.taught);
  } else if (bug.kind.starts_with("html_escaped_")) {
    r.read("rendered", bug.rendered);
    r.read("decoded", bug.decoded);
  } else if (bug.kind == "user_message_read_as_tool_result") {
    r.read("wrapped", bug.wrapped);
    r.read("as_text", bug.as_text);
    r.read("as_result", bug.as_result);
  } else if (bug.kind == "duplicate_system_block" || bug.kind == "tool_result_under_assistant") {
    r.read("header", bug.header);
    r.read("rendered", bug.rendered);
  } else if (bug.kind == "tool_result_without_role") {
    r.read("rendered", bug.rendered);
  } else {
    r.read("header", bug.header);
  }
}

void read_control_value(const Reader& r, ControlValue& v) {
  if (r.has("error")) {
    std::string e;
    r.read("error", e);
    v.error = std::move(e);
    return;
  }
  r.read("changed", v.changed);
  r.read("prompt", v.prompt);
  r.read("past_reasoning", v.past_reasoning);
}

void read_thinking_controls(const Reader& r, std::optional<Error>& error, ThinkingControls& t) {
  r.read("candidates", t.candidates);
  r.read("prompt", t.prompt);
  r.read("past_reasoning", t.past_reasoning);
  const json& controls = r.raw("controls");
  if (!controls.is_array()) return r.fail(r.at("controls"), "must be a list");
  for (std::size_t i = 0; i < controls.size(); ++i) {
    Reader c(controls[i], r.at("controls[" + std::to_string(i) + "]"), error);
    ThinkingControl control;
    c.read("name", control.name);
    Reader values = c.child("values");
    read_control_value(values.child("true"), control.true_value);
    read_control_value(values.child("false"), control.false_value);
    read_control_value(values.child("string"), control.string_value);
    t.controls.push_back(std::move(control));
  }
  const json& others = r.raw("other_variables");
  if (!others.is_array()) return r.fail(r.at("other_variables"), "must be a list");
  for (std::size_t i = 0; i < others.size(); ++i) {
    Reader o(others[i], r.at("other_variables[" + std::to_string(i) + "]"), error);
    std::string name, where;
    o.read("name", name);
    o.read("where", where);
    t.other_variables.emplace_back(std::move(name), std::move(where));
  }
}

void read_multimodal(const Reader& r, std::optional<Error>& error, Multimodal& m) {
  r.read("text_parts", m.text_parts);
  r.read("error", m.error);
  const json& parts = r.raw("parts");
  if (!parts.is_object()) return r.fail(r.at("parts"), "must be an object");
  for (const auto& [type, entry] : parts.items()) {
    Reader e(entry, r.at("parts." + type), error);
    ContentPart part;
    part.type = type;
    e.read("status", part.status);
    if (part.status == "error") e.read("error", part.error);
    if (e.has("placeholder")) {
      std::string placeholder;
      e.read("placeholder", placeholder);
      part.placeholder = std::move(placeholder);
      e.read("in_place", part.in_place);
    }
    m.parts.push_back(std::move(part));
  }
}

void read_date(const Reader& r, DateDependence& d) {
  r.read("depends_on_clock", d.depends_on_clock);
  const json& rendered = r.raw("rendered");
  if (rendered.is_array() && rendered.size() == 2 && rendered[0].is_string() &&
      rendered[1].is_string())
    d.rendered = std::make_pair(rendered[0].get<std::string>(), rendered[1].get<std::string>());
  else if (!rendered.is_null())
    r.fail(r.at("rendered"), "must be a pair of strings or null");
  r.read("date_string", d.date_string);
}

}  // namespace

Result<Profile> profile_from_json(const json& j) {
  std::optional<Error> error;
  Reader r(j, "", error);
  Profile p;
  if (r.has("template")) r.read("template", p.name);
  std::size_t version = 0;
  r.read("profile_version", version);
  if (!error && version != static_cast<std::size_t>(kProfileVersion))
    return profile_error("profile_version", "version " + std::to_string(version) +
                                                " is not the version this build writes (" +
                                                std::to_string(kProfileVersion) + ")");
  r.read("renders", p.renders);
  read_baseline(r.child("baseline"), p.renders, p.baseline);

  const json& conventions = r.raw("conventions");
  if (conventions.is_object()) {
    for (const auto& [key, entry] : conventions.items()) {
      Reader e(entry, "conventions." + key, error);
      Convention c;
      c.key = key;
      if (auto axis = convention_axis(key)) {
        c.axis = std::string(axis->first);
        c.value = std::string(axis->second);
      }
      std::string status;
      e.read("status", status);
      if (status == "ok")
        c.status = Status::ok;
      else if (status == "error")
        c.status = Status::error, e.read_or_empty("error", c.error);
      else if (status == "lossy")
        c.status = Status::lossy, e.read("lost", c.lost);
      else
        e.fail("conventions." + key + ".status", "must be ok, error or lossy");
      p.conventions.push_back(std::move(c));
    }
  } else {
    r.fail("conventions", "must be an object");
  }

  Reader tools = r.child("tools");
  tools.read("definitions_rendered", p.tools.definitions_rendered);
  tools.read("definitions_location", p.tools.definitions_location);
  tools.read("definitions_block", p.tools.definitions_block);
  tools.read("parameter_description_required", p.tools.parameter_description_required);

  Reader calls = r.child("tool_calls");
  calls.read("rendered", p.tool_calls.rendered);
  calls.read("example", p.tool_calls.example);
  calls.read("id_rendered", p.tool_calls.id_rendered);

  Reader results = r.child("tool_results");
  results.read("rendered", p.tool_results.rendered);
  results.read("role", p.tool_results.role);
  results.read("header", p.tool_results.header);

  Reader reasoning = r.child("reasoning");
  reasoning.read("history_kept", p.reasoning.history_kept);
  reasoning.read("style", p.reasoning.style);
  reasoning.read("field", p.reasoning.field);
  reasoning.read("open", p.reasoning.open);
  reasoning.read("close", p.reasoning.close);
  reasoning.read("prompt_opens", p.reasoning.prompt_opens);

  Reader system = r.child("system");
  system.read("supported", p.system.supported);
  system.read_if("error", p.system.error);

  Reader alternation = r.child("alternation");
  alternation.read("required", p.alternation.required);
  alternation.read_if("error", p.alternation.error);

  Reader frame = r.child("frame");
  frame.read("generation_prompt", p.frame.generation_prompt);
  frame.read("assistant_prefix", p.frame.assistant_prefix);
  frame.read("assistant_suffix", p.frame.assistant_suffix);
  frame.read("user_prefix", p.frame.user_prefix);
  frame.read("user_suffix", p.frame.user_suffix);
  frame.read("family", p.frame.family);
  frame.read_if("error", p.frame.error);

  Reader prefill = r.child("prefill");
  prefill.read("supported", p.prefill.supported);
  prefill.read("prefix", p.prefill.prefix);
  prefill.read("matches_generation_prompt", p.prefill.matches_generation_prompt);
  prefill.read("error", p.prefill.error);

  Reader masks = r.child("assistant_masks");
  masks.read("generation_blocks", p.assistant_masks.generation_blocks);
  masks.read("content_covered", p.assistant_masks.content_covered);
  masks.read("only_assistant", p.assistant_masks.only_assistant);
  masks.read("missed", p.assistant_masks.missed);
  masks.read("includes", p.assistant_masks.includes);
  masks.read("masked", p.assistant_masks.masked);

  read_thinking_controls(r.child("thinking_controls"), error, p.thinking_controls);

  Reader documents = r.child("documents");
  documents.read("rendered", p.documents.rendered);
  documents.read("title_rendered", p.documents.title_rendered);
  documents.read("location", p.documents.location);
  documents.read("block", p.documents.block);
  documents.read("error", p.documents.error);

  read_multimodal(r.child("multimodal"), error, p.multimodal);
  read_date(r.child("date"), p.date);

  Reader bos = r.child("bos_token");
  bos.read("writes_bos_token", p.bos_token.writes_bos_token);
  bos.read("at_start", p.bos_token.at_start);
  bos.read("count", p.bos_token.count);

  r.read("silent_failures", p.silent_failures);
  const json& bugs = r.raw("template_bugs");
  if (bugs.is_array()) {
    for (std::size_t i = 0; i < bugs.size(); ++i) {
      TemplateBug bug;
      read_bug(Reader(bugs[i], "template_bugs[" + std::to_string(i) + "]", error), bug);
      p.template_bugs.push_back(std::move(bug));
    }
  } else {
    r.fail("template_bugs", "must be a list");
  }
  r.read("renders_used", p.renders_used);
  if (error) return *error;
  return p;
}

Result<Profile> Profile::from_json_text(std::string_view json_text, std::size_t max_json_depth) {
  auto j = util::parse_bounded_json(json_text, max_json_depth);
  if (j.failure == util::BoundedJson::Failure::kTooDeep)
    return profile_error("", "the profile nests deeper than " + std::to_string(max_json_depth));
  if (!j) return profile_error("", "the profile is not valid JSON: " + j.what);
  return profile_from_json(j.value);
}

}  // namespace chatwire::probe
