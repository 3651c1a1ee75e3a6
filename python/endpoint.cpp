// chatwire.Endpoint for Python: the whole path of chatwire/endpoint.hpp, from an OpenAI
// chat-completions request (a dict or JSON text) to the prompt's text and ids, and from what the
// model generates (ids or text) back to OpenAI deltas and the final message (dicts in OpenAI's
// wire shape, the ones chatwire serve sends).
//
//   ep = chatwire.Endpoint("path/to/checkpoint")
//   prompt = ep.prepare(request)            # prompt.ids to the engine; stop at prompt.stop_ids
//   gen = ep.start(prompt)
//   for ids in engine: for delta in gen.push(ids): ...
//   gen.finish(); gen.message               # {"role": "assistant", "content", ...}
//
// The GIL is released while the library works; prepare_batch runs requests on threads (the
// Endpoint is immutable and shared). A Generation keeps its Endpoint alive (it reads the
// Endpoint's tokenizer and parser), so it may outlive the Python Endpoint object.
#include "endpoint.hpp"

#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "chatwire/endpoint.hpp"
#include "chatwire/endpoint_json.hpp"
#include "chatwire/probe_json.hpp"
#include "convert.hpp"

namespace chatwire::python {
namespace {

using endpoint::Endpoint;
using endpoint::Generation;
using endpoint::Prompt;
using json = nlohmann::ordered_json;

std::string fspath(py::handle path) {
  return py::str(py::module_::import("os").attr("fspath")(path)).cast<std::string>();
}

// A cached profile or parser: the JSON text an earlier Endpoint gave, or that text parsed.
std::string json_text(py::handle h, const char* name) {
  if (h.is_none()) return {};
  if (PyUnicode_Check(h.ptr())) return py_str_bytes(h);
  return py_to_json(h, name).dump();
}

py::list deltas_to_py(const std::vector<endpoint::Delta>& deltas) {
  py::list out;
  for (const auto& d : deltas) out.append(json_to_py(endpoint::to_json(d)));
  return out;
}

py::object make_exception(const Error& e) {
  return py::module_::import("chatwire.errors")
      .attr("make")(e.type, e.message, e.line, e.column, e.path);
}

class PyPrompt {
 public:
  explicit PyPrompt(Prompt prompt) : prompt_(std::move(prompt)) {}
  const Prompt& prompt() const { return prompt_; }

  py::str text() const { return make_str(prompt_.text); }
  py::list ids() const { return int_list(prompt_.ids); }
  std::optional<py::list> assistant_masks() const {
    if (prompt_.assistant_masks.empty()) return std::nullopt;  // not asked for
    return int_list(prompt_.assistant_masks);
  }
  py::list stop_ids() const { return int_list(prompt_.stop_ids); }
  py::list stop_strings() const {
    py::list out;
    for (const auto& s : prompt_.stop_strings) out.append(make_str(s));
    return out;
  }
  py::list engine_stop_strings() const {
    py::list out;
    for (const auto& s : prompt_.engine_stop_strings) out.append(make_str(s));
    return out;
  }
  py::object dict() const { return json_to_py(endpoint::to_json(prompt_)); }
  py::object field(const char* key) const { return json_to_py(endpoint::to_json(prompt_)[key]); }

 private:
  Prompt prompt_;
};

// A Generation belongs to one thread in the library; Python code may still share one between
// threads, so every call takes the object's lock (uncontended in the intended use).
class PyGeneration {
 public:
  PyGeneration(Endpoint endpoint, Generation generation)
      : endpoint_(std::move(endpoint)), generation_(std::move(generation)) {}

  // fn() under the object's lock, with the GIL released (so a thread waiting for the lock never
  // holds the GIL that the thread holding the lock may need).
  template <typename Fn>
  auto locked(Fn&& fn) const -> decltype(fn()) {
    py::gil_scoped_release release;
    std::lock_guard lock(mutex_);
    return fn();
  }

