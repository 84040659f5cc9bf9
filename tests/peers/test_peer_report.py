"""The peer script's raw samples (peers/torch_peer/measured_sweep.py and
raw_samples.py) without torch: problems planned by the tool, rows planned,
outcomes applied and the document finished exactly as a run does, from
synthetic samples and checks; then the tool's import-samples computes the
report, as the script has it do. The tool must read what the script writes:
the report is consistent and auditable under `audit`, `table`, `compare` and
`plot` accept it, and tampering is caught. The samples are made up: this pins
the writer and the import, not torch's behaviour (the fixture recorded on a GPU
does that, test_peers_fixture)."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from tool_binary import require_tool, run_tool, tool_path

import torch_sdpa
from torch_peer import raw_samples, tool as tools
from torch_peer.backends import (BACKENDS, BACKWARD_SHAPE_REASON, PAGED_REASON, Outcome,
                                 shape_gap)
from torch_peer.measured_sweep import apply_outcome, arithmetic, finish, plan_rows
from torch_peer.reference import checked_tensor
from torch_peer.stop_rule import SampleLog, TimingOptions

H200_DEVICE = {"index": 0, "name": "NVIDIA H200", "cc": "9.0", "sm_count": 132,
               "l2_bytes": 62914560.0, "memory_bytes": 150109880320.0, "clock_MHz": 1980.0,
               "memory_clock_MHz": 3201.0, "driver": "13.0 (580.159.03)", "runtime": "13.0",
               "pci_bus_id": "0000:00:06.0"}
TOOL_RECORD = {"name": "cuflash-roofline/peers/torch_sdpa", "version": "0.1.0",
               "git_commit": "c" * 40, "git_dirty": False}
ENVIRONMENT = {"python": "3.12.3", "torch": "2.11.0+cu130", "torch_cuda": "13.0",
               "cudnn": "9.10.2 (91002)"}


SQUARE_AXES = ("--seq-lens", "256,1000", "--head-dims", "64", "--both")
# Llama 3 8B (32 query heads over 8 K/V heads, d 128): a decoding step and 4
# speculative tokens over 4096 keys, causal, from a contiguous and a paged cache
SERVED_AXES = ("--preset", "llama3-8b", "--q-lens", "1,4", "--kv-lens", "4096", "--batch", "8",
               "--causal", "--page-size", "0,16")


def arguments(gpu="h200", axes=SQUARE_AXES):
    """The script's options, as its command line parses them."""
    return torch_sdpa.parse_arguments(["--json", "unused.json", "--gpu", gpu, *axes])


# The square axes' backward, a GQA shape's (8 query heads over 2 K/V heads), and
# one with more keys than queries, whose backward is not asked
BACKWARD_AXES = (*SQUARE_AXES, "--backward")
GQA_BACKWARD_AXES = ("--heads", "8", "--kv-heads", "2", "--seq-lens", "256,1000", "--both",
                     "--backward")
LONGER_KV_BACKWARD_AXES = ("--q-lens", "256", "--kv-lens", "1024", "--backward")


def synthetic_timing(base_ms):
    log = SampleLog(TimingOptions(), 1980.0)
    log.warmup_runs = 3
    for i in range(12):
        log.add(base_ms * (1 + 0.001 * (i % 3)), 1830.0 + i)
        if log.should_stop(0.01 * i):
            break
    return log.timing()


def outcome_for(problem, backend, direction="forward"):
    """ok for most rows; cudnn refuses causal fp16 at N = 1000 and math's output
    is far off at N = 1000, so every status appears. The backward checks dQ, dK
    and dV and takes 2.5 times as long."""
    if backend.name == "cudnn" and problem.causal and problem.seq_len == 1000:
        return Outcome("skipped", "torch refused: cuDNN attention ... (synthetic)")
    names = ("O",) if direction == "forward" else ("dQ", "dK", "dV")
    checks = [checked_tensor(name, 1e-8 * problem.seq_len, float(problem.seq_len), 1e-4, 3.0, 0)
              for name in names]
    if backend.name == "math" and problem.seq_len == 1000:
        checks[0] = checked_tensor(names[0], 1.0, 2.0, 0.5, 3.0, 0)
    scale = 1.0 if direction == "forward" else 2.5
    return Outcome(check={"reference": "synthetic reference", "tensors": checks},
                   timing=synthetic_timing(scale * 0.01 * problem.seq_len / 256))


