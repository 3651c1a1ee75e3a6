// The first source document's findings (docs/seeds/000, the survey of 54 templates),
// checked on the templates of those models that are bundled here: once on the oracle's
// measurement (the goldens, so the method itself is checked) and once on the C++ probe.
// The template names appear only here, in the tests; the probe never looks at names.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "chatwire/probe.hpp"

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
    EXPECT_TRUE(f.holds(profile->to_json())) << f.template_stem << ": " << f.what;
  }
}

}  // namespace