  py::list push(py::handle ids) {
    std::vector<std::uint32_t> v;
    if (is_scalar_id(ids)) {
      v = ids_from_py(py::make_tuple(ids));
    } else {
      v = ids_from_py(ids);
    }
    return deltas_to_py(locked([&] { return unwrap(generation_.push(v)); }));
  }
  py::list push_text(py::handle text) {
    if (!PyUnicode_Check(text.ptr()))
      fail("TypeError",
           "push_text takes a str, got " + py::type::of(text).attr("__name__").cast<std::string>());
    std::string s = py_str_bytes(text);
    return deltas_to_py(locked([&] { return unwrap(generation_.push_text(s)); }));
  }
  py::list finish() {
    return deltas_to_py(locked([&] { return unwrap(generation_.finish()); }));
  }

  py::object message() const {
    return json_to_py(locked([&] { return endpoint::to_json(generation_.message()); }));
  }
  py::object warnings() const {
    return json_to_py(locked([&] { return endpoint::to_json(generation_.warnings()); }));
  }
  bool stopped() const {
    return locked([&] { return generation_.stopped(); });
  }
  bool call_limit_reached() const {
    return locked([&] { return generation_.call_limit_reached(); });
  }
  std::string finish_reason() const {
    return locked([&] { return std::string(generation_.finish_reason()); });
  }
  std::size_t reasoning_tokens() const {
    return locked([&] { return generation_.reasoning_tokens(); });
  }

 private:
  Endpoint endpoint_;  // keeps the loaded state the generation reads alive
  Generation generation_;
  mutable std::mutex mutex_;
};

endpoint::PrepareOptions prepare_options(std::optional<std::string> mode,
                                         std::optional<std::string> now, bool tokenize,
                                         bool assistant_mask,
                                         std::optional<std::string> call_syntax,
                                         std::size_t max_tools) {
  endpoint::PrepareOptions options;
  if (mode) {
    options.mode = chat::parse_mode(*mode);
    if (!options.mode)
      fail("ValueError", "mode must be 'reply', 'prefill' or 'training', got '" + *mode + "'");
  }
  options.now = now.value_or("");
  options.tokenize = tokenize;
  options.assistant_mask = assistant_mask;
  options.call_syntax = call_syntax.value_or("");
  options.max_tools = max_tools;
  return options;
}

// A request as JSON: JSON text (str or bytes) is parsed by prepare() itself, with its limits;
// anything else is converted from Python objects.
using Request = std::variant<std::string, json>;

Request request_of(py::handle request) {
  if (PyUnicode_Check(request.ptr())) return py_str_bytes(request);
  if (PyBytes_Check(request.ptr())) return std::string(py::cast<std::string>(request));
  // Paths start at the request's own fields ("messages[2].content"), as prepare's errors do.
  return py_to_json(request, "");
}

Result<Prompt> prepare_one(const Endpoint& ep, const Request& request,
                           const endpoint::PrepareOptions& options) {
  if (const auto* text = std::get_if<std::string>(&request)) return ep.prepare(*text, options);
  return endpoint::prepare(ep, std::get<json>(request), options);
}

class PyEndpoint {
 public:
  PyEndpoint(py::handle dir, const std::string& dialect, std::optional<std::string> template_name,
             py::handle profile, py::handle parser, std::optional<std::uint64_t> probe_max_steps)
      : endpoint_(load(dir, dialect, std::move(template_name), profile, parser, probe_max_steps)) {}

  PyPrompt prepare(py::handle request, std::optional<std::string> mode,
                   std::optional<std::string> now, bool tokenize, bool assistant_mask,
                   std::optional<std::string> call_syntax, std::size_t max_tools) const {
    const auto options = prepare_options(std::move(mode), std::move(now), tokenize, assistant_mask,
                                         std::move(call_syntax), max_tools);
    const Request r = request_of(request);
    py::gil_scoped_release release;
    return PyPrompt(unwrap(prepare_one(endpoint_, r, options)));
  }

