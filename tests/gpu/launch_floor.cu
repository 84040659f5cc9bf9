// The event-timed floor of a cold streaming read (docs/perf-notes.md, "The
// launch floor"): an empty kernel, then a read-only stream of 8 MB to 4 GB
// timed two ways, by CUDA events around the launch (as the cold timer does)
// and from the first CTA's start to the last CTA's end (%globaltimer), with
// the L2 emptied by a read before each sample. Not a test: results/h200/
// decode-dev/launch-floor.txt is its output.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/measure/l2_flush.hpp"
#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e) {                                         \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                      \
    }                                                \
  } while (0)
__device__ unsigned long long t_first, t_last;
__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
__global__ void stream_read(const uint4* p, size_t n, unsigned* sink, int stamp) {
  if (stamp && threadIdx.x == 0) atomicMin(&t_first, gtime());
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *sink = acc;
  if (stamp) {
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&t_last, gtime());
  }
}
__global__ void empty() {}
int main() {
  int sms;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  // The cold timer's flush: a read of twice the L2.
  cfr::measure::L2Flusher flusher(0, cfr::measure::L2FlushMode::read);
  size_t max_bytes = size_t(4) << 30;
  void* buf;
  CK(cudaMalloc(&buf, max_bytes));
  CK(cudaMemset(buf, 1, max_bytes));
  unsigned* sink;
  CK(cudaMalloc(&sink, 4));
  cudaStream_t s;
  cudaStreamCreate(&s);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  auto flush = [&] { (void)flusher.flush(s); };
  // empty kernel
  std::vector<float> e;
  for (int i = 0; i < 30; ++i) {
    flush();
    cudaStreamSynchronize(s);
    cudaEventRecord(a, s);
    empty<<<1, 32, 0, s>>>();
    cudaEventRecord(b, s);
    cudaStreamSynchronize(s);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    e.push_back(ms * 1000);
  }
  std::sort(e.begin(), e.end());
  printf("empty kernel: median %.2f us\n", e[15]);
  for (int blocks_per_sm : {4, 8})
    for (size_t mb : {8, 33, 134, 268, 537, 1074, 4096}) {
      size_t bytes = mb << 20;
      if (bytes > max_bytes) bytes = max_bytes;
      std::vector<float> ev, in;
      for (int i = 0; i < 30; ++i) {
        unsigned long long big = ~0ull, zero = 0;
        cudaMemcpyToSymbolAsync(t_first, &big, 8, 0, cudaMemcpyHostToDevice, s);
        cudaMemcpyToSymbolAsync(t_last, &zero, 8, 0, cudaMemcpyHostToDevice, s);
        flush();
        cudaStreamSynchronize(s);
        cudaEventRecord(a, s);
        stream_read<<<blocks_per_sm * sms, 512, 0, s>>>((const uint4*)buf, bytes / 16, sink, 1);
        cudaEventRecord(b, s);
        CK(cudaStreamSynchronize(s));
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        ev.push_back(ms * 1000);
        unsigned long long f, l;
        cudaMemcpyFromSymbol(&f, t_first, 8);
        cudaMemcpyFromSymbol(&l, t_last, 8);
        in.push_back((l - f) / 1000.0f);
      }
      std::sort(ev.begin(), ev.end());
      std::sort(in.begin(), in.end());
      printf(
          "blocks/SM %d read %5zu MB: event %8.2f us (%.1f GB/s)  in-kernel first-start..last-end "
          "%8.2f us (%.1f GB/s)  gap %.2f us\n",
          blocks_per_sm, mb, ev[15], bytes / (ev[15] * 1e3), in[15], bytes / (in[15] * 1e3),
          ev[15] - in[15]);
    }
  return 0;
}
