"""torch's scaled_dot_product_attention, one backend at a time.

Each backend is forced with torch.nn.attention.sdpa_kernel(SDPBackend.X): with
one backend allowed, torch either runs it or raises "No available kernel" after
warning why; those warnings are the skipped row's reason. Each configuration's
output is compared with the fp32 reference, then it is timed; `import-samples`
judges the comparison, and a row whose check fails is failed, its samples
left out of the report.

Served shapes (docs/model.md section 7) go to torch as it takes them: K and V
with fewer heads through enable_gqa, a causal mask with Nq != Nk as torch's
bottom-right CausalBias; a paged cache, which SDPA has no layout for, is a
skipped row (shape_gap).

The backward (BackendRunner's `backward`): the forward once on leaves that
require the gradient, then torch.autograd.grad of it per launch, dQ, dK and dV
checked against the fp32 reference backward; as many keys as queries and a
contiguous cache only, GQA included (backward_gap), as the tool's backward
models count it (fa2_bwd).
"""

import warnings
from dataclasses import dataclass, field

from .reference import (compare_with_reference, make_inputs, make_output_gradient,
                        reference_gradients, reference_output, reference_working_bytes)

GIB = 1024.0 ** 3
# Errors after which the CUDA context is unusable (kernels/bench's is_sticky).
STICKY_ERRORS = ("illegal memory access", "unspecified launch failure", "misaligned address",
                 "illegal instruction", "device-side assert", "hardware stack error",
                 "uncorrectable ECC", "launch timed out")


@dataclass(frozen=True)
class Backend:
    name: str  # --backends value
    enum_name: str  # torch.nn.attention.SDPBackend member
    kernel: str  # report kernel name


BACKENDS = (
    Backend("flash", "FLASH_ATTENTION", "torch_sdpa_flash"),
    Backend("cudnn", "CUDNN_ATTENTION", "torch_sdpa_cudnn"),
    Backend("efficient", "EFFICIENT_ATTENTION", "torch_sdpa_efficient"),
    Backend("math", "MATH", "torch_sdpa_math"),
)


def missing_from_build(torch, backend):
    """Why this torch build cannot run `backend` at all; '' when it can try."""
    from torch.nn.attention import SDPBackend

    if not hasattr(SDPBackend, backend.enum_name):
        return f"this torch ({torch.__version__}) has no SDPBackend.{backend.enum_name}"
    if backend.name == "flash":
        available = getattr(torch.backends.cuda, "is_flash_attention_available", None)
        if available is not None and not available():
            return "this torch build has no flash attention"
    if backend.name == "cudnn" and not torch.backends.cudnn.is_available():
        return "this torch build has no cuDNN"
    return ""


def math_upcasts(torch):
    """Since torch 2.5 the math backend computes fp16 and bf16 in fp32 unless
    reduced precision is allowed; its matmuls then run as fp32 (TF32 is off)."""
    allowed = getattr(torch.backends.cuda, "fp16_bf16_reduction_math_sdp_allowed", None)
    return allowed is None or not allowed()


def math_scores_bytes(problem, upcast):
    """The math backend's materialized Nq x Nk tensors: scores, probabilities
    and the causal mask or bias, in its compute type, and under GQA the K and V
    it repeats to every query head (an estimate, for the budget)."""
    element = 4 if upcast or problem.dtype == "fp32" else 2
    scores = 3.0 * problem.heads_total() * problem.seq_len * problem.keys() * element
    repeated = 2.0 * problem.heads_total() * problem.keys() * problem.head_dim * element
    return scores + (repeated if problem.grouped() else 0.0)


def bytes_needed(problem, backward=False):
    """Q, K, V and O, the fp32 reference O, and the larger of the reference's
    working block and the check's float64 copies, which never coexist (the
    math backend's Nq x Nk tensors come on top). The backward adds dO and the
    three gradients (dK and dV shaped as K and V), the three fp32 reference
    gradients and a backend's fp32 dQ accumulator, and its reference holds
    more a block."""
    queries = float(problem.heads_total() * problem.seq_len * problem.head_dim)
    keys = float(problem.batch * problem.key_heads() * problem.keys() * problem.head_dim)
    element = 4 if problem.dtype == "fp32" else 2
    working = max(reference_working_bytes(problem, backward), 3 * queries * 8)
    if backward:
        return (4 * queries + 4 * keys) * element + (2 * queries + 2 * keys) * 4 + working
    return (2 * queries + 2 * keys) * element + queries * 4 + working


BACKWARD_SHAPE_REASON = ("the backward is timed with as many keys as queries and a contiguous "
                         "cache only (GQA included), the backward the tool's models count")


def backward_gap(problem):
    """Why the backward of the problem is not asked; '' when it is."""
    counted = problem.keys() == problem.seq_len and not problem.paged()
    return "" if counted else BACKWARD_SHAPE_REASON


