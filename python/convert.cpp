// Definitions of python/convert.hpp.
#include "convert.hpp"

#include <pybind11/stl.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "chatwire/value_json.hpp"

namespace chatwire::python {

[[noreturn]] void fail(Error error) {
  throw PyFailure{std::move(error)};
}
[[noreturn]] void fail(std::string type, std::string message, std::string path) {
  fail(Error{std::move(type), std::move(message), 0, 0, std::move(path)});
}

namespace {

std::size_t default_threads() {
  if (const char* env = std::getenv("CHATWIRE_NUM_THREADS")) {
    long n = std::strtol(env, nullptr, 10);
    if (n > 0) return static_cast<std::size_t>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

std::atomic<std::size_t> g_threads{default_threads()};

std::string py_str_bytes(py::handle h) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(h.ptr(), &size);
  if (data != nullptr) return std::string(data, static_cast<std::size_t>(size));
  // Lone surrogates (e.g. from surrogateescape'd file names): kept as WTF-8, as the engine
  // keeps them.
  PyErr_Clear();
  py::object bytes = py::reinterpret_steal<py::object>(
      PyUnicode_AsEncodedString(h.ptr(), "utf-8", "surrogatepass"));
  if (!bytes) throw py::error_already_set();
  return std::string(PyBytes_AS_STRING(bytes.ptr()),
                     static_cast<std::size_t>(PyBytes_GET_SIZE(bytes.ptr())));
}

// ---------------------------------------------------------------------------------------
// Python -> Value. Paths are built only when a conversion fails ("messages[2].content").
// ---------------------------------------------------------------------------------------

namespace {

struct PathStep {
  const PathStep* parent;
  std::string key;  // "[3]" or ".name" (or the root name)
};

std::string path_string(const PathStep* step) {
  std::vector<const PathStep*> steps;
  for (; step != nullptr; step = step->parent) steps.push_back(step);
  std::string out;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) out += (*it)->key;
  if (!out.empty() && out[0] == '.') out.erase(0, 1);
  return out;
}

constexpr int kMaxDepth = 512;  // as the chat layer's max_json_depth

Value to_value(py::handle h, const PathStep* at, int depth = 0) {
  if (depth > kMaxDepth) fail("ValueError", "nested deeper than 512 levels", path_string(at));
  PyObject* o = h.ptr();
  if (o == Py_None) return Value::none();
  if (PyBool_Check(o)) return Value(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0)
      fail("OverflowError", "integer does not fit in 64 bits (chatwire's integers are int64)",
           path_string(at));
    return Value(v);
  }
  if (PyFloat_Check(o)) return Value(PyFloat_AS_DOUBLE(o));
  if (PyUnicode_Check(o)) return Value(py_str_bytes(h));
  if (PyList_Check(o) || PyTuple_Check(o)) {
    const bool tuple = PyTuple_Check(o);
    const Py_ssize_t n = tuple ? PyTuple_GET_SIZE(o) : PyList_GET_SIZE(o);
    std::vector<Value> items;
    items.reserve(static_cast<std::size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PathStep step{at, "[" + std::to_string(i) + "]"};
      PyObject* item = tuple ? PyTuple_GET_ITEM(o, i) : PyList_GET_ITEM(o, i);
      items.push_back(to_value(item, &step, depth + 1));
    }
    return tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
  }
  auto dict_from_items = [&](py::iterable pairs) {
    std::vector<std::pair<Value, Value>> entries;
    for (py::handle pair : pairs) {
      py::tuple kv = py::reinterpret_borrow<py::tuple>(pair);
      std::string name = PyUnicode_Check(kv[0].ptr())
                             ? "." + py_str_bytes(kv[0])
                             : "[" + py::repr(kv[0]).cast<std::string>() + "]";
      PathStep step{at, std::move(name)};
      entries.emplace_back(to_value(kv[0], &step, depth + 1), to_value(kv[1], &step, depth + 1));
    }
    auto dict = Value::dict(std::move(entries));
    if (!dict) {
      dict.error().path = path_string(at);
      fail(std::move(dict.error()));
    }
    return std::move(*dict);
  };
  if (PyDict_Check(o)) {
    std::vector<std::pair<Value, Value>> entries;
    entries.reserve(static_cast<std::size_t>(PyDict_GET_SIZE(o)));
    PyObject *key = nullptr, *value = nullptr;
    Py_ssize_t pos = 0;
    bool all_str = true;
    while (PyDict_Next(o, &pos, &key, &value)) {
      std::string name;
      if (PyUnicode_Check(key)) {
        name = "." + py_str_bytes(key);
      } else {
        all_str = false;
        name = "[" + py::repr(key).cast<std::string>() + "]";
      }
      PathStep step{at, std::move(name)};
      entries.emplace_back(to_value(key, &step, depth + 1), to_value(value, &step, depth + 1));
    }
    if (all_str) return Value::dict_unchecked(std::move(entries));
    auto dict = Value::dict(std::move(entries));
    if (!dict) {
      dict.error().path = path_string(at);
      fail(std::move(dict.error()));
    }
    return std::move(*dict);
  }
  // Other mappings and sequences (datasets rows, numpy object arrays via tolist, ...).
  // Kept for the life of the process (released: no destructor runs after the interpreter).
  static py::handle mapping =
      py::object(py::module_::import("collections.abc").attr("Mapping")).release();
  static py::handle sequence =
      py::object(py::module_::import("collections.abc").attr("Sequence")).release();
  if (py::isinstance(h, mapping)) return dict_from_items(h.attr("items")());
  if (py::hasattr(h, "tolist")) return to_value(h.attr("tolist")(), at, depth + 1);
  if (py::isinstance(h, sequence) && !PyBytes_Check(o) && !PyByteArray_Check(o)) {
    std::vector<Value> items;
    std::size_t i = 0;
    for (py::handle item : py::reinterpret_borrow<py::iterable>(h)) {
      PathStep step{at, "[" + std::to_string(i++) + "]"};
      items.push_back(to_value(item, &step, depth + 1));
    }
    return Value::list(std::move(items));
  }
  fail("TypeError",
       "Object of type " + py::type::of(h).attr("__name__").cast<std::string>() +
           " cannot be passed to a chat template (use str, int, float, bool, None, list, "
           "tuple or dict)",
       path_string(at));
}

}  // namespace

Value to_value_root(py::handle h, const char* name) {
  PathStep root{nullptr, name};
  return to_value(h, &root);
}

py::object json_to_py(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return py::none();
    case nlohmann::ordered_json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case nlohmann::ordered_json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::ordered_json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      return py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogatepass"));
    }
    case nlohmann::ordered_json::value_t::array: {
      py::list out;
      for (const auto& item : j) out.append(json_to_py(item));
      return out;
    }
    case nlohmann::ordered_json::value_t::object: {
      py::dict out;
      for (const auto& [key, item] : j.items()) out[py::str(key)] = json_to_py(item);
      return out;
    }
    default:
      return py::none();
  }
}

