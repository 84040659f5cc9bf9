#pragma once

// One attention problem on the device for the kernel tests: seeded inputs,
// the fp32 reference, and Catch2 checks of an output against it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention_api.hpp"
#include "kernels/attention_check.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/measure/cuda_error.hpp"

namespace cfr::kernels::testing {

using measure::DeviceBuffer;

// The grid every kernel is tested on: ragged and exact multiples of every
// tile size (1, 17, 1000 and 4097 are ragged for 32 and 64; 64 is exact),
// the tile sizes' head dims, and both masks.
inline const std::vector<int> test_seq_lens{1, 17, 64, 1000, 4097};
inline const std::vector<int> test_head_dims{32, 64, 128};
inline const std::vector<DType> test_dtypes{DType::fp16, DType::bf16, DType::fp32};

// Batch 2 on some lengths and 1 on others: both the batch offset and a
// single-batch launch are covered without doubling the run time.
inline int test_batch(int seq_len) {
  return seq_len == 64 || seq_len == 4097 ? 1 : 2;
}

AttentionShape make_shape(DType dtype, int seq_len, int head_dim, bool causal);

// The registered kernels of `direction` the current device has code for; each
// other one is reported with a Catch2 WARN naming why, never failed.
std::vector<const KernelEntry*> runnable_kernels(Direction direction);
std::string describe(const AttentionShape& shape);

std::size_t tensor_elements(const AttentionShape& shape);
std::size_t tensor_bytes(const AttentionShape& shape);  // in the I/O dtype
std::size_t row_count(const AttentionShape& shape);
// K and V: [batch, kv_heads, kv_len, d], contiguous.
std::size_t kv_elements(const AttentionShape& shape);

// Whether `kernel` takes this shape (its K/V length, K/V heads, pages, query
// tokens); one that does not is not launched by the grids.
bool takes(const KernelEntry& kernel, const AttentionShape& shape);

// Q, K, V and dO in the problem's dtype. Q and K are normal (scores of a few
// units after scaling, so rows have a clear maximum and the online rescaling
// is exercised); V and dO are uniform in [-1, 1). K and V are contiguous
// (the reference reads them so); a paged shape also gets them scattered into
// shuffled pages, which the kernel reads.
struct Inputs {
  Inputs(const AttentionShape& shape, std::uint64_t seed, cudaStream_t stream);
  DeviceBuffer q, k, v, d_o;
  PagedKv paged;

  // The buffers a forward launch reads: the pages where the shape has them.
  ForwardBuffers forward(void* o, float* lse) const;
};

struct ForwardReference {
  ForwardReference(const AttentionShape& shape, const Inputs& inputs, cudaStream_t stream);
  DeviceBuffer o;    // fp32
  DeviceBuffer lse;  // fp32
};

struct BackwardReference {
  BackwardReference(const AttentionShape& shape, const Inputs& inputs, cudaStream_t stream);
  DeviceBuffer d_q, d_k, d_v;  // fp32
};

// Catch2 CHECKs of `out` (in `dtype`) against the fp32 `ref`: all finite,
// rel_l2 and max_abs within tolerance_for(tolerance_dtype).
void check_against_reference(const char* tensor, const void* out, DType dtype, const float* ref,
                             std::size_t count, DType tolerance_dtype, cudaStream_t stream);

// Device -> host copy of an fp32 buffer, ordered after the work on `stream`.
std::vector<float> to_host(const DeviceBuffer& buffer, cudaStream_t stream);

}  // namespace cfr::kernels::testing
