// The x86 instruction-set extensions this build's host code may use, as compiled: this file gets
// the same flags as the rest of Stratus (STRATUS_CPU_ARCH). Data only, no code, so reading it is
// safe on any CPU; cpu_check.cpp compares it with the CPU at start-up.
namespace stratus::app {

#if defined(__SSE3__)
#define STRATUS_F_SSE3 " sse3"
#else
#define STRATUS_F_SSE3 ""
#endif
#if defined(__SSSE3__)
#define STRATUS_F_SSSE3 " ssse3"
#else
#define STRATUS_F_SSSE3 ""
#endif
#if defined(__SSE4_1__)
#define STRATUS_F_SSE41 " sse4.1"
#else
#define STRATUS_F_SSE41 ""
#endif
#if defined(__SSE4_2__)
#define STRATUS_F_SSE42 " sse4.2"
#else
#define STRATUS_F_SSE42 ""
#endif
#if defined(__POPCNT__)
#define STRATUS_F_POPCNT " popcnt"
#else
#define STRATUS_F_POPCNT ""
#endif
#if defined(__AVX__)
#define STRATUS_F_AVX " avx"
#else
#define STRATUS_F_AVX ""
#endif
#if defined(__AVX2__)
#define STRATUS_F_AVX2 " avx2"
#else
#define STRATUS_F_AVX2 ""
#endif
#if defined(__FMA__)
#define STRATUS_F_FMA " fma"
#else
#define STRATUS_F_FMA ""
#endif
#if defined(__BMI__)
#define STRATUS_F_BMI " bmi"
#else
#define STRATUS_F_BMI ""
#endif
#if defined(__BMI2__)
#define STRATUS_F_BMI2 " bmi2"
#else
#define STRATUS_F_BMI2 ""
#endif
#if defined(__AVX512F__)
#define STRATUS_F_AVX512F " avx512f"
#else
#define STRATUS_F_AVX512F ""
#endif
#if defined(__AVX512DQ__)
#define STRATUS_F_AVX512DQ " avx512dq"
#else
#define STRATUS_F_AVX512DQ ""
#endif
#if defined(__AVX512CD__)
#define STRATUS_F_AVX512CD " avx512cd"
#else
#define STRATUS_F_AVX512CD ""
#endif
#if defined(__AVX512BW__)
#define STRATUS_F_AVX512BW " avx512bw"
#else
#define STRATUS_F_AVX512BW ""
#endif
#if defined(__AVX512VL__)
#define STRATUS_F_AVX512VL " avx512vl"
#else
#define STRATUS_F_AVX512VL ""
#endif

/// Space-separated names, as __builtin_cpu_supports spells them (empty: baseline only).
extern const char* const kBuiltCpuFeatures;
const char* const kBuiltCpuFeatures =
    STRATUS_F_SSE3 STRATUS_F_SSSE3 STRATUS_F_SSE41 STRATUS_F_SSE42 STRATUS_F_POPCNT STRATUS_F_AVX
        STRATUS_F_AVX2 STRATUS_F_FMA STRATUS_F_BMI STRATUS_F_BMI2 STRATUS_F_AVX512F
            STRATUS_F_AVX512DQ STRATUS_F_AVX512CD STRATUS_F_AVX512BW STRATUS_F_AVX512VL;

}  // namespace stratus::app
