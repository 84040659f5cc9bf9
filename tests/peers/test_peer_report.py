"""The peer script's report assembly (peers/torch_peer/measured_sweep.py) without
torch: rows planned, outcomes applied and the report finished exactly as a run
does, from synthetic samples and check sums. The tool must read what it
writes: `audit` recomputes every figure and finds it consistent and auditable,
`table`, `compare` and `plot` accept it, and tampering is caught. The samples
here are made up: this pins the writer, not torch's behaviour (the fixture
recorded on a GPU does that, test_peers_fixture)."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from tool_binary import REPO_ROOT, require_tool, run_tool

from roofline_port import axes, ceiling
from roofline_port.correctness import check_from_sums, correctness_record
from roofline_port.stop_rule import SampleLog, TimingOptions
from torch_peer.backends import BACKENDS, Outcome
from torch_peer.measured_sweep import apply_outcome, finish_report, plan_rows

H200_DEVICE = {"index": 0, "name": "NVIDIA H200", "cc": "9.0", "sm_count": 132,
               "l2_bytes": 62914560.0, "memory_bytes": 150109880320.0, "clock_MHz": 1980.0,
               "memory_clock_MHz": 3201.0, "driver": "13.0 (580.159.03)", "runtime": "13.0",
               "pci_bus_id": "0000:00:06.0"}


def synthetic_timing(base_ms):
    log = SampleLog(TimingOptions(), 1980.0)
    log.warmup_runs = 3
    for i in range(12):
        log.add(base_ms * (1 + 0.001 * (i % 3)), 1830.0 + i)
        if log.should_stop(0.01 * i):
            break
    return log.timing()


def outcome_for(problem, backend):
    """ok for most rows; cudnn refuses causal fp16 at N = 1000 and math fails its
    check at N = 1000, so each status appears."""
    if backend.name == "cudnn" and problem.causal and problem.seq_len == 1000:
        return Outcome("skipped", "torch refused: cuDNN attention ... (synthetic)")
    check = check_from_sums(1e-8 * problem.seq_len, float(problem.seq_len), 1e-4, 3.0, 0)
    if backend.name == "math" and problem.seq_len == 1000:
        check = check_from_sums(1.0, 2.0, 0.5, 3.0, 0)
    record, failure = correctness_record(check, problem.dtype, "synthetic reference")
    if failure:
        return Outcome("failed", failure, correctness=record)
    return Outcome(correctness=record, timing=synthetic_timing(0.01 * problem.seq_len / 256))


def build_report(path, gpu="h200"):
    document = ceiling.load_json(os.path.join(REPO_ROOT, "configs", "gpus.json"))
    table = ceiling.parse_gpu_table(document, "configs/gpus.json")
    chosen, warnings = ceiling.choose_ceiling(table, "configs/gpus.json", gpu, "datasheet",
                                              [H200_DEVICE])
    problems = axes.plan_problems(axes.AxisOptions(seq_lens="256,1000", head_dims="64",
                                                   both=True))
    planned = plan_rows(problems, list(BACKENDS), {b.name: "" for b in BACKENDS}, True, chosen,
                        "exact", 0)
    report = {"schema": "cuflash-roofline/report/v1",
              "tool": {"name": "cuflash-roofline/peers/torch_sdpa", "version": "0.1.0",
                       "git_commit": "c" * 40, "git_dirty": False},
              "provenance": {"source": "measured", "auditable": False, "reasons": [],
                             "created_utc": "2026-12-04T00:00:00Z",
                             "command": "peers/torch_sdpa.py --json x", "host": "test",
                             "environment": {"python": "3.12.3", "torch": "2.11.0+cu130",
                                             "torch_cuda": "13.0", "cudnn": "9.10.2 (91002)"}},
              "devices": [H200_DEVICE], "ceiling": chosen,
              "results": [row for _, _, row in planned]}
    for problem, backend, row in planned:
        apply_outcome(row, outcome_for(problem, backend), chosen)
    with contextlib.redirect_stderr(io.StringIO()):
        status = finish_report(report, path, warnings, [], False)
    return status


class PeerReport(unittest.TestCase):
    def setUp(self):
        require_tool(self)
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, "peer.json")
        self.status = build_report(self.path)
        with open(self.path, encoding="utf-8") as file:
            self.report = json.load(file)

    def tearDown(self):
        self.folder.cleanup()

    def tampered(self, change):
        report = json.loads(json.dumps(self.report))
        change(report)
        path = os.path.join(self.folder.name, "tampered.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(report, file)
        return run_tool("audit", path)

    def test_audit_recomputes_every_figure_and_agrees(self):
        # a failed row (math's check) makes the exit status 1, not the report unauditable
        self.assertEqual(self.status, 1)
        self.assertTrue(self.report["provenance"]["auditable"], self.report["provenance"])
        result = run_tool("audit", self.path)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("consistent: 16 rows", result.stdout)
        statuses = [row["status"] for row in self.report["results"]]
        self.assertEqual((statuses.count("ok"), statuses.count("skipped"),
                          statuses.count("failed")), (13, 1, 2))
        math_row = next(r for r in self.report["results"] if r["kernel"] == "torch_sdpa_math")
        self.assertEqual(math_row["compute_unit"], "fp32_simt")  # math upcasts fp16

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

    def test_another_gpus_ceiling_is_not_auditable(self):
        path = os.path.join(self.folder.name, "a100.json")
        build_report(path, gpu="a100")
        with open(path, encoding="utf-8") as file:
            provenance = json.load(file)["provenance"]
        self.assertFalse(provenance["auditable"])
        self.assertIn("the ceiling is a100's, not the measuring device's", provenance["reasons"])
        self.assertEqual(run_tool("audit", path).returncode, 0)  # consistent, not auditable


if __name__ == "__main__":
    unittest.main()
