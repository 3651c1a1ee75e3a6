// chatwire.Endpoint, chatwire.Prompt and chatwire.Generation (python/endpoint.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace chatwire::python {

void bind_endpoint(pybind11::module_& m);

}  // namespace chatwire::python
