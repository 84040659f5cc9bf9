#!/usr/bin/env python3
"""torch's scaled_dot_product_attention backends as peers in our reports.

Times torch.nn.functional.scaled_dot_product_attention with one backend forced
at a time (flash, cudnn, efficient, math) over the axes of `cuflash-roofline
sweep`, with the sweep's axis and timing flags and the same cold timer, and
compares each backend's output with an fp32 materialized reference. The served
shapes (--q-lens, --kv-lens, --kv-heads, --preset) go to torch with enable_gqa
and its bottom-right causal mask; a paged cache (--page-size), which SDPA has
none of, is a skipped row (docs/peers.md, "Served shapes"). It writes
what it measured (raw samples, docs/peers.md), then has the tool compute the
report: `cuflash-roofline import-samples` derives every figure as `sweep` does,
so the report (schema cuflash-roofline/report/v1) is read by `audit`, `table`,
`compare` and `plot` like any other.

With --backward it times each backend's backward alone instead: the forward
run once, then torch.autograd.grad(out, (q, k, v), dO) per launch under the
same timer, dQ, dK and dV checked against an fp32 reference backward (as many
keys as queries and a contiguous cache; GQA with enable_gqa, dK and dV summed
over a K/V head's query heads).

Needs Python 3.11+, torch with CUDA, and the built tool (--tool). The command
line is checked, with the tool, before torch is imported.
"""

import argparse
import os
import platform
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from torch_peer import raw_samples, tool as tools  # noqa: E402
from torch_peer.stop_rule import TimingOptions  # noqa: E402
from torch_peer.tree_info import tree_state  # noqa: E402

TOOL_NAME = "cuflash-roofline/peers/torch_sdpa"
BACKEND_NAMES = ("flash", "cudnn", "efficient", "math")


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
    # The axes' grammar and defaults are the tool's: import-samples --plan
    # parses them, and a flag not given is not passed.
    p.add_argument("--seq-lens", help="sequence lengths, of the queries and the keys alike: "
                                      "list and/or ranges, e.g. 1024:16384:x2 (the sweep's "
                                      "default)")
    p.add_argument("--q-lens", help="query tokens, apart from the keys (1 where only --kv-lens "
                                    "is given)")
    p.add_argument("--kv-lens", help="keys (the K/V cache), apart from the queries; a causal "
                                     "mask is bottom-right aligned")
    p.add_argument("--head-dims", help="head dims (default 64)")
    p.add_argument("--batch", help="batch sizes (default 1)")
    p.add_argument("--heads", help="query head counts (default 8)")
    p.add_argument("--kv-heads", help="K/V head counts (GQA, MQA), each dividing every --heads "
                                      "(default: as many as --heads)")
    p.add_argument("--page-size", help="a paged K/V cache of this many tokens a page (0: "
                                       "contiguous); torch SDPA has none, so such rows are "
                                       "skipped")
    p.add_argument("--preset", help="a model's heads, K/V heads and head dim (the tool's "
                                    "configs/models.json: llama3-8b, ...)")
    mask = p.add_mutually_exclusive_group()
    mask.add_argument("--causal", action="store_true", help="causal mask only")
    mask.add_argument("--no-causal", action="store_true", help="no mask (the default)")
    mask.add_argument("--both", action="store_true", help="both causal and not")
    p.add_argument("--dtype", "--dtypes", dest="dtypes",
                   help="element types: fp16, bf16, fp32 (a list; default fp16)")
    p.add_argument("--backward", action="store_true",
                   help="time each backend's backward alone (torch.autograd.grad of its "
                        "forward, run once), checking dQ, dK, dV; as many keys as queries "
                        "(GQA included), other shapes are skipped rows")
    p.add_argument("--backends", default="",
                   help="flash, cudnn, efficient, math (default: every one this torch has)")
    p.add_argument("--gpu", default="auto", help="ceiling: a GPU table id or 'auto'")
    p.add_argument("--gpu-table", default="", help="GPU table JSON (default: the tool's own)")
    p.add_argument("--ceiling", default="datasheet",
                   help="roof to judge against: datasheet or a `ceilings` JSON file")
    p.add_argument("--flop-convention", default="exact",
                   help="causal FLOP count: exact (unmasked pairs) or half (dense / 2)")
    p.add_argument("--json", required=True, help="write the report JSON to PATH ('-' for stdout)")
    p.add_argument("--samples", default="",
                   help="write the raw samples to PATH (default: --json's path with "
                        ".samples.json for .json; required with --json -)")
    p.add_argument("--tool", default=tools.default_tool(REPO_ROOT),
                   help="the built cuflash-roofline, which plans the problems and computes "
                        "the report (default: build/app/cuflash-roofline)")
    p.add_argument("--devices", default="0", help="the CUDA device to measure on (one index)")
    p.add_argument("--hot", action="store_true", help="do not flush L2 before each sample")
    p.add_argument("--l2-flush", choices=("read", "memset"), default=t.l2_flush_mode,
                   help="how L2 is flushed before each sample (the tool's --l2-flush)")
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
                   help="largest Nq x Nk working set the math backend may take "
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


def check_output_path(option, path):
    """An output that cannot be written is found out now, not after the GPU work."""
    folder = os.path.dirname(os.path.abspath(path))
    if path != "-" and not (os.path.isdir(folder) and os.access(folder, os.W_OK)):
        raise CommandLineError(f"{option} {path}: folder {folder} is missing or not writable")


def samples_path(args):
    if args.samples:
        return args.samples
    if args.json == "-":
        raise CommandLineError("--json -: name the raw samples file with --samples PATH")
    stem = args.json[:-len(".json")] if args.json.endswith(".json") else args.json
    return stem + ".samples.json"


def main(argv):
    try:
        args = parse_arguments(argv)
        backends = parse_backends(args.backends)
        device = parse_device(args.devices)
        check_output_path("--json", args.json)
        samples = samples_path(args)
        check_output_path("--samples", samples)
        tool = tools.check_tool(args.tool)
        problems = tools.plan(tool, args)
    except (CommandLineError, tools.ToolError) as error:
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
                           flush_l2=not args.hot, l2_flush_mode=args.l2_flush,
                           throttle_threshold=args.throttle_threshold / 100)
    commit, dirty, how = tree_state(REPO_ROOT, args.tree_stamp or None)
    print(f"torch_sdpa.py: {how}", file=sys.stderr)
    tool_record = {"name": TOOL_NAME, "version": project_version(), "git_commit": commit,
                   "git_dirty": dirty}
    measured = run_measurement(args, problems, backends, device, timing, tool_record,
                               raw_samples.provenance(" ".join(sys.argv)), samples, platform)
    if measured == 2:
        return 2
    try:
        imported = tools.import_samples(tool, samples, args.json, args)
    except tools.ToolError as error:
        print(f"torch_sdpa.py: error: {error}", file=sys.stderr)
        return 2
    return 130 if measured == 130 else imported


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
