"""Replaces the text between two marker lines of a file with $GENERATED.

Usage: GENERATED=... python3 results/splice_generated.py FILE BEGIN_MARKER END_MARKER
The results scripts (update-readme.sh, update-model-errors.sh) regenerate
their tables through it, so a generated block is written one way."""
import os
import sys

path, begin, end = sys.argv[1:4]
text = open(path).read()
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path + ".tmp", "w").write(head + begin + "\n" + os.environ["GENERATED"] + "\n" + end + tail)
os.replace(path + ".tmp", path)
