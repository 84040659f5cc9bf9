#pragma once

// fa2_mma launched with the config the catalog gives a GPU of compute
// capability `cc` rather than the current device's: how the GPU tests check,
// on the H200, the smaller tile that sm_86 and sm_89 run (their 100 KB of
// shared memory cannot hold the d = 128 tile of 128 KB). The device must
// still be able to run that config (it has the shared memory).

#include "kernels/attention_api.hpp"
#include "roofline/core/compute_capability.hpp"

namespace cfr::kernels {

cudaError_t launch_fa2_mma_for_arch(ComputeCapability cc, const AttentionShape& shape,
                                    const ForwardBuffers& io, const LaunchContext& context);

}  // namespace cfr::kernels
