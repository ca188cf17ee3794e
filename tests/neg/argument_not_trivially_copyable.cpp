// A std::map argument cannot be copied byte for byte into a message (and is
// not one of the carried types: std::string, std::vector, taco::view).
#include <map>
#include <tacomesh/posix.hpp>
struct logger {
    void log(std::map<int, int>) {}
    void log_id(int) {}
};
void f(taco::global_ptr<logger> gp) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, &logger::log_id, 3);
#else
    taco::async(gp, &logger::log, std::map<int, int>{});
#endif
}
