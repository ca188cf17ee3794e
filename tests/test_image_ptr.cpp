// Code addresses travel image-relative (taco/image_ptr.hpp), so that a
// message means the same in a separately started process, whose image the
// loader may place elsewhere (ASLR; a cluster rank). Checked twice: by
// decoding against a moved base (as a relocated image would be), and by
// handing real messages to a second, separately started run of this binary.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <test_support.hpp>

namespace {

long doubled(long x) { return 2 * x; }

struct shape {
    long side = 5;
    long plain(long x) const { return side * x; }
    virtual long area() const { return side * side; }
    virtual ~shape() = default;
};
struct square_twice : shape {
    long area() const override { return 2 * side * side; }
};

// What the peer process reports.
long peer_seen = 0;
void record(long x) { peer_seen = x; }

/// A message that applies its bound call to a peer-local shape (object
/// addresses never travel: only code addresses are at stake here).
template <class Call>
struct apply_on_shape {
    Call call;
    void operator()() {
        static square_twice local_shape;
        peer_seen = call.template apply<shape>(&local_shape);
    }
};

constexpr std::size_t message_size = 64;
using message_image = std::array<unsigned char, message_size>;

std::string to_hex(const message_image& m) {
    std::string s;
    char buf[3];
    for (unsigned char c : m) std::snprintf(buf, sizeof buf, "%02x", c), s += buf;
    return s;
}
message_image from_hex(const std::string& s) {
    message_image m{};
    for (std::size_t i = 0; i < m.size() && 2 * i + 1 < s.size(); ++i)
        m[i] = static_cast<unsigned char>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
    return m;
}

template <class Msg, class... A>
message_image encode(A&&... args) {
    static_assert(taco::detail::message_length<Msg> <= message_size);
    alignas(8) std::byte buf[message_size]{};
    taco::detail::write_message<Msg>(buf, std::forward<A>(args)...);
    message_image m;
    std::memcpy(m.data(), buf, message_size);
    return m;
}

/// Run a message in this process and return what it reported.
long run_here(const message_image& m) {
    alignas(8) std::byte buf[message_size];
    std::memcpy(buf, m.data(), message_size);
    peer_seen = 0;
    taco::detail::dispatch(buf);
    return peer_seen;
}

std::string run_peer(const std::string& messages) {
    const std::string cmd = "TACOMESH_PEER_MESSAGES=" + messages + " /proc/" + std::to_string(::getpid()) +
                            "/exe '[.image_ptr_peer]' 2>&1";
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        char buf[512];
        while (std::fgets(buf, sizeof buf, p)) out += buf;
        ::pclose(p);
    }
    return out;
}

} // namespace

TEST_CASE("image_ptr decodes against a moved base as the moved image's address", "[image_ptr]") {
    const std::uintptr_t base = taco::detail::image_base();
    const std::uintptr_t moved = base + 0x7000'0000; // as if the loader had placed the image 1.75 GiB higher
    using fn = long (*)(long);

    const taco::image_ptr<fn> f(&doubled, base);
    CHECK(f.get(base) == &doubled);
    CHECK(reinterpret_cast<std::uintptr_t>(f.get(moved)) == reinterpret_cast<std::uintptr_t>(&doubled) + 0x7000'0000);
    CHECK(f.offset() == taco::image_ptr<fn>(&doubled).offset()); // the distance, not the address
    CHECK_FALSE(taco::image_ptr<fn>(nullptr));
    CHECK(taco::image_ptr<fn>(nullptr).get(moved) == nullptr);

    // Member functions: a non-virtual one is a code address and moves with
    // the image; a virtual one is a vtable slot and must not move.
    using plain_t = long (shape::*)(long) const;
    using area_t = long (shape::*)() const;
    const taco::image_ptr<plain_t> p(&shape::plain, base);
    const taco::image_ptr<area_t> v(&shape::area, base);
    CHECK(p.get(base) == &shape::plain);
    CHECK(v.get(base) == &shape::area);
    CHECK(v.get(moved) == &shape::area);
    CHECK_FALSE(p.get(moved) == &shape::plain);
    square_twice s;
    CHECK((s.*v.get(moved))() == 50); // still dispatches virtually
}

TEST_CASE("messages run in a separately started process with its own image address", "[image_ptr]") {
    // The messages: a function on a core (an m2f-bound free function), a
    // non-virtual and a virtual method bound with m2f, each run by its
    // handler, which itself travels image-relative.
    using req = taco::detail::request<void, decltype(taco::m2f(&record, 1L)), taco::detail::no_continuation>;
    const auto m1 = encode<req>(taco::detail::object_ref<void>{}, taco::m2f(&record, 41L), taco::detail::no_continuation{});
    const auto m2 = encode<apply_on_shape<decltype(taco::m2f(&shape::plain, 1L))>>(taco::m2f(&shape::plain, 7L));
    const auto m3 = encode<apply_on_shape<decltype(taco::m2f(&shape::area))>>(taco::m2f(&shape::area));
    REQUIRE(run_here(m1) == 41);
    REQUIRE(run_here(m2) == 35);
    REQUIRE(run_here(m3) == 50);

    const std::string out = run_peer(to_hex(m1) + "," + to_hex(m2) + "," + to_hex(m3));
    INFO("peer output:\n" << out);
    CHECK(out.find("peer results 41 35 50") != std::string::npos);
    // Where ASLR is on (the default), the peer's image sits elsewhere: the
    // test then proves relocation, not just reuse of the same address.
    char here[64];
    std::snprintf(here, sizeof here, "peer anchor %#lx", static_cast<unsigned long>(taco::detail::image_base()));
    if (out.find(here) != std::string::npos) WARN("ASLR is off here: the peer's image is at the same address");
}

// Run only by the test above, in the second process.
TEST_CASE("image_ptr peer", "[.image_ptr_peer]") {
    const char* env = std::getenv("TACOMESH_PEER_MESSAGES");
    REQUIRE(env != nullptr);
    std::string all = env, results;
    for (std::size_t start = 0; start < all.size();) {
        std::size_t end = all.find(',', start);
        if (end == std::string::npos) end = all.size();
        results += " " + std::to_string(run_here(from_hex(all.substr(start, end - start))));
        start = end + 1;
    }
    std::printf("peer results%s\npeer anchor %#lx\n", results.c_str(), static_cast<unsigned long>(taco::detail::image_base()));
    std::fflush(stdout);
}
