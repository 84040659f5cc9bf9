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

import tool_binary  # puts peers/ on the path

import torch_sdpa
from torch_peer import backends, reference, tool as tools, tree_info
from torch_peer.backends import BACKENDS
from torch_peer.measured_sweep import plan_rows
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

    def test_the_flush_mode_is_recorded_only_with_a_flush(self):
        readings = [(1.0, 1900.0)] * 10
        self.assertEqual(log_of(readings, TimingOptions()).timing()["l2_flush_mode"], "read")
        memset = TimingOptions(l2_flush_mode="memset")
        self.assertEqual(log_of(readings, memset).timing()["l2_flush_mode"], "memset")
        self.assertNotIn("l2_flush_mode", log_of(readings, TimingOptions(flush_l2=False)).timing())

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
        args = torch_sdpa.parse_arguments(["--json", "x.json", "--seq-lens", "256", "--heads",
                                           "4", "--both"])
        self.assertEqual(tools.axis_arguments(args),
                         ["--seq-lens", "256", "--heads", "4", "--both"])

    def test_the_served_shape_flags_are_passed_as_given(self):
        args = torch_sdpa.parse_arguments([
            "--json", "x.json", "--q-lens", "4,16", "--kv-lens", "2048:131072:x4", "--kv-heads",
            "8", "--page-size", "0,16", "--preset", "llama3-8b", "--causal"])
        self.assertEqual(tools.axis_arguments(args), [
            "--q-lens", "4,16", "--kv-lens", "2048:131072:x4", "--kv-heads", "8", "--page-size",
            "0,16", "--preset", "llama3-8b", "--causal"])

    def test_a_served_problem_reads_its_fields_and_keeps_its_record(self):
        square = {"dtype": "fp16", "batch": 1, "heads": 8, "seq_len": 256, "head_dim": 128,
                  "causal": False}
        problem = tools.Problem.from_json(square)
        self.assertEqual((problem.keys(), problem.key_heads(), problem.grouped(),
                          problem.paged(), problem.record), (256, 8, False, False, square))
        self.assertEqual(problem.describe(), "fp16 B=1 H=8 N=256 d=128")
        served = dict(square, seq_len=4, kv_len=32768, kv_heads=2, page_size=16, causal=True)
        problem = tools.Problem.from_json(served)
        self.assertEqual((problem.keys(), problem.key_heads(), problem.grouped(),
                          problem.paged(), problem.record), (32768, 2, True, True, served))
        self.assertEqual(problem.describe(), "fp16 B=1 H=8/2 Nq=4 Nk=32768 d=128 page=16 causal")

    def test_a_problem_with_a_key_the_script_does_not_know_is_refused(self):
        record = {"dtype": "fp16", "batch": 1, "heads": 8, "seq_len": 1, "head_dim": 128,
                  "causal": False, "kv_len": 4096}
        with self.assertRaisesRegex(tools.ToolError, "window, which this script does not know"):
            tools.Problem.from_json(dict(record, window=128))

    def test_the_served_flags_reach_the_tools_plan(self):
        # --preset llama3-8b: 32 heads over 8 K/V heads, d 128 (configs/models.json)
        tool_binary.require_tool(self)
        args = torch_sdpa.parse_arguments([
            "--json", "x.json", "--preset", "llama3-8b", "--q-lens", "1,4", "--kv-lens", "17",
            "--page-size", "0,16", "--batch", "8", "--causal", "--gpu", "h200"])
        problems = tools.plan(tool_binary.tool_path(), args)
        self.assertEqual([(p.seq_len, p.keys(), p.page_size) for p in problems],
                         [(1, 17, 0), (1, 17, 16), (4, 17, 0), (4, 17, 16)])
        self.assertEqual({(p.batch, p.heads, p.key_heads(), p.head_dim, p.causal)
                          for p in problems}, {(8, 32, 8, 128, True)})
        self.assertNotIn("page_size", problems[0].record)
        self.assertEqual(problems[1].record["page_size"], 16)

    def test_the_raw_samples_go_beside_the_report(self):
        def path(json_path, samples=""):
            return torch_sdpa.samples_path(argparse.Namespace(json=json_path, samples=samples))

        self.assertEqual(path("out/torch-sdpa.json"), "out/torch-sdpa.samples.json")
        self.assertEqual(path("out/report"), "out/report.samples.json")
        self.assertEqual(path("-", "raw.json"), "raw.json")
        with self.assertRaises(torch_sdpa.CommandLineError):
            path("-")


def served(batch=8, heads=32, kv_heads=8, q_len=1, kv_len=32768, head_dim=128, causal=False,
           page_size=0, dtype="fp16"):
    """A served-shape problem (Llama 3 8B's heads by default)."""
    return tools.Problem(batch, heads, q_len, head_dim, causal, dtype, kv_len, kv_heads,
                         page_size, {})