  // Many requests on threads. With return_errors, a request that fails is its exception
  // (chatwire.RequestError, ...) in the list instead of a Prompt; otherwise the first failure in
  // input order is raised.
  py::list prepare_batch(const py::sequence& requests, std::optional<std::string> mode,
                         std::optional<std::string> now, bool tokenize, bool assistant_mask,
                         std::optional<std::string> call_syntax, std::size_t max_tools,
                         bool return_errors) const {
    const auto options = prepare_options(std::move(mode), std::move(now), tokenize, assistant_mask,
                                         std::move(call_syntax), max_tools);
    const std::size_t n = py::len(requests);
    std::vector<std::optional<Request>> converted(n);
    std::vector<Result<Prompt>> results(n, Error{});
    for (std::size_t i = 0; i < n; ++i) {
      try {
        converted[i] = request_of(requests[i]);
      } catch (PyFailure& f) {  // raised below, in input order, unless return_errors
        results[i] = std::move(f.error);
      }
    }
    {
      py::gil_scoped_release release;
      parallel_for(n, [&](std::size_t i) {
        if (converted[i]) results[i] = prepare_one(endpoint_, *converted[i], options);
      });
    }
    py::list out;
    for (auto& r : results) {
      if (!r) {
        if (!return_errors) fail(std::move(r.error()));
        out.append(make_exception(r.error()));
        continue;
      }
      out.append(py::cast(PyPrompt(std::move(*r))));
    }
    return out;
  }

  std::unique_ptr<PyGeneration> start(const PyPrompt& prompt) const {
    return std::make_unique<PyGeneration>(endpoint_, unwrap(endpoint_.start(prompt.prompt())));
  }

  std::string dialect() const { return std::string(endpoint_.dialect()); }
  bool tool_calls_read_back() const { return endpoint_.tool_calls_read_back(); }
  std::string call_ids() const {
    return endpoint_.call_ids() == endpoint::CallIdStyle::short9 ? "short9" : "openai";
  }
  py::list stop_ids() const {
    auto ids = endpoint_.stop_ids();
    return int_list(std::vector<std::uint32_t>(ids.begin(), ids.end()));
  }
  py::list stop_strings() const {
    py::list out;
    for (const auto& s : endpoint_.stop_strings()) out.append(make_str(s));
    return out;
  }
  bool stops_by_id(const PyPrompt& prompt, const std::string& text) const {
    return endpoint_.stops_by_id(prompt.prompt(), text);
  }
  std::vector<std::string> warnings() const { return endpoint_.warnings(); }
  bool has_tokenizer() const { return endpoint_.tokenizer() != nullptr; }
  py::object profile() const { return json_to_py(probe::to_json(endpoint_.profile())); }
  std::string profile_json() const { return endpoint_.profile_json(); }
  std::string parser_json() const { return endpoint_.parser_json(); }
  std::string directory() const { return endpoint_.model().directory().generic_string(); }

 private:
  static Endpoint load(py::handle dir, const std::string& dialect,
                       std::optional<std::string> template_name, py::handle profile,
                       py::handle parser, std::optional<std::uint64_t> probe_max_steps) {
    const std::string path = fspath(dir);
    endpoint::LoadOptions options;
    if (probe_max_steps) {
      options.probe_limits = probe::probe_render_limits();
      options.probe_limits->max_steps = *probe_max_steps;
    }
    options.dialect = dialect;
    options.template_name = std::move(template_name);
    options.profile_json = json_text(profile, "profile");
    options.parser_json = json_text(parser, "parser");
    py::gil_scoped_release release;
    return unwrap(Endpoint::load(path, options));
  }

