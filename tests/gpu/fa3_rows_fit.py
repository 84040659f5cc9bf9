#!/usr/bin/env python3
"""Fits the two figures of fa3_wgmma's Q block height rule
(roofline/model/fa3_rows.hpp: a tile's fixed cost in 128-key blocks and the
time of a 192-row tile's row against a 128-row tile's) to the committed
timings of both heights, and prints each shape's measured and estimated ratio.
Not part of the tool: the fit behind docs/perf-notes.md's "v8".

The measured ratio of a shape is the better of the variant's two rounds over
the better of v7.1's (results/h100/fa3-br192-79518c2/versions/). The estimate
is fa3_rows.cpp's: every (head, Q block) tile listed in launch order, causal
heaviest first with the heads side by side, costing (K/V blocks x Bc / 128 +
fixed) x Br / 128 (x row time at 192 rows), handed to 132 persistent CTAs as
they free; 128-row tiles take revision 7's K/V blocks. Least squares on the
log of the ratio over fixed in {0, 0.5, ..., 4} and row time 0.85-1.00.

usage: fa3_rows_fit.py [--figures FIXED ROW_TIME] [versions-folder]
  (every PREFIX-{v7.1,br192}-round{1,2}.json pair in the folder; --figures
  checks the given figures instead of fitting them)
"""
import heapq
import gzip
import json
import math
import os
import sys

from wave_schedule import kv_blocks  # the K/V blocks a Q block sees

SMS = 132


def padded(keys, bc):
    return -(-keys // bc) * bc


def v7_bc(keys, causal):
    if causal:
        return 128
    return 192 if 50 * padded(keys, 192) <= 51 * padded(keys, 128) else 128


def estimated_time(heads, n, causal, br, bc, fixed, row_time):
    q_blocks = -(-n // br)
    costs = []
    for block in reversed(range(q_blocks)):
        kv = kv_blocks(block, n, br, bc, causal)
        costs.append((kv * bc / 128 + fixed) * br / 128 * (row_time if br == 192 else 1.0))
    free = [0.0] * SMS
    end = 0.0
    for cost in costs:
        for _ in range(heads):
            done = heapq.heappop(free) + cost
            heapq.heappush(free, done)
            end = max(end, done)
    return end


def medians(path):
    # results/compress.sh stores a report as FILE.json.gz; the name stays FILE.json.
    with open(path) if os.path.exists(path) else gzip.open(path + ".gz", "rt") as f:
        report = json.load(f)
    out = {}
    for row in report["results"]:
        if row.get("timing"):
            key = (row["batch"], row["heads"], row["seq_len"], row["causal"])
            out[key] = row["timing"]["median_ms"]
    return out


def measured(folder):
    """Every report pair PREFIX-{v7.1,br192}-round{1,2}.json in the folder."""
    names = [name.removesuffix(".gz") for name in os.listdir(folder)]
    prefixes = sorted(name[:-len("-v7.1-round1.json")] for name in names
                      if name.endswith("-v7.1-round1.json"))
    ratios = {}
    for prefix in prefixes:
        runs = {v: [medians(os.path.join(folder, f"{prefix}-{v}-round{r}.json")) for r in (1, 2)]
                for v in ("v7.1", "br192")}
        for key in runs["v7.1"][0]:
            base = min(run[key] for run in runs["v7.1"])
            tall = min(run[key] for run in runs["br192"])
            ratios[key] = tall / base
    return ratios


def main():
    args = sys.argv[1:]
    figures = None
    if args[:1] == ["--figures"]:  # check given figures instead of fitting them
        figures = (float(args[1]), float(args[2]))
        args = args[3:]
    folder = args[0] if args else "results/h100/fa3-br192-79518c2/versions"
    ratios = measured(folder)

    def estimate(key, fixed, row_time):
        batch, heads, n, causal = key
        short = estimated_time(batch * heads, n, causal, 128, v7_bc(n, causal), fixed, row_time)
        tall = estimated_time(batch * heads, n, causal, 192, 128, fixed, row_time)
        return tall / short

    def squared_log_error(fixed, row_time):
        return sum(math.log(estimate(k, fixed, row_time) / r) ** 2 for k, r in ratios.items())

    if figures:
        fixed, row_time = figures
        error = squared_log_error(fixed, row_time)
        print(f"given: fixed {fixed:g} blocks, row time {row_time:.2f} "
              f"(sum of squared log errors {error:.4f})")
    else:
        fits = []
        for fixed in [x / 2 for x in range(9)]:
            for row_time in [x / 100 for x in range(85, 101)]:
                fits.append((squared_log_error(fixed, row_time), fixed, row_time))
        error, fixed, row_time = min(fits)
        print(f"fixed {fixed:g} blocks, row time {row_time:.2f} "
              f"(sum of squared log errors {error:.4f})")
    agree = 0
    for key, ratio in sorted(ratios.items()):
        est = estimate(key, fixed, row_time)
        agree += (est < 1) == (ratio < 1)
        print("B%d H%d N%d causal=%d: measured %.3f estimated %.3f" % (*key, ratio, est))
    print(f"choice agrees with the measured winner on {agree} of {len(ratios)}")


if __name__ == "__main__":
    main()
