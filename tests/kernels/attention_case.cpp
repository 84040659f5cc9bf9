#include "attention_case.hpp"

#include <sstream>

#include <catch2/catch.hpp>

#include "kernels/measure/device_info.hpp"

namespace cfr::kernels::testing {

AttentionShape make_shape(DType dtype, int seq_len, int head_dim, bool causal) {
  AttentionShape shape;
  shape.batch = test_batch(seq_len);
  shape.heads = 2;
  shape.seq_len = seq_len;
  shape.head_dim = head_dim;
  shape.causal = causal;
  shape.dtype = dtype;
  return shape;
}

std::vector<const KernelEntry*> runnable_kernels(Direction direction) {
  int device = 0;
  CFR_CUDA_CHECK(cudaGetDevice(&device));
  const ComputeCapability cc = measure::compute_capability_of(device);
  std::vector<const KernelEntry*> kernels;
  for (const KernelEntry* entry : registry().entries()) {
    if (entry->description.direction != direction) continue;
    if (const auto reason = entry->cannot_run_on(cc)) {
      WARN("not tested on this device: " << *reason);
      continue;
    }
    kernels.push_back(entry);
  }
  return kernels;
}

std::string describe(const AttentionShape& shape) {
  std::ostringstream text;
  text << to_string(shape.dtype) << " B=" << shape.batch << " H=" << shape.heads
       << " N=" << shape.seq_len << " d=" << shape.head_dim
       << (shape.causal ? " causal" : " non-causal");
  if (!shape.square()) {
    text << " Hkv=" << shape.key_heads() << " Nk=" << shape.keys();
    if (shape.page_size > 0) text << " page=" << shape.page_size;
  }
  if (shape.softmax_scale != 0.f) text << " scale=" << shape.softmax_scale;
  return text.str();
}

std::size_t row_count(const AttentionShape& shape) {
  return static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.heads) *
         static_cast<std::size_t>(shape.seq_len);
}

std::size_t tensor_elements(const AttentionShape& shape) {
  return row_count(shape) * static_cast<std::size_t>(shape.head_dim);
}

std::size_t tensor_bytes(const AttentionShape& shape) {
  return tensor_elements(shape) * static_cast<std::size_t>(element_bytes(shape.dtype));
}

std::size_t kv_elements(const AttentionShape& shape) {
  return static_cast<std::size_t>(shape.batch) * static_cast<std::size_t>(shape.key_heads()) *
         static_cast<std::size_t>(shape.keys()) * static_cast<std::size_t>(shape.head_dim);
}

bool takes(const KernelEntry& kernel, const AttentionShape& shape) {
  return !shape_reason(kernel.description, problem_of(shape));
}

Inputs::Inputs(const AttentionShape& shape, std::uint64_t seed, cudaStream_t stream)
    : q(tensor_bytes(shape)),
      k(kv_elements(shape) * element_bytes(shape.dtype)),
      v(kv_elements(shape) * element_bytes(shape.dtype)),
      d_o(tensor_bytes(shape)) {
  const std::size_t count = tensor_elements(shape);
  const std::size_t kv_count = kv_elements(shape);
  CFR_CUDA_CHECK(fill_random(q.data(), count, shape.dtype, seed, Distribution::normal, stream));
  CFR_CUDA_CHECK(
      fill_random(k.data(), kv_count, shape.dtype, seed + 1, Distribution::normal, stream));
  CFR_CUDA_CHECK(
      fill_random(v.data(), kv_count, shape.dtype, seed + 2, Distribution::uniform, stream));
  CFR_CUDA_CHECK(
      fill_random(d_o.data(), count, shape.dtype, seed + 3, Distribution::uniform, stream));
  // The pages' unused rows NaN: a kernel that reads past kv_len fails.
  if (shape.page_size > 0) paged = page_kv(shape, k.data(), v.data(), seed, 0xFF, stream);
}

ForwardBuffers Inputs::forward(void* o, float* lse) const {
  ForwardBuffers io{q.data(), k.data(), v.data(), o, lse};
  if (paged.table.data() != nullptr) paged.point(io);
  return io;
}

ForwardReference::ForwardReference(const AttentionShape& shape, const Inputs& inputs,
                                   cudaStream_t stream)
    : o(tensor_elements(shape) * sizeof(float)), lse(row_count(shape) * sizeof(float)) {
  CFR_CUDA_CHECK(poison(o.data(), o.bytes(), stream));
  CFR_CUDA_CHECK(poison(lse.data(), lse.bytes(), stream));
  CFR_CUDA_CHECK(reference_forward(contiguous_cache(shape), inputs.q.data(), inputs.k.data(),
                                   inputs.v.data(), o.as<float>(), lse.as<float>(), stream));
}

BackwardReference::BackwardReference(const AttentionShape& shape, const Inputs& inputs,
                                     cudaStream_t stream)
    : d_q(tensor_elements(shape) * sizeof(float)),
      d_k(kv_elements(shape) * sizeof(float)),
      d_v(kv_elements(shape) * sizeof(float)) {
  for (DeviceBuffer* buffer : {&d_q, &d_k, &d_v}) {
    CFR_CUDA_CHECK(poison(buffer->data(), buffer->bytes(), stream));
  }
  CFR_CUDA_CHECK(reference_backward(shape, inputs.q.data(), inputs.k.data(), inputs.v.data(),
                                    inputs.d_o.data(), d_q.as<float>(), d_k.as<float>(),
                                    d_v.as<float>(), stream));
}

void check_against_reference(const char* tensor, const void* out, DType dtype, const float* ref,
                             std::size_t count, DType tolerance_dtype, cudaStream_t stream) {
  CheckResult result;
  CFR_CUDA_CHECK(compare_with_reference(out, dtype, ref, count, stream, result));
  const Tolerance tolerance = tolerance_for(tolerance_dtype);
  INFO(tensor << ": rel_l2_err " << result.rel_l2_err << " (tolerance " << tolerance.rel_l2
              << "), max_abs_err " << result.max_abs_err << " (tolerance "
              << tolerance.max_abs_relative * result.scale() << ")");
  CHECK(result.all_finite);
  CHECK(result.rel_l2_err <= tolerance.rel_l2);
  CHECK(result.max_abs_err <= tolerance.max_abs_relative * result.scale());
  CHECK(passes(result, tolerance));
}

std::vector<float> to_host(const DeviceBuffer& buffer, cudaStream_t stream) {
  std::vector<float> host(buffer.bytes() / sizeof(float));
  CFR_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), buffer.data(), buffer.bytes(), cudaMemcpyDeviceToHost, stream));
  CFR_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace cfr::kernels::testing
