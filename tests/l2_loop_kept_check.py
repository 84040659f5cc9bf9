#!/usr/bin/env python3
"""Every l2_loop_kept_bytes of configs/gpus.json is what its committed probe
runs give: the source names results/<gpu>/l2-loop-<commit>/ directories, and
tests/gpu/l2_loop_table.py's kept_whole over every run in them (each
CTAs-an-SM count and work load) equals the figure. Run by .ci/test; exit 1 on a mismatch.
"""
import json
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "gpu"))
import l2_loop_table  # noqa: E402
from l2_loop_table import runs_in  # noqa: E402


def main():
    with open(os.path.join(root, "configs", "gpus.json")) as f:
        table = json.load(f)
    failures = 0
    checked = 0
    for gpu in table["gpus"]:
        figure = gpu.get("l2_loop_kept_bytes")
        if figure is None:
            continue
        named = sorted(set(re.findall(r"results/[\w.-]+/l2-loop-[0-9a-f]+(?:-[a-z]+)?/", figure["source"])))
        if not named:
            print(f"{gpu['id']}: l2_loop_kept_bytes' source names no results/<gpu>/l2-loop-<commit>/")
            failures += 1
            continue
        empty = [d for d in named if not list(runs_in(os.path.join(root, d)))]
        if empty:
            print(f"{gpu['id']}: l2_loop_kept_bytes' source names {', '.join(empty)}, "
                  "which holds no probe runs (events-<k>[-w<work>].csv)")
            failures += 1
            continue
        runs = [l2_loop_table.launches(os.path.join(root, directory), per_sm, work)
                for directory in named for per_sm, work in runs_in(os.path.join(root, directory))]
        kept, missed = l2_loop_table.kept_whole(runs)
        checked += 1
        where = ", ".join(named)
        if kept != figure["value"]:
            print(f"{gpu['id']}: l2_loop_kept_bytes {figure['value']:g}, but {len(runs)} runs in "
                  f"{where} keep {kept} B whole (first missed: {missed})")
            failures += 1
        else:
            print(f"{gpu['id']}: {kept:.0f} B kept whole over {len(runs)} runs of {where}")
    print(f"{checked} GPU figures checked, {failures} wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
