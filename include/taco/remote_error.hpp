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
    /// The thrown exception's what() (truncated to error_info::text_capacity).
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

    /// Describe the exception being handled (call inside a catch block).
    static error_info current(core_id origin) noexcept {
        error_info e{origin, 0, {}};
        try {
            throw;
        } catch (const std::exception& ex) {
            e.assign(ex.what());
        } catch (...) {
            e.assign("unknown exception (not derived from std::exception)");
        }
        return e;
    }

    void assign(std::string_view s) noexcept {
        length = std::uint32_t(std::min(s.size(), text_capacity));
        std::memcpy(text, s.data(), length);
    }
};

} // namespace taco
