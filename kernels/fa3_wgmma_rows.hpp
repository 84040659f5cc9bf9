#pragma once

// fa3_wgmma launched with Q blocks of a given height rather than the one its
// catalog rule picks (fa3_wgmma_v8_tile, roofline/model/fa3_rows.hpp): how
// the GPU tests check the 192-row tile on shapes whose few tiles the rule
// keeps on 128 rows, and how tests/gpu/fa3_rows times both heights beside the
// rule's pick. `rows`: 0 for the rule's, 128, or 192 (d 64 only); any other,
// or 192 at d 128, is cudaErrorInvalidValue. With 128 rows the K/V blocks are
// revision 7's (fa3_wgmma_tile), with 192 they are 128 keys.

#include "kernels/attention_api.hpp"

namespace cfr::kernels {

cudaError_t launch_fa3_wgmma_with_rows(int rows, const AttentionShape& shape,
                                       const ForwardBuffers& io, const LaunchContext& context);

}  // namespace cfr::kernels
