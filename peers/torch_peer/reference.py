"""Inputs and the checking reference for one attention problem.

Inputs: Q, K, V of shape [B, H, N, d] in the problem's dtype, standard normal
(the tool's checker draws normal inputs too), from a generator seeded per
problem with the tool's problem_seed (kernels/bench/attention_bench.cpp), so a
problem's inputs are the same for every backend and every run. They are not
the tool's exact numbers: its generator is a device hash, torch's is Philox.

Reference: materialized softmax attention in fp32 on the same (rounded) inputs,
S = scale * Q K^T with TF32 off, the causal mask j <= i, softmax, O = P V, in
blocks of heads or rows so any N fits. The comparison (as
kernels/attention_check.cu makes it) sums over the finite elements of the
output in float64; `import-samples` judges what it found.
"""

import math

# Elements of one block of fp32 scores: 512 MiB.
REFERENCE_BLOCK_ELEMENTS = 1 << 27
_DTYPE_INDEX = {"fp16": 0, "bf16": 1, "fp32": 2}  # the order of the tool's DType enum
_UINT64 = (1 << 64) - 1


def problem_seed(seed, problem):
    """FNV-style mix of the seed and the problem, wrapping at 64 bits."""
    h = seed & _UINT64
    for x in (problem.batch, problem.heads, problem.seq_len, problem.head_dim,
              int(problem.causal), _DTYPE_INDEX[problem.dtype]):
        h = ((h ^ (x & _UINT64)) * 0x100000001B3) & _UINT64
    return h


def torch_dtype(torch, dtype):
    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]


def make_inputs(torch, problem, seed, device):
    shape = (problem.batch, problem.heads, problem.seq_len, problem.head_dim)
    base = problem_seed(seed, problem)
    tensors = []
    for salt in (0x51, 0x4B, 0x56):  # 'Q', 'K', 'V', as the tool salts its seeds
        generator = torch.Generator(device=device)
        generator.manual_seed(base ^ salt)
        tensors.append(torch.randn(shape, generator=generator, device=device,
                                   dtype=torch_dtype(torch, problem.dtype)))
    return tensors


def reference_output(torch, q, k, v, causal):
    """fp32 O of softmax(scale * Q K^T, masked) V, shape [B, H, N, d]."""
    batch, heads, n, d = q.shape
    groups = batch * heads
    qf, kf, vf = (t.reshape(groups, n, d) for t in (q, k, v))
    out = torch.empty((groups, n, d), dtype=torch.float32, device=q.device)
    scale = 1.0 / math.sqrt(d)
    if n * n <= REFERENCE_BLOCK_ELEMENTS:
        heads_per_block, rows_per_block = max(1, REFERENCE_BLOCK_ELEMENTS // (n * n)), n
    else:
        heads_per_block, rows_per_block = 1, max(1, REFERENCE_BLOCK_ELEMENTS // n)
    columns = torch.arange(n, device=q.device)
    for g0 in range(0, groups, heads_per_block):
        g1 = min(groups, g0 + heads_per_block)
        keys = kf[g0:g1].float()
        values = vf[g0:g1].float()
        for r0 in range(0, n, rows_per_block):
            r1 = min(n, r0 + rows_per_block)
            scores = torch.matmul(qf[g0:g1, r0:r1].float(), keys.transpose(1, 2)) * scale
            if causal:
                rows = torch.arange(r0, r1, device=q.device)
                scores.masked_fill_(columns[None, :] > rows[:, None], float("-inf"))
            out[g0:g1, r0:r1] = torch.matmul(torch.softmax(scores, dim=-1), values)
            del scores
    return out.reshape(batch, heads, n, d)


def checked_tensor(name, squared_error, squared_ref, max_abs_err, ref_max_abs, non_finite):
    """A checked tensor of the raw samples (docs/peers.md): kernels::CheckResult's
    errors over the finite elements, as compare_with_reference computes them."""
    ref_l2 = math.sqrt(squared_ref)
    error_l2 = math.sqrt(squared_error)
    return {"tensor": name, "rel_l2_err": error_l2 / ref_l2 if ref_l2 > 0 else error_l2,
            "max_abs_err": max_abs_err, "ref_max_abs": ref_max_abs,
            "all_finite": non_finite == 0}


def compare_with_reference(torch, out, reference):
    """kernels::compare_with_reference for O: errors over the finite outputs."""
    value = out.detach().reshape(-1).double()
    expected = reference.reshape(-1).double()
    finite = torch.isfinite(value)
    non_finite = int((~finite).sum().item())
    if non_finite:
        value, expected = value[finite], expected[finite]
    error = value - expected
    if error.numel() == 0:
        return checked_tensor("O", 0.0, 0.0, 0.0, 0.0, non_finite)
    return checked_tensor(
        "O", float((error * error).sum().item()), float((expected * expected).sum().item()),
        float(error.abs().max().item()), float(expected.abs().max().item()), non_finite)
