"""peers/roofline_port: the axis grammar, statistics, stop rule, model figures and
ceilings of the peer script against the tool's own answers (its `model` output
and error messages) and hand-derived values."""

import json
import math
import os
import subprocess
import tempfile
import unittest

from tool_binary import REPO_ROOT, require_tool, run_tool

from roofline_port import axes, ceiling, figures, tree_info
from roofline_port.statistics import RunningStdev, summarize
from roofline_port.stop_rule import SampleLog, TimingOptions

BAD_AXES = ["", " ", "1,,2", "abc", "0", "-5", "1:2:3:4", "4:2:x2", "1:8:y2", "1:8:x1",
            "1:8:x", "9223372036854775808", "+5", "5000000", "1:8:+0", "8,8", "[pow2]63",
            "[pow2]-1:2", "1:1000000"]


class AxisGrammar(unittest.TestCase):
    def test_lists_and_ranges_expand_in_order(self):
        # the grammar of roofline/core/axis_values.hpp
        self.assertEqual(axes.parse_axis_values("1024:16384:x2", "--seq-lens"),
                         [1024, 2048, 4096, 8192, 16384])
        self.assertEqual(axes.parse_axis_values("64:256:+64", "--head-dims"), [64, 128, 192, 256])
        self.assertEqual(axes.parse_axis_values("128,1024:4096:x2", "--seq-lens"),
                         [128, 1024, 2048, 4096])
        self.assertEqual(axes.parse_axis_values("1000:3000:x2", "--seq-lens"), [1000, 2000])
        # nvbench's forms: START:END steps by +1, [pow2]A:B is 2^A..2^B; blanks around items
        self.assertEqual(axes.parse_axis_values("1:4", "--seq-lens"), [1, 2, 3, 4])
        self.assertEqual(axes.parse_axis_values("[pow2]10:12, 5", "--seq-lens"),
                         [1024, 2048, 4096, 5])

    def test_bad_values_give_the_tools_own_message(self):
        # each message must equal what `cuflash-roofline model --seq-lens V` prints
        require_tool(self)
        for value in BAD_AXES:
            with self.subTest(value=value):
                result = run_tool("model", "--seq-lens", value)
                self.assertEqual(result.returncode, 2)
                expected = result.stderr.strip().removeprefix("cuflash-roofline: error: ")
                with self.assertRaises(axes.AxisError) as caught:
                    axes.plan_problems(axes.AxisOptions(seq_lens=value))
                self.assertEqual(str(caught.exception), expected)
        result = run_tool("model", "--dtype", "fp16,fp8")
        with self.assertRaises(axes.AxisError) as caught:
            axes.parse_dtypes("fp16,fp8")
        self.assertEqual(str(caught.exception),
                         result.stderr.strip().removeprefix("cuflash-roofline: error: "))

    def test_plan_follows_the_sweeps_loop_order(self):
        # app/sweep_options.cpp: mask, dtype, d, B, H, N from the outside in
        plan = axes.plan_problems(axes.AxisOptions(seq_lens="256,1000", head_dims="64",
                                                   both=True, dtypes="fp16,bf16"))
        self.assertEqual([(p.causal, p.dtype, p.seq_len) for p in plan],
                         [(False, "fp16", 256), (False, "fp16", 1000), (False, "bf16", 256),
                          (False, "bf16", 1000), (True, "fp16", 256), (True, "fp16", 1000),
                          (True, "bf16", 256), (True, "bf16", 1000)])
        self.assertEqual([p.causal for p in axes.plan_problems(axes.AxisOptions(causal=True))],
                         [True] * 5)


class Statistics(unittest.TestCase):
    def test_summary_by_hand(self):
        # [1, 2, 3, 4]: type-7 quartiles 1.75 and 3.25, stdev sqrt(5/3)
        s = summarize([3.0, 1.0, 2.0, 4.0])
        self.assertEqual((s["median"], s["q1"], s["q3"], s["mean"]), (2.5, 1.75, 3.25, 2.5))
        self.assertAlmostEqual(s["stdev"], math.sqrt(5 / 3), places=15)
        self.assertEqual(summarize([2.0])["stdev"], 0.0)

    def test_running_stdev_matches_the_summary(self):
        running = RunningStdev()
        for x in (1.0, 2.0, 3.0, 4.0):
            running.add(x)
        self.assertAlmostEqual(running.relative(), math.sqrt(5 / 3) / 2.5, places=15)


