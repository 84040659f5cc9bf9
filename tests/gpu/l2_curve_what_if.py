#!/usr/bin/env python3
"""Would the L2's measured loop curve (tests/gpu/l2_loop_probe.cu) in place of
LRU's step bring the model near Nsight Compute on the fa1 cliff rows? Not
part of the tool: the evidence behind docs/model.md's "What the L2 keeps of a
loop" (issue 23).

The launches of the H100 miss rows (results/h100/misses-f7f0f47/: dispatch
order, resident CTAs and tiles from roofline/model/kernel_catalog.hpp) go
through a byte-capacity LRU of one partition (25 MiB) in lock-step, K/V
reads only. A first read costs its bytes; a re-read that LRU misses costs its
bytes times the probe's re-read share at its reuse distance (the partition
plus the bytes inserted since the line's eviction), over the partition.

usage: l2_curve_what_if.py [--shapes fa1_wmma_c128,...] [--probe results/h100/l2-loop-08875c8]
"""
import argparse
import bisect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import l2_loop_table  # noqa: E402
from l2_schedule_what_if import fa1_causal, measured_dram, simulate  # noqa: E402

PARTITION = 25 * 2**20  # the H100's 50 MiB L2, one copy a partition


def probe_curve(directory, per_sm):
    """(W / partition, share of the re-reads that missed) of the stagger order."""
    return [(launch["size"] / PARTITION, max(0.0, launch["share"]))
            for launch in l2_loop_table.launches(directory, per_sm)
            if launch["event"]["order"] == "stagger"]


def share_at(points, x):
    xs = [p[0] for p in points]
    if x <= xs[0]:
        return points[0][1]
    if x >= xs[-1]:
        return points[-1][1]
    i = bisect.bisect_right(xs, x)
    (x0, y0), (x1, y1) = points[i - 1], points[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


MISSES = "results/h100/misses-f7f0f47"
# name: (launch, ncu's DRAM bytes of the H100 row)
SHAPES = {
    "fa1_wmma_c128": (lambda: fa1_causal(4, 131072, 32, 32, 128, 4),
                      lambda: measured_dram(f"{MISSES}/misses-causal-long.json", "fa1_wmma", 4,
                                            131072, 128, True)),
    "fa1_scalar_c128": (lambda: fa1_causal(4, 131072, 32, 32, 128, 2),
                        lambda: measured_dram(f"{MISSES}/misses-causal-long.json", "fa1_scalar",
                                              4, 131072, 128, True)),
    "fa1_wmma_262k_d64": (lambda: fa1_causal(2, 262144, 64, 32, 64, 3),
                          lambda: measured_dram(f"{MISSES}/misses-causal-262k.json", "fa1_wmma",
                                                2, 262144, 64, True)),
    "fa1_scalar_c64": (lambda: fa1_causal(4, 131072, 64, 64, 64, 2),
                       lambda: measured_dram(f"{MISSES}/misses-causal-long.json", "fa1_scalar",
                                             4, 131072, 64, True)),
    "fa1_wmma_c64": (lambda: fa1_causal(4, 131072, 64, 32, 64, 3),
                     lambda: measured_dram(f"{MISSES}/misses-causal-long.json", "fa1_wmma", 4,
                                           131072, 64, True)),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--probe", default="results/h100/l2-loop-08875c8")
    args = parser.parse_args()
    curves = {per_sm: probe_curve(args.probe, per_sm) for per_sm in (4, 2)}
    for name in args.shapes.split(","):
        launch, measured = SHAPES[name]
        ctas, concurrency, tile_bytes = launch()
        cells = []
        lru = None
        for per_sm, points in curves.items():
            lru, charged = simulate(ctas, concurrency, tile_bytes, cache_bytes=PARTITION,
                                    reread_cost=lambda d, p=points: share_at(p, d / PARTITION))
            cells.append(f"curve of {per_sm}/SM {charged / 1e9:7.2f}")
        print(f"{name:18} ncu {measured() / 1e9:6.2f} GB | K/V GB: LRU {lru / 1e9:7.2f}  " + "  ".join(cells),
              flush=True)


if __name__ == "__main__":
    main()
