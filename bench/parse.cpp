// Output parser throughput: one-shot and 1-byte streaming on outputs of 10 KB, 100 KB and 1 MB
// whose bulk is one long string argument (a model writing a file). The time per byte must stay
// flat as the output grows (linear total work), in every syntax family. One-shot also on 16 MB:
// the very outputs `scripts/bench-process` runs `chatwire parse` on, to compare the command with
// the library (a warm loop: each iteration builds a fresh message, on pages the allocator has
// already had).
//
// BM_OneShotToJson is the command's work without the process and without reading the input:
// the one-shot parse of those 16 MB outputs and the message written as the JSON text the
// command prints, by the command's own writer (cli::write_message of cli/json_writer.hpp into a
// cli::io::Writer; the library's parse::message_to_json_text builds an nlohmann value and dumps
// it, which is slower and not what the command does). Like the command under bench-process, the
// writer's 64 KB blocks go to /dev/null.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "chatwire/parse_json.hpp"
#include "io.hpp"           // cli/: the command's buffered writer
#include "json_writer.hpp"  // cli/: the command's message writer
#include "util/json_escape.hpp"

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

// The outputs of scripts/bench-process's bench_parse, byte for byte (a Python generator: its
// lengths count code points, and the body line holds one two-byte 'ï'). The body is 16,000,000
// code points of the line; hermes and qwen3_coder take the prefix of it that the script's
// fitted() settles on (the output at most 16,000,000 bytes, so that the call stays within the
// default max_held_bytes), think is 8,000,000 code points of it twice.
std::pair<std::string, std::string> process_output(int family) {
  static const std::string line =
      "    if (value == \"x\\\\y\") { total += 42; }  // naïve check, ok\n";
  std::vector<std::size_t> at;  // at[i]: byte offset of the line's i-th code point
  for (std::size_t i = 0; i < line.size(); ++i)
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) at.push_back(i);
  at.push_back(line.size());
  const std::size_t line_points = at.size() - 1;
  auto body = [&](std::size_t points) {  // body[:points]
    std::string out;
    out.reserve(points / line_points * line.size() + line.size());
    for (std::size_t i = 0; i < points / line_points; ++i) out += line;
    out.append(line, 0, at[points % line_points]);
    return out;
  };
  auto json_string = [](const std::string& s) {  // json.dumps(s, ensure_ascii=False)
    std::string out(s.size() * 6 + 18, '\0');
    out[0] = '"';
    std::size_t n = 1 + chatwire::util::escape_json_into(out.data() + 1, s);
    out[n++] = '"';
    out.resize(n);
    return out;
  };
  auto fitted = [&](auto make) {
    constexpr std::size_t kMax = 16'000'000;
    std::size_t n = 16'000'000;
    for (std::string text = make(body(n)); text.size() > kMax; text = make(body(n)))
      n -= std::max<std::size_t>(1, (text.size() - kMax) / 2);
    return make(body(n));
  };
  switch (family) {
    case 0:
      return {"hermes", fitted([&](const std::string& b) {
                return "Writing the file.\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": "
                       "{\"path\": \"src/main.cpp\", \"content\": " +
                       json_string(b) + "}}\n</tool_call>";
              })};
    case 1:
      return {"qwen3_coder", fitted([](const std::string& b) {
                return "<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/main.cpp\n"
                       "</parameter>\n<parameter=content>\n" +
                       b + "\n</parameter>\n</function>\n</tool_call>";
              })};
    default: {
      const std::string half = body(8'000'000);
      return {"think", "<think>" + half + "</think>" + half};
    }
  }
}

// The output a benchmark's (family, bytes) arguments name: 16,000,000 bytes are bench-process's.
std::pair<std::string, std::string> output_for(const benchmark::State& state) {
  const int family = static_cast<int>(state.range(0));
  if (state.range(1) == 16'000'000) return process_output(family);
  return make_output(family, state.range(1));
}

const parse::Json& tools() {
  static const parse::Json t = parse::Json::parse(R"([{"type": "function", "function": {
      "name": "write_file", "parameters": {"type": "object", "properties": {
      "path": {"type": "string"}, "content": {"type": "string"}}}}}])");
  return t;
}

void BM_OneShot(benchmark::State& state) {
  auto [dialect, text] = output_for(state);
  for (auto _ : state) {
    auto result = parse::parse(text, dialect, tools());
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.SetLabel(dialect);
}

// What `chatwire parse --dialect D --tools tools.json < output > /dev/null` does after reading
// its input: the one-shot parse by the dialect's syntax, then cli::write_message and the newline
// through the command's writer. Bytes are the output's (input) bytes, as bench-process counts.
void BM_OneShotToJson(benchmark::State& state) {
  auto [dialect, text] = output_for(state);
  const auto syntax = parse::Syntax::named(dialect);
  if (!syntax) {
    state.SkipWithError("unknown dialect");
    return;
  }
  std::size_t json_bytes = 0;  // the message JSON and its newline, as the command prints it
  if (auto once = parse::parse(text, *syntax, tools()))
    json_bytes = parse::message_to_json_text(once->message).size() + 1;
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  {
    chatwire::cli::io::Writer out(fd);
    for (auto _ : state) {
      auto result = parse::parse(text, *syntax, tools());
      if (!result) {
        state.SkipWithError("parse failed");
        break;
      }
      chatwire::cli::write_message(out, result->message);
      out.put('\n');
      out.flush();
    }
  }
  ::close(fd);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["input_bytes"] = static_cast<double>(text.size());
  state.counters["json_bytes"] = static_cast<double>(json_bytes);
  state.SetLabel(std::string(dialect) + ", in-process warm loop, message JSON to /dev/null");
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
BENCHMARK(BM_OneShotToJson)
    ->Args({0, 16'000'000})
    ->Args({1, 16'000'000})
    ->Args({2, 16'000'000})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stream1Byte)->Apply(sizes)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