def log_of(readings, options, max_MHz=2000.0, seconds=None):
    """Feeds (ms, MHz) readings until the rule stops; `seconds` is the elapsed
    time seen after each (default 0)."""
    log = SampleLog(options, max_MHz)
    for i, (ms, MHz) in enumerate(readings):
        log.add(ms, MHz)
        if log.should_stop(seconds[i] if seconds else 0.0):
            break
    return log


class StopRule(unittest.TestCase):
    def test_quiet_samples_stop_on_the_noise_target_at_min_samples(self):
        log = log_of([(1.0, 1900.0)] * 50, TimingOptions(min_samples=10))
        timing = log.timing()
        self.assertEqual((timing["stop_reason"], len(timing["samples_ms"])),
                         ("noise target met", 10))
        self.assertTrue(timing["noise_target_met"])
        self.assertEqual(timing["sm_clock_MHz"], 1900.0)

    def test_noisy_samples_stop_on_the_caps(self):
        noisy = [(1.0 + (i % 2), 1900.0) for i in range(100)]
        self.assertEqual(log_of(noisy, TimingOptions(max_samples=15)).timing()["stop_reason"],
                         "sample cap")
        seconds = [0.1 * (i + 1) for i in range(100)]
        log = log_of(noisy, TimingOptions(max_seconds=2.0), seconds=seconds)
        self.assertEqual((log.stop_reason, len(log.timing()["samples_ms"])), ("time cap", 20))

    def test_throttled_samples_are_discarded_when_enough_are_not(self):
        # threshold 0.75 x 2000 = 1500 MHz: the 1000 MHz readings are throttled
        readings = [(5.0, 1000.0), (5.0, 1000.0)] + [(1.0, 1900.0)] * 10
        timing = log_of(readings, TimingOptions(min_samples=10)).timing()
        self.assertEqual((timing["throttled_discarded"], timing["samples_ms"]), (2, [1.0] * 10))
        self.assertTrue(timing["throttled"])
        self.assertEqual(timing["sm_clock_min_MHz"], 1000.0)
        self.assertEqual((timing["throttle_threshold_percent"], timing["kept_throttled"]),
                         (75.0, False))

    def test_the_throttle_threshold_is_the_users(self):
        # --throttle-threshold 40: 0.40 x 2000 = 800 MHz, so 1000 MHz readings are kept;
        # 0 keeps every sample, as nvbench's option does
        readings = [(5.0, 1000.0), (5.0, 1000.0)] + [(1.0, 1900.0)] * 10
        for percent in (40.0, 0.0):
            with self.subTest(percent=percent):
                options = TimingOptions(min_samples=12, throttle_threshold=percent / 100)
                timing = log_of(readings, options).timing()
                self.assertEqual((timing["throttled_discarded"], len(timing["samples_ms"])),
                                 (0, 12))
                self.assertEqual(timing["throttle_threshold_percent"], percent)

    def test_all_throttled_samples_are_kept_rather_than_nothing(self):
        readings = [(2.0, 1000.0)] * 3
        timing = log_of(readings, TimingOptions(min_samples=10, max_seconds=1.0),
                        seconds=[0.5, 0.8, 1.1]).timing()
        self.assertEqual((timing["samples_ms"], timing["throttled_discarded"]), ([2.0] * 3, 0))
        self.assertTrue(timing["throttled"])
        self.assertTrue(timing["kept_throttled"])

    def test_a_clock_of_zero_throttles_nothing(self):
        timing = log_of([(1.0, 0.0)] * 10, TimingOptions()).timing()
        self.assertEqual((timing["sm_clock_MHz"], timing["throttled"]), (0.0, False))

    def test_a_late_launch_is_not_a_sample(self):
        log = SampleLog(TimingOptions(), 2000.0)
        log.discard_late()
        log.add(1.0, 1900.0)
        self.assertEqual((log.timing()["samples_ms"], log.stream_blocked), ([1.0], False))


