#!/usr/bin/env bash
# One entry point for set-up, building and running. On a fresh Debian machine
# it installs what is missing (compiler, CMake, Ninja, Catch2, Google Benchmark,
# Boost.Intrusive and Boost.Context).
#
#   ./build.sh demo               the main job: tacomesh-cluster on the world-trade graph shipped in
#                                 apps/modularity/data (multilevel, then the MESH paper's greedy search),
#                                 then tacomesh-rdf on LUBM(1) (inference, a data-parallel query, the bench)
#   ./build.sh framework-demo [args]  the framework's tour (invocations, futures, controllers; 4 cores)
#   ./build.sh test               build and run the tests (ctest; not the benchmark smoke or the slow ones)
#   ./build.sh slow               the tests labelled slow (minutes each: hosts in network namespaces), capped
#   ./build.sh asan               the tests under ASan+UBSan, built with clang (the second compiler: the
#                                 negative-compile tests run there too)
#   ./build.sh tsan               the tests under ThreadSanitizer (g++)
#   ./build.sh clang              the whole tree and its tests built with clang, unsanitized
#   ./build.sh bench-smoke        build the benchmarks and run each briefly (ctest -L bench-smoke)
#   ./build.sh fuzz [seconds]     the graph readers, the SPARQL parser, the N-Triples loader and the
#                                 RDF store file reader under libFuzzer (clang), over the kept corpora
#                                 (the seconds are shared)
#   ./build.sh consumer           use the installed package and add_subdirectory from a tiny project
#   ./build.sh deps GROUP...      install a package group only: base, test, clang, bench
set -euo pipefail
cd "$(dirname "$0")"
root=$PWD
jobs=$(nproc)

need_packages() {
  local missing=()
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  # The package lists once an hour is enough (CI installs in three steps).
  find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -60 2>/dev/null | grep -q . ||
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}
# g++-multilib: the SCC real-chip build (32-bit, freestanding; CTest scc.chip_build).
# iproute2: the two-host MPI test over network namespaces (platforms/mpi/tests/netns_multihost.sh).
base_packages=(g++ g++-multilib cmake ninja-build catch2 libbenchmark-dev libboost-dev libboost-context-dev zlib1g-dev
               libserd-dev libraptor2-dev liburiparser-dev libpcre2-dev libssl-dev libmetis-dev libopenmpi-dev openmpi-bin iproute2 python3 python3-rdflib
               libcpp-httplib-dev curl python3-sparqlwrapper)
# clang: the ASan and fuzzing trees. valgrind, igraph, matplotlib, venv, time: the
# benchmark smoke run's instruction counts, peer, plots, PyPI peers and peak memory.
clang_packages=(clang libclang-rt-14-dev)
bench_packages=(valgrind python3-igraph python3-matplotlib python3-venv time)
# qemu-system-x86: the test runs boot the bare-metal images under QEMU on
# several cores (CTest scc.bare-metal); the demos do not need it.
test_packages=(qemu-system-x86)

