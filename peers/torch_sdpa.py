#!/usr/bin/env python3
"""torch's scaled_dot_product_attention backends as peers in our reports.

Times torch.nn.functional.scaled_dot_product_attention with one backend forced
at a time (flash, cudnn, efficient, math) over the axes of `cuflash-roofline
sweep`, with the sweep's axis and timing flags and the same cold timer, checks
each backend against an fp32 materialized reference before timing it, and
writes a report in schema cuflash-roofline/report/v1 that `audit`, `table`,
`compare` and `plot` read. See docs/peers.md.

Needs Python 3.11+ and torch with CUDA; nothing else. The command line is
checked before torch is imported.
"""

import argparse
import os
import platform
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from roofline_port import axes, ceiling as ceilings, figures, report as reports  # noqa: E402
from roofline_port.stop_rule import TimingOptions  # noqa: E402
from roofline_port.tree_info import tree_state  # noqa: E402

TOOL_NAME = "cuflash-roofline/peers/torch_sdpa"
BACKEND_NAMES = ("flash", "cudnn", "efficient", "math")
DEFAULT_GPU_TABLE = "configs/gpus.json"


class CommandLineError(Exception):
    """Bad input: one line, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        raise CommandLineError(message)


def ranged(kind, low, high):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            noun = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"'{text}' is not {noun}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not in [{low}, {high}]")
        return value
    return parse


def parse_arguments(argv):
    p = OneLineParser(prog="torch_sdpa.py", description=__doc__.split("\n\n")[0])
    t = TimingOptions()
    a = axes.AxisOptions()
    p.add_argument("--seq-lens", default=a.seq_lens,
                   help="sequence lengths: list and/or ranges, e.g. 1024:16384:x2")
    p.add_argument("--head-dims", default=a.head_dims, help="head dims")
    p.add_argument("--batch", default=a.batch, help="batch sizes")
    p.add_argument("--heads", default=a.heads, help="head counts")
    mask = p.add_mutually_exclusive_group()
    mask.add_argument("--causal", action="store_true", help="causal mask only")
    mask.add_argument("--no-causal", action="store_true", help="no mask (the default)")
    mask.add_argument("--both", action="store_true", help="both causal and not")
    p.add_argument("--dtype", "--dtypes", dest="dtypes", default=a.dtypes,
                   help="element types: fp16, bf16, fp32 (a list)")
    p.add_argument("--backends", default="",
                   help="flash, cudnn, efficient, math (default: every one this torch has)")
    p.add_argument("--gpu", default="auto", help="ceiling: a GPU table id or 'auto'")
    p.add_argument("--gpu-table", default="", help=f"GPU table JSON (default {DEFAULT_GPU_TABLE})")
    p.add_argument("--ceiling", default="datasheet",
                   help="roof to judge against: datasheet or a `ceilings` JSON file")
    p.add_argument("--flop-convention", default="exact", choices=figures.FLOP_CONVENTIONS)
    p.add_argument("--json", required=True, help="write the report JSON to PATH ('-' for stdout)")
    p.add_argument("--devices", default="0", help="the CUDA device to measure on (one index)")
    p.add_argument("--hot", action="store_true", help="do not flush L2 before each sample")
    p.add_argument("--warmup", type=ranged(int, 0, 1000), default=t.warmup_runs)
    p.add_argument("--min-samples", type=ranged(int, 1, 100000), default=t.min_samples)
    p.add_argument("--max-noise", type=ranged(float, 0.0, 100.0),
                   default=t.target_rel_stdev * 100,
                   help="stop sampling once the relative stdev is below this, in percent "
                        "(as nvbench's --max-noise)")
    p.add_argument("--throttle-threshold", type=ranged(float, 0.0, 100.0),
                   default=t.throttle_threshold * 100,
                   help="discard (and count) a sample whose SM clock reads below this percent "
                        "of the device's max clock; 0 keeps every sample (as nvbench's "
                        "--throttle-threshold)")
    p.add_argument("--max-seconds", type=ranged(float, 0.01, 3600.0), default=t.max_seconds,
                   help="time cap per configuration (s)")
    p.add_argument("--seed", type=ranged(int, 0, (1 << 64) - 1), default=20261202)
    p.add_argument("--math-budget-gib", type=ranged(float, 0.0, 1e6), default=None,
                   help="largest N x N working set the math backend may take "
                        "(default: half the device's memory)")
    p.add_argument("--tree-stamp", default="",
                   help="the build's peers/tree_stamp.json, for the commit where .git is absent")
    return p.parse_args(argv)


def parse_backends(text):
    if not text:
        return None  # every backend this torch has; decided once torch is loaded
    chosen = []
    for name in text.split(","):
        if name not in BACKEND_NAMES:
            raise CommandLineError(
                f"--backends: unknown backend '{name}' ({', '.join(BACKEND_NAMES)})")
        if name not in chosen:
            chosen.append(name)
    return chosen


def parse_device(text):
    if not re.fullmatch(r"[0-9]+", text):
        raise CommandLineError(f"--devices: '{text}' is not one device index (this script "
                               "measures on one device)")
    return int(text)


def project_version():
    """meson.build's project version: the script is part of the project."""
    try:
        with open(os.path.join(REPO_ROOT, "meson.build"), encoding="utf-8") as file:
            match = re.search(r"version\s*:\s*'([^']+)'", file.read())
    except OSError:
        match = None
    return match.group(1) if match else "unknown"