nlohmann::ordered_json py_to_json(py::handle h, const char* name) {
  return unwrap(to_json(to_value_root(h, name)));
}

py::object value_to_py(const Value& v) {
  if (v.is_none() || v.is_undefined()) return py::none();
  auto json = to_json(v);
  if (!json) return py::none();
  return json_to_py(*json);
}

py::str make_str(std::string_view s) {
  // A lone surrogate the caller's str held comes back as WTF-8 (py_str_bytes keeps it; a
  // template copies it as jinja2 does): it is that surrogate again. Anything else invalid (not
  // expected: decoded text is made valid as tokenizers makes it) is U+FFFD.
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogatepass");
  if (o == nullptr && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
    PyErr_Clear();
    o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  }
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

std::vector<std::uint32_t> ids_from_py(py::handle h) {
  std::vector<std::uint32_t> ids;
  if (py::hasattr(h, "tolist") && !PyList_Check(h.ptr())) {
    py::object list = h.attr("tolist")();
    // A 0-d array or a scalar's tolist() is one int: that one id.
    if (PyLong_Check(list.ptr())) return ids_from_py(py::make_tuple(list));
    return ids_from_py(list);
  }
  for (py::handle item : py::reinterpret_borrow<py::iterable>(h)) {
    // An int, or an integer scalar of numpy or torch (anything with __index__), as transformers
    // takes them after to_py_obj; never a bool.
    if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr()))
      fail("TypeError",
           "token ids must be int, got " + py::type::of(item).attr("__name__").cast<std::string>());
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()));
    if (!index) throw py::error_already_set();
    long long v = PyLong_AsLongLong(index.ptr());
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      fail("OverflowError", "token id out of range");
    }
    if (v < 0 || v > 0xFFFFFFFFLL)
      fail("OverflowError", "token id out of range: " + std::to_string(v));
    ids.push_back(static_cast<std::uint32_t>(v));
  }
  return ids;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("FileNotFoundError", "cannot read " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace chatwire::python
