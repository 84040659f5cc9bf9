#!/usr/bin/env python3
"""Would another L2 capacity rule bring the L2-aware DRAM model's point nearer
Nsight Compute on the profiled rows? Not part of the tool: the evidence behind
docs/model.md's "Capacity rules tried and rejected" (issue 23).

The model holds a line once per L2 partition (the GPU table's L2 bytes /
2 partitions a side). How many lines the H200 really holds twice is not
known (fabric crossings are 0.75-1.58 of the DRAM bytes read on the
recording), so two other rules bracket it:
  one copy    the point with the L2 doubled (a whole L2 a side: no line held
              twice);
  mean        the mean of the points with the L2 scaled by each of --factors
              (every share of lines held twice equally likely).
Each row of the reports is run through `cuflash-roofline model` with an edited
copy of the GPU table; the script prints the rows where a rule's point is
outside ±25 % of ncu's DRAM bytes (read + write) and, per rule, how many of
the rows are within.

usage: l2_capacity_what_if.py [--tool build/app/cuflash-roofline]
                              [--reports 'results/h200/profile/misses-*.json']
                              [--factors 1,1.25,1.5,1.75,2] [--gpu h200]
"""
import argparse
import glob
import gzip
import json
import os
import subprocess
import tempfile


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def edited_table(table, gpu, edit, path):
    """A copy of the GPU table with `edit` applied to the row of `gpu`,
    written to `path` (for `model --gpu-table`)."""
    edited = json.loads(json.dumps(table))
    for entry in edited["gpus"]:
        if entry["id"] == gpu:
            edit(entry)
    with open(path, "w") as f:
        json.dump(edited, f)
    return path


def scaled_table(table, gpu, factor, directory):
    def scale(entry):
        entry["l2_bytes"]["value"] = int(entry["l2_bytes"]["value"] * factor)
    return edited_table(table, gpu, scale, os.path.join(directory, f"gpus-{factor}.json"))


def profiled_rows(pattern):
    """(report path, row, ncu's DRAM bytes read + written) of every profiled
    ok row of the reports matching `pattern`."""
    for path in sorted(glob.glob(pattern)):
        for row in load(path)["results"]:
            levels = row.get("profile", {}).get("levels")
            if row.get("status") == "ok" and levels:
                yield path, row, levels["dram"]["bytes"]


def model_traffic(tool, table, gpu, row, directory):
    """The `traffic` object `model` gives the profiled row's kernel and shape
    with the GPU table `table`, or None where the model has no row for it."""
    out = os.path.join(directory, "row.json")
    args = [tool, "model", "--gpu", gpu, "--gpu-table", table, "--kernels", row["kernel"],
            "--batch", str(row["batch"]), "--heads", str(row["heads"]),
            "--head-dims", str(row["head_dim"]), "--dtype", row["dtype"],
            "--causal" if row["causal"] else "--no-causal", "--json", out]
    kv_heads, kv_len = row.get("kv_heads", row["heads"]), row.get("kv_len", row["seq_len"])
    if kv_heads != row["heads"]:
        args += ["--kv-heads", str(kv_heads)]
    if kv_len != row["seq_len"]:
        args += ["--q-lens", str(row["seq_len"]), "--kv-lens", str(kv_len)]
    else:
        args += ["--seq-lens", str(row["seq_len"])]
    if row.get("page_size"):
        args += ["--page-size", str(row["page_size"])]
    if row["direction"] == "backward":
        args += ["--backward"]
    subprocess.run(args, check=True, capture_output=True)
    rows = [r for r in load(out)["results"]
            if r["kernel"] == row["kernel"] and r["direction"] == row["direction"]]
    return rows[0]["traffic"] if rows else None


def model_bytes(tool, table, gpu, row, directory):
    traffic = model_traffic(tool, table, gpu, row, directory)
    return traffic["by_model"].get("l2_aware") if traffic else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", default="build/app/cuflash-roofline")
    parser.add_argument("--reports", default="results/h200/profile/misses-*.json")
    parser.add_argument("--factors", default="1,1.25,1.5,1.75,2")
    parser.add_argument("--gpu", default="h200")
    args = parser.parse_args()
    factors = [float(f) for f in args.factors.split(",")]
    table = load("configs/gpus.json")
    within = {"model": 0, "one copy": 0, "mean": 0}
    total = 0
    with tempfile.TemporaryDirectory() as directory:
        tables = {f: scaled_table(table, args.gpu, f, directory) for f in set(factors + [1.0, 2.0])}
        for path, row, measured in profiled_rows(args.reports):
            points = {f: model_bytes(args.tool, tables[f], args.gpu, row, directory)
                      for f in tables}
            if any(v is None for v in points.values()):
                continue
            rules = {"model": points[1.0], "one copy": points[2.0],
                     "mean": sum(points[f] for f in factors) / len(factors)}
            total += 1
            inside = {k: abs(v / measured - 1) <= 0.25 for k, v in rules.items()}
            for k, ok in inside.items():
                within[k] += ok
            if not all(inside.values()):
                print(f"{os.path.basename(path):26} {row['kernel']:10} {row['dtype']} "
                      f"B{row['batch']} H{row['heads']} N{row['seq_len']} d{row['head_dim']} "
                      f"{'causal' if row['causal'] else 'full':6} ncu {measured / 1e9:8.3f} GB  "
                      + "  ".join(f"{k} {v / 1e9:8.3f}" for k, v in rules.items()))
    print(f"rows: {total}; point within ±25 % of ncu: "
          + ", ".join(f"{k} {n}" for k, n in within.items()))


if __name__ == "__main__":
    main()
