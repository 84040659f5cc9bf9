// fa3_wgmma's two Q block heights at d 64, timed side by side with the one
// its rule picks (catalog revision 8, roofline/model/fa3_rows.hpp), so one
// run says on each shape whether the rule took the faster height. Each height
// is first checked against the fp32 reference on ragged and exact lengths,
// both masks and dtypes; then every shape is timed cold (L2 flushed before
// every sample) at 128 rows, 192 rows and the rule's pick (the height it
// picks, timed a third time), one sample of each in turn, and the medians
// and the samples are printed. Not a test and not part of a report:
// docs/perf-notes.md ("v8") records the runs.
//
// usage: fa3_rows [samples]   (default 10 a height and shape)

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels/attention_api.hpp"
#include "kernels/attention_check.hpp"
#include "kernels/current_device.hpp"
#include "kernels/fa3_wgmma_rows.hpp"
#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/l2_flush.hpp"
#include "roofline/model/kernel_catalog.hpp"
#include "tests/gpu/variant_tool.cuh"

namespace {

using namespace cfr;
using namespace cfr::kernels;
using gpu_tools::median;
using measure::DeviceBuffer;

// Square self-attention: Q, K, V and O alike.
std::size_t tensor_elements(const AttentionShape& s) {
  return static_cast<std::size_t>(s.batch) * s.heads * s.seq_len * s.head_dim;
}
std::size_t tensor_bytes(const AttentionShape& s) {
  return tensor_elements(s) * element_bytes(s.dtype);
}
std::size_t row_count(const AttentionShape& s) {
  return static_cast<std::size_t>(s.batch) * s.heads * s.seq_len;
}

struct Tensors {
  AttentionShape shape;
  DeviceBuffer q, k, v, o, lse, workspace;
  Tensors(const AttentionShape& s, std::uint64_t seed, cudaStream_t stream)
      : shape(s),
        q(tensor_bytes(s)),
        k(tensor_bytes(s)),
        v(tensor_bytes(s)),
        o(tensor_bytes(s)),
        lse(row_count(s) * sizeof(float)),
        workspace(measure::zeroed_workspace(64, stream)) {
    const std::size_t n = tensor_elements(s);
    CFR_CUDA_CHECK(fill_random(q.data(), n, s.dtype, seed, Distribution::normal, stream));
    CFR_CUDA_CHECK(fill_random(k.data(), n, s.dtype, seed + 1, Distribution::normal, stream));
    CFR_CUDA_CHECK(fill_random(v.data(), n, s.dtype, seed + 2, Distribution::uniform, stream));
  }
  cudaError_t launch(int rows, cudaStream_t stream) {
    ForwardBuffers io;
    io.q = q.data();
    io.k = k.data();
    io.v = v.data();
    io.o = o.data();
    io.lse = lse.as<float>();
    const LaunchContext context{stream, nullptr, workspace.data(), workspace.bytes()};
    return launch_fa3_wgmma_with_rows(rows, shape, io, context);
  }
};

AttentionShape shape_of(int batch, int heads, int seq_len, bool causal, DType dtype) {
  AttentionShape s;
  s.batch = batch;
  s.heads = heads;
  s.seq_len = seq_len;
  s.head_dim = 64;
  s.causal = causal;
  s.dtype = dtype;
  return s;
}

// Whether `rows` matches the reference on `shape`.
bool check(int rows, const AttentionShape& shape, cudaStream_t stream) {
  Tensors t(shape, 1234 + shape.seq_len, stream);
  DeviceBuffer ref_o(tensor_elements(shape) * sizeof(float));
  DeviceBuffer ref_lse(row_count(shape) * sizeof(float));
  CFR_CUDA_CHECK(reference_forward(shape, t.q.data(), t.k.data(), t.v.data(), ref_o.as<float>(),
                                   ref_lse.as<float>(), stream));
  CFR_CUDA_CHECK(poison(t.o.data(), t.o.bytes(), stream));
  CFR_CUDA_CHECK(poison(t.lse.data(), t.lse.bytes(), stream));
  if (const cudaError_t status = t.launch(rows, stream); status != cudaSuccess) {
    std::printf("  %d rows: launch error %s\n", rows, cudaGetErrorString(status));
    return false;
  }
  CheckResult o_err, lse_err;
  CFR_CUDA_CHECK(compare_with_reference(t.o.data(), shape.dtype, ref_o.as<float>(),
                                        tensor_elements(shape), stream, o_err));
  CFR_CUDA_CHECK(compare_with_reference(t.lse.data(), DType::fp32, ref_lse.as<float>(),
                                        row_count(shape), stream, lse_err));
  const Tolerance tolerance = tolerance_for(shape.dtype);
  return passes(o_err, tolerance) && passes(lse_err, tolerance);
}

struct Timed {
  int batch, heads, seq_len;
  DType dtype;
};

}  // namespace

