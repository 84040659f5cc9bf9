#pragma once

// Which work a tile of fa3_wgmma holds (kernels/fa3_wgmma.cuh), host and
// device, so the CPU tests check it (tests/kernels/test_fa3_tiles.cpp): its
// persistent CTAs take tiles by index, in the catalog's launch order (groups
// of heads one after another, within a group its Q blocks, causal heaviest
// first, each over the group's heads side by side; the heads are batch index
// x heads + head); and where the n-th K/V block of a CTA's run sits in the
// ring of shared-memory slots.

#include <cstdint>

#include "kernels/wgmma_layout.hpp"  // CFR_HOST_DEVICE

namespace cfr::kernels::fa3 {

struct TileShapeArgs {
  int br = 0;
  int bc = 0;
  bool heaviest_first = false;  // causal Q blocks last-first
  int heads_per_group = 1;      // query heads walked side by side (1: Q blocks fastest)
};

struct TileWork {
  int q0 = 0;             // first query row
  std::int64_t head = 0;  // batch index x heads + head
  int kv_head = 0;        // batch index x K/V heads + K/V head
  int kv_blocks = 0;      // K/V blocks the tile's rows see
  int shift = 0;          // bottom-right causal: row i sees keys up to i + shift
  friend constexpr bool operator==(const TileWork&, const TileWork&) = default;
};

CFR_HOST_DEVICE constexpr TileWork tile_work(int tile, int q_len, int kv_len, int heads_per_kv_head,
                                             bool causal, TileShapeArgs shape) {
  // 32-bit throughout: every figure is at most the tile count, which the
  // launcher keeps within int. A 64-bit division is a subroutine call in the
  // kernel (CALL.REL in SASS): v5 made three more of them, and ran 5-7 %
  // slower than v4 at d 128 on the H100 where the two orders are the same
  // (docs/perf-notes.md, v5.1).
  const int q_blocks = (q_len + shape.br - 1) / shape.br;
  const int group_tiles = shape.heads_per_group * q_blocks;
  const int in_group = tile % group_tiles;
  const int block = in_group / shape.heads_per_group;
  const int head = tile / group_tiles * shape.heads_per_group + in_group % shape.heads_per_group;
  const int q0 = (causal && shape.heaviest_first ? q_blocks - 1 - block : block) * shape.br;
  const int shift = kv_len - q_len;
  const int last_row = (q0 + shape.br < q_len ? q0 + shape.br : q_len) - 1;
  const int all_kv_blocks = (kv_len + shape.bc - 1) / shape.bc;
  const int seen = (last_row + shift) / shape.bc + 1;
  const int kv_blocks = causal && seen < all_kv_blocks ? seen : all_kv_blocks;
  return {q0, head, head / heads_per_kv_head, kv_blocks, shift};
}

// The ring slot and mbarrier phase parity of the n-th K/V block a CTA loads:
// the ring runs on across tiles.
struct RingPosition {
  int slot = 0;
  std::uint32_t parity = 0;
  friend constexpr bool operator==(RingPosition, RingPosition) = default;
};

CFR_HOST_DEVICE constexpr RingPosition ring_position(int n, int stages) {
  return {n % stages, static_cast<std::uint32_t>(n / stages) & 1u};
}

}  // namespace cfr::kernels::fa3