def lower_right(q_len, kv_len):
    """Stands in for torch's causal_lower_right(Nq, Nk)."""
    return ("lower_right", q_len, kv_len)


class ServedShapes(unittest.TestCase):
    """What the script does with the shapes of docs/model.md section 7 before
    torch is asked: which rows it skips and why, the keywords SDPA gets, and
    the memory it budgets. torch's own behaviour on them is the GPU run's."""

    def test_a_paged_cache_skips_every_backend_with_the_reason(self):
        problems = [served(), served(page_size=16), served(page_size=256)]
        gaps = {b.name: "" for b in BACKENDS}
        rows = plan_rows(problems, list(BACKENDS), gaps, 0,
                         lambda p: backends.shape_gap(p, "2.11.0+cu130"))
        paged = [row for problem, _, row in rows if problem.paged()]
        self.assertEqual(len(paged), 2 * len(BACKENDS))
        for row in paged:
            self.assertEqual((row["status"], row["reason"]),
                             ("skipped", "torch SDPA reads a contiguous K/V cache"))
        self.assertEqual({row["status"] for p, _, row in rows if not p.paged()}, {"ok"})

    def test_gqa_needs_a_torch_with_enable_gqa(self):
        self.assertEqual(backends.shape_gap(served(), "2.5.0"), "")
        self.assertEqual(backends.shape_gap(served(), "2.11.0+cu130"), "")
        self.assertEqual(backends.shape_gap(served(kv_heads=32), "2.4.1+cu121"), "")
        self.assertEqual(backends.shape_gap(served(), "2.4.1+cu121"),
                         "this torch (2.4.1+cu121) has no enable_gqa: fewer K/V heads than query "
                         "heads need torch 2.5 or later")
        self.assertEqual(backends.torch_release("2.6.0a0+git1234"), (2, 6))
        self.assertEqual(backends.torch_release("10.1"), (10, 1))

    def test_a_causal_mask_leaving_queries_no_key_is_not_asked_for(self):
        self.assertIn("leaves the first 4 of 8 queries no key",
                      backends.shape_gap(served(q_len=8, kv_len=4, causal=True), "2.11.0"))
        self.assertEqual(backends.shape_gap(served(q_len=8, kv_len=4), "2.11.0"), "")

    def test_square_self_attention_keeps_its_call(self):
        square = served(heads=8, kv_heads=8, q_len=1024, kv_len=1024)
        self.assertEqual(backends.sdpa_keywords(square, lower_right), {"is_causal": False})
        causal = served(heads=8, kv_heads=8, q_len=1024, kv_len=1024, causal=True)
        self.assertEqual(backends.sdpa_keywords(causal, lower_right), {"is_causal": True})

    def test_served_shapes_get_the_bottom_right_mask_and_enable_gqa(self):
        self.assertEqual(backends.sdpa_keywords(served(q_len=4, causal=True), lower_right),
                         {"attn_mask": ("lower_right", 4, 32768), "enable_gqa": True})
        mha = served(kv_heads=32, q_len=4, causal=True)
        self.assertEqual(backends.sdpa_keywords(mha, lower_right),
                         {"attn_mask": ("lower_right", 4, 32768)})
        self.assertEqual(backends.sdpa_keywords(served(q_len=4), lower_right),
                         {"is_causal": False, "enable_gqa": True})
        # Nq = Nk under GQA: is_causal is top-left and bottom-right alike
        self.assertEqual(backends.sdpa_keywords(served(q_len=4096, kv_len=4096, causal=True),
                                                lower_right),
                         {"is_causal": True, "enable_gqa": True})

    def test_the_math_budget_counts_nq_by_nk(self):
        # 3 score-sized fp32 tensors of B·H·Nq·Nk, and K and V repeated to all H
        decode = served(q_len=1, kv_len=32768)
        self.assertEqual(backends.math_scores_bytes(decode, True),
                         3 * 8 * 32 * 1 * 32768 * 4 + 2 * 8 * 32 * 32768 * 128 * 4)
        square = served(batch=1, heads=8, kv_heads=8, q_len=16384, kv_len=16384)
        self.assertEqual(backends.math_scores_bytes(square, False), 3 * 8 * 16384 * 16384 * 2)

    def test_device_memory_counts_kv_per_kv_head(self):
        # fp16 Q, O: 8·32·1·128; K, V: 8·8·131072·128; fp32 reference O; the
        # reference's block is larger than the check's float64 copies here
        decode = served(kv_len=131072)
        queries, keys = 8 * 32 * 128, 8 * 8 * 131072 * 128
        working = reference.reference_working_bytes(decode)
        self.assertGreater(working, 3 * queries * 8)
        self.assertEqual(backends.bytes_needed(decode),
                         (2 * queries + 2 * keys) * 2 + queries * 4 + working)

    def test_the_reference_blocks_stay_within_their_bound(self):
        block = reference.REFERENCE_BLOCK_ELEMENTS
        # a decode group of 4 rows over 128K keys: the K/V bound, not the scores', decides
        heads, rows = reference.blocks(4, 131072, 128)
        self.assertEqual((heads, rows), (block // (2 * 131072 * 128), 4))
        self.assertLessEqual(2 * heads * 131072 * 128, block)
        # a long square head: one head, rows of the keys' width
        self.assertEqual(reference.blocks(65536, 65536, 64), (1, block // 65536))
        # the working bytes: 4 groups of 4 rows x 131072 keys and their K/V, in fp32
        self.assertEqual(reference.reference_working_bytes(served(kv_len=131072)),
                         4.0 * heads * (2 * 4 * 131072 + 2 * 131072 * 128 + 4 * 128))


class Backward(unittest.TestCase):
    """--backward before torch is asked: the rows it plans (as many keys as
    queries and a contiguous cache, GQA included, as the backward models
    count), the direction they carry into the raw samples, and the memory it
    budgets."""

    def test_only_as_many_keys_as_queries_are_asked_for_its_backward(self):
        square = served(batch=1, heads=8, kv_heads=8, q_len=4096, kv_len=4096, causal=True)
        gqa = served(q_len=4096, kv_len=4096, causal=True)
        problems = [square, gqa, served(kv_heads=32, q_len=4), served(q_len=4),
                    served(kv_heads=32, q_len=4096, kv_len=4096, page_size=16)]
        gaps = {b.name: "" for b in BACKENDS}
        rows = plan_rows(problems, list(BACKENDS), gaps, 0,
                         lambda p: backends.shape_gap(p, "2.11.0+cu130"), "backward")
        self.assertEqual({row["direction"] for _, _, row in rows}, {"backward"})
        self.assertEqual([row["status"] for p, _, row in rows if p in (square, gqa)],
                         ["ok"] * 2 * len(BACKENDS))
        reasons = {row["reason"] for p, _, row in rows if p not in (square, gqa)}
        # Nq != Nk (with GQA or not): the backward's reason; a paged cache: torch's gap first
        self.assertEqual(reasons, {backends.BACKWARD_SHAPE_REASON, backends.PAGED_REASON})
        # before enable_gqa, torch's gap names it
        old = plan_rows([gqa], list(BACKENDS), gaps, 0,
                        lambda p: backends.shape_gap(p, "2.4.1+cu121"), "backward")
        self.assertIn("has no enable_gqa", old[0][2]["reason"])

    def test_a_forward_row_has_no_direction_key(self):
        rows = plan_rows([served()], list(BACKENDS), {b.name: "" for b in BACKENDS}, 0)
        self.assertFalse([row for _, _, row in rows if "direction" in row])

    def test_the_backward_budgets_its_gradients_and_reference(self):
        square = served(batch=1, heads=8, kv_heads=8, q_len=16384, kv_len=16384)
        queries = 8 * 16384 * 128
        working = reference.reference_working_bytes(square, backward=True)
        # Q, K, V, O, dO and the 3 gradients in fp16, 3 fp32 reference gradients
        # and an fp32 dQ accumulator, then the backward reference's block
        self.assertEqual(backends.bytes_needed(square, backward=True),
                         8 * queries * 2 + 4 * queries * 4 + working)
        heads, rows = reference.blocks(16384, 16384, 128)
        self.assertEqual(working, 4.0 * heads * (2 * rows * 16384 + 2 * 16384 * 128
                                                 + 3 * rows * 128))
        self.assertGreater(working, reference.reference_working_bytes(square))
        # GQA (32 query heads over 8): Q, O, dO, dQ of the query heads, K, V, dK, dV of
        # the K/V heads, in fp16; the fp32 reference dQ and accumulator, dK and dV
        gqa = served(batch=1, heads=32, kv_heads=8, q_len=4096, kv_len=4096)
        queries, keys = 32 * 4096 * 128, 8 * 4096 * 128
        self.assertEqual(backends.bytes_needed(gqa, backward=True),
                         (4 * queries + 4 * keys) * 2 + (2 * queries + 2 * keys) * 4
                         + reference.reference_working_bytes(gqa, backward=True))

    def test_the_command_line_takes_backward(self):
        args = torch_sdpa.parse_arguments(["--json", "x.json", "--backward"])
        self.assertTrue(args.backward)
        self.assertFalse(torch_sdpa.parse_arguments(["--json", "x.json"]).backward)


if __name__ == "__main__":
    unittest.main()
