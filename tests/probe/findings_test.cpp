// The first source document's findings (docs/seeds/000, the survey of 54 templates),
// checked on the templates of those models that are bundled here: once on the oracle's
// measurement (the goldens, so the method itself is checked) and once on the C++ probe.
// The template names appear only here, in the tests; the probe never looks at names.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "chatwire/probe_json.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

bool silent(const json& p, const char* failure) {
  for (const auto& f : p["silent_failures"])
    if (f == failure) return true;
  return false;
}

bool bug(const json& p, const char* kind) {
  for (const auto& b : p["template_bugs"])
    if (b["kind"] == kind) return true;
  return false;
}

std::string status(const json& p, const char* convention) {
  return p["conventions"][convention]["status"];
}

struct Finding {
  const char* template_stem;  // under data/templates/ or data/goldens/probe/crafted/
  const char* what;
  std::function<bool(const json&)> holds;
};

const Finding kFindings[] = {
    {"ibm-granite--granite-3.3-2b-instruct",
     "renders tool definitions (own available_tools turn) but drops tool calls",
     [](const json& p) {
       return silent(p, "tool_calls_dropped") && p["tools"]["definitions_location"] == "own_turn";
     }},
    {"HuggingFaceTB--SmolLM3-3B", "renders tool definitions but drops tool calls",
     [](const json& p) {
       return silent(p, "tool_calls_dropped") && p["tools"]["definitions_rendered"] == true;
     }},
    {"deepseek-ai--DeepSeek-R1", "ignores tools, renders calls, rejects dict arguments",
     [](const json& p) {
       return silent(p, "tools_ignored") && p["tool_calls"]["rendered"] == true &&
              status(p, "arguments_dict") == "error" && status(p, "arguments_string") == "ok";
     }},
    {"deepseek-ai--DeepSeek-V3.1", "ignores tools, renders calls, rejects dict arguments",
     [](const json& p) {
       return silent(p, "tools_ignored") && p["tool_calls"]["rendered"] == true &&
              status(p, "arguments_dict") == "error";
     }},
    {"ByteDance-Seed--Seed-OSS-36B-Instruct", "replays past reasoning, rejects string arguments",
     [](const json& p) {
       return silent(p, "reasoning_replayed") && p["reasoning"]["history_kept"] == true &&
              status(p, "arguments_string") == "error";
     }},
    {"mistralai--Mistral-Nemo-Instruct-2407", "rejects OpenAI-style (non 9-character) call ids",
     [](const json& p) {
       return status(p, "long_call_id") == "error" && status(p, "short_call_id") == "ok";
     }},
    {"openai--gpt-oss-120b",
     "rejects flat tools; definitions in a developer turn; channel reasoning",
     [](const json& p) {
       return status(p, "flat_tools") == "error" &&
              p["tools"]["definitions_location"] == "developer" &&
              p["reasoning"]["style"] == "channel" && p["frame"]["family"] == "Harmony";
     }},
    {"MiniMaxAI--MiniMax-M2", "rejects flat tools and string arguments",
     [](const json& p) {
       return status(p, "flat_tools") == "error" && status(p, "arguments_string") == "error";
     }},
    {"zai-org--GLM-4.6", "rejects string arguments; tool results under observation",
     [](const json& p) {
       return status(p, "arguments_string") == "error" &&
              p["tool_results"]["role"] == "observation";
     }},
    {"meta-llama--Llama-3.1-8B-Instruct",
     "tool definitions in the user turn, results under ipython",
     [](const json& p) {
       return p["tools"]["definitions_location"] == "user" &&
              p["tool_results"]["role"] == "ipython" && p["frame"]["family"] == "Llama 3";
     }},
    {"Qwen--Qwen3-0.6B", "definitions in system, results in a user turn, both argument shapes",
     [](const json& p) {
       return p["tools"]["definitions_location"] == "system" &&
              p["tool_results"]["role"] == "user" && status(p, "arguments_dict") == "ok" &&
              status(p, "arguments_string") == "ok";
     }},
    {"mistralai--Mistral-7B-Instruct-v0.3",
     "[AVAILABLE_TOOLS] section, results in a dedicated section",
     [](const json& p) {
       return p["tools"]["definitions_location"] == "own_section" &&
              p["tool_results"]["role"] == "section";
     }},
    {"moonshotai--Kimi-K2-Thinking--rev-hfjs", "tool results under <|im_system|>",
     [](const json& p) { return p["tool_results"]["role"] == "system"; }},
    {"google--gemma-2-2b-it", "no system role, strict alternation, no tool support",
     [](const json& p) {
       return p["system"]["supported"] == false && p["alternation"]["required"] == true &&
              silent(p, "no_tool_support");
     }},
    {"crafted/marker-mismatch", "instructions teach one marker, history renders another (step3)",
     [](const json& p) { return bug(p, "instruction_history_marker_mismatch"); }},
    {"crafted/result-under-assistant", "tool results under the assistant header (Falcon3)",
     [](const json& p) {
       return bug(p, "tool_result_under_assistant") && p["tool_results"]["role"] == "assistant";
     }},
    {"crafted/html-escaped-call",
     "a plain str + a |safe value: the call in history is HTML-escaped (Mistral's generated "
     "templates)",
     [](const json& p) {
       return bug(p, "html_escaped_call") && !bug(p, "html_escaped_tools") &&
              p["tool_calls"]["example"].get<std::string>().find("&#34;get_zxweather&#34;") !=
                  std::string::npos;
     }},
    {"crafted/html-escaped-content", "a |safe prefix escapes the tool result's JSON after it",
     [](const json& p) {
       return bug(p, "html_escaped_content") && !bug(p, "html_escaped_call") &&
              !bug(p, "html_escaped_tools");
     }},
    {"NousResearch--Hermes-2-Pro-Llama-3-8B--tool_use",
     "with tools, the caller's system message is a second <|im_start|>system block",
     [](const json& p) { return bug(p, "duplicate_system_block"); }},
    {"moonshotai--Kimi-K2-Instruct-0905",
     "a tool_declare block, then one system block: not a duplicate",
     [](const json& p) {
       return p["tools"]["definitions_location"] == "system" && !bug(p, "duplicate_system_block");
     }},
    {"Qwen--Qwen3-0.6B",
     "a user message wrapped in <tool_response> tags is taken for a tool result",
     [](const json& p) {
       for (const auto& b : p["template_bugs"])
         if (b["kind"] == "user_message_read_as_tool_result")
           return b["wrapped"].get<std::string>().starts_with("<tool_response>");
       return false;
     }},
    {"Qwen--QwQ-32B", "tool results in user turns, but a user message is always a user message",
     [](const json& p) {
       return p["tool_results"]["role"] == "user" && !bug(p, "user_message_read_as_tool_result");
     }},
    {"meta-llama--Llama-3.1-8B-Instruct", "prefill continues right after the generation prompt",
     [](const json& p) {
       return p["prefill"]["supported"] == true &&
              p["prefill"]["matches_generation_prompt"] == true;
     }},
    {"Qwen--Qwen3-0.6B", "prefill puts an empty think block before the continued message",
     [](const json& p) {
       return p["prefill"]["supported"] == true &&
              p["prefill"]["matches_generation_prompt"] == false &&
              p["prefill"]["prefix"].get<std::string>().ends_with("<think>\n\n</think>\n\n");
     }},
    {"trl--idefics2_training",
     "content must be text parts; with them the frame is measured and prefill continues after "
     "'Assistant: ' (one space more than the generation prompt)",
     [](const json& p) {
       return p["frame"]["assistant_prefix"] == "Assistant: " &&
              p["prefill"]["supported"] == true &&
              p["prefill"]["matches_generation_prompt"] == false &&
              p["prefill"]["prefix"].get<std::string>().ends_with("Assistant: ");
     }},
    {"mistralai--Mistral-7B-Instruct-v0.3", "calls and definitions rendered as plain JSON",
     [](const json& p) {
       return p["tool_calls"]["rendered"] == true && !bug(p, "html_escaped_call") &&
              !bug(p, "html_escaped_tools") && !bug(p, "html_escaped_content");
     }},
    // Issue 21's capability axes.
    {"HuggingFaceTB--SmolLM3-3B",
     "generation blocks cover both answers and their end of turn, and the assistant header too",
     [](const json& p) {
       const json& m = p["assistant_masks"];
       return m["generation_blocks"] == true && m["content_covered"] == true &&
              m["only_assistant"] == true && m["missed"].empty() &&
              m["includes"] == json::array({"header"});
     }},
    {"trl--qwen3_5_think_training", "generation blocks cover the final turn's reasoning",
     [](const json& p) {
       const json& m = p["assistant_masks"];
       return m["missed"].empty() && m["masked"].size() == 2 &&
              m["masked"][1].get<std::string>().find("ZXREASONXZ") != std::string::npos;
     }},
    {"crafted/mask-misses", "generation blocks around the text only miss the rest",
     [](const json& p) {
       return p["assistant_masks"]["content_covered"] == true &&
              p["assistant_masks"]["missed"] ==
                  json::array({"reasoning", "tool_calls", "end_of_turn"});
     }},
    {"Qwen--Qwen3-0.6B", "no generation blocks; enable_thinking=false closes reasoning",
     [](const json& p) {
       if (p["assistant_masks"]["generation_blocks"] != false) return false;
       for (const auto& c : p["thinking_controls"]["controls"])
         if (c["name"] == "enable_thinking")
           return c["values"]["false"]["prompt"] == "closed" &&
                  c["values"]["true"]["changed"] == false;
       return false;
     }},
    {"zai-org--GLM-4.7-Flash",
     "the prompt opens reasoning; enable_thinking=false stops that, clear_thinking=false keeps "
     "past reasoning",
     [](const json& p) {
       const json& t = p["thinking_controls"];
       bool enable = false, clear = false;
       for (const auto& c : t["controls"]) {
         enable |= c["name"] == "enable_thinking" && c["values"]["false"]["prompt"] == "none";
         clear |= c["name"] == "clear_thinking" && c["values"]["false"]["past_reasoning"] == true;
       }
       return t["prompt"] == "open" && t["past_reasoning"] == false && enable && clear;
     }},
    {"openai--gpt-oss-120b",
     "reasoning_effort changes the rendering but is no thinking switch; the date comes from "
     "the clock",
     [](const json& p) {
       bool effort = false;
       for (const auto& v : p["thinking_controls"]["other_variables"])
         effort |= v["name"] == "reasoning_effort" && v["where"] == "preamble";
       return p["thinking_controls"]["controls"].empty() && effort &&
              p["date"]["depends_on_clock"] == true &&
              p["date"]["rendered"] == json::array({"2026-01-15", "2031-07-04"});
     }},
    {"ibm-granite--granite-3.3-2b-instruct", "documents in a turn of their own, text only",
     [](const json& p) {
       return p["documents"]["rendered"] == true && p["documents"]["location"] == "own_turn" &&
              p["documents"]["title_rendered"] == false;
     }},
    {"ai21labs--AI21-Jamba-Large-1.6", "documents with their titles in the system turn",
     [](const json& p) {
       return p["documents"]["rendered"] == true && p["documents"]["location"] == "system" &&
              p["documents"]["title_rendered"] == true;
     }},
    {"Qwen--Qwen2.5-VL-7B-Instruct",
     "images and videos become vision placeholders in place; audio is dropped silently",
     [](const json& p) {
       const json& parts = p["multimodal"]["parts"];
       return p["multimodal"]["text_parts"] == true &&
              parts["image"]["placeholder"] == "<|vision_start|><|image_pad|><|vision_end|>" &&
              parts["image"]["in_place"] == true &&
              parts["video"]["placeholder"] == "<|vision_start|><|video_pad|><|vision_end|>" &&
              parts["audio"]["status"] == "dropped";
     }},
    {"meta-llama--Llama-3.1-8B-Instruct",
     "content parts printed as a Python repr; date_string honoured; writes bos_token itself",
     [](const json& p) {
       return p["multimodal"]["parts"]["image"]["status"] == "printed" &&
              p["date"]["date_string"] == true && p["date"]["depends_on_clock"] == false &&
              p["bos_token"]["writes_bos_token"] == true && p["bos_token"]["at_start"] == true &&
              p["bos_token"]["count"] == 1;
     }},
    {"HuggingFaceTB--SmolLM3-3B", "the date comes from the clock, in words",
     [](const json& p) {
       return p["date"]["rendered"] == json::array({"15 January 2026", "04 July 2031"});
     }},
};

