// The Endpoint from an installed chatwire: load a checkpoint directory, prepare an OpenAI
// request, read a generated tool call back.   consumer MODEL_DIR
#include <chatwire/endpoint.hpp>
#include <chatwire/version.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: consumer MODEL_DIR\n"), 2;
  auto endpoint = chatwire::endpoint::Endpoint::load(argv[1]);
  if (!endpoint) return std::fprintf(stderr, "%s\n", endpoint.error().to_string().c_str()), 1;
  auto prompt =
      endpoint->prepare(R"({"messages": [{"role": "user", "content": "Weather in Paris?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]})");
  if (!prompt) return std::fprintf(stderr, "%s\n", prompt.error().to_string().c_str()), 1;
  auto generation = endpoint->start(*prompt);
  if (!generation) return 1;
  generation->push_text(R"(<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call>)");
  generation->finish();
  const auto& calls = generation->message().tool_calls;
  std::printf("chatwire %s: %zu prompt tokens, %zu call(s): %s %s\n", chatwire::kVersion,
              prompt->ids.size(), calls.size(), calls.empty() ? "" : calls[0].name.c_str(),
              calls.empty() ? "" : calls[0].arguments.c_str());
  return calls.size() == 1 ? 0 : 1;
}
