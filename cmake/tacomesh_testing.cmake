# What every part of the tree uses to register its tests: the header-alone
# check, the portable TACO and MESH suites built for a platform, and the
# mpirun line. Included once, from the top-level CMakeLists.txt, when tests
# are built; the targets tacomesh::test_main and tacomesh::test_support come
# from tests/support.
find_package(Catch2 REQUIRED)
include(Catch) # catch_discover_tests

# Every header under <base> compiles on its own (#include <x.hpp> alone in a
# TU, -Werror), with the compiler of this build: no include-order rules.
# Except the internal ones (under a detail/ directory): no user includes
# them, only the headers around them do, and each of those is compiled
# alone here, so an include an internal header lacks shows wherever a user
# could meet it (33 compiles of about 1.6 s each, CI's budget).
#   tacomesh_header_alone_tests(<name prefix> <base dir> [INCLUDES dir...] [SYSTEM dir...])
# The tests are named header.<prefix><path under base>.
function(tacomesh_header_alone_tests prefix base)
  cmake_parse_arguments(arg "" "" "INCLUDES;SYSTEM" ${ARGN})
  file(GLOB_RECURSE headers RELATIVE ${base} CONFIGURE_DEPENDS ${base}/*.hpp)
  list(FILTER headers EXCLUDE REGEX "(^|/)detail/")
  # Nor the umbrella headers, which only include others (taco.hpp,
  # posix.hpp, ...): each header they include is compiled alone here, and
  # the tests' own TUs include every umbrella, so one that names a header
  # wrongly, or gathers two that clash, fails the build. The heaviest
  # compiles of the set (3-4 s each, CI's budget).
  set(alone)
  foreach(header IN LISTS headers)
    file(STRINGS ${base}/${header} code)
    list(FILTER code EXCLUDE REGEX "^[ \t]*(//.*|#[ \t]*pragma once[ \t]*|#[ \t]*include[ \t]*<[^>]*>[ \t]*)?$")
    if(code)
      list(APPEND alone ${header})
    endif()
  endforeach()
  set(headers ${alone})
  set(flags -I${PROJECT_SOURCE_DIR}/include)
  foreach(dir IN LISTS arg_INCLUDES)
    list(APPEND flags -I${dir})
  endforeach()
  # Third-party headers as system ones (serd's nullability annotations trip
  # -Wpedantic under clang), except the compiler's own: -isystem /usr/include
  # would break #include_next in the C++ library.
  foreach(dir IN LISTS arg_SYSTEM)
    if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES AND NOT dir STREQUAL "/usr/include")
      list(APPEND flags -isystem ${dir})
    endif()
  endforeach()
  foreach(header IN LISTS headers)
    add_test(NAME header.${prefix}${header}
      COMMAND ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror ${flags}
              -include ${header} -x c++ /dev/null)
    set_tests_properties(header.${prefix}${header} PROPERTIES LABELS "compile;header")
  endforeach()
endfunction()

# The platform-independent suites (tests/): they name no platform, only
# test::run with test::on_cores and test::mesh_cores
# (tests/support/test_support.hpp), so they are compiled once, as object
# libraries (tests/support/CMakeLists.txt), and each platform links them into
# a program of its own with its platform file, which says where test::run
# runs (tests/suites_on_posix.cpp, platforms/<p>/tests/suites_on_<p>.cpp).
set(TACOMESH_TACO_SUITES
  ${PROJECT_SOURCE_DIR}/tests/test_invocation.cpp ${PROJECT_SOURCE_DIR}/tests/test_collective.cpp
  ${PROJECT_SOURCE_DIR}/tests/test_api.cpp ${PROJECT_SOURCE_DIR}/tests/test_tasks.cpp
  ${PROJECT_SOURCE_DIR}/tests/test_results.cpp ${PROJECT_SOURCE_DIR}/tests/test_bulk.cpp
  ${PROJECT_SOURCE_DIR}/tests/test_channels.cpp)
set(TACOMESH_MESH_SUITES
  ${PROJECT_SOURCE_DIR}/tests/test_mesh.cpp ${PROJECT_SOURCE_DIR}/tests/test_mesh_containers.cpp
  ${PROJECT_SOURCE_DIR}/tests/test_mesh_structures.cpp ${PROJECT_SOURCE_DIR}/tests/test_mesh_sizes.cpp)

# What every test TU is compiled with: the shared helpers, the warnings (and
# the sanitizer's flags), the debug checks on (their tests must see them in
# optimised builds too), and -O1 in an optimised tree. The tests' own code
# is two thirds of the tree's compile time, and -O2 spends 80% of it in the
# optimiser: -O1 builds it in 30% less time (CI's budget), while the apps'
# libraries, the examples and the benchmarks in the same tree, which run
# the same headers, stay at the tree's level.
#
# A test program's sources compile four to a TU (TACOMESH_UNITY_TESTS, a
# unity build): its files instantiate the same templates (the runtime, the
# platform, Catch), which each TU compiled and optimised again. Four of the
# RDF tests took 53 CPU-seconds one by one and 31 together, three TACO
# suites 37 and 28; four, so that no TU runs much past a minute while the
# other CPU has nothing left to build. So the files of one program share
# one namespace scope: a helper of the same name in two of them (even in
# an anonymous namespace) is an error here. Name it after what it does.
function(tacomesh_test_settings target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ${TACOMESH_UNITY_TESTS} UNITY_BUILD_BATCH_SIZE 4)
  target_link_libraries(${target} PRIVATE tacomesh::test_support tacomesh_warnings)
  target_compile_definitions(${target} PRIVATE TACO_DEBUG_CHECKS=1)
  if(NOT TACOMESH_SANITIZE) # the sanitizer trees choose their level (build.sh)
    target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo,Release>:-O1>)
  endif()
endfunction()

# Most test TUs read the same headers first (Catch, test_support.hpp, which
# brings the POSIX platform, TACO and MESH): 3-4 s of parsing each, before
# a line of the test's own. They read them precompiled, once per tree
# (tacomesh_test_pch, tests/support): 1-1.5 s less per TU with g++ (same
# TUs, alternating), the ASan tree's build (clang) 254 -> 226 s. Only a TU whose defines and flags are the precompiled ones' may:
# g++ quietly parses the headers when they differ, but clang takes the
# precompiled headers as they are when a define is only added, so a program
# built against a variant of the framework (a DEFINE, the counted SCC) would
# test the plain one. Those compile their headers themselves.
function(tacomesh_use_test_pch target)
  if(TARGET tacomesh_test_pch)
    target_precompile_headers(${target} REUSE_FROM tacomesh_test_pch)
  endif()
endfunction()

# A Catch2 test program: its sources, the shared main, the suites it runs
# (their platform file among its SOURCES). PATHS: definitions of data
# directories, which no header reads; DEFINE: definitions that may change
# the framework's headers (the program then does not read them precompiled).
#   tacomesh_test_program(<target> SOURCES... [SUITES TACO|MESH...] [LINK lib...] [PATHS def...]
#                         [DEFINE def...])
function(tacomesh_test_program target)
  cmake_parse_arguments(arg "" "" "SOURCES;SUITES;LINK;PATHS;DEFINE" ${ARGN})
  add_executable(${target} ${arg_SOURCES})
  tacomesh_test_settings(${target})
  string(TOLOWER "${arg_SUITES}" suites)
  list(TRANSFORM suites PREPEND tacomesh_)
  list(TRANSFORM suites APPEND _suites)
  target_link_libraries(${target} PRIVATE tacomesh::test_main ${suites} ${arg_LINK})
  target_compile_definitions(${target} PRIVATE ${arg_PATHS} ${arg_DEFINE})
  if(NOT arg_DEFINE AND NOT tacomesh::scc_counted IN_LIST arg_LINK)
    tacomesh_use_test_pch(${target})
  endif()
endfunction()

# mpirun for tests on this machine: more ranks than CPUs (--oversubscribe),
# as root where CI runs, shared memory + self as the transport on one host.
# TACOMESH_MPIRUN_LINE is empty where Open MPI's launcher is not installed,
# and in the sanitizer builds (Open MPI is not instrumented: the sanitizers
# would report its internals).
set(TACOMESH_MPIRUN_LINE)
if(MPI_CXX_FOUND AND NOT TACOMESH_SANITIZE)
  find_program(TACOMESH_MPIRUN NAMES mpirun mpiexec)
  if(TACOMESH_MPIRUN)
    set(TACOMESH_MPIRUN_LINE ${TACOMESH_MPIRUN} --oversubscribe --allow-run-as-root --mca btl self,vader)
  else()
    message(STATUS "tacomesh: mpirun not found, the tests under mpirun are not run (Debian: openmpi-bin)")
  endif()
endif()
set(TACOMESH_MPI_TEST_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

# A benchmark's smoke test (ctest -L bench-smoke): the program at tiny sizes
# (BENCH_SMOKE=1), then bench/support/check_bench.py checks what it printed
# against EXPECT, a TOML file beside the benchmark (its format: the
# checker's --help). Named "bench-smoke: <name>".
#   tacomesh_bench_smoke(<name> COMMAND cmd... [EXPECT file [VARIANT v]] [NEEDS what...]
#                        [USES target...] [SETUP fixture] [REQUIRES fixture...] [AFTER test...]
#                        [ENV var=value...] [TIMEOUT s] [SERIAL])
# NEEDS: a program, a file or python:module that may be missing; the test is
# then skipped (77) with the reason, not passed. The JSON is kept as
# <build>/bench-smoke/<name>.json (tacomesh_bench_smoke_output), where a
# later test may read it: SETUP names it a fixture, REQUIRES waits for one.
# USES: the targets a script runs, besides the $<TARGET_FILE:...> in COMMAND
# (the bench_smoke target builds them all).
find_package(Python3 3.11 COMPONENTS Interpreter QUIET) # tomllib
set(TACOMESH_BENCH_SMOKE_DIR ${PROJECT_BINARY_DIR}/bench-smoke)
# The Python that Debian's python3-igraph / -matplotlib are installed for,
# which may not be the python3 on PATH.
find_program(TACOMESH_SYSTEM_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT TACOMESH_SYSTEM_PYTHON)
  set(TACOMESH_SYSTEM_PYTHON python3)
endif()
file(MAKE_DIRECTORY ${TACOMESH_BENCH_SMOKE_DIR})

function(tacomesh_bench_smoke_output out name)
  string(REGEX REPLACE "[^A-Za-z0-9_.+-]+" "_" file "${name}")
  set(${out} ${TACOMESH_BENCH_SMOKE_DIR}/${file}.json PARENT_SCOPE)
endfunction()

function(tacomesh_bench_smoke name)
  cmake_parse_arguments(arg "SERIAL" "EXPECT;VARIANT;TIMEOUT;SETUP"
                        "COMMAND;NEEDS;USES;REQUIRES;AFTER;ENV" ${ARGN})
  if(NOT Python3_FOUND)
    message(STATUS "tacomesh: no Python 3.11, the benchmark smoke test ${name} is not registered")
    return()
  endif()
  tacomesh_bench_smoke_output(out "${name}")
  set(checker ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/support/check_bench.py --out ${out})
  if(arg_EXPECT)
    cmake_path(ABSOLUTE_PATH arg_EXPECT BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND checker --expect ${arg_EXPECT})
    if(arg_VARIANT)
      list(APPEND checker --variant ${arg_VARIANT})
    endif()
  endif()
  foreach(need IN LISTS arg_NEEDS)
    list(APPEND checker --needs ${need})
  endforeach()
  set(test "bench-smoke: ${name}")
  add_test(NAME ${test} COMMAND ${checker} -- ${arg_COMMAND} WORKING_DIRECTORY ${TACOMESH_BENCH_SMOKE_DIR})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  set(env BENCH_SMOKE=1 ${arg_ENV})
  set_tests_properties(${test} PROPERTIES LABELS bench-smoke TIMEOUT ${arg_TIMEOUT} SKIP_RETURN_CODE 77
                       ENVIRONMENT "${env}")
  if(arg_SERIAL)
    set_tests_properties(${test} PROPERTIES RUN_SERIAL ON)
  endif()
  if(arg_SETUP)
    set_tests_properties(${test} PROPERTIES FIXTURES_SETUP ${arg_SETUP})
  endif()
  if(arg_REQUIRES)
    set_tests_properties(${test} PROPERTIES FIXTURES_REQUIRED "${arg_REQUIRES}")
  endif()
  if(arg_AFTER)
    list(TRANSFORM arg_AFTER PREPEND "bench-smoke: ")
    set_tests_properties(${test} PROPERTIES DEPENDS "${arg_AFTER}")
  endif()
  # What the bench_smoke target builds before it runs these tests.
  string(REGEX MATCHALL "\\$<TARGET_FILE:[^>]+>" files "${arg_COMMAND}")
  list(TRANSFORM files REPLACE "\\$<TARGET_FILE:([^>]+)>" "\\1")
  set_property(GLOBAL APPEND PROPERTY TACOMESH_BENCH_SMOKE_TARGETS ${files} ${arg_USES})
endfunction()
