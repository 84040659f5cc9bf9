#!/usr/bin/env python3
"""fa2bwd_variants' times over torch's flash backward of the same session.

Reads DIR/variants.txt (tests/gpu/fa2bwd_variants' output) and
DIR/flash-backward.json (peers/torch_sdpa.py --backward --backends flash), as
device_run.sh's fa2bwd_vs_flash step writes them, and prints each variant's
median time over flash's median on every (d, N, mask) both timed: below 1.000
the variant is faster.

usage: variants_vs_flash.py DIR
"""
import json
import re
import sys


def flash_medians(directory):
    """(head_dim, seq_len, causal) -> flash's median ms."""
    with open(f"{directory}/flash-backward.json") as handle:
        report = json.load(handle)
    return {(row["head_dim"], row["seq_len"], int(bool(row["causal"]))): row["timing"]["median_ms"]
            for row in report["results"]}


def variant_medians(directory):
    """variant -> {(head_dim, seq_len, causal): median ms} from its timed lines
    (name, N, causal, d, shared bytes, median ms, ...)."""
    rows = {}
    with open(f"{directory}/variants.txt") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) > 6 and re.match(r"^2d_", fields[0]) and fields[1].isdigit():
                key = (int(fields[3]), int(fields[1]), int(fields[2]))
                rows.setdefault(fields[0], {})[key] = float(fields[5])
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    flash = flash_medians(sys.argv[1])
    rows = variant_medians(sys.argv[1])
    keys = sorted(flash)
    print("variant ÷ flash time".ljust(28),
          " ".join(f"d{d}N{n // 1024}K{'c' if causal else ''}".rjust(9) for d, n, causal in keys))
    print("flash ms".ljust(28), " ".join(f"{flash[k]:9.4f}" for k in keys))
    for name, medians in sorted(rows.items()):
        print(name.ljust(28),
              " ".join(f"{medians[k] / flash[k]:9.3f}" if k in medians else " " * 9 for k in keys))


if __name__ == "__main__":
    main()
