// The all-cores group lives as long as the run; a group of the user's own
// may be destroyed (the control variant).
#include <tacomesh/posix.hpp>
struct member {};
void f(taco::group<member> mine) {
#ifdef TACO_NEG_CONTROL
    taco::destroy_group(mine);
#else
    (void)mine;
    taco::destroy_group(taco::all_cores());
#endif
}
