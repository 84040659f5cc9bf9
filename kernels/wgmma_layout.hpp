#pragma once

// The layout arithmetic of Hopper's tensor-memory path, host and device, so
// the CPU tests check every piece against the PTX ISA (tests/kernels/
// test_wgmma_layout.cpp) before a kernel relies on it:
//   - the 128-byte swizzle the bulk tensor copy (TMA) writes a tile in and
//     wgmma reads it in (CU_TENSOR_MAP_SWIZZLE_128B; the descriptor's layout
//     type 1; CuTe's Swizzle<3,4,3>): bits 4-6 of a byte address XOR bits 7-9,
//     so the 16-byte chunk c of 128-byte row r lands at chunk c ^ (r % 8);
//   - a tile of 16-bit elements wider than 64 columns as column blocks of 64
//     (one 128-byte swizzle row each), every block rows x 128 bytes;
//   - the wgmma shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor
//     Format"): start address >> 4 in bits 0-13, leading byte offset >> 4 in
//     16-29, stride byte offset >> 4 in 32-45, base offset in 49-51, layout
//     type in 62-63 (0 none, 1 128-byte, 2 64-byte, 3 32-byte swizzle);
//   - which (row, column) each register of a thread holds: the fp32
//     accumulator of wgmma m64nNk16 and the 16-bit A operand from registers
//     (PTX ISA, "Register Fragments" of wgmma .m64nNk16).

#include <cstdint>

#if defined(__CUDACC__)
#define CFR_HOST_DEVICE __host__ __device__
#else
#define CFR_HOST_DEVICE
#endif

