// kernels/wgmma_layout.hpp on the CPU: the 128-byte swizzle, the wgmma matrix
// descriptor and the register fragments fa3_wgmma relies on, each against the
// PTX ISA ("Matrix Descriptor Format", "Shared Memory Matrix Layout" and the
// wgmma .m64nNk16 "Register Fragments") and the CUDA driver API's
// CU_TENSOR_MAP_SWIZZLE_128B, so a wrong bit fails here rather than as
// garbage on the GPU.

#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <utility>

#include "kernels/wgmma_layout.hpp"

using namespace cfr::kernels::wgmma;

namespace {

// Where wgmma reads element (r, k) of one K step of an operand stored
// K-major with the 128-byte swizzle: CuTe's canonical layout
// Swizzle<3,4,3> o ((8,m),(T,2k)):((8T,SBO),(1,T)), in bytes: rows of 128
// bytes within an 8-row group, groups SBO apart, K contiguous; the swizzle on
// the address itself.
std::uint32_t k_major_read(const MatrixDescriptor& d, int r, int k) {
  return swizzle_128b(d.start_address + static_cast<std::uint32_t>((r % 8) * 128) +
                      static_cast<std::uint32_t>(r / 8) * d.stride_byte_offset +
                      static_cast<std::uint32_t>(2 * k));
}

// ... of an operand stored MN-major: Swizzle<3,4,3> o
// ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)): 64 N elements contiguous, the next 64
// LBO on; K rows of 128 bytes within an 8-row group, groups SBO apart.
std::uint32_t mn_major_read(const MatrixDescriptor& d, int k, int n) {
  return swizzle_128b(d.start_address + static_cast<std::uint32_t>(2 * (n % 64)) +
                      static_cast<std::uint32_t>(n / 64) * d.leading_byte_offset +
                      static_cast<std::uint32_t>((k % 8) * 128) +
                      static_cast<std::uint32_t>(k / 8) * d.stride_byte_offset);
}

}  // namespace

TEST_CASE("the 128-byte swizzle moves 16-byte chunk c of row r to chunk c ^ (r % 8)") {
  // CU_TENSOR_MAP_SWIZZLE_128B: within each 1024-byte span, the 16-byte
  // chunks of each 128-byte row are permuted by XOR with the row's index.
  for (std::uint32_t row = 0; row < 32; ++row) {
    for (std::uint32_t chunk = 0; chunk < 8; ++chunk) {
      for (std::uint32_t byte : {0u, 5u, 15u}) {
        INFO("row " << row << " chunk " << chunk);
        CHECK(swizzle_128b(row * 128 + chunk * 16 + byte) ==
              row * 128 + (chunk ^ (row % 8)) * 16 + byte);
      }
    }
  }
  std::set<std::uint32_t> seen;
  for (std::uint32_t offset = 0; offset < 1024; ++offset) seen.insert(swizzle_128b(offset));
  CHECK(seen.size() == 1024);
  CHECK(*seen.rbegin() == 1023);
}

TEST_CASE("a tile wider than 64 elements is column blocks of rows x 128 bytes") {
  // d = 128 at 2 bytes is two TMA boxes of 64 columns: column 64 of row 0
  // starts the second block, 128 rows x 128 bytes in.
  CHECK(tile_offset(0, 64, 128) == 128u * 128u);
  CHECK(tile_offset(3, 70, 128) == 128u * 128u + 3u * 128u + ((0u ^ 3u) * 16u) + 12u);
  CHECK(tile_offset(9, 8, 64) == 9u * 128u + (1u ^ 1u) * 16u);
  std::set<std::uint32_t> seen;
  for (int row = 0; row < 128; ++row) {
    for (int col = 0; col < 128; ++col) seen.insert(tile_offset(row, col, 128));
  }
  CHECK(seen.size() == 128u * 128u);
  CHECK(*seen.rbegin() == 2u * 128u * 128u - 2u);
}

