// InlineOffLoop: an OffLoop (common/off_loop.h) whose work runs at once, on the caller's thread,
// as a file system that never blocks; its answer is posted to the loop as the real one's is
// (post_answer), so it runs with the loop's next ready handlers. For the tests that are not about
// a slow file system (tests/unit/fakes/fake_off_loop.h is for those).
#pragma once

#include <memory>
#include <utility>

#include "common/off_loop.h"

namespace tv::testing {

class InlineOffLoop final : public OffLoop {
 public:
  OffLoopCall run(boost::asio::io_context& io, Work work) override {
    auto s = std::make_shared<OffLoopState>();
    post_answer(s, io, work());
    return OffLoopCall(std::move(s));
  }
};

}  // namespace tv::testing
