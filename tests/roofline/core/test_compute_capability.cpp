// Compute capabilities and CUDA build targets, and which machine code the
// driver runs on which device (CUDA C++ Programming Guide, "Binary
// Compatibility": same major, minor no newer; 'a' targets only their own).

#include <catch2/catch.hpp>

#include "roofline/core/compute_capability.hpp"

using namespace cfr;

TEST_CASE("compute capabilities parse from the device's and the GPU table's \"major.minor\"") {
  CHECK(parse_compute_capability("8.0") == ComputeCapability{8, 0});
  CHECK(parse_compute_capability("12.0") == ComputeCapability{12, 0});
  CHECK(parse_compute_capability("9.0")->number() == 90);
  CHECK(to_string(ComputeCapability{8, 6}) == "8.6");
  for (const char* bad : {"", "8", "80", "8.", ".0", "8.x", "8.10", "0.5", "-8.0", "8.0 "}) {
    INFO(bad);
    CHECK_FALSE(parse_compute_capability(bad));
  }
  CHECK(ComputeCapability{8, 6} < ComputeCapability{9, 0});
  CHECK(ComputeCapability{10, 0} > ComputeCapability{9, 0});
}

TEST_CASE("gpu_archs entries parse with their 'a' or 'f' suffix") {
  const auto plain = parse_cuda_arch("86");
  REQUIRE(plain);
  CHECK(plain->cc == ComputeCapability{8, 6});
  CHECK(plain->suffix == 0);
  CHECK(parse_cuda_arch("90a")->suffix == 'a');
  CHECK(parse_cuda_arch("100f")->cc == ComputeCapability{10, 0});
  for (const char* bad : {"", "a", "9", "sm_80", "80b", "8.0"}) {
    INFO(bad);
    CHECK_FALSE(parse_cuda_arch(bad));
  }
}

TEST_CASE("machine code runs on its own major version at its minor or newer") {
  const CudaArch sm80{{8, 0}};
  CHECK(runs_on(sm80, {8, 0}));
  CHECK(runs_on(sm80, {8, 9}));
  CHECK_FALSE(runs_on(sm80, {9, 0}));  // no PTX embedded: nothing to JIT for a newer major
  CHECK_FALSE(runs_on(CudaArch{{8, 6}}, {8, 0}));
  const CudaArch sm90a{{9, 0}, 'a'};
  CHECK(runs_on(sm90a, {9, 0}));
  const CudaArch sm100a{{10, 0}, 'a'};
  CHECK_FALSE(runs_on(sm100a, {10, 3}));  // arch-specific: its own compute capability only
  CHECK(runs_on(CudaArch{{10, 0}, 'f'}, {10, 3}));
}
