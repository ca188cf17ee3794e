#pragma once
// Exceptions thrown by a remote method travel back to the caller as a message
// (an exception_ptr names memory of the callee: useless in process mode and on
// the SCC), and rethrow there as taco::remote_error.
#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

#include <taco/core_id.hpp>

namespace taco {

/// What a remote method threw, rethrown by future::get() and sync().
class remote_error : public std::runtime_error {
public:
    remote_error(core_id origin, std::string_view text)
        : std::runtime_error("taco: remote invocation on core " + std::to_string(origin) +
                             " threw: " + std::string(text)),
          origin_(origin), text_(text) {}
    /// The core whose method threw.
    core_id origin() const noexcept { return origin_; }
    /// The thrown exception's what() (its first error_info::text_capacity
    /// characters, ending in "..." where it was longer).
    const std::string& text() const noexcept { return text_; }

private:
    core_id origin_;
    std::string text_;
};

/// Trivially copyable description of an exception, sized to fit a message
/// next to the address of the future it is delivered to.
struct error_info {
    static constexpr std::size_t text_capacity = 80;
    core_id origin;
    std::uint32_t length;
    char text[text_capacity];

    std::string_view view() const noexcept { return {text, length}; }

    /// Describe the exception being handled (call inside a catch block). A
    /// remote_error passing on (a method that let another core's exception
    /// through) keeps its origin and text: each hop would otherwise prefix
    /// its own "remote invocation on core N threw" and leave less of the
    /// text that says what went wrong.
    static error_info current(core_id origin) noexcept {
        error_info e{origin, 0, {}};
        try {
            throw;
        } catch (const remote_error& ex) {
            e.origin = ex.origin();
            e.assign(ex.text());
        } catch (const std::exception& ex) {
            e.assign(ex.what());
        } catch (...) {
            e.assign("unknown exception (not derived from std::exception)");
        }
        return e;
    }

    /// A text longer than the capacity keeps its beginning and ends in
    /// "...", so a reader knows there was more.
    void assign(std::string_view s) noexcept {
        length = std::uint32_t(std::min(s.size(), text_capacity));
        std::memcpy(text, s.data(), length);
        if (s.size() > text_capacity) std::memcpy(text + text_capacity - 3, "...", 3);
    }
};

} // namespace taco
