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

The backward (reference_gradients): dO standard normal from the problem's seed
salted 'D', and dQ, dK, dV in fp32 from the same blocks of rows (P recomputed),
with as many keys as queries, GQA included (dK and dV summed over the rows of
every query head of a K/V head's group), as the tool's backward reference.
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


def _normal(torch, problem, seed, salt, shape, device):
    """Standard normal in the problem's dtype, from its seed salted as the tool
    salts its seeds ('Q', 'K', 'V', 'D')."""
    generator = torch.Generator(device=device)
    generator.manual_seed(problem_seed(seed, problem) ^ salt)
    return torch.randn(shape, generator=generator, device=device,
                       dtype=torch_dtype(torch, problem.dtype))


def make_inputs(torch, problem, seed, device):
    """Q, K and V of the problem, from its seed."""
    shapes = ((problem.batch, problem.heads, problem.seq_len, problem.head_dim),
              (problem.batch, problem.key_heads(), problem.keys(), problem.head_dim))
    return [_normal(torch, problem, seed, salt, shape, device)
            for salt, shape in ((0x51, shapes[0]), (0x4B, shapes[1]), (0x56, shapes[1]))]


def make_output_gradient(torch, problem, seed, device):
    """dO of the problem's backward, shaped as O: standard normal from its seed
    salted 'D'."""
    shape = (problem.batch, problem.heads, problem.seq_len, problem.head_dim)
    return _normal(torch, problem, seed, 0x44, shape, device)


def blocks(group_rows, keys, head_dim):
    """(K/V heads, rows) of one block: its fp32 scores (rows x keys a head) and
    its K/V heads' fp32 K and V each stay within REFERENCE_BLOCK_ELEMENTS, or
    one head of one row where a single one is larger."""
    if group_rows * keys <= REFERENCE_BLOCK_ELEMENTS:
        heads = min(REFERENCE_BLOCK_ELEMENTS // (group_rows * keys),
                    REFERENCE_BLOCK_ELEMENTS // (2 * keys * head_dim))
        return max(1, heads), group_rows
    return 1, max(1, REFERENCE_BLOCK_ELEMENTS // keys)


def reference_working_bytes(problem, backward=False):
    """The fp32 tensors of the reference's largest block: scores and
    probabilities (the backward's P and dP), the block's K and V, and its
    slice of O (the backward's Q, dO and O slices)."""
    groups = problem.batch * problem.key_heads()
    rows = (problem.heads // problem.key_heads()) * problem.seq_len
    heads, rows_per_block = blocks(rows, problem.keys(), problem.head_dim)
    heads = min(heads, groups)
    keys, d = problem.keys(), problem.head_dim
    slices = 3 if backward else 1
    return 4.0 * heads * (2 * rows_per_block * keys + 2 * keys * d + slices * rows_per_block * d)


def _probability_blocks(torch, qf, kf, vf, n_q, causal):
    """The blocks of `blocks` over groups of rows qf [G, R, d] (row r is query
    r mod Nq) and their keys and values kf, vf [G, Nk, d]: yields (g0, g1),
    (r0, r1), the groups' fp32 K and V, and P, the fp32 softmax of
    scale * Q K^T over those rows, bottom-right masked when causal."""
    groups, rows, d = qf.shape
    n_k = kf.shape[1]
    scale = 1.0 / math.sqrt(d)
    heads_per_block, rows_per_block = blocks(rows, n_k, d)
    columns = torch.arange(n_k, device=qf.device)
    for g0 in range(0, groups, heads_per_block):
        g1 = min(groups, g0 + heads_per_block)
        keys = kf[g0:g1].float()
        values = vf[g0:g1].float()
        for r0 in range(0, rows, rows_per_block):
            r1 = min(rows, r0 + rows_per_block)
            scores = torch.matmul(qf[g0:g1, r0:r1].float(), keys.transpose(1, 2)) * scale
            if causal:
                last_key = torch.arange(r0, r1, device=qf.device) % n_q + (n_k - n_q)
                scores.masked_fill_(columns[None, :] > last_key[:, None], float("-inf"))
            probabilities = torch.softmax(scores, dim=-1)
            del scores  # one block of scores at a time
            yield (g0, g1), (r0, r1), keys, values, probabilities
            del probabilities


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
    for (g0, g1), (r0, r1), _, values, p in _probability_blocks(torch, qf, kf, vf, n_q, causal):
        out[g0:g1, r0:r1] = torch.matmul(p, values)
        del p
    return out.reshape(batch, heads, n_q, d)


def reference_gradients(torch, q, k, v, d_out, causal):
    """fp32 dQ, dK, dV of softmax(scale * Q K^T, masked) V for the output
    gradient d_out, materialized per block of rows as reference_output is:
    P recomputed, O = P V, D = rowsum(dO * O), dS = P * (dO V^T - D),
    dQ = scale dS K, and dK += scale dS^T Q, dV += P^T dO over the blocks.
    Q and dO [B, H, N, d], K and V [B, Hkv, N, d] with Hkv dividing H: the
    rows of a K/V head's group (reference_output's) add to its dK and dV. As
    many keys as queries, as the tool's backward reference; the causal mask
    is then j <= i."""
    batch, heads, n, d = q.shape
    kv_heads = k.shape[1]
    if not (k.shape == v.shape == (batch, kv_heads, n, d) and d_out.shape == q.shape
            and heads % kv_heads == 0):
        raise ValueError("the backward reference takes as many keys as queries and K/V heads "
                         "dividing the query heads: Q, dO [B, H, N, d], K, V [B, Hkv, N, d], not "
                         f"{tuple(q.shape)}, {tuple(d_out.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    groups, rows = batch * kv_heads, (heads // kv_heads) * n
    qf, gf = (t.reshape(groups, rows, d) for t in (q, d_out))
    kf, vf = (t.reshape(groups, n, d) for t in (k, v))
    dq = torch.empty((groups, rows, d), dtype=torch.float32, device=q.device)
    dk = torch.zeros((groups, n, d), dtype=torch.float32, device=q.device)
    dv = torch.zeros((groups, n, d), dtype=torch.float32, device=q.device)
    scale = 1.0 / math.sqrt(d)
    for (g0, g1), (r0, r1), keys, values, p in _probability_blocks(torch, qf, kf, vf, n, causal):
        queries = qf[g0:g1, r0:r1].float()
        grad = gf[g0:g1, r0:r1].float()
        delta = (grad * torch.matmul(p, values)).sum(dim=-1, keepdim=True)
        ds = torch.matmul(grad, values.transpose(1, 2)).sub_(delta).mul_(p)
        dq[g0:g1, r0:r1] = torch.matmul(ds, keys) * scale
        dk[g0:g1] += torch.matmul(ds.transpose(1, 2), queries) * scale
        dv[g0:g1] += torch.matmul(p.transpose(1, 2), grad)
        del p, ds
    return (dq.reshape(batch, heads, n, d), dk.reshape(batch, kv_heads, n, d),
            dv.reshape(batch, kv_heads, n, d))


def checked_tensor(name, squared_error, squared_ref, max_abs_err, ref_max_abs, non_finite):
    """A checked tensor of the raw samples (docs/peers.md): kernels::CheckResult's
    errors over the finite elements, as compare_with_reference computes them."""
    ref_l2 = math.sqrt(squared_ref)
    error_l2 = math.sqrt(squared_error)
    return {"tensor": name, "rel_l2_err": error_l2 / ref_l2 if ref_l2 > 0 else error_l2,
            "max_abs_err": max_abs_err, "ref_max_abs": ref_max_abs,
            "all_finite": non_finite == 0}


def compare_with_reference(torch, out, reference, name="O"):
    """kernels::compare_with_reference for the tensor `name` (O, dQ, ...):
    errors over the finite outputs."""
    value = out.detach().reshape(-1).double()
    expected = reference.reshape(-1).double()
    finite = torch.isfinite(value)
    non_finite = int((~finite).sum().item())
    if non_finite:
        value, expected = value[finite], expected[finite]
    error = value - expected
    if error.numel() == 0:
        return checked_tensor(name, 0.0, 0.0, 0.0, 0.0, non_finite)
    return checked_tensor(
        name, float((error * error).sum().item()), float((expected * expected).sum().item()),
        float(error.abs().max().item()), float(expected.abs().max().item()), non_finite)
