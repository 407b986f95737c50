# What `cmake --install` puts under a prefix: the headers, the libraries and the CMake package
# `sdtw` (find_package(sdtw) gives sdtw::reference, and sdtw::kernels / sdtw::torch when built).
# The component `python` (not part of a plain install) is the Python package sdtw_torch with its
# library inside, which the pip backend (pip_backend/) installs into a wheel.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SDTW_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/sdtw)
set(SDTW_CONFIG_WITH_KERNELS OFF)
set(SDTW_CONFIG_WITH_TORCH OFF)
set(_sdtw_install_targets)
foreach(part reference constraint kernels torch)
  if(TARGET sdtw_${part})
    set_target_properties(sdtw_${part} PROPERTIES EXPORT_NAME ${part})
    list(APPEND _sdtw_install_targets sdtw_${part})
    # The target sdtw_torch (sdtw::torch) is built from pytorch/: no folder may be named torch.
    set(_sdtw_folder ${part})
    if(part STREQUAL "torch")
      set(_sdtw_folder pytorch)
    endif()
    if(part STREQUAL "constraint")  # header-only, in kernels/include, used by the CPU build too
      install(FILES kernels/include/sdtw/kernels/constraint.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sdtw/kernels)
    else()
      install(DIRECTORY ${_sdtw_folder}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
    endif()
  endif()
endforeach()
if(TARGET sdtw_kernels)
  set(SDTW_CONFIG_WITH_KERNELS ON)
endif()
if(TARGET sdtw_torch)
  set(SDTW_CONFIG_WITH_TORCH ON)
  # The installed library finds LibTorch (and CUDA) where it was linked against them.
  set_target_properties(sdtw_torch PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endif()

install(TARGETS ${_sdtw_install_targets} EXPORT sdtwTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT sdtwTargets NAMESPACE sdtw:: DESTINATION ${SDTW_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/sdtwConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/sdtwConfig.cmake
  INSTALL_DESTINATION ${SDTW_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/sdtwConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/sdtwConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/sdtwConfigVersion.cmake
  DESTINATION ${SDTW_INSTALL_CMAKEDIR})

if(TARGET sdtw_torch)
  # The build's version, torch and CUDA, next to the library (sdtw_torch.__version__ reads it), as
  # a local version label in the PyG style: 0.1.0+pt113cpu, 0.1.0+pt211cu130.
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _sdtw_torch_mm "${Torch_VERSION}")
  set(_sdtw_label "pt${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
  if(SDTW_TORCH_WITH_CUDA)
    set(_sdtw_cuda "\"${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR}\"")
    string(APPEND _sdtw_label "cu${CUDAToolkit_VERSION_MAJOR}${CUDAToolkit_VERSION_MINOR}")
  else()
    set(_sdtw_cuda null)
    string(APPEND _sdtw_label "cpu")
  endif()
  set(SDTW_TORCH_BUILD_INFO $<TARGET_FILE_DIR:sdtw_torch>/sdtw_torch_build.json)
  file(GENERATE OUTPUT ${SDTW_TORCH_BUILD_INFO} CONTENT
    "{\"version\": \"${PROJECT_VERSION}+${_sdtw_label}\", \"torch\": \"${Torch_VERSION}\", \"cuda\": ${_sdtw_cuda}}\n")
  install(DIRECTORY pytorch/python/sdtw_torch DESTINATION . COMPONENT python EXCLUDE_FROM_ALL
    FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
  install(TARGETS sdtw_torch LIBRARY DESTINATION sdtw_torch COMPONENT python EXCLUDE_FROM_ALL)
  install(FILES ${SDTW_TORCH_BUILD_INFO} DESTINATION sdtw_torch COMPONENT python EXCLUDE_FROM_ALL)
endif()

if(BUILD_TESTING)
  include(cmake/SdtwInstallTests.cmake)
endif()