namespace cfr::kernels::wgmma {

inline constexpr int warpgroup_threads = 128;
inline constexpr int swizzle_row_bytes = 128;    // one row of a 128-byte swizzle atom
inline constexpr int swizzle_atom_bytes = 1024;  // 8 rows: the period of the XOR
inline constexpr int block_columns = 64;         // 16-bit elements in a 128-byte row
inline constexpr int k_step = 16;                // wgmma's K for 16-bit inputs

// Where the 128-byte swizzle puts byte `offset` of a region that starts on a
// 1024-byte boundary (the hardware swizzles the address itself, so every
// tile starts on one and the descriptor's base offset stays 0).
CFR_HOST_DEVICE constexpr std::uint32_t swizzle_128b(std::uint32_t offset) {
  return offset ^ ((offset >> 3) & 0x70u);
}

// Byte offset of element (row, col) of a tile of `rows` rows of 16-bit
// elements, stored as column blocks of 64 elements, each rows x 128 bytes
// and 128-byte swizzled: the layout of one TMA box of {64, rows} per block.
CFR_HOST_DEVICE constexpr std::uint32_t tile_offset(int row, int col, int rows) {
  const auto linear =
      static_cast<std::uint32_t>((col / block_columns) * rows * swizzle_row_bytes +
                                 row * swizzle_row_bytes + (col % block_columns) * 2);
  return swizzle_128b(linear);
}

enum class LayoutType : std::uint32_t {
  interleave = 0,
  swizzle_128b = 1,
  swizzle_64b = 2,
  swizzle_32b = 3
};

struct MatrixDescriptor {
  std::uint32_t start_address = 0;  // shared-window byte address
  std::uint32_t leading_byte_offset = 0;
  std::uint32_t stride_byte_offset = 0;
  std::uint32_t base_offset = 0;
  LayoutType layout = LayoutType::interleave;
  friend constexpr bool operator==(const MatrixDescriptor&, const MatrixDescriptor&) = default;
};

CFR_HOST_DEVICE constexpr std::uint64_t encode(const MatrixDescriptor& d) {
  return static_cast<std::uint64_t>((d.start_address >> 4) & 0x3FFFu) |
         (static_cast<std::uint64_t>((d.leading_byte_offset >> 4) & 0x3FFFu) << 16) |
         (static_cast<std::uint64_t>((d.stride_byte_offset >> 4) & 0x3FFFu) << 32) |
         (static_cast<std::uint64_t>(d.base_offset & 0x7u) << 49) |
         (static_cast<std::uint64_t>(d.layout) << 62);
}

CFR_HOST_DEVICE constexpr MatrixDescriptor decode(std::uint64_t bits) {
  return {static_cast<std::uint32_t>(bits & 0x3FFFu) << 4,
          static_cast<std::uint32_t>((bits >> 16) & 0x3FFFu) << 4,
          static_cast<std::uint32_t>((bits >> 32) & 0x3FFFu) << 4,
          static_cast<std::uint32_t>((bits >> 49) & 0x7u),
          static_cast<LayoutType>((bits >> 62) & 0x3u)};
}

// An operand stored K-major (its rows run along M or N, 16-bit elements
// contiguous along K: Q and K of S = Q K^T), 128-byte swizzled. CuTe's
// canonical K-major SW128 layout is ((8,m),(T,2k)):((8T,SBO),(1,T)): the 8-row
// groups SBO = 1024 bytes apart, and no leading offset (the K extent of one
// wgmma, 32 bytes, stays inside a swizzle row; 1 by convention). K step s
// starts 32 bytes further into the row, and steps 4-7 in the next column
// block (rows x 128 bytes on).
CFR_HOST_DEVICE constexpr MatrixDescriptor k_major_operand(std::uint32_t tile, int rows, int step) {
  const auto start = tile + static_cast<std::uint32_t>((step / 4) * rows * swizzle_row_bytes) +
                     static_cast<std::uint32_t>((step % 4) * k_step * 2);
  return {start, 16u, static_cast<std::uint32_t>(swizzle_atom_bytes), 0u, LayoutType::swizzle_128b};
}

// An operand stored MN-major (rows along K, 16-bit elements contiguous
// along N: V of O += P V, [keys][d]), 128-byte swizzled, which wgmma reads
// with its transpose bit. CuTe's canonical MN-major SW128 layout is
// ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)): along N, 64 elements then the next
// column block LBO = rows x 128 bytes on; along K, 8 rows then the next 8
// SBO = 1024 bytes on. K step s (16 rows) starts 16 x 128 bytes further.
CFR_HOST_DEVICE constexpr MatrixDescriptor mn_major_operand(std::uint32_t tile, int rows,
                                                            int step) {
  const auto start = tile + static_cast<std::uint32_t>(step * k_step * swizzle_row_bytes);
  return {start, static_cast<std::uint32_t>(rows * swizzle_row_bytes),
          static_cast<std::uint32_t>(swizzle_atom_bytes), 0u, LayoutType::swizzle_128b};
}

// A K step's descriptor from step 0's: the operands above differ from step
// to step only in their start address, whose field is the descriptor's low
// 14 bits (address / 16), so step s's encoding is step 0's plus a constant.
// Exact while the tile's last byte lies below 256 KB (the field's reach),
// which every shared-memory address of sm_90's 227 KB window does: the sum
// never carries out of the field. Where Fa3Config::step_descriptors holds,
// the kernel builds one descriptor a tile and operand, not one a step
// (fa3_wgmma v8.5 and v8.6, docs/perf-notes.md).
CFR_HOST_DEVICE constexpr std::uint64_t k_major_step_offset(int rows, int step) {
  return static_cast<std::uint64_t>((step / 4) * rows * swizzle_row_bytes +
                                    (step % 4) * k_step * 2) >>
         4;
}

CFR_HOST_DEVICE constexpr std::uint64_t mn_major_step_offset(int step) {
  return static_cast<std::uint64_t>(step * k_step * swizzle_row_bytes) >> 4;
}

struct MatrixPosition {
  int row = 0;
  int col = 0;
  friend constexpr bool operator==(MatrixPosition, MatrixPosition) = default;
};

// Element i of thread `thread`'s fp32 accumulator of wgmma m64nNk16 (N / 2
// values a thread): warp w = thread / 32 owns rows 16w..16w+15, lane l rows
// l/4 and l/4 + 8, two adjacent columns per 8-column tile.
CFR_HOST_DEVICE constexpr MatrixPosition accumulator_position(int thread, int i) {
  const int warp = thread / 32;
  const int lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (lane % 4) + (i % 2)};
}

// Half `half` (0: low 16 bits) of register `reg` (0-3) of the 16-bit A
// operand of wgmma m64nNk16 from registers: per warp, mma.m16n8k16's A
// fragment (rows l/4 and l/4 + 8, columns 2(l%4) and 2(l%4) + 8).
CFR_HOST_DEVICE constexpr MatrixPosition a_fragment_position(int thread, int reg, int half) {
  const int warp = thread / 32;
  const int lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * (reg % 2), 2 * (lane % 4) + half + 8 * (reg / 2)};
}

// The accumulator element of S that becomes half `half` of register `reg`
// of P's A operand at K step `step` (P's columns 16 step..16 step + 15): the
// same thread holds it, so P needs no shuffle (tests check the two maps meet).
CFR_HOST_DEVICE constexpr int p_source_index(int step, int reg, int half) {
  return 8 * step + 2 * reg + half;
}

}  // namespace cfr::kernels::wgmma
