"""Sweep axes as `cuflash-roofline sweep` parses them.

Ports roofline/axis_values.cpp (the list and range grammar) and the checks of
app/sweep_options.cpp (bounds, dtypes, masks, loop order), with the same one-line
messages. Every error is an AxisError whose text names the flag and the bad value.
"""

import re
from dataclasses import dataclass

MAX_VALUES = 100000
# app/sweep_options.cpp: keeps every index (B*H*N*d) well inside 64-bit.
MAX_SEQ_LEN = 1 << 22
MAX_HEAD_DIM = 1 << 20
MAX_BATCH_OR_HEADS = 1 << 16
INT64_MAX = (1 << 63) - 1
DTYPES = ("fp16", "bf16", "fp32")

# std::from_chars for int64: an optional '-', then decimal digits, nothing else.
_INTEGER = re.compile(r"-?[0-9]+")


class AxisError(ValueError):
    """A bad command-line value; str() is the one-line message."""


def _parse_integer(text, whole, axis):
    if not _INTEGER.fullmatch(text) or abs(int(text)) > INT64_MAX + (text[0] == "-"):
        raise AxisError(f"{axis}: '{text}' is not an integer (in '{whole}')")
    value = int(text)
    if value <= 0:
        raise AxisError(f"{axis}: {value} must be positive")
    return value


def _append_range(item, axis, out):
    first = item.find(":")
    second = item.find(":", first + 1)
    if second == -1 or item.find(":", second + 1) != -1:
        raise AxisError(
            f"{axis}: malformed range '{item}' (expected START:END:xFACTOR or START:END:+STEP)"
        )
    start = _parse_integer(item[:first], item, axis)
    end = _parse_integer(item[first + 1 : second], item, axis)
    step = item[second + 1 :]
    if end < start:
        raise AxisError(f"{axis}: range '{item}' ends before it starts")
    if len(step) < 2 or step[0] not in "x+":
        raise AxisError(f"{axis}: malformed step '{step}' in '{item}' (use x2 or +64)")
    amount = _parse_integer(step[1:], item, axis)
    geometric = step[0] == "x"
    if geometric and amount < 2:
        raise AxisError(f"{axis}: factor in '{item}' must be at least 2")
    value = start
    while value <= end:
        if len(out) >= MAX_VALUES:
            raise AxisError(f"{axis}: range '{item}' has too many values")
        out.append(value)
        value = value * amount if geometric else value + amount


def parse_axis_values(text, axis):
    """'1024,2048', '1024:16384:x2', '64:256:+64' or a mix, in the order given."""
    if not text:
        raise AxisError(f"{axis}: empty list")
    out = []
    for item in text.split(","):
        if not item:
            raise AxisError(f"{axis}: empty item in '{text}'")
        if ":" in item:
            _append_range(item, axis, out)
        else:
            out.append(_parse_integer(item, text, axis))
    return out


def bounded_axis(text, axis, limit):
    values = parse_axis_values(text, axis)
    for value in values:
        if value > limit:
            raise AxisError(f"{axis}: {value} is larger than {limit}")
    return values


def parse_dtypes(text):
    dtypes = []
    for name in text.split(","):
        if name not in DTYPES:
            raise AxisError(f"--dtype: unknown dtype '{name}' (fp16, bf16, fp32)")
        dtypes.append(name)
    return dtypes


@dataclass(frozen=True)
class Problem:
    """roofline/attention_problem.hpp: Q, K, V, O are [batch, heads, seq_len, head_dim]."""

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
