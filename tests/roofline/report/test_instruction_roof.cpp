#include <catch2/catch.hpp>

#include "roofline/report/ceilings_report.hpp"
#include "roofline/report/instruction_roof.hpp"
#include "roofline/report/row_model.hpp"
#include "tests/roofline/profiled_row.hpp"

// Each instruction's roof (docs/model.md §8.3): the ceilings figure a
// kernel's instruction maps to, the roof at it, and the row figures; the
// peaks are tests/roofline/profiled_row.hpp's round H200-like numbers.

using namespace cfr;

TEST_CASE("an instruction's ceilings figure, by dtype") {
  CHECK(*instruction_figure(Instruction::mma_sync, DType::bf16) == "bf16_tensor_mma");
  CHECK(*instruction_figure(Instruction::wmma, DType::fp16) == "fp16_tensor_mma");  // HMMA too
  CHECK(*instruction_figure(Instruction::wgmma, DType::fp16) == "fp16_tensor_wgmma");
  CHECK(*instruction_figure(Instruction::ffma, DType::fp16) == "fp32_simt_fma");
  CHECK(*instruction_figure(Instruction::library_gemm, DType::fp16) == "fp16_tensor_cublas");
  CHECK_FALSE(instruction_figure(Instruction::library_gemm, DType::fp32));  // no sgemm figure
  CHECK_FALSE(instruction_figure(Instruction::unspecified, DType::fp16));
  // Every built-in kernel names its instruction.
  for (const KernelDescription& kernel : kernel_catalog) {
    INFO(kernel.name);
    CHECK(kernel.instruction != Instruction::unspecified);
  }
  CHECK(fa2_mma_kernel.instruction == Instruction::mma_sync);
  CHECK(fa1_scalar_kernel.instruction == Instruction::ffma);
}

TEST_CASE("the roof at the instruction's peak, and a row judged against it") {
  CeilingRecord ceiling = test::h200_profile_ceiling();
  ceiling.instruction_TFLOPs = test::h200_instruction_roofs();
  // Compute-bound: the flat 650; memory-bound at AI 100 over 4800 GB/s: 480.
  CHECK(instruction_roof(Instruction::mma_sync, DType::fp16, ceiling, 1000, 4800)->TFLOPs == 650);
  CHECK(instruction_roof(Instruction::mma_sync, DType::fp16, ceiling, 100, 4800)->TFLOPs == 480);
  CHECK_FALSE(instruction_roof(Instruction::mma_sync, DType::fp16, test::h200_profile_ceiling(),
                               1000, 4800));  // no figures: a datasheet ceiling

  const AttentionProblem problem{1, 16, 8192, 128, false, DType::fp16};
  const ResultRow row = model_row(fa2_mma_kernel, problem, ceiling, FlopConvention::exact,
                                  test::h200_cc, test::h200_l2_inputs());
  REQUIRE(row.model->instruction_roof);
  CHECK(row.model->instruction_roof->figure == "fp16_tensor_mma");
  CHECK(row.model->instruction_roof->TFLOPs == 650);  // AI in the thousands
  // 549.76 GFLOP in 1.52 ms = 361.7 TFLOP/s: 36.6 % of the datasheet's 989.4, 55.6 % of mma.sync's.
  const Achieved achieved = achieved_figures(*row.model, 1.52, ceiling);
  CHECK(achieved.fraction_of_roof == Approx(361.68 / 989.4).epsilon(1e-3));
  CHECK(*achieved.fraction_of_instruction_roof == Approx(361.68 / 650).epsilon(1e-3));
}

TEST_CASE("a ceilings file's compute figures become the instruction roofs") {
  CeilingsReport measured;
  measured.device.name = "NVIDIA H200";
  const auto figure = [](std::string name, std::string unit, double value,
                         std::optional<ComputeUnit> unit_of) {
    CeilingFigure f;
    f.figure = std::move(name);
    f.unit = std::move(unit);
    f.value = value;
    f.compute_unit = unit_of;
    return f;
  };
  measured.figures = {figure("dram_bandwidth", "GB/s", 3935, std::nullopt),
                      figure("shared_memory_bandwidth", "GB/s", 33000, std::nullopt),
                      figure("fp16_tensor_mma", "TFLOP/s", 650, ComputeUnit::fp16_tensor),
                      figure("fp16_tensor_wgmma", "TFLOP/s", 900, ComputeUnit::fp16_tensor)};
  const CeilingRecord ceiling =
      measured_ceiling_record(measured, test::h200_profile_ceiling(), "ceilings.json");
  CHECK(ceiling.instruction_TFLOPs.size() == 2);
  CHECK(ceiling.instruction_TFLOPs.at("fp16_tensor_wgmma") == 900);
  CHECK(*ceiling.shared_memory_GBps == 33000);
  CHECK(*ceiling.peak(ComputeUnit::fp16_tensor) == 900);  // the unit's best method
}
