// Start-up check that this CPU has the instruction-set extensions the build uses
// (STRATUS_CPU_ARCH): a binary built with -march=native on one cloud instance type and started
// on an older one would otherwise die of SIGILL somewhere in a kernel. This file is compiled for
// the baseline of its architecture (apps/CMakeLists.txt) and runs before any other static
// initialiser of the executable, so the check itself cannot use a missing instruction.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace stratus::app {
extern const char* const kBuiltCpuFeatures;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
namespace {

// __builtin_cpu_supports takes only string literals.
bool cpu_has(const std::string& f) {
  if (f == "sse3") return __builtin_cpu_supports("sse3");
  if (f == "ssse3") return __builtin_cpu_supports("ssse3");
  if (f == "sse4.1") return __builtin_cpu_supports("sse4.1");
  if (f == "sse4.2") return __builtin_cpu_supports("sse4.2");
  if (f == "popcnt") return __builtin_cpu_supports("popcnt");
  if (f == "avx") return __builtin_cpu_supports("avx");
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "fma") return __builtin_cpu_supports("fma");
  if (f == "bmi") return __builtin_cpu_supports("bmi");
  if (f == "bmi2") return __builtin_cpu_supports("bmi2");
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (f == "avx512cd") return __builtin_cpu_supports("avx512cd");
  if (f == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (f == "avx512vl") return __builtin_cpu_supports("avx512vl");
  return true;  // a name this check does not know: cpu_features.cpp and this list disagree
}

__attribute__((constructor(101))) void check_cpu_features() {
  __builtin_cpu_init();
  std::string missing;
  const char* p = stratus::app::kBuiltCpuFeatures;
  while (*p != '\0') {
    while (*p == ' ') ++p;
    const char* end = p;
    while (*end != '\0' && *end != ' ') ++end;
    const std::string name(p, end);
    if (!name.empty() && !cpu_has(name)) missing += " " + name;
    p = end;
  }
  if (missing.empty()) return;
  std::fprintf(stderr,
               "error: this stratus was built for CPUs with%s (cmake -DSTRATUS_CPU_ARCH=%s), and "
               "this CPU lacks%s: rebuild on this machine, or with -DSTRATUS_CPU_ARCH= (empty) "
               "for any x86-64 CPU\n",
               stratus::app::kBuiltCpuFeatures, STRATUS_CPU_ARCH_NAME, missing.c_str());
  std::_Exit(1);
}

}  // namespace
#endif
