// How much of a cyclically re-read working set the L2 keeps (issue 23: the
// misses rows whose K/V sit at the L2's size). Every resident CTA reads the
// same W bytes once, in 4 KiB chunks, the way the FA1 kernels' CTAs of one head
// read its K/V prefix. Two orders:
//   stagger  CTA c starts at chunk c * chunks / ctas and wraps around, so the
//            CTAs sit spread over the buffer: a chunk is read again only after
//            every other chunk was (a strict LRU reads all C x W from DRAM once
//            W passes its capacity, and W once otherwise);
//   step     every CTA starts at chunk 0: they read each chunk together.
// Not a test: tests/gpu/device_run.sh's l2_loop step runs it under Nsight
// Compute (DRAM bytes per launch, flushed caches) and once plainly (event
// time); docs/model.md ("The interval") reads its output.
//
// usage: l2_loop_probe [ctas_per_sm] [MiB,MiB,...] [work]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "kernels/measure/cuda_error.hpp"
#include "kernels/measure/l2_flush.hpp"

using cfr::measure::CudaEvent;
using cfr::measure::DeviceBuffer;

constexpr int threads = 256;
constexpr size_t chunk_bytes = threads * sizeof(uint4);  // 4 KiB

// `work` dependent FMAs a thread after each chunk, and the next chunk's
// address waits for them: a CTA that computes on a tile before it loads the
// next, as the FA1 kernels do, instead of one that only reads.
__global__ void cyclic_read(const uint4* buffer, size_t chunks, int stagger, int work,
                            unsigned* sink) {
  const size_t first = stagger ? size_t(blockIdx.x) * chunks / gridDim.x : 0;
  unsigned acc = 0;
  float f = 1.0f;
  size_t chunk = first;
  for (size_t read = 0; read < chunks; ++read) {
    // .cg: through the L2 only, as the kernels' cp.async.cg tile loads.
    const uint4 v = __ldcg(buffer + chunk * threads + threadIdx.x);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
    f += float(acc & 1u);
    for (int i = 0; i < work; ++i) f = fmaf(f, 0.999999f, 1e-7f);
    if (++chunk == chunks) chunk = 0;
    if (f == 12345.678f) chunk = 0;  // never true; the address depends on f
  }
  if (acc == 0x9e3779b9u || f == 0.0f) *sink = acc;
}

int run(int argc, char** argv) {
  const int ctas_per_sm = argc > 1 ? std::atoi(argv[1]) : 4;
  std::vector<double> mib = {8,  12, 16, 20, 22, 24, 26, 28, 29, 30, 31, 32,
                             34, 36, 40, 44, 48, 52, 56, 60, 64, 72, 80};
  if (argc > 2) {
    mib.clear();
    std::string list = argv[2];
    for (size_t at = 0; at < list.size();) {
      const size_t comma = list.find(',', at);
      mib.push_back(std::atof(list.substr(at, comma - at).c_str()));
      at = comma == std::string::npos ? list.size() : comma + 1;
    }
  }
  const int work = argc > 3 ? std::atoi(argv[3]) : 0;
  cudaDeviceProp prop{};
  CFR_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int per_sm = 0;
  CFR_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cyclic_read, threads, 0));
  const int ctas = prop.multiProcessorCount * std::min(ctas_per_sm, per_sm);
  double largest = 0;
  for (double m : mib) largest = std::max(largest, m);
  const size_t max_bytes = size_t(largest * 1048576.0) + chunk_bytes;
  const DeviceBuffer buffer(max_bytes);
  const DeviceBuffer sink(sizeof(unsigned));
  CFR_CUDA_CHECK(cudaMemset(buffer.data(), 1, max_bytes));
  // The cold timer's flush: a read of twice the L2 before each timed launch.
  cfr::measure::L2Flusher flusher(0, cfr::measure::L2FlushMode::read);
  const CudaEvent start;
  const CudaEvent stop;
  std::printf("# %s, %d SMs, L2 %d bytes, %d CTAs of %d threads (%d a SM resident)\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize, ctas, threads, per_sm);
  std::printf("launch,order,MiB,chunks,ctas,requested_bytes,event_ms,work\n");
  int launch = 0;
  for (int stagger : {1, 0}) {
    for (double m : mib) {
      const size_t chunks = std::max<size_t>(1, size_t(m * 1048576.0) / chunk_bytes);
      CFR_CUDA_CHECK(flusher.flush(nullptr));
      nvtxRangePushA("cfr_profile");
      nvtxRangePushA(stagger ? "stagger" : "step");
      CFR_CUDA_CHECK(cudaEventRecord(start));
      cyclic_read<<<ctas, threads>>>(buffer.as<uint4>(), chunks, stagger, work,
                                     sink.as<unsigned>());
      CFR_CUDA_CHECK(cudaEventRecord(stop));
      nvtxRangePop();
      nvtxRangePop();
      CFR_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CFR_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      std::printf("%d,%s,%.0f,%zu,%d,%.0f,%.4f,%d\n", launch++, stagger ? "stagger" : "step", m,
                  chunks, ctas, double(chunks) * chunk_bytes * ctas, ms, work);
    }
  }
  CFR_CUDA_CHECK(cudaGetLastError());
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "l2_loop_probe: %s\n", error.what());
    return 1;
  }
}
