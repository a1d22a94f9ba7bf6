# Installs Stratus as a CMake package: find_package(Stratus) gives Stratus::core, Stratus::io,
# Stratus::base, Stratus::device,
# Stratus::kernels, Stratus::fft and Stratus::solvers (see tests/consumer for a project that uses it).
include(CMakePackageConfigHelpers)

install(TARGETS stratus_core stratus_base stratus_device stratus_fft stratus_io stratus_solvers stratus_kernels stratus_warnings
        EXPORT StratusTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT StratusTargets NAMESPACE Stratus:: FILE StratusTargets.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Stratus)

configure_package_config_file(cmake/StratusConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/StratusConfig.cmake"
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Stratus)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/StratusConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/StratusConfig.cmake" cmake/FindFFTW3.cmake
              "${CMAKE_CURRENT_BINARY_DIR}/StratusConfigVersion.cmake"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Stratus)
