// `chatwire parse`: model output -> OpenAI assistant message (or streaming deltas), and a JSON
// Lines batch mode that also checks chunking invariance.
#include "chatwire/parse.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include "commands.hpp"

namespace chatwire::cli {

namespace {

using parse::Json;

std::string dump(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace);
}

// The message assembled from deltas, the way an OpenAI streaming client assembles it.
parse::Message assemble(const std::vector<parse::Delta>& deltas) {
  parse::Message m;
  for (const auto& d : deltas) {
    m.content += d.content;
    m.reasoning_content += d.reasoning_content;
    for (const auto& t : d.tool_calls) {
      if (t.index >= m.tool_calls.size()) m.tool_calls.resize(t.index + 1);
      auto& call = m.tool_calls[t.index];
      if (!t.id.empty()) call.id = t.id;
      if (!t.name.empty()) call.name = t.name;
      call.arguments += t.arguments;
    }
  }
  return m;
}

bool same(const parse::Message& a, const parse::Message& b) {
  if (a.content != b.content || a.reasoning_content != b.reasoning_content ||
      a.tool_calls.size() != b.tool_calls.size())
    return false;
  for (std::size_t i = 0; i < a.tool_calls.size(); ++i) {
    const auto &x = a.tool_calls[i], &y = b.tool_calls[i];
    if (x.id != y.id || x.name != y.name || x.arguments != y.arguments) return false;
  }
  return true;
}

Result<Json> read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"OSError", "cannot read " + path, 0, 0, path};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error{"ValueError", "not valid JSON", 0, 0, path};
  return j;
}

bool parse_options(const Json& o, parse::Options& options, std::string& error) {
  if (o.is_null()) return true;
  if (!o.is_object()) {
    error = "options must be an object";
    return false;
  }
  if (auto it = o.find("reasoning_prefilled"); it != o.end()) {
    if (!it->is_boolean()) return error = "options.reasoning_prefilled must be a boolean", false;
    options.reasoning_prefilled = it->get<bool>();
  }
  if (auto it = o.find("enable_thinking"); it != o.end() && !it->is_null()) {
    if (!it->is_boolean()) return error = "options.enable_thinking must be a boolean", false;
    options.enable_thinking = it->get<bool>();
  }
  return true;
}

Json batch_line(const std::string& line) {
  Json out = Json::object();
  Json req = Json::parse(line, nullptr, false);
  auto fail = [&out](std::string type, std::string message) {
    out["ok"] = false;
    out["error"] = Json{{"type", std::move(type)}, {"message", std::move(message)}};
    return out;
  };
  if (req.is_discarded() || !req.is_object()) {
    out["id"] = nullptr;
    return fail("ValueError", "request line is not a JSON object");
  }
  out["id"] = req.contains("id") ? req["id"] : Json(nullptr);
  if (!req.contains("dialect") || !req["dialect"].is_string())
    return fail("ValueError", "dialect: missing or not a string");
  if (!req.contains("input") || !req["input"].is_string())
    return fail("ValueError", "input: missing or not a string");
  parse::Options options;
  std::string error;
  if (!parse_options(req.value("options", Json()), options, error))
    return fail("ValueError", error);
  Json tools = req.value("tools", Json());
  std::string dialect = req["dialect"].get<std::string>();
  const std::string& input = req["input"].get_ref<const std::string&>();
  auto result = parse::parse(input, dialect, tools, options);
  if (!result)
    return fail(result.error().type, result.error().path + ": " + result.error().message);
  out["ok"] = true;
  out["message"] = parse::message_to_json(result->message);
  out["warnings"] = parse::warnings_to_json(result->warnings);
  bool consistent = true;
  if (auto it = req.find("chunk_sizes"); it != req.end() && it->is_array()) {
    for (const auto& size_json : *it) {
      if (!size_json.is_number_unsigned() || size_json.get<std::size_t>() == 0)
        return fail("ValueError", "chunk_sizes: each must be a positive integer");
      std::size_t size = size_json.get<std::size_t>();
      auto stream = parse::StreamParser::create(dialect, tools, options);
      std::vector<parse::Delta> deltas;
      for (std::size_t i = 0; i < input.size(); i += size) {
        auto d = stream->feed(std::string_view(input).substr(i, size));
        deltas.insert(deltas.end(), d.begin(), d.end());
      }
      auto d = stream->finish();
      deltas.insert(deltas.end(), d.begin(), d.end());
      if (!same(assemble(deltas), result->message)) consistent = false;
    }
  }
  out["stream_consistent"] = consistent;
  return out;
}

}  // namespace

