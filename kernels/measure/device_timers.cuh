#pragma once

// Device-side readers of the GPU's special registers the measuring kernels
// use. CUDA only.

namespace cfr::measure::registers {

// %globaltimer: nanoseconds, common to all SMs (may tick as coarsely as 1 us).
__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// %smid: the SM the calling thread runs on.
__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

}  // namespace cfr::measure::registers