# torch 2.5 added scaled_dot_product_attention's enable_gqa (K/V with fewer heads).
GQA_TORCH = (2, 5)
PAGED_REASON = "torch SDPA reads a contiguous K/V cache"


def torch_release(version):
    """(major, minor) of a torch version string ('2.11.0+cu130', '2.6.0a0+git...')."""
    parts = version.split("+")[0].split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return 0, 0


def shape_gap(problem, torch_version):
    """Why no backend of this torch can be asked for the problem; '' when torch
    decides. Such a row is skipped without calling torch: a paged cache it has
    no layout for, GQA before enable_gqa, a causal mask leaving queries no key
    (the tool refuses that problem, docs/model.md section 7)."""
    if problem.paged():
        return PAGED_REASON
    if problem.causal and problem.seq_len > problem.keys():
        return (f"a bottom-right causal mask over {problem.keys()} keys leaves the first "
                f"{problem.seq_len - problem.keys()} of {problem.seq_len} queries no key")
    if problem.grouped() and torch_release(torch_version) < GQA_TORCH:
        return (f"this torch ({torch_version}) has no enable_gqa: fewer K/V heads than query "
                f"heads need torch {GQA_TORCH[0]}.{GQA_TORCH[1]} or later")
    return ""


def sdpa_keywords(problem, lower_right):
    """scaled_dot_product_attention's keywords for the problem. Square
    self-attention is called as it always was (is_causal alone), so the rows
    measured before served shapes keep their code path. Nq != Nk causal passes
    torch's bottom-right mask, lower_right(Nq, Nk)
    (torch.nn.attention.bias.causal_lower_right), as attn_mask: is_causal=True
    would be top-left aligned there. Fewer K/V heads add enable_gqa."""
    keywords = {"is_causal": problem.causal}
    if problem.causal and problem.keys() != problem.seq_len:
        keywords = {"attn_mask": lower_right(problem.seq_len, problem.keys())}
    if problem.grouped():
        keywords["enable_gqa"] = True
    return keywords


@dataclass
class Outcome:
    status: str = "ok"
    reason: str = ""
    timing: dict = None
    check: dict = None  # the raw samples' check: the reference and the checked tensors
    device_lost: bool = False
    notes: list = field(default_factory=list)  # whole-report warnings


def _torch_reason(caught, error):
    """torch's own words for a refusal: its warnings, without the C++ location."""
    lines = []
    for warning in caught:
        text = str(warning.message).split("(Triggered internally at")[0].strip()
        if text and text not in lines:
            lines.append(text)
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return "torch refused: " + (" ".join(lines) if lines else first_line)


def _first_line(error):
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"


class ProblemData:
    """One problem's inputs and fp32 reference, shared by its backends: O, or
    for the backward dO and the reference dQ, dK, dV."""

    def __init__(self, torch, problem, seed, device, backward=False):
        self.problem = problem
        self.q, self.k, self.v = make_inputs(torch, problem, seed, device)
        self.d_out = None
        with torch.no_grad():
            if backward:
                self.d_out = make_output_gradient(torch, problem, seed, device)
                self.reference = reference_gradients(torch, self.q, self.k, self.v, self.d_out,
                                                     problem.causal)
            else:
                self.reference = reference_output(torch, self.q, self.k, self.v, problem.causal)
        torch.cuda.synchronize(device)


GRADIENTS = ("dQ", "dK", "dV")


