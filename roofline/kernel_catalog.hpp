#pragma once

// The description of every attention kernel the tool knows. The CUDA
// launchers instantiate their templates from these constants, and the traffic
// model and the report read the same values, so a tile size lives in one place.

#include <array>
#include <optional>
#include <span>
#include <string_view>

#include "compute_unit.hpp"
#include "dtype.hpp"

namespace cfr {

enum class Direction { forward, backward };

constexpr std::string_view to_string(Direction direction) {
  return direction == Direction::forward ? "forward" : "backward";
}

// Which byte model describes the kernel's HBM traffic (see docs/model.md).
enum class TrafficModelKind { compulsory, materialized, kv_reload, fa1_backward };

constexpr std::string_view to_string(TrafficModelKind kind) {
  switch (kind) {
    case TrafficModelKind::compulsory: return "compulsory";
    case TrafficModelKind::materialized: return "materialized";
    case TrafficModelKind::kv_reload: return "kv_reload";
    case TrafficModelKind::fa1_backward: return "fa1_backward";
  }
  return "?";
}

std::optional<TrafficModelKind> parse_traffic_model(std::string_view text);

// Br rows of Q per CTA, Bc rows of K/V per inner step. {0, 0} means the kernel
// is not tiled (the materialized path runs library GEMMs).
struct TileShape {
  int br = 0;
  int bc = 0;
  constexpr bool tiled() const { return br > 0 && bc > 0; }
  friend constexpr bool operator==(TileShape, TileShape) = default;
};

// A tile applies to every supported head dim up to and including max_head_dim.
struct TileRule {
  int max_head_dim;
  TileShape tile;
};

// How a kernel's arithmetic maps to a compute unit.
enum class ArithmeticPath {
  fp32_simt,         // fp32 FMAs on CUDA cores whatever the I/O dtype
  tensor_for_dtype,  // fp16 -> fp16 tensor, bf16 -> bf16 tensor (fp32 accumulate)
  library_gemm,      // cuBLAS: tensor cores for fp16/bf16, fp32 SIMT for fp32
};

struct DTypeSet {
  bool fp16 = false;
  bool bf16 = false;
  bool fp32 = false;
  constexpr bool contains(DType dtype) const {
    return dtype == DType::fp16 ? fp16 : dtype == DType::bf16 ? bf16 : fp32;
  }
};

inline constexpr std::array<int, 3> supported_head_dims{32, 64, 128};

struct KernelDescription {
  std::string_view name;
  Direction direction;
  DTypeSet dtypes;
  std::array<TileRule, 2> tiles;  // ordered by max_head_dim; unused rules are {0, {}}
  ArithmeticPath arithmetic;
  TrafficModelKind traffic;
  std::string_view summary;

  constexpr bool supports_head_dim(int head_dim) const {
    for (int supported : supported_head_dims) {
      if (supported == head_dim) return true;
    }
    return false;
  }

  constexpr TileShape tile_for(int head_dim) const {
    for (const TileRule& rule : tiles) {
      if (rule.max_head_dim > 0 && head_dim <= rule.max_head_dim) return rule.tile;
    }
    return {};
  }

  constexpr ComputeUnit compute_unit_for(DType dtype) const {
    if (arithmetic == ArithmeticPath::fp32_simt || dtype == DType::fp32) {
      return ComputeUnit::fp32_simt;
    }
    return dtype == DType::bf16 ? ComputeUnit::bf16_tensor : ComputeUnit::fp16_tensor;
  }
};

inline constexpr KernelDescription naive_kernel{
    .name = "naive",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = true},
    .tiles = {},
    .arithmetic = ArithmeticPath::library_gemm,
    .traffic = TrafficModelKind::materialized,
    .summary = "S = QK^T and O = PV through cuBLAS, softmax kernel; S and P in HBM",
};

// The seed's tiles. Its fp32 shared-memory tiles (Q, K, V and P) take about
// 70 KB at 64x64, d = 64, and 55 KB at 32x32, d = 128: above the 48 KB
// default, so the launcher opts in to more (every sm_75+ part allows 64 KB or
// more per block); a 64x64 tile at d = 128 would need about 140 KB.
inline constexpr KernelDescription fa1_scalar_kernel{
    .name = "fa1_scalar",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = true},
    .tiles = {{{64, {64, 64}}, {128, {32, 32}}}},
    .arithmetic = ArithmeticPath::fp32_simt,
    .traffic = TrafficModelKind::kv_reload,
    .summary = "FA1 structure, one CTA per Q block over all K/V blocks, fp32 SIMT",
};

inline constexpr KernelDescription fa1_wmma_kernel{
    .name = "fa1_wmma",
    .direction = Direction::forward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = false},
    .tiles = {{{64, {64, 32}}, {128, {32, 32}}}},
    .arithmetic = ArithmeticPath::tensor_for_dtype,
    .traffic = TrafficModelKind::kv_reload,
    .summary = "FA1 structure on tensor cores, WMMA m16n16k16, fp32 accumulate",
};

inline constexpr KernelDescription fa1_backward_kernel{
    .name = "fa1_bwd",
    .direction = Direction::backward,
    .dtypes = {.fp16 = true, .bf16 = true, .fp32 = true},
    .tiles = {{{64, {64, 64}}, {128, {32, 32}}}},
    .arithmetic = ArithmeticPath::fp32_simt,
    .traffic = TrafficModelKind::fa1_backward,
    .summary = "FA1 backward: D = rowsum(dO*O), dK/dV per K/V block, dQ per Q block, fp32 SIMT",
};

inline constexpr std::array<KernelDescription, 4> kernel_catalog{
    naive_kernel, fa1_scalar_kernel, fa1_wmma_kernel, fa1_backward_kernel};

const KernelDescription* find_kernel(std::string_view name);

}  // namespace cfr
