# Profile-guided optimisation (GCC) of the Jinja engine: chatwire_value and chatwire_jinja.
#
# Why: a render is a tree-walking interpreter whose time is spread thin over many small
# branches and calls (statement dispatch, condition tests, lookups, value copies). With
# counts from real renders GCC lays out the hot paths, inlines and predicts them far
# better than from static guesses; CPython, which runs the oracle, is built the same way.
# docs/conformance.md has the measured effect.
#
# How: this build configures a sub-build in <build>/pgo (CHATWIRE_PGO_STAGE=generate) that
# compiles the two libraries with -fprofile-generate and links cmake/pgo/train.cpp, which
# compiles every template of data/templates and renders it with every conversation of
# data/conversations, each render of a freshly parsed copy of it. Its counts land in <build>/pgo/profile and this build compiles the two
# libraries with -fprofile-use. Object files are named relative to their build directory
# (-fprofile-prefix-path), so the two builds' names agree. The sub-build reruns (and this
# build recompiles the engine) only when an engine source or the bundled data changed.
#
# Only for GCC Release builds without sanitizers; -DCHATWIRE_PGO=OFF gives a plain build.

set(CHATWIRE_PGO_REPEAT 20)  # renders of each (template, conversation) pair in the run

# True when this configuration gets a profile-guided engine.
function(chatwire_pgo_wanted out)
  set(wanted OFF)
  if(CHATWIRE_PGO AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "Release"
     AND NOT CHATWIRE_SANITIZE AND NOT CHATWIRE_FUZZ)
    set(wanted ON)
  endif()
  set(${out} ${wanted} PARENT_SCOPE)
endfunction()

# The sub-build (CHATWIRE_PGO_STAGE=generate): instrumented engine, the trainer, and the
# target chatwire_pgo_profile that runs it and writes the stamp.
function(chatwire_pgo_training_build)
  set(flags -fprofile-generate=${CHATWIRE_PGO_PROFILE_DIR} -fprofile-prefix-path=${CMAKE_BINARY_DIR}
            -fprofile-update=single)
  foreach(lib chatwire_value chatwire_jinja)
    target_compile_options(${lib} PRIVATE ${flags})
  endforeach()
  add_executable(chatwire_pgo_train ${PROJECT_SOURCE_DIR}/cmake/pgo/train.cpp)
  target_link_libraries(chatwire_pgo_train PRIVATE chatwire_jinja)
  target_link_options(chatwire_pgo_train PRIVATE -fprofile-generate)
  file(GLOB data CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/data/templates/*.jinja
       ${PROJECT_SOURCE_DIR}/data/conversations/*.json)
  # Old counts are removed first: gcov would add the new run to them.
  add_custom_command(
    OUTPUT ${CHATWIRE_PGO_STAMP}
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${CHATWIRE_PGO_PROFILE_DIR}
    COMMAND chatwire_pgo_train ${PROJECT_SOURCE_DIR}/data ${CHATWIRE_PGO_REPEAT}
    COMMAND ${CMAKE_COMMAND} -E touch ${CHATWIRE_PGO_STAMP}
    DEPENDS chatwire_pgo_train ${data}
    COMMENT "Profile run of the engine (PGO)"
    VERBATIM)
  add_custom_target(chatwire_pgo_profile ALL DEPENDS ${CHATWIRE_PGO_STAMP})
endfunction()

# This build: run the sub-build first and compile chatwire_value and chatwire_jinja with its profile.
function(chatwire_pgo_use)
  include(ExternalProject)
  set(dir ${CMAKE_BINARY_DIR}/pgo)
  set(profile ${dir}/profile)
  set(stamp ${dir}/profile.stamp)
  ExternalProject_Add(chatwire_pgo_training
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${dir}
    CMAKE_GENERATOR ${CMAKE_GENERATOR}
    CMAKE_ARGS -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
               -DCHATWIRE_PGO_STAGE=generate -DCHATWIRE_PGO_PROFILE_DIR=${profile}
               -DCHATWIRE_PGO_STAMP=${stamp}
    # The same code generation flags in both builds, or the counts do not match the code.
    CMAKE_CACHE_ARGS -DCMAKE_CXX_FLAGS:STRING=${CMAKE_CXX_FLAGS}
                     -DCMAKE_CXX_FLAGS_RELEASE:STRING=${CMAKE_CXX_FLAGS_RELEASE}
    BUILD_COMMAND ${CMAKE_COMMAND} --build ${dir} --target chatwire_pgo_profile
    BUILD_ALWAYS ON
    BUILD_BYPRODUCTS ${stamp}
    INSTALL_COMMAND ""
    EXCLUDE_FROM_ALL ON)
  # -fprofile-partial-training: code the run did not reach (rare filters, error paths)
  # stays optimised as usual instead of for size. GCC 12 reports a false -Wrestrict inside
  # libstdc++'s std::string::insert once profile data changes its inlining (GCC bug
  # 105329, also silenced in src/jinja/state.hpp).
  set(flags -fprofile-use=${profile} -fprofile-prefix-path=${CMAKE_BINARY_DIR}
            -fprofile-partial-training -Wno-missing-profile -Wno-restrict)
  # With the profile's copy sizes, GCC expands memcpy/memset of a few dozen to a few
  # hundred bytes inline as `rep movsq` / `rep stosq` (75 more sites in the engine), which
  # start slowly on current x86 cores: the output's piece copies took 16% of printed `+`
  # chains. The C library's copies are faster there (A/B: printed + chains -13%, printed
  # trim -22%, the benchmark's 41 pairs -1.5%).
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    list(APPEND flags -mstringop-strategy=libcall)
  endif()
  foreach(lib chatwire_value chatwire_jinja)
    target_compile_options(${lib} PRIVATE ${flags})
    add_dependencies(${lib} chatwire_pgo_training)
    # New counts recompile the library.
    get_target_property(srcs ${lib} SOURCES)
    set_source_files_properties(${srcs} TARGET_DIRECTORY ${lib} PROPERTIES OBJECT_DEPENDS ${stamp})
  endforeach()
endfunction()