class BackendRunner:
    """Runs configurations on one device; keeps the last problem's data."""

    def __init__(self, torch, device, timer, seed, math_budget_bytes, backward=False):
        self.torch = torch
        self.device = device
        self.timer = timer
        self.seed = seed
        self.math_budget_bytes = math_budget_bytes
        self.backward = backward  # time torch.autograd.grad of the forward, not the forward
        self.upcast = math_upcasts(torch)
        self.data = None

    def _free_bytes(self):
        torch = self.torch
        free, _ = torch.cuda.mem_get_info(self.device)
        cached = torch.cuda.memory_reserved(self.device) - torch.cuda.memory_allocated(self.device)
        return free + cached

    def _prepare(self, problem, backend):
        """Outcome 'skipped' when the configuration cannot fit; None when ready.
        Like the tool, 5% of the free memory stays for the libraries and driver."""
        if self.data is None or self.data.problem != problem:
            self.data = None
            self.torch.cuda.empty_cache()
            needed, free = bytes_needed(problem, self.backward), self._free_bytes()
            if needed > 0.95 * free:
                return Outcome("skipped", f"needs {needed / GIB:.2f} GiB of device memory, "
                                          f"{free / GIB:.2f} GiB free")
            self.data = ProblemData(self.torch, problem, self.seed,
                                    self.torch.device("cuda", self.device), self.backward)
        if backend.name == "math":
            # the backward keeps the forward's probabilities and adds their gradient
            scores = math_scores_bytes(problem, self.upcast) * (2 if self.backward else 1)
            free = self._free_bytes()
            if scores > self.math_budget_bytes:
                return Outcome("skipped", (
                    f"math materializes Nq x Nk: about {scores / GIB:.2f} GiB, over the "
                    f"{self.math_budget_bytes / GIB:.2f} GiB budget (--math-budget-gib)"))
            if scores > 0.95 * free:
                return Outcome("skipped", f"math materializes Nq x Nk: about {scores / GIB:.2f} "
                                          f"GiB, {free / GIB:.2f} GiB free")
        return None

    def _poisoned_call(self, call, shaped_as):
        """Frees a NaN-filled block shaped as each of `shaped_as` (the output's
        as Q; the gradients' as Q, K and V) just before the call, so the caching
        allocator hands them to the outputs and an element the backend forgets
        to write fails the check. Returns (the call's result, for each output
        tensor whether it landed on a poisoned block)."""
        poison = [self.torch.empty_like(tensor) for tensor in shaped_as]
        for block in poison:
            block.view(self.torch.uint8).fill_(0xFF)  # NaN in fp16, bf16 and fp32
        addresses = {block.data_ptr() for block in poison}
        del poison, block
        result = call()
        tensors = result if isinstance(result, tuple) else (result,)
        return result, [t.untyped_storage().data_ptr() in addresses for t in tensors]

    def run(self, problem, backend):
        torch = self.torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.nn.attention.bias import causal_lower_right
        from torch.nn.functional import scaled_dot_product_attention

        try:
            not_ready = self._prepare(problem, backend)
            if not_ready is not None:
                return not_ready
            inputs = (self.data.q, self.data.k, self.data.v)
            if self.backward:  # leaves that share the inputs' memory, for autograd
                inputs = tuple(t.detach().requires_grad_() for t in inputs)
            keywords = sdpa_keywords(problem, causal_lower_right)

            def launch():
                return scaled_dot_product_attention(*inputs, **keywords)

            with sdpa_kernel(getattr(SDPBackend, backend.enum_name)):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        out, poisoned = self._poisoned_call(launch, (self.data.q,))
                        torch.cuda.synchronize(self.device)
                    except RuntimeError as error:
                        if "No available kernel" not in str(error):
                            raise
                        refusal = _torch_reason(caught, error)
                    else:
                        refusal = ""
                if refusal:
                    return Outcome("skipped", refusal)
                if self.backward:
                    return self._check_and_time_backward(out, inputs)
                return self._check_and_time(out, poisoned[0], launch)
        except torch.cuda.OutOfMemoryError as error:
            self.data = None
            torch.cuda.empty_cache()
            return Outcome("skipped", f"allocation failed: {_first_line(error)}")
        except Exception as error:  # noqa: BLE001 - any failure is recorded in the row
            text = _first_line(error)
            return Outcome("failed", text, device_lost=any(s in text for s in STICKY_ERRORS))

    def _check_and_time_backward(self, out, inputs):
        """The backward alone, of the forward `out` computed once: each launch is
        torch.autograd.grad(out, (q, k, v), dO, retain_graph=True), the graph
        kept for the next; dQ, dK, dV checked against the fp32 reference."""
        torch = self.torch
        d_out = self.data.d_out

        def launch():
            return torch.autograd.grad(out, inputs, d_out, retain_graph=True)

        grads, poisoned = self._poisoned_call(launch, (self.data.q, self.data.k, self.data.v))
        torch.cuda.synchronize(self.device)
        landed = [name for name, hit in zip(GRADIENTS, poisoned) if hit]
        reference = ("fp32 materialized backward on the same inputs and dO (torch.matmul "
                     "without TF32, softmax in fp32, P recomputed per block of rows); gradient "
                     "memory " + (f"poisoned with NaN before the call for {', '.join(landed)}"
                                  if landed else
                                  "not poisoned (the allocator placed it elsewhere)"))
        check = {"reference": reference,
                 "tensors": [compare_with_reference(torch, grad, expected, name)
                             for name, grad, expected in zip(GRADIENTS, grads,
                                                             self.data.reference)]}
        del grads
        return self._timed(check, launch)

    def _timed(self, check, launch):
        timing, held = self.timer.time(launch)
        outcome = Outcome(check=check, timing=timing)
        if not timing["samples_ms"]:
            outcome = Outcome("failed", "no sample was timed: every launch started late")
        if not held:
            outcome.notes.append("the stream could not be held while the launch was enqueued; "
                                 "some samples include host launch time")
        return outcome

    def _check_and_time(self, out, poisoned, launch):
        reference = ("fp32 materialized attention on the same inputs (torch.matmul without "
                     "TF32, softmax in fp32); output memory "
                     + ("poisoned with NaN before the call" if poisoned else
                        "not poisoned (the allocator placed it elsewhere)"))
        check = {"reference": reference,
                 "tensors": [compare_with_reference(self.torch, out, self.data.reference)]}
        del out
        return self._timed(check, launch)
