# ctest sdtw_install_consumer: installs a configured and built tree into a fresh prefix, then
# configures, builds and runs examples/consumer against that prefix only.
#   cmake -DSDTW_BUILD_DIR=<build> -DWORK_DIR=<scratch> -DGENERATOR=Ninja -DCXX=<compiler> -P build_against_install.cmake
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${SDTW_BUILD_DIR} --prefix ${WORK_DIR}/prefix
  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/.. -B ${WORK_DIR}/build -G ${GENERATOR}
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${WORK_DIR}/build/sdtw_consumer COMMAND_ERROR_IS_FATAL ANY)