configure() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
}
# The test tree (build/) is RelWithDebInfo, so the framework's debug checks
# are on in the apps and benchmarks too, but without the debug info: -g is
# 40% of this template-heavy code's compile time, and a test's failure is
# read from its report. To debug, configure a tree of your own.
plain_flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG")
# The sanitizer trees keep line tables only (-g1 / -gline-tables-only): their
# reports need file and line, not variables. TSan (g++) at -O1, as the
# sanitizers' own docs advise: at -O2 its build took half as long again,
# at -O0 no less, and Boost.Context's switches misbehaved under it. ASan
# (clang) at -O0: clang instruments this template-heavy code 2.5 times
# faster unoptimised (54 s -> 21 s for one clustering file), the tests run
# at a tenth of their sizes anyway, and -O0 hides no error ASan finds at -O1.
sanitizer_flags() { # compiler
  case $1 in clang++) echo "-O0 -gline-tables-only -DNDEBUG" ;; *) echo "-O1 -g1 -DNDEBUG" ;; esac
}
# The plain runs leave the benchmark smoke and the slow tests to their own
# steps.
not_in_plain_runs='bench-smoke|slow'
# The sanitizer runs leave those out too, and the tests on data sets at full
# scale (label scale: the smaller sets run their code paths), and what runs
# no code: the TSan run the negative-compile and header-alone tests (label
# compile), the ASan run, which is clang's, the header-alone ones (label
# header) and the negative tests' controls (label control): the plain run
# checks every header alone and every control with g++ (both compilers read
# the same standard library, so a missing include shows in either), and
# clang compiles each header inside the tests it builds, while the negative
# tests run with both compilers, whose diagnostics they match. The TSan run
# leaves out the CLIs' option and input sweeps (label cli): one thread
# parses them, and ASan checks that code; nor the tests that fill 256 MiB or
# a thread's stack on one thread (TACOMESH_TSAN_SPEC in the top-level
# CMakeLists.txt). Its tree does not even build the programs it leaves out,
# nor the apps' code that runs on no thread of its own: the
# modularity app, and of the RDF app all but the loader, which parses on
# threads (their parallel paths are TACO's and MESH's, whose suites run
# there; the top-level CMakeLists.txt says which).
# The TACO suites again on the emulated SCC ("on scc:") and on MPI ranks
# ("mpi:") are not even built there (their CMakeLists return under
# TACOMESH_SANITIZE): the suites ran under the sanitizer on POSIX, 16-48
# emulated cores on 2 CPUs under TSan take tens of minutes, and Open MPI is
# not built with the sanitizers, which then report its internals. The
# emulation's own tests ("scc:") run. The chip build and the bare-metal
# images booted under QEMU are not built there either
# (TACOMESH_BUILD_SCC_CHIP=OFF): compiled for 32-bit bare metal by the
# compiler alone, no sanitizer reaches them.
not_in_sanitizer_runs="$not_in_plain_runs|scale"

# The sanitizer trees, configured and built.
asan_tree() {
  need_packages "${base_packages[@]}" "${clang_packages[@]}"
  CXX=clang++ configure build-asan -DTACOMESH_SANITIZE=address -DTACOMESH_BUILD_BENCH=OFF -DTACOMESH_BUILD_SCC_CHIP=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(sanitizer_flags clang++)"
  ninja -C build-asan -j "$jobs"
}
tsan_tree() {
  need_packages "${base_packages[@]}"
  configure build-tsan -DTACOMESH_SANITIZE=thread -DTACOMESH_BUILD_BENCH=OFF -DTACOMESH_BUILD_SCC_CHIP=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(sanitizer_flags g++)"
  ninja -C build-tsan -j "$jobs"
}

run_tests() { # dir, ctest args...
  local dir=$1; shift
  ninja -C "$dir" -j "$jobs"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 900 "$@")
}

