#!/usr/bin/env python3
"""Which loop-kept figure would bring the profiled rows' DRAM bytes inside the
L2-aware model's interval? Not part of the tool: the evidence behind
docs/model.md's "The interval" for a GPU whose l2_loop_kept_bytes is not yet
measured (issue 23).

Each profiled row of the reports is run through `cuflash-roofline model` with
a copy of the GPU table whose row for --gpu has l2_loop_kept_bytes set to each
of --kept (MiB; 0 removes it), which only the interval's high bound reads. The
script prints, per figure, the rows outside the interval and how many are
inside.

usage: l2_loop_kept_what_if.py [--tool build/app/cuflash-roofline]
                               [--reports 'results/h200/profile/misses-*.json']
                               [--kept 0,22,26,28] [--gpu h200]
"""
import argparse
import os
import tempfile

import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from l2_capacity_what_if import edited_table, load, model_traffic, profiled_rows  # noqa: E402


def table_with_kept(table, gpu, mebibytes, directory):
    def set_kept(entry):
        entry.pop("l2_loop_kept_bytes", None)
        if mebibytes > 0:
            entry["l2_loop_kept_bytes"] = {"value": mebibytes * 2**20, "source": "what-if"}
    return edited_table(table, gpu, set_kept, os.path.join(directory, f"gpus-kept-{mebibytes}.json"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", default="build/app/cuflash-roofline")
    parser.add_argument("--reports", default="results/h200/profile/misses-*.json")
    parser.add_argument("--kept", default="0,22,26,28")
    parser.add_argument("--gpu", default="h200")
    args = parser.parse_args()
    table = load("configs/gpus.json")
    rows = [(os.path.basename(path), row, measured)
            for path, row, measured in profiled_rows(args.reports)]
    with tempfile.TemporaryDirectory() as directory:
        for mebibytes in [float(k) for k in args.kept.split(",")]:
            edited = table_with_kept(table, args.gpu, mebibytes, directory)
            inside = total = 0
            for name, row, measured in rows:
                traffic = model_traffic(args.tool, edited, args.gpu, row, directory)
                interval = traffic and traffic.get("l2_interval")
                if not interval:
                    continue
                total += 1
                if interval["low"] <= measured <= interval["high"]:
                    inside += 1
                    continue
                print(f"  kept {mebibytes:g} MiB: {name:26} {row['kernel']:10} {row['dtype']} "
                      f"B{row['batch']} H{row['heads']} N{row['seq_len']} d{row['head_dim']} "
                      f"{'causal' if row['causal'] else 'full':6} ncu {measured / 1e9:.3f} GB, "
                      f"interval {interval['low'] / 1e9:.3f}-{interval['high'] / 1e9:.3f}")
            print(f"kept {mebibytes:g} MiB a partition: {inside} of {total} rows inside the interval")


if __name__ == "__main__":
    main()
