#pragma once

// Each instruction's roof (docs/model.md §8.3): the `ceilings` figure that
// measures the instruction a kernel's matmuls issue, and the roofline with
// that figure as its peak. A row is judged against it as well as against its
// unit's peak (the datasheet's, or the best measured method's).

#include <optional>
#include <string>

#include "roofline/core/dtype.hpp"
#include "roofline/model/kernel_description.hpp"
#include "roofline/report/report.hpp"

namespace cfr {

// The `ceilings` figure of an instruction at a dtype: mma.sync and WMMA
// "<dtype>_tensor_mma", wgmma "<dtype>_tensor_wgmma", FFMA "fp32_simt_fma"
// (whatever the I/O dtype: the SIMT kernels compute in fp32), a library GEMM
// "<dtype>_tensor_cublas". Empty for an unspecified instruction and for a
// dtype the instruction has no figure for (cuBLAS at fp32, a tensor
// instruction at fp32).
std::optional<std::string> instruction_figure(Instruction instruction, DType dtype);

// min(the ceiling's figure for the instruction, bandwidth x AI): the
// roofline at the instruction's peak. Empty when the ceiling has no such
// figure.
std::optional<InstructionRoof> instruction_roof(Instruction instruction, DType dtype,
                                                const CeilingRecord& ceiling, double ai,
                                                double bandwidth_GBps);

}  // namespace cfr
