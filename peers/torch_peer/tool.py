"""The C++ tool, which the peer script asks rather than repeats: `import-samples
--plan` lists the problems of the sweep's axis flags (and checks the ceiling
options before any GPU work), `import-samples RAW` computes every figure of the
report from the raw samples (docs/peers.md). Runs without torch.
"""

import json
import os
import subprocess
from dataclasses import dataclass, field

# The problem keys this script measures; a problem with others (a key length
# of its own, fewer K/V heads, a paged cache) it cannot measure yet.
PROBLEM_KEYS = {"dtype", "batch", "heads", "seq_len", "head_dim", "causal"}
ERROR_PREFIX = "cuflash-roofline: error: "


class ToolError(Exception):
    """The tool refused, or could not be run: one line, exit status 2."""


def default_tool(repo_root):
    """The binary of the build the README describes (meson setup build)."""
    return os.path.join(repo_root, "build", "app", "cuflash-roofline")


def check_tool(path):
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ToolError(f"--tool {path}: no such executable (build the tool, or name it with "
                        "--tool)")
    return path


@dataclass(frozen=True)
class Problem:
    """One problem as the tool serializes it (report_json.hpp problem_json);
    `record` is that object, written back unchanged into the raw samples."""

    batch: int
    heads: int
    seq_len: int
    head_dim: int
    causal: bool
    dtype: str
    record: dict = field(compare=False, repr=False)

    @staticmethod
    def from_json(record):
        unknown = sorted(set(record) - PROBLEM_KEYS)
        if unknown:
            raise ToolError(f"the tool planned a problem with {', '.join(unknown)}, which this "
                            "script cannot measure yet")
        return Problem(record["batch"], record["heads"], record["seq_len"], record["head_dim"],
                       record["causal"], record["dtype"], record)

    def heads_total(self):
        return self.batch * self.heads

    def describe(self):
        """The problem half of a progress line."""
        mask = " causal" if self.causal else ""
        return (f"{self.dtype} B={self.batch} H={self.heads} N={self.seq_len} "
                f"d={self.head_dim}{mask}")


def axis_arguments(args):
    """The sweep's axis flags the user gave; the tool has the defaults."""
    out = []
    for flag, value in (("--seq-lens", args.seq_lens), ("--head-dims", args.head_dims),
                        ("--batch", args.batch), ("--heads", args.heads),
                        ("--dtype", args.dtypes)):
        if value is not None:
            out += [flag, value]
    for flag, given in (("--causal", args.causal), ("--no-causal", args.no_causal),
                        ("--both", args.both)):
        if given:
            out.append(flag)
    return out


def ceiling_arguments(args):
    """The options the import judges the samples by."""
    out = ["--gpu", args.gpu, "--ceiling", args.ceiling, "--flop-convention",
           args.flop_convention]
    return out + (["--gpu-table", args.gpu_table] if args.gpu_table else [])


def _refusal(result):
    """The tool's one-line error, without its prefix."""
    lines = result.stderr.strip().splitlines()
    line = lines[-1] if lines else f"exit status {result.returncode}"
    return line.removeprefix(ERROR_PREFIX)


def plan(tool, args):
    """The problems to measure, in the sweep's loop order; ToolError when the
    tool refuses an axis or a ceiling option."""
    try:
        result = subprocess.run([tool, "import-samples", "--plan", *axis_arguments(args),
                                 *ceiling_arguments(args)], capture_output=True, text=True,
                                timeout=120, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        raise ToolError(f"--tool {tool}: {error}") from None
    if result.returncode != 0:
        raise ToolError(_refusal(result))
    return [Problem.from_json(record) for record in json.loads(result.stdout)["problems"]]


def import_samples(tool, samples_path, report_path, args):
    """Runs the import; its table and messages go to this script's stdout and
    stderr. Returns its exit status (0, 1 when a row failed, 2)."""
    command = [tool, "import-samples", samples_path, *ceiling_arguments(args), "--json",
               report_path]
    try:
        return subprocess.run(command, check=False).returncode
    except (OSError, subprocess.SubprocessError) as error:
        raise ToolError(f"--tool {tool}: {error}") from None
