"""peers/torch_sdpa.py's command line: bad input is one line naming the value and
exit status 2, before torch is imported (so these run without torch). The axes
and the ceiling options are the tool's to check (import-samples --plan), so
their messages are the tool's own."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from tool_binary import PEERS, REPO_ROOT, require_tool, run_tool, tool_path

SCRIPT = os.path.join(PEERS, "torch_sdpa.py")
# The ids of configs/gpus.json, as the refusal of an unknown --gpu lists them.
with open(os.path.join(REPO_ROOT, "configs", "gpus.json"), encoding="utf-8") as table:
    KNOWN_GPUS = ", ".join(gpu["id"] for gpu in json.load(table)["gpus"])
# (arguments, what the one line says); the tool's words where it checks the value
BAD = [
    (["--seq-lens", "1024:512:x2"], "--seq-lens: range '1024:512:x2' ends before it starts"),
    (["--head-dims", "0"], "--head-dims: 0 must be positive"),
    (["--dtype", "fp8"], "--dtype: unknown dtype 'fp8' (fp16, bf16, fp32)"),
    (["--kv-heads", "3"], "--kv-heads: 3 does not divide --heads 8"),
    (["--kv-lens", "0"], "--kv-lens: 0 must be positive"),
    (["--q-lens", "4", "--seq-lens", "4"], "--seq-lens sets both lengths"),
    (["--page-size", "3"], "--page-size: '3' is not 0 (contiguous) or a power of two"),
    (["--preset", "gpt9"], "--preset: unknown model 'gpt9'"),
    (["--preset", "llama3-8b", "--heads", "8"], "--preset llama3-8b sets --heads, --kv-heads"),
    (["--backends", "flash,sparse"],
     "--backends: unknown backend 'sparse' (flash, cudnn, efficient, math)"),
    (["--causal", "--both"], "--both"),
    (["--gpu", "zz"], f"--gpu zz: unknown GPU; known: {KNOWN_GPUS}, auto"),
    (["--gpu-table", "/no/such.json"], "/no/such.json: cannot open"),
    (["--ceiling", "measured"], "--ceiling measured: import-samples measures nothing"),
    (["--flop-convention", "most"], "--flop-convention: unknown convention 'most'"),
    (["--max-seconds", "0"], "0.0 is not in [0.01, 3600.0]"),
    (["--throttle-threshold", "nan"], "nan is not in [0.0, 100.0]"),
    (["--throttle-threshold", "101"], "101.0 is not in [0.0, 100.0]"),
    (["--warmup", "many"], "argument --warmup: 'many' is not an integer"),
    (["--devices", "0,1"], "--devices: '0,1' is not one device index"),
    (["--json", "/no/such/folder/x.json"], "--json /no/such/folder/x.json: folder /no/such/folder"),
    (["--samples", "/no/such/folder/x.json"],
     "--samples /no/such/folder/x.json: folder /no/such/folder"),
    (["--json", "-"], "--json -: name the raw samples file with --samples PATH"),
    (["--tool", "/no/such/tool"], "--tool /no/such/tool: no such executable"),
]


class ScriptCommandLine(unittest.TestCase):
    def setUp(self):
        require_tool(self)
        self.folder = tempfile.TemporaryDirectory()
        self.report = os.path.join(self.folder.name, "peers.json")

    def tearDown(self):
        self.folder.cleanup()

    def run_script(self, *arguments):
        return subprocess.run([sys.executable, SCRIPT, *arguments], capture_output=True,
                              text=True, timeout=60, check=False,
                              env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))

    def test_bad_values_fail_in_one_line(self):
        for arguments, expected in BAD:
            with self.subTest(arguments=arguments):
                result = self.run_script("--json", self.report, "--tool", tool_path(),
                                         *arguments)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
                self.assertTrue(result.stderr.startswith("torch_sdpa.py: error: "))
                self.assertIn(expected, result.stderr)
        self.assertEqual(os.listdir(self.folder.name), [])  # nothing written

    def test_an_axis_message_is_the_tools_own(self):
        expected = run_tool("model", "--seq-lens", "4:2:x2").stderr.strip().removeprefix(
            "cuflash-roofline: error: ")
        result = self.run_script("--json", self.report, "--tool", tool_path(), "--seq-lens",
                                 "4:2:x2")
        self.assertEqual(result.stderr, f"torch_sdpa.py: error: {expected}\n")

    def test_a_served_axis_message_is_the_tools_own(self):
        axes = ["--preset", "llama3-8b", "--kv-heads", "4"]
        expected = run_tool("model", *axes).stderr.strip().removeprefix(
            "cuflash-roofline: error: ")
        result = self.run_script("--json", self.report, "--tool", tool_path(), *axes)
        self.assertEqual(result.stderr, f"torch_sdpa.py: error: {expected}\n")

    def test_backward_is_a_flag_checked_with_the_others(self):
        # --backward takes no value and leaves the axes to the tool: a bad one is
        # still refused in one line before torch, and a mistyped flag too
        result = self.run_script("--json", self.report, "--tool", tool_path(), "--backward",
                                 "--head-dims", "0")
        self.assertEqual((result.returncode, result.stderr),
                         (2, "torch_sdpa.py: error: --head-dims: 0 must be positive\n"))
        result = self.run_script("--json", self.report, "--tool", tool_path(), "--backward=yes")
        self.assertEqual((result.returncode, result.stderr.count("\n")), (2, 1))
        self.assertIn("--backward: ignored explicit argument 'yes'", result.stderr)
        result = self.run_script("--json", self.report, "--tool", tool_path(), "--backwards")
        self.assertEqual((result.returncode, result.stderr.count("\n")), (2, 1))
        self.assertIn("unrecognized arguments: --backwards", result.stderr)
        self.assertEqual(os.listdir(self.folder.name), [])

    def test_the_report_path_is_required(self):
        result = self.run_script("--seq-lens", "256")
        self.assertEqual((result.returncode, result.stderr.count("\n")), (2, 1))
        self.assertIn("--json", result.stderr)


if __name__ == "__main__":
    unittest.main()
