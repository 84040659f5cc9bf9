#include "roofline/report/instruction_roof.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace cfr {

std::optional<std::string> instruction_figure(Instruction instruction, DType dtype) {
  const bool half = dtype == DType::fp16 || dtype == DType::bf16;
  switch (instruction) {
    case Instruction::mma_sync:
    case Instruction::wmma:
      if (half) return fmt::format("{}_tensor_mma", to_string(dtype));
      return std::nullopt;
    case Instruction::wgmma:
      if (half) return fmt::format("{}_tensor_wgmma", to_string(dtype));
      return std::nullopt;
    case Instruction::library_gemm:
      if (half) return fmt::format("{}_tensor_cublas", to_string(dtype));
      return std::nullopt;
    case Instruction::ffma: return std::string("fp32_simt_fma");
    case Instruction::unspecified: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<InstructionRoof> instruction_roof(Instruction instruction, DType dtype,
                                                const CeilingRecord& ceiling, double ai,
                                                double bandwidth_GBps) {
  const std::optional<std::string> figure = instruction_figure(instruction, dtype);
  if (!figure) return std::nullopt;
  const auto peak = ceiling.instruction_TFLOPs.find(*figure);
  if (peak == ceiling.instruction_TFLOPs.end()) return std::nullopt;
  // GB/s x FLOP/B = 1e9 FLOP/s; TFLOP/s is 1e12.
  return InstructionRoof{*figure, std::min(peak->second, bandwidth_GBps * ai / 1e3)};
}

}  // namespace cfr
