// Names shared by the euler solver's schema and setup: boundary faces and problems (the order
// of kProblems is that of kernels::euler::ProblemKind).
#pragma once

#include <string>
#include <vector>

namespace stratus::euler_names {

inline const std::vector<std::string> kFaces = {"x_lo", "x_hi", "y_lo", "y_hi", "z_lo", "z_hi"};
inline const std::vector<std::string> kProblems = {
    "riemann",           "shu_osher", "riemann2d",   "kelvin_helmholtz",
    "isentropic_vortex", "sedov",     "taylor_green"};

}  // namespace stratus::euler_names
