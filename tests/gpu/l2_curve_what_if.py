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
from l2_schedule_what_if import fa1_causal, simulate  # noqa: E402

PARTITION = 25 * 2**20  # the H100's 50 MiB L2, one copy a partition


def probe_curve(directory, per_sm):
    """(W / partition, share of the re-reads that missed) of the stagger order."""
    events = l2_loop_table.rows_of(os.path.join(directory, f"events-{per_sm}.csv"))
    counted = l2_loop_table.ncu_rows(os.path.join(directory, f"ncu-{per_sm}.csv"))
    points = []
    for event, row in zip(events, counted):
        if event["order"] != "stagger":
            continue
        size = float(event["MiB"]) * 2**20
        requested = float(event["requested_bytes"])
        read = l2_loop_table.number(row["dram__bytes_read.sum"])
        points.append((size / PARTITION, max(0.0, (read - size) / (requested - size))))
    return points


def share_at(points, x):
    xs = [p[0] for p in points]
    if x <= xs[0]:
        return points[0][1]
    if x >= xs[-1]:
        return points[-1][1]
    i = bisect.bisect_right(xs, x)
    (x0, y0), (x1, y1) = points[i - 1], points[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


# name: (launch, ncu's DRAM bytes of the H100 row, GB)
SHAPES = {
    "fa1_wmma_c128": (lambda: fa1_causal(4, 131072, 32, 32, 128, 4), 94.11),
    "fa1_scalar_c128": (lambda: fa1_causal(4, 131072, 32, 32, 128, 2), 63.18),
    "fa1_wmma_262k_d64": (lambda: fa1_causal(2, 262144, 64, 32, 64, 3), 39.94),
    "fa1_scalar_c64": (lambda: fa1_causal(4, 131072, 64, 64, 64, 2), 1.39),
    "fa1_wmma_c64": (lambda: fa1_causal(4, 131072, 64, 32, 64, 3), 0.70),
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
        print(f"{name:18} ncu {measured:6.2f} GB | K/V GB: LRU {lru / 1e9:7.2f}  " + "  ".join(cells),
              flush=True)


if __name__ == "__main__":
    main()