void add_parse(CLI::App& root, int& exit_code) {
  auto* cmd = root.add_subcommand(
      "parse", "Parse model output (stdin) into an OpenAI assistant message or streaming deltas");
  struct Args {
    std::string dialect, tools_path;
    bool reasoning_prefilled = false, batch = false, list = false;
    std::string thinking;
    std::size_t stream = 0;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("--dialect", args->dialect, "output dialect (see --list)");
  cmd->add_option("--tools", args->tools_path,
                  "JSON file: the request's tools array (types XML-style arguments)");
  cmd->add_flag("--reasoning-prefilled", args->reasoning_prefilled,
                "the prompt already opened the reasoning block");
  cmd->add_option("--thinking", args->thinking, "on|off: thinking requested or disabled")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--stream", args->stream,
                  "feed N-byte chunks and print the deltas as JSON lines");
  cmd->add_flag(
      "--batch", args->batch,
      "JSON lines in: {id, dialect, input, tools?, options?, chunk_sizes?}; one result per line");
  cmd->add_flag("--list", args->list, "print the dialect table");
  cmd->callback([args, &exit_code] {
    if (args->list) {
      for (const auto& d : parse::dialects())
        std::printf("%-18s %.*s\n", std::string(d.name).c_str(), static_cast<int>(d.summary.size()),
                    d.summary.data());
      exit_code = 0;
      return;
    }
    if (args->batch) {
      std::string line;
      while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        std::string out = dump(batch_line(line));
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fputc('\n', stdout);
      }
      exit_code = 0;
      return;
    }
    if (args->dialect.empty()) {
      std::fprintf(stderr, "chatwire parse: --dialect is required (or --batch / --list)\n");
      exit_code = 2;
      return;
    }
    Json tools;
    if (!args->tools_path.empty()) {
      auto t = read_json_file(args->tools_path);
      if (!t) {
        std::fprintf(stderr, "chatwire parse: %s\n", t.error().to_string().c_str());
        exit_code = 1;
        return;
      }
      tools = std::move(*t);
    }
    parse::Options options;
    options.reasoning_prefilled = args->reasoning_prefilled;
    if (!args->thinking.empty()) options.enable_thinking = args->thinking == "on";
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    auto stream = parse::StreamParser::create(args->dialect, tools, options);
    if (!stream) {
      std::fprintf(stderr, "chatwire parse: %s\n", stream.error().to_string().c_str());
      exit_code = 1;
      return;
    }
    auto print_deltas = [](const std::vector<parse::Delta>& deltas) {
      for (const auto& d : deltas) {
        std::string out = dump(parse::delta_to_json(d));
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fputc('\n', stdout);
      }
    };
    std::size_t size = args->stream ? args->stream : std::max<std::size_t>(input.size(), 1);
    for (std::size_t i = 0; i < input.size(); i += size) {
      auto d = stream->feed(std::string_view(input).substr(i, size));
      if (args->stream) print_deltas(d);
    }
    auto d = stream->finish();
    if (args->stream) {
      print_deltas(d);
    } else {
      std::string out = dump(parse::message_to_json(stream->message()));
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fputc('\n', stdout);
    }
    for (const auto& w : stream->warnings())
      std::fprintf(stderr, "warning: %s at byte %zu: %s\n", w.code.c_str(), w.offset,
                   w.message.c_str());
    exit_code = 0;
  });
}

}  // namespace chatwire::cli
