// The reference checked on its own, independently of its formulas: the
// forward against a double-precision host softmax attention, the backward
// against central finite differences of the host forward (loss = sum dO * O).

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "attention_case.hpp"

namespace cfr::kernels::testing {
namespace {

constexpr std::uint64_t seed = 20260501;

using Matrix = std::vector<double>;  // one head, [seq_len, head_dim] row-major

struct HostForward {
  Matrix o;
  std::vector<double> lse;
};

HostForward host_forward(const Matrix& q, const Matrix& k, const Matrix& v, int n, int d,
                         bool causal, double scale) {
  HostForward out{Matrix(q.size(), 0.0), std::vector<double>(n)};
  for (int i = 0; i < n; ++i) {
    const int keys = causal ? i + 1 : n;
    std::vector<double> s(keys);
    double max = -INFINITY;
    for (int j = 0; j < keys; ++j) {
      double dot = 0;
      for (int c = 0; c < d; ++c) dot += q[i * d + c] * k[j * d + c];
      s[j] = scale * dot;
      max = std::fmax(max, s[j]);
    }
    double sum = 0;
    for (int j = 0; j < keys; ++j) sum += std::exp(s[j] - max);
    for (int j = 0; j < keys; ++j) {
      const double p = std::exp(s[j] - max) / sum;
      for (int c = 0; c < d; ++c) out.o[i * d + c] += p * v[j * d + c];
    }
    out.lse[i] = max + std::log(sum);
  }
  return out;
}

double rel_l2(const std::vector<float>& got, const std::vector<double>& want) {
  double error = 0;
  double norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    error += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(error / norm);
}

Matrix widen(const std::vector<float>& values) {
  return Matrix(values.begin(), values.end());
}

// fp32 inputs, so the host sees exactly the values the device reads; one
// batch and one head keep the finite differences cheap.
AttentionShape small_shape(int seq_len, bool causal) {
  AttentionShape shape;
  shape.batch = 1;
  shape.heads = 1;
  shape.seq_len = seq_len;
  shape.head_dim = 32;
  shape.causal = causal;
  shape.dtype = DType::fp32;
  return shape;
}

TEST_CASE("reference_forward matches a double-precision host attention", "[reference]") {
  measure::CudaStream stream;
  for (int seq_len : {1, 40, 300}) {
    for (bool causal : {false, true}) {
      const AttentionShape shape = small_shape(seq_len, causal);
      INFO(describe(shape));
      const Inputs inputs(shape, seed, stream);
      const ForwardReference reference(shape, inputs, stream);
      const HostForward expected =
          host_forward(widen(to_host(inputs.q, stream)), widen(to_host(inputs.k, stream)),
                       widen(to_host(inputs.v, stream)), seq_len, shape.head_dim, causal,
                       1.0 / std::sqrt(static_cast<double>(shape.head_dim)));
      CHECK(rel_l2(to_host(reference.o, stream), expected.o) < 1e-5);
      CHECK(rel_l2(to_host(reference.lse, stream), expected.lse) < 1e-5);
    }
  }
}

// d(sum dO * O)/dx by central differences, x in {Q, K, V}; h = 1e-4 in
// double leaves an error near 1e-8, far below the fp32 reference's ~1e-6.
TEST_CASE("reference_backward matches finite differences of the forward", "[reference]") {
  measure::CudaStream stream;
  for (bool causal : {false, true}) {
    const AttentionShape shape = small_shape(7, causal);
    INFO(describe(shape));
    const int n = shape.seq_len;
    const int d = shape.head_dim;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const Inputs inputs(shape, seed + 1, stream);
    const BackwardReference reference(shape, inputs, stream);
    Matrix q = widen(to_host(inputs.q, stream));
    Matrix k = widen(to_host(inputs.k, stream));
    Matrix v = widen(to_host(inputs.v, stream));
    const Matrix d_o = widen(to_host(inputs.d_o, stream));

    const auto loss = [&] {
      const HostForward forward = host_forward(q, k, v, n, d, causal, scale);
      double sum = 0;
      for (std::size_t i = 0; i < d_o.size(); ++i) sum += d_o[i] * forward.o[i];
      return sum;
    };
    const auto gradient = [&](Matrix& x) {
      constexpr double h = 1e-4;
      std::vector<double> g(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double saved = x[i];
        x[i] = saved + h;
        const double up = loss();
        x[i] = saved - h;
        const double down = loss();
        x[i] = saved;
        g[i] = (up - down) / (2 * h);
      }
      return g;
    };
    CHECK(rel_l2(to_host(reference.d_q, stream), gradient(q)) < 1e-4);
    CHECK(rel_l2(to_host(reference.d_k, stream), gradient(k)) < 1e-4);
    CHECK(rel_l2(to_host(reference.d_v, stream), gradient(v)) < 1e-4);
  }
}

}  // namespace
}  // namespace cfr::kernels::testing
