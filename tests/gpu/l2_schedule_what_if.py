#!/usr/bin/env python3
"""Would a schedule that is not lock-step bring the L2-aware DRAM model's point
near Nsight Compute on the miss rows? Not part of the tool: the evidence
behind docs/model.md's "Schedules tried" (issue 23).

The model's point walks every resident CTA one K/V tile a step, in lock-step.
This script replays the same launch (dispatch order, resident CTAs, tiles from
roofline/model/kernel_catalog.hpp) event by event through a byte-capacity LRU
of one L2 partition, with a CTA's step taking
    1 on a hit, `miss` on a miss      (CTAs that hit catch up: convoys),
    times 1 + noise x U(-1/2, 1/2)    (steps of unequal length: drift).
miss 1, noise 0 is the model's own schedule; K/V reads only (Q and O are a
percent of these rows' bytes). Every tile is simulated (the tool merges tile
pairs above 2^25 CTA-steps, docs/model.md "Limits").

usage: l2_schedule_what_if.py [--shapes fa1_wmma_c128,...] [--grid 1:0,1:0.1,...]
"""
import argparse
import heapq
import os
import random
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from l2_capacity_what_if import load  # noqa: E402

PARTITION = 30 * 2**20  # the H200's 60 MiB L2, one copy a partition (docs/model.md)


def fa1_causal(heads, n, br, bc, d, per_sm):
    """FA1 kernels: Q block blockIdx.x fastest, natural order; Q block i reads
    the K/V tiles of keys below (i + 1) br."""
    blocks = n // br
    ctas = [(h, -(-(i + 1) * br // bc)) for h in range(heads) for i in range(blocks)]
    return ctas, 132 * per_sm, bc * d * 2 * 2


def fa2_full(heads, n, br, bc, d, per_sm):
    """fa2_mma: the grid (heads, batch, Q blocks) puts head + H x batch
    fastest; every CTA reads all of its head's K/V (full mask)."""
    blocks = n // br
    return [(k % heads, n // bc) for k in range(heads * blocks)], 132 * per_sm, bc * d * 2 * 2


def measured_dram(report, kernel, heads, seq_len, head_dim, causal, batch=1):
    """ncu's DRAM bytes (read + write) of the report's row of that shape."""
    for row in load(report)["results"]:
        if (row["kernel"], row["batch"], row["heads"], row["seq_len"], row["head_dim"],
                row["causal"]) == (kernel, batch, heads, seq_len, head_dim, causal):
            return row["profile"]["levels"]["dram"]["bytes"]
    raise SystemExit(f"{report} has no {kernel} row of that shape")


PROFILE = "results/h200/profile"
# name: (launch, ncu's DRAM bytes of the row)
SHAPES = {
    "fa1_wmma_c128": (lambda: fa1_causal(4, 131072, 32, 32, 128, 4),
                      lambda: measured_dram(f"{PROFILE}/misses-causal-long.json", "fa1_wmma", 4,
                                            131072, 128, True)),
    "fa1_scalar_c128": (lambda: fa1_causal(4, 131072, 32, 32, 128, 2),
                        lambda: measured_dram(f"{PROFILE}/misses-causal-long.json", "fa1_scalar",
                                              4, 131072, 128, True)),
    "fa2_mma_b4": (lambda: fa2_full(32, 32768, 256, 64, 128, 1),
                   lambda: measured_dram(f"{PROFILE}/misses-batch4.json", "fa2_mma", 8, 32768,
                                         128, False, batch=4)),
    "fa2_mma_d32": (lambda: fa2_full(8, 65536, 128, 128, 32, 2),
                    lambda: measured_dram(f"{PROFILE}/misses-d32.json", "fa2_mma", 8, 65536, 32,
                                          False)),
}


def simulate(ctas, concurrency, tile_bytes, miss=1.0, noise=0.0, seed=1, cache_bytes=PARTITION,
             reread_cost=None):
    """Returns (bytes LRU misses, bytes charged). A first read is charged its
    bytes; a re-read that LRU misses is charged its bytes, or its bytes times
    reread_cost(reuse distance in bytes) when given: the cache's bytes plus
    those inserted since the line's eviction."""
    rng = random.Random(seed)
    capacity = cache_bytes // tile_bytes
    lru = OrderedDict()
    evicted_at = {}
    inserted = 0
    events = []
    started = 0
    missed = 0
    charged = 0.0

    def start(at):
        nonlocal started
        head, tiles = ctas[started]
        started += 1
        heapq.heappush(events, (at, started, head, 0, tiles))

    for _ in range(min(concurrency, len(ctas))):
        start(0.0)
    while events:
        at, order, head, tile, tiles = heapq.heappop(events)
        key = (head, tile)
        if key in lru:
            lru.move_to_end(key)
            step = 1.0
        else:
            missed += 1
            if reread_cost is not None and key in evicted_at:
                distance = capacity + inserted - evicted_at.pop(key)
                charged += reread_cost(distance * tile_bytes)
            else:
                charged += 1.0
            lru[key] = True
            inserted += 1
            if len(lru) > capacity:
                old, _ = lru.popitem(last=False)
                if reread_cost is not None:
                    evicted_at[old] = inserted
            step = miss
        if noise:
            step *= 1 + noise * (rng.random() - 0.5)
        if tile + 1 < tiles:
            heapq.heappush(events, (at + step, order, head, tile + 1, tiles))
        elif started < len(ctas):
            start(at + step)
    return missed * tile_bytes, charged * tile_bytes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--grid", default="1:0,1:0.1,1:0.5,1.05:0,1.05:0.5,1.2:0")
    args = parser.parse_args()
    grid = [tuple(float(x) for x in cell.split(":")) for cell in args.grid.split(",")]
    for name in args.shapes.split(","):
        launch, measured = SHAPES[name]
        ctas, concurrency, tile_bytes = launch()
        cells = []
        for miss, noise in grid:
            missed, _ = simulate(ctas, concurrency, tile_bytes, miss, noise)
            cells.append(f"{miss}:{noise} {missed / 1e9:7.2f}")
        print(f"{name:16} ncu {measured() / 1e9:6.2f} GB | K/V GB by miss:noise  " + "  ".join(cells),
              flush=True)


if __name__ == "__main__":
    main()
