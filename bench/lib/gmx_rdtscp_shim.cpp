// An LD_PRELOAD library for bench/lj_vs_gromacs.sh: Debian's GROMACS 2022 is built to time with
// the rdtscp instruction and refuses to start when CPUID does not list it, as on the cloud VMs
// this was written on, where the instruction executes but the flag is hidden. This library wraps
// gmx::CpuInfo::detect(): it calls GROMACS's own detection, then adds the rdtscp feature to the
// result. Nothing else of GROMACS changes. The bench script builds it with g++ and says so.
//
// It relies on the 2022 layout of gmx::CpuInfo (two int enums, a std::string, three ints, then
// the std::set<Feature> of features) and finds the enum value of rdtscp by its name through
// gmx::CpuInfo::featureString.
#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>

namespace {
struct Layout {  // gmx::CpuInfo's data members, GROMACS 2022
  int support_level;
  int vendor;
  std::string brand;
  int family, model, stepping;
  std::set<int> features;
};
using Detect = void* (*)(void*);
using FeatureString = const std::string& (*)(int);
}  // namespace

// gmx::CpuInfo::detect() returns its object through the hidden result pointer.
extern "C" void* stratus_gmx_detect(void* result) __asm__("_ZN3gmx7CpuInfo6detectEv");
extern "C" void* stratus_gmx_detect(void* result) {
  const auto real = reinterpret_cast<Detect>(dlsym(RTLD_NEXT, "_ZN3gmx7CpuInfo6detectEv"));
  const auto name = reinterpret_cast<FeatureString>(
      dlsym(RTLD_DEFAULT, "_ZN3gmx7CpuInfo13featureStringB5cxx11ENS0_7FeatureE"));
  if (real == nullptr || name == nullptr) {
    std::fprintf(stderr, "gmx_rdtscp_shim: GROMACS's CpuInfo symbols not found\n");
    return result;
  }
  real(result);
  auto* info = static_cast<Layout*>(result);
  for (int f = 0; f < 256; ++f) {
    try {
      if (name(f) == "rdtscp") {
        info->features.insert(f);
        break;
      }
    } catch (const std::out_of_range&) {
      break;  // past the last feature
    }
  }
  return result;
}
