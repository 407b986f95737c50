# Detects the optional parts (CUDA, LibTorch) once and says at configure time what is skipped.
include(CheckLanguage)

function(sdtw_report_part name found what)
  if(${found})
    message(STATUS "sdtw: ${name} found: building ${what}")
  else()
    message(STATUS "sdtw: ${name} not found: skipping ${what}")
  endif()
endfunction()

option(SDTW_ENABLE_CUDA "Build the CUDA kernels when nvcc is available" ON)
option(SDTW_ENABLE_TORCH "Build the LibTorch operators when LibTorch is available" ON)

set(SDTW_HAVE_CUDA OFF)
if(SDTW_ENABLE_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(SDTW_HAVE_CUDA ON)
  endif()
endif()
sdtw_report_part(CUDA SDTW_HAVE_CUDA "kernels/, the CUDA baseline and the GPU tests")

set(SDTW_HAVE_TORCH OFF)
if(SDTW_ENABLE_TORCH)
  find_package(Torch QUIET)
  if(Torch_FOUND)
    set(SDTW_HAVE_TORCH ON)
  endif()
endif()
sdtw_report_part(LibTorch SDTW_HAVE_TORCH "pytorch/, baselines/ and the harness")

# GPU tests skip themselves by name (GTEST_SKIP) when no device is present; ctest shows them as skipped.
# label: one ctest label, "cpu" or "gpu", so that `ctest -L gpu` selects the device tests.
function(sdtw_add_gtest target label)
  include(GoogleTest)
  gtest_discover_tests(${target}
    PROPERTIES LABELS ${label} SKIP_REGULAR_EXPRESSION "SKIPPED"
    DISCOVERY_TIMEOUT 120)
endfunction()

# The same test binary on fresh seeds (SDTW_FRESH_SEEDS=1), three processes in a row, as one ctest
# entry <target>_fresh_seeds with labels `label` and fuzz; the default entries run on fixed seeds.
# filter: the gtest filter of the tests that draw seeds.
function(sdtw_add_fresh_seed_test target label filter)
  add_test(NAME ${target}_fresh_seeds
    COMMAND bash -c "for run in 1 2 3; do \"$0\" --gtest_filter=\"$1\" || exit 1; done"
            $<TARGET_FILE:${target}> ${filter})
  set_tests_properties(${target}_fresh_seeds PROPERTIES LABELS "${label};fuzz" ENVIRONMENT SDTW_FRESH_SEEDS=1
    SKIP_REGULAR_EXPRESSION "SKIPPED" TIMEOUT 300)
endfunction()
