#!/usr/bin/env python3
"""Every CUDA object of a build names its own depfile (meson.build says why:
Meson 1.0 gives nvcc no dependency flags, and an object that misses a header
edit links a stale layout). Reads build.ninja; prints each object whose nvcc
command lacks '-MD -MF <object>.d -MT <object>' and exits 1 if any.

usage: cuda_depfiles_check.py BUILD_DIR/build.ninja
"""
import re
import sys


def main():
    with open(sys.argv[1]) as f:
        text = f.read()
    objects = re.findall(r"^build (\S+): cuda_COMPILER \S+\n((?: .*\n)*)", text, re.M)
    wrong = [obj for obj, body in objects
             if f"-MD -MF {obj}.d -MT {obj}" not in body]
    for obj in wrong:
        print(f"no depfile flags: {obj}")
    print(f"{len(objects)} CUDA objects, {len(wrong)} without their depfile")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
