// Pins SharedMemo (roofline/core/shared_memo.hpp), the memo the L2 model's
// simulations share across model_rows' threads: an answer is computed once
// per key, a thread asking for one in progress does not compute it again, an
// exception is every asker's answer, and the memo starts over past its bound.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

#include "roofline/core/shared_memo.hpp"

using cfr::SharedMemo;

namespace {

// x squared from the memo; `computed` counts the computations.
int square(SharedMemo<int, int>& memo, int& computed, int x) {
  return memo.get(x, [&] {
    ++computed;
    return x * x;
  });
}

}  // namespace

TEST_CASE("shared memo: one computation per key, the same answer after") {
  SharedMemo<int, int> memo(16);
  int computed = 0;
  CHECK(square(memo, computed, 3) == 9);
  CHECK(square(memo, computed, 3) == 9);
  CHECK(square(memo, computed, 4) == 16);
  CHECK(computed == 2);
}

TEST_CASE("shared memo: a thread asking while another computes takes that answer") {
  SharedMemo<int, int> memo(16);
  std::promise<void> started;
  std::promise<void> release;
  std::atomic<int> second_computed{0};
  std::thread first([&] {
    CHECK(memo.get(7, [&] {
      started.set_value();
      release.get_future().wait();
      return 49;
    }) == 49);
  });
  started.get_future().wait();
  std::thread second([&] {
    CHECK(memo.get(7, [&] {
      ++second_computed;
      return -1;
    }) == 49);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  release.set_value();
  first.join();
  second.join();
  CHECK(second_computed == 0);
}

TEST_CASE("shared memo: an exception is the answer, rethrown to the next asker too") {
  SharedMemo<int, int> memo(16);
  int computed = 0;
  const auto fail = [&]() -> int {
    ++computed;
    throw std::invalid_argument("no answer");
  };
  CHECK_THROWS_WITH(memo.get(1, fail), "no answer");
  CHECK_THROWS_WITH(memo.get(1, fail), "no answer");
  CHECK(computed == 1);
}

TEST_CASE("shared memo: past its bound it starts over") {
  SharedMemo<int, int> memo(2);
  int computed = 0;
  square(memo, computed, 1);
  square(memo, computed, 2);
  square(memo, computed, 1);
  CHECK(computed == 2);
  square(memo, computed, 3);  // a third answer: the memo starts over
  square(memo, computed, 1);
  CHECK(computed == 4);
}
