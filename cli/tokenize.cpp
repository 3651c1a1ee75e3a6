// `chatwire tokenize`: text -> ids (JSON array), ids -> text (--decode, optionally --stream), or
// the line protocol of scripts/oracle/tok_batch.mjs (--batch): one JSON request per line in, one
// result per line out, in order; a bad line gives {"ok": false} and the batch goes on.
#include "chatwire/tokenize.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "commands.hpp"
#include "ids_json.hpp"
#include "io.hpp"
#include "util/token_ids.hpp"

namespace chatwire::cli {
namespace {

struct TokenizeArgs {
  std::string dir;
  bool special = false;
  bool decode = false;
  bool skip_special = false;
  bool stream = false;
  bool batch = false;
  bool offsets = false;
  std::size_t max_input_bytes = io::kDefaultMaxInputBytes;  // the text or ids read from stdin
  std::size_t max_line_bytes = std::size_t{64} << 20;       // one --batch request line
};

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void write_line(io::Writer& out, const nlohmann::json& j) {
  out.write(dump(j));
  out.put('\n');
}

// Token ids from JSON (util::token_ids), or the error naming the element that is none.
std::optional<std::vector<std::uint32_t>> ids_from_json(const nlohmann::json& j,
                                                        std::string_view field,
                                                        std::string& error) {
  std::size_t bad = 0;
  auto ids = util::token_ids(j, bad);
  if (ids) return ids;
  error = !j.is_array()
              ? std::string(field) + ": expected a JSON array of token ids, got " + j.type_name()
              : std::string(field) + "[" + std::to_string(bad) + "]: " + dump(j[bad]) +
                    " is not a token id (an integer from 0 to 4294967295)";
  return std::nullopt;
}

// A request line's optional field of one JSON type: its value, `fallback` when absent or null;
// a value of another type is an error naming the field.
template <typename T>
T field_or(const nlohmann::json& req, const char* key, T fallback) {
  auto it = req.find(key);
  if (it == req.end() || it->is_null()) return fallback;
  const bool fits = std::is_same_v<T, bool> ? it->is_boolean() : it->is_string();
  if (!fits)
    throw std::invalid_argument(std::string(key) + ": expected " +
                                (std::is_same_v<T, bool> ? "a boolean" : "a string") + ", got " +
                                it->type_name());
  return it->get<T>();
}

int run_batch(const TokenizeArgs& args) {
  std::map<std::string, Result<tokenize::Tokenizer>> loaded;
  io::LineReader lines(0, args.max_line_bytes);
  while (auto in = lines.next()) {
    std::string_view line = in->text;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json out;
    if (in->too_long) {
      out["id"] = nullptr;
      out["ok"] = false;
      out["message"] = "line " + std::to_string(in->number) +
                       " is longer than max_line_bytes=" + std::to_string(args.max_line_bytes);
      write_line(io::out(), out);
      continue;
    }
    out["id"] = nullptr;  // every result line has an id, null where the line gives none
    try {
      nlohmann::json req = nlohmann::json::parse(line);
      if (!req.is_object())
        throw std::invalid_argument(std::string("expected a JSON object, got ") + req.type_name());
      if (req.contains("id")) out["id"] = req["id"];
      // A key the protocol does not have is refused, not ignored (a misspelt option would
      // change nothing silently); offsets are the single mode's (--offsets).
      for (const auto& item : req.items()) {
        static constexpr std::string_view kKeys[] = {
            "id", "tokenizer", "text", "ids", "add_special_tokens", "skip_special_tokens"};
        if (std::find(std::begin(kKeys), std::end(kKeys), item.key()) != std::end(kKeys)) continue;
        throw std::invalid_argument(
            item.key() == "offsets"
                ? std::string("offsets: not available with --batch (tokenize --offsets)")
                : item.key() +
                      ": not a field of a request line (id, tokenizer, text or ids, "
                      "add_special_tokens, skip_special_tokens)");
      }
      // The command's --tokenizer, --special and --skip-special are each line's defaults.
      std::string dir = field_or<std::string>(req, "tokenizer", args.dir);
      if (dir.empty())
        throw std::invalid_argument("tokenizer: missing (give it on the line or --tokenizer)");
      auto it = loaded.find(dir);
      if (it == loaded.end()) it = loaded.emplace(dir, tokenize::Tokenizer::load_dir(dir)).first;
      if (!it->second) {
        out["ok"] = false;
        out["message"] = it->second.error().to_string();
      } else if (req.contains("ids")) {
        std::string error;
        auto ids = ids_from_json(req["ids"], "ids", error);
        if (!ids) throw std::invalid_argument(error);
        tokenize::DecodeOptions options;
        options.skip_special_tokens = field_or<bool>(req, "skip_special_tokens", args.skip_special);
        auto text = it->second->decode(*ids, options);
        out["ok"] = text.ok();
        if (text)
          out["text"] = *text;
        else
          out["message"] = text.error().to_string();
      } else {
        auto text = req.find("text");
        if (text == req.end() || !text->is_string())
          throw std::invalid_argument(
              text == req.end() ? std::string("text: missing (or ids, to decode)")
                                : std::string("text: expected a string, got ") + text->type_name());
        auto ids = it->second->encode_ids(text->get<std::string>(),
                                          field_or<bool>(req, "add_special_tokens", args.special));
        out["ok"] = ids.ok();
        if (ids)
          out["ids"] = *ids;
        else
          out["message"] = ids.error().to_string();
      }
    } catch (const std::exception& e) {
      out["ok"] = false;
      out["message"] = std::string("bad request line: ") + e.what();
    }
    write_line(io::out(), out);
  }
  if (!lines.error().empty()) {
    std::fprintf(stderr, "chatwire tokenize: reading standard input: %s\n", lines.error().c_str());
    return 1;
  }
  return 0;
}

int run_single(const TokenizeArgs& args) {
  auto tok = tokenize::Tokenizer::load_dir(args.dir);
  if (!tok) {
    std::fprintf(stderr, "chatwire tokenize: %s\n", tok.error().to_string().c_str());
    return 1;
  }
  std::string read_error;
  auto read = io::WholeInput::read(0, args.max_input_bytes, read_error);
  if (!read) {
    std::fprintf(stderr, "chatwire tokenize: standard input: %s\n", read_error.c_str());
    return 2;
  }
  const std::string_view input = read->view();
  io::Writer& out = io::out();
  if (args.decode) {
    std::vector<std::uint32_t> ids;
    {
      std::string error;
      std::optional<std::vector<std::uint32_t>> parsed;
      try {
        parsed = ids_from_json(nlohmann::json::parse(input), "standard input", error);
      } catch (const std::exception& e) {
        error = std::string("standard input: not JSON: ") + e.what();
      }
      if (!parsed) {
        std::fprintf(stderr, "chatwire tokenize: --decode expects a JSON array of ids: %s\n",
                     error.c_str());
        return 1;
      }
      ids = std::move(*parsed);
    }
    tokenize::DecodeOptions options;
    options.skip_special_tokens = args.skip_special;
    if (args.stream) {
      tokenize::DecodeStream stream(*tok, options);
      for (std::uint32_t id : ids) {
        auto piece = stream.push(id);
        if (!piece) {
          std::fprintf(stderr, "chatwire tokenize: %s\n", piece.error().to_string().c_str());
          return 1;
        }
        write_line(out, *piece);
      }
      auto rest = stream.finish();
      if (rest) write_line(out, *rest);
      return 0;
    }
    auto text = tok->decode(ids, options);
    if (!text) {
      std::fprintf(stderr, "chatwire tokenize: %s\n", text.error().to_string().c_str());
      return 1;
    }
    write_line(out, *text);
    return 0;
  }
  tokenize::EncodeOptions options;
  options.add_special_tokens = args.special;
  options.with_offsets = args.offsets;
  auto enc = tok->encode(input, options);
  if (!enc) {
    std::fprintf(stderr, "chatwire tokenize: %s\n", enc.error().to_string().c_str());
    return 1;
  }
  if (args.offsets) {
    nlohmann::json j;
    j["ids"] = enc->ids;
    j["offsets"] = enc->offsets;
    write_line(out, j);
  } else {
    write_ids_json(out, enc->ids);
  }
  return 0;
}

}  // namespace

void add_tokenize(CLI::App& root, int& exit_code) {
  auto args = std::make_shared<TokenizeArgs>();
  auto* cmd = root.add_subcommand(
      "tokenize", "encode text to token ids (or decode ids) like Hugging Face tokenizers");
  cmd->add_option("--tokenizer", args->dir,
                  "directory holding tokenizer.json (+ tokenizer_config.json)");
  cmd->add_flag("--special", args->special,
                "add the post-processor's special tokens (add_special_tokens=True)");
  cmd->add_flag("--offsets", args->offsets,
                "print {\"ids\", \"offsets\"} (byte offsets into the input)");
  cmd->add_flag("--decode", args->decode,
                "read a JSON array of ids, print the text as a JSON string");
  cmd->add_flag("--skip-special", args->skip_special, "with --decode: skip_special_tokens=True");
  cmd->add_flag("--stream", args->stream,
                "with --decode: print the streaming fragments, one JSON string a line");
  cmd->add_flag("--batch", args->batch,
                "JSON Lines protocol of scripts/oracle/tok_batch.mjs on stdin/stdout");
  cmd->add_option("--max-input-bytes", args->max_input_bytes,
                  "longest standard input read whole (the text, or the ids of --decode)")
      ->capture_default_str()
      ->check(non_negative());
  cmd->add_option("--max-line-bytes", args->max_line_bytes,
                  "with --batch: longest request line; a longer one gets {\"ok\": false}")
      ->capture_default_str()
      ->check(non_negative());
  cmd->callback([args, cmd, &exit_code] {
    // Flags that mean nothing where they are given are refused, not ignored. In --batch each line
    // says what it does (text or ids): --special and --skip-special are its defaults.
    const char* refused = nullptr;
    if (args->batch) {
      if (args->decode)
        refused = "--decode is not used with --batch (a line with \"ids\" decodes)";
      else if (args->offsets)
        refused = "--offsets is not available with --batch";
      else if (args->stream)
        refused = "--stream is not available with --batch";
      else if (cmd->count("--max-input-bytes") > 0)
        refused = "--max-input-bytes is not used with --batch (its limit is --max-line-bytes)";
    } else if (cmd->count("--max-line-bytes") > 0) {
      refused = "--max-line-bytes is read with --batch";
    } else if (!args->decode && (args->stream || args->skip_special)) {
      refused = "--stream and --skip-special need --decode";
    } else if (args->decode && (args->special || args->offsets)) {
      refused = "--special and --offsets are for encoding, not with --decode";
    }
    if (refused != nullptr) {
      std::fprintf(stderr, "chatwire tokenize: %s\n", refused);
      exit_code = 2;
      return;
    }
    if (args->batch) {
      exit_code = run_batch(*args);
      return;
    }
    if (args->dir.empty()) {
      std::fprintf(stderr, "chatwire tokenize: --tokenizer DIR is required (or --batch)\n");
      exit_code = 2;
      return;
    }
    exit_code = run_single(*args);
  });
}

}  // namespace chatwire::cli
