"""The C++ tool, which the peer script asks rather than repeats: `import-samples
--plan` lists the problems of the sweep's axis flags (and checks the ceiling
options before any GPU work), `import-samples RAW` computes every figure of the
report from the raw samples (docs/peers.md). Runs without torch.
"""

import json
import os
import subprocess
from dataclasses import dataclass, field

# The problem keys the script knows (report_json.hpp problem_json): a problem
# with another is refused, since the script would not know what it measures.
PROBLEM_KEYS = {"dtype", "batch", "heads", "seq_len", "head_dim", "causal", "kv_len", "kv_heads",
                "page_size"}
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
    `record` is that object, written back unchanged into the raw samples.

    Q and O are [batch, heads, seq_len, head_dim]; K and V [batch, kv_heads,
    kv_len, head_dim]. kv_len, kv_heads and page_size are 0 where the record
    leaves them out (as the tool's AttentionProblem): as many keys as queries,
    as many K/V heads as heads, a contiguous cache."""

    batch: int
    heads: int
    seq_len: int
    head_dim: int
    causal: bool
    dtype: str
    kv_len: int = 0
    kv_heads: int = 0
    page_size: int = 0
    record: dict = field(default=None, compare=False, repr=False)

    @staticmethod
    def from_json(record):
        unknown = sorted(set(record) - PROBLEM_KEYS)
        if unknown:
            raise ToolError(f"the tool planned a problem with {', '.join(unknown)}, which this "
                            "script does not know")
        return Problem(record["batch"], record["heads"], record["seq_len"], record["head_dim"],
                       record["causal"], record["dtype"], record.get("kv_len", 0),
                       record.get("kv_heads", 0), record.get("page_size", 0), record)

    def keys(self):
        return self.kv_len if self.kv_len > 0 else self.seq_len

    def key_heads(self):
        return self.kv_heads if self.kv_heads > 0 else self.heads

    def heads_total(self):
        return self.batch * self.heads

    def grouped(self):
        """GQA or MQA: fewer K/V heads than query heads."""
        return self.key_heads() < self.heads

    def paged(self):
        return self.page_size > 0

    def describe(self):
        """The problem half of a progress line; the served-shape fields only
        where the problem has them."""
        heads = f"{self.heads}/{self.key_heads()}" if self.grouped() else f"{self.heads}"
        lengths = (f"N={self.seq_len}" if self.keys() == self.seq_len
                   else f"Nq={self.seq_len} Nk={self.keys()}")
        page = f" page={self.page_size}" if self.paged() else ""
        mask = " causal" if self.causal else ""
        return (f"{self.dtype} B={self.batch} H={heads} {lengths} "
                f"d={self.head_dim}{page}{mask}")


# The sweep's axis flags that take a value, each with its argparse name.
AXIS_OPTIONS = (("--seq-lens", "seq_lens"), ("--q-lens", "q_lens"), ("--kv-lens", "kv_lens"),
                ("--head-dims", "head_dims"), ("--batch", "batch"), ("--heads", "heads"),
                ("--kv-heads", "kv_heads"), ("--page-size", "page_size"), ("--preset", "preset"),
                ("--dtype", "dtypes"))


def axis_arguments(args):
    """The sweep's axis flags the user gave; the tool has the defaults."""
    out = []
    for flag, name in AXIS_OPTIONS:
        value = getattr(args, name)
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
