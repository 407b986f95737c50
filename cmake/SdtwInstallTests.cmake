# The install tests (label cpu): the C++ consumer against `cmake --install` output, pip install into
# a fresh virtual environment and the wheel of `python -m build`, both reusing this build tree (no
# second build), and deps.sh's detection. The tests that read or build this tree take one lock.
add_test(NAME sdtw_install_consumer
  COMMAND ${CMAKE_COMMAND} -DSDTW_BUILD_DIR=${CMAKE_BINARY_DIR} -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install-consumer
          -DGENERATOR=${CMAKE_GENERATOR} -DCXX=${CMAKE_CXX_COMPILER}
          -P ${PROJECT_SOURCE_DIR}/examples/consumer/tests/build_against_install.cmake)
set_tests_properties(sdtw_install_consumer PROPERTIES LABELS cpu TIMEOUT 600 RESOURCE_LOCK sdtw_build_tree)

if(TARGET sdtw_torch AND SDTW_PYTHON)
  foreach(how pip wheel)
    add_test(NAME sdtw_${how}_install
      COMMAND bash ${PROJECT_SOURCE_DIR}/pip_backend/tests/install_test.sh ${how} ${SDTW_PYTHON}
              ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/${how}-install ${PROJECT_VERSION})
    set_tests_properties(sdtw_${how}_install PROPERTIES LABELS cpu TIMEOUT 600 RESOURCE_LOCK sdtw_build_tree
      SKIP_REGULAR_EXPRESSION "SKIPPED:")
  endforeach()
endif()

add_test(NAME sdtw_deps_detection COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/tests/deps_test.sh)
set_tests_properties(sdtw_deps_detection PROPERTIES LABELS cpu TIMEOUT 300 SKIP_REGULAR_EXPRESSION "SKIPPED:")
