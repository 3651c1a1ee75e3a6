// JSON (nlohmann) forms of chatwire/value.hpp's types, kept apart so that header does not pull in
// nlohmann/json.
#pragma once

#include <nlohmann/json.hpp>

#include "chatwire/value.hpp"
