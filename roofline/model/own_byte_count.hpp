#pragma once

// A kernel's own HBM byte count per problem: the `plugin` traffic model, a
// plugin's hbm_bytes callback (docs/plugins.md). The tool cannot derive these
// bytes; it asks the kernel, checks the answer and records it, and `audit`
// asks the same plugin again when given it.

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "roofline/core/attention_problem.hpp"
#include "roofline/core/errors.hpp"

namespace cfr {

// The bytes for one problem, or one line saying why there are none.
using ByteCount = OrReason<double>;

class OwnByteCount {
 public:
  virtual ~OwnByteCount() = default;
  // Unchecked: whatever the kernel answered.
  virtual ByteCount hbm_bytes(const AttentionProblem& problem) const = 0;
};

// Why `bytes` cannot be a row's HBM byte count (not finite, or under one
// byte: every attention kernel reads Q, K and V, and 1e-300 B would give an
// infinite intensity); empty when it can.
std::optional<std::string> byte_count_problem(double bytes);

// `count` for `problem`, checked with byte_count_problem: the bytes, or one
// line that names `kernel` and says why the row has none.
ByteCount checked_byte_count(const OwnByteCount& count, std::string_view kernel,
                             const AttentionProblem& problem);

}  // namespace cfr
