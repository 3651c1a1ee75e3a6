# The `install` test: cmake --install BUILD_DIR into WORK_DIR/prefix, then
#  1. configure, build and run examples/consumer (find_package(chatwire), chatwire::chatwire);
#  2. compile examples/c/main.c with `pkg-config --cflags --libs --static chatwire` and run it.
# Both run on MODEL_DIR. cmake -DBUILD_DIR=.. -DSOURCE_DIR=.. -DWORK_DIR=.. -DMODEL_DIR=..
#   -DGENERATOR=.. -DCXX_COMPILER=.. -DC_COMPILER=.. -P cmake/test_install.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${command}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# 1. CMake: find_package(chatwire) from the installed tree only (the source tree is not on the
#    include path: the consumer is configured in WORK_DIR and finds chatwire through the prefix).
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/consumer -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(${WORK_DIR}/consumer/consumer ${MODEL_DIR})
message(STATUS "consumer: ${run_output}")

# 2. pkg-config, from C.
file(GLOB pc_file ${prefix}/lib*/pkgconfig/chatwire.pc ${prefix}/lib/*/pkgconfig/chatwire.pc)
if(NOT pc_file)
  message(FATAL_ERROR "chatwire.pc was not installed under ${prefix}")
endif()
get_filename_component(pc_dir ${pc_file} DIRECTORY)
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} pkg-config --cflags --libs --static chatwire)
string(STRIP "${run_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${C_COMPILER} ${SOURCE_DIR}/examples/c/main.c -o ${WORK_DIR}/c_example ${flags})
run(${WORK_DIR}/c_example ${MODEL_DIR})
message(STATUS "c example: ${run_output}")
file(REMOVE_RECURSE ${WORK_DIR})
