// libFuzzer target: a response template and model output from the input (byte 0 seeds the
// chunking, then the spec's JSON text, a NUL, and the output). Loading must fail cleanly or
// succeed; a loaded template must give the same result fed whole and fed in random chunks: the
// same message, or an error of the same type; the events must be well formed and each region's
// chunks must concatenate to the same bytes. Any difference aborts.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "chatwire/response_json.hpp"

namespace {

namespace response = chatwire::response;

void check(bool ok) {
  if (!ok) std::abort();
}

struct Run {
  std::optional<response::Json> message;
  std::optional<std::string> error_type;
  std::map<std::string, std::string> chunks;
};

Run run(const response::Template& t, std::string_view output,
        const std::vector<std::size_t>& cuts) {
  Run r;
  auto parser = response::Parser::create(t, std::string_view());
  if (!parser) {
    r.error_type = parser.error().type;
    return r;
  }
  std::optional<std::string> open;
  const auto take = [&](const std::vector<response::Event>& events) {
    for (const auto& e : events) {
      switch (e.kind) {
        case response::Event::Kind::kOpen:
          check(!open);
          open = e.field;
          break;
        case response::Event::Kind::kChunk:
          check(open && *open == e.field);
          r.chunks[e.field] += e.text;
          break;
        case response::Event::Kind::kClose:
          check(open && *open == e.field);
          open.reset();
          break;
      }
    }
  };
  take(parser->initial_events());
  std::size_t start = 0;
  for (std::size_t cut : cuts) {
    auto events = parser->feed(output.substr(start, cut - start));
    if (!events) {
      r.error_type = events.error().type;
      return r;
    }
    take(*events);
    start = cut;
  }
  auto done = parser->finalize();
  if (!done) {
    r.error_type = done.error().type;
    return r;
  }
  take(done->events);
  check(!open);
  r.message = done->message;
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t nul = rest.find('\0');
  if (nul == std::string_view::npos) return 0;
  response::Limits limits;
  limits.regex_match_limit = 100000;  // a slow pattern is a LimitError, not a fuzzer timeout
  limits.max_spec_bytes = 8192;
  auto tmpl = response::Template::from_json_text(rest.substr(0, nul), limits);
  if (!tmpl) return 0;
  const std::string_view output = rest.substr(nul + 1);
  const Run whole = run(*tmpl, output, {output.size()});
  std::mt19937 rng(data[0]);
  std::vector<std::size_t> cuts;
  for (std::size_t at = 0; at < output.size();) {
    at = std::min(output.size(), at + std::uniform_int_distribution<std::size_t>(0, 9)(rng));
    cuts.push_back(at);
  }
  cuts.push_back(output.size());
  const Run chunked = run(*tmpl, output, cuts);
  check(whole.error_type == chunked.error_type);
  check(whole.message.has_value() == chunked.message.has_value());
  if (whole.message) {
    check(whole.message->dump() == chunked.message->dump());
    check(whole.chunks == chunked.chunks);
  }
  return 0;
}
