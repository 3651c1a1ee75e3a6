// `chatwire parse`: model output -> OpenAI assistant message (or streaming deltas), and a JSON
// Lines batch mode that also checks chunking invariance.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "chatwire/parse_json.hpp"
#include "chatwire/readback_json.hpp"
#include "commands.hpp"
#include "io.hpp"
#include "json_writer.hpp"
#include "parse_response.hpp"
#include "util/utf8.hpp"

namespace chatwire::cli {

namespace {

using parse::Json;

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

Result<Json> read_json_file(const std::string& path, std::size_t max_bytes) {
  std::string error;
  auto text = io::read_file(path, max_bytes, error);
  if (!text) return Error{"OSError", error, 0, 0, path};
  try {
    return Json::parse(*text);
  } catch (const Json::parse_error& e) {
    // nlohmann's message names the line and column.
    return Error{"ValueError", std::string("not valid JSON: ") + e.what(), 0, 0, path};
  }
}

Json batch_line(std::string_view line) {
  Json out = Json::object();
  Json req = Json::parse(line, nullptr, false);
  auto fail = [&out](std::string type, std::string message) {
    out["ok"] = false;
    out["error"] = Json{{"type", std::move(type)}, {"message", std::move(message)}};
    return out;
  };
  if (req.is_discarded() || !req.is_object()) {
    out["id"] = nullptr;
    // Where the line goes wrong, as the other batch modes say it.
    if (const std::size_t bad = util::utf8::first_invalid(line); bad != line.size())
      return fail("ValueError", "request line is not valid UTF-8 at byte " + std::to_string(bad));
    if (req.is_discarded()) {
      try {
        const Json again = Json::parse(line);  // only for its error message
      } catch (const Json::parse_error& e) {
        return fail("ValueError", std::string("request line is not valid JSON: ") + e.what());
      }
    }
    return fail("ValueError", "request line is not a JSON object");
  }
  out["id"] = req.contains("id") ? req["id"] : Json(nullptr);
  if (!req.contains("dialect") || !req["dialect"].is_string())
    return fail("ValueError", "dialect: missing or not a string");
  if (!req.contains("input") || !req["input"].is_string())
    return fail("ValueError", "input: missing or not a string");
  auto parsed_options = parse::options_from_json(req.value("options", Json()));
  if (!parsed_options)
    return fail(parsed_options.error().type,
                parsed_options.error().path + ": " + parsed_options.error().message);
  const parse::Options& options = *parsed_options;
  // chunk_sizes is checked before anything is parsed: a bad one fails the line, not half of it.
  const auto chunk_sizes = req.find("chunk_sizes");
  if (chunk_sizes != req.end() && !chunk_sizes->is_null()) {
    if (!chunk_sizes->is_array())
      return fail("ValueError", "chunk_sizes: expected a list of positive integers");
    for (std::size_t i = 0; i < chunk_sizes->size(); ++i)
      if (!(*chunk_sizes)[i].is_number_unsigned() || (*chunk_sizes)[i].get<std::size_t>() == 0)
        return fail("ValueError",
                    "chunk_sizes[" + std::to_string(i) + "]: expected a positive integer");
  }
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
  if (chunk_sizes != req.end() && chunk_sizes->is_array()) {
    for (const auto& size_json : *chunk_sizes) {
      std::size_t size = size_json.get<std::size_t>();
      auto stream = parse::stream_parser(dialect, tools, options);
      std::vector<parse::Delta> deltas;
      for (std::size_t i = 0; i < input.size(); i += size) {
        auto d = stream->feed(std::string_view(input).substr(i, size));
        deltas.insert(deltas.end(), d.begin(), d.end());
      }
      auto d = stream->finish();
      deltas.insert(deltas.end(), d.begin(), d.end());
      // The same message, and the same warnings (each at the same offset).
      if (!same(assemble(deltas), result->message) ||
          parse::warnings_to_json(stream->warnings()) != out["warnings"])
        consistent = false;
    }
  }
  out["stream_consistent"] = consistent;
  return out;
}

}  // namespace

// The first of `names` given on the command line, or "".
std::string first_given(const CLI::App& cmd, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (cmd.count(name) > 0) return name;
  return {};
}

// The options a parser (a dialect, or one derived from a template) reads and a transformers
// response template does not.
constexpr std::initializer_list<const char*> kParserOnly = {"--dialect",
                                                            "--template",
                                                            "--explain",
                                                            "--strict",
                                                            "--thinking",
                                                            "--unknown-tools",
                                                            "--reasoning-prefilled",
                                                            "--no-separate-reasoning"};

// An option given where the way parse runs does not read it (refused, not ignored).
std::string refused_option(const CLI::App& cmd, bool list, bool batch, bool response_template,
                           bool derived) {
  if (list || batch) {
    std::vector<std::string_view> reads = {"--list", "--batch"};
    if (batch) reads.push_back("--max-line-bytes");
    const std::string unread = first_unread_option(cmd, reads);
    return unread.empty() ? unread : unread + " is not used with " + (list ? "--list" : "--batch");
  }
  if (response_template) {
    if (auto given = first_given(cmd, kParserOnly); !given.empty())
      return given + " is not used with a response template (--response-template)";
    if (cmd.count("--max-line-bytes") > 0) return "--max-line-bytes is read with --batch";
    return {};
  }
  if (cmd.count("--explain") > 0 && !derived) return "--explain needs --template or --model";
  if (cmd.count("--max-line-bytes") > 0) return "--max-line-bytes is read with --batch";
  return {};
}

void add_parse(CLI::App& root, int& exit_code) {
  auto* cmd = root.add_subcommand(
      "parse", "Parse model output (stdin) into an OpenAI assistant message or streaming deltas");
  struct Args {
    std::string dialect, tools_path, template_path, model_dir;
    std::string response_template_path, prefix_path;
    bool explain = false;
    bool reasoning_prefilled = false, batch = false, list = false, strict = false,
         no_separate_reasoning = false;
    std::string thinking, unknown_tools;
    std::size_t stream = 0;
    std::size_t max_input_bytes = io::kDefaultMaxInputBytes;  // the model output on stdin
    std::size_t max_line_bytes = std::size_t{64} << 20;       // one --batch request line
  };
  auto args = std::make_shared<Args>();
  // One source of the parser: the others would be ignored or mixed (usage error, exit 2).
  auto* dialect = cmd->add_option("--dialect", args->dialect, "output dialect (see --list)");
  auto* tmpl = cmd->add_option(
      "--template", args->template_path,
      "the parser comes from this chat template (derived and proven by a round trip)");
  auto* model = cmd->add_option("--model", args->model_dir,
                                "the parser comes from this model directory's chat template");
  dialect->excludes(tmpl)->excludes(model);
  tmpl->excludes(model);
  cmd->add_option(
      "--response-template", args->response_template_path,
      "parse with this transformers response template (a JSON file: the spec, or a "
      "tokenizer_config.json holding one); --model uses the directory's when it has one");
  cmd->add_option("--prefix", args->prefix_path,
                  "with a response template: file holding the prompt sent before generation");
  cmd->add_flag("--explain", args->explain,
                "with --template/--model: print the parser choice (JSON) instead of parsing");
  cmd->add_option("--tools", args->tools_path,
                  "JSON file: the request's tools array (types XML-style arguments)");
  cmd->add_flag("--reasoning-prefilled", args->reasoning_prefilled,
                "the prompt already opened the reasoning block");
  cmd->add_flag("--strict", args->strict,
                "a malformed call is an error (exit 1, its byte offset and family on stderr) "
                "instead of content with a warning");
  cmd->add_option("--thinking", args->thinking, "on|off: thinking requested or disabled")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_flag("--no-separate-reasoning", args->no_separate_reasoning,
                "leave the reasoning block in the content as written (a server without a "
                "reasoning parser)");
  cmd->add_option("--unknown-tools", args->unknown_tools,
                  "forward|drop: calls to functions --tools does not declare are returned, or "
                  "reported in an unknown_tool warning instead (default: the dialect's)")
      ->check(CLI::IsMember({"forward", "drop"}));
  cmd->add_option("--stream", args->stream, "feed N-byte chunks and print the deltas as JSON lines")
      ->check(non_negative());
  cmd->add_flag(
      "--batch", args->batch,
      "JSON lines in: {id, dialect, input, tools?, options?, chunk_sizes?}; one result per line");
  cmd->add_flag("--list", args->list, "print the dialect table");
  cmd->add_option("--max-input-bytes", args->max_input_bytes,
                  "longest model output read from standard input (and --tools file)")
      ->capture_default_str()
      ->check(non_negative());
  cmd->add_option("--max-line-bytes", args->max_line_bytes,
                  "with --batch: longest request line; a longer one gets {\"ok\": false}")
      ->capture_default_str()
      ->check(non_negative());
  cmd->callback([args, cmd, &exit_code] {
    const bool derived = !args->template_path.empty() || !args->model_dir.empty();
    if (const std::string refused = refused_option(*cmd, args->list, args->batch,
                                                   !args->response_template_path.empty(), derived);
        !refused.empty()) {
      std::fprintf(stderr, "chatwire parse: %s\n", refused.c_str());
      exit_code = 2;
      return;
    }
    if (args->list) {
      for (const auto& d : parse::dialects()) {
        std::string name(d.name);
        name.resize(std::max<std::size_t>(name.size(), 18), ' ');
        io::out().write(name + " " + std::string(d.summary) + "\n");
      }
      exit_code = 0;
      return;
    }
    if (args->batch) {
      io::LineReader lines(0, args->max_line_bytes);
      io::Writer& out = io::out();
      while (auto line = lines.next()) {
        if (!line->too_long && line->text.find_first_not_of(" \t\r") == std::string_view::npos)
          continue;  // a blank line (as render --batch and tokenize --batch skip it)
        if (line->too_long) {
          Json result = {{"id", nullptr},
                         {"ok", false},
                         {"error",
                          {{"type", "LimitError"},
                           {"message", "line " + std::to_string(line->number) +
                                           " is longer than max_line_bytes=" +
                                           std::to_string(args->max_line_bytes)}}}};
          write_json(out, result);
        } else {
          write_json(out, batch_line(line->text));
        }
        out.put('\n');
      }
      if (!lines.error().empty()) {
        std::fprintf(stderr, "chatwire parse: reading standard input: %s\n", lines.error().c_str());
        exit_code = 1;
        return;
      }
      exit_code = 0;
      return;
    }
    // transformers' response template: given, or the model directory's when it has one.
    if (!args->response_template_path.empty() ||
        (!args->model_dir.empty() && args->dialect.empty() && !args->explain)) {
      auto tmpl = !args->response_template_path.empty()
                      ? response::Template::from_file(args->response_template_path)
                      : response::Template::from_model_dir(args->model_dir);
      const bool absent = args->response_template_path.empty() && !tmpl &&
                          (tmpl.error().type == "LookupError" || tmpl.error().type == "OSError");
      if (!tmpl && !absent) {
        std::fprintf(stderr, "chatwire parse: %s\n", tmpl.error().to_string().c_str());
        exit_code = 1;
        return;
      }
      if (tmpl) {
        // The model directory's response template is used: the parser's options are not.
        if (auto given = first_given(*cmd, kParserOnly); !given.empty()) {
          std::fprintf(stderr,
                       "chatwire parse: %s is not used with the response template of %s (give "
                       "--dialect to parse with a dialect instead)\n",
                       given.c_str(), args->model_dir.c_str());
          exit_code = 2;
          return;
        }
        exit_code =
            run_response_template(*tmpl, ResponseTemplateRun{args->prefix_path, args->tools_path,
                                                             args->stream, args->max_input_bytes});
        return;
      }
    }
    if (!args->prefix_path.empty()) {
      std::fprintf(stderr,
                   "chatwire parse: --prefix is read with a response template "
                   "(--response-template, or --model with one)\n");
      exit_code = 2;
      return;
    }
    // The parser: a dialect row by name, or the one derived from the template.
    std::optional<parse::Syntax> syntax;
    parse::Options options;
    if (!args->template_path.empty() || !args->model_dir.empty()) {
      auto loaded = !args->model_dir.empty() ? readback::choose_parser_model(args->model_dir)
                                             : readback::choose_parser_file(args->template_path);
      if (!loaded) {
        std::fprintf(
            stderr, "chatwire parse: %s\n",
            naming(loaded.error(), !args->model_dir.empty() ? args->model_dir : args->template_path)
                .to_string()
                .c_str());
        exit_code = 1;
        return;
      }
      if (args->explain) {
        write_json(io::out(), readback::to_json(loaded->choice));
        io::out().put('\n');
        io::out().flush();
        exit_code = 0;
        return;
      }
      if (loaded->choice.verdict != "read back")
        std::fprintf(stderr, "warning: %s\n", loaded->choice.verdict.c_str());
      syntax = loaded->choice.syntax;
      options = loaded->choice.options;
      if (!syntax) syntax = *parse::syntax_from_json(Json::object());  // plain content
    }
    if (!args->dialect.empty()) {
      auto named = parse::Syntax::named(args->dialect);
      if (!named) {
        std::fprintf(stderr, "chatwire parse: %s\n", named.error().to_string().c_str());
        exit_code = 1;
        return;
      }
      syntax = *named;
    }
    if (!syntax) {
      std::fprintf(stderr,
                   "chatwire parse: --template, --model or --dialect is required (or --batch / "
                   "--list)\n");
      exit_code = 2;
      return;
    }
    Json tools;
    if (!args->tools_path.empty()) {
      auto t = read_json_file(args->tools_path, args->max_input_bytes);
      if (!t) {
        std::fprintf(stderr, "chatwire parse: %s\n", t.error().to_string().c_str());
        exit_code = 1;
        return;
      }
      tools = std::move(*t);
    }
    if (args->reasoning_prefilled) options.reasoning_prefilled = true;
    if (args->strict) options.strict = true;
    if (!args->thinking.empty()) {
      options.enable_thinking = args->thinking == "on";
      // A choice made here replaces the state the template's default prompt leaves (Nemotron
      // Nano 9B v2's opens reasoning; rendered with thinking off, it closes the block).
      if (!args->reasoning_prefilled) options.reasoning_prefilled = false;
    }
    if (args->no_separate_reasoning) options.separate_reasoning = false;
    if (!args->unknown_tools.empty())
      options.forward_unknown_tools = args->unknown_tools == "forward";
    std::string read_error;
    auto read = io::WholeInput::read(0, args->max_input_bytes, read_error);
    if (!read) {
      std::fprintf(stderr, "chatwire parse: standard input: %s\n", read_error.c_str());
      exit_code = 2;
      return;
    }
    const std::string_view input = read->view();
    io::Writer& out = io::out();
    std::vector<parse::Warning> warnings;
    if (!args->stream) {
      // One shot: the parser that collects no deltas, as parse::parse in a program.
      auto result = parse::parse(input, *syntax, tools, options);
      if (!result) {
        std::fprintf(stderr, "chatwire parse: %s\n", result.error().to_string().c_str());
        exit_code = 1;
        return;
      }
      write_message(out, result->message);
      out.put('\n');
      warnings = std::move(result->warnings);
    } else {
      auto stream = parse::stream_parser(*syntax, tools, options);
      if (!stream) {
        std::fprintf(stderr, "chatwire parse: %s\n", stream.error().to_string().c_str());
        exit_code = 1;
        return;
      }
      auto print_deltas = [&out](const std::vector<parse::Delta>& deltas) {
        for (const auto& d : deltas) {
          write_json(out, parse::delta_to_json(d));
          out.put('\n');
        }
      };
      for (std::size_t i = 0; i < input.size(); i += args->stream)
        print_deltas(stream->feed(std::string_view(input).substr(i, args->stream)));
      print_deltas(stream->finish());
      warnings = stream->warnings();
      if (auto failure = stream->failure()) {
        out.flush();
        std::fprintf(stderr, "chatwire parse: %s\n", failure->to_string().c_str());
        exit_code = 1;
        return;
      }
    }
    out.flush();
    for (const auto& w : warnings)
      std::fprintf(stderr, "warning: %s at byte %zu: %s\n", w.code.c_str(), w.offset,
                   w.message.c_str());
    exit_code = 0;
  });
}

}  // namespace chatwire::cli