class ModelFigures(unittest.TestCase):
    """Every figure of a peer row against the tool's `model` rows of the same axes."""

    def model_rows(self, convention):
        require_tool(self)
        result = run_tool("model", "--gpu", "h200", "--seq-lens", "256,1000,4096",
                          "--head-dims", "64,128", "--both", "--dtype", "fp16,bf16,fp32",
                          "--batch", "1,3", "--heads", "8", "--kernels", "naive",
                          "--flop-convention", convention, "--json", "-")
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_flops_traffic_and_roofline_match_the_tool(self):
        for convention in figures.FLOP_CONVENTIONS:
            report = self.model_rows(convention)
            for row in report["results"]:
                with self.subTest(convention=convention, row=row["seq_len"]):
                    problem = axes.Problem(row["batch"], row["heads"], row["seq_len"],
                                           row["head_dim"], row["causal"], row["dtype"])
                    unit = figures.compute_unit_for(problem.dtype, "tensor_for_dtype")
                    self.assertEqual(unit, row["compute_unit"])
                    flops = figures.attention_flops(problem, convention)
                    self.assertEqual(flops, row["flops"])
                    traffic = figures.compulsory_forward_traffic(problem)
                    self.assertEqual(traffic["bytes"], row["traffic"]["compulsory_bytes"])
                    self.assertEqual(traffic["compulsory_bytes"],
                                     row["traffic"]["compulsory_bytes"])
                    # the roofline of the tool's DRAM-model bytes, through our port
                    dram_bytes = row["traffic"]["by_model"][row["traffic"]["dram_model"]]
                    point = figures.analyze_roofline(
                        figures.counted_flops(flops), dram_bytes,
                        report["ceiling"]["peak_TFLOPs"][unit], report["ceiling"]["bandwidth_GBps"])
                    for key in ("ai", "ridge", "ridge_distance", "regime", "roof_TFLOPs",
                                "roof_time_ms"):
                        self.assertEqual(point[key], row[key], key)

    def test_datasheet_ceiling_matches_the_tool(self):
        report = self.model_rows("exact")
        document = ceiling.load_json(os.path.join(REPO_ROOT, "configs", "gpus.json"))
        table = ceiling.parse_gpu_table(document, "configs/gpus.json (built in)")
        ours = ceiling.datasheet_ceiling(ceiling.find_gpu(table, "h200"),
                                         "configs/gpus.json (built in)")
        self.assertEqual(ours, report["ceiling"])

    def test_a_missing_peak_skips_the_row_with_the_tools_reason(self):
        # V100 has no bf16 tensor unit (configs/gpus.json)
        document = ceiling.load_json(os.path.join(REPO_ROOT, "configs", "gpus.json"))
        v100 = ceiling.datasheet_ceiling(
            ceiling.find_gpu(ceiling.parse_gpu_table(document, "t"), "v100"), "t")
        row = figures.model_row("torch_sdpa_flash", axes.Problem(1, 8, 1024, 64, False, "bf16"),
                                "bf16_tensor", v100, "exact")
        self.assertEqual((row["status"], row["reason"], row["ridge"]),
                         ("skipped", "ceiling v100 has no bf16_tensor peak", None))


