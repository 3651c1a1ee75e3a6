// Render benchmark (issue 2 §4): popular chat templates × a short, a tool-calling and an
// 80-turn conversation, compile and context parsing excluded: each iteration is one
// Template::render of an already-compiled template with an already-parsed context.
//
// The workload is chosen from the committed goldens (data/goldens/render): for each
// template and each workload kind, the first conversation of that kind's preference list
// that the oracle renders. scripts/bench-render asks this binary for the chosen pairs
// (--list-pairs), times the oracle on the same pairs and prints the comparison table.
//
// With --micro, the pairs are instead the one-construct templates of data/bench/micro over
// its 200 messages (an empty loop, static text, {{ m.role }}, an if on a comparison, ...):
// the cost of each construct apart from whole templates.
//
//   build-*/bench_render [--micro] [--list-pairs] [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chatwire/jinja.hpp"
#include "chatwire/value.hpp"

namespace {

constexpr const char* kFrozenNow = "2026-08-19T10:00:00";

// The templates issue 2 names (Qwen3, Llama 3.1, DeepSeek-R1, Mistral Small 3.2, gpt-oss,
// Gemma 3, Kimi K2, GLM-4.5, MiniMax-M2, Seed-OSS, Hermes, Granite 3.3, Phi-4-mini,
// SmolLM3), as file stems of data/templates/.
const char* const kTemplates[] = {
    "Qwen--Qwen3-0.6B",
    "meta-llama--Llama-3.1-8B-Instruct",
    "deepseek-ai--DeepSeek-R1",
    "mistralai--Mistral-Small-3.2-24B-Instruct-2506",
    "openai--gpt-oss-120b",
    "google--gemma-3-it",
    "moonshotai--Kimi-K2-Instruct-0905",
    "zai-org--GLM-4.5-Air",
    "MiniMaxAI--MiniMax-M2",
    "ByteDance-Seed--Seed-OSS-36B-Instruct",
    "NousResearch--Hermes-2-Pro-Llama-3-8B--tool_use",
    "ibm-granite--granite-3.3-2b-instruct",
    "microsoft--Phi-4-mini-instruct",
    "HuggingFaceTB--SmolLM3-3B",
};

// Workload kinds and the conversations that can stand for each, best first (a template
// that rejects the first one, e.g. tool messages in Gemma 3, gets the next).
struct Workload {
  const char* kind;
  std::vector<const char*> conversations;
};
const std::vector<Workload>& workloads() {
  static const std::vector<Workload> table = {
      {"short", {"basic", "no_system", "tools_only_defs"}},
      {"tools",
       {"tools_dict_args", "tools_id9", "tools_string_args", "tools_flat", "parallel_calls",
        "tools_only_defs"}},
      {"long", {"long_80_turns"}},
  };
  return table;
}

std::string read_file(const std::string& path) {
  std::string text;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buffer[1 << 16];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
    std::fclose(f);
  }
  return text;
}

std::string data(const std::string& relative) {
  return std::string(CHATWIRE_DATA_DIR) + "/" + relative;
}

// A template or conversation named with a '/' is a path under data/ (the micro set);
// otherwise a file stem of data/templates/ or data/conversations/.
struct Pair {
  std::string template_stem, kind, conversation;
  // render/<template>/<kind>, or micro/<construct> for the micro set.
  std::string name() const {
    if (kind == "micro") return "micro/" + template_stem.substr(template_stem.rfind('/') + 1);
    return "render/" + template_stem + "/" + kind;
  }
};

// The file of a Pair's template or conversation (see above).
std::string data_file(const std::string& folder, const std::string& name, const char* suffix) {
  return data((name.find('/') == std::string::npos ? folder + "/" + name : name) + suffix);
}

// The micro set: every template of data/bench/micro over its messages_200.json.
std::vector<Pair> micro_pairs() {
  std::vector<Pair> pairs;
  const std::filesystem::path dir = data("bench/micro");
  std::vector<std::string> stems;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".jinja") stems.push_back(entry.path().stem().string());
  std::sort(stems.begin(), stems.end());
  for (const auto& stem : stems)
    pairs.push_back({"bench/micro/" + stem, "micro", "bench/micro/messages_200"});
  return pairs;
}

