// What Nsight Compute's NVTX filter and rename do with the ranges `sweep
// --profile` would push (tests/gpu/device_run.sh ncuprobe runs it under ncu
// with several filters): one kernel outside any range, then two "rows", each
// a push of "cfr_profile" with a nested push of "row_N" around one or two
// launches, and a launch between the rows that must not be profiled.

#include <cstdio>

#include <nvtx3/nvToolsExt.h>

__global__ void outside_kernel(float* data) {
  data[threadIdx.x] += 1.f;
}
__global__ void row_kernel_a(float* data) {
  data[threadIdx.x] *= 2.f;
}
__global__ void row_kernel_b(float* data) {
  data[threadIdx.x] -= 3.f;
}

int main() {
  float* data = nullptr;
  if (cudaMalloc(&data, 1024 * sizeof(float)) != cudaSuccess) return 1;
  outside_kernel<<<1, 256>>>(data);
  for (int row : {3, 7}) {
    char name[32];
    std::snprintf(name, sizeof name, "row_%d", row);
    nvtxRangePushA("cfr_profile");
    nvtxRangePushA(name);
    row_kernel_a<<<row, 256>>>(data);
    if (row == 7) row_kernel_b<<<2, 128>>>(data);
    nvtxRangePop();
    nvtxRangePop();
    outside_kernel<<<1, 256>>>(data);
  }
  const cudaError_t status = cudaDeviceSynchronize();
  std::printf("probe done: %s\n", cudaGetErrorString(status));
  return status == cudaSuccess ? 0 : 1;
}
