#pragma once

// A process-wide memo of a pure function's answers that threads share: a
// thread that asks for an answer another thread is computing waits for it
// instead of computing it again. An exception is the answer too, rethrown to
// every asker. Bounded: it starts over past `capacity` answers.

#include <cstddef>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <utility>

namespace cfr {

template <typename Key, typename Value>
class SharedMemo {
 public:
  explicit SharedMemo(std::size_t capacity) : capacity_(capacity) {}

  // The answer for `key`: compute() the first time, the same value after.
  template <typename Compute>
  Value get(const Key& key, Compute compute) {
    std::promise<Value> promise;
    std::shared_future<Value> answer;
    {
      std::lock_guard lock(mutex_);
      if (const auto found = answers_.find(key); found != answers_.end()) {
        answer = found->second;
      } else {
        if (answers_.size() >= capacity_) answers_.clear();
        answers_.emplace(key, promise.get_future().share());
      }
    }
    if (answer.valid()) return answer.get();  // computed, or being computed by another thread
    try {
      Value value = compute();
      promise.set_value(value);
      return value;
    } catch (...) {
      promise.set_exception(std::current_exception());
      throw;
    }
  }

 private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::map<Key, std::shared_future<Value>> answers_;
};

}  // namespace cfr
