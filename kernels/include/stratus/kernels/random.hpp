// Counter-based random numbers of every solver: every draw is a pure function of its key, so
// results never depend on the decomposition, on the order atoms are stored in, on thread scheduling
// or on restarts (there is no generator state to save).
//
// Construction. A key is (seed, stream, c0, c1, c2), all 64-bit. It is hashed by chaining the
// SplitMix64 output function (Steele, Lea & Flood, OOPSLA 2014; the finalizer is Stafford's
// "Mix13" variant of the MurmurHash3 fmix64):
//   h = mix(seed); h = mix(h ^ stream); h = mix(h ^ c0); h = mix(h ^ c1); h = mix(h ^ c2)
// where mix(z) = fmix(z + 0x9e3779b97f4a7c15) (golden-ratio increment, so mix(0) != 0). Each
// step is a bijection of h for a fixed key word, and fmix has full avalanche, so keys that
// differ in any bit give unrelated outputs. A uniform takes the top 53 bits of h and maps
// them to the open interval (0, 1): (k + 1/2) 2^-53. A standard normal takes two uniforms,
// from h and from mix(h), through Box-Muller: sqrt(-2 ln u1) cos(2 pi u2).
//
// Streams in use, all declared here so that draws of different purposes never coincide:
//   rng_stream_langevin:         md, (seed, stream, step, global id, component)
//   rng_stream_velocity:         md, (seed, stream, global id, component, 0)
//   rng_stream_spectral_initial: spectral, (seed, stream, mode key, component, re/im)
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/core/types.hpp"

#include <cstdint>

namespace stratus::kernels {

/// Stream tag of the Langevin thermostat noise.
inline constexpr std::uint64_t rng_stream_langevin = 1;
/// Stream tag of initial velocities.
inline constexpr std::uint64_t rng_stream_velocity = 2;
/// Stream tag of the spectral solver's random initial field.
inline constexpr std::uint64_t rng_stream_spectral_initial = 101;

/// SplitMix64 step: golden-ratio increment then the Mix13 finalizer; a bijection of z.
KOKKOS_INLINE_FUNCTION std::uint64_t rng_mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// 64-bit hash of the key (seed, stream, c0, c1, c2) (construction in the header comment).
KOKKOS_INLINE_FUNCTION std::uint64_t rng_hash(std::uint64_t seed, std::uint64_t stream,
                                              std::uint64_t c0, std::uint64_t c1,
                                              std::uint64_t c2) {
  std::uint64_t h = rng_mix(seed);
  h = rng_mix(h ^ stream);
  h = rng_mix(h ^ c0);
  h = rng_mix(h ^ c1);
  return rng_mix(h ^ c2);
}

/// Maps the top 53 bits of h to a double in the open interval (0, 1).
KOKKOS_INLINE_FUNCTION Real rng_to_unit(std::uint64_t h) {
  return (static_cast<Real>(h >> 11) + Real(0.5)) * Real(1.1102230246251565404e-16);  // 2^-53
}

/// Uniform deviate in (0, 1) for the key (seed, stream, c0, c1, c2).
KOKKOS_INLINE_FUNCTION Real rng_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t c0,
                                        std::uint64_t c1, std::uint64_t c2) {
  return rng_to_unit(rng_hash(seed, stream, c0, c1, c2));
}

/// Standard normal deviate N(0, 1) for the key (seed, stream, c0, c1, c2) (Box-Muller).
KOKKOS_INLINE_FUNCTION Real rng_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t c0,
                                       std::uint64_t c1, std::uint64_t c2) {
  const std::uint64_t h = rng_hash(seed, stream, c0, c1, c2);
  const Real u1 = rng_to_unit(h);
  const Real u2 = rng_to_unit(rng_mix(h));
  return kmath::sqrt(Real(-2) * kmath::log(u1)) * kmath::cos(2 * kmath::pi<Real>() * u2);
}

}  // namespace stratus::kernels
