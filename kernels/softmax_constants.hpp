#pragma once

// The tiled kernels run the softmax on exp2 (one MUFU.EX2 per score): scores
// are pre-multiplied by log2(e), and the logsumexp is converted back to the
// natural log the API promises.

namespace cfr::kernels {

inline constexpr float log2_e = 1.4426950408889634f;
inline constexpr float ln_2 = 0.6931471805599453f;

}  // namespace cfr::kernels