def build_raw(path, args, interrupted=False):
    """The raw samples a run of these axes writes, every backend present."""
    problems = tools.plan(tool_path(), args)
    direction = "backward" if args.backward else "forward"
    planned = plan_rows(problems, list(BACKENDS), {b.name: "" for b in BACKENDS}, 0,
                        lambda problem: shape_gap(problem, ENVIRONMENT["torch"]), direction)
    raw = raw_samples.document(
        TOOL_RECORD, raw_samples.provenance("peers/torch_sdpa.py --json x", dict(ENVIRONMENT)),
        [H200_DEVICE], [{"kernel": b.kernel, "arithmetic": arithmetic(b, True)} for b in BACKENDS],
        [row for _, _, row in planned])
    for problem, backend, row in planned:
        if row["status"] == "ok":
            apply_outcome(row, outcome_for(problem, backend, direction))
    with contextlib.redirect_stderr(io.StringIO()):
        return finish(raw, path, ["a note from the run"], interrupted)


def imported(samples, path, args):
    with open(os.devnull, "w", encoding="utf-8") as quiet:
        with contextlib.redirect_stdout(quiet):
            return run_tool("import-samples", samples, *tools.ceiling_arguments(args),
                            "--json", path).returncode


class ImportedRun(unittest.TestCase):
    """A synthetic run of AXES written as the script writes it, then imported."""

    AXES = SQUARE_AXES

    def setUp(self):
        require_tool(self)
        self.folder = tempfile.TemporaryDirectory()
        self.samples = os.path.join(self.folder.name, "peer.samples.json")
        self.path = os.path.join(self.folder.name, "peer.json")
        self.assertEqual(build_raw(self.samples, arguments(axes=self.AXES)), 0)
        self.status = imported(self.samples, self.path, arguments(axes=self.AXES))
        with open(self.path, encoding="utf-8") as file:
            self.report = json.load(file)

    def tearDown(self):
        self.folder.cleanup()


