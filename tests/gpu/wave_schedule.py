#!/usr/bin/env python3
"""Predicts a tiled forward kernel's causal ÷ non-causal time from its launch
order alone: CTAs go to the first free slot (SMs x resident CTAs per SM) in
grid order, as the hardware's block scheduler hands them out, and each CTA
costs the K/V blocks it streams. Not part of the tool: the model behind
docs/perf-notes.md's fa2_mma v5 prediction (launch order, issue 9).

usage: wave_schedule.py [--sms 132] [--ctas-per-sm 1] [--heads 8]
                        [--br 256] [--bc 64] N [N ...]
"""
import argparse
import heapq


def makespan(costs, slots):
    free = [0.0] * slots
    for cost in costs:
        heapq.heappush(free, heapq.heappop(free) + cost)
    return max(free)


def kv_blocks(q_block, n, br, bc, causal):
    if not causal:
        return -(-n // bc)
    return (min(n, (q_block + 1) * br) - 1) // bc + 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sms", type=int, default=132)
    parser.add_argument("--ctas-per-sm", type=int, default=1)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--br", type=int, default=256)
    parser.add_argument("--bc", type=int, default=64)
    parser.add_argument("seq_lens", type=int, nargs="+")
    a = parser.parse_args()
    slots = a.sms * a.ctas_per_sm
    print("N\tq blocks fastest\theads fastest\tideal (causal ÷ non-causal time)")
    for n in a.seq_lens:
        q_blocks = -(-n // a.br)
        heavy_first = list(reversed(range(q_blocks)))
        full = makespan([kv_blocks(0, n, a.br, a.bc, False)] * (q_blocks * a.heads), slots)
        cost = lambda q: kv_blocks(q, n, a.br, a.bc, True)
        q_fastest = [cost(q) for _ in range(a.heads) for q in heavy_first]
        heads_fastest = [cost(q) for q in heavy_first for _ in range(a.heads)]
        ideal = max(sum(q_fastest) / slots, max(q_fastest))
        print(f"{n}\t{makespan(q_fastest, slots) / full:.3f}\t"
              f"{makespan(heads_fastest, slots) / full:.3f}\t{ideal / full:.3f}")


if __name__ == "__main__":
    main()
