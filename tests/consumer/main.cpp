#include <tacomesh/posix.hpp>

#include <cstdio>

int main() {
    long r = 0;
    taco::run(tacomesh::posix::config{.cores = 2}, [&] { r = taco::sync(1, +[](long a) { return a * 2; }, 21L); });
    std::printf("consumer: %s (%ld)\n", r == 42 ? "ok" : "WRONG", r);
    return r == 42 ? 0 : 1;
}
