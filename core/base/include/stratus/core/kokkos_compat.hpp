// The few Kokkos spellings that moved between 3.4 and 5.x, wrapped once.
// Every kernel includes this header instead of naming Kokkos math functions directly.
#pragma once

#include <Kokkos_Core.hpp>

/// Marks the loop that follows as free of dependences between its iterations, so that the host
/// compiler vectorises it without run-time alias checks (which it gives up on beyond a few
/// arrays). Only for loops whose iterations write nothing another iteration reads. Empty under
/// nvcc, which compiles the GPU forms of the same kernels.
#if defined(__CUDACC__) || defined(__NVCC__)
#define STRATUS_IVDEP
#elif defined(__clang__)
#define STRATUS_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define STRATUS_IVDEP _Pragma("GCC ivdep")
#else
#define STRATUS_IVDEP
#endif

/// Host loops in AVX2 registers where the CPU has them, chosen at run time. The default build
/// targets plain x86-64 (SSE2: 2 doubles a register); a function marked STRATUS_AVX2_TARGET is
/// compiled for AVX2 (4 doubles) and nothing more: no FMA, so every lane does the IEEE operations
/// of the default build in the same order and the results are the same bit for bit. Kernels
/// inline their loop body into such a function and call it when host_vector_bytes() >= 32.
/// x86-64 with GCC or Clang only (never under nvcc).
#if !defined(__CUDA_ARCH__) && !defined(__NVCC__) && defined(__x86_64__) && \
    (defined(__GNUC__) || defined(__clang__))
#define STRATUS_HOST_AVX2 1
#define STRATUS_AVX2_TARGET __attribute__((target("avx2"), flatten))
#endif

namespace stratus {
/// Widest vector registers this CPU offers host code: 64 bytes (AVX-512F/VL/DQ), 32 (AVX2 and
/// FMA), else 16. The one place the CPU is asked.
inline int host_cpu_vector_bytes() {
#if defined(STRATUS_HOST_AVX2)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    return 64;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 32;
#endif
  return 16;
}

/// Width of the registers host loops may use (host_cpu_vector_bytes(), asked once); the AVX2
/// forms run where it is >= 32. Tests may lower it to 16 (and restore it) to compare the two
/// forms of a kernel.
inline int& host_vector_bytes() {
  static int bytes = host_cpu_vector_bytes();
  return bytes;
}
}  // namespace stratus

/// Unrolls the short loop that follows (over the five variables of a state, a stencil): a loop
/// left rolled inside a kernel's body stops the compiler from vectorising the loop around it.
#if defined(__CUDA_ARCH__) || (defined(__clang__) && !defined(__CUDACC__))
#define STRATUS_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__) || defined(__NVCC__)
#define STRATUS_UNROLL  // the host pass of nvcc: its host compiler would not know the pragma
#elif defined(__GNUC__)
#define STRATUS_UNROLL _Pragma("GCC unroll 8")
#else
#define STRATUS_UNROLL
#endif

namespace stratus::kmath {

// Kokkos 3.4-3.6 keep math functions in Kokkos::Experimental; from 3.7 on they are in Kokkos.
#if KOKKOS_VERSION >= 30700
#define STRATUS_KOKKOS_MATH_NS Kokkos
#else
#define STRATUS_KOKKOS_MATH_NS Kokkos::Experimental
#endif

template <class T>
KOKKOS_INLINE_FUNCTION T sqrt(T x) {
  return STRATUS_KOKKOS_MATH_NS::sqrt(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T exp(T x) {
  return STRATUS_KOKKOS_MATH_NS::exp(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T log(T x) {
  return STRATUS_KOKKOS_MATH_NS::log(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T sin(T x) {
  return STRATUS_KOKKOS_MATH_NS::sin(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T cos(T x) {
  return STRATUS_KOKKOS_MATH_NS::cos(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T floor(T x) {
  return STRATUS_KOKKOS_MATH_NS::floor(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T erfc(T x) {
  return STRATUS_KOKKOS_MATH_NS::erfc(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T acos(T x) {
  return STRATUS_KOKKOS_MATH_NS::acos(x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T atan2(T y, T x) {
  return STRATUS_KOKKOS_MATH_NS::atan2(y, x);
}
template <class T>
KOKKOS_INLINE_FUNCTION T pow(T x, T y) {
  return STRATUS_KOKKOS_MATH_NS::pow(x, y);
}
template <class T>
KOKKOS_INLINE_FUNCTION T fabs(T x) {
  return STRATUS_KOKKOS_MATH_NS::fabs(x);
}

#undef STRATUS_KOKKOS_MATH_NS

/// pi in the precision of T.
template <class T>
KOKKOS_INLINE_FUNCTION constexpr T pi() {
  return static_cast<T>(3.14159265358979323846264338327950288);
}

}  // namespace stratus::kmath

namespace stratus {

/// The host mirror type of a View: View::host_mirror_type exists from Kokkos 3.x to 5.x, while
/// View::HostMirror is deprecated from 4.x on.
template <class View>
using HostMirrorOf = typename View::host_mirror_type;

}  // namespace stratus
