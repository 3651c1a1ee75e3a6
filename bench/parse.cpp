// Output parser throughput: one-shot and 1-byte streaming on outputs of 10 KB, 100 KB and 1 MB
// whose bulk is one long string argument (a model writing a file). The time per byte must stay
// flat as the output grows (linear total work), in every syntax family. One-shot also on 16 MB,
// the size `scripts/bench-process` runs the command on, to compare the command with the library
// (a warm loop: each iteration builds a fresh message, on pages the allocator has already had).
#include <benchmark/benchmark.h>

#include <string>

#include "chatwire/parse_json.hpp"

namespace {

namespace parse = chatwire::parse;

// File-like text: lines of code with quotes, backslashes and non-ASCII, as models write.
std::string file_body(std::size_t bytes) {
  static const std::string line =
      "    if (value == \"x\\\\y\") { total += 42; }  // naïve check, ok\n";
  std::string out;
  while (out.size() < bytes) out += line;
  out.resize(bytes);
  return out;
}

std::string json_escape(const std::string& s) {
  return parse::Json(s).dump();
}

// dialect, output text
std::pair<std::string, std::string> make_output(int family, std::size_t bytes) {
  std::string body = file_body(bytes);
  switch (family) {
    case 0:  // JSON arguments inside markers
      return {"hermes",
              "Writing the file.\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": "
              "{\"path\": \"src/main.cpp\", \"content\": " +
                  json_escape(body) + "}}\n</tool_call>"};
    case 1:  // XML parameters, string typed: streamed as it arrives
      return {"qwen3_coder",
              "<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/main.cpp\n"
              "</parameter>\n<parameter=content>\n" +
                  body + "\n</parameter>\n</function>\n</tool_call>"};
    default:  // reasoning then content
      return {"think", "<think>" + body + "</think>" + body};
  }
}

const parse::Json& tools() {
  static const parse::Json t = parse::Json::parse(R"([{"type": "function", "function": {
      "name": "write_file", "parameters": {"type": "object", "properties": {
      "path": {"type": "string"}, "content": {"type": "string"}}}}}])");
  return t;
}

void BM_OneShot(benchmark::State& state) {
  auto [dialect, text] = make_output(static_cast<int>(state.range(0)), state.range(1));
  for (auto _ : state) {
    auto result = parse::parse(text, dialect, tools());
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.SetLabel(dialect);
}

void BM_Stream1Byte(benchmark::State& state) {
  auto [dialect, text] = make_output(static_cast<int>(state.range(0)), state.range(1));
  for (auto _ : state) {
    auto stream = parse::stream_parser(dialect, tools());
    std::size_t deltas = 0;
    for (char c : text) deltas += stream->feed(std::string_view(&c, 1)).size();
    deltas += stream->finish().size();
    benchmark::DoNotOptimize(deltas);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.SetLabel(dialect);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int family : {0, 1, 2})
    for (int64_t bytes : {10'000, 100'000, 1'000'000}) b->Args({family, bytes});
}

void sizes_with_16mb(benchmark::internal::Benchmark* b) {
  sizes(b);
  for (int family : {0, 1, 2}) b->Args({family, 16'000'000});
}

BENCHMARK(BM_OneShot)->Apply(sizes_with_16mb)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Stream1Byte)->Apply(sizes)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
