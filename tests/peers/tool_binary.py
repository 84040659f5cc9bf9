"""Where the tests find the peer script's modules and the built tool.

CFR_BINARY names the built cuflash-roofline (the Catch2 harness test_peers sets
it, and then a missing binary fails); run by hand, the tests look in build/ and
skip the comparisons with the tool when it is not built.
"""

import os
import subprocess
import sys
import unittest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = os.path.join(REPO_ROOT, "peers")
if PEERS not in sys.path:
    sys.path.insert(0, PEERS)


def tool_path():
    return os.environ.get("CFR_BINARY") or os.path.join(REPO_ROOT, "build", "app",
                                                        "cuflash-roofline")


def require_tool(test):
    if os.path.exists(tool_path()):
        return
    if os.environ.get("CFR_BINARY"):
        test.fail(f"CFR_BINARY={tool_path()} does not exist")
    raise unittest.SkipTest(f"{tool_path()} is not built")


def run_tool(*arguments):
    """The tool with no CUDA device visible, as the C++ CLI tests run it."""
    environment = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    return subprocess.run([tool_path(), *arguments], capture_output=True, text=True,
                          env=environment, timeout=120, check=False)