// Issue 21: every kind of template bug, with templates that have it and templates that do not
// (bundled ones where one exists, else the probe's crafted test templates).
struct BugCase {
  const char* kind;
  std::vector<const char*> has, has_not;
};

const BugCase kBugCases[] = {
    {"instruction_history_marker_mismatch", {"crafted/marker-mismatch"}, {"Qwen--Qwen3-0.6B"}},
    {"tool_result_under_assistant",
     {"crafted/result-under-assistant", "crafted/falcon3-style"},
     {"Qwen--Qwen3-0.6B", "crafted/result-without-role"}},
    {"tool_result_without_role",
     {"crafted/result-without-role"},
     {"mistralai--Mistral-7B-Instruct-v0.3", "crafted/falcon3-style"}},
    {"html_escaped_call", {"crafted/html-escaped-call"}, {"mistralai--Mistral-7B-Instruct-v0.3"}},
    {"html_escaped_tools", {"meetkai--functionary-medium-v3.1"}, {"crafted/html-escaped-call"}},
    {"html_escaped_content",
     {"crafted/html-escaped-content"},
     {"mistralai--Mistral-7B-Instruct-v0.3"}},
    {"duplicate_system_block",
     {"NousResearch--Hermes-2-Pro-Llama-3-8B--tool_use"},
     {"moonshotai--Kimi-K2-Instruct-0905"}},
    {"user_message_read_as_tool_result", {"Qwen--Qwen3-0.6B"}, {"Qwen--QwQ-32B"}},
};

