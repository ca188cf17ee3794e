#pragma once
// The policy of a run, chosen at start-up: one of the schedulers, dispatched
// with a switch (no virtual call on the per-task path). It counts its tasks
// itself, so that the runtime's "anything ready?" test in every round is one
// load, not a dispatch.
#include <variant>

#include <taco/schedulers/edf.hpp>
#include <taco/schedulers/fifo.hpp>
#include <taco/schedulers/priority.hpp>

namespace taco {

enum class policy { fifo, priority, edf };

namespace schedulers {

class any {
public:
    explicit any(policy p = policy::fifo) {
        switch (p) {
        case policy::fifo: s_.emplace<fifo>(); break;
        case policy::priority: s_.emplace<priority>(); break;
        case policy::edf: s_.emplace<edf>(); break;
        }
    }
    void push(task& t) {
        std::visit([&](auto& s) { s.push(t); }, s_);
        ++size_;
    }
    task* pop() {
        if (size_ == 0) return nullptr;
        --size_;
        return std::visit([](auto& s) { return s.pop(); }, s_);
    }
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }

private:
    std::variant<fifo, priority, edf> s_;
    std::size_t size_ = 0;
};
static_assert(scheduler<any>);

} // namespace schedulers
} // namespace taco
