"""The correctness rule of kernels/attention_check.hpp and the row record that
kernels/bench/attention_bench.cpp builds from it, for a peer's output O.

The torch side computes the raw sums (torch_peer/reference.py); what passes,
and what the report says, is decided here.
"""

import math
import sys
from dataclasses import dataclass

# tolerance_for(dtype): (rel_l2, max_abs_relative). rel_l2 bounds are 5-10x the
# dtype's unit roundoff; max_abs leaves room for the worst element.
TOLERANCES = {"fp16": (5e-3, 2e-2), "bf16": (2e-2, 8e-2), "fp32": (1e-4, 1e-3)}

# JSON has no infinity and the schema wants a number: an output with NaN or Inf
# elements is recorded with this error, and its row's reason says why.
NON_FINITE_ERROR = sys.float_info.max


@dataclass
class CheckResult:
    """kernels::CheckResult over the finite elements of an output."""

    rel_l2_err: float  # ||out - ref|| / ||ref||; inf when any element is not finite
    max_abs_err: float
    ref_l2: float
    ref_max_abs: float
    non_finite: int

    @property
    def all_finite(self):
        return self.non_finite == 0

    def scale(self):
        """max|ref|, or 1 for a zero reference (its errors are then absolute)."""
        return self.ref_max_abs if self.ref_max_abs > 0 else 1.0


def check_from_sums(squared_error, squared_ref, max_abs_err, ref_max_abs, non_finite):
    ref_l2 = math.sqrt(squared_ref)
    error_l2 = math.sqrt(squared_error)
    if non_finite:
        rel = math.inf
    else:
        rel = error_l2 / ref_l2 if ref_l2 > 0 else error_l2
    return CheckResult(rel, max_abs_err, ref_l2, ref_max_abs, non_finite)


def passes(check, dtype):
    rel_l2, max_abs_relative = TOLERANCES[dtype]
    return (check.all_finite and check.rel_l2_err <= rel_l2
            and check.max_abs_err <= max_abs_relative * check.scale())


def correctness_record(check, dtype, reference):
    """The row's `correctness` object for one checked tensor (O), and the reason a
    failed check gives ('' when it passed)."""
    tolerance = TOLERANCES[dtype][0]
    rel = check.rel_l2_err if check.all_finite else NON_FINITE_ERROR
    max_abs = check.max_abs_err if check.all_finite else NON_FINITE_ERROR
    passed = passes(check, dtype) and math.isfinite(check.rel_l2_err) and rel <= tolerance
    record = {
        "reference": reference,
        "rel_l2_err": rel,
        "max_abs_err": max_abs,
        "tolerance": tolerance,
        "passed": passed,
        "tensors": [{"tensor": "O", "rel_l2_err": rel, "max_abs_err": max_abs}],
    }
    if passed:
        return record, ""
    if not check.all_finite:
        return record, f"correctness: {check.non_finite} elements of O are NaN or Inf"
    return record, (
        f"correctness: worst rel L2 error {rel:.3g}, max abs error {max_abs:.3g} "
        f"(rel L2 tolerance {tolerance:.3g})")
