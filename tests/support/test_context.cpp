#include "test_context.hpp"

#include "stratus/core/error.hpp"

namespace stratus::testing {

Context*& context_slot() {
  static Context* slot = nullptr;
  return slot;
}

Context& context() {
  require(context_slot() != nullptr, "test context used before test_main created it");
  return *context_slot();
}

}  // namespace stratus::testing