TEST_CASE("the matrix descriptor puts each field in the PTX ISA's bits") {
  // Start address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29,
  // stride byte offset >> 4 in 32-45, base offset in 49-51, layout type in
  // 62-63 with 1 = 128-byte swizzle.
  CHECK(encode({.start_address = 0x400}) == 0x40u);
  CHECK(encode({.leading_byte_offset = 16}) == (1ull << 16));
  CHECK(encode({.stride_byte_offset = 1024}) == (64ull << 32));
  CHECK(encode({.base_offset = 5}) == (5ull << 49));
  CHECK(encode({.layout = LayoutType::swizzle_128b}) == (1ull << 62));
  CHECK(encode({.layout = LayoutType::swizzle_32b}) == (3ull << 62));
  CHECK(encode({.start_address = 0x3FFF0}) == 0x3FFFu);
  // kernels/ceilings/wgmma_peak.cu's no-swizzle operand: 128 and 256 bytes.
  CHECK(encode({.leading_byte_offset = 128, .stride_byte_offset = 256}) ==
        ((8ull << 16) | (16ull << 32)));
  const MatrixDescriptor d{0x1A400, 16384, 1024, 0, LayoutType::swizzle_128b};
  CHECK(decode(encode(d)) == d);
}

TEST_CASE("K-major operands: each K step's descriptor reads the tile TMA wrote") {
  // Q (64 of 128 rows) and K (128 rows) of S = Q K^T at d = 64 and 128.
  constexpr std::uint32_t tile = 0x2000;  // any 1024-byte boundary
  for (int rows : {64, 128}) {
    for (int head_dim : {64, 128}) {
      for (int step = 0; step < head_dim / 16; ++step) {
        const MatrixDescriptor d = k_major_operand(tile, rows, step);
        CHECK(d.layout == LayoutType::swizzle_128b);
        CHECK(d.stride_byte_offset == 1024);
        CHECK(d.base_offset == 0);
        for (int r = 0; r < rows; ++r) {
          for (int k = 0; k < 16; ++k) {
            INFO("rows " << rows << " step " << step << " r " << r << " k " << k);
            REQUIRE(k_major_read(d, r, k) == tile + tile_offset(r, 16 * step + k, rows));
          }
        }
      }
    }
  }
  // A consumer warpgroup's 64 rows start 64 x 128 bytes into each column
  // block of a 128-row Q tile, whose blocks stay 128 rows apart.
  const MatrixDescriptor second_half = k_major_operand(tile + 64 * 128, 128, 4);
  CHECK(k_major_read(second_half, 0, 0) == tile + tile_offset(64, 64, 128));
  CHECK(k_major_read(second_half, 63, 15) == tile + tile_offset(127, 79, 128));
}

TEST_CASE("MN-major operand: V's descriptor per K step reads [keys][d] transposed") {
  constexpr std::uint32_t tile = 0x8000;
  constexpr int keys = 128;
  for (int head_dim : {64, 128}) {
    for (int step = 0; step < keys / 16; ++step) {
      const MatrixDescriptor d = mn_major_operand(tile, keys, step);
      CHECK(d.leading_byte_offset == keys * 128u);
      CHECK(d.stride_byte_offset == 1024);
      for (int k = 0; k < 16; ++k) {
        for (int n = 0; n < head_dim; ++n) {
          INFO("d " << head_dim << " step " << step << " k " << k << " n " << n);
          REQUIRE(mn_major_read(d, k, n) == tile + tile_offset(16 * step + k, n, keys));
        }
      }
    }
  }
}

TEST_CASE("a K step's descriptor is step 0's plus a constant, anywhere in shared memory") {
  // Every 1024-byte tile start a 227 KB window holds, with the tile inside it;
  // and one past the field's reach, where the shortcut must not be used.
  constexpr std::uint32_t window = 227 * 1024;
  for (int rows : {64, 128, 176, 192}) {
    for (int steps : {4, 8}) {
      const std::uint32_t tile_bytes = static_cast<std::uint32_t>(rows * steps / 4) * 128u;
      for (std::uint32_t tile = 0; tile + tile_bytes <= window; tile += 1024) {
        const std::uint64_t k_first = encode(k_major_operand(tile, rows, 0));
        const std::uint64_t mn_first = encode(mn_major_operand(tile, rows, 0));
        for (int step = 0; step < steps; ++step) {
          INFO("rows " << rows << " tile " << tile << " step " << step);
          REQUIRE(k_first + k_major_step_offset(rows, step) ==
                  encode(k_major_operand(tile, rows, step)));
          if (16 * step < rows) {
            REQUIRE(mn_first + mn_major_step_offset(step) ==
                    encode(mn_major_operand(tile, rows, step)));
          }
        }
      }
    }
  }
  // Past 256 KB the start address wraps in its field and the sum carries:
  // the offsets are for shared-memory addresses only.
  const std::uint32_t past = 0x3FFF0;
  CHECK(encode(k_major_operand(past, 128, 1)) !=
        encode(k_major_operand(past, 128, 0)) + k_major_step_offset(128, 1));
}

