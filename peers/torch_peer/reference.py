"""Inputs and the checking reference for one attention problem.

Inputs: Q of shape [B, H, Nq, d], K and V of shape [B, Hkv, Nk, d] (Nk = Nq and
Hkv = H for square self-attention) in the problem's dtype, standard normal (the
tool's checker draws normal inputs too), from a generator seeded per problem
with the tool's problem_seed (kernels/bench/attention_bench.cpp), so a
problem's inputs are the same for every backend and every run. They are not
the tool's exact numbers: its generator is a device hash, torch's is Philox.

Reference: materialized softmax attention in fp32 on the same (rounded) inputs,
S = scale * Q K^T with TF32 off, softmax, O = P V. Under GQA the G = H/Hkv query
heads of a K/V head share its K and V (query head h reads K/V head h // G, as
torch's enable_gqa does). The causal mask is bottom-right aligned (docs/model.md
section 7): query i sees keys j <= i + Nk - Nq, which is j <= i when Nq = Nk;
with Nq > Nk the first queries would see no key, and such a problem is refused.
It runs in blocks of K/V heads or rows so any length fits. The comparison (as
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
    """Q, K and V of the problem, from its seed."""
    shapes = ((problem.batch, problem.heads, problem.seq_len, problem.head_dim),
              (problem.batch, problem.key_heads(), problem.keys(), problem.head_dim))
    base = problem_seed(seed, problem)
    tensors = []
    for salt, shape in ((0x51, shapes[0]), (0x4B, shapes[1]), (0x56, shapes[1])):
        # 'Q', 'K', 'V', as the tool salts its seeds
        generator = torch.Generator(device=device)
        generator.manual_seed(base ^ salt)
        tensors.append(torch.randn(shape, generator=generator, device=device,
                                   dtype=torch_dtype(torch, problem.dtype)))
    return tensors


def blocks(group_rows, keys, head_dim):
    """(K/V heads, rows) of one block: its fp32 scores (rows x keys a head) and
    its K/V heads' fp32 K and V each stay within REFERENCE_BLOCK_ELEMENTS, or
    one head of one row where a single one is larger."""
    if group_rows * keys <= REFERENCE_BLOCK_ELEMENTS:
        heads = min(REFERENCE_BLOCK_ELEMENTS // (group_rows * keys),
                    REFERENCE_BLOCK_ELEMENTS // (2 * keys * head_dim))
        return max(1, heads), group_rows
    return 1, max(1, REFERENCE_BLOCK_ELEMENTS // keys)


def reference_working_bytes(problem):
    """The fp32 tensors of the reference's largest block: scores and
    probabilities, the block's K and V, and its slice of O."""
    groups = problem.batch * problem.key_heads()
    rows = (problem.heads // problem.key_heads()) * problem.seq_len
    heads, rows_per_block = blocks(rows, problem.keys(), problem.head_dim)
    heads = min(heads, groups)
    keys, d = problem.keys(), problem.head_dim
    return 4.0 * heads * (2 * rows_per_block * keys + 2 * keys * d + rows_per_block * d)


def reference_output(torch, q, k, v, causal):
    """fp32 O of softmax(scale * Q K^T, masked) V, shape [B, H, Nq, d], for
    Q [B, H, Nq, d] and K, V [B, Hkv, Nk, d] with Hkv dividing H."""
    batch, heads, n_q, d = q.shape
    kv_heads, n_k = k.shape[1], k.shape[2]
    if heads % kv_heads != 0:
        raise ValueError(f"{heads} query heads are not a multiple of {kv_heads} K/V heads")
    if causal and n_q > n_k:
        raise ValueError(f"a causal mask over {n_k} keys leaves {n_q - n_k} of {n_q} queries "
                         "no key: refused")
    # A K/V head's G query heads, one after another, are the rows of one group:
    # row r is query r mod Nq of query head r // Nq of the group.
    groups, rows = batch * kv_heads, (heads // kv_heads) * n_q
    qf = q.reshape(groups, rows, d)
    kf, vf = (t.reshape(groups, n_k, d) for t in (k, v))
    out = torch.empty((groups, rows, d), dtype=torch.float32, device=q.device)
    scale = 1.0 / math.sqrt(d)
    heads_per_block, rows_per_block = blocks(rows, n_k, d)
    columns = torch.arange(n_k, device=q.device)
    for g0 in range(0, groups, heads_per_block):
        g1 = min(groups, g0 + heads_per_block)
        keys = kf[g0:g1].float()
        values = vf[g0:g1].float()
        for r0 in range(0, rows, rows_per_block):
            r1 = min(rows, r0 + rows_per_block)
            scores = torch.matmul(qf[g0:g1, r0:r1].float(), keys.transpose(1, 2)) * scale
            if causal:
                last_key = torch.arange(r0, r1, device=q.device) % n_q + (n_k - n_q)
                scores.masked_fill_(columns[None, :] > last_key[:, None], float("-inf"))
            out[g0:g1, r0:r1] = torch.matmul(torch.softmax(scores, dim=-1), values)
            del scores
    return out.reshape(batch, heads, n_q, d)


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
