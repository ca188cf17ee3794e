// taco::limits: each constant is exactly the boundary of its kind of
// message (one byte more would not fit), and has the value the "Limits"
// table of docs/reference.md gives. Results and reduced values beyond their
// limit are carried instead of refused.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include <test_support.hpp>

namespace {

using namespace taco;

template <std::size_t N>
struct bytes {
    alignas(8) unsigned char b[N];
};
struct object {
    void method();
};

template <class T, class F, std::size_t N, class Cont>
constexpr std::size_t length = detail::message_length<detail::request<T, bound_call<F, bytes<N>>, Cont>>;
template <std::size_t N>
constexpr std::size_t result_length = detail::message_length<detail::future_set_message<bytes<N>>>;
template <std::size_t N>
constexpr std::size_t reduce_length = detail::message_length<detail::contribute_message<bytes<N>>>;

using none = detail::no_continuation;
using with_future = detail::future_continuation<long>;
using method = void (object::*)();
using fn = void (*)();
constexpr std::size_t step = 8; // argument structs grow in steps of their alignment

static_assert(length<object, method, limits::method_arguments, none> == message_bytes);
static_assert(length<object, method, limits::method_arguments + step, none> > message_bytes);
static_assert(length<void, fn, limits::function_arguments, none> == message_bytes);
static_assert(length<void, fn, limits::function_arguments + step, none> > message_bytes);
static_assert(length<object, method, limits::method_arguments - limits::future_completion, with_future> == message_bytes);
static_assert(length<void, fn, limits::function_arguments - limits::future_completion, with_future> == message_bytes);
static_assert(detail::message_length<detail::task_request<detail::request<object, bound_call<method, bytes<limits::method_arguments - limits::task_options>>, none>>> <= message_bytes);
static_assert(result_length<limits::result> == message_bytes && result_length<limits::result + step> > message_bytes);
static_assert(reduce_length<limits::reduce_value> == message_bytes &&
              reduce_length<limits::reduce_value + step> > message_bytes);
// Up to those limits a result or reduced value takes its one message; one
// step beyond, it is carried (detail/carried_result.hpp), not refused.
static_assert(!detail::travels_carried<bytes<limits::result>, detail::future_set_message>() &&
              detail::travels_carried<bytes<limits::result + step>, detail::future_set_message>());
static_assert(!detail::travels_carried<bytes<limits::reduce_value>, detail::contribute_message>() &&
              detail::travels_carried<bytes<limits::reduce_value + step>, detail::contribute_message>());
static_assert(detail::travels_carried<std::string, detail::future_set_message>() &&
              detail::travels_carried<std::vector<char>, detail::contribute_message>());
// A reduced word with its handler fills one 32-byte line, as a future's
// result does (helper_pool.hpp: the helper travels as a 4-byte number): on
// the SCC each message line costs a write and a read on every level of the
// tree's way up.
static_assert(reduce_length<8> == 32 && result_length<8> <= 32);

} // namespace

TEST_CASE("the message limits are the README's numbers", "[limits]") {
    // docs/reference.md, "Limits": change both together.
    CHECK(taco::message_bytes == 120);
    CHECK(taco::limits::payload == 112);
    CHECK(taco::limits::method_arguments == 88);
    CHECK(taco::limits::function_arguments == 104);
    CHECK(taco::limits::future_completion == 16);
    CHECK(taco::limits::task_options == 24);
    CHECK(taco::limits::result == 104);
    CHECK(taco::limits::reduce_value == 96);
    CHECK(taco::max_carried_bytes == std::size_t(256) << 20);
}
