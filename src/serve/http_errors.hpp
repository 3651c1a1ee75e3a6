// How a chatwire Error becomes an HTTP error: one table from the error's type to the status,
// OpenAI's error type and the code (see http_errors.cpp). Errors the gateway itself raises
// use the types listed there; any other type is the request's fault (400).
#pragma once

#include <string>

#include "chatwire/error.hpp"
#include "serve/openai_shapes.hpp"

namespace chatwire::serve {

HttpError http_error(const Error& e);
// An Error of one of the gateway's own types (e.g. "ModelNotFound", "BackendTimeout").
Error gateway_error(std::string type, std::string message, std::string param = {});

}  // namespace chatwire::serve