  Endpoint endpoint_;
};

}  // namespace

void bind_endpoint(py::module_& m) {
  py::class_<PyPrompt>(m, "Prompt")
      .def_property_readonly("text", &PyPrompt::text)
      .def_property_readonly("ids", &PyPrompt::ids)
      .def_property_readonly("assistant_masks", &PyPrompt::assistant_masks)
      .def_property_readonly("stop_ids", &PyPrompt::stop_ids)
      .def_property_readonly("stop_strings", &PyPrompt::stop_strings)
      .def_property_readonly("engine_stop_strings", &PyPrompt::engine_stop_strings)
      .def_property_readonly("adaptations",
                             [](const PyPrompt& p) { return p.field("adaptations"); })
      .def_property_readonly("warnings", [](const PyPrompt& p) { return p.field("warnings"); })
      .def_property_readonly("parser", [](const PyPrompt& p) { return p.field("parser"); })
      .def_property_readonly("constraint_schema",
                             [](const PyPrompt& p) { return p.field("constraint_schema"); })
      .def("to_dict", &PyPrompt::dict)
      .def("__repr__", [](const PyPrompt& p) {
        return "chatwire.Prompt(chars=" + std::to_string(p.prompt().text.size()) +
               ", tokens=" + std::to_string(p.prompt().ids.size()) + ")";
      });

  py::class_<PyGeneration>(m, "Generation")
      .def("push", &PyGeneration::push, py::arg("ids"))
      .def("push_text", &PyGeneration::push_text, py::arg("text"))
      .def("finish", &PyGeneration::finish)
      .def_property_readonly("message", &PyGeneration::message)
      .def_property_readonly("warnings", &PyGeneration::warnings)
      .def_property_readonly("stopped", &PyGeneration::stopped)
      .def_property_readonly("call_limit_reached", &PyGeneration::call_limit_reached)
      .def_property_readonly("finish_reason", &PyGeneration::finish_reason)
      .def_property_readonly("reasoning_tokens", &PyGeneration::reasoning_tokens);

  py::class_<PyEndpoint>(m, "Endpoint")
      .def(py::init<py::handle, const std::string&, std::optional<std::string>, py::handle,
                    py::handle, std::optional<std::uint64_t>>(),
           py::arg("model_dir"), py::kw_only(), py::arg("dialect") = "",
           py::arg("template_name") = py::none(), py::arg("profile") = py::none(),
           py::arg("parser") = py::none(), py::arg("probe_max_steps") = py::none())
      .def("prepare", &PyEndpoint::prepare, py::arg("request"), py::kw_only(),
           py::arg("mode") = py::none(), py::arg("now") = py::none(), py::arg("tokenize") = true,
           py::arg("assistant_mask") = false, py::arg("call_syntax") = py::none(),
           py::arg("max_tools") = 4096)
      .def("prepare_batch", &PyEndpoint::prepare_batch, py::arg("requests"), py::kw_only(),
           py::arg("mode") = py::none(), py::arg("now") = py::none(), py::arg("tokenize") = true,
           py::arg("assistant_mask") = false, py::arg("call_syntax") = py::none(),
           py::arg("max_tools") = 4096, py::arg("return_errors") = false)
      .def("start", &PyEndpoint::start, py::arg("prompt"))
      .def("stops_by_id", &PyEndpoint::stops_by_id, py::arg("prompt"), py::arg("text"))
      .def_property_readonly("dialect", &PyEndpoint::dialect)
      .def_property_readonly("tool_calls_read_back", &PyEndpoint::tool_calls_read_back)
      .def_property_readonly("call_ids", &PyEndpoint::call_ids)
      .def_property_readonly("stop_ids", &PyEndpoint::stop_ids)
      .def_property_readonly("stop_strings", &PyEndpoint::stop_strings)
      .def_property_readonly("warnings", &PyEndpoint::warnings)
      .def_property_readonly("has_tokenizer", &PyEndpoint::has_tokenizer)
      .def_property_readonly("profile", &PyEndpoint::profile)
      .def_property_readonly("directory", &PyEndpoint::directory)
      .def("profile_json", &PyEndpoint::profile_json)
      .def("parser_json", &PyEndpoint::parser_json)
      .def("__repr__", [](const PyEndpoint& e) {
        return "chatwire.Endpoint(" + e.directory() + ", dialect=" + e.dialect() + ")";
      });
}

}  // namespace chatwire::python
