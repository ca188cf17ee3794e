// A std::string argument cannot be copied byte for byte into a message.
#include <string>
#include <tacomesh/posix.hpp>
struct logger {
    void log(std::string) {}
    void log_id(int) {}
};
void f(taco::global_ptr<logger> gp) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, &logger::log_id, 3);
#else
    taco::async(gp, &logger::log, std::string("hello"));
#endif
}