class PeerReport(ImportedRun):

    def tampered(self, change):
        report = json.loads(json.dumps(self.report))
        change(report)
        path = os.path.join(self.folder.name, "tampered.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(report, file)
        return run_tool("audit", path)

    def test_the_raw_samples_hold_no_figure(self):
        with open(self.samples, encoding="utf-8") as file:
            raw = json.load(file)
        self.assertEqual(raw["schema"], "cuflash-roofline/raw-samples/v1")
        row = raw["results"][0]
        self.assertEqual(sorted(row), ["check", "device", "kernel", "problem", "reason",
                                       "status", "timing"])
        self.assertNotIn("median_ms", row["timing"])
        self.assertEqual(raw["provenance"]["reasons"], ["a note from the run"])

    def test_audit_recomputes_every_figure_and_agrees(self):
        # a failed row (math's check) makes the exit status 1, not the report unauditable
        self.assertEqual(self.status, 1)
        self.assertTrue(self.report["provenance"]["auditable"], self.report["provenance"])
        self.assertEqual(self.report["provenance"]["environment"], ENVIRONMENT)
        self.assertEqual(self.report["tool"], TOOL_RECORD)
        result = run_tool("audit", self.path)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("consistent: 16 rows", result.stdout)
        statuses = [row["status"] for row in self.report["results"]]
        self.assertEqual((statuses.count("ok"), statuses.count("skipped"),
                          statuses.count("failed")), (13, 1, 2))
        math_rows = [r for r in self.report["results"] if r["kernel"] == "torch_sdpa_math"]
        self.assertEqual(math_rows[0]["compute_unit"], "fp32_simt")  # math upcasts fp16
        failed = next(r for r in math_rows if r["status"] == "failed")
        self.assertTrue(failed["reason"].startswith("correctness: worst rel L2 error"))
        self.assertNotIn("timing", failed)  # a failed check is not reported timed

    def test_table_compare_and_plot_accept_it(self):
        table = run_tool("table", self.path)
        self.assertEqual(table.returncode, 0, table.stderr)
        for kernel in ("torch_sdpa_flash", "torch_sdpa_cudnn", "torch_sdpa_efficient",
                       "torch_sdpa_math"):
            self.assertIn(kernel, table.stdout)
        compare = run_tool("compare", self.path, self.path)
        self.assertEqual(compare.returncode, 0, compare.stderr)
        self.assertIn("SAME", compare.stdout)
        # one backend set against another by name, as a peer is set against our kernel
        matched = run_tool("compare", self.path, self.path, "--match-kernel",
                           "torch_sdpa_flash=torch_sdpa_cudnn")
        self.assertEqual(matched.returncode, 0, matched.stderr)
        self.assertRegex(matched.stdout, r"torch_sdpa_cudnn +forward +fp16 +1 +8 +256 ")
        svg = os.path.join(self.folder.name, "peer.svg")
        plot = run_tool("plot", self.path, "--out", svg)
        self.assertEqual(plot.returncode, 0, plot.stderr)
        self.assertTrue(os.path.getsize(svg) > 0)

    def test_tampering_fails_audit(self):
        def slower_samples(report):
            row = next(r for r in report["results"] if r["status"] == "ok")
            row["timing"]["samples_ms"] = [2 * x for x in row["timing"]["samples_ms"]]

        def failed_check_kept_ok(report):
            next(r for r in report["results"] if r["status"] == "ok")["correctness"][
                "passed"] = False

        def dirty_tree(report):
            report["tool"]["git_dirty"] = True

        def more_bytes(report):
            next(r for r in report["results"] if r["status"] == "ok")["traffic"]["bytes"] *= 2

        for change in (slower_samples, failed_check_kept_ok, dirty_tree, more_bytes):
            with self.subTest(change=change.__name__):
                self.assertEqual(self.tampered(change).returncode, 1)

    def test_another_gpus_ceiling_or_an_interrupted_run_is_not_auditable(self):
        path = os.path.join(self.folder.name, "a100.json")
        imported(self.samples, path, arguments(gpu="a100"))
        with open(path, encoding="utf-8") as file:
            provenance = json.load(file)["provenance"]
        self.assertFalse(provenance["auditable"])
        self.assertIn("the ceiling is a100's, not the measuring device's", provenance["reasons"])
        self.assertEqual(run_tool("audit", path).returncode, 0)  # consistent, not auditable

        samples = os.path.join(self.folder.name, "interrupted.samples.json")
        self.assertEqual(build_raw(samples, arguments(), interrupted=True), 130)
        imported(samples, path, arguments())
        with open(path, encoding="utf-8") as file:
            provenance = json.load(file)["provenance"]
        self.assertFalse(provenance["auditable"])
        self.assertIn("interrupted (Ctrl-C): not every configuration ran", provenance["reasons"])


class ServedPeerReport(ImportedRun):
    """The served shapes (issue 25) through the same writer and import: the
    problems' kv_len, kv_heads and page_size reach the report, the paged rows
    are skipped saying why, and the bytes count K and V per K/V head."""

    AXES = SERVED_AXES

    def test_it_imports_consistent_and_auditable(self):
        self.assertEqual(self.status, 0)
        self.assertTrue(self.report["provenance"]["auditable"], self.report["provenance"])
        result = run_tool("audit", self.path)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(f"consistent: {4 * len(BACKENDS)} rows", result.stdout)

    def test_every_paged_row_is_skipped_with_the_reason(self):
        paged = [r for r in self.report["results"] if r.get("page_size")]
        self.assertEqual(len(paged), 2 * len(BACKENDS))
        for row in paged:
            self.assertEqual((row["page_size"], row["status"], row["reason"]),
                             (16, "skipped", PAGED_REASON))
            self.assertNotIn("timing", row)

    def test_the_contiguous_rows_are_the_served_problems_with_their_bytes(self):
        rows = [r for r in self.report["results"] if "page_size" not in r]
        self.assertEqual({(r["seq_len"], r["kv_len"], r["heads"], r["kv_heads"], r["head_dim"],
                           r["causal"], r["status"]) for r in rows},
                         {(1, 4096, 32, 8, 128, True, "ok"), (4, 4096, 32, 8, 128, True, "ok")})
        for row in rows:
            # docs/model.md section 7: Q and O per query head, K and V per K/V head, fp16
            q_and_o = 2 * 8 * 32 * row["seq_len"] * 128 * 2
            k_and_v = 2 * 8 * 8 * 4096 * 128 * 2
            self.assertEqual(row["traffic"]["bytes"], q_and_o + k_and_v)

    def test_compare_by_shape_sets_the_backends_side_by_side(self):
        compare = run_tool("compare", self.path, self.path, "--by", "shape")
        self.assertEqual(compare.returncode, 0, compare.stderr)
        self.assertIn("torch_sdpa_cudnn vs torch_sdpa_flash", compare.stdout)


class BackwardPeerReport(ImportedRun):
    """--backward's raw samples through the same writer and import: each row
    says it is the backward, checks dQ, dK and dV, and is counted as the
    sweep counts a backward kernel (2.5 times the forward's FLOPs, the
    backward's compulsory bytes); audit re-derives it, and compare pairs it
    with backward rows only."""

    AXES = BACKWARD_AXES

    def test_it_imports_consistent_and_auditable(self):
        self.assertEqual(self.status, 1)  # math's failed check, as the forward's
        self.assertTrue(self.report["provenance"]["auditable"], self.report["provenance"])
        result = run_tool("audit", self.path)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("consistent: 16 rows", result.stdout)
        with open(self.samples, encoding="utf-8") as file:
            raw = json.load(file)
        self.assertEqual({row["direction"] for row in raw["results"]}, {"backward"})

    def test_rows_are_counted_as_a_backward_kernels(self):
        rows = [r for r in self.report["results"] if r["status"] == "ok"]
        self.assertTrue(rows)
        for row in rows:
            n, d = row["seq_len"], row["head_dim"]
            self.assertEqual(row["direction"], "backward")
            self.assertEqual([t["tensor"] for t in row["correctness"]["tensors"]],
                             ["dQ", "dK", "dV"])
            # docs/model.md: 2.5 x 4 B H N^2 d; Q, K, V, O, dO, dQ, dK, dV and the LSE
            if not row["causal"]:
                self.assertEqual(row["flops"]["exact"], 2.5 * 4 * 8 * n * n * d)
            self.assertEqual(row["traffic"]["bytes"], 8 * (8 * n * d * 2 + n * 4))

    def test_compare_pairs_backward_rows_with_backward_rows(self):
        forward = os.path.join(self.folder.name, "forward.json")
        samples = os.path.join(self.folder.name, "forward.samples.json")
        self.assertEqual(build_raw(samples, arguments()), 0)
        imported(samples, forward, arguments())
        compare = run_tool("compare", forward, self.path)
        self.assertEqual(compare.returncode, 0, compare.stderr)
        # no forward row meets a backward one
        self.assertIn("0 SAME, 0 FASTER, 0 SLOWER", compare.stdout)
        self.assertIn("16 only in base, 16 only in new", compare.stdout)
        matched = run_tool("compare", self.path, self.path, "--match-kernel",
                           "torch_sdpa_flash=torch_sdpa_cudnn")
        self.assertEqual(matched.returncode, 0, matched.stderr)
        self.assertRegex(matched.stdout, r"torch_sdpa_cudnn +backward +fp16 +1 +8 +256 ")


class GroupedBackwardPeerReport(ImportedRun):
    """A GQA problem's backward (torch's enable_gqa) is counted as fa2_bwd's
    is: 2.5 times the forward's FLOPs, and the backward's compulsory bytes with
    K, V, dK and dV of the K/V heads only; audit re-derives it."""

    AXES = GQA_BACKWARD_AXES

    def test_it_imports_consistent_and_auditable(self):
        self.assertEqual(self.status, 1)  # math's failed check, as the square rows'
        result = run_tool("audit", self.path)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("consistent: 16 rows", result.stdout)

    def test_rows_count_the_kv_tensors_per_kv_head(self):
        rows = [r for r in self.report["results"] if r["status"] == "ok"]
        self.assertTrue(rows)
        for row in rows:
            n, d = row["seq_len"], row["head_dim"]
            self.assertEqual((row["direction"], row["heads"], row["kv_heads"]),
                             ("backward", 8, 2))
            self.assertEqual([t["tensor"] for t in row["correctness"]["tensors"]],
                             ["dQ", "dK", "dV"])
            if not row["causal"]:
                self.assertEqual(row["flops"]["exact"], 2.5 * 4 * 8 * n * n * d)
            # Q, O, dO, dQ and LSE of 8 query heads; K, V, dK, dV of 2 K/V heads
            self.assertEqual(row["traffic"]["bytes"],
                             8 * (4 * n * d * 2 + n * 4) + 2 * 4 * n * d * 2)


class LongerKvBackwardPeerReport(ImportedRun):
    """A backward with more keys than queries is a skipped row in the raw
    samples, saying why, and stays skipped through the import."""

    AXES = LONGER_KV_BACKWARD_AXES

    def test_every_row_is_skipped_with_the_backwards_reason(self):
        self.assertEqual(self.status, 0)
        with open(self.samples, encoding="utf-8") as file:
            raw = json.load(file)["results"]
        self.assertEqual({(r["status"], r["reason"]) for r in raw},
                         {("skipped", BACKWARD_SHAPE_REASON)})
        # the import writes the model's reason over the script's, as for any shape
        self.assertEqual(len(self.report["results"]), len(BACKENDS))
        for row in self.report["results"]:
            self.assertEqual((row["direction"], row["status"], row["reason"]),
                             ("backward", "skipped",
                              f"{row['kernel']}: the backward models describe as many keys as "
                              "queries and a contiguous cache only"))
        self.assertEqual(run_tool("audit", self.path).returncode, 0)


if __name__ == "__main__":
    unittest.main()
