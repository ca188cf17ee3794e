// A trivially copyable shared object with a raw pointer member: on another
// core the pointer leads into that core's private memory.
#include <tacomesh/posix.hpp>
struct node_ids {
    long first;
    long count;
};
struct node_list {
    long first;
#ifdef TACO_NEG_CONTROL
    long count; // an index into a shared container instead
#else
    long* items;
#endif
};
void f() {
    (void)mesh::make_shared_object<node_ids>();
    (void)mesh::make_shared_object<node_list>();
}