fs::path golden_path(const std::string& stem) {
  return fs::path(CHATWIRE_DATA_DIR) / "goldens" / "probe" / (stem + ".json");
}

fs::path template_path(const std::string& stem) {
  if (stem.starts_with("crafted/"))
    return fs::path(CHATWIRE_DATA_DIR) / "goldens" / "probe" / (stem + ".jinja");
  return fs::path(CHATWIRE_DATA_DIR) / "templates" / (stem + ".jinja");
}

TEST(SeedFindings, OracleMeasurementReproducesThem) {
  for (const auto& f : kFindings) {
    std::ifstream in(golden_path(f.template_stem));
    ASSERT_TRUE(in) << f.template_stem;
    json p = json::parse(in);
    EXPECT_TRUE(f.holds(p)) << f.template_stem << ": " << f.what;
  }
}

TEST(SeedFindings, CppProbeReproducesThem) {
  for (const auto& f : kFindings) {
    auto profile = chatwire::probe::probe_file(template_path(f.template_stem));
    ASSERT_TRUE(profile.ok()) << f.template_stem << ": " << profile.error().to_string();
    EXPECT_TRUE(f.holds(to_json(*profile))) << f.template_stem << ": " << f.what;
  }
}

json golden(const std::string& stem) {
  std::ifstream in(golden_path(stem));
  return json::parse(in);
}

