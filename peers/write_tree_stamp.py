#!/usr/bin/env python3
"""Writes PATH, the build's tree stamp: the commit and the hash of every file
under peers/ (torch_peer/tree_info.py says why). meson runs it on every build,
as it re-stamps the tool's commit."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from torch_peer.tree_info import write_stamp  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: write_tree_stamp.py PATH")
    write_stamp(sys.argv[1], os.path.dirname(HERE))
