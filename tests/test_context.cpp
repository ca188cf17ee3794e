// Execution contexts (the stack switch under every coroutine), each
// implementation on its own: the inline x86-64 switch and the Boost.Context
// fiber must both keep every value live across a switch, run on a correctly
// aligned stack, unwind exceptions inside the coroutine, nest, and give
// their stacks back.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <taco/detail/context/boost_context.hpp>
#if defined(__x86_64__)
#include <taco/detail/context/inline_context.hpp>
#define TACO_TEST_CONTEXTS taco::detail::inline_context, taco::detail::boost_context
#else
#define TACO_TEST_CONTEXTS taco::detail::boost_context
#endif

namespace {

constexpr std::size_t stack_bytes = 64 * 1024;

/// Runs `Body` as a context's main; Body gets the context to suspend on.
template <class Context, class Body>
struct harness {
    Context ctx;
    Body body;
    explicit harness(Body b) : body(std::move(b)) { ctx.start(stack_bytes, &main, this); }
    static void main(void* self) noexcept {
        auto* h = static_cast<harness*>(self);
        h->body(h->ctx);
    }
};
template <class Context, class Body>
auto make_harness(Body b) {
    return std::make_unique<harness<Context, Body>>(std::move(b));
}

// Not inlined: the compiler may assume the ABI's stack alignment here and
// will not realign, so a misaligned stack shows in the address.
[[gnu::noinline]] bool aligned_frame() {
    alignas(16) volatile char probe[16] = {};
    return reinterpret_cast<std::uintptr_t>(&probe[0]) % 16 == 0;
}

[[gnu::noinline]] int recurse(int depth) {
    volatile char pad[256] = {};
    pad[0] = char(depth);
    return depth == 0 ? pad[0] : recurse(depth - 1) + 1 + pad[0] - char(depth);
}

[[gnu::noinline]] void throw_after_suspend(auto& ctx, int v) {
    ctx.suspend();
    throw std::runtime_error("thrown on the coroutine's stack " + std::to_string(v));
}

} // namespace

/// Values meant to stay in registers across a switch: more than the
/// callee-saved registers, integer and vector alike. Both sides hold one.
struct live_values {
    std::uint64_t a, b, c, d, e, f, g;
    double x, y, z, w, u, v, s, t;
    explicit live_values(int seed)
        : a(seed), b(2), c(3), d(5), e(7), f(11), g(13), x(0.5 * seed), y(1.5), z(2.5), w(3.5), u(4.5), v(5.5),
          s(6.5), t(7.5) {}
    [[gnu::always_inline]] void step() {
        a += b; b ^= c; c += d * 3; d += e; e -= f; f += g; g ^= a;
        x = x * 1.0001 + y; y = y * 0.5 + z * 0.25; z += w * 0.5; w = w * 0.999 + x * 1e-3;
        u = u * 0.75 + v; v = v * 0.5 + s * 0.125; s += t * 0.25; t = t * 0.5 + u * 1e-2;
    }
    bool operator==(const live_values&) const = default;
};

/// A leaf function (no calls): the compiler may spill what is live across
/// the switch below the stack pointer (the red zone), where a switch that
/// pushed without stepping over it would overwrite it.
template <class Context>
[[gnu::noinline]] void step_after_switch(Context& ctx, live_values& v) {
    live_values mine = v;
    ctx.suspend();
    mine.step();
    v = mine;
}

TEMPLATE_TEST_CASE("an execution context keeps integer and floating-point values across switches",
                   "[context][coroutine]", TACO_TEST_CONTEXTS) {
    constexpr int rounds = 1000;
    live_values coroutine_side(1), resumer_side(2);
    auto h = make_harness<TestType>([&](TestType& ctx) {
        live_values mine(1); // locals: the compiler keeps them in registers
        for (int i = 0; i < rounds; ++i) step_after_switch(ctx, mine);
        coroutine_side = mine;
    });
    live_values mine(2);
    int resumes = 0;
    while (!h->ctx.resume()) {
        ++resumes;
        mine.step();
    }
    resumer_side = mine;

    live_values expect1(1), expect2(2);
    for (int i = 0; i < rounds; ++i) {
        expect1.step();
        expect2.step();
    }
    REQUIRE(resumes == rounds);
    REQUIRE(coroutine_side == expect1);
    REQUIRE(resumer_side == expect2);
}

TEMPLATE_TEST_CASE("an execution context runs on an aligned stack with room for deep calls",
                   "[context][coroutine]", TACO_TEST_CONTEXTS) {
    bool aligned_first = false, aligned_later = false;
    int depth = 0;
    auto h = make_harness<TestType>([&](TestType& ctx) {
        aligned_first = aligned_frame();
        ctx.suspend();
        aligned_later = aligned_frame();
        depth = recurse(80); // 20 KiB of the 64 KiB stack (twice that under ASan)
    });
    REQUIRE_FALSE(h->ctx.resume());
    REQUIRE(h->ctx.resume());
    REQUIRE(aligned_first);
    REQUIRE(aligned_later);
    REQUIRE(depth == 80);
}

TEMPLATE_TEST_CASE("exceptions thrown and caught on a coroutine's stack unwind across a switch",
                   "[context][coroutine][errors]", TACO_TEST_CONTEXTS) {
    std::string caught;
    auto h = make_harness<TestType>([&](TestType& ctx) {
        try {
            throw_after_suspend(ctx, 42);
        } catch (const std::runtime_error& e) {
            caught = e.what();
        }
    });
    REQUIRE_FALSE(h->ctx.resume());
    // An exception on the resumer's stack between the switches is its own.
    REQUIRE_THROWS_AS([] { throw std::logic_error("resumer's"); }(), std::logic_error);
    REQUIRE(h->ctx.resume());
    REQUIRE(caught == "thrown on the coroutine's stack 42");
}

TEMPLATE_TEST_CASE("execution contexts nest and interleave, and give their stacks back",
                   "[context][coroutine]", TACO_TEST_CONTEXTS) {
    std::vector<int> trace;
    auto inner = make_harness<TestType>([&](TestType& ctx) {
        trace.push_back(2);
        ctx.suspend();
        trace.push_back(4);
    });
    auto outer = make_harness<TestType>([&](TestType& ctx) {
        trace.push_back(1);
        CHECK_FALSE(inner->ctx.resume()); // a coroutine resuming another
        trace.push_back(3);
        ctx.suspend();
        CHECK(inner->ctx.resume());
        trace.push_back(5);
    });
    REQUIRE_FALSE(outer->ctx.resume());
    REQUIRE(outer->ctx.resume());
    REQUIRE(trace == std::vector<int>{1, 2, 3, 4, 5});

    // Many contexts alive at once, destroyed before they ever ran (a core
    // that stops first): each gives its stack back, so the next contexts
    // run on stacks given back, not on fresh mappings.
    std::set<void*> returned;
    for (int round = 0; round < 4; ++round) {
        std::vector<std::unique_ptr<TestType>> alive;
        for (int i = 0; i < 300; ++i) {
            alive.push_back(std::make_unique<TestType>());
            alive.back()->start(stack_bytes, [](void*) noexcept {}, nullptr);
            // The pool keeps 256; beyond, fresh mappings (which may reuse an
            // unmapped stack's address).
            if (round > 0 && i < 256) REQUIRE(returned.contains(alive.back()->stack().sp));
        }
        for (auto& c : alive) returned.insert(c->stack().sp);
    }
}