def check_report_path(path):
    """A report that cannot be written is found out now, not after the GPU work."""
    folder = os.path.dirname(os.path.abspath(path))
    if path != "-" and not (os.path.isdir(folder) and os.access(folder, os.W_OK)):
        raise CommandLineError(f"--json {path}: folder {folder} is missing or not writable")


def load_ceiling_table(path):
    shown = path or DEFAULT_GPU_TABLE
    document = ceilings.load_json(path or os.path.join(REPO_ROOT, DEFAULT_GPU_TABLE))
    return ceilings.parse_gpu_table(document, shown), shown


def main(argv):
    try:
        args = parse_arguments(argv)
        problems = axes.plan_problems(axes.AxisOptions(
            args.seq_lens, args.head_dims, args.batch, args.heads, args.causal, args.no_causal,
            args.both, args.dtypes))
        backends = parse_backends(args.backends)
        device = parse_device(args.devices)
        check_report_path(args.json)
        table, table_origin = load_ceiling_table(args.gpu_table)
        if args.gpu != "auto":
            ceilings.choose_gpu(table, table_origin, args.gpu, None)
    except (CommandLineError, axes.AxisError, ceilings.CeilingError) as error:
        print(f"torch_sdpa.py: error: {error}", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401 - only to fail early, in one line, where it is missing
    except ImportError as error:
        print(f"torch_sdpa.py: error: {error}: this script needs torch with CUDA", file=sys.stderr)
        return 2
    from torch_peer.measured_sweep import run_measurement

    timing = TimingOptions(warmup_runs=args.warmup, min_samples=args.min_samples,
                           target_rel_stdev=args.max_noise / 100, max_seconds=args.max_seconds,
                           flush_l2=not args.hot,
                           throttle_threshold=args.throttle_threshold / 100)
    commit, dirty, how = tree_state(REPO_ROOT, args.tree_stamp or None)
    print(f"torch_sdpa.py: {how}", file=sys.stderr)
    tool = {"name": TOOL_NAME, "version": project_version(), "git_commit": commit,
            "git_dirty": dirty}
    provenance = {"source": "measured", "auditable": False, "reasons": [],
                  "created_utc": reports.utc_now_iso8601(), "command": " ".join(sys.argv),
                  "host": reports.host_name()}
    return run_measurement(args, problems, backends, device, timing, table, table_origin, tool,
                           provenance, platform)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
