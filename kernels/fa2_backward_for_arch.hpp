#pragma once

// fa2_bwd and fa2_bwd_2d launched with the config the catalog gives a GPU of
// compute capability `cc` rather than the current device's: how the GPU tests
// check, on the H200, the smaller d = 128 tiles that sm_86 and sm_89 run
// (their 99 KB of shared memory a block holds neither fa2_bwd's 145 KB nor
// fa2_bwd_2d's 161 KB). The device must still be able to run that config (it
// has the shared memory).

#include "kernels/attention_api.hpp"
#include "roofline/core/compute_capability.hpp"

namespace cfr::kernels {

cudaError_t launch_fa2_backward_for_arch(ComputeCapability cc, const AttentionShape& shape,
                                         const BackwardBuffers& io, const LaunchContext& context);

cudaError_t launch_fa2_backward_2d_for_arch(ComputeCapability cc, const AttentionShape& shape,
                                            const BackwardBuffers& io,
                                            const LaunchContext& context);

}  // namespace cfr::kernels
