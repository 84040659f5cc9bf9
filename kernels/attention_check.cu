#include "kernels/attention_check.hpp"

#include <cmath>
#include <utility>
#include <vector>

#include "kernels/element_type.cuh"
#include "kernels/kernel_dispatch.cuh"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/stream_ordered_buffer.hpp"

namespace cfr::kernels {
namespace {

constexpr int threads = 256;
constexpr int fill_blocks = 1024;    // grid-stride: any size
constexpr int compare_blocks = 256;  // one partial result each, summed on the host
constexpr DTypeSet every_dtype{.fp16 = true, .bf16 = true, .fp32 = true};

// splitmix64's finalizer: independent-looking 64-bit words per (seed, index).
__device__ std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in (0, 1]: never 0, so log() below stays finite.
__device__ float unit_interval(std::uint32_t bits) {
  return (static_cast<float>(bits >> 8) + 1.f) * (1.f / 16777216.f);
}

__device__ float random_value(std::uint64_t seed, std::uint64_t index, Distribution distribution) {
  const std::uint64_t word = mix(seed * 0x9e3779b97f4a7c15ull + mix(index + 1));
  const float u1 = unit_interval(static_cast<std::uint32_t>(word));
  if (distribution == Distribution::uniform) return 2.f * u1 - 1.f;
  // Box-Muller with the word's other half.
  const float u2 = unit_interval(static_cast<std::uint32_t>(word >> 32));
  return sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
}

template <typename T>
__global__ void __launch_bounds__(threads)
    fill_kernel(T* data, std::size_t count, std::uint64_t seed, Distribution distribution) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads + threadIdx.x; i < count;
       i += stride) {
    data[i] = from_float<T>(random_value(seed, i, distribution));
  }
}

template <typename T>
__global__ void __launch_bounds__(threads)
    convert_kernel(const float* src, T* dst, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads + threadIdx.x; i < count;
       i += stride) {
    dst[i] = from_float<T>(src[i]);
  }
}

template <typename T>
__global__ void __launch_bounds__(threads)
    scatter_kernel(const T* src, T* dst, const int* table, std::size_t count, int kv_heads,
                   int kv_len, int head_dim, int page_size, int pages_per_sequence) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads + threadIdx.x; i < count;
       i += stride) {
    const std::size_t row = i / static_cast<std::size_t>(head_dim);
    const int column = static_cast<int>(i % static_cast<std::size_t>(head_dim));
    const int token = static_cast<int>(row % static_cast<std::size_t>(kv_len));
    const std::size_t head = row / static_cast<std::size_t>(kv_len);  // batch * kv_heads + h
    const std::size_t batch = head / static_cast<std::size_t>(kv_heads);
    const int kv_head = static_cast<int>(head % static_cast<std::size_t>(kv_heads));
    const std::int64_t page =
        table[batch * static_cast<std::size_t>(pages_per_sequence) + token / page_size];
    dst[((page * kv_heads + kv_head) * page_size + token % page_size) * head_dim + column] = src[i];
  }
}

template <typename T>
__global__ void __launch_bounds__(threads)
    gather_kernel(const T* src, T* dst, const int* rows, std::size_t count_all, int rows_per_head,
                  int count, int width) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads + threadIdx.x; i < count_all;
       i += stride) {
    const std::size_t row = i / static_cast<std::size_t>(width);  // head * count + r
    const std::size_t head = row / static_cast<std::size_t>(count);
    const int r = static_cast<int>(row % static_cast<std::size_t>(count));
    const std::size_t column = i % static_cast<std::size_t>(width);
    dst[i] =
        src[(head * static_cast<std::size_t>(rows_per_head) + static_cast<std::size_t>(rows[r])) *
                static_cast<std::size_t>(width) +
            column];
  }
}

struct Partial {
  double squared_error;
  double squared_ref;
  double max_abs_err;
  double ref_max_abs;
  unsigned long long non_finite;
};

