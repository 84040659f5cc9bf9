"""The parts of the peer script that stay in Python because they run inside
torch's loop or beside it, without torch: the cold timer's stop rule
(peers/torch_peer/stop_rule.py, as kernels/measure/cold_timer.cu keeps it), the
tree stamp (peers/torch_peer/tree_info.py) and what it hands the tool
(peers/torch_peer/tool.py)."""

import argparse
import json
import math
import os
import subprocess
import tempfile
import unittest

import tool_binary  # noqa: F401 - puts peers/ on the path

import torch_sdpa
from torch_peer import tool as tools, tree_info
from torch_peer.stop_rule import RunningStdev, SampleLog, TimingOptions


class Noise(unittest.TestCase):
    def test_running_stdev_by_hand(self):
        # [1, 2, 3, 4]: sample stdev sqrt(5/3) over the mean 2.5
        running = RunningStdev()
        for x in (1.0, 2.0, 3.0, 4.0):
            running.add(x)
        self.assertAlmostEqual(running.relative(), math.sqrt(5 / 3) / 2.5, places=15)

    def test_the_timing_record_is_raw(self):
        # the summary (median_ms ...) is the tool's to compute (import-samples)
        timing = log_of([(1.0, 1900.0)] * 10, TimingOptions()).timing()
        self.assertFalse([key for key in timing if key.endswith("_ms") and key != "samples_ms"])

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


class ToolHandOff(unittest.TestCase):
    def test_only_the_axis_flags_given_are_passed(self):
        # the tool has the defaults; the script repeats none of them
        args = argparse.Namespace(seq_lens="256", head_dims=None, batch=None, heads="4",
                                  dtypes=None, causal=False, no_causal=False, both=True)
        self.assertEqual(tools.axis_arguments(args),
                         ["--seq-lens", "256", "--heads", "4", "--both"])

    def test_a_problem_the_script_cannot_measure_is_refused(self):
        record = {"dtype": "fp16", "batch": 1, "heads": 8, "seq_len": 1, "head_dim": 128,
                  "causal": False}
        problem = tools.Problem.from_json(record)
        self.assertEqual((problem.heads_total(), problem.record), (8, record))
        with self.assertRaisesRegex(tools.ToolError, "kv_heads, kv_len, which this script"):
            tools.Problem.from_json(dict(record, kv_len=4096, kv_heads=2))

    def test_the_raw_samples_go_beside_the_report(self):
        def path(json_path, samples=""):
            return torch_sdpa.samples_path(argparse.Namespace(json=json_path, samples=samples))

        self.assertEqual(path("out/torch-sdpa.json"), "out/torch-sdpa.samples.json")
        self.assertEqual(path("out/report"), "out/report.samples.json")
        self.assertEqual(path("-", "raw.json"), "raw.json")
        with self.assertRaises(torch_sdpa.CommandLineError):
            path("-")


if __name__ == "__main__":
    unittest.main()
