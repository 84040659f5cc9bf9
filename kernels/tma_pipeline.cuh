#pragma once

// The sm_90 pieces of a warp-specialized pipeline (PTX ISA: mbarrier,
// cp.async.bulk.tensor, bar, setmaxnreg): mbarriers in shared memory that
// complete on arrivals and on the bytes a bulk tensor copy (TMA) delivers, the
// copy itself (a box of a tensor map into shared memory), named barriers, and
// the register reallocation between a producer warpgroup and its consumers. Device code,
// compiled only where __CUDA_ARCH_FEAT_SM90_ALL is defined.

#include <cuda.h>

#include <cstdint>

namespace cfr::kernels::tma {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ void barrier_init(std::uint32_t barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals)
               : "memory");
}

// Makes initialized barriers visible to the other threads and to the async
// proxy (the TMA unit completes transactions on them).
__device__ __forceinline__ void barrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` of copies completing on the
// barrier's current phase.
__device__ __forceinline__ void arrive_expect_bytes(std::uint32_t barrier, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void arrive(std::uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

// Waits until the phase of parity `parity` has completed. A fresh barrier is
// in phase 0, so waiting on parity 1 returns at once (the producer's first
// wait on a free slot).
__device__ __forceinline__ void wait(std::uint32_t barrier, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  } while (done == 0);
}

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// The box at (c0, c1, c2) of a 3-D tensor map (c0 the innermost, contiguous
// coordinate) into shared memory at `destination`, completing its bytes on
// `barrier`. Elements outside the tensor arrive as zeros and still count.
__device__ __forceinline__ void load_box_3d(std::uint32_t destination, const CUtensorMap* map,
                                            std::uint32_t barrier, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(destination),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(barrier), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// Named barriers (ids 1-15; 0 is __syncthreads): `threads` of the CTA, a
// multiple of 32, meet; arrive does not wait. Warpgroups take turns with them.
// Immediate ids: with an id in a register ptxas reserves all 16.
template <int id, int threads>
__device__ __forceinline__ void named_barrier_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(id), "n"(threads) : "memory");
}

template <int id, int threads>
__device__ __forceinline__ void named_barrier_arrive() {
  asm volatile("bar.arrive %0, %1;\n" ::"n"(id), "n"(threads) : "memory");
}

// Hands registers back (a producer) or takes them (a consumer): every warp
// of the warpgroup executes it; the counts are per thread.
template <int registers>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(registers));
}

template <int registers>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(registers));
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace cfr::kernels::tma
