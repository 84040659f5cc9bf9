"""The model half of a report row and the achieved figures, computed as the tool
computes them: roofline/model/flop_model.cpp (FLOPs), roofline/model/traffic_model.cpp (the
`compulsory` byte model, forward), roofline/model/roofline_model.cpp (the roofline)
and roofline/report/row_model.cpp (model_row, achieved_from). The operations run in the
C++ order, so `audit` recomputes the same doubles.
"""

COMPUTE_UNITS = ("fp32_simt", "fp16_simt", "fp16_tensor", "bf16_tensor")
FP32_BYTES = 4.0
BACKWARD_TO_FORWARD_MATMULS = 2.5
SOFTMAX_FLOPS_PER_PAIR = 5.0
FLOP_CONVENTIONS = ("exact", "half")


def element_bytes(dtype):
    return 4 if dtype == "fp32" else 2


def compute_unit_for(dtype, arithmetic):
    """KernelDescription::compute_unit_for. arithmetic: 'tensor_for_dtype' (fp16 and
    bf16 on their tensor unit, fp32 accumulate) or 'fp32_simt' (fp32 FMAs whatever
    the I/O dtype). fp32 I/O is always judged against fp32_simt."""
    if arithmetic == "fp32_simt" or dtype == "fp32":
        return "fp32_simt"
    return "bf16_tensor" if dtype == "bf16" else "fp16_tensor"


def causal_pairs(seq_len):
    return seq_len * (seq_len + 1) / 2


def attention_flops(problem, convention, direction="forward"):
    """Matmul FLOPs, 4*B*H*N^2*d dense forward; `exact` counts unmasked pairs,
    `half` is dense / 2 when causal."""
    heads = float(problem.heads_total())
    n = float(problem.seq_len)
    d = float(problem.head_dim)
    scale = BACKWARD_TO_FORWARD_MATMULS if direction == "backward" else 1.0
    dense_pairs = n * n
    exact_pairs = causal_pairs(n) if problem.causal else dense_pairs
    half_pairs = dense_pairs / 2 if problem.causal else dense_pairs
    flops_per_pair = 4 * d * scale
    counted_pairs = exact_pairs if convention == "exact" else half_pairs
    return {
        "dense": heads * dense_pairs * flops_per_pair,
        "exact": heads * exact_pairs * flops_per_pair,
        "half": heads * half_pairs * flops_per_pair,
        "softmax": heads * counted_pairs * SOFTMAX_FLOPS_PER_PAIR,
        "convention": convention,
    }


def counted_flops(flops):
    return flops["exact"] if flops["convention"] == "exact" else flops["half"]


def compulsory_forward_traffic(problem):
    """The `compulsory` model of a forward kernel: Q, K, V read once and O written
    once, per head, in the I/O dtype. No LSE: the model has none, and audit
    recomputes the breakdown from the model's name."""
    if min(problem.batch, problem.heads, problem.seq_len, problem.head_dim) <= 0:
        raise ValueError("attention problem dimensions must be positive")
    n = float(problem.seq_len)
    row = float(problem.head_dim * element_bytes(problem.dtype))
    matrix = n * row
    heads = float(problem.heads_total())
    breakdown = {}
    total = 0.0
    for tensor in ("Q", "K", "V", "O"):
        breakdown[tensor] = matrix * heads
        total += matrix * heads
    return {
        "model": "compulsory",
        "bytes": total,
        "breakdown": breakdown,
        "compulsory_bytes": heads * (4 * matrix),
    }


def analyze_roofline(flops, bytes_, peak_TFLOPs, bandwidth_GBps):
    """LLM-Viewer's roofline_analyze in our units; flops and bytes > 0."""
    peak = peak_TFLOPs * 1e12
    bandwidth = bandwidth_GBps * 1e9
    ai = flops / bytes_
    ridge = peak / bandwidth
    compute_time_ms = flops / peak * 1e3
    memory_time_ms = bytes_ / bandwidth * 1e3
    return {
        "ai": ai,
        "ridge": ridge,
        "ridge_distance": ridge / ai,
        "regime": "memory-bound" if ai < ridge else "compute-bound",
        "roof_TFLOPs": min(peak, bandwidth * ai) / 1e12,
        "roof_time_ms": max(compute_time_ms, memory_time_ms),
    }


def model_row(kernel, problem, compute_unit, ceiling, convention):
    """A forward row of an untiled kernel under the `compulsory` byte model, as
    model_row writes it: configuration, FLOPs, traffic, AI, and the roofline
    against `ceiling` (status skipped when it has no peak for the unit)."""
    row = {
        "kernel": kernel,
        "direction": "forward",
        "dtype": problem.dtype,
        "batch": problem.batch,
        "heads": problem.heads,
        "seq_len": problem.seq_len,
        "head_dim": problem.head_dim,
        "causal": problem.causal,
        "tile": None,
        "compute_unit": compute_unit,
        "status": "ok",
        "reason": "",
    }
    flops = attention_flops(problem, convention)
    traffic = compulsory_forward_traffic(problem)
    row["flops"] = flops
    row["traffic"] = traffic
    row["ai"] = counted_flops(flops) / traffic["bytes"]
    for key in ("ridge", "ridge_distance", "regime", "roof_TFLOPs", "roof_time_ms"):
        row[key] = None
    peak = ceiling["peak_TFLOPs"].get(compute_unit)
    if peak is None:
        row["status"] = "skipped"
        row["reason"] = f"ceiling {ceiling['gpu']} has no {compute_unit} peak"
        return row
    point = analyze_roofline(counted_flops(flops), traffic["bytes"], peak,
                             ceiling["bandwidth_GBps"])
    for key in ("ridge", "ridge_distance", "regime", "roof_TFLOPs", "roof_time_ms"):
        row[key] = point[key]
    return row


def achieved_from(row, ceiling):
    """Counted FLOPs and model bytes over the median time, and their fractions."""
    achieved = {"TFLOPs": 0.0, "bandwidth_GBps": 0.0, "bandwidth_utilization": 0.0,
                "fraction_of_roof": 0.0}
    timing = row.get("timing")
    if not timing or timing["median_ms"] <= 0:
        return achieved
    seconds = timing["median_ms"] * 1e-3
    achieved["TFLOPs"] = counted_flops(row["flops"]) / seconds / 1e12
    achieved["bandwidth_GBps"] = row["traffic"]["bytes"] / seconds / 1e9
    if ceiling["bandwidth_GBps"] > 0:
        achieved["bandwidth_utilization"] = (
            achieved["bandwidth_GBps"] / ceiling["bandwidth_GBps"]
        )
    if row.get("roof_TFLOPs") and row["roof_TFLOPs"] > 0:
        achieved["fraction_of_roof"] = achieved["TFLOPs"] / row["roof_TFLOPs"]
    return achieved
