// Materialized attention as a user writes it: S = Q K^T through cuBLAS
// (batched over batch * heads, S stored in the I/O dtype), a softmax kernel
// that reads S, applies the scale and the causal mask and writes P (I/O
// dtype) and L, then O = P V through cuBLAS. S and P live in the workspace;
// this is the kernel the "materialized" traffic model describes.

#include <cmath>

#include "kernels/attention_launchers.hpp"
#include "kernels/element_type.cuh"
#include "kernels/kernel_dispatch.cuh"
#include "kernels/launch_preamble.cuh"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/online_softmax.cuh"

namespace cfr::kernels {
namespace {

constexpr int softmax_threads = 256;
constexpr std::size_t workspace_alignment = 256;

std::size_t align_up(std::size_t bytes) {
  return (bytes + workspace_alignment - 1) / workspace_alignment * workspace_alignment;
}

std::size_t score_matrix_bytes(const AttentionShape& shape) {
  const auto n = static_cast<std::size_t>(shape.seq_len);
  return heads_total(shape) * n * n * static_cast<std::size_t>(element_bytes(shape.dtype));
}

template <typename T>
constexpr cudaDataType_t cuda_data_type() {
  if constexpr (std::is_same_v<T, __half>) return CUDA_R_16F;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return CUDA_R_16BF;
  return CUDA_R_32F;
}

cudaError_t to_cuda_error(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return cudaSuccess;
    case CUBLAS_STATUS_ALLOC_FAILED: return cudaErrorMemoryAllocation;
    case CUBLAS_STATUS_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: return cudaErrorNotSupported;
    default: return cudaErrorUnknown;
  }
}

// Running (max, sum) of exp2 over a set of scores; combining two is exact.
struct SoftmaxState {
  float max = -INFINITY;
  float sum = 0.f;
};

__device__ __forceinline__ SoftmaxState combine(SoftmaxState a, SoftmaxState b) {
  const float max = fmaxf(a.max, b.max);
  if (max == -INFINITY) return {};  // both empty: avoids exp2(-inf - -inf) = NaN
  return {max, a.sum * exp2f(a.max - max) + b.sum * exp2f(b.max - max)};
}

__device__ SoftmaxState block_combine(SoftmaxState state) {
  __shared__ SoftmaxState warp_states[softmax_threads / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    const SoftmaxState other{__shfl_xor_sync(0xffffffffu, state.max, offset),
                             __shfl_xor_sync(0xffffffffu, state.sum, offset)};
    state = combine(state, other);
  }
  const int warp = static_cast<int>(threadIdx.x) / 32;
  if (threadIdx.x % 32 == 0) warp_states[warp] = state;
  __syncthreads();
  SoftmaxState total;
  for (int w = 0; w < softmax_threads / 32; ++w) total = combine(total, warp_states[w]);
  return total;
}

// One CTA per row of S: P = softmax(scale * S) with keys j > i masked when
// causal (their P is written as 0, as the P V GEMM reads the whole row), and
// L = logsumexp. The second pass re-reads the row, normally from L2.
template <typename T>
__global__ void __launch_bounds__(softmax_threads)
    softmax_rows(const T* __restrict__ s, T* __restrict__ p, float* __restrict__ lse, int seq_len,
                 bool causal, float scale_log2) {
  const std::int64_t row = blockIdx.x;
  const int i = static_cast<int>(row % seq_len);
  const T* s_row = s + row * seq_len;
  T* p_row = p + row * seq_len;
  const int keys = causal ? i + 1 : seq_len;

  SoftmaxState state;
  for (int j = static_cast<int>(threadIdx.x); j < keys; j += softmax_threads) {
    state = combine(state, {to_float(s_row[j]) * scale_log2, 1.f});
  }
  state = block_combine(state);

  const float inverse = __fdividef(1.f, state.sum);  // sum >= 1: the row max contributes 1
  for (int j = static_cast<int>(threadIdx.x); j < seq_len; j += softmax_threads) {
    const float value =
        j < keys ? exp2f(to_float(s_row[j]) * scale_log2 - state.max) * inverse : 0.f;
    p_row[j] = from_float<T>(value);
  }
  if (threadIdx.x == 0) lse[row] = natural_lse(state.max, state.sum);
}

std::size_t naive_workspace_bytes(const AttentionShape& shape) {
  if (!has_positive_dimensions(shape)) return 0;
  return align_up(score_matrix_bytes(shape)) + score_matrix_bytes(shape);
}

template <typename T>
cudaError_t launch_naive_typed(const AttentionShape& shape, const ForwardBuffers& io,
                               const LaunchContext& context) {
  const std::size_t matrix_bytes = score_matrix_bytes(shape);
  if (context.cublas == nullptr || context.workspace == nullptr ||
      context.workspace_bytes < naive_workspace_bytes(shape)) {
    return cudaErrorInvalidValue;
  }
  T* s = static_cast<T*>(context.workspace);
  T* p =
      reinterpret_cast<T*>(static_cast<unsigned char*>(context.workspace) + align_up(matrix_bytes));

  const int n = shape.seq_len;
  const int d = shape.head_dim;
  const auto batch = static_cast<int>(heads_total(shape));
  const long long matrix_stride = static_cast<long long>(n) * d;
  const long long score_stride = static_cast<long long>(n) * n;
  constexpr cudaDataType_t type = cuda_data_type<T>();
  const float one = 1.f;
  const float zero = 0.f;

  // A handle exists, so cuBLAS is open (kernels/measure/cublas_library.hpp).
  const measure::CublasLibrary& cublas = measure::cublas();
  cublasStatus_t status = cublas.set_stream(context.cublas, context.stream);
  if (status != CUBLAS_STATUS_SUCCESS) return to_cuda_error(status);
  // cuBLAS is column-major: a row-major [N, N] S is the column-major S^T =
  // K Q^T, with K and Q (row-major [N, d]) seen as column-major d x N.
  status = cublas.gemm_strided_batched(context.cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &one,
                                       io.k, type, d, matrix_stride, io.q, type, d, matrix_stride,
                                       &zero, s, type, n, score_stride, batch, CUBLAS_COMPUTE_32F,
                                       CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) return to_cuda_error(status);
  CFR_CUDA_CHECK_NOEXCEPT(cudaGetLastError());

  CFR_CUDA_CHECK_NOEXCEPT(launch_kernel(
      softmax_rows<T>, dim3(static_cast<unsigned>(heads_total(shape) * n)), softmax_threads, 0,
      context.stream, s, p, io.lse, n, shape.causal, softmax_scale_log2_of(shape)));

  // Row-major O = P V is the column-major O^T = V^T P^T.
  status = cublas.gemm_strided_batched(context.cublas, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one,
                                       io.v, type, d, matrix_stride, p, type, n, score_stride,
                                       &zero, io.o, type, d, matrix_stride, batch,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) return to_cuda_error(status);
  return cudaGetLastError();
}

cudaError_t launch_naive(const AttentionShape& shape, const ForwardBuffers& io,
                         const LaunchContext& context) {
  if (io.q == nullptr || io.k == nullptr || io.v == nullptr || io.o == nullptr ||
      io.lse == nullptr) {
    return cudaErrorInvalidValue;
  }
  return dispatch_dtype_and_head_dim<naive_kernel>(
      shape, [&]<typename T, int>() { return launch_naive_typed<T>(shape, io, context); });
}

}  // namespace

const ForwardKernel naive_launcher{naive_workspace_bytes, launch_naive};

}  // namespace cfr::kernels
