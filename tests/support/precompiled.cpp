// The TU that builds the test programs' precompiled headers
// (tacomesh_test_pch in CMakeLists.txt): the headers come from CMake's
// force-included header, and nothing else is compiled here.
