#!/usr/bin/env python3
"""Where a kernel's warps wait, by SASS opcode, from Nsight Compute's source page.

Reads what `ncu --import R --page source --csv --print-source sass` wrote (plain
or gzipped; tests/gpu/device_run.sh bwd_source keeps such files) and sums every
numeric column over the instructions of each opcode (the mnemonic without its
modifiers, or with them under --modifiers): executed instructions and the warp
stall samples, all and by reason. Prints the opcodes with the most samples,
each column's share of its total, so two kernels' tables read side by side.

usage: sass_hotspots.py FILE [FILE ...] [--top N] [--modifiers] [--columns] [--reasons]

--reasons prints instead each stall reason's samples over the whole kernel
(the totals docs/perf-notes.md compares between kernels).
"""
import argparse
import csv
import gzip
import io
import re
import sys


def read_rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as handle:
        text = handle.read()
    # ncu prints lines of its own ("==PROF==", a kernel's name) before the table.
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"Address"')), None)
    if start is None:
        sys.exit(f"sass_hotspots.py: no source table (a line starting \"Address\") in {path}")
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))


def number(text):
    try:
        return float(text.replace(",", ""))
    except (AttributeError, ValueError):
        return None


def opcode(source, keep_modifiers):
    words = source.split()
    # A predicate (@P0, @!PT) comes before the opcode.
    while words and words[0].startswith("@"):
        words = words[1:]
    if not words:
        return "?"
    op = words[0].rstrip(";")
    return op if keep_modifiers else op.split(".")[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--modifiers", action="store_true", help="group by opcode with modifiers")
    parser.add_argument("--columns", action="store_true", help="list the numeric columns and stop")
    parser.add_argument("--reasons", action="store_true",
                        help="each stall reason's samples over the kernel instead of by opcode")
    args = parser.parse_args()
    for path in args.files:
        rows = read_rows(path)
        numeric = [c for c in rows[0] if c not in ("Address", "Source") and
                   any(number(r[c]) is not None for r in rows[:50])]
        if args.columns:
            print(path)
            for column in numeric:
                print("  ", column)
            continue
        sums = {}
        totals = dict.fromkeys(numeric, 0.0)
        for row in rows:
            op = opcode(row.get("Source", ""), args.modifiers)
            bucket = sums.setdefault(op, dict.fromkeys(numeric, 0.0))
            for column in numeric:
                value = number(row[column]) or 0.0
                bucket[column] += value
                totals[column] += value
        samples = next((c for c in numeric if re.search(r"Sampling \(All", c)), numeric[0])
        executed = next((c for c in numeric if c.startswith("Instructions Executed")), None)
        stall_columns = [c for c in numeric if "stall" in c.lower() or "Sampling" in c]
        print(f"== {path}: {len(rows)} instructions; {samples}: {totals[samples]:.0f}"
              + (f"; {executed}: {totals[executed]:.0f}" if executed else ""))
        if args.reasons:
            for column in stall_columns:
                if column.startswith("stall_") and "Not Issued" not in column and totals[column]:
                    print(f"  {column:<24} {totals[column]:9.0f}  "
                          f"{100 * totals[column] / max(totals[samples], 1):5.1f} %")
            continue
        ranked = sorted(sums.items(), key=lambda item: -item[1][samples])[: args.top]
        for op, bucket in ranked:
            parts = [f"{op:<14}", f"samples {100 * bucket[samples] / max(totals[samples], 1):5.1f} %"]
            if executed:
                parts.append(f"executed {100 * bucket[executed] / max(totals[executed], 1):5.1f} %")
            # Each reason also has a "(Not Issued)" column, a subset of it.
            top_reasons = sorted(((bucket[c], c) for c in stall_columns if c != samples
                                  and "Not-issued" not in c and "Not Issued" not in c),
                                 reverse=True)[:3]
            parts.append(", ".join(f"{c.split('(')[0].strip()[-40:]} {v:.0f}"
                                   for v, c in top_reasons if v > 0))
            print("  ".join(parts))


if __name__ == "__main__":
    main()