TEST_CASE("the fp32 accumulator of m64nNk16 covers the tile once, as the PTX ISA draws it") {
  // Figure "WGMMA .m64nNk16 register fragment layout for accumulator matrix
  // D": thread T0 holds d0, d1 at row 0, columns 0-1 and d2, d3 at row 8;
  // d4.. continue at column 8; T4 is row 1; warp 1 starts at row 16.
  CHECK(accumulator_position(0, 0) == MatrixPosition{0, 0});
  CHECK(accumulator_position(0, 1) == MatrixPosition{0, 1});
  CHECK(accumulator_position(0, 2) == MatrixPosition{8, 0});
  CHECK(accumulator_position(0, 4) == MatrixPosition{0, 8});
  CHECK(accumulator_position(5, 0) == MatrixPosition{1, 2});
  CHECK(accumulator_position(32, 3) == MatrixPosition{24, 1});
  CHECK(accumulator_position(127, 63) == MatrixPosition{63, 127});
  for (int n : {64, 128}) {
    std::set<std::pair<int, int>> seen;
    for (int thread = 0; thread < warpgroup_threads; ++thread) {
      for (int i = 0; i < n / 2; ++i) {
        const MatrixPosition at = accumulator_position(thread, i);
        CHECK((at.row >= 0 && at.row < 64 && at.col >= 0 && at.col < n));
        seen.insert({at.row, at.col});
      }
    }
    CHECK(seen.size() == static_cast<std::size_t>(64 * n));
  }
}

TEST_CASE("the A fragment from registers covers 64 x 16 once, mma.m16n8k16's A per warp") {
  // Figure "WGMMA .m64nNk16 register fragment layout for matrix A": a0, a1 at
  // row l/4, columns 2(l%4) + 0/1; a2, a3 eight rows down; a4..a7 eight
  // columns right.
  CHECK(a_fragment_position(0, 0, 0) == MatrixPosition{0, 0});
  CHECK(a_fragment_position(0, 0, 1) == MatrixPosition{0, 1});
  CHECK(a_fragment_position(0, 1, 0) == MatrixPosition{8, 0});
  CHECK(a_fragment_position(0, 2, 0) == MatrixPosition{0, 8});
  CHECK(a_fragment_position(7, 3, 1) == MatrixPosition{9, 15});
  CHECK(a_fragment_position(64, 0, 0) == MatrixPosition{32, 0});
  std::set<std::pair<int, int>> seen;
  for (int thread = 0; thread < warpgroup_threads; ++thread) {
    for (int reg = 0; reg < 4; ++reg) {
      for (int half = 0; half < 2; ++half) {
        const MatrixPosition at = a_fragment_position(thread, reg, half);
        seen.insert({at.row, at.col});
      }
    }
  }
  CHECK(seen.size() == 64u * 16u);
}

TEST_CASE("P's A operand comes from the same thread's S accumulators, no shuffle") {
  // K step s of O += P V reads P's columns 16 s..16 s + 15: each register half
  // must be the S element this thread computed at that row and column.
  for (int thread = 0; thread < warpgroup_threads; ++thread) {
    for (int step = 0; step < 8; ++step) {
      for (int reg = 0; reg < 4; ++reg) {
        for (int half = 0; half < 2; ++half) {
          const MatrixPosition wanted = a_fragment_position(thread, reg, half);
          const MatrixPosition source =
              accumulator_position(thread, p_source_index(step, reg, half));
          INFO("thread " << thread << " step " << step << " reg " << reg << " half " << half);
          REQUIRE(source == MatrixPosition{wanted.row, wanted.col + 16 * step});
        }
      }
    }
  }
}
