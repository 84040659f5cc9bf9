"""Sweep axes as `cuflash-roofline sweep` parses them.

Ports roofline/core/axis_values.cpp (the list and range grammar) and the checks of
app/sweep_options.cpp (bounds, dtypes, masks, loop order), with the same one-line
messages. Every error is an AxisError whose text names the flag and the bad value.
"""

import re
from dataclasses import dataclass

MAX_VALUES = 100000
MAX_POW2_EXPONENT = 62
POW2_PREFIX = "[pow2]"
# app/sweep_options.cpp: keeps every index (B*H*N*d) well inside 64-bit.
MAX_SEQ_LEN = 1 << 22
MAX_HEAD_DIM = 1 << 20
MAX_BATCH_OR_HEADS = 1 << 16
INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
DTYPES = ("fp16", "bf16", "fp32")

# std::from_chars for int64: an optional '-', then decimal digits, nothing else.
_INTEGER = re.compile(r"-?[0-9]+")


class AxisError(ValueError):
    """A bad command-line value; str() is the one-line message."""


def _parse_integer(text, whole, axis, smallest=1):
    if not _INTEGER.fullmatch(text):
        raise AxisError(f"{axis}: '{text}' is not an integer (in '{whole}')")
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise AxisError(f"{axis}: '{text}' is out of the 64-bit range (in '{whole}')")
    if value < smallest:
        if smallest == 1:
            raise AxisError(f"{axis}: {value} must be positive")
        raise AxisError(f"{axis}: {value} must be at least {smallest} (in '{whole}')")
    return value


def _append(out, value, item, axis):
    if len(out) >= MAX_VALUES:
        raise AxisError(f"{axis}: '{item}' makes more than {MAX_VALUES} values")
    out.append(value)


def _append_range(text, item, axis, out, smallest):
    """START:END (step +1, nvbench's default), START:END:+STEP or START:END:xFACTOR."""
    parts = text.split(":")
    if len(parts) > 3:
        raise AxisError(
            f"{axis}: malformed range '{text}' "
            "(expected START:END, START:END:+STEP or START:END:xFACTOR)"
        )
    start = _parse_integer(parts[0], text, axis, smallest)
    end = _parse_integer(parts[1], text, axis, smallest)
    if end < start:
        raise AxisError(f"{axis}: range '{text}' ends before it starts")
    geometric, amount = False, 1
    if len(parts) == 3:
        step = parts[2]
        if len(step) < 2 or step[0] not in "x+":
            raise AxisError(f"{axis}: malformed step '{step}' in '{text}' (use x2 or +64)")
        amount = _parse_integer(step[1:], text, axis)
        geometric = step[0] == "x"
        if geometric and amount < 2:
            raise AxisError(f"{axis}: factor in '{text}' must be at least 2")
    if not geometric and (end - start) // amount + 1 > MAX_VALUES - len(out):
        raise AxisError(f"{axis}: '{item}' makes more than {MAX_VALUES} values")
    value = start
    while value <= end and value <= INT64_MAX:
        _append(out, value, item, axis)
        value = value * amount if geometric else value + amount


def _append_item_values(text, item, axis, out, smallest):
    if ":" in text:
        _append_range(text, item, axis, out, smallest)
    else:
        _append(out, _parse_integer(text, item, axis, smallest), item, axis)


def _append_item(item, axis, out):
    if not item.startswith(POW2_PREFIX):
        _append_item_values(item, item, axis, out, 1)
        return
    exponents = []
    _append_item_values(item[len(POW2_PREFIX) :], item, axis, exponents, 0)
    for exponent in exponents:
        if exponent > MAX_POW2_EXPONENT:
            raise AxisError(
                f"{axis}: 2^{exponent} in '{item}' is out of the 64-bit range "
                f"(largest: 2^{MAX_POW2_EXPONENT})"
            )
        _append(out, 1 << exponent, item, axis)


def split_list(text, name):
    """Comma-separated items, blanks and tabs around each one dropped; none empty."""
    if not text.strip(" \t"):
        raise AxisError(f"{name}: empty list")
    items = [item.strip(" \t") for item in text.split(",")]
    if any(not item for item in items):
        raise AxisError(f"{name}: empty item in '{text}'")
    return items


def _refuse_repeats(values, axis):
    seen = set()
    for value in values:
        if value in seen:
            raise AxisError(f"{axis}: {value} appears twice")
        seen.add(value)


def parse_axis_values(text, axis):
    """'1024,2048', '1024:16384:x2', '64:256:+64', '1:8', '[pow2]10:14' or a mix, in order."""
    out = []
    for item in split_list(text, axis):
        _append_item(item, axis, out)
    return out


def bounded_axis(text, axis, limit):
    values = parse_axis_values(text, axis)
    for value in values:
        if value > limit:
            raise AxisError(f"{axis}: {value} is larger than {limit}")
    _refuse_repeats(values, axis)
    return values


def parse_dtypes(text):
    dtypes = []
    for name in split_list(text, "--dtype"):
        if name not in DTYPES:
            raise AxisError(f"--dtype: unknown dtype '{name}' (fp16, bf16, fp32)")
        dtypes.append(name)
    _refuse_repeats(dtypes, "--dtype")
    return dtypes


@dataclass(frozen=True)
class Problem:
    """roofline/core/attention_problem.hpp: Q, K, V, O are [batch, heads, seq_len, head_dim]."""

    batch: int
    heads: int
    seq_len: int
    head_dim: int
    causal: bool
    dtype: str

    def heads_total(self):
        return self.batch * self.heads

    def describe(self):
        """The problem half of the sweep's progress line."""
        mask = " causal" if self.causal else ""
        return (
            f"{self.dtype} B={self.batch} H={self.heads} N={self.seq_len} "
            f"d={self.head_dim}{mask}"
        )


@dataclass
class AxisOptions:
    """The axis flags of `sweep`, with its defaults (app/sweep_options.hpp)."""

    seq_lens: str = "1024:16384:x2"
    head_dims: str = "64"
    batch: str = "1"
    heads: str = "8"
    causal: bool = False
    no_causal: bool = False
    both: bool = False
    dtypes: str = "fp16"


def plan_problems(options):
    """Every problem of the axes, in the sweep's loop order (mask, dtype, d, B, H, N).

    Unlike `sweep`, any head dim up to 2^20 is accepted: the peers' kernels are
    not ours, and a backend that lacks a head dim says so in a skipped row.
    """
    seq_lens = bounded_axis(options.seq_lens, "--seq-lens", MAX_SEQ_LEN)
    head_dims = bounded_axis(options.head_dims, "--head-dims", MAX_HEAD_DIM)
    batches = bounded_axis(options.batch, "--batch", MAX_BATCH_OR_HEADS)
    heads = bounded_axis(options.heads, "--heads", MAX_BATCH_OR_HEADS)
    dtypes = parse_dtypes(options.dtypes)
    masks = [False, True] if options.both else [options.causal]
    return [
        Problem(b, h, n, d, causal, dtype)
        for causal in masks
        for dtype in dtypes
        for d in head_dims
        for b in batches
        for h in heads
        for n in seq_lens
    ]