cmd=${1:-test}; [ $# -gt 0 ] && shift
case "$cmd" in
  demo)
    need_packages "${base_packages[@]}"
    configure build "${plain_flags[@]}"
    ninja -C build -j "$jobs" tacomesh-cluster tacomesh-rdf
    graph=apps/modularity/data/WorldImport1999.el
    echo "== tacomesh-cluster $graph  (multilevel search, 2 cores)"
    ./build/apps/modularity/tacomesh-cluster --members "$graph"
    echo
    echo "== the MESH paper's experiment: globally greedy vertex moving, 2 core processes with private"
    echo "   memory, the static graph cached (DCM) and the clustering write-through (WT), Broadcast controller"
    ./build/apps/modularity/tacomesh-cluster --algorithm greedy --platform processes --controller broadcast \
      --maps mix "$graph"
    lubm=apps/rdf/data
    echo
    echo "== tacomesh-rdf: LUBM(1) raw data + the univ-bench ontology, closed by inference on 2 cores,"
    echo "   then LUBM query 9 (students taking a course of their advisor) split over 2 core processes"
    ./build/apps/rdf/tacomesh-rdf query --data "$lubm/lubm1-raw.nt.gz" --infer "$lubm/univ-bench.owl" \
      --cores 2 --platform processes --explain "$lubm/queries/q09.rq" > build/q09.tsv
    head -5 build/q09.tsv
    echo "   ... $(($(wc -l < build/q09.tsv) - 1)) rows in build/q09.tsv"
    echo
    echo "== tacomesh-rdf bench: the 14 LUBM queries, one core, data-parallel and task-parallel (2 cores)"
    ./build/apps/rdf/tacomesh-rdf bench --data "$lubm/lubm1-inferred.nt.gz" --cores 2 "$lubm"/queries/q*.rq ;;
  framework-demo)
    need_packages "${base_packages[@]}"
    configure build "${plain_flags[@]}"
    ninja -C build -j "$jobs" tacomesh_demo
    ./build/apps/demo/tacomesh_demo "$@" ;;
  test)
    need_packages "${base_packages[@]}" "${test_packages[@]}"
    configure build "${plain_flags[@]}"
    run_tests build -LE "$not_in_plain_runs" ;;
  slow)
    need_packages "${base_packages[@]}"
    configure build "${plain_flags[@]}"
    # One cap for the whole step, so a slow test that grows cannot take CI's
    # budget. Two at a time: rdf.lubm10 and the figures' repeat run fit
    # beside scc_figures.json (80 s of 130 run one after another).
    ninja -C build -j "$jobs"
    (cd build && timeout --foreground 1200 ctest --output-on-failure -j "$jobs" -L slow --timeout 600) ;;
  asan)
    asan_tree
    # Sizes shrink (sanitizers are 5-20x slower).
    TACOMESH_TEST_SCALE=0.1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      run_tests build-asan -LE "$not_in_sanitizer_runs|header|control" ;;
  tsan)
    tsan_tree
    # setarch -R: TSan's shadow layout clashes with the high mmap entropy of recent kernels.
    (cd build-tsan && TACOMESH_TEST_SCALE=0.02 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
      setarch "$(uname -m)" -R ctest --output-on-failure -j "$jobs" --timeout 900 -LE "$not_in_sanitizer_runs|compile|cli") ;;
  clang)
    need_packages "${base_packages[@]}" "${test_packages[@]}" clang
    CXX=clang++ configure build-clang -DTACOMESH_BUILD_BENCH=OFF
    run_tests build-clang -LE "$not_in_plain_runs" ;;
  bench-smoke)
    need_packages "${base_packages[@]}" "${bench_packages[@]}"
    # The tests' tree (RelWithDebInfo, tests and benchmarks on): one build for
    # both. Each benchmark's smoke test is labelled bench-smoke; a skipped one
    # (no valgrind, mpirun, igraph, PyPI...) says what it lacked: listed after.
    configure build "${plain_flags[@]}"
    ninja -C build -j "$jobs"
    (cd build && rc=0 && { ctest -L bench-smoke --output-on-failure -j "$jobs" || rc=$?; } &&
      awk '/^[0-9]+\/[0-9]+ Test: /{ sub(/^[0-9]+\/[0-9]+ Test: /, ""); t = $0 }
           /^SKIPPED: /{ print "skipped: " t " (" substr($0, 10) ")" }' Testing/Temporary/LastTest.log && exit $rc) ;;
  fuzz)
    need_packages "${base_packages[@]}" "${clang_packages[@]}"
    # -O1 and line tables, as libFuzzer's docs build: a quarter less compile
    # time than the tree's -O2 -g, and a crash's stack still names its lines.
    CXX=clang++ configure build-fuzz -DTACOMESH_FUZZ=ON -DTACOMESH_BUILD_TESTS=OFF -DTACOMESH_BUILD_BENCH=OFF \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG"
    ninja -C build-fuzz -j "$jobs" fuzz_readers fuzz_sparql fuzz_ntriples fuzz_store
    # New finds go to a scratch directory; the kept corpora are read only.
    # Add a finding to the target's corpus directory once it is fixed: the
    # tests replay those (modularity.fuzz_corpus, rdf.fuzz_corpus_*).
    secs=${1:-60}
    targets=(apps/modularity/fuzz_readers:apps/modularity/fuzz/corpus
             apps/rdf/fuzz_sparql:apps/rdf/fuzz/corpus_sparql apps/rdf/fuzz_ntriples:apps/rdf/fuzz/corpus_ntriples
             apps/rdf/fuzz_store:apps/rdf/fuzz/corpus_store)
    # One fuzzer per CPU at a time (libFuzzer runs one process), and the
    # seconds are the step's: each target gets seconds x CPUs / targets (at
    # least 10 s: a small budget still takes each past its corpus). Each
    # one's report is printed when its batch ends, in order.
    n=${#targets[@]}
    t=$((secs * jobs / n)); [ $t -ge 10 ] || t=10
    out=$(mktemp -d); rc=0
    for ((first = 0; first < n; first += jobs)); do
      pids=()
      for ((i = first; i < n && i < first + jobs; i++)); do
        target=${targets[$i]}; mkdir "$out/$i"
        ./build-fuzz/"${target%%:*}" "$out/$i" "${target#*:}" -max_total_time="$t" -max_len=4096 -timeout=10 \
          -print_final_stats=1 -artifact_prefix="$out/$i/" > "$out/$i.log" 2>&1 &
        pids+=($!)
      done
      for ((i = first; i < first + ${#pids[@]}; i++)); do
        status=0; wait "${pids[$((i - first))]}" || status=$?
        echo "== ${targets[$i]%%:*}: exit $status"; cat "$out/$i.log"
        [ $status -eq 0 ] || rc=1
      done
    done
    [ $rc -eq 0 ] && rm -rf "$out" || echo "fuzz: the failing inputs are kept under $out (crash-*, timeout-*, oom-*)" >&2
    exit $rc ;;
  deps) # package groups: base, test, clang, bench (.ci/run installs the later steps' while the first builds)
    pkgs=()
    for group in "$@"; do
      case $group in
        base) pkgs+=("${base_packages[@]}") ;; test) pkgs+=("${test_packages[@]}") ;;
        clang) pkgs+=("${clang_packages[@]}") ;; bench) pkgs+=("${bench_packages[@]}") ;;
        *) echo "deps: no package group '$group' (base, test, clang, bench)" >&2; exit 2 ;;
      esac
    done
    need_packages "${pkgs[@]}" ;;
  consumer)
    need_packages "${base_packages[@]}"
    rm -rf build-consumer && mkdir -p build-consumer
    # A default configure, installed without building anything (as users
    # of a header-only library do): the headers and the package go in, the
    # programs not built are skipped, each with a message.
    configure build-consumer/tacomesh
    cmake --install build-consumer/tacomesh --prefix build-consumer/prefix > build-consumer/install.log
    for program in tacomesh-cluster tacomesh-rdf; do
      grep -q "Skipping $program: not built" build-consumer/install.log ||
        { cat build-consumer/install.log; echo "consumer: no message for the unbuilt $program" >&2; exit 1; }
    done
    cmake -S tests/consumer -B build-consumer/installed -G Ninja -DCMAKE_PREFIX_PATH="$root/build-consumer/prefix" >/dev/null
    ninja -C build-consumer/installed && ./build-consumer/installed/consumer
    cmake -S tests/consumer -B build-consumer/subdir -G Ninja -DTACOMESH_SOURCE_DIR="$root" >/dev/null
    ninja -C build-consumer/subdir && ./build-consumer/subdir/consumer ;;
  *) echo "usage: $0 demo|framework-demo|test|slow|asan|tsan|clang|bench-smoke|fuzz|consumer|deps GROUP..." >&2; exit 2 ;;
esac