class CeilingChoice(unittest.TestCase):
    def setUp(self):
        document = ceiling.load_json(os.path.join(REPO_ROOT, "configs", "gpus.json"))
        self.table = ceiling.parse_gpu_table(document, "configs/gpus.json")
        self.h200 = {"index": 0, "name": "NVIDIA H200", "cc": "9.0"}

    def test_auto_matches_the_device_and_another_gpu_is_flagged(self):
        chosen, warnings = ceiling.choose_ceiling(self.table, "configs/gpus.json", "auto",
                                                  "datasheet", [self.h200])
        self.assertEqual((chosen["gpu"], chosen["matches_device"], warnings), ("h200", True, []))
        chosen, warnings = ceiling.choose_ceiling(self.table, "configs/gpus.json", "a100",
                                                  "datasheet", [self.h200])
        self.assertFalse(chosen["matches_device"])
        self.assertTrue(warnings[0].startswith("ceiling 'a100' (NVIDIA A100-SXM4-80GB) is not "
                                               "the measuring device's: device 0 is NVIDIA H200"))

    def test_a_ceilings_file_gives_its_bandwidth_and_best_peaks(self):
        path = os.path.join(REPO_ROOT, "results", "h200", "ceilings.json")
        measured = ceiling.load_json(path)
        chosen, _ = ceiling.choose_ceiling(self.table, "configs/gpus.json", "auto", path,
                                           [self.h200])
        dram = [f["value"] for f in measured["figures"] if f["figure"] == "dram_bandwidth"]
        self.assertEqual((chosen["source"], chosen["bandwidth_GBps"]), ("measured", dram[0]))
        best = max(f["value"] for f in measured["figures"] if f["compute_unit"] == "fp16_tensor")
        self.assertEqual(chosen["peak_TFLOPs"]["fp16_tensor"], best)
        self.assertIn(f"measured on {measured['device']['name']}", chosen["source_detail"])

    def test_bad_choices_fail_in_one_line(self):
        with self.assertRaisesRegex(ceiling.CeilingError, r"^--gpu zz: unknown GPU; known: v100"):
            ceiling.choose_gpu(self.table, "t", "zz", self.h200)
        with self.assertRaisesRegex(ceiling.CeilingError, r"^--ceiling measured: "):
            ceiling.choose_ceiling(self.table, "t", "auto", "measured", [self.h200])
        with self.assertRaisesRegex(ceiling.CeilingError, r"^/no/such\.json: cannot open"):
            ceiling.choose_ceiling(self.table, "t", "auto", "/no/such.json", [self.h200])


class TreeState(unittest.TestCase):
    def test_describe_strings(self):
        commit = "a" * 40
        self.assertEqual(tree_info.commit_and_dirty(commit), (commit, False))
        self.assertEqual(tree_info.commit_and_dirty(commit + "-dirty"), (commit, True))
        self.assertEqual(tree_info.commit_and_dirty("unknown-dirty"), ("unknown", True))

    def test_a_stamp_names_the_commit_until_a_peer_file_changes(self):
        with tempfile.TemporaryDirectory() as root:  # not a git repository
            os.makedirs(os.path.join(root, "peers"))
            script = os.path.join(root, "peers", "torch_sdpa.py")
            with open(script, "w", encoding="utf-8") as file:
                file.write("print('v1')\n")
            stamp = os.path.join(root, "tree_stamp.json")
            with open(stamp, "w", encoding="utf-8") as file:
                json.dump({"git_describe": "b" * 40,
                           "sha256": tree_info.peer_file_hashes(root)}, file)
            self.assertEqual(tree_info.tree_state(root, stamp)[:2], ("b" * 40, False))
            with open(script, "a", encoding="utf-8") as file:
                file.write("print('v2')\n")
            commit, dirty, how = tree_info.tree_state(root, stamp)
            self.assertEqual((commit, dirty), ("b" * 40, True))
            self.assertIn("peers/torch_sdpa.py", how)
            self.assertEqual(tree_info.tree_state(root, None)[:2], ("unknown", True))

    def test_a_given_stamp_wins_over_a_repository_beside_it(self):
        # The device copy of the tree has been seen to carry a stale .git: the
        # build's stamp, not that repository, names what ran.
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "peers"))
            subprocess.run(["git", "init", "-q", root], check=True)
            stamp = os.path.join(root, "tree_stamp.json")
            with open(stamp, "w", encoding="utf-8") as file:
                json.dump({"git_describe": "c" * 40,
                           "sha256": tree_info.peer_file_hashes(root)}, file)
            self.assertEqual(tree_info.tree_state(root, stamp)[:2], ("c" * 40, False))


if __name__ == "__main__":
    unittest.main()
