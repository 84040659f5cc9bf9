#!/usr/bin/env python3
"""Is a kernel's machine code the same in two builds? (no GPU, no cuobjdump)

A registered revision that combines two measured ones (one tile's code from
each) was tested on the GPU only as those two. This compares, section by
section, the ELF of two cubins that nvcc wrote for one architecture: a
kernel's code (.text), its relocations, constant bank, shared memory and
attributes (.nv.info: registers, barriers). A kernel is matched by its name
and template arguments up to the first that differs between the builds:
BwdTuning gains fields, which changes the mangled name but not the code.
It prints one line a matched section, `identical` or `DIFFER`, and exits 1
if any section it was asked about differs or has no partner.

usage: tests/gpu/same_kernel_code.py OLD.cubin NEW.cubin [--match REGEX]
  REGEX: a pattern over the section name whose groups form the key that
  pairs kernels (default: fa2_backward_2d's kernels by section, name, dtype,
  head dim and Br). --only PATTERN keeps the keys it finds in the key's
  text, e.g. --only ' 128 [0-9]+$' for the d 128 tiles.
Make the cubins with the build's nvcc line and `-arch=sm_90a -cubin`.
"""

import argparse
import re
import struct
import sys

DEFAULT_MATCH = (r"^(\.\S+?)\._ZN.*?(fa2_backward_\w+?)I(6__half|13__nv_bfloat16)"
                 r"NS1_11Bwd2dConfigILi(\d+)ELi(\d+)")


def sections(path):
    """Section name -> bytes of an ELF64 file (a cubin is one)."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit(f"same_kernel_code.py: '{path}' is not a 64-bit ELF file (a cubin)")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    entsize, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize) for i in range(count)]
    names_at = headers[names_index][4]

    def name(offset):
        start = names_at + offset
        return data[start:data.index(b"\0", start)].decode()

    return {name(h[0]): data[h[4]:h[4] + h[5]] for h in headers}


def keyed(path, pattern):
    out = {}
    for name, body in sections(path).items():
        m = re.search(pattern, name)
        if m:
            out[m.groups()] = body
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--match", default=DEFAULT_MATCH)
    parser.add_argument("--only", default="", help="a regex: check only the keys it finds")
    args = parser.parse_args()
    old, new = keyed(args.old, args.match), keyed(args.new, args.match)
    keys = sorted(k for k in set(old) | set(new) if re.search(args.only, " ".join(k)))
    if not keys:
        sys.exit("same_kernel_code.py: no section matched")
    bad = 0
    for key in keys:
        a, b = old.get(key), new.get(key)
        if a is None or b is None:
            verdict = f"only in {'new' if a is None else 'old'}"
        elif a == b:
            verdict = "identical"
        else:
            verdict = f"DIFFER ({len(a)} vs {len(b)} bytes)"
        bad += verdict != "identical"
        print(" ".join(key), verdict)
    print(f"{len(keys) - bad} of {len(keys)} sections identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