template <typename T>
__global__ void __launch_bounds__(threads)
    compare_kernel(const T* out, const float* ref, std::size_t count, Partial* partials) {
  Partial mine{0, 0, 0, 0, 0};
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * threads;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * threads + threadIdx.x; i < count;
       i += stride) {
    const double value = to_float(out[i]);
    const double expected = ref[i];
    if (!isfinite(value)) {
      ++mine.non_finite;
      continue;
    }
    const double error = value - expected;
    mine.squared_error += error * error;
    mine.squared_ref += expected * expected;
    mine.max_abs_err = fmax(mine.max_abs_err, fabs(error));
    mine.ref_max_abs = fmax(mine.ref_max_abs, fabs(expected));
  }
  __shared__ Partial block[threads];
  block[threadIdx.x] = mine;
  __syncthreads();
  for (int half = threads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      Partial& a = block[threadIdx.x];
      const Partial& b = block[threadIdx.x + half];
      a.squared_error += b.squared_error;
      a.squared_ref += b.squared_ref;
      a.max_abs_err = fmax(a.max_abs_err, b.max_abs_err);
      a.ref_max_abs = fmax(a.ref_max_abs, b.ref_max_abs);
      a.non_finite += b.non_finite;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = block[0];
}

}  // namespace

cudaError_t fill_random(void* data, std::size_t count, DType dtype, std::uint64_t seed,
                        Distribution distribution, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (data == nullptr) return cudaErrorInvalidValue;
  return with_element_type<every_dtype>(dtype, [&]<typename T>() {
    fill_kernel<T>
        <<<fill_blocks, threads, 0, stream>>>(static_cast<T*>(data), count, seed, distribution);
    return cudaGetLastError();
  });
}

std::vector<int> shuffled_page_table(int batch, int pages_per_sequence, std::uint64_t seed) {
  std::vector<int> table(static_cast<std::size_t>(batch) *
                         static_cast<std::size_t>(pages_per_sequence));
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<int>(i);
  // Fisher-Yates with splitmix64: the same table for the same seed anywhere.
  std::uint64_t state = seed;
  const auto next = [&state]() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  for (std::size_t i = table.size(); i > 1; --i) std::swap(table[i - 1], table[next() % i]);
  return table;
}

cudaError_t scatter_to_pages(const void* src, void* dst, const int* table, int batch, int kv_heads,
                             int kv_len, int head_dim, int page_size, int pages_per_sequence,
                             DType dtype, cudaStream_t stream) {
  if (src == nullptr || dst == nullptr || table == nullptr || page_size < 1 ||
      static_cast<std::int64_t>(pages_per_sequence) * page_size < kv_len) {
    return cudaErrorInvalidValue;
  }
  const std::size_t count = static_cast<std::size_t>(batch) * static_cast<std::size_t>(kv_heads) *
                            static_cast<std::size_t>(kv_len) * static_cast<std::size_t>(head_dim);
  if (count == 0) return cudaSuccess;
  return with_element_type<every_dtype>(dtype, [&]<typename T>() {
    scatter_kernel<T><<<fill_blocks, threads, 0, stream>>>(
        static_cast<const T*>(src), static_cast<T*>(dst), table, count, kv_heads, kv_len, head_dim,
        page_size, pages_per_sequence);
    return cudaGetLastError();
  });
}

cudaError_t gather_rows(const void* src, void* dst, DType dtype, std::size_t heads,
                        int rows_per_head, const int* rows, int count, int width,
                        cudaStream_t stream) {
  if (src == nullptr || dst == nullptr || rows == nullptr || count < 0 || width < 1 ||
      count > rows_per_head) {
    return cudaErrorInvalidValue;
  }
  const std::size_t count_all =
      heads * static_cast<std::size_t>(count) * static_cast<std::size_t>(width);
  if (count_all == 0) return cudaSuccess;
  return with_element_type<every_dtype>(dtype, [&]<typename T>() {
    gather_kernel<T><<<fill_blocks, threads, 0, stream>>>(static_cast<const T*>(src),
                                                          static_cast<T*>(dst), rows, count_all,
                                                          rows_per_head, count, width);
    return cudaGetLastError();
  });
}

void PagedKv::point(ForwardBuffers& io) const {
  io.k = k.data();
  io.v = v.data();
  io.page_table = table.as<int>();
  io.pages_per_sequence = pages_per_sequence;
}