TEST(TemplateBugs, EachKindFoundWhereItIsAndNotWhereItIsNot) {
  for (const auto& c : kBugCases) {
    for (const char* stem : c.has) {
      EXPECT_TRUE(bug(golden(stem), c.kind)) << stem << " (oracle): " << c.kind;
      auto profile = chatwire::probe::probe_file(template_path(stem));
      ASSERT_TRUE(profile.ok()) << stem;
      EXPECT_TRUE(bug(to_json(*profile), c.kind)) << stem << " (C++): " << c.kind;
    }
    for (const char* stem : c.has_not) {
      EXPECT_FALSE(bug(golden(stem), c.kind)) << stem << " (oracle): " << c.kind;
      auto profile = chatwire::probe::probe_file(template_path(stem));
      ASSERT_TRUE(profile.ok()) << stem;
      EXPECT_FALSE(bug(to_json(*profile), c.kind)) << stem << " (C++): " << c.kind;
    }
  }
}

// Every kind the goldens report has a row above, and every bug carries rendered evidence.
TEST(TemplateBugs, EveryReportedKindIsCoveredAndHasEvidence) {
  std::set<std::string> kinds;
  for (const auto& c : kBugCases) kinds.insert(c.kind);
  fs::path dir = fs::path(CHATWIRE_DATA_DIR) / "goldens" / "probe";
  for (const fs::path& d : {dir, dir / "crafted", dir / "models"}) {
    for (const auto& e : fs::directory_iterator(d)) {
      if (e.path().extension() != ".json") continue;
      std::ifstream in(e.path());
      json p = json::parse(in);
      if (!p.contains("template_bugs")) continue;
      for (const auto& b : p["template_bugs"]) {
        EXPECT_TRUE(kinds.count(b["kind"].get<std::string>())) << e.path() << ": " << b["kind"];
        bool evidence = false;
        for (const char* key : {"rendered", "as_result", "header"})
          evidence |= b.contains(key) && b[key].is_string() && !b[key].get<std::string>().empty();
        EXPECT_TRUE(evidence) << e.path() << ": " << b.dump();
      }
    }
  }
}

}  // namespace
