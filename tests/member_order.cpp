// The one part of a declared member list's check that runs: its order
// (mesh/detail/member_rules.hpp, declared_order). Listed out of declaration
// order, the members could leave padding where a forgotten one hides, so the
// program stops at start-up naming the type; in order, it runs. Built twice
// (tests/CMakeLists.txt): with MEMBERS_IN_ORDER and without.
#include <cstdio>

#include <tacomesh/posix.hpp>

class two_lists : public mesh::sharing_aware<two_lists> {
public:
    two_lists() { firsts_.push_back(1); }
    long first() const { return firsts_[0]; }

private:
    mesh::vector<long> firsts_;
    long count_ = 0;
    mesh::vector<long> seconds_;

public:
#ifdef MEMBERS_IN_ORDER
    using shared_members = mesh::members<&two_lists::firsts_, &two_lists::count_, &two_lists::seconds_>;
#else
    // every member, but out of order: the sizes agree, the offsets do not
    using shared_members = mesh::members<&two_lists::count_, &two_lists::firsts_, &two_lists::seconds_>;
#endif
};

int main() {
    long first = 0;
    taco::run(tacomesh::posix::config{.cores = 1}, [&] {
        auto p = mesh::make_shared_object<two_lists>();
        first = mesh::read(p)->first();
        mesh::destroy_shared_object(p);
    });
    std::printf("made and destroyed, first = %ld\n", first);
    return first == 1 ? 0 : 1;
}
