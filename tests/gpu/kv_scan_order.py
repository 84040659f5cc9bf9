#!/usr/bin/env python3
"""What the order in which fa3_wgmma's CTAs walk K/V could save in DRAM bytes
on a causal shape whose K/V outgrow the L2 (issue 22: B1 H4 N 128K d 128).
Not part of the tool: the model behind docs/perf-notes.md's "DRAM at B1 H4
N128K d128 causal" paragraph.

The schedule is the kernel's: persistent CTAs, one per SM, take (head, Q
block) tiles in launch order (one head after another at this shape, its Q
blocks heaviest first); each CTA step reads one K/V block. The cache is the
L2-aware model's (roofline/model/l2_traffic_model.hpp): least recently used,
bytes / partitions of capacity for lines every SM reads, whole K/V blocks as
lines, Q read and O written once a tile. Policies:
  forward    every tile from K/V block 0 up (the kernel);
  reverse    every tile from its diagonal down (FlashAttention-3's order);
  alternate  direction flipped every `sms` tiles of a head, so a wave starts
             on the blocks the wave before it read last.
  hinted     alternate, with every K/V load an L2 eviction hint: evict_normal
             for `--keep` of the capacity's worth of blocks the next wave of the
             head reads first, evict_first for every other (PTX's `createpolicy` /
             TMA's `.L2::cache_hint`). The cache evicts its least recently used
             evict_first line before any normal one; a hit takes the hint of
             the load that hit.
`bound` is no schedule: each wave of `sms` tiles reads at least the part of
its K/V range the L2 cannot have kept from the wave before (range minus the
capacity), the first wave all of it, plus Q and O once.

usage: kv_scan_order.py [--l2-mib 50] [--partitions 2] [--sms 132] [--heads 4]
                        [--n 131072] [--d 128] [--br 128] [--bc 128] [--keep 0.5]
"""
import argparse
import heapq
from collections import OrderedDict

from wave_schedule import kv_blocks  # the K/V blocks a Q block sees


def simulate(args, policy):
    cap = args.l2_mib * 2**20 / args.partitions
    kv_bytes = args.bc * args.d * 2 * 2  # K and V, 2-byte elements
    q_bytes = args.br * args.d * 2
    q_blocks = -(-args.n // args.br)
    order = sorted(range(q_blocks), key=lambda q: -kv_blocks(q, args.n, args.br, args.bc, True))
    tiles = [(h, q, pos) for h in range(args.heads) for pos, q in enumerate(order)]
    cap_blocks = int(cap * args.keep // kv_bytes)
    waves = [order[w:w + args.sms] for w in range(0, q_blocks, args.sms)]
    # evict_first lines go before any normal line; LRU within each class
    first, normal, used, dram = OrderedDict(), OrderedDict(), 0.0, 0.0

    def touch(key, size, write=False, evict_first=False):
        nonlocal used, dram
        for cls in (first, normal):
            if key in cls:
                del cls[key]
                used -= size
                break
        else:
            if not write:
                dram += size
        (first if evict_first else normal)[key] = size
        used += size
        while used > cap:
            old, old_size = (first if first else normal).popitem(last=False)
            used -= old_size
            if old[0] == "o":
                dram += old_size  # a written line reaches DRAM when evicted

    def kept_range(wave):
        """The K/V blocks the wave after this one reads first: `--keep` of
        the capacity's worth, at the end this wave's scan finishes on."""
        if wave + 1 >= len(waves):
            return range(0)
        reach = max(kv_blocks(q, args.n, args.br, args.bc, True) for q in waves[wave + 1])
        if wave % 2 == 0:  # this wave ascends, the next descends from its reach
            return range(max(0, reach - cap_blocks), reach)
        return range(0, min(reach, cap_blocks))

    kept_by_wave = [kept_range(wave) for wave in range(len(waves))] if policy == "hinted" else None

    events, next_tile = [], 0

    def start(time, slot):
        nonlocal next_tile
        if next_tile == len(tiles):
            return
        head, q, pos = tiles[next_tile]
        next_tile += 1
        blocks = list(range(kv_blocks(q, args.n, args.br, args.bc, True)))
        flip = (policy == "reverse") or (policy in ("alternate", "hinted") and (pos // args.sms) % 2 == 1)
        touch(("q", head, q), q_bytes, evict_first=policy == "hinted")
        kept = kept_by_wave[pos // args.sms] if kept_by_wave else None
        heapq.heappush(events, (time, slot, head, q, blocks[::-1] if flip else blocks, 0, kept))

    for slot in range(args.sms):
        start(0, slot)
    while events:
        time, slot, head, q, blocks, i, kept = heapq.heappop(events)
        if i < len(blocks):
            touch(("kv", head, blocks[i]), kv_bytes, evict_first=kept is not None and blocks[i] not in kept)
            heapq.heappush(events, (time + 1, slot, head, q, blocks, i + 1, kept))
        else:
            touch(("o", head, q), q_bytes, write=True, evict_first=policy == "hinted")
            start(time, slot)
    return dram  # written lines still cached at the end are not counted (ncu's view)


def bound(args):
    cap = args.l2_mib * 2**20 / args.partitions
    kv_bytes = args.bc * args.d * 2 * 2
    q_blocks = -(-args.n // args.br)
    lengths = sorted((kv_blocks(q, args.n, args.br, args.bc, True) for q in range(q_blocks)), reverse=True)
    per_head = 0.0
    for wave, first in enumerate(range(0, q_blocks, args.sms)):
        reach = lengths[first] * kv_bytes  # the wave's K/V range: its heaviest tile's
        per_head += reach if wave == 0 else max(0.0, reach - cap)
    return args.heads * (per_head + 2 * args.n * args.d * 2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--l2-mib", type=float, default=50)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--sms", type=int, default=132)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--n", type=int, default=131072)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--br", type=int, default=128)
    parser.add_argument("--bc", type=int, default=128)
    parser.add_argument("--keep", type=float, default=0.5,
                        help="hinted: the share of a partition kept for the next wave")
    args = parser.parse_args()
    compulsory = args.heads * args.n * args.d * 2 * 4  # Q, K, V and O once
    print(f"B1 H{args.heads} N{args.n} d{args.d} causal, Br {args.br} Bc {args.bc}, "
          f"L2 {args.l2_mib:g} MiB / {args.partitions}, {args.sms} SMs: "
          f"compulsory {compulsory / 1e9:.3f} GB")
    for policy in ("forward", "reverse", "alternate", "hinted"):
        dram = simulate(args, policy)
        print(f"  {policy:9s} {dram / 1e9:.3f} GB  {dram / compulsory:.2f}x compulsory")
    low = bound(args)
    print(f"  {'bound':9s} {low / 1e9:.3f} GB  {low / compulsory:.2f}x compulsory")


if __name__ == "__main__":
    main()
