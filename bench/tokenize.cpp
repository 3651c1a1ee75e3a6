// Tokenizer throughput on ~1 MB of mixed text (load excluded): encode (cold: the per-thread word
// cache starts empty, as in a single oracle call; and warm), decode, and streaming decode one id at
// a time. encode_cold_json is encode_cold plus what `chatwire tokenize` does with the ids: the
// JSON array written through the command's writer (cli/ids_json.hpp) to /dev/null.
// scripts/bench-tokenize runs this and the oracle on the same text. Text: $CHATWIRE_BENCH_TEXT
// (written by scripts/bench-tokenize), else built from texts.json. Tokenizers:
// $CHATWIRE_BENCH_TOKENIZERS (comma-separated names), else the committed ones.
#include "chatwire/tokenize.hpp"

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ids_json.hpp"
#include "io.hpp"

namespace {

using chatwire::tokenize::DecodeStream;
using chatwire::tokenize::Tokenizer;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string& bench_text() {
  static const std::string text = [] {
    if (const char* path = std::getenv("CHATWIRE_BENCH_TEXT")) return read_file(path);
    // Fallback: the golden texts (JSON array) repeated to 1 MB.
    std::string raw = read_file(std::string(CHATWIRE_DATA_DIR) + "/goldens/tokenize/texts.json");
    std::string out;
    while (out.size() < (1u << 20)) out += raw;
    return out;
  }();
  return text;
}

std::string tokenizer_dir(const std::string& name) {
  for (std::string base : {std::string(CHATWIRE_DATA_DIR) + "/tokenizers/",
                           std::string(CHATWIRE_DATA_DIR) + "/tokenizers/fetched/"}) {
    if (std::filesystem::exists(base + name + "/tokenizer.json")) return base + name;
  }
  return {};
}

const Tokenizer* get(const std::string& name) {
  static std::map<std::string, std::optional<Tokenizer>> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    std::optional<Tokenizer> t;
    if (auto r = Tokenizer::load_dir(tokenizer_dir(name))) t = std::move(*r);
    it = cache.emplace(name, std::move(t)).first;
  }
  return it->second ? &*it->second : nullptr;
}

void encode_cold(benchmark::State& state, std::string name) {
  const Tokenizer* tok = get(name);
  if (!tok) return state.SkipWithError("tokenizer not found");
  // A second copy: the per-thread word cache is keyed by tokenizer, so alternating between two
  // copies makes every encode start with an empty cache.
  auto other = Tokenizer::load_dir(tokenizer_dir(name));
  const Tokenizer* pair[2] = {tok, &*other};
  const std::string& text = bench_text();
  std::size_t tokens = 0;
  std::size_t round = 0;
  std::vector<std::uint32_t> ids;
  for (auto _ : state) {
    ids = std::move(*pair[round++ % 2]->encode_ids(text));
    tokens = ids.size();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
  // FNV-1a of the ids (as scripts/bench-tokenize-oracle.mjs computes it), in two exact halves:
  // the script checks the ids against the oracle's without another program.
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint32_t id : ids) h = (h ^ id) * 0x100000001b3ull;
  state.counters["fnv_hi"] = static_cast<double>(h >> 32);
  state.counters["fnv_lo"] = static_cast<double>(h & 0xFFFFFFFFu);
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(tokens),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

// encode_cold, and the ids written as the command writes them (a JSON array through io::Writer,
// to /dev/null as scripts/bench-process runs the command): the in-process figure to hold the
// command's encode beyond its load against. Neither reads the input: the text is in memory.
void encode_cold_json(benchmark::State& state, std::string name) {
  const Tokenizer* tok = get(name);
  if (!tok) return state.SkipWithError("tokenizer not found");
  auto other = Tokenizer::load_dir(tokenizer_dir(name));
  const Tokenizer* pair[2] = {tok, &*other};
  const std::string& text = bench_text();
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return state.SkipWithError("cannot open /dev/null");
  std::size_t tokens = 0;
  std::size_t round = 0;
  {
    chatwire::cli::io::Writer out(fd);
    for (auto _ : state) {
      std::vector<std::uint32_t> ids = std::move(*pair[round++ % 2]->encode_ids(text));
      chatwire::cli::write_ids_json(out, ids);
      out.flush();
      tokens = ids.size();
    }
  }
  ::close(fd);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

void encode_warm(benchmark::State& state, std::string name) {
  const Tokenizer* tok = get(name);
  if (!tok) return state.SkipWithError("tokenizer not found");
  const std::string& text = bench_text();
  std::size_t tokens = 0;
  for (auto _ : state) tokens = tok->encode_ids(text)->size();
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(tokens),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void decode(benchmark::State& state, std::string name) {
  const Tokenizer* tok = get(name);
  if (!tok) return state.SkipWithError("tokenizer not found");
  auto ids = *tok->encode_ids(bench_text());
  for (auto _ : state) benchmark::DoNotOptimize(tok->decode(ids)->size());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bench_text().size()));
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(ids.size()),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void stream_decode(benchmark::State& state, std::string name) {
  const Tokenizer* tok = get(name);
  if (!tok) return state.SkipWithError("tokenizer not found");
  auto ids = *tok->encode_ids(bench_text());
  for (auto _ : state) {
    DecodeStream stream(*tok);
    std::size_t bytes = 0;
    for (std::uint32_t id : ids) bytes += stream.push(id)->size();
    bytes += stream.finish()->size();
    benchmark::DoNotOptimize(bytes);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bench_text().size()));
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(ids.size()),
                                               benchmark::Counter::kIsIterationInvariantRate);
}

int register_all() {
  std::string names = "gpt2,llama2,llama3_1,mistral7b_v01,qwen3,gemma3";
  if (const char* env = std::getenv("CHATWIRE_BENCH_TOKENIZERS")) names = env;
  std::stringstream ss(names);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (tokenizer_dir(name).empty()) continue;
    benchmark::RegisterBenchmark(("encode_cold/" + name).c_str(), encode_cold, name)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("encode_cold_json/" + name).c_str(), encode_cold_json, name)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("encode_warm/" + name).c_str(), encode_warm, name)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("decode/" + name).c_str(), decode, name)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("stream_decode/" + name).c_str(), stream_decode, name)
        ->Unit(benchmark::kMillisecond);
  }
  return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
