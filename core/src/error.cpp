#include "stratus/core/error.hpp"

namespace stratus {

Error::Error(const std::string& message, ExitCode code, std::source_location where)
    : std::runtime_error(message), code_(code), where_(where) {}

}  // namespace stratus
