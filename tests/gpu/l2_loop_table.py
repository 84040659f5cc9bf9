#!/usr/bin/env python3
"""The table of tests/gpu/l2_loop_probe.cu's runs (device_run.sh's l2_loop
step): for each working set W and order, the DRAM bytes Nsight Compute counted
in the launch against the compulsory W and against every CTA's reads (C x W).

  re-read share = (DRAM read - W) / (C x W - W): the share of the repeat reads
  that missed. A strict LRU of capacity K gives 0 while W <= K and 1 above it
  in the stagger order.

  --kept prints instead the loop the L2 keeps whole, the GPU table's
  l2_loop_kept_bytes (docs/model.md §5): over the stagger launches of every
  run given (--per-sm and --work take lists), the largest W up to which every
  W measured had a re-read share under KEPT_SHARE, and the smallest W where one
  did not. A run that did not measure a size neither supports nor refutes it
  (the work runs measure fewer sizes).

usage: l2_loop_table.py results/h200/l2-loop [--per-sm 4] [--work 0] [--kept]
"""
import argparse
import csv
import glob
import os
import re


def number(text):
    """ncu --print-units base writes thousands separators."""
    return float(text.replace(",", ""))


def rows_of(path):
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#") and line.strip()]
    return list(csv.DictReader(lines))


def ncu_rows(path):
    with open(path) as f:
        lines = [line for line in f if line.startswith('"')]
    table = list(csv.DictReader(lines))
    # The second row holds the units.
    return [row for row in table[1:] if "cyclic_read" in row.get("Kernel Name", "")]


def launches(directory, per_sm, work="0"):
    """Each launch of a run: its event line, its ncu row, W (the bytes a CTA
    reads), the DRAM bytes read and the re-read share (NaN with one CTA)."""
    suffix = f"-w{work}" if str(work) != "0" else ""
    events = rows_of(os.path.join(directory, f"events-{per_sm}{suffix}.csv"))
    counted = ncu_rows(os.path.join(directory, f"ncu-{per_sm}{suffix}.csv"))
    if len(events) != len(counted):
        raise SystemExit(f"{len(events)} launches timed but {len(counted)} profiled")
    result = []
    for event, row in zip(events, counted):
        requested = float(event["requested_bytes"])
        ctas = int(event["ctas"])
        size = requested / ctas
        read = number(row["dram__bytes_read.sum"])
        share = (read - size) / (requested - size) if ctas > 1 else float("nan")
        result.append({"event": event, "row": row, "size": size, "ctas": ctas, "read": read,
                       "share": share})
    return result


def runs_in(directory):
    """(CTAs an SM, work) of each events CSV in the directory."""
    for path in sorted(glob.glob(os.path.join(directory, "events-*.csv"))):
        match = re.fullmatch(r"events-(\d+)(?:-w(\d+))?\.csv", os.path.basename(path))
        if match:
            yield match.group(1), match.group(2) or "0"


# Whole: the re-reads added under a ten-thousandth of their bytes to DRAM's
# reads. The H100's ten runs (results/h100/l2-loop-08875c8, -582a44f, -47b0653)
# added at most 69.6 KB at W <= 22 MiB (a share of 6.3e-6 at most) and 6.6 MB or
# more at 24 MiB (5.5e-4 at least), so the line falls in a gap of over 85 times.
KEPT_SHARE = 1e-4


def kept_whole(runs):
    """(largest W kept whole, smallest W not) in bytes over the stagger
    launches of `runs` (lists of launches); None where every W was kept."""
    stagger = [launch for run in runs for launch in run
               if launch["event"]["order"] == "stagger" and launch["ctas"] > 1]
    missed = [launch["size"] for launch in stagger if not launch["share"] < KEPT_SHARE]
    first_missed = min(missed) if missed else None
    kept = [launch["size"] for launch in stagger
            if first_missed is None or launch["size"] < first_missed]
    return (max(kept) if kept else None), first_missed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--per-sm", default="4")
    parser.add_argument("--work", default="0", help="FMAs a thread after each chunk")
    parser.add_argument("--kept", action="store_true", help="print the loop kept whole")
    args = parser.parse_args()
    if args.kept:
        runs = [launches(args.directory, per_sm, work)
                for per_sm in args.per_sm.split(",") for work in args.work.split(",")]
        kept, missed = kept_whole(runs)
        print(f"runs: CTAs an SM {args.per_sm}, work {args.work}; re-read share under {KEPT_SHARE:g}")
        print(f"kept whole up to W = {kept:.0f} B ({kept / 2**20:g} MiB)" if kept else "kept: none")
        print(f"first W missed: {missed:.0f} B ({missed / 2**20:g} MiB)" if missed else "none missed")
        return
    print(f"{'order':8} {'W MiB':>6} {'CTAs':>5} {'DRAM read GB':>12} {'x W':>7} "
          f"{'re-read share':>13} {'fabric/read':>11} {'event ms':>9} {'ncu ms':>8}")
    for launch in launches(args.directory, args.per_sm, args.work):
        event, row, read = launch["event"], launch["row"], launch["read"]
        fabric = number(row.get("lts__t_sectors_srcunit_ltcfabric.sum", "nan")) * 32
        print(f"{event['order']:8} {float(event['MiB']):6.0f} {launch['ctas']:5d} {read / 1e9:12.3f} "
              f"{read / launch['size']:7.2f} {launch['share']:13.4f} {fabric / read:11.2f} "
              f"{float(event['event_ms']):9.3f} {number(row['gpu__time_duration.sum']) / 1e6:8.3f}")


if __name__ == "__main__":
    main()
