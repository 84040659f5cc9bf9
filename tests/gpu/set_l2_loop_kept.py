#!/usr/bin/env python3
"""Write a GPU's l2_loop_kept_bytes into configs/gpus.json from the loop
probe's committed runs (results/<gpu>/l2-loop-<commit>/, device_run.sh
l2_loop), with a source that names the directories and what they measured.
tests/l2_loop_kept_check.py recomputes the figure on CI.

usage: set_l2_loop_kept.py GPU_ID DIR [DIR ...]
  e.g. set_l2_loop_kept.py h200 results/h200/l2-loop-14b5179/
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import l2_loop_table  # noqa: E402
from l2_loop_table import runs_in  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def describe(directories):
    """The runs and the kept figure, as the source string says them."""
    runs, labels, devices = [], [], set()
    for directory in directories:
        gpu_txt = os.path.join(root, directory, "gpu.txt")
        if os.path.exists(gpu_txt):
            with open(gpu_txt) as f:
                devices.add(f.readline().strip())
        for per_sm, work in runs_in(os.path.join(root, directory)):
            run = l2_loop_table.launches(os.path.join(root, directory), per_sm, work)
            runs.append(run)
            # What this run alone measured: the sizes it kept whole and missed.
            own_kept, own_missed = l2_loop_table.kept_whole([run])
            label = f"{per_sm} CTAs an SM, " + (f"{work} FMAs between chunks" if work != "0" else "idle")
            label += f": kept {own_kept / 2**20:g} MiB" if own_kept else ": kept none"
            if own_missed:
                label += f", missed at {own_missed / 2**20:g}"
            labels.append(f"{os.path.basename(directory.rstrip('/'))} {label}")
    if not runs:
        raise SystemExit(f"no probe runs (events-<k>[-w<work>].csv) in {', '.join(directories)}")
    kept, missed = l2_loop_table.kept_whole(runs)
    if kept is None:
        raise SystemExit("every size measured missed: no loop kept whole")
    shares = [launch["share"] for run in runs for launch in run
              if launch["event"]["order"] == "stagger" and launch["size"] == missed]
    on = f" on {', '.join(sorted(devices))}" if devices else ""
    source = (f"{', '.join(d.rstrip('/') + '/' for d in directories)} (tests/gpu/l2_loop_probe under "
              f"ncu --cache-control all{on}; runs: {'; '.join(labels)}): under "
              f"{l2_loop_table.KEPT_SHARE:g} of the re-reads reached DRAM up to W = "
              f"{kept / 2**20:g} MiB a partition")
    if missed is not None:
        source += (f", {min(shares) * 100:.2f}-{max(shares) * 100:.2f} % at {missed / 2**20:g} MiB "
                   "(tests/gpu/l2_loop_table.py --kept)")
    return kept, source


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    gpu_id, directories = sys.argv[1], sys.argv[2:]
    kept, source = describe(directories)
    path = os.path.join(root, "configs", "gpus.json")
    with open(path) as f:
        table = json.load(f, object_pairs_hook=collections.OrderedDict)
    rows = [row for row in table["gpus"] if row["id"] == gpu_id]
    if not rows:
        raise SystemExit(f"{gpu_id}: not a GPU of configs/gpus.json")
    row = rows[0]
    entries = [(k, v) for k, v in row.items() if k != "l2_loop_kept_bytes"]
    row.clear()
    for key, value in entries:
        row[key] = value
        if key == "l2_bytes":
            row["l2_loop_kept_bytes"] = {"value": int(kept), "source": source}
    with open(path, "w") as f:
        f.write(json.dumps(table, indent=2, ensure_ascii=False) + "\n")
    print(f"{gpu_id}: l2_loop_kept_bytes = {kept:.0f} ({kept / 2**20:g} MiB)\n  source: {source}")


if __name__ == "__main__":
    main()
