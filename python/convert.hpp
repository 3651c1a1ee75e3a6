// The conversions and plumbing every part of the Python module shares: library errors on their
// way to Python (PyFailure), Python objects to chatwire Values and JSON and back, token id
// lists, and the thread setting of batch calls.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "chatwire/error.hpp"
#include "chatwire/value.hpp"

namespace chatwire::python {

namespace py = pybind11;

// A library error on its way to Python (see the translator in the module definition).
struct PyFailure {
  Error error;
};

[[noreturn]] void fail(Error error);
[[noreturn]] void fail(std::string type, std::string message, std::string path = {});

template <typename T>
T unwrap(Result<T> result) {
  if (!result) fail(std::move(result.error()));
  return std::move(*result);
}

// Threads: one setting for every batch call (chatwire.set_num_threads), as tokenizers has
// one pool for the process.
extern std::atomic<std::size_t> g_threads;

// Runs fn(i) for i in [0, n) on up to g_threads threads (the caller's thread is one of them).
// Items are taken one at a time from a shared counter, so uneven items balance.
template <typename Fn>
void parallel_for(std::size_t n, const Fn& fn) {
  const std::size_t threads = std::min(g_threads.load(), n);
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) {
    // A thread the system will not start (a pid or memory limit) leaves the work to those that
    // did; an exception here would destroy the started ones unjoined (std::terminate).
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;
    }
  }
  worker();
  for (auto& t : pool) t.join();
}

// A Python str as UTF-8 bytes (lone surrogates kept as WTF-8).
std::string py_str_bytes(py::handle h);
// Python -> Value; a failure names the path below `name` ("messages[2].content").
Value to_value_root(py::handle h, const char* name);
// nlohmann JSON -> Python, and Python -> JSON (through a Value).
py::object json_to_py(const nlohmann::ordered_json& j);
nlohmann::ordered_json py_to_json(py::handle h, const char* name);
// Value -> Python, for special tokens and template sources.
py::object value_to_py(const Value& v);
py::str make_str(std::string_view s);

template <typename Int>
py::list int_list(const std::vector<Int>& values) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(values.size()));
  if (list == nullptr) throw py::error_already_set();
  for (std::size_t i = 0; i < values.size(); ++i)
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i),
                    PyLong_FromLong(static_cast<long>(values[i])));
  return py::reinterpret_steal<py::list>(list);
}

// Token ids from a list, tuple, any iterable of int, or an object with tolist() (numpy, torch).
std::vector<std::uint32_t> ids_from_py(py::handle h);
// One token id rather than a sequence of them: an int, or an integer scalar of numpy or torch
// (not a sequence, has __index__; never a bool, which ids_from_py refuses).
inline bool is_scalar_id(py::handle h) {
  return PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !PySequence_Check(h.ptr()));
}
std::string read_file(const std::string& path);

}  // namespace chatwire::python
