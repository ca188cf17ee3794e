// An error continuation must take (bound arguments..., taco::error_info).
#include <tacomesh/posix.hpp>
struct source {
    long value() const { return 1; }
};
struct sink {
    void put(long v) { (void)v; }
    void failed(int tag, const taco::error_info& e) { (void)tag, (void)e; }
    void failed_with_string(int tag, const char* text) { (void)tag, (void)text; }
};
void f(taco::global_ptr<source> gp, taco::global_ptr<sink> s) {
#ifdef TACO_NEG_CONTROL
    taco::async(gp, taco::m2f(&source::value), taco::then(s, &sink::put).on_error(s, &sink::failed, 3));
#else
    taco::async(gp, taco::m2f(&source::value), taco::then(s, &sink::put).on_error(s, &sink::failed_with_string, 3));
#endif
}