// The pairs to measure; templates or kinds without an oracle-rendered conversation are
// reported on stderr and left out.
std::vector<Pair> choose_pairs() {
  std::vector<Pair> pairs;
  for (const char* stem : kTemplates) {
    const std::string goldens = read_file(data("goldens/render/" + std::string(stem) + ".jsonl"));
    if (goldens.empty()) {
      std::fprintf(stderr, "bench_render: no template/goldens for %s\n", stem);
      continue;
    }
    std::vector<std::string> oracle_renders;
    std::size_t at = 0;
    while (at < goldens.size()) {
      std::size_t end = goldens.find('\n', at);
      if (end == std::string::npos) end = goldens.size();
      const auto line = nlohmann::json::parse(goldens.substr(at, end - at), nullptr, false);
      if (!line.is_discarded() && line.value("ok", false))
        oracle_renders.push_back(line.value("conversation", ""));
      at = end + 1;
    }
    for (const auto& workload : workloads()) {
      const char* chosen = nullptr;
      for (const char* candidate : workload.conversations) {
        for (const auto& ok : oracle_renders) {
          if (ok == candidate) chosen = candidate;
        }
        if (chosen) break;
      }
      if (chosen) {
        pairs.push_back({stem, workload.kind, chosen});
      } else {
        std::fprintf(stderr, "bench_render: %s has no %s conversation the oracle renders\n", stem,
                     workload.kind);
      }
    }
  }
  return pairs;
}

struct Prepared {
  std::unique_ptr<chatwire::jinja::Template> compiled;
  chatwire::Value context;
  std::string error;  // why this pair cannot be measured
};

Prepared prepare(const Pair& pair) {
  Prepared p;
  auto compiled = chatwire::jinja::Template::compile(
      read_file(data_file("templates", pair.template_stem, ".jinja")));
  if (!compiled.ok()) {
    p.error = "compile: " + compiled.error().to_string();
    return p;
  }
  p.compiled = std::make_unique<chatwire::jinja::Template>(std::move(compiled.value()));
  auto context =
      chatwire::parse_json(read_file(data_file("conversations", pair.conversation, ".json")));
  if (!context.ok()) {
    p.error = "context: " + context.error().to_string();
    return p;
  }
  p.context = std::move(context.value());
  return p;
}

void render_loop(benchmark::State& state, const Prepared& prepared) {
  if (!prepared.error.empty()) {
    state.SkipWithError(prepared.error.c_str());
    return;
  }
  chatwire::jinja::RenderOptions options;
  options.now = kFrozenNow;
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto result = prepared.compiled->render(prepared.context, options);
    if (!result.ok()) {
      state.SkipWithError(("render: " + result.error().to_string()).c_str());
      break;
    }
    bytes = result->output.size();
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  state.counters["output_bytes"] = static_cast<double>(bytes);
}

}  // namespace

int main(int argc, char** argv) {
  bool list_pairs = false, micro = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--list-pairs") == 0) {
      list_pairs = true;
    } else if (std::strcmp(argv[i], "--micro") == 0) {
      micro = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  const std::vector<Pair> pairs = micro ? micro_pairs() : choose_pairs();
  if (list_pairs) {  // one line per benchmark: name, template stem, conversation
    for (const auto& pair : pairs) {
      std::printf("%s\t%s\t%s\n", pair.name().c_str(), pair.template_stem.c_str(),
                  pair.conversation.c_str());
    }
    return 0;
  }
  // Prepared state outlives the benchmarks (RunSpecifiedBenchmarks runs before it dies).
  std::vector<std::shared_ptr<Prepared>> prepared;
  for (const auto& pair : pairs) {
    auto p = std::make_shared<Prepared>(prepare(pair));
    prepared.push_back(p);
    const std::string name = pair.name();
    benchmark::RegisterBenchmark(name.c_str(), [p](benchmark::State& state) {
      render_loop(state, *p);
    })->Unit(benchmark::kMicrosecond);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
