// A std::string_view is trivially copyable, but its address means nothing on
// another core: rejected, with std::string or taco::view as the way out.
#include <string>
#include <string_view>
#include <tacomesh/posix.hpp>
struct logger {
    void log(std::string_view) {}
    void log_string(const std::string&) {}
};
void f(taco::global_ptr<logger> gp, const std::string& s) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, &logger::log_string, s);
#else
    taco::async(gp, &logger::log, std::string_view(s));
#endif
}
