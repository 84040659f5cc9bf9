#!/usr/bin/env python3
"""Does catching up on hits explain how much of a loop the L2 keeps? (issue 23)

The loop probe (tests/gpu/l2_loop_probe.cu, results/h200/l2-loop-ed80ea4/)
has every resident CTA read the same W bytes once, in 4 KiB chunks, CTA c
starting at chunk c * chunks / ctas. A strict LRU of the partition that
holds its whole loop up to 28 MiB misses every re-read past it; the H200
missed 0.3-35 % of them at 32-80 MiB. The L2-aware model's point is that
LRU with CTAs at fixed speeds, so it has the cliff the hardware lacks.

This what-if adds one mechanism and nothing fitted to the misses: a chunk
that misses costs a CTA `miss_cost` times a hit, and every read's time is
jittered by +-`jitter`. A CTA that follows another closely enough to hit
then runs faster and closes the gap, so CTAs gather into convoys that
share reads. It prints the share of re-reads that miss beside the probe's.
miss_cost and jitter are inputs, not measurements: the point is whether the
mechanism gives the probe's order of magnitude, not a figure for the model.

usage: tests/gpu/l2_convoy_what_if.py [--ctas 528] [--miss-cost 3,6]
           [--jitter 0.3] [--mib 32,40,48,64,80] [--kept-mib 28]
           [--probe results/h200/l2-loop-ed80ea4/table-4.txt]
Pure Python: about a minute a (miss cost, W) pair at 528 CTAs and 80 MiB.
"""
import argparse
import heapq
import random
from collections import OrderedDict
from pathlib import Path

CHUNK_KIB = 4


def reread_miss_share(mib, ctas, kept_mib, miss_cost, jitter, rng):
    """Share of the re-reads (all reads but the first of each chunk) that miss."""
    chunks = mib * 1024 // CHUNK_KIB
    capacity = kept_mib * 1024 // CHUNK_KIB
    cache = OrderedDict()
    misses = 0
    position = [c * chunks // ctas for c in range(ctas)]
    read = [0] * ctas
    ready = [(0.0, c) for c in range(ctas)]
    heapq.heapify(ready)
    while ready:
        now, cta = heapq.heappop(ready)
        chunk = position[cta]
        if chunk in cache:
            cache.move_to_end(chunk)
            cost = 1.0
        else:
            misses += 1
            cache[chunk] = True
            if len(cache) > capacity:
                cache.popitem(last=False)
            cost = miss_cost
        position[cta] = (chunk + 1) % chunks
        read[cta] += 1
        if read[cta] < chunks:
            heapq.heappush(ready, (now + cost * rng.uniform(1 - jitter, 1 + jitter), cta))
    rereads = ctas * chunks - chunks
    return (misses - chunks) / rereads


def probe_shares(table):
    """W MiB -> the probe's re-read share, stagger order (l2_loop_table.py's columns)."""
    shares = {}
    if table and Path(table).is_file():
        for line in Path(table).read_text().splitlines():
            fields = line.split()
            if len(fields) >= 6 and fields[0] == "stagger":
                shares[int(fields[1])] = float(fields[5])
    return shares


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ctas", type=int, default=528)
    parser.add_argument("--miss-cost", default="3,6")
    parser.add_argument("--jitter", type=float, default=0.3)
    parser.add_argument("--mib", default="32,40,48,64,80")
    parser.add_argument("--kept-mib", type=int, default=28)
    parser.add_argument("--probe", default="results/h200/l2-loop-ed80ea4/table-4.txt")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    measured = probe_shares(args.probe)
    print(f"{args.ctas} CTAs, LRU keeping {args.kept_mib} MiB, jitter +-{args.jitter}; "
          f"probe: {args.probe}")
    print(f"{'W MiB':>6} {'miss cost':>9} {'what-if':>8} {'probe':>8}")
    for cost in (float(c) for c in args.miss_cost.split(",")):
        for mib in (int(m) for m in args.mib.split(",")):
            share = reread_miss_share(mib, args.ctas, args.kept_mib, cost, args.jitter,
                                      random.Random(args.seed))
            probe = f"{measured[mib]:.4f}" if mib in measured else "-"
            print(f"{mib:>6} {cost:>9g} {share:>8.4f} {probe:>8}", flush=True)


if __name__ == "__main__":
    main()