int main(int argc, char** argv) {
  const int samples = argc > 1 ? std::atoi(argv[1]) : 10;
  measure::CudaStream stream;
  measure::L2Flusher flusher(0);
  const int sm_count = current_device().sm_count;
  bool checked = true;
  for (int rows : {128, 192}) {
    for (DType dtype : {DType::fp16, DType::bf16}) {
      for (int seq_len : {1, 17, 64, 1000, 4097}) {
        for (bool causal : {false, true}) {
          if (!check(rows, shape_of(2, 3, seq_len, causal, dtype), stream.get())) {
            std::printf("%d rows FAILED: %s N=%d causal=%d\n", rows, to_string(dtype).data(),
                        seq_len, causal);
            checked = false;
          }
        }
      }
    }
  }
  std::printf("check: %s (128 and 192 rows, N 1-4097, both masks and dtypes)\n",
              checked ? "passed" : "FAILED");
  if (!checked) return 1;
  // Issue 22's axes, the six shapes the rule was fit to, twelve it was not.
  const std::vector<Timed> shapes{
      {1, 8, 4096, DType::fp16},  {1, 8, 8192, DType::fp16},   {1, 8, 16384, DType::fp16},
      {4, 16, 2048, DType::bf16}, {4, 16, 5000, DType::bf16},  {4, 16, 8192, DType::bf16},
      {2, 16, 4096, DType::fp16}, {2, 16, 12000, DType::fp16}, {1, 32, 8192, DType::fp16},
      {8, 8, 3000, DType::fp16},  {16, 16, 1024, DType::fp16}, {1, 64, 16384, DType::fp16},
  };
  std::printf("%2s %3s %6s %5s %6s %9s %9s %9s %8s %5s %9s  samples 128 | 192 (ms), %d SMs\n", "B",
              "H", "N", "dtype", "causal", "128 ms", "192 ms", "rule ms", "192/128", "rule",
              "rule/best", sm_count);
  for (const Timed& timed : shapes) {
    for (bool causal : {false, true}) {
      const AttentionShape shape =
          shape_of(timed.batch, timed.heads, timed.seq_len, causal, timed.dtype);
      Tensors t(shape, 99, stream.get());
      // The rule's pick launched by its height: rows 0 would run the rule on
      // the host between the timer's start event and the launch.
      const int pick =
          fa3_wgmma_kernel
              .problem_tile(problem_of(shape), fa3_wgmma_kernel.tile_for(64, {9, 0}), sm_count)
              .br;
      std::vector<std::function<cudaError_t()>> launches;
      for (int rows : {128, 192, pick}) {
        launches.emplace_back([&t, &stream, rows] { return t.launch(rows, stream.get()); });
      }
      const std::vector<std::vector<double>> all =
          gpu_tools::time_cold_in_turn(launches, stream.get(), flusher, samples);
      std::vector<double> medians;
      for (const std::vector<double>& timed_samples : all) medians.push_back(median(timed_samples));
      const double best = std::min(medians[0], medians[1]);
      std::printf("%2d %3d %6d %5s %6d %9.4f %9.4f %9.4f %8.3f %5d %9.3f ", timed.batch,
                  timed.heads, timed.seq_len, to_string(timed.dtype).data(), causal, medians[0],
                  medians[1], medians[2], medians[1] / medians[0], pick, medians[2] / best);
      for (double s : all[0]) std::printf(" %.4f", s);
      std::printf(" |");
      for (double s : all[1]) std::printf(" %.4f", s);
      std::printf("\n");
    }
  }
  return 0;
}
