# Task and scheduler benchmarks (bench/README.md, "Tasks and schedulers"). Included from
# bench/CMakeLists.txt where Google Benchmark has been found.

# Paired benchmarks: protothread resume, coroutine switch, scheduler overhead
# per task, sync round trip from a coroutine / protothread / main.
add_executable(bench_tasks ${CMAKE_CURRENT_LIST_DIR}/bench_tasks.cpp)
target_link_libraries(bench_tasks PRIVATE tacomesh::posix tacomesh::bench_support tacomesh_warnings)

# Instructions per task under callgrind (count_task_instructions.sh): a plain
# single-core program, no Google Benchmark, so the counts are taco's alone.
add_executable(instr_tasks ${CMAKE_CURRENT_LIST_DIR}/instr_tasks.cpp)
target_link_libraries(instr_tasks PRIVATE tacomesh::posix tacomesh_warnings)
