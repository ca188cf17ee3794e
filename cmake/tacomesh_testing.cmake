# What every part of the tree uses to register its tests: the header-alone
# check, the portable TACO and MESH suites built for a platform, and the
# mpirun line. Included once, from the top-level CMakeLists.txt, when tests
# are built; the targets tacomesh::test_main and tacomesh::test_support come
# from tests/support.
find_package(Catch2 REQUIRED)
include(Catch) # catch_discover_tests

# Every header under <base> compiles on its own (#include <x.hpp> alone in a
# TU, -Werror), with the compiler of this build: no include-order rules.
#   tacomesh_header_alone_tests(<name prefix> <base dir> [INCLUDES dir...] [SYSTEM dir...])
# The tests are named header.<prefix><path under base>.
function(tacomesh_header_alone_tests prefix base)
  cmake_parse_arguments(arg "" "" "INCLUDES;SYSTEM" ${ARGN})
  file(GLOB_RECURSE headers RELATIVE ${base} CONFIGURE_DEPENDS ${base}/*.hpp)
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
    set_tests_properties(header.${prefix}${header} PROPERTIES LABELS compile)
  endforeach()
endfunction()

# The platform-independent suites (tests/): they name no platform, only
# test::on_cores and test::mesh_cores (tests/support/test_support.hpp), so
# each platform builds them once more with its own choice of cores.
set(TACOMESH_TACO_SUITES
  ${PROJECT_SOURCE_DIR}/tests/test_invocation.cpp ${PROJECT_SOURCE_DIR}/tests/test_collective.cpp
  ${PROJECT_SOURCE_DIR}/tests/test_api.cpp ${PROJECT_SOURCE_DIR}/tests/test_tasks.cpp)
set(TACOMESH_MESH_SUITES
  ${PROJECT_SOURCE_DIR}/tests/test_mesh.cpp ${PROJECT_SOURCE_DIR}/tests/test_mesh_containers.cpp
  ${PROJECT_SOURCE_DIR}/tests/test_mesh_structures.cpp)

# A Catch2 test program: its sources, the shared main and test helpers, the
# debug checks on (their tests must see them in optimised builds too).
#   tacomesh_test_program(<target> SOURCES... [SUITES TACO|MESH...] [LINK lib...] [DEFINE def...])
function(tacomesh_test_program target)
  cmake_parse_arguments(arg "" "" "SOURCES;SUITES;LINK;DEFINE" ${ARGN})
  set(sources ${arg_SOURCES})
  foreach(suite IN LISTS arg_SUITES)
    list(APPEND sources ${TACOMESH_${suite}_SUITES})
  endforeach()
  add_executable(${target} ${sources})
  target_link_libraries(${target} PRIVATE tacomesh::test_main tacomesh::test_support ${arg_LINK} tacomesh_warnings)
  target_compile_definitions(${target} PRIVATE TACO_DEBUG_CHECKS=1 ${arg_DEFINE})
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
