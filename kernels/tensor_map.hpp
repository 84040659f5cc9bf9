#pragma once

// Tensor maps for the bulk tensor copy engine (TMA), encoded on the host by
// the driver's cuTensorMapEncodeTiled, reached through the runtime's
// cudaGetDriverEntryPointByVersion so the tool does not link libcuda. A
// failed encode is a cudaError_t with the driver's reason in the launch's
// failure message, never a launch with an unusable map.

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace cfr::kernels {

// The driver's cuTensorMapEncodeTiled (the CUDA 12.0 signature); null when
// the driver lacks it.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  return encoder;
}

// What one 3-D map of 16-bit elements describes: `planes` matrices (a
// [batch, heads] index) of `rows` rows of `columns` contiguous elements, read
// in boxes of box_rows x box_columns, 128-byte swizzled in shared memory
// (box_columns x 2 bytes must be 128). Rows past `rows` read as zeros.
struct RowTensor {
  const void* base = nullptr;
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  int columns = 0;
  int rows = 0;
  std::int64_t planes = 0;
  int box_columns = 0;
  int box_rows = 0;
};

inline cudaError_t encode_row_tensor(CUtensorMap& map, const RowTensor& tensor,
                                     std::string* failure_message) {
  const auto fail = [&](const std::string& why) {
    if (failure_message != nullptr) *failure_message = why;
    return cudaErrorInvalidValue;
  };
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return fail("the driver has no cuTensorMapEncodeTiled");
  constexpr cuuint64_t element_bytes = 2;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(tensor.columns),
                              static_cast<cuuint64_t>(tensor.rows),
                              static_cast<cuuint64_t>(tensor.planes)};
  // Byte strides of dims 1 and 2 (dim 0 is contiguous).
  const cuuint64_t strides[2] = {dims[0] * element_bytes, dims[0] * dims[1] * element_bytes};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(tensor.box_columns),
                             static_cast<cuuint32_t>(tensor.box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult result =
      encode(&map, tensor.type, 3, const_cast<void*>(tensor.base), dims, strides, box,
             element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    return fail("cuTensorMapEncodeTiled failed with CUresult " +
                std::to_string(static_cast<int>(result)));
  }
  return cudaSuccess;
}

}  // namespace cfr::kernels