PagedKv page_kv(const AttentionShape& shape, const void* k, const void* v, std::uint64_t seed,
                unsigned char unused_rows, cudaStream_t stream) {
  PagedKv out;
  out.pages_per_sequence = (shape.keys() + shape.page_size - 1) / shape.page_size;
  const std::vector<int> table = shuffled_page_table(shape.batch, out.pages_per_sequence, seed);
  out.table = ints_on_device(table, stream);
  const std::size_t page_bytes = table.size() * static_cast<std::size_t>(shape.key_heads()) *
                                 static_cast<std::size_t>(shape.page_size) *
                                 static_cast<std::size_t>(shape.head_dim) *
                                 static_cast<std::size_t>(element_bytes(shape.dtype));
  out.k = measure::DeviceBuffer(page_bytes);
  out.v = measure::DeviceBuffer(page_bytes);
  for (auto [from, to] : {std::pair{k, &out.k}, std::pair{v, &out.v}}) {
    CFR_CUDA_CHECK(cudaMemsetAsync(to->data(), unused_rows, to->bytes(), stream));
    CFR_CUDA_CHECK(scatter_to_pages(from, to->data(), out.table.as<int>(), shape.batch,
                                    shape.key_heads(), shape.keys(), shape.head_dim,
                                    shape.page_size, out.pages_per_sequence, shape.dtype, stream));
  }
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

measure::DeviceBuffer ints_on_device(const std::vector<int>& values, cudaStream_t stream) {
  measure::DeviceBuffer buffer(values.size() * sizeof(int));
  CFR_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), values.data(), buffer.bytes(),
                                 cudaMemcpyHostToDevice, stream));
  // The host vector may go once this returns.
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
  return buffer;
}

cudaError_t poison(void* data, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  return cudaMemsetAsync(data, 0xFF, bytes, stream);
}

cudaError_t convert_from_fp32(const float* src, void* dst, std::size_t count, DType dtype,
                              cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (src == nullptr || dst == nullptr) return cudaErrorInvalidValue;
  return with_element_type<every_dtype>(dtype, [&]<typename T>() {
    convert_kernel<T><<<fill_blocks, threads, 0, stream>>>(src, static_cast<T*>(dst), count);
    return cudaGetLastError();
  });
}

cudaError_t compare_with_reference(const void* out, DType dtype, const float* ref,
                                   std::size_t count, cudaStream_t stream, CheckResult& result) {
  result = CheckResult{};
  result.count = count;
  if (count == 0) return cudaSuccess;
  if (out == nullptr || ref == nullptr) return cudaErrorInvalidValue;

  StreamOrderedBuffer partials(compare_blocks * sizeof(Partial), stream);
  CFR_CUDA_CHECK_NOEXCEPT(partials.status());
  CFR_CUDA_CHECK_NOEXCEPT(with_element_type<every_dtype>(dtype, [&]<typename T>() {
    compare_kernel<T><<<compare_blocks, threads, 0, stream>>>(static_cast<const T*>(out), ref,
                                                              count, partials.as<Partial>());
    return cudaGetLastError();
  }));
  std::vector<Partial> host(compare_blocks);
  CFR_CUDA_CHECK_NOEXCEPT(cudaMemcpyAsync(host.data(), partials.as<Partial>(),
                                          compare_blocks * sizeof(Partial), cudaMemcpyDeviceToHost,
                                          stream));
  CFR_CUDA_CHECK_NOEXCEPT(cudaStreamSynchronize(stream));

  Partial total{0, 0, 0, 0, 0};
  for (const Partial& part : host) {
    total.squared_error += part.squared_error;
    total.squared_ref += part.squared_ref;
    total.max_abs_err = std::fmax(total.max_abs_err, part.max_abs_err);
    total.ref_max_abs = std::fmax(total.ref_max_abs, part.ref_max_abs);
    total.non_finite += part.non_finite;
  }
  result.all_finite = total.non_finite == 0;
  result.max_abs_err = total.max_abs_err;
  result.ref_max_abs = total.ref_max_abs;
  result.ref_l2 = std::sqrt(total.squared_ref);
  const double error_l2 = std::sqrt(total.squared_error);
  if (!result.all_finite) {
    // Infinite rather than the error of the finite part, so that a caller
    // that only reads rel_l2_err still sees the failure.
    result.rel_l2_err = INFINITY;
  } else {
    result.rel_l2_err = result.ref_l2 > 0 ? error_l2 / result.ref_l2 : error_l2;
  }
  return cudaSuccess;
}

}  // namespace cfr::kernels
